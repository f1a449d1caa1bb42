"""``hf-ecg generate --sketches``: the options of the sketch family (GeniusAug) and its run."""

from __future__ import annotations

import argparse
from dataclasses import replace
from pathlib import Path
from typing import Any

from .common import CLIError

__all__ = ["add_sketch_options", "write_from_sketches"]


def add_sketch_options(parser: argparse.ArgumentParser) -> None:
    """``--sketches``, ``--kept-share``, ``--candidates`` and ``--mixup``."""
    parser.add_argument(
        "--sketches",
        default=None,
        metavar="DATA[:N]",
        help="write around sketches of this labelled corpus's sentences instead (a model trained with --layout sketch)",
    )
    parser.add_argument(
        "--kept-share",
        type=float,
        default=0.2,
        metavar="SHARE",
        help="with --sketches: the share of a sentence's words outside its mentions a sketch keeps (default 0.2)",
    )
    parser.add_argument(
        "--candidates",
        type=int,
        default=1,
        metavar="K",
        help="with --sketches: write K sentences for each sample's sketch and keep the one that reads best (default 1)",
    )
    parser.add_argument(
        "--mixup",
        type=float,
        default=0.0,
        metavar="SHARE",
        help="with --sketches: the share of samples whose sketch joins the start of one sentence's to the end of "
        "another's (default 0)",
    )


def write_from_sketches(
    args: argparse.Namespace, raw: Path, mentions: Any, decoding: Any, silver: Any, run: Any
) -> Path:
    """GeniusAug's samples around the sketches of ``--sketches`` (``generate_from_sketches``); the options that ask
    ECG-QALM for entity sequences are refused."""
    from ..data.sources import load_source
    from ..synthetic.genius import generate_from_sketches
    from ..synthetic.sketching import SketchConfig

    for flag, given in (("--entities", args.entities), ("--balance", args.balance), ("--corpus", args.corpus)):
        if given:
            raise CLIError(f"{flag} asks for entity sequences: --sketches writes the sketches' own")
    try:
        config = SketchConfig(kept_share=args.kept_share)
    except ValueError as err:
        raise CLIError(f"--kept-share: {err}") from None
    for flag, field, value in (
        ("--candidates", "candidates_per_sketch", args.candidates),
        ("--mixup", "mixup_share", args.mixup),
    ):
        try:
            config = replace(config, **{field: value})
        except ValueError as err:
            raise CLIError(f"{flag}: {err}") from None
    return generate_from_sketches(
        args.model,
        raw,
        args.num_samples * args.over_generate,
        sketches=load_source(args.sketches),
        config=config,
        mentions=mentions,
        seed=args.seed,
        decoding=decoding,
        run=run,
        silver=silver,
    )
