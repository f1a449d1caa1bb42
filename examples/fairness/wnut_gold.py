"""Write the WNUT-16 tweets the quick start trains on (its first 600 readable sentences: 182 tweets) as a CoNLL/TSV
file, the gold side of the fairness example (README.md beside this file).

    python examples/fairness/wnut_gold.py -o outputs/fairness/gold.tsv
"""

from __future__ import annotations

import argparse
from pathlib import Path

from hf_ecg.data.corpus import load_corpus
from hf_ecg.demo import shipped_corpus
from hf_ecg.demo.model import readable_sentences


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("-o", "--output", type=Path, required=True, help="the TSV file to write (new)")
    parser.add_argument("--first-n", type=int, default=600, help="readable sentences, as the quick start (600)")
    args = parser.parse_args()
    if args.output.exists():
        parser.error(f"{args.output} exists: give a new file")
    sentences = readable_sentences(load_corpus(shipped_corpus()), args.first_n)
    args.output.parent.mkdir(parents=True, exist_ok=True)
    with args.output.open("w", encoding="utf-8") as out:
        for sentence in sentences:
            out.writelines(f"{token}\t{tag}\n" for token, tag in zip(sentence.tokens, sentence.tags, strict=True))
            out.write("\n")
    print(f"wrote {len(sentences)} tweets to {args.output}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
