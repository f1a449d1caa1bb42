"""Mine typed names from the user's unlabelled text with taggers, as name lists with counts.

The taggers (folders ``hf-ecg evaluate ner --save-taggers`` wrote, trained on the gold sentences and a synthetic
set) read the text as an ensemble (their label probabilities averaged); a predicted entity becomes a name when it
is entity-like (``synthetic.teacher.entity_like``), predicted at least ``--min-count`` times, under one type at
least 90% of the time, labelled in at least ``--min-share`` of the places its words stand in the text, at least
three characters long with a letter, and not a name the dictionary (if given) holds under another type; a type
with fewer than ``--min-names`` such names gets no list. Writes ``OUTPUT/TYPE.txt`` (``name<TAB>count``, the
mention-list format), to use as ``--dictionary`` or ``--mentions weighted``. With ``--test``, prints the lookup's
scores on it with the dictionary alone and with the mined names added, and the ensemble's. Usage::

    python dev/mine_names.py --taggers TAGGERS --unlabelled train.tsv:45:4560 --dictionary DICT \\
        --output mined/ [--test test.tsv]
"""

from __future__ import annotations

import argparse
from collections import Counter
from pathlib import Path

from seqeval.metrics import f1_score, precision_score, recall_score

from hf_ecg.data.dictionary import MIN_NAME_LENGTH, Dictionary, _key
from hf_ecg.evaluation import load_source, load_unlabelled_source
from hf_ecg.evaluation.tagger import Tagger
from hf_ecg.runtime.tags import tags_to_spans
from hf_ecg.synthetic.teacher import ensemble_proba, entity_like


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
    predicted: dict[tuple[str, ...], Counter[str]] = {}
    for tokens, probabilities in zip(text, ensemble_proba(taggers, text), strict=True):
        tags = [labels[k] for k in probabilities.argmax(-1)]
        for span in tags_to_spans(tags, "IOB2")[0]:
            words = tuple(tokens[span.start : span.end])
            if entity_like(words, tags[span.start]):
                predicted.setdefault(words, Counter())[span.label] += 1
    # every place the candidates' words stand in the text, labelled or not (the lookup of the candidates)
    places = Counter()
    for tokens in text:
        for span in Dictionary({"name": list(predicted)}).spans(tokens):
            places[tuple(tokens[span.start : span.end])] += 1
    mined: dict[str, Counter[tuple[str, ...]]] = {}
    type_of_key: dict[str, set[str]] = {}
    for words, by_type in predicted.items():
        type_of_key.setdefault(_key(words), set()).add(by_type.most_common(1)[0][0])
    for words, by_type in predicted.items():
        label, count = by_type.most_common(1)[0]
        known = dictionary.type_of(words) if dictionary is not None else None
        if (
            count >= args.min_count
            and count >= 0.9 * sum(by_type.values())
            and count >= args.min_share * places[words]
            and known in (None, label)
            and len(type_of_key[_key(words)]) == 1  # spelt alike under two types: the lookup could not tell
            and len(_key(words)) >= MIN_NAME_LENGTH  # what a lookup matches at all
            and any(ch.isalpha() for word in words for ch in word)  # "25" is no name
        ):
            mined.setdefault(label, Counter())[words] = count
    mined = {label: counts for label, counts in mined.items() if len(counts) >= args.min_names}
    args.output.mkdir(parents=True)
    for label, counts in sorted(mined.items()):
        lines = "".join(f"{' '.join(name)}\t{count}\n" for name, count in counts.most_common())
        (args.output / f"{label}.txt").write_text(lines, encoding="utf-8")
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
