"""Profile the mention writer inside a whole default `generate_dataset` run: seconds in the decoder, and in the
writer's prefills (`_begin`: calls, positions encoded), steps (`_step`: count, rows) and the rest."""
import sys, time, shutil, json
import torch
from hf_ecg.runtime.decoding_base import BlockDecoder
from hf_ecg.runtime import mention_writer as mw
from hf_ecg.synthetic.generate import generate_dataset

model, n, out = sys.argv[1], int(sys.argv[2]), sys.argv[3]
stats = {"templates_s": 0.0, "writer_s": 0.0, "begin_s": 0.0, "begin_calls": 0, "begin_positions": 0,
         "begin_prompts": 0, "step_s": 0.0, "steps": 0, "row_steps": 0, "take_s": 0.0, "prompt_s": 0.0}


def timed(key, real, count=None):
    def wrapper(*args, **kwargs):
        start = time.perf_counter()
        try:
            return real(*args, **kwargs)
        finally:
            stats[key] += time.perf_counter() - start
            if count:
                count(*args)
    return wrapper


def count_begin(self, prompts, kept, keys, streams):
    stats["begin_calls"] += 1
    stats["begin_prompts"] += len(prompts)
    stats["begin_positions"] += sum(
        len(p) - (0 if k is None else min(mw._shared_length(p, k[0]), len(p) - 1)) for p, k in zip(prompts, kept))


def count_step(self, batch, streams):
    stats["steps"] += 1
    stats["row_steps"] += len(batch.keys)


stats.update(prefill_padded=0, prefill_forwards=0, sample_s=0.0)
real_encode = mw.encode_after_prefixes


def encode(model, cache, prompts, pasts, kept, pad_id):
    stats["prefill_forwards"] += 1
    stats["prefill_padded"] += len(prompts) * max(len(p) - q for p, q in zip(prompts, pasts))
    return real_encode(model, cache, prompts, pasts, kept, pad_id)


mw.encode_after_prefixes = encode
mw.MentionWriter._sample = timed("sample_s", mw.MentionWriter._sample)
BlockDecoder.decode = timed("templates_s", BlockDecoder.decode)
mw.MentionWriter.write = timed("writer_s", mw.MentionWriter.write)
mw.MentionWriter._begin = timed("begin_s", mw.MentionWriter._begin, count_begin)
mw.MentionWriter._step = timed("step_s", mw.MentionWriter._step, count_step)
mw.MentionWriter._take_ended = timed("take_s", mw.MentionWriter._take_ended)
mw.MentionWriter.prompt = timed("prompt_s", mw.MentionWriter.prompt)
shutil.rmtree(out, ignore_errors=True)
start = time.perf_counter()
generate_dataset(model, out, n, seed=1, progress_bar=False)
stats["whole_s"] = time.perf_counter() - start
stats["rows_per_step"] = stats["row_steps"] / max(stats["steps"], 1)
stats["ratio"] = stats["writer_s"] / stats["templates_s"]
print(json.dumps({k: round(v, 2) if isinstance(v, float) else v for k, v in stats.items()}), flush=True)
