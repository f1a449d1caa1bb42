"""SHA-256 digests of what a fixed list of commands writes: the byte-identity check of a restructure.

Run it before and after a change that must not change behaviour, and compare the two lists
(``diff before.txt after.txt``)::

    python dev/output_digests.py --model outputs/jn186 --corpus ../shared/data/jnlpba/devel.tsv > before.txt

The model must be one trained with mention samples (so the default mentions are written ones); the
commands: ``blocks``; ``train`` (2 steps of LoRA on SmolLM2-135M, 20 sentences); ``generate`` with the
default (written) mentions, bank mentions, mention lists, a mixture and a dictionary with text (no ``--gold``);
``baseline mention-replacement``;
``export``; and the pipeline at temperature 1 and 0.8. Files that carry a time or a path (cards, logs,
trainer state) are left out; every Parquet shard, manifest, ``ecg_config.json`` and weight file is in.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import subprocess
import sys
import tempfile
from pathlib import Path

#: Files that carry a time, a path or an order no run fixes (peft writes adapter_config.json's target_modules, a
#: set, in the process's hash order): the weights they describe are in.
SKIPPED = ("README.md", "trainer_state.json", "training_args.bin", ".lock", "runs", "adapter_config.json")


def digests(folder: Path, root: Path) -> list[str]:
    """``digest  path`` for every file under ``folder`` but the skipped ones, in path order."""
    lines = []
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        if any(part in SKIPPED or part.startswith(".") for part in path.relative_to(folder).parts):
            continue
        data = path.read_bytes()
        if path.suffix == ".json":  # paths of this run's temporary folder are no behaviour
            data = data.replace(str(root).encode(), b"ROOT")
        lines.append(f"{hashlib.sha256(data).hexdigest()[:16]}  {path.relative_to(root)}")
    return lines


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", type=Path, required=True, help="a generator trained with mention samples")
    parser.add_argument("--corpus", type=Path, required=True, help="its training corpus (CoNLL)")
    parser.add_argument("-n", type=int, default=24, help="samples per generate command (default 24)")
    parser.add_argument("--keep", type=Path, default=None, help="write the outputs here (a new folder) and keep them")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) if args.keep is None else args.keep
        root.mkdir(parents=True, exist_ok=args.keep is None)
        types = json.loads((args.model / "ecg_config.json").read_text())["entity_types"]
        lists = root / "lists"
        lists.mkdir()
        (lists / f"{types[0]}.txt").write_text("alpha beta\ngamma\ndelta-1 epsilon\n")
        text = root / "text.txt"  # the user's text: names of the lists, no short form defined
        text.write_text(
            "the alpha beta was seen .\ngamma and more gamma .\n\nno names here .\nsome delta-1 epsilon .\n"
        )

        def hf_ecg(*argv: str) -> None:
            done = subprocess.run([sys.executable, "-m", "hf_ecg.cli", *argv], capture_output=True, text=True)
            if done.returncode:
                sys.exit(f"hf-ecg {' '.join(argv)} failed:\n{done.stderr[-3000:]}")

        gen = ["generate", "--model", str(args.model), "-n", str(args.n), "--samples-per-shard", "12"]
        commands = {
            "blocks": ["blocks", str(args.corpus), "--output", str(root / "blocks")],
            "train": [
                "train",
                "--data",
                str(args.corpus),
                "--first-n",
                "20",
                "--model",
                "smollm2-135m",
                "--output",
                str(root / "train"),
                "--max-steps",
                "2",
            ],
            "generate-written": [*gen, "-o", str(root / "generate-written")],
            "generate-bank": [*gen, "--mentions", "random", "-o", str(root / "generate-bank")],
            "generate-lists": [*gen, "--mentions", str(lists), "-o", str(root / "generate-lists")],
            "generate-mixture": [*gen, "--mention-shares", "generated=1,bank=1", "-o", str(root / "generate-mixture")],
            "generate-dictionary-text": [
                *gen,
                "--dictionary",
                str(lists),
                "--unlabelled",
                str(text),
                "-o",
                str(root / "generate-dictionary-text"),
            ],
            "baseline": [
                "baseline",
                "mention-replacement",
                "--data",
                f"{args.corpus}:40",
                "-n",
                "40",
                "-o",
                str(root / "baseline"),
            ],
            "export": ["export", "--data", str(root / "generate-written"), "-o", str(root / "export.conll")],
        }
        for name, argv in commands.items():
            hf_ecg(*argv)
            out = root / (name if name != "export" else "export.conll")
            lines = (
                digests(out, root) if out.is_dir() else [f"{hashlib.sha256(out.read_bytes()).hexdigest()[:16]}  {name}"]
            )
            print(*lines, sep="\n", flush=True)
        from transformers import pipeline

        import hf_ecg

        gen_pipe = pipeline("entity-controlled-generation", model=str(args.model))
        for temperature in (1.0, 0.8):
            out = gen_pipe([[types[0]], [types[0], types[-1]]], num_return_sequences=2, seed=5, temperature=temperature)
            text = json.dumps(out, sort_keys=True, default=str).encode()
            print(f"{hashlib.sha256(text).hexdigest()[:16]}  pipeline temperature={temperature}", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
