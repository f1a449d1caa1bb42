"""Twenty samples of a labelled set drawn at random, marked as the set labels them and as a reference reads them.

The docs ask that the final default set of each setting be read with its labels marked, its wrong-type
mentions and names left ``O`` counted by a person: ``label_agreement``'s examples are drawn from the sentences
that disagree, these from all of them. Usage:

    python dev/read_twenty.py SET [REFERENCE] [--count 20] [--seed 46] [--title TITLE] > OUT.txt

Without REFERENCE, each sample is printed once, marked as the set labels it.
"""

from __future__ import annotations

import argparse
import random

from hf_ecg.data.sources import load_source
from hf_ecg.evaluation.labels import label_errors
from hf_ecg.runtime.tags import marked
from hf_ecg.taggers.tagger import Tagger


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("set", help="the labelled set (a dataset folder or a corpus file)")
    parser.add_argument("reference", nargs="?", help="the reference tagger's folder (default: none)")
    parser.add_argument("--count", type=int, default=20)
    parser.add_argument("--seed", type=int, default=46)
    parser.add_argument("--title", help="a first line, written as a '# ' comment")
    args = parser.parse_args()
    data = load_source(args.set)
    chosen = sorted(random.Random(args.seed).sample(range(len(data)), min(args.count, len(data))))
    if args.title:
        print("#", args.title)
    if args.reference is None:
        for i in chosen:
            print(i, marked(data[i].tokens, data[i].tags))
        return 0
    types = set(data.entity_types)
    predicted = Tagger.from_pretrained(args.reference).predict([data[i].tokens for i in chosen])
    for i, tags in zip(chosen, predicted, strict=True):
        tags = [tag if tag == "O" or tag[2:] in types else "O" for tag in tags]
        print(i, "SET:", marked(data[i].tokens, data[i].tags))
        print("   REF:", marked(data[i].tokens, tags))
        print("   errors:", [kind for kind, _ in label_errors(data[i].tags, tags)])
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
