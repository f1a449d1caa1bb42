"""Benchmark: the mention writer with prompts grouped by length vs in template order.

Both runs write the mentions of the same templates (the ``template`` column of a generated folder, its first
``-n``), with the same model, seed and batch size, in this one process; a short warm-up run comes first. For
each the script prints seconds, slots written per second, and the prompt positions the ``model.generate``
calls were given (padding included: on a CPU the prompt's forward pass costs about its positions). The last
lines are::

    padded_positions_ratio: <grouped positions ÷ template-order positions>
    speedup_grouped: <template-order seconds ÷ grouped seconds>

Example (a generator trained with mention samples and a set it generated)::

    python scripts/bench_mention_writer.py --model my-generator --templates my-generator-set -n 512
"""

from __future__ import annotations

import argparse
import platform
import time

import datasets
import torch

from hf_ecg.modeling import load_ecg_model
from hf_ecg.runtime.blocks import Template
from hf_ecg.runtime.filling import training_bank
from hf_ecg.runtime.mention_writer import MentionWriter


class PositionCountingWriter(MentionWriter):
    """The writer, counting the prompt positions (padding included) it hands to ``model.generate``."""

    positions = 0

    def _generate(self, prompts: list[list[int]]) -> list[list[int]]:
        self.positions += len(prompts) * max(map(len, prompts))
        return super()._generate(prompts)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", required=True, help="a generator trained with mention samples")
    parser.add_argument("--templates", required=True, help="a generated folder (its `template` column is read)")
    parser.add_argument("-n", type=int, default=512, help="templates to write (default 512)")
    parser.add_argument("--batch-size", type=int, default=64, help="slots per generate call (the default 64)")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()

    model, tokenizer, ecg_config = load_ecg_model(args.model)
    rows = datasets.load_dataset(args.templates, split="train")
    templates = [Template(tuple(t.split())) for t in rows["template"][: args.n]]
    bank = training_bank(ecg_config)
    print(f"device: {platform.processor() or platform.machine()}, torch {torch.__version__}, "
          f"{torch.get_num_threads()} threads; {len(templates)} templates, "
          f"{sum(len(t.entity_types) for t in templates)} slots")  # fmt: skip

    def run(group_by_length: bool, items: list[Template]) -> tuple[float, int, int]:
        writer = PositionCountingWriter(model, tokenizer, ecg_config, batch_size=args.batch_size,
                                        group_by_length=group_by_length, known=bank)  # fmt: skip
        start = time.perf_counter()
        result = writer.write(items, seed=args.seed)
        return time.perf_counter() - start, writer.positions, result.written

    run(True, templates[:16])  # warm-up
    measured = {}
    for grouped in (False, True):
        seconds, positions, written = run(grouped, templates)
        measured[grouped] = (seconds, positions)
        name = "grouped by length" if grouped else "template order"
        print(f"{name:>18}: {seconds:7.1f} s, {written / seconds:6.1f} slots/s, {positions:,} prompt positions, "
              f"{written} written")  # fmt: skip
    print(f"padded_positions_ratio: {measured[True][1] / measured[False][1]:.3f}")
    print(f"speedup_grouped: {measured[False][0] / measured[True][0]:.2f}")


if __name__ == "__main__":
    main()
