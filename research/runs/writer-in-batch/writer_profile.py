"""Time (or cProfile) the mention writer alone on a generator's templates, as `hf-ecg generate` writes them.

usage: writer_profile.py MODEL N [time|prof]   (BS=batch size, default 128)

Decodes N templates (gold sampler, seed 1, the decoder's prefixes kept) once and saves them in the temporary
folder, so later runs time the writer on the same templates; prints the writer's seconds, slots, rejected share,
new-mention share and a digest of the mentions (the same code and seed give the same digest)."""

import cProfile
import os
import pstats
import random
import sys
import tempfile
import time

import torch

from hf_ecg.data.statistics import CorpusStatistics
from hf_ecg.modeling import inference_dtype, load_ecg_model
from hf_ecg.runtime.decoding import ChainedDecoder, DecodingConfig
from hf_ecg.runtime.filling import training_bank
from hf_ecg.runtime.mention_writer import MentionWriter

model_dir, n = sys.argv[1], int(sys.argv[2])
mode = sys.argv[3] if len(sys.argv) > 3 else "time"
dtype = inference_dtype("auto")
model, tokenizer, ecg_config = load_ecg_model(model_dir, dtype=getattr(torch, dtype))
cache = os.path.join(tempfile.gettempdir(), f"decoded-{os.path.basename(model_dir)}-{n}.pt")
if os.path.exists(cache):
    decoded = torch.load(cache, weights_only=False)
    tt = None
else:
    stats = CorpusStatistics.from_dict(ecg_config.corpus_statistics)
    from hf_ecg.synthetic.entity_sequences import make_sampler

    seqs = make_sampler("gold", stats).sample(n, random.Random(1))
    settings = DecodingConfig(seed=1)
    ChainedDecoder(model, tokenizer, ecg_config, settings).decode(seqs[:8])
    t = time.perf_counter()
    decoded = ChainedDecoder(model, tokenizer, ecg_config, settings).decode(seqs, keep_prefixes=True)
    tt = time.perf_counter() - t
    torch.save(decoded, cache)
    print(f"templates {tt:.1f} s")
templates = [d.template for d in decoded]
bank = training_bank(ecg_config)
known = {l: set(bank.counts(l)) for l in bank.types}
w = MentionWriter(model, tokenizer, ecg_config, known=bank, batch_size=int(os.environ.get("BS", 128)))
w.write(templates[:8], seed=0)
prefixes = [d.prompt_prefix for d in decoded]


def go():
    return w.write(templates, seed=1, prefixes=prefixes)


if mode == "prof":
    pr = cProfile.Profile()
    pr.enable()
    t = time.perf_counter()
    r = go()
    s = time.perf_counter() - t
    pr.disable()
    pstats.Stats(pr).sort_stats("cumulative").print_stats(35)
else:
    t = time.perf_counter()
    r = go()
    s = time.perf_counter() - t
ms = [(l, m) for tp, row in zip(templates, r.mentions) for l, m in zip(tp.entity_types, row) if m is not None]
new = sum(m not in known.get(l, ()) for l, m in ms) / max(len(ms), 1)
d = r.to_dict()
print(f"writer {s:.2f} s slots {r.slots} written {r.written} rejected {d['rejected_share']:.3f} new {new:.3f}")
import hashlib

print("digest", hashlib.sha1(repr(r.mentions).encode()).hexdigest()[:12])
