"""Write a generated set's slots again, with another mention writer or seed, over the same templates.

Separates what the writer does from what the generator does: the copy keeps every template (and so every
sentence's text outside its mentions) and only the mentions change. ``--writer old`` is the per-slot writer
(``bench_mention_writer.PerSlotGenerateWriter``: a ``model.generate`` call per slot index and try),
``new`` the one ``hf-ecg generate`` runs; a slot whose every try is rejected is drawn from the bank, as
``generate`` does. Usage::

    python dev/refill_mentions.py --model GENERATOR --source SET --output COPY --writer old --seed 1

Then ``hf-ecg evaluate ner --synthetic COPY`` beside ``--synthetic SET`` compares the two writers' labels.
The copy's ``refill.json`` holds the slots, written, rejected tries by reason, the share of new mentions and the
writer's seconds; its manifest and card still describe SET.
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import sys
import time
from pathlib import Path

import datasets
import torch

from hf_ecg.data.dataset_format import SHARD_PATTERN, write_shard
from hf_ecg.modeling import load_ecg_model
from hf_ecg.runtime.blocks import Template
from hf_ecg.runtime.decoding import DecodedTemplate
from hf_ecg.runtime.filling import MentionFiller, training_bank
from hf_ecg.runtime.mention_writer import MentionWriter

sys.path.insert(0, str(Path(__file__).parents[1] / "scripts"))
from bench_mention_writer import PerSlotGenerateWriter

#: The decoder's record of a template, kept from the source row (only the mentions change).
DECODED_FIELDS = (
    "forced_tags",
    "model_tokens",
    "redrawn_tokens",
    "refused_redraws",
    "cut_blocks",
    "complete",
    "tag_pieces",
)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", required=True, help="the generator that wrote SET")
    parser.add_argument("--source", type=Path, required=True, help="a set written by hf-ecg generate")
    parser.add_argument("--output", type=Path, required=True, help="the copy to write (replaced)")
    parser.add_argument("--writer", choices=["new", "old"], default="new")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()

    model, tokenizer, ecg_config = load_ecg_model(args.model, dtype=torch.float32)
    bank = training_bank(ecg_config)
    filler = MentionFiller(bank)  # a slot whose every try is rejected: drawn from the bank, as generate does
    known = {label: set(bank.counts(label)) for label in bank.types}
    shutil.rmtree(args.output, ignore_errors=True)
    shutil.copytree(args.source, args.output)
    rng = random.Random(args.seed)
    totals: dict = {"writer": args.writer, "seed": args.seed, "slots": 0, "written": 0, "new": 0, "seconds": 0.0}
    totals["rejected"] = {}
    data_dir = args.output / "data"
    for number in range(len(list(data_dir.glob("*.parquet")))):
        table = datasets.Dataset.from_parquet(str(data_dir / SHARD_PATTERN.format(number)))
        decoded = [
            DecodedTemplate(
                tuple(row["entities"]),
                Template(tuple(row["template"].split(" "))),
                **{name: row[name] for name in DECODED_FIELDS},
            )
            for row in table
        ]
        if args.writer == "old":
            writer = PerSlotGenerateWriter(model, tokenizer, ecg_config, known=bank, batch_size=64)
        else:
            writer = MentionWriter(model, tokenizer, ecg_config, known=bank)
        started = time.perf_counter()
        result = writer.write([d.template for d in decoded], seed=args.seed * 1000 + number)
        totals["seconds"] += time.perf_counter() - started
        record = result.to_dict()
        totals["slots"] += record["slots"]
        totals["written"] += record["written"]
        for reason, count in record["rejected"].items():
            totals["rejected"][reason] = totals["rejected"].get(reason, 0) + count
        totals["new"] += sum(
            mention not in known.get(label, ())
            for d, written in zip(decoded, result.mentions, strict=True)
            for label, mention in zip(d.entities, written, strict=True)
            if mention is not None
        )
        rows = [
            {"id": row["id"], **filler.fill(d, rng, written)}
            for row, d, written in zip(table, decoded, result.mentions, strict=True)
        ]
        write_shard(rows, table.features, data_dir, number, 0)
        print(f"shard {number}: {totals['seconds']:.0f} s of writing so far", flush=True)
    totals["new_share"] = round(totals["new"] / max(totals["written"], 1), 4)
    (args.output / "refill.json").write_text(json.dumps(totals, indent=1) + "\n")
    print(json.dumps(totals))
    return 0


if __name__ == "__main__":
    sys.exit(main())
