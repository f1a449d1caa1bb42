"""Writer-only A/B on the same templates: JOIN_WHEN_FREE and batch_size, alternated, bfloat16."""
import sys, time, torch
from hf_ecg.runtime import mention_writer as mw
from hf_ecg.runtime.decoding import ChainedDecoder, DecodingConfig
from hf_ecg.modeling import load_ecg_model
from hf_ecg.data.dataset_format import load_data_folder
model, tok, cfg = load_ecg_model(sys.argv[1])
model = model.to(torch.bfloat16)
rows = load_data_folder(sys.argv[2])
seqs = [tuple(s["label"] for s in r["spans"]) for r in rows][:1024]
dec = ChainedDecoder(model, tok, cfg, DecodingConfig(seed=1))
t = time.perf_counter(); decoded = dec.decode(seqs, keep_prefixes=True); print("templates", round(time.perf_counter() - t, 1))
templates = [d.template for d in decoded]; prefixes = [d.prompt_prefix for d in decoded]
variants = [(0.75, 128), (0.5, 128), (0.75, 192), (0.5, 192)]
for rnd in range(2):
    for join, bs in variants:
        mw.JOIN_WHEN_FREE = join
        w = mw.MentionWriter(model, tok, cfg, batch_size=bs)
        t = time.perf_counter(); r = w.write(templates, seed=1, prefixes=prefixes); s = time.perf_counter() - t
        print(rnd, join, bs, round(s, 2), r.written, sum(r.rejected.values()), flush=True)
