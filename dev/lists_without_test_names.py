"""How many of a test split's names a folder of mention lists holds, and the same lists with every one removed.

A gazetteer made from a training pool shares names with the test split; a tagger trained on synthetic data
that uses it may score for names it was handed rather than for what it learnt (so every list row says
how many it holds, and one row per setting goes without any). Usage:

    python dev/lists_without_test_names.py LISTS TEST [--output DIR]

prints, per list and overall, the distinct test names it holds and the share of the test split's name
occurrences they make; with ``--output``, writes the lists without any name that the test split labels (of any
type), counts kept, and prints the same for them (0 by construction).
"""

from __future__ import annotations

import argparse
from collections import Counter
from pathlib import Path

from hf_ecg.data.sources import load_source
from hf_ecg.runtime.mentions import MENTION_LIST_SUFFIX, mention_list_files, read_mention_list


def coverage(lists: dict[str, Counter], test_names: Counter) -> tuple[int, int, int, int]:
    """(distinct test names held, distinct test names, occurrences held, occurrences), names of any type."""
    held = set().union(*lists.values()) & set(test_names)
    return len(held), len(test_names), sum(test_names[n] for n in held), sum(test_names.values())


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("lists", help="a folder of TYPE.txt mention lists")
    parser.add_argument("test", help="the test split (a corpus file or dataset folder)")
    parser.add_argument("--output", default=None, metavar="DIR", help="write the lists without the test names here")
    args = parser.parse_args()
    lists = {label: read_mention_list(path) for label, path in mention_list_files(args.lists).items()}
    test_names = Counter(tokens for sentence in load_source(args.test) for _, tokens in sentence.mentions)
    held, distinct, occurrences_held, occurrences = coverage(lists, test_names)
    print(
        f"{args.lists}: {held} of the {distinct} distinct names of {args.test} ({held / distinct:.1%}), "
        f"{occurrences_held / occurrences:.1%} of its {occurrences} name occurrences"
    )
    if args.output:
        out = Path(args.output)
        out.mkdir(parents=True, exist_ok=True)
        for label, mentions in lists.items():
            kept = {m: c for m, c in mentions.items() if m not in test_names}
            print(f"  {label}: {len(mentions)} -> {len(kept)} mentions")
            lines = (f"{' '.join(m)}\t{c}\n" for m, c in sorted(kept.items(), key=lambda item: -item[1]))
            (out / f"{label}{MENTION_LIST_SUFFIX}").write_text("".join(lines), encoding="utf-8")
        cleaned = {label: read_mention_list(path) for label, path in mention_list_files(out).items()}
        held, distinct, occurrences_held, occurrences = coverage(cleaned, test_names)
        print(f"{out}: {held} of the {distinct} distinct test names ({occurrences_held} occurrences)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
