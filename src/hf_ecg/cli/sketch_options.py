"""``hf-ecg generate --sketches``: the options of the sketch family (GeniusAug) and its run."""

from __future__ import annotations

import argparse
from dataclasses import replace
from pathlib import Path
from typing import Any

from .common import CLIError

__all__ = ["add_sketch_options", "refuse_sketch_options", "write_from_sketches"]

#: The options that set a :class:`~hf_ecg.synthetic.sketching.SketchConfig` field: (flag, argparse dest, field).
#: Each defaults to None so that one given without --sketches can be told from one left out.
_CONFIG_OPTIONS = (
    ("--kept-share", "kept_share", "kept_share"),
    ("--candidates", "candidates", "candidates_per_sketch"),
    ("--mixup", "mixup", "mixup_share"),
)


def add_sketch_options(parser: argparse.ArgumentParser) -> None:
    """``--sketches``, ``--kept-share``, ``--candidates``, ``--mixup`` and the style transfer's ``--type-map``,
    ``--target-text`` and ``--target-vocabulary``."""
    parser.add_argument(
        "--sketches",
        default=None,
        metavar="DATA[:N]",
        help="write around sketches of this labelled corpus's sentences instead (a model trained with --layout sketch)",
    )
    parser.add_argument(
        "--kept-share",
        type=float,
        default=None,
        metavar="SHARE",
        help="with --sketches: the share of a sentence's words outside its mentions a sketch keeps (default 0.2)",
    )
    parser.add_argument(
        "--candidates",
        type=int,
        default=None,
        metavar="K",
        help="with --sketches: write K sentences for each sample's sketch and keep the one that reads best (default 1)",
    )
    parser.add_argument(
        "--mixup",
        type=float,
        default=None,
        metavar="SHARE",
        help="with --sketches: the share of samples whose sketch joins the start of one sentence's to the end of "
        "another's (default 0)",
    )
    parser.add_argument(
        "--type-map",
        default=None,
        metavar="SRC=TGT[,...]",
        help="with --sketches from another domain: rename its types to the model's; a type left out is dropped, its "
        "words never kept (default: none)",
    )
    parser.add_argument(
        "--target-text",
        default=None,
        metavar="TEXT[:N|:START:STOP]",
        help="with --sketches: your domain's text (.txt or a corpus, labels unread); each sketch's --candidates are "
        "chosen by how much they read like it (default: none)",
    )
    parser.add_argument(
        "--target-vocabulary",
        action="store_true",
        help="with --target-text: prefer the candidates whose words the text holds, before the score (default off)",
    )


def refuse_sketch_options(args: argparse.Namespace) -> None:
    """:class:`CLIError` for an option of the sketch family given without ``--sketches``, where it would do nothing."""
    for flag, given in (
        *((flag, getattr(args, dest) is not None) for flag, dest, _ in _CONFIG_OPTIONS),
        ("--type-map", args.type_map),
        ("--target-text", args.target_text),
        ("--target-vocabulary", args.target_vocabulary),
    ):
        if given:
            raise CLIError(f"{flag} would do nothing without --sketches SOURCE, the sentences it reads")


def write_from_sketches(
    args: argparse.Namespace, raw: Path, mentions: Any, decoding: Any, silver: Any, run: Any
) -> Path:
    """GeniusAug's samples around the sketches of ``--sketches`` (``generate_from_sketches``), its types renamed by
    ``--type-map`` and its candidates chosen for ``--target-text``; the options that ask ECG-QALM for entity sequences
    are refused."""
    from ..data.sources import load_source, load_unlabelled_source
    from ..data.type_map import TypeMap, map_types
    from ..synthetic.genius import generate_from_sketches
    from ..synthetic.sketching import SketchConfig
    from ..synthetic.transfer import TargetDomain

    for flag, given in (("--entities", args.entities), ("--balance", args.balance), ("--corpus", args.corpus)):
        if given:
            raise CLIError(f"{flag} asks for entity sequences: --sketches writes the sketches' own")
    if args.target_vocabulary and args.target_text is None:
        raise CLIError("--target-vocabulary needs --target-text, the text whose words are preferred")
    config = SketchConfig()
    for flag, dest, field in _CONFIG_OPTIONS:
        value = getattr(args, dest)
        if value is None:  # not given: SketchConfig's default
            continue
        try:
            config = replace(config, **{field: value})
        except ValueError as err:
            raise CLIError(f"{flag}: {err}") from None
    sketches = load_source(args.sketches)
    if args.type_map is not None:
        try:
            sketches = map_types(sketches, TypeMap.parse(args.type_map))
        except ValueError as err:
            raise CLIError(f"--type-map {args.type_map}: {err}") from None
    target = None
    if args.target_text is not None:
        target = TargetDomain(
            load_unlabelled_source(args.target_text), args.target_text, vocabulary_first=args.target_vocabulary
        )
    return generate_from_sketches(
        args.model,
        raw,
        args.num_samples * args.over_generate,
        sketches=sketches,
        target=target,
        config=config,
        mentions=mentions,
        seed=args.seed,
        decoding=decoding,
        run=run,
        silver=silver,
    )
