"""Write a Gradio Space folder ready to upload: the app, its card naming the model, and hf_ecg as a wheel.

    python scripts/build_space.py --model ORG/wnut-ecg-qalm --output build/space
    hf upload ORG/ecg-demo build/space . --repo-type space

hf_ecg is not on the package index, so the folder carries the wheel built from this checkout and
``requirements.txt`` installs it by path (``./hf_ecg-<version>-py3-none-any.whl``); the card's
``models:`` names the model the app loads at start (spaces/app.py), so the Space trains nothing.
"""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SPACE = ROOT / "spaces"


def build_wheel(output: Path) -> Path:
    """Build hf_ecg's wheel from this checkout into ``output``; its path."""
    for old in output.glob("hf_ecg-*.whl"):
        old.unlink()
    # setuptools copies into build/lib and never removes what is there: modules renamed or deleted since an
    # earlier build would ship in the wheel beside their new selves.
    shutil.rmtree(ROOT / "build" / "lib", ignore_errors=True)
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "--no-build-isolation",
            "--quiet",
            "--wheel-dir",
            str(output),
            str(ROOT),
        ],
        check=True,
    )
    (wheel,) = output.glob("hf_ecg-*.whl")
    return wheel


def space_card(model: str) -> str:
    """spaces/README.md with ``models: [model]`` in its front matter."""
    from huggingface_hub import SpaceCard

    card = SpaceCard.load(SPACE / "README.md")
    card.data.models = [model]
    return str(card)


def requirements(wheel: Path) -> str:
    """spaces/requirements.txt with hf_ecg taken from the wheel beside it."""
    text = (SPACE / "requirements.txt").read_text(encoding="utf-8")
    text, replaced = re.subn(r"(?m)^\.$", f"./{wheel.name}", text)
    if replaced != 1:
        raise ValueError(f"{SPACE / 'requirements.txt'} has no '.' line (hf_ecg from the repository) to replace")
    return text


def build_space(model: str, output: Path) -> Path:
    output.mkdir(parents=True, exist_ok=True)
    wheel = build_wheel(output)
    shutil.copy2(SPACE / "app.py", output / "app.py")
    (output / "README.md").write_text(space_card(model), encoding="utf-8")
    (output / "requirements.txt").write_text(requirements(wheel), encoding="utf-8")
    return output


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", required=True, help="Hub id of the model the Space serves (hf-ecg push-model)")
    parser.add_argument("--output", type=Path, required=True, help="the Space folder to write")
    args = parser.parse_args(argv)
    if not re.fullmatch(r"[\w.-]+/[\w.-]+", args.model):
        parser.error(f"--model must be a Hub id ORG/NAME, got {args.model!r}")
    output = build_space(args.model, args.output)
    print(
        f"wrote {output}/: app.py, README.md (models: {args.model}), requirements.txt, "
        f"{next(output.glob('hf_ecg-*.whl')).name}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
