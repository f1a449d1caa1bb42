"""Another domain's labelled sentences as they are, their types mapped: the untransferred baseline of a style
transfer set.

Writes, as CoNLL (token TAB IOB2 tag), the first N sentences with a mapped entity of SOURCE, cycled as ``hf-ecg
generate --sketches SOURCE --type-map MAP -n N`` cycles them, so that gold + these and gold + the transferred set
hold the same sentences' names. A word of a type the map leaves out is written ``O`` (a CoNLL file has no unknown
label; the pairs measured here have one type). Usage:

    python dev/source_sentences.py SOURCE MAP N OUT.tsv
"""

from __future__ import annotations

import argparse
from pathlib import Path

from hf_ecg.data.sources import load_source
from hf_ecg.data.type_map import TypeMap, map_types


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("source", help="the other domain's labelled corpus (DATA[:N])")
    parser.add_argument("type_map", help="SRC=TGT[,...], as given to --type-map")
    parser.add_argument("n", type=int, help="sentences to write (the transferred set's size)")
    parser.add_argument("output", type=Path)
    args = parser.parse_args()
    sentences = [s for s in map_types(load_source(args.source), TypeMap.parse(args.type_map)) if s.spans]
    chosen = [sentences[i % len(sentences)] for i in range(args.n)]
    blocks = ["\n".join(f"{w}\t{t}" for w, t in zip(s.tokens, s.tags, strict=True)) for s in chosen]
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text("\n\n".join(blocks) + "\n", encoding="utf-8")
    print(f"wrote {len(chosen)} sentences ({len(sentences)} distinct) to {args.output}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
