import logging, sys, time, json
logging.basicConfig(level=logging.INFO)
from hf_ecg.evaluation import load_labelled
from hf_ecg.selection import SelectionConfig, filter_generated
ds, n = sys.argv[1], int(sys.argv[2])
train = {"bc5cdr": "bc5cdr/train.tsv", "jnlpba": "jnlpba/devel.tsv"}[ds]
gold = load_labelled(f"/work/shared/data/{train}", first_n=n)
t = time.time()
out = filter_generated(f"results/{ds}-{n}/work/synthetic-qalm", gold, f"/tmp/filtered-{ds}",
                       SelectionConfig(rules=sys.argv[3].split(",")), overwrite=True)
print("minutes", (time.time() - t) / 60)
print(json.dumps(json.load(open(out / "ecg_generation.json"))["selection"], indent=1)[:1500])
