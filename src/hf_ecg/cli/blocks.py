"""``hf-ecg blocks``: a labelled corpus to Q&A block splits (a DatasetDict on disk)."""

from __future__ import annotations

import argparse
import tempfile
from typing import Any

from .common import (
    CLIError,
    add_corpus_options,
    add_overwrite_option,
    add_subset_options,
    corpus_file,
    reader_options,
    repair_note,
)


def add_parser(sub: Any) -> None:
    """Register ``hf-ecg blocks``."""
    blocks = sub.add_parser(
        "blocks",
        help="turn a labelled NER corpus into Q&A block splits (a DatasetDict on disk)",
        description=(
            "Read a labelled corpus (CoNLL/TSV or JSONL), collapse each entity into a tag token, cut the "
            "template into blocks and write one Q&A sample per block as a datasets.DatasetDict "
            "(save_to_disk), plus corpus_stats.json."
        ),
    )
    blocks.add_argument("data", metavar="DATA", help="training corpus file")
    blocks.add_argument("--validation", metavar="DATA", default=None, help="validation corpus file (kept whole)")
    blocks.add_argument("--test", metavar="DATA", default=None, help="test corpus file (kept whole)")
    add_subset_options(blocks)
    add_corpus_options(blocks)
    blocks.add_argument(
        "--output",
        "-o",
        required=True,
        metavar="DIR",
        help="where to write the DatasetDict: a new or empty folder (or blocks hf_ecg wrote, with --overwrite)",
    )
    add_overwrite_option(blocks, "blocks output")
    blocks.add_argument(
        "--check",
        action="store_true",
        help="verify decompose -> recompose on every sentence first; exit non-zero at the first mismatch",
    )
    blocks.set_defaults(func=_run_blocks)


def _run_blocks(args: argparse.Namespace) -> int:
    from ..data.builder import ECGBlocksBuilder
    from ..data.outputs import BLOCKS, prepare_output
    from ..runtime.blocks import RoundTripError

    data_files = {"train": args.data}
    for split in ("validation", "test"):
        if getattr(args, split):
            data_files[split] = getattr(args, split)
    for split, path in data_files.items():
        corpus_file(path, "" if split == "train" else f"--{split}")
    # checked before the work, prepared (an earlier output removed) when the blocks are written
    output = prepare_output(args.output, BLOCKS, overwrite=args.overwrite, inputs=data_files.values(), dry_run=True)
    with tempfile.TemporaryDirectory(prefix="hf-ecg-blocks-") as cache_dir:
        builder = ECGBlocksBuilder(
            cache_dir=cache_dir,
            data_files=data_files,
            first_n=args.first_n,
            fraction=args.fraction,
            **reader_options(args),
        )
        if args.check:
            try:
                checked = builder.verify_roundtrips()
            except RoundTripError as err:
                raise CLIError(f"check failed at {err}") from None
            for split, count in checked.items():
                print(f"check: {split}: decompose -> recompose exact on all {count} sentences")
        dataset, stats = builder.save_blocks(output, overwrite=args.overwrite)
        corpora = {split: builder.corpus(split) for split in data_files}

    print(stats.summary())
    for split in data_files:
        if split != "train":
            print(f"{split}: {len(corpora[split])} sentences, {dataset[split].num_rows} blocks")
    if stats.num_repairs:
        print(repair_note(stats.num_repairs, stats.scheme, corpora["train"].repair_locations[0]))
    rows = ", ".join(f"{split} {ds.num_rows}" for split, ds in dataset.items())
    print(f"wrote {output}/ (DatasetDict: {rows} rows; datasets.load_from_disk) and {output / 'corpus_stats.json'}")
    return 0
