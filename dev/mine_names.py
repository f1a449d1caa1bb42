"""Mine typed names from the user's unlabelled text with taggers already trained, as name lists with counts.

What ``hf-ecg mine-names`` does (``hf_ecg.labelling.mining``), with the taggers of an ``hf-ecg evaluate ner
--save-taggers`` run instead of its own, and with ``--test``: the lookup's scores on a test split with the dictionary
alone and with the mined names added, and the ensemble's. Writes ``OUTPUT/TYPE.txt`` (``name<TAB>count``). Usage::

    python dev/mine_names.py --taggers TAGGERS --unlabelled train.tsv:45:4560 --dictionary DICT \\
        --output mined/ [--test test.tsv]
"""

from __future__ import annotations

import argparse
from pathlib import Path

from seqeval.metrics import f1_score, precision_score, recall_score

from hf_ecg.data.sources import load_source, load_unlabelled_source
from hf_ecg.labelling.dictionary import Dictionary
from hf_ecg.labelling.ensemble import ensemble_proba
from hf_ecg.labelling.mining import mine_names, write_name_lists
from hf_ecg.taggers.tagger import Tagger


def _scores(gold: list[list[str]], predicted: list[list[str]]) -> str:
    p, r, f = (metric(gold, predicted) for metric in (precision_score, recall_score, f1_score))
    return f"P {p:.3f} R {r:.3f} F1 {f:.3f}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--taggers", type=Path, required=True, help="a --save-taggers folder (seed-N inside)")
    parser.add_argument("--unlabelled", required=True, help="the user's text (hf-ecg evaluate ner --unlabelled)")
    parser.add_argument("--dictionary", action="append", default=None, help="the user's dictionary, if any")
    parser.add_argument("--min-count", type=int, default=3, help="predicted at least this often (default 3)")
    parser.add_argument("--min-share", type=float, default=0.7, help="of the name's places in the text (0.7)")
    parser.add_argument("--min-names", type=int, default=10, help="a type with fewer names gets no list (10)")
    parser.add_argument("--output", type=Path, required=True, help="folder for TYPE.txt (new)")
    parser.add_argument("--test", default=None, help="a gold test split to score the lookups on")
    args = parser.parse_args()
    if args.output.exists():
        parser.error(f"{args.output} exists: give a new folder")

    taggers = [Tagger.from_pretrained(path) for path in sorted(args.taggers.glob("seed-*"))]
    labels = taggers[0].labels
    text = load_unlabelled_source(args.unlabelled)
    dictionary = Dictionary.read(args.dictionary) if args.dictionary else None
    limits = {"min_count": args.min_count, "min_share": args.min_share, "min_names": args.min_names}
    mined = mine_names(taggers, text, dictionary=dictionary, **limits)
    write_name_lists(args.output, mined)
    for label, counts in mined.items():
        new = [n for n in counts if dictionary is None or dictionary.type_of(n) is None]
        print(
            f"{label}: {len(counts)} names ({len(new)} not in the dictionary), e.g. {[' '.join(n) for n in new[:12]]}"
        )
    if args.test:
        test = load_source(args.test)
        gold = [sentence.tags for sentence in test]
        words = [sentence.tokens for sentence in test]
        ensemble = [[labels[k] for k in p.argmax(-1)] for p in ensemble_proba(taggers, words)]
        print(f"taggers (ensemble): {_scores(gold, ensemble)}")
        mined_only = Dictionary(mined)
        print(f"lookup, mined names alone: {_scores(gold, [mined_only.tags(t) for t in words])}")
        if dictionary is not None:
            joined = Dictionary(
                {
                    label: [*dictionary.names.get(label, ()), *mined.get(label, ())]
                    for label in {*dictionary.types, *mined}
                }
            )
            print(f"lookup, dictionary: {_scores(gold, [dictionary.tags(t) for t in words])}")
            print(f"lookup, dictionary and mined names: {_scores(gold, [joined.tags(t) for t in words])}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
