"""One line per generated set under a folder (default outputs/s13): redrawn share, complete, words a sentence, and
the label agreement with the reference tagger where SET.labels.json is beside the set."""
import json, sys, glob, os
root = sys.argv[1] if len(sys.argv) > 1 else "outputs/s13"
for d in sorted(glob.glob(root + "/*/ecg_generation.json")):
    run = os.path.dirname(d); m = json.load(open(d)); c = m.get("generation_cost", {})
    lab = run + ".labels.json"
    l = json.load(open(lab)) if os.path.exists(lab) else {}
    import pyarrow.parquet as pq
    t = pq.read_table(glob.glob(run + "/data/*.parquet")).to_pandas() if glob.glob(run+"/data/*.parquet") else None
    comp = t["complete"].mean() if t is not None and "complete" in t else None
    words = t["tokens"].map(len).mean() if t is not None else None
    print(f"{os.path.basename(run):22s} redrawn {c.get('redrawn_share', c)!s:.6} complete {comp} words {words:.1f} "
          f"F1 {l.get('f1', 0):.3f} P {l.get('precision',0):.3f} R {l.get('recall',0):.3f} {l.get('errors')}")
