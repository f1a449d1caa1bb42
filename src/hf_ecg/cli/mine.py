"""``hf-ecg mine-names``: typed name lists mined from your unlabelled text with taggers trained on gold."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from ..taggers.tagger import NERConfig
from .common import (
    CLIError,
    add_config_options,
    add_seeds_option,
)
from .evaluate import NER_OPTIONS, ner_config
from .mention_options import add_dictionary_option, read_dictionary


def add_parser(sub: Any) -> None:
    """Register ``hf-ecg mine-names``."""
    mine = sub.add_parser(
        "mine-names",
        help="mine typed name lists from your unlabelled text, for --dictionary where yours is weak or missing",
        description=(
            "Train a tagger on the gold sentences (and a synthetic set, two-stage) per seed, read your text with "
            "their ensemble, and keep the entities they agree on and see often as names: OUTPUT/TYPE.txt, one "
            "name<TAB>count a line, which generate and evaluate ner take as --dictionary OUTPUT."
        ),
    )
    mine.add_argument("--gold", required=True, metavar="DATA[:N]", help="your labelled sentences")
    mine.add_argument(
        "--unlabelled",
        required=True,
        metavar="TEXT[:N|:START:STOP]",
        help="your unlabelled text: a .txt file, one sentence a line, or a corpus whose labels are never read",
    )
    mine.add_argument(
        "--synthetic",
        action="append",
        default=[],
        metavar="DATA[:N]",
        help="a synthetic set the taggers train on before gold (e.g. generate --dictionary's); repeat for several",
    )
    add_dictionary_option(mine, "a name it holds under another type is not mined")
    mine.add_argument("--output", "-o", required=True, metavar="DIR", help="the folder for TYPE.txt (new or empty)")
    mine.add_argument("--min-count", type=int, default=3, help="predicted at least this often (default 3)")
    mine.add_argument(
        "--min-share", type=float, default=0.7, help="labelled in at least this share of its places (default 0.7)"
    )
    mine.add_argument("--min-names", type=int, default=10, help="a type with fewer names gets no list (default 10)")
    add_config_options(mine.add_argument_group("the taggers (hf_ecg.NERConfig)"), NERConfig, NER_OPTIONS)
    add_seeds_option(mine, "--seeds", NERConfig().seeds, "one tagger per seed, read as an ensemble")
    mine.set_defaults(func=_run_mine_names)


def _run_mine_names(args: argparse.Namespace) -> int:
    from ..data.sources import load_source, load_synthetic, load_unlabelled_source
    from ..labelling.mining import mine_names, write_name_lists
    from ..taggers.training import train_tagger

    output = Path(args.output)
    if output.exists() and (not output.is_dir() or any(output.iterdir())):
        raise CLIError(f"--output {output} exists and is not an empty folder: give a new one")
    if args.min_count < 1 or args.min_names < 1 or not 0 <= args.min_share <= 1:
        raise CLIError("--min-count and --min-names must be at least 1, --min-share between 0 and 1")
    config = ner_config(args)
    seeds = config.seeds
    gold = load_source(args.gold)
    synthetic = load_synthetic(args.synthetic)
    try:
        text = load_unlabelled_source(args.unlabelled)
    except ValueError as error:
        raise CLIError(f"--unlabelled {error}") from None
    dictionary = read_dictionary(args.dictionary, labelled=[gold]) if args.dictionary else None
    taggers = [
        train_tagger([gold], config, seed, synthetic=synthetic, entity_types=gold.entity_types, progress_bar=True)
        for seed in seeds
    ]
    mined = mine_names(
        taggers,
        text,
        dictionary=dictionary,
        min_count=args.min_count,
        min_share=args.min_share,
        min_names=args.min_names,
    )
    if not mined:
        raise CLIError(f"no type has {args.min_names} names the taggers agree on in --unlabelled: nothing written")
    write_name_lists(output, mined)
    for label, counts in mined.items():
        new = [name for name in counts if dictionary is None or dictionary.type_of(name) is None]
        shown = ", ".join(" ".join(name) for name in new[:8])
        print(f"{output / label}.txt: {len(counts)} names, {len(new)} not in the dictionary (e.g. {shown})")
    print(f"use them with --dictionary {output} (generate, evaluate ner)")
    return 0
