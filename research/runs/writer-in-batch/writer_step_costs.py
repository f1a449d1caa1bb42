"""Per batch policy (JOIN_WHEN_FREE:batch_size pairs), the writer's steps, row-steps and the batch's mean width, and
a model of their cost measured on this CPU (a step: 14 ms, then 0.55 ms a row and 2.55 us a row and cache column).

usage: writer_step_costs.py MODEL N 0.75:128,0.5:256,...   (after writer_profile.py MODEL N has saved the templates)
"""

import os
import sys
import tempfile
import time

import torch

import hf_ecg.runtime.mention_writer as mw
from hf_ecg.modeling import inference_dtype, load_ecg_model
from hf_ecg.runtime.filling import training_bank

model_dir, n, configs = sys.argv[1], int(sys.argv[2]), sys.argv[3].split(",")
model, tokenizer, ecg_config = load_ecg_model(model_dir, dtype=getattr(torch, inference_dtype("auto")))
decoded = torch.load(
    os.path.join(tempfile.gettempdir(), f"decoded-{os.path.basename(model_dir)}-{n}.pt"), weights_only=False
)
templates = [d.template for d in decoded]
prefixes = [d.prompt_prefix for d in decoded]
bank = training_bank(ecg_config)
steps = []
joins = []
orig = mw.MentionWriter._step


def step(self, batch, streams):
    steps.append((len(batch.keys), batch.mask.shape[1]))
    return orig(self, batch, streams)


mw.MentionWriter._step = step
origb = mw.MentionWriter._begin


def begin(self, prompts, kept, keys, streams, **options):
    joins.append(len(prompts))
    return origb(self, prompts, kept, keys, streams, **options)


mw.MentionWriter._begin = begin
for c in configs:
    jwf, bs = c.split(":")
    mw.JOIN_WHEN_FREE = float(jwf)
    steps.clear()
    joins.clear()
    w = mw.MentionWriter(model, tokenizer, ecg_config, known=bank, batch_size=int(bs))
    t = time.perf_counter()
    res = w.write(templates, seed=1, prefixes=prefixes)
    s = time.perf_counter() - t
    est = sum(14 + 0.55 * r + 0.00255 * r * wd for r, wd in steps) / 1000
    rs = sum(r for r, _ in steps)
    print(
        f"{c}: wall {s:.1f} s, steps {len(steps)}, row-steps {rs}, mean width {sum(r * wd for r, wd in steps) / rs:.0f}, joins {len(joins)}, model est {est:.1f} s (fixed {14 * len(steps) / 1000:.1f}, attn {sum(0.00255 * r * wd for r, wd in steps) / 1000:.1f})",
        flush=True,
    )
