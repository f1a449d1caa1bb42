"""Profile MentionWriter: steps, rows per step, time in _begin (prefill) vs _step (decode) vs the rest."""
import sys, time, glob
import torch, datasets
from hf_ecg.modeling import load_ecg_model
from hf_ecg.runtime.blocks import Template
from hf_ecg.runtime.filling import training_bank
from hf_ecg.runtime import mention_writer as mw

model_dir, source, dtype = sys.argv[1], sys.argv[2], sys.argv[3]
model, tok, cfg = load_ecg_model(model_dir, dtype=getattr(torch, dtype))
bank = training_bank(cfg)
rows = datasets.Dataset.from_parquet(sorted(glob.glob(source + "/data/*.parquet"))[0])
templates = [Template(tuple(r["template"].split(" "))) for r in rows]
stats = {"begin_s": 0.0, "begin_calls": 0, "begin_positions": 0, "step_s": 0.0, "steps": 0, "row_steps": 0, "keep_s": 0.0}
orig_begin, orig_step, orig_take = mw.MentionWriter._begin, mw.MentionWriter._step, mw.MentionWriter._take_ended
def begin(self, prompts, kept, keys, rng):
    t = time.perf_counter(); r = orig_begin(self, prompts, kept, keys, rng); stats["begin_s"] += time.perf_counter() - t
    stats["begin_calls"] += 1
    stats["begin_positions"] += sum(len(p) - (0 if k is None else min(mw._shared_length(p, k[0]), len(p) - 1)) for p, k in zip(prompts, kept))
    return r
def step(self, batch, rng):
    stats["steps"] += 1; stats["row_steps"] += len(batch.keys)
    t = time.perf_counter(); orig_step(self, batch, rng); stats["step_s"] += time.perf_counter() - t
def take(self, batch):
    t = time.perf_counter(); r = orig_take(self, batch); stats["keep_s"] += time.perf_counter() - t; return r
mw.MentionWriter._begin, mw.MentionWriter._step, mw.MentionWriter._take_ended = begin, step, take
writer = mw.MentionWriter(model, tok, cfg, known=bank)
t = time.perf_counter(); res = writer.write(templates, seed=1); total = time.perf_counter() - t
print(model_dir.split("/")[-1], dtype, f"total {total:.1f}s", {k: round(v, 2) if isinstance(v, float) else v for k, v in stats.items()},
      "rows/step", round(stats["row_steps"] / max(stats["steps"], 1), 1), "rejected", res.rejected, "slots", res.slots)
