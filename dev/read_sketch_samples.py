"""Twenty samples of a set written from sketches, each beside the sentence its sketch came from, entities marked.

A sketch set's sample ``i`` was written around the sketch of the ``i mod n``-th sentence with an entity of the corpus
it was sketched from (``hf-ecg generate --sketches DATA``), so the reader can judge both whether it reads as a sentence
and how much it repeats its source. Usage:

    python dev/read_sketch_samples.py SET DATA [--count 20] [--title TITLE] > OUT.txt
"""

from __future__ import annotations

import argparse

from hf_ecg.data.dataset_format import read_generated
from hf_ecg.data.sources import load_source
from hf_ecg.runtime.tags import marked, spans_to_tags


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("set", help="the folder hf-ecg generate --sketches wrote")
    parser.add_argument("data", help="the corpus it was sketched from (DATA[:N], as given to --sketches)")
    parser.add_argument("--count", type=int, default=20)
    parser.add_argument("--title", help="a first line, written as a '# ' comment")
    args = parser.parse_args()
    manifest, table = read_generated(args.set)
    sources = [s for s in load_source(args.data) if s.spans]
    names = manifest.label_names
    if args.title:
        print(f"# {args.title}")
    for row in table.sort_by("id").slice(0, args.count).to_pylist():
        source = sources[row["id"] % len(sources)]
        print(f"{row['id']} SAMPLE: {marked(row['tokens'], [names[k] for k in row['ner_tags']])}")
        print(f"   SOURCE: {marked(source.tokens, spans_to_tags(source.spans, len(source.tokens)))}")
        print(f"   shared run {row['source_shared_run']}, new words {row['source_new_share']:.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
