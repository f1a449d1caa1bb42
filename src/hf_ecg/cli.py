"""The ``hf-ecg`` command: one entry point, one subcommand per step of the workflow."""

from __future__ import annotations

import argparse
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

from . import __version__
from .corpus import CorpusFormatError

__all__ = ["main"]


class CLIError(Exception):
    """An error to report in one line and exit non-zero, without a traceback."""


def _add_corpus_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--format",
        choices=("conll", "jsonl"),
        default=None,
        help="input format; default: jsonl for .jsonl/.json files, conll otherwise",
    )
    parser.add_argument(
        "--scheme",
        default=None,
        metavar="IOB2|IOB1|BIOES",
        help="tag scheme of the input; default: detected from the tags",
    )
    parser.add_argument("--token-column", type=int, default=0, help="CoNLL column of the token (default: 0)")
    parser.add_argument("--tag-column", type=int, default=-1, help="CoNLL column of the tag (default: -1, the last)")
    parser.add_argument(
        "--strict",
        action="store_true",
        help="reject an I- tag that does not continue a span instead of repairing it to B-",
    )


def _add_subset_options(parser: argparse.ArgumentParser) -> None:
    group = parser.add_mutually_exclusive_group()
    group.add_argument("--first-n", type=int, default=None, metavar="N", help="keep the first N training sentences")
    group.add_argument(
        "--fraction",
        type=float,
        default=None,
        metavar="F",
        help="keep the first F (0 < F <= 1) of the training sentences, e.g. 0.01 for the paper's 1%% setting",
    )


def _build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="hf-ecg",
        description="Entity-controlled synthetic NER data with ECG-QALM: build Q&A blocks, train, generate.",
    )
    parser.add_argument("--version", action="version", version=f"hf-ecg {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)

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
    _add_subset_options(blocks)
    _add_corpus_options(blocks)
    blocks.add_argument("--output", "-o", required=True, metavar="DIR", help="where to write the DatasetDict")
    blocks.add_argument(
        "--check",
        action="store_true",
        help="verify decompose -> recompose on every sentence first; exit non-zero at the first mismatch",
    )
    blocks.set_defaults(func=_run_blocks)
    return parser


def _run_blocks(args: argparse.Namespace) -> int:
    from .blocks import verify_roundtrip
    from .builder import ECGBlocksBuilder
    from .stats import CorpusStatistics

    data_files = {"train": args.data}
    for split in ("validation", "test"):
        if getattr(args, split):
            data_files[split] = getattr(args, split)
    for path in data_files.values():
        if not Path(path).is_file():
            raise CLIError(f"no such file: {path}")
    output = Path(args.output)
    with tempfile.TemporaryDirectory(prefix="hf-ecg-blocks-") as cache_dir:
        builder = ECGBlocksBuilder(
            cache_dir=cache_dir,
            data_files=data_files,
            format=args.format,
            scheme=args.scheme,
            token_column=args.token_column,
            tag_column=args.tag_column,
            strict=args.strict,
            first_n=args.first_n,
            fraction=args.fraction,
        )
        corpora = {split: builder.corpus(split) for split in data_files}
        if args.check:
            for split, corpus in corpora.items():
                reserved = corpus.entity_types
                for index, sentence in enumerate(corpus):
                    try:
                        verify_roundtrip(sentence.tokens, sentence.spans, reserved_types=reserved)
                    except ValueError as err:
                        raise CLIError(f"check failed at {sentence.source} ({split} sentence {index}): {err}") from None
                print(f"check: {split}: decompose -> recompose exact on all {len(corpus)} sentences")
        builder.download_and_prepare()
        dataset = builder.as_dataset()
        output.mkdir(parents=True, exist_ok=True)
        dataset.save_to_disk(str(output))
    stats = CorpusStatistics.from_corpus(corpora["train"])
    stats.save(output / "corpus_stats.json")

    print(stats.summary())
    for split in data_files:
        if split != "train":
            print(f"{split}: {len(corpora[split])} sentences, {dataset[split].num_rows} blocks")
    if stats.num_repairs:
        print(
            f"note: {stats.num_repairs} tags did not fit {stats.scheme} and were repaired, first at "
            f"{corpora['train'].repair_locations[0]} (use --strict to reject them)"
        )
    rows = ", ".join(f"{split} {ds.num_rows}" for split, ds in dataset.items())
    print(f"wrote {output}/ (DatasetDict: {rows} rows; datasets.load_from_disk) and {output / 'corpus_stats.json'}")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``hf-ecg`` with ``argv`` (default: ``sys.argv[1:]``); returns the exit code."""
    parser = _build_parser()
    args = parser.parse_args(argv)
    try:
        return args.func(args)
    except (CLIError, CorpusFormatError, FileNotFoundError, ValueError) as err:
        print(f"hf-ecg {args.command}: error: {err}", file=sys.stderr)
        return 2 if not isinstance(err, CLIError) else 1


if __name__ == "__main__":
    sys.exit(main())
