"""``hf-ecg push-dataset`` and ``push-model``: publish with their cards."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from ..runtime.files import read_json
from .common import (
    CLIError,
    add_card_metadata_options,
)


def add_parser(sub: Any) -> None:
    """Register ``hf-ecg push``."""
    hub_epilog = (
        "The token comes from HF_TOKEN or `hf auth login` and is never printed. With --local-dir nothing is "
        "uploaded and no token is needed."
    )
    push_dataset = sub.add_parser(
        "push-dataset",
        help="publish a generated dataset with its dataset card to the Hub (or write the folder with --local-dir)",
        description=(
            "Upload a folder hf-ecg generate wrote with a dataset card (metadata, how the data was made, its "
            "entity distribution, quality, intended use and limits); it loads with "
            "datasets.load_dataset(REPO_ID)."
        ),
        epilog=hub_epilog,
    )
    push_dataset.add_argument("--data", required=True, metavar="GEN_DIR", help="folder written by hf-ecg generate")
    add_card_metadata_options(push_dataset, language="en")
    push_dataset.add_argument("--pretty-name", default=None, help="title of the card")
    push_dataset.add_argument(
        "--generator",
        default=None,
        metavar="ORG/NAME",
        help="Hub id the generator model is published under, to name in the card (default: the path it was "
        "generated with)",
    )
    push_dataset.add_argument(
        "--quality", default=None, metavar="FILE.json", help="quality metrics to show in the card ({name: value})"
    )
    push_dataset.add_argument(
        "--silver",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="publish (--silver) or leave out (--no-silver) the silver split, your own text labelled by your "
        "dictionary; a set that has one is refused until you say which",
    )
    _add_push_options(push_dataset)
    push_dataset.set_defaults(func=_run_push_dataset)

    push_model = sub.add_parser(
        "push-model",
        help="publish a trained model with its pipeline code and model card to the Hub (or --local-dir)",
        description=(
            "Upload a model folder written by `hf-ecg train`, with the pipeline code (so that "
            "pipeline(model=REPO_ID, trust_remote_code=True) works without hf_ecg installed) and the model card "
            "rendered for REPO_ID."
        ),
        epilog=hub_epilog,
    )
    push_model.add_argument("--model", required=True, metavar="MODEL_DIR", help="folder written by hf-ecg train")
    push_model.add_argument(
        "--drop-mention-bank",
        action="store_true",
        help="leave out the mention bank (real mentions of the training corpus) that ecg_config.json may carry",
    )
    push_model.add_argument(
        "--trust-remote-code", action="store_true", help="allow custom model code when loading (off by default)"
    )
    push_model.add_argument(
        "--ner-report",
        default=None,
        metavar="NER_JSON",
        help="the report of `hf-ecg evaluate ner -o NER_JSON` for a tagger trained with this model's data: its "
        "scores (micro and per type) go into the card and its model-index",
    )
    push_model.add_argument(
        "--dataset-id",
        default=None,
        metavar="ORG/NAME",
        help="Hub id of the gold corpus the model learned from, for the card's datasets metadata (and the source "
        "of the datasets it generates, in their cards)",
    )
    add_card_metadata_options(push_model)
    _add_push_options(push_model)
    push_model.set_defaults(func=_run_push_model)


def _add_push_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--repo-id", required=True, metavar="ORG/NAME", help="the Hub repository")
    parser.add_argument("--private", action="store_true", help="create the repository private")
    parser.add_argument(
        "--local-dir",
        default=None,
        metavar="DIR",
        help="write exactly the folder that would be uploaded to DIR and touch no network",
    )
    parser.add_argument("--overwrite", action="store_true", help="replace the contents of a non-empty --local-dir")


def _report_push(args: argparse.Namespace, where: str, kind: str) -> None:
    if args.local_dir is not None:
        print(f"wrote the {kind} repository for {args.repo_id} to {where}/ (nothing uploaded)")
    else:
        print(f"uploaded the {kind} to {where}")


def _run_push_dataset(args: argparse.Namespace) -> int:
    from ..data.dataset_format import read_generated
    from ..data.silver import has_silver
    from ..hub.push import push_dataset

    quality = None
    if args.quality is not None:
        if not Path(args.quality).is_file():
            raise CLIError(f"no such file: {args.quality}")
        quality = read_json(args.quality, "the JSON of hf-ecg evaluate quality")
        if not isinstance(quality, dict):
            raise CLIError(f"{args.quality} must hold a JSON object of metric names to values")
    read_generated(args.data, ["id"])  # an unfinished folder is refused as such, before its silver split is asked
    if args.silver and has_silver(args.data):  # said before anything leaves
        print(f"the silver split of {args.data} (your own text, labelled) goes with the set", file=sys.stderr)
    where = push_dataset(
        args.data,
        args.repo_id,
        private=args.private,
        local_dir=args.local_dir,
        overwrite=args.overwrite,
        license=args.license,
        language=args.language,
        pretty_name=args.pretty_name,
        quality=quality,
        silver=args.silver,
        **({"generator": args.generator} if args.generator else {}),
    )
    _report_push(args, where, "dataset")
    if args.local_dir is not None:
        print(f"load it with: datasets.load_dataset({where!r}, split='train')")
    return 0


def _run_push_model(args: argparse.Namespace) -> int:
    from ..hub.push import push_model

    where = push_model(
        args.model,
        args.repo_id,
        private=args.private,
        local_dir=args.local_dir,
        overwrite=args.overwrite,
        drop_mention_bank=args.drop_mention_bank,
        trust_remote_code=args.trust_remote_code,
        ner_report=args.ner_report,
        license=args.license,
        language=args.language,
        dataset_id=args.dataset_id,
    )
    _report_push(args, where, "model")
    if args.local_dir is not None:
        print(f"serve it with: pipeline(model={where!r}, trust_remote_code=True)")
    return 0
