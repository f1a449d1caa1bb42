"""Benchmark: written mentions against the templates they fill, and against writing each slot by ``model.generate``.

In this one process, on one model, after a short warm-up of each:

- **templates**: the batched decoder (:class:`hf_ecg.runtime.decoding.ChainedDecoder`, ``hf-ecg generate``'s
  defaults) on ``-n`` entity sequences drawn from the model's training statistics (gold sampler);
- **writer**: :class:`hf_ecg.runtime.mention_writer.MentionWriter` writing every slot of those templates as
  ``hf-ecg generate`` does (one continuous batch; a template's first prompt encoded on the keys/values of the
  sentence the decoder encoded, each later one going on from the template's previous prompt: with
  ``after-sentence`` the row stays in the batch and is fed the ids after those the two prompts share);
- **per-slot generate**: the per-slot writer: slot by slot over all templates, each try a
  ``model.generate`` call over the whole prompt, batches of ``--batch-size`` prompts sorted by length.

For each: seconds, slots per second, the positions the model computed (input ids of every forward, padding
included: on a CPU a forward costs about its positions), the share of tries rejected, and the share of written
mentions that are not in the training bank. The last lines are::

    writer_vs_templates: <writer seconds ÷ templates seconds>
    speedup_vs_generate: <per-slot generate seconds ÷ writer seconds>

Example (a generator trained with mention samples, the ``hf-ecg train`` default)::

    python scripts/bench_mention_writer.py --model my-generator -n 256
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from collections.abc import Sequence
from pathlib import Path

import torch

from hf_ecg.data.statistics import CorpusStatistics
from hf_ecg.modeling import INFERENCE_DTYPES, inference_dtype, load_ecg_model
from hf_ecg.runtime.blocks import Template
from hf_ecg.runtime.decoding import ChainedDecoder, DecodingConfig
from hf_ecg.runtime.filling import training_bank
from hf_ecg.runtime.mention_writer import MentionWriter, WrittenMentions
from hf_ecg.synthetic.entity_sequences import make_sampler

sys.path.insert(0, str(Path(__file__).parent))
from bench_generation import counted_positions, device_description


class PerSlotGenerateWriter(MentionWriter):
    """The per-slot writer, kept as the baseline: each slot index over all templates in turn, each try a
    ``model.generate`` call on whole prompts (sorted by length, ``batch_size`` per call)."""

    def _write_all(
        self,
        templates: Sequence[Template],
        order: list[int],
        given: Sequence[Sequence[tuple[str, ...] | None]],
        result: WrittenMentions,
        streams: list[random.Random],
        kept: dict,
    ) -> None:
        for start in range(0, len(order), self.batch_size):
            group = order[start : start + self.batch_size]
            self._write_group(templates, group, given, result, streams[group[0]].getrandbits(63))

    def _write_group(
        self,
        templates: Sequence[Template],
        group: list[int],
        given: Sequence[Sequence[tuple[str, ...] | None]],
        result: WrittenMentions,
        seed: int,
    ) -> None:
        torch.manual_seed(seed)
        for slot in range(max(len(templates[i].entity_types) for i in group)):
            todo = [i for i in group if slot < len(templates[i].entity_types) and given[i][slot] is None]
            for attempt in range(self.max_attempts):
                if not todo:
                    break
                result.redrawn += len(todo) if attempt else 0
                prompts = {i: self.prompt(templates[i], result.mentions[i], slot) for i in todo}
                order = sorted(todo, key=lambda i: len(prompts[i]))
                failed = []
                for start in range(0, len(order), self.batch_size):
                    batch = order[start : start + self.batch_size]
                    for i, ids in zip(batch, self._generate([prompts[i] for i in batch]), strict=True):
                        mention, reason = self.rules.judge(ids, templates[i].entity_types[slot])
                        if mention is None:
                            result.reject(reason)
                            failed.append(i)
                        else:
                            result.mentions[i][slot] = mention
                todo = sorted(failed)

    def _generate(self, prompts: list[list[int]]) -> list[list[int]]:
        width = max(map(len, prompts))
        device = self.model.device
        runner = self.runner
        input_ids = torch.tensor([[runner.pad_id] * (width - len(p)) + p for p in prompts], device=device)
        attention = torch.tensor([[0] * (width - len(p)) + [1] * len(p) for p in prompts], device=device)
        output = self.model.generate(
            input_ids=input_ids,
            attention_mask=attention,
            **runner.sampler.params.generate_kwargs(),
            max_new_tokens=self.rules.max_tokens + 1,
            min_new_tokens=1,
            eos_token_id=self.endtext_id,
            pad_token_id=runner.pad_id,
            suppress_tokens=runner.banned,
        )
        return output[:, width:].tolist()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", required=True, help="a generator trained with mention samples")
    parser.add_argument("-n", type=int, default=256, help="templates to write (default 256, a shard of generate)")
    parser.add_argument(
        "--dtype",
        choices=INFERENCE_DTYPES,
        default="float32",
        help="dtype of the model (default float32; 'auto' as `hf-ecg generate`: bfloat16 where computed natively)",
    )
    parser.add_argument(
        "--batch-size",
        type=int,
        default=None,
        help="templates per writer batch (default: the "
        "writer's); the baseline's prompts per generate call (default 64, as it was)",
    )
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument(
        "--no-baseline",
        action="store_true",
        help="skip the per-slot generate writer (it takes "
        "about as long as the templates; without it there is no speedup_vs_generate line)",
    )
    args = parser.parse_args()

    dtype = inference_dtype(args.dtype)
    model, tokenizer, ecg_config = load_ecg_model(args.model, dtype=getattr(torch, dtype))
    stats = CorpusStatistics.from_dict(ecg_config.corpus_statistics)
    sequences = make_sampler("gold", stats).sample(args.n, random.Random(args.seed))
    bank = training_bank(ecg_config)
    known = {label: set(bank.counts(label)) for label in bank.types}
    print(f"device: {device_description()}, torch {torch.__version__}, {dtype}; model {args.model}")
    settings = DecodingConfig(seed=args.seed)
    ChainedDecoder(model, tokenizer, ecg_config, settings).decode(sequences[:8])  # warm-up
    with counted_positions(model) as positions:
        start = time.perf_counter()
        decoded = ChainedDecoder(model, tokenizer, ecg_config, settings).decode(sequences, keep_prefixes=True)
        template_seconds = time.perf_counter() - start
    templates = [d.template for d in decoded]
    slots = sum(len(t.entity_types) for t in templates)
    print(f"{len(templates)} templates, {slots} slots")
    print(f"{'procedure':<18} {'seconds':>8} {'slots/s':>8} {'positions':>10} {'rejected':>9} {'new':>6}")
    print(f"{'templates':<18} {template_seconds:8.1f} {'-':>8} {sum(positions.values()):>10,} {'-':>9} {'-':>6}")

    def run(writer_class: type[MentionWriter], **options: int) -> float:
        writer = writer_class(model, tokenizer, ecg_config, known=bank, **options)
        writer.write(templates[:8], seed=0)  # warm-up
        with counted_positions(model) as positions:
            start = time.perf_counter()
            result = writer.write(templates, seed=args.seed, prefixes=[d.prompt_prefix for d in decoded])
            seconds = time.perf_counter() - start
        record = result.to_dict()
        mentions = [
            (label, m)
            for t, row in zip(templates, result.mentions, strict=True)
            for label, m in zip(t.entity_types, row, strict=True)
            if m is not None
        ]
        new = sum(m not in known.get(label, ()) for label, m in mentions) / max(len(mentions), 1)
        name = "writer" if writer_class is MentionWriter else "per-slot generate"
        print(
            f"{name:<18} {seconds:8.1f} {result.written / seconds:8.2f} {sum(positions.values()):>10,} "
            f"{record['rejected_share']:9.1%} {new:6.1%}",
            flush=True,
        )
        return seconds

    writer_options = {"batch_size": args.batch_size} if args.batch_size else {}
    writer_seconds = run(MentionWriter, **writer_options)
    generate_seconds = None if args.no_baseline else run(PerSlotGenerateWriter, batch_size=args.batch_size or 64)
    print(f"writer_vs_templates: {writer_seconds / template_seconds:.3f}")
    if generate_seconds is not None:
        print(f"speedup_vs_generate: {generate_seconds / writer_seconds:.2f}")


if __name__ == "__main__":
    main()
