"""``hf-ecg filter``: keep the generated samples the selection rules pass."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from ..data.selection_rules import DEFAULT_RULES, TAGGER_RULES
from ..data.selection_rules import RULES as RULE_CHOICES
from .common import (
    LABEL_NAMES_HELP,
    CLIError,
    add_dataset_card_options,
    add_overwrite_option,
    add_selection_options,
    dataset_card_fields,
    label_names_option,
    report_selection,
    selection_config,
)
from .mention_options import add_dictionary_option, read_dictionary


def add_parser(sub: Any) -> None:
    """Register ``hf-ecg filter``."""
    filter_ = sub.add_parser(
        "filter",
        help="keep the generated samples that read like training data and that gold taggers agree with",
        description=(
            "Select from a folder hf-ecg generate wrote: rules run in the order given, and a sample counts under "
            "the first rule that drops it; unlabel and relabel repair labels instead. The rules are in "
            "docs/guides/select-and-repair.md."
        ),
    )
    filter_.add_argument("--generated", required=True, metavar="GEN_DIR", help="folder written by hf-ecg generate")
    filter_.add_argument(
        "--gold",
        required=True,
        metavar="DATA[:N]",
        help="the gold sentences the generator was trained on ('train.tsv:45' keeps the first 45)",
    )
    filter_.add_argument("--output", "-o", required=True, metavar="DIR", help="folder for the kept samples")
    filter_.add_argument(
        "--rule",
        dest="rules",
        action="append",
        choices=RULE_CHOICES,
        default=None,
        metavar="RULE",
        help=f"a rule, repeat for several, in order ({', '.join(RULE_CHOICES)}; default: {' '.join(DEFAULT_RULES)})",
    )
    add_selection_options(filter_)
    filter_.add_argument(
        "--unlabelled",
        default=None,
        metavar="TEXT[:N|:START:STOP]",
        help="your own unlabelled text (a .txt file, one sentence per line, or a corpus whose labels are never "
        "read): the taggers are self-trained on it as well, each labelling it after training on --gold",
    )
    add_dictionary_option(filter_, "for --rule dictionary: its names left O get their type")
    filter_.add_argument("--label-names", default=None, metavar="NAMES|DATASET", help=LABEL_NAMES_HELP)
    add_dataset_card_options(filter_.add_argument_group("dataset card (OUTPUT/README.md)"))
    add_overwrite_option(filter_, "dataset")
    filter_.set_defaults(func=_run_filter)


def _run_filter(args: argparse.Namespace) -> int:
    from ..data.sources import load_source, load_unlabelled_source
    from ..selection import filter_generated

    config = selection_config(args)
    if args.max_shared_run is not None and "text-copy" not in config.rules:
        raise CLIError("--max-shared-run would do nothing: only the text-copy rule reads it (--rule text-copy)")
    if not config.needs_taggers:  # options only the taggers read would be recorded, unused
        from ..selection.config import SelectionConfig

        unused = ["--unlabelled"] if args.unlabelled and "text-copy" not in config.rules else []
        if config.teacher_folds != SelectionConfig().teacher_folds:
            unused.append("--teacher-folds")
        if unused:
            raise CLIError(
                f"{', '.join(unused)} would do nothing: only the tagger rules ({', '.join(sorted(TAGGER_RULES))}) "
                "train taggers, and the text-copy rule reads the text"
            )
    if args.dictionary and not {"dictionary", "unknown"} & set(config.rules):
        raise CLIError("--dictionary would do nothing: only the dictionary and unknown rules read it")
    unlabelled = load_unlabelled_source(args.unlabelled) if args.unlabelled else ()
    gold = load_source(args.gold)
    dictionary = None
    if args.dictionary:
        from ..data.manifest import read_manifest

        types = set(read_manifest(args.generated).entity_types or ()) | set(gold.entity_types)
        dictionary = read_dictionary(args.dictionary, labelled=[gold], types=types)
    output = filter_generated(
        args.generated,
        gold,
        args.output,
        config,
        overwrite=args.overwrite,
        label_names=label_names_option(args.label_names),
        card_fields=dataset_card_fields(args),
        unlabelled=unlabelled,
        dictionary=dictionary,
    )
    report_selection(Path(output))
    return 0
