"""Twenty samples of a set written from sketches, each beside the sentence its sketch came from, entities marked.

A sketch set's sample ``i`` was written around the sketch of the ``i mod n``-th sentence with an entity of the corpus
it was sketched from (``hf-ecg generate --sketches DATA``; a mixed sketch joins it to another's end), so the reader can
judge both whether it reads as a sentence and how much it repeats its source. First come counts over the whole set:
the samples whose entities are their sketch's types in order (and, with the sketches' own mentions, their source's
(type, mention) multiset), those with a marker or tag piece in their words, those that read whole and keep their
sketch's words. Usage:

    python dev/read_sketch_samples.py SET DATA [--type-map MAP] [--count 20] [--title TITLE] > OUT.txt
"""

from __future__ import annotations

import argparse

from hf_ecg.data.dataset_format import read_generated
from hf_ecg.data.sources import load_source
from hf_ecg.data.type_map import TypeMap, map_types
from hf_ecg.runtime.tags import marked, spans_to_tags


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("set", help="the folder hf-ecg generate --sketches wrote")
    parser.add_argument("data", help="the corpus it was sketched from (DATA[:N], as given to --sketches)")
    parser.add_argument("--type-map", help="SRC=TGT[,...], as given to hf-ecg generate --type-map")
    parser.add_argument("--count", type=int, default=20)
    parser.add_argument("--title", help="a first line, written as a '# ' comment")
    args = parser.parse_args()
    manifest, table = read_generated(args.set)
    data = load_source(args.data)
    if args.type_map:
        data = map_types(data, TypeMap.parse(args.type_map))
    sources = [s for s in data if s.spans]
    names = manifest.label_names
    if args.title:
        print(f"# {args.title}")
    rows = table.sort_by("id").to_pylist()
    for line in set_counts(rows, sources, names):
        print(f"# {line}")
    for row in rows[: args.count]:
        source = sources[row["id"] % len(sources)]
        if "sketch" in row:
            print(f"{row['id']} SKETCH: {row['sketch']}")
        print(f"{row['id']} SAMPLE: {marked(row['tokens'], [names[k] for k in row['ner_tags']])}")
        print(f"   SOURCE: {marked(source.tokens, spans_to_tags(source.spans, len(source.tokens)))}")
        print(f"   shared run {row['source_shared_run']}, new words {row['source_new_share']:.2f}")
    return 0


def set_counts(rows: list[dict], sources: list, names: list[str]) -> list[str]:
    """The whole set's counts, a line each."""
    from hf_ecg.runtime.sketches import Sketch
    from hf_ecg.runtime.tags import tags_to_spans

    typed = owned = leaks = 0
    for row in rows:
        spans, _ = tags_to_spans([names[k] for k in row["ner_tags"]], "IOB2")
        found = sorted((s.label, tuple(row["tokens"][s.start : s.end])) for s in spans)
        if "sketch" in row:
            typed += tuple(s.label for s in spans) == Sketch.parse(row["sketch"]).entity_types
        source = sources[row["id"] % len(sources)]
        owned += found == sorted((s.label, tuple(source.tokens[s.start : s.end])) for s in source.spans)
        leaks += bool(row.get("tag_pieces")) or any(w.startswith("<") and w.endswith(">") for w in row["tokens"])
    n = len(rows)
    lines = [f"{n} samples; {leaks} with a marker or tag piece in their words"]
    if rows and "sketch" in rows[0]:
        lines.append(f"{typed} of {n} hold their sketch's entity types in order")
    lines.append(f"{owned} of {n} hold their source sentence's (type, mention) multiset (the sketches' own mentions)")
    if rows and "whole" in rows[0]:
        lines.append(
            f"{sum(r['whole'] for r in rows)} read whole, {sum(r['keeps_sketch'] for r in rows)} keep their "
            "sketch's words"
        )
    return lines


if __name__ == "__main__":
    raise SystemExit(main())
