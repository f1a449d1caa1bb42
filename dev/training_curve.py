"""How a generator's held-out loss and its redrawn share move with the epochs it trained.

Trains one generator as ``hf-ecg train`` does (LoRA, a held-out split, one evaluation per epoch) for
``--epochs`` epochs, keeps a merged copy of the model at the end of each epoch, then generates ``--samples``
sentences from each copy as ``hf-ecg generate`` does (default decoding, mentions from the bank: the redrawn
share is the templates') and writes one row per epoch: updates, held-out loss, share of the generator's tokens
redrawn, blocks kept as they were when the redraw budget was spent, and whether the run looked undertrained.

    python dev/training_curve.py --data ../shared/data/bc5cdr/train.tsv --first-n 50 \\
        --epochs 10 -o outputs/curves/bc5cdr-50

The table goes to ``OUT/curve.md`` and ``OUT/curve.json``; the copies to ``OUT/epoch-K/``.
"""

from __future__ import annotations

import argparse
import copy
import json
import shutil
from pathlib import Path
from typing import Any

from transformers import TrainerCallback

from hf_ecg.hub.model_card import CARD_DATA_NAME
from hf_ecg.runtime.ecg_config import ECG_CONFIG_NAME as CONFIG_NAME
from hf_ecg.synthetic.generate import generate_dataset
from hf_ecg.synthetic.run_config import DatasetRunConfig
from hf_ecg.training.train import train_ecg_model
from hf_ecg.training.training_args import ECGTrainingArguments


class KeepEachEpoch(TrainerCallback):
    """Saves the merged model and tokenizer at the end of every epoch into ``root/epoch-K``."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def on_epoch_end(self, args: Any, state: Any, control: Any, model: Any = None, **kwargs: Any) -> None:
        folder = self.root / f"epoch-{round(state.epoch)}"
        copy.deepcopy(model).merge_and_unload().save_pretrained(folder)
        kwargs["processing_class"].save_pretrained(folder)


def held_out_loss_by_kind(args: argparse.Namespace) -> dict[int, dict[str, float]]:
    """Per epoch copy, the held-out answer loss on the template blocks and on the mention samples apart (the
    trainer's held-out loss mixes them): the held-out split is rebuilt as ``train_ecg_model`` made it."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from hf_ecg.data.builder import ECGBlocksBuilder
    from hf_ecg.runtime.blocks import MENTION_TOKEN
    from hf_ecg.training.train import hold_out_sentences
    from hf_ecg.training.trainer import encode_blocks

    builder = ECGBlocksBuilder(data_files={"train": str(args.data)}, first_n=args.first_n, mention_samples=True)
    builder.download_and_prepare()
    defaults = ECGTrainingArguments(output_dir=str(args.output / "final"), report_to="none")
    held_out = hold_out_sentences(
        builder.as_dataset(), len(builder.corpus("train")), defaults.validation_split, defaults.seed
    )["validation"]
    kinds = ["mention" if MENTION_TOKEN in context else "block" for context in held_out["context"]]
    # Every epoch's copy saved the same tokenizer: the held-out samples are encoded once.
    encoded = encode_blocks(held_out[:], AutoTokenizer.from_pretrained(args.output / "epoch-1"), defaults.max_length)
    losses: dict[int, dict[str, float]] = {}
    for epoch in range(1, args.epochs + 1):
        folder = args.output / f"epoch-{epoch}"
        model = AutoModelForCausalLM.from_pretrained(folder, dtype=torch.float32).eval()
        totals: dict[str, list[float]] = {"block": [0.0, 0], "mention": [0.0, 0]}
        with torch.inference_mode():
            for ids, labels, kind in zip(encoded["input_ids"], encoded["labels"], kinds, strict=True):
                logits = model(torch.tensor([ids])).logits[0, :-1]
                target = torch.tensor(labels[1:])
                loss = torch.nn.functional.cross_entropy(logits, target, ignore_index=-100, reduction="sum")
                totals[kind][0] += loss.item()
                totals[kind][1] += int((target != -100).sum())
        losses[epoch] = {kind: total / count for kind, (total, count) in totals.items() if count}
        losses[epoch]["count"] = {kind: kinds.count(kind) for kind in totals}
        print(epoch, losses[epoch], flush=True)
    return losses


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, required=True)
    parser.add_argument("--first-n", type=int, default=None)
    parser.add_argument("--model", default="smollm2-135m")
    parser.add_argument("--epochs", type=int, default=10)
    parser.add_argument("--samples", type=int, default=60)
    parser.add_argument("-o", "--output", type=Path, required=True)
    parser.add_argument(
        "--by-kind",
        action="store_true",
        help="only the held-out loss of blocks and mention "
        "samples apart, per epoch copy of an earlier run (OUT/by-kind.json)",
    )
    args = parser.parse_args()
    if args.by_kind:
        losses = held_out_loss_by_kind(args)
        (args.output / "by-kind.json").write_text(json.dumps(losses, indent=2) + "\n")
        return
    final = args.output / "final"
    if not (final / CONFIG_NAME).is_file():
        training = ECGTrainingArguments(
            output_dir=str(final),
            num_train_epochs=args.epochs,
            save_strategy="no",
            logging_steps=5,
            report_to="none",
            own_sentences=0,  # the curve of one training
        )
        train_ecg_model(
            args.data,
            args.model,
            training,
            first_n=args.first_n,
            callbacks=[KeepEachEpoch(args.output)],
            overwrite=True,
        )
    card = json.loads((final / CARD_DATA_NAME).read_text())
    held_out = {round(row["epoch"]): row["eval_loss"] for row in card["training_logs"] if "eval_loss" in row}
    steps = {round(row["epoch"]): row["step"] for row in card["training_logs"] if "eval_loss" in row}
    rows = []
    for epoch in range(1, args.epochs + 1):
        folder = args.output / f"epoch-{epoch}"
        for name in (CONFIG_NAME, CARD_DATA_NAME):
            shutil.copy(final / name, folder / name)
        out = args.output / f"generated-{epoch}"
        generate_dataset(folder, out, args.samples, mentions="random", run=DatasetRunConfig(overwrite=True))
        cost = json.loads((out / "ecg_generation.json").read_text())["generation_cost"]
        rows.append(
            {
                "epoch": epoch,
                "updates": steps.get(epoch),
                "held_out_loss": held_out.get(epoch),
                "redrawn_share": cost["redrawn_share"],
                "refused_redraws": cost["refused_redraws"],
                "blocks": cost["blocks"],
                "undertrained": cost["undertrained"],
            }
        )
        print(rows[-1], flush=True)
    (args.output / "curve.json").write_text(json.dumps(rows, indent=2) + "\n")
    lines = [
        "| epoch | updates | held-out loss | redrawn | blocks kept by the budget | undertrained |",
        "|---|---|---|---|---|---|",
    ]
    for row in rows:
        loss = f"{row['held_out_loss']:.3f}" if row["held_out_loss"] is not None else "-"
        lines.append(
            f"| {row['epoch']} | {row['updates']} | {loss} | {row['redrawn_share']:.0%} | "
            f"{row['refused_redraws']} of {row['blocks']} | {row['undertrained']} |"
        )
    (args.output / "curve.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
