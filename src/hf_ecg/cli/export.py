"""``hf-ecg export``: a generated folder as CoNLL/TSV or JSONL."""

from __future__ import annotations

import argparse
import sys
from typing import Any


def add_parser(sub: Any) -> None:
    """Register ``hf-ecg export``."""
    export = sub.add_parser(
        "export",
        help="write a generated dataset as CoNLL/TSV or JSONL, for tools that read files",
        description=(
            "Write the samples of a generated folder in id order: conll (token TAB tag, in the training corpus's "
            "tag scheme) or jsonl (one {id, tokens, ner_tags, text, spans} object a line; name the file .json for "
            "tools that want it)."
        ),
    )
    export.add_argument("--data", required=True, metavar="DIR", help="the generated dataset folder")
    export.add_argument("--format", choices=("conll", "jsonl"), default="conll", help="file format (default conll)")
    export.add_argument("--output", "-o", required=True, metavar="FILE", help="the file to write")
    export.add_argument(
        "--scheme",
        default=None,
        metavar="IOB2|IOB1|BIOES",
        help="conll: the tag scheme to write (default: the generator's training corpus's, else IOB2)",
    )
    export.add_argument("--overwrite", action="store_true", help="replace FILE if it exists (refused otherwise)")
    export.set_defaults(func=_run_export)


def _run_export(args: argparse.Namespace) -> int:
    from ..data.export import export_generated
    from ..data.manifest import read_manifest
    from ..data.silver import recorded_silver

    output = export_generated(args.data, args.output, args.format, scheme=args.scheme, overwrite=args.overwrite)
    lines = sum(1 for _ in output.open(encoding="utf-8"))
    print(f"wrote {output} ({args.format}, {lines} lines)")
    if read_manifest(args.data).unchecked:
        print(
            f"{args.data} holds samples not checked against your text, which may copy it: so does {output}; keep it "
            "private, or export the checked set",
            file=sys.stderr,
        )

    silver = recorded_silver(args.data)
    if silver:  # half of the recipe: say where it stays rather than leave it out without a word
        print(
            f"the silver split ({silver['sentences']} sentences of your text, labelled by your dictionary) is not in "
            f"{output}: it stays in {args.data}/silver/ (datasets.load_dataset({str(args.data)!r}, split='silver'))"
        )
    return 0
