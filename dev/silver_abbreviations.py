"""The silver split's labels against a labelled pool's own: the dictionary alone, then with the short forms the text
defines (``hf_ecg.labelling.abbreviations``), as ``hf-ecg generate --dictionary --unlabelled POOL --gold GOLD``
labels it; a measure only, nothing in the labelling reads the pool's labels.

Writes a JSON report (precision and recall of each labelling, the Schwartz–Hearst pairs of the pool, how many the
dictionary marks, the short forms labelled and how many of them the pool's labels hold) and, with ``--read``, twenty
sentences with a short form labelled (seed 46), ``+[Type: SF]`` marking each, the pool's labels below; with
``--set SET --read-set FILE``, twenty of the silver split ``generate`` wrote into SET, its short forms, unknown and
weighted words marked (``dev/silver_recipes.py``'s reading).

Usage::

    python dev/silver_abbreviations.py --gold bc5cdr/train.tsv:45 --unlabelled bc5cdr/train.tsv:45:4560 \\
        --dictionary DICT -o report.json --read read-20.txt
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from pathlib import Path

from hf_ecg.cli.mention_options import read_dictionary
from hf_ecg.data.corpus import Corpus
from hf_ecg.data.sources import load_source, load_text_documents
from hf_ecg.labelling.abbreviations import DEFAULT_WINDOW, AbbreviationLabeller, o_words, short_form_pairs
from hf_ecg.labelling.labeller import label_sentences

sys.path.insert(0, str(Path(__file__).parent))
from silver_recipes import read_twenty, silver_quality


def _entities(corpus: Corpus) -> set[tuple[int, int, int, str]]:
    return {(k, s.start, s.end, s.label) for k, sentence in enumerate(corpus) for s in sentence.spans}


def _marked(tokens: list[str], spans, added: set) -> str:
    words = list(tokens)
    for span in sorted(spans, key=lambda s: -s.start):
        mark = "+" if (span.start, span.end, span.label) in added else ""
        words[span.start : span.end] = [f"{mark}[{span.label}: {' '.join(words[span.start : span.end])}]"]
    return " ".join(words)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--gold", required=True, help="the gold sentences, DATA:N")
    parser.add_argument("--unlabelled", required=True, help="the text, DATA:START:STOP of a labelled pool")
    parser.add_argument("--dictionary", action="append", required=True)
    parser.add_argument("--window", type=int, default=DEFAULT_WINDOW)
    parser.add_argument("-o", "--output", required=True)
    parser.add_argument("--read", default=None, help="write twenty sentences with a short form labelled here")
    parser.add_argument("--set", default=None, help="a set generate wrote with this pool as its silver split")
    parser.add_argument("--read-set", default=None, help="write twenty of --set's silver sentences here")
    args = parser.parse_args()

    gold, pool = load_source(args.gold), load_source(args.unlabelled)
    dictionary = read_dictionary(args.dictionary, labelled=[gold])
    text = [s.tokens for s in pool]
    documents = load_text_documents(args.unlabelled)
    lookup = dictionary.label(text)
    labeller = AbbreviationLabeller(dictionary, documents=documents, window=args.window, common_words=o_words([gold]))
    with_short_forms = label_sentences(text, labeller)
    added = _entities(with_short_forms) - _entities(lookup)
    truth = _entities(pool)
    pairs = unmarked_long_forms = 0
    for k, tokens in enumerate(text):
        for short, long in short_form_pairs(tokens).items():
            pairs += 1
            where = AbbreviationLabeller.located(tokens, short, long)
            if where is None:
                continue
            start, bracket, _ = where

            def ends_there(spans, start=start, bracket=bracket):
                return any(s.end == bracket and s.start >= start for s in spans)

            unmarked_long_forms += ends_there(pool[k].spans) and not ends_there(lookup[k].spans)
    missed = truth - _entities(with_short_forms)
    capitals = [m for m in missed if m[2] - m[1] <= 3 and "".join(text[m[0]][m[1] : m[2]]).replace("-", "").isupper()]
    report = {
        "gold": args.gold,
        "unlabelled": args.unlabelled,
        "dictionary": args.dictionary,
        "documents": "separated by the text" if documents is not None else f"a window of {args.window} sentences",
        "pool_entities": len(truth),
        "dictionary_alone": silver_quality(lookup, pool),
        "with_short_forms": silver_quality(with_short_forms, pool),
        "schwartz_hearst_pairs": pairs,
        "definitions_after_a_dictionary_name": len(labeller.definitions),
        "short_forms_labelled": len(added),
        "short_forms_labelled_right": len(added & truth),
        "long_forms_the_pool_marks_and_the_dictionary_does_not": unmarked_long_forms,
        "names_missed_with_short_forms": len(missed),
        "of_them_short_capitals": len(capitals),
    }
    Path(args.output).parent.mkdir(parents=True, exist_ok=True)
    Path(args.output).write_text(json.dumps(report, indent=2) + "\n")
    print(json.dumps(report, indent=2))
    if args.read:
        with_added = sorted({k for k, *_ in added})
        lines = [
            "# Twenty silver sentences with a short form the text defines labelled (seed 46): [Type: name] the",
            "# dictionary's, +[Type: SF] a short form; below each, the pool's own labels (a measure only).",
            "",
        ]
        for k in sorted(random.Random(46).sample(with_added, min(20, len(with_added)))):
            mine = {(s, e, label) for kk, s, e, label in added if kk == k}
            lines += [
                f"{k}: {_marked(list(text[k]), with_short_forms[k].spans, mine)}",
                f"   pool: {_marked(list(text[k]), pool[k].spans, set())}",
                "",
            ]
        Path(args.read).write_text("\n".join(lines))
    if args.set and args.read_set:
        from hf_ecg.data.silver import load_silver

        silver = load_silver(args.set)
        quality = silver_quality(silver, pool)
        Path(args.read_set).write_text(read_twenty(lookup, silver, pool, f"generate's ({silver.name})", quality))
    return 0


if __name__ == "__main__":
    sys.exit(main())
