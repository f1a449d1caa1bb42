"""Fill a generated set's templates again with the dictionary's names that the user's unlabelled text holds.

What ``hf-ecg generate --dictionary D --unlabelled TEXT`` does to the slots, over a set already generated: the
templates stay, each slot of a type the dictionary has gets one of the names the text holds, drawn as often as the
text uses it (``--draw uniform``: each name alike), and the slots of other types keep the set's own mentions. The
names come from the library's own lookup (``DictionaryNames``, what ``generate`` fills with) and the slots are filled
by its own filler; only the random draws differ from a ``generate`` run. Writes a JSONL corpus (``tokens``,
``ner_tags``) for ``hf-ecg evaluate ner --synthetic``. Usage::

    python dev/fill_with_text_names.py --source SET --dictionary DICT --unlabelled train.tsv:45:4560 \\
        --gold train.tsv:45 --output filled.jsonl --seed 1
"""

from __future__ import annotations

import argparse
import json
import random
from pathlib import Path

from hf_ecg.data.dataset_format import load_data_folder
from hf_ecg.data.sources import load_source, load_unlabelled_source
from hf_ecg.labelling.dictionary import Dictionary
from hf_ecg.labelling.dictionary_names import DictionaryNames
from hf_ecg.runtime.blocks import Template
from hf_ecg.runtime.decoding import DecodedTemplate
from hf_ecg.runtime.filling import MentionFiller
from hf_ecg.runtime.tags import tags_to_spans


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--source", type=Path, required=True, help="a set written by hf-ecg generate")
    parser.add_argument("--dictionary", action="append", required=True, help="as hf-ecg generate --dictionary")
    parser.add_argument("--unlabelled", required=True, help="the user's text, as hf-ecg generate --unlabelled")
    parser.add_argument("--gold", default=None, help="gold sentences: names they hold mostly as O text are dropped")
    parser.add_argument("--draw", choices=["weighted", "uniform"], default="weighted", help="default weighted")
    parser.add_argument("--output", type=Path, required=True, help="the JSONL corpus to write (new)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--names", type=Path, default=None, help="also write the names drawn from, TYPE.txt")
    args = parser.parse_args()
    if args.output.exists():
        parser.error(f"{args.output} exists: give a new file")

    dictionary = Dictionary.read(args.dictionary)
    if args.gold:
        gold = [(s.tokens, s.tags) for s in load_source(args.gold)]
        dictionary, stopped = dictionary.without_common_words(gold)
        print(f"left out as ordinary words in the gold sentences: {', '.join(stopped) or 'none'}")
    names = DictionaryNames(dictionary, load_unlabelled_source(args.unlabelled)).names_as_mentions()
    found = {label: names.names.counts(label) for label in names.names.types}
    for label, counts in sorted(found.items()):
        print(f"{label}: {len(counts)} names, {sum(counts.values())} uses; {counts.most_common(8)}")
    if args.names:
        args.names.mkdir(parents=True, exist_ok=True)
        for label, counts in found.items():
            lines = "".join(f"{' '.join(name)}\t{count}\n" for name, count in counts.most_common())
            (args.names / f"{label}.txt").write_text(lines, encoding="utf-8")
    filler = MentionFiller(names.names, "weighted" if args.draw == "weighted" else "random")
    rows = load_data_folder(args.source)
    labels = rows.features["ner_tags"].feature.names
    rng = random.Random(args.seed)
    with args.output.open("w", encoding="utf-8") as out:
        for row in rows:
            tags = [labels[k] for k in row["ner_tags"]]
            own = [row["tokens"][s.start : s.end] for s in tags_to_spans(tags, "IOB2")[0]]
            decoded = DecodedTemplate(tuple(row["entities"]), Template(tuple(row["template"].split())))
            kept = [None if label in found else mention for label, mention in zip(decoded.entities, own, strict=True)]
            sample = filler.fill(decoded, rng, kept, ["lists"] * len(kept))
            out.write(json.dumps({"tokens": sample["tokens"], "ner_tags": sample["ner_tags"]}) + "\n")
    print(f"wrote {len(rows)} samples to {args.output}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
