"""A committed JSONL set's labels repaired by a name dictionary: what ``hf-ecg filter --rule dictionary`` does to a
folder ``hf-ecg generate`` wrote, for the sets ``dev/fill_with_text_names.py`` writes::

    python dev/repair_with_dictionary.py --source filled.jsonl --dictionary protein=DICT/protein.txt \\
        --dictionary names/jnlpba-186-mined --gold jnlpba/devel.tsv:186 --output repaired.jsonl

The dictionary's names left ``O`` get their type, and an entity that is a name of another type gets that type
(``Dictionary.repaired``); names the gold sentences use mostly as ordinary words are left out first
(``Dictionary.without_common_words``), as the filter's rule does.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from hf_ecg.data.sources import load_source
from hf_ecg.labelling.dictionary import Dictionary


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--source", type=Path, required=True, help="a JSONL set of tokens and ner_tags (IOB2)")
    parser.add_argument("--dictionary", action="append", required=True, help="as hf-ecg filter --dictionary")
    parser.add_argument("--gold", default=None, help="gold sentences: names they hold mostly as O text are dropped")
    parser.add_argument("--output", type=Path, required=True, help="the JSONL set to write (new)")
    args = parser.parse_args()
    if args.output.exists():
        parser.error(f"{args.output} exists: give a new file")

    dictionary = Dictionary.read(args.dictionary)
    if args.gold:
        gold = [(s.tokens, s.tags) for s in load_source(args.gold)]
        dictionary, stopped = dictionary.without_common_words(gold)
        print(f"left out as ordinary words in the gold sentences: {', '.join(stopped) or 'none'}")
    changed_words = changed_samples = total = 0
    with args.source.open(encoding="utf-8") as source, args.output.open("w", encoding="utf-8") as out:
        for line in source:
            row = json.loads(line)
            tags = dictionary.repaired(row["tokens"], row["ner_tags"])
            differ = sum(a != b for a, b in zip(tags, row["ner_tags"], strict=True))
            changed_words += differ
            changed_samples += bool(differ)
            total += 1
            out.write(json.dumps({"tokens": row["tokens"], "ner_tags": tags}) + "\n")
    print(f"wrote {total} samples to {args.output}: {changed_words} words relabelled in {changed_samples} samples")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
