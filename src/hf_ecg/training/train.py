"""``train_ecg_model``: a corpus in, a trained ECG model out, in the order of TRL's scripts: check what can
be refused, build the Q&A blocks (holding out validation sentences), load the base model, derive the
:class:`~hf_ecg.ECGConfig` from the corpus, train with :class:`~hf_ecg.training.trainer.ECGTrainer` (the best
epoch kept), save; on small corpora write sentences with that generator and train again with its whole ones
(:mod:`hf_ecg.training.own_sentences`); push."""

from __future__ import annotations

import copy
import logging
import math
import os
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import datasets

from ..data.outputs import TRAINING_RECORD
from ..hub.model_card import ECGModelCardData
from ..runtime.ecg_config import ECG_CONFIG_NAME, ECGConfig
from .trainer import ECGTrainer
from .training_args import ECGTrainingArguments

__all__ = ["PLAN_LOGGER", "hold_out_sentences", "is_trial", "train_ecg_model", "training_plan"]

logger = logging.getLogger(__name__)
#: The logger of the one line that says what a training will do (:func:`training_plan`), at INFO: ``hf-ecg train``
#: prints it before training starts.
PLAN_LOGGER = logging.getLogger(__name__ + ".plan")


def hold_out_sentences(
    blocks: datasets.DatasetDict, num_sentences: int, share: float, seed: int
) -> datasets.DatasetDict:
    """Move the blocks of a seeded ``share`` of the training sentences into a ``validation`` split.

    Whole sentences move, so a held-out block never has its context's sentence in training. With
    too few sentences to spare one (``round(share * num_sentences)`` is 0 or all), nothing moves."""
    import random

    count = round(share * num_sentences)
    if not 0 < count < num_sentences:
        logger.warning("%d training sentences: too few to hold out %.0f%% for validation", num_sentences, 100 * share)
        return blocks
    held_out = set(random.Random(seed).sample(range(num_sentences), count))
    train = blocks["train"]
    in_validation = [sentence in held_out for sentence in train["sentence_id"]]
    logger.info("holding out %d of %d training sentences as validation blocks", count, num_sentences)
    return datasets.DatasetDict(
        {
            **blocks,
            "train": train.select([i for i, held in enumerate(in_validation) if not held]),
            "validation": train.select([i for i, held in enumerate(in_validation) if held]),
        }
    )


def _evaluate_and_keep_best(args: ECGTrainingArguments) -> ECGTrainingArguments:
    """With validation blocks: a copy of ``args`` that evaluates every epoch unless told otherwise, and saves at
    every evaluation to keep the checkpoint with the lowest held-out answer loss (unless saving is off)."""
    from transformers.trainer_utils import IntervalStrategy, SaveStrategy

    changes: dict[str, Any] = {}
    if args.eval_strategy == IntervalStrategy.NO:
        changes["eval_strategy"] = IntervalStrategy.EPOCH
    if not (args.save_strategy == SaveStrategy.NO or args.load_best_model_at_end):
        changes.update(
            save_strategy=SaveStrategy(IntervalStrategy(changes.get("eval_strategy", args.eval_strategy)).value),
            save_steps=args.eval_steps,
            load_best_model_at_end=True,
            metric_for_best_model="eval_loss",
            greater_is_better=False,
        )
        if args.save_total_limit is None:
            changes["save_total_limit"] = 1  # with load_best_model_at_end, the best and the latest are kept
    return replace(args, **changes) if changes else args


def _iob2_label_names(corpus: Any) -> list[str] | None:
    """The corpus's ClassLabel names when generated IOB2 tags can use them (the names hold O, B-X and I-X for
    every type), else None; an IOB1/IOBES ClassLabel cannot name IOB2 tags, so its order is not kept."""
    from ..data.dataset_format import ner_label_names

    if not corpus.label_names:
        return None
    try:
        return ner_label_names(corpus.entity_types, corpus.label_names)
    except ValueError:
        logger.warning("the corpus's label names %s are not IOB2: generated data uses sorted names", corpus.label_names)
        return None


def train_ecg_model(
    data: str | os.PathLike | Any,
    model_name: str,
    args: ECGTrainingArguments,
    *,
    validation: str | os.PathLike | Any | None = None,
    first_n: int | None = None,
    fraction: float | None = None,
    resume: bool = False,
    overwrite: bool = False,
    trust_remote_code: bool = False,
    corpus_name: str | None = None,
    license: str | None = None,
    dataset_id: str | None = None,
    callbacks: list[Any] | None = None,
    **reader_options: Any,
) -> ECGTrainer:
    """Build Q&A blocks from a corpus, fine-tune ``model_name`` on them and save into ``args.output_dir``.

    ``data`` and ``validation`` are corpus files, or ``datasets.Dataset`` objects with ``tokens`` and
    ``ner_tags`` columns; a ``ClassLabel`` dataset's label order is kept in ``ecg_config.json`` and used by
    the generated data, so that it concatenates with the training dataset.

    ``reader_options`` (``format``, ``scheme``, ``strict``, ``token_column``, ``tag_column``) tell
    :class:`~hf_ecg.data.builder.ECGBlocksBuilder` how to read the corpus. ``resume`` continues from the
    last checkpoint in ``args.output_dir`` (a fresh start if none). ``args.output_dir`` follows
    :func:`hf_ecg.data.outputs.prepare_output`: new or empty, or a model hf_ecg wrote (continued with
    ``resume``, replaced with ``overwrite``, refused otherwise); never a folder with other files, nor one
    inside an input. ``corpus_name`` names the corpus in the
    model card and the saved statistics (default: its file's or dataset's name); ``license`` and
    ``dataset_id`` (the gold corpus's Hub id) go into the card's metadata; ``callbacks`` (``TrainerCallback``
    objects) are added to the trainer's. Returns the trainer (its ``state`` holds the steps and logs).

    With ``args.own_sentences`` (by default on corpora under 500 sentences:
    :func:`~hf_ecg.hub.training_record.own_sentence_count`) it trains twice: the first generator writes sentences
    into ``args.output_dir/own-sentences``, and the model is trained again on the gold blocks and the templates of
    those that pass the rules (:mod:`hf_ecg.training.own_sentences`); the returned trainer is the second's, its card
    data's ``own_sentences`` says what was added. ``resume`` continues whichever step was stopped.

    What can be checked before training is, before anything is written: with ``args.push_to_hub`` a
    Hugging Face token and a valid repo id (``ValueError`` otherwise), and that the base model has at least
    ``args.max_length`` positions. A push that fails after training raises
    :class:`~hf_ecg.hub.push.HubUploadError` saying where the model was written and how to push it later.
    """
    from ..data.outputs import MODEL, prepare_output
    from ..data.statistics import CorpusStatistics
    from ..hub.training_record import own_sentence_count
    from ..modeling import upstream_model_id

    later = f"hf-ecg push-model --model {args.output_dir} --repo-id {args.hub_model_id or 'ORG/NAME'}"
    input_files = _check_before_training(args, data, validation, overwrite, resume, later)
    fingerprint = training_fingerprint(args, model_name, data, validation, first_n, fraction, reader_options)
    record = _training_record(args.output_dir) if resume else None  # None: a new training, or none recorded
    _check_resumed_settings(args.output_dir, record, fingerprint)
    blocks, corpus, args = _build_blocks(data, validation, args, first_n, fraction, corpus_name, reader_options)
    own_count = own_sentence_count(len(corpus), args.own_sentences, trial=is_trial(args))
    _check_not_finished(args.output_dir, record, own_count)
    PLAN_LOGGER.info("%s", training_plan(len(corpus), blocks["train"].num_rows, args, own_count))
    card_data = ECGModelCardData(
        base_model=upstream_model_id(str(model_name)),
        dataset_name=corpus.name,
        corpus_statistics=CorpusStatistics.from_corpus(corpus).to_dict(),
        first_n=first_n,
        license=license,
        dataset_id=dataset_id,
    )
    training = _Training(args, str(model_name), blocks, corpus, card_data, trust_remote_code, callbacks)
    if overwrite and not resume:
        prepare_output(args.output_dir, MODEL, overwrite=True, inputs=input_files)
    trainer = training.run(resume, own_count, fingerprint, recorded=record is not None)
    training.push(trainer, later)
    return trainer


@dataclass
class _Training:
    """What one :func:`train_ecg_model` call trains with, checked and built, and its stages: a trainer for a new
    generator or the saved one (:meth:`trainer_for`), the first training, the second on the generator's own
    sentences (:meth:`run`), the push (:meth:`push`)."""

    args: ECGTrainingArguments
    model_name: str
    blocks: datasets.DatasetDict
    corpus: Any
    card_data: ECGModelCardData  # the card of a new generator (a copy each time)
    trust_remote_code: bool
    callbacks: list[Any] | None

    def trainer_for(self, train_blocks: datasets.Dataset, *, saved: bool = False) -> ECGTrainer:
        """A trainer of a new generator (the base model, LoRA added) on ``train_blocks``; with ``saved``, one over the
        generator an earlier call trained and saved in the output folder, with its card, so that what it saves (a
        push saves first) is that generator again."""
        args = self.args
        if saved:
            import torch

            from ..modeling import load_ecg_model

            model, tokenizer, ecg_config = load_ecg_model(
                args.output_dir, trust_remote_code=self.trust_remote_code, dtype=torch.float32
            )
            card_data = ECGModelCardData.load(args.output_dir)
        else:
            model, tokenizer = _load_base_model(self.model_name, args, self.corpus.entity_types, self.trust_remote_code)
            ecg_config = ECGConfig.from_corpus(
                self.corpus,
                tokenizer,
                self.model_name,
                mention_samples=args.mention_samples,
                save_mention_bank=args.save_mention_bank,
                loss_on=args.loss_on,
                max_length=args.max_length,
                lora=args.lora,
                layout=args.layout,
                mention_layout=args.mention_layout,
                label_names=_iob2_label_names(self.corpus),
                corpus_statistics=self.card_data.corpus_statistics,
            )
            card_data = copy.deepcopy(self.card_data)  # the trainer's callback fills it in
        trainer = ECGTrainer(
            model=model,
            args=replace(args, lora=False) if saved else args,  # saved weights are merged: no adapters to warn of
            ecg_config=ecg_config,
            train_dataset=train_blocks,
            eval_dataset=self.blocks.get("validation"),
            processing_class=tokenizer,
            model_card_data=card_data,
            callbacks=self.callbacks,
        )
        if saved and card_data is not None:
            trainer.state.global_step = card_data.total_steps or 0  # the steps it was trained, as the CLI says
        return trainer

    def run(self, resume: bool, own_count: int, fingerprint: dict[str, Any], *, recorded: bool) -> ECGTrainer:
        """The first training (unless a resumed run finished it), then, with ``own_count``, the second; the training
        record written as each begins and ends. ``recorded``: a resumed run found a record to keep."""
        from .own_sentences import own_sentences_written

        args = self.args
        trainer = None
        if not (resume and own_count and _first_training_done(args.output_dir)):
            trainer = self.trainer_for(self.blocks["train"])  # the base model is checked here: nothing written before
            if args.should_save and not recorded:
                _write_training_record(args.output_dir, fingerprint, own_count, finished=False)
            _train(trainer, resume)
        if own_count:
            if not own_sentences_written(args.output_dir):
                _remove_checkpoints(args)  # the first training's: the second's alone say where to resume it
            first = [trainer] if trainer is not None else []  # held by _train_again alone, which lets it go
            trainer = None
            trainer = _train_again(
                first, self.trainer_for, self.blocks, self.corpus, own_count, args, resume, self.trust_remote_code
            )
        assert trainer is not None
        if args.should_save:
            _write_training_record(args.output_dir, fingerprint, own_count, finished=True)
        return trainer

    @staticmethod
    def push(trainer: ECGTrainer, later: str) -> None:
        """Push when asked (``push_to_hub``); a failed upload says where the model is and the command that pushes it."""
        from ..hub.push import HubUploadError

        if not trainer.push_after_training:
            return
        try:
            trainer.push_to_hub()
        except HubUploadError as error:
            raise HubUploadError(
                f"{error}; the trained model is in {trainer.args.output_dir}/: push it with `{later}`"
            ) from error


def is_trial(args: ECGTrainingArguments) -> bool:
    """Whether the user cut the training short (``max_steps``, or under one epoch): a quick try, trained once."""
    return args.max_steps > 0 or args.num_train_epochs < 1


def training_plan(num_sentences: int, num_rows: int, args: ECGTrainingArguments, own_count: int) -> str:
    """One line saying what :func:`train_ecg_model` will do and about how many optimizer steps it takes."""
    per_step = args.per_device_train_batch_size * args.gradient_accumulation_steps * max(1, args.world_size)
    if args.max_steps > 0:
        steps = f"{args.max_steps} steps (--max-steps)"
    else:
        epochs = f"{args.num_train_epochs:g} epoch{'s' * (args.num_train_epochs != 1)}"
        steps = f"about {math.ceil(num_rows / per_step * args.num_train_epochs)} steps ({epochs} of {num_rows} rows)"
    if not own_count:
        return f"training once on {num_sentences} sentences: {steps}"
    return (
        f"training twice on {num_sentences} sentences: {steps}, then it writes {own_count} sentences and trains "
        "again on the gold ones and the whole ones it wrote, which helps a small corpus "
        "(--own-sentences 0 trains once)"
    )


def _train(trainer: ECGTrainer, resume: bool) -> None:
    """Train (from the last checkpoint in the output folder with ``resume``) and save the final model."""
    from transformers.trainer_utils import get_last_checkpoint

    output_dir = trainer.args.output_dir
    checkpoint = get_last_checkpoint(output_dir) if resume and os.path.isdir(output_dir) else None
    if resume and checkpoint is None:
        logger.warning("no checkpoint in %s: starting from the beginning", output_dir)
    trainer.train(resume_from_checkpoint=checkpoint)
    trainer.save_model()


def _first_training_done(output_dir: str) -> bool:
    """Whether the first of two trainings saved its model in ``output_dir`` (the card is written by the final save
    only; the second training's saved model has one too, and resuming it trains from its last checkpoint)."""
    from ..hub.model_card import CARD_DATA_NAME

    return os.path.isfile(os.path.join(output_dir, CARD_DATA_NAME))


def _remove_checkpoints(args: ECGTrainingArguments) -> None:
    """Delete the first training's checkpoints (its best model is saved)."""
    import glob
    import shutil

    from accelerate import PartialState

    if args.should_save:
        for checkpoint in glob.glob(os.path.join(args.output_dir, "checkpoint-*")):
            shutil.rmtree(checkpoint)
    PartialState().wait_for_everyone()


def _train_again(
    first: list[ECGTrainer],
    trainer_for: Any,
    blocks: datasets.DatasetDict,
    corpus: Any,
    own_count: int,
    args: ECGTrainingArguments,
    resume: bool,
    trust_remote_code: bool,
) -> ECGTrainer:
    """The second training: ``own_count`` sentences written by the first generator (saved in the output folder),
    those that pass the rules added to the training blocks as templates, and a generator trained again from the
    base model. ``first`` holds the first training's trainer when it ran in this call (emptied here, so that its
    model and optimizer are freed before the second's are made). The first generator stays when none passes."""
    import gc

    from ..hub.model_card import ECGModelCardData
    from .own_sentences import own_sentence_blocks, write_own_sentences

    first_card = ECGModelCardData.load(args.output_dir)
    own = write_own_sentences(
        args.output_dir,
        corpus,
        own_count,
        seed=args.seed,
        progress_bar=not args.disable_tqdm,
        trust_remote_code=trust_remote_code,
    )
    if not own.corpus:
        logger.warning(
            "none of the %d sentences the generator wrote passed the rules (%s): it is not trained again",
            own.written,
            own.dropped,
        )
        # trained in an earlier call when not in memory: the saved generator, never a new untrained one
        return first.pop() if first else trainer_for(blocks["train"], saved=True)
    resume_second = resume and not first  # the first training was done before: the second may have begun
    first.clear()
    gc.collect()
    first_ids = max(blocks["train"]["sentence_id"], default=-1) + 1
    train_blocks = datasets.concatenate_datasets(
        [blocks["train"], own_sentence_blocks(own.corpus, args.layout, first_ids)]
    )
    logger.info("training again with %d of its own sentences (%d blocks in all)", len(own.corpus), len(train_blocks))
    trainer = trainer_for(train_blocks)
    trainer.model_card_data.own_sentences = {
        **own.record(),
        "blocks": len(train_blocks) - len(blocks["train"]),
        "first_best_eval_loss": first_card.best_eval_loss if first_card else None,
        "first_steps": first_card.total_steps if first_card else None,
    }
    _train(trainer, resume_second)
    return trainer


#: The training arguments that shape the weights: a run resumed with another value would mix two trainings.
_WEIGHT_SETTINGS = (
    "layout",
    "mention_layout",
    "mention_samples",
    "loss_on",
    "max_length",
    "lora",
    "lora_r",
    "lora_alpha",
    "learning_rate",
    "num_train_epochs",
    "max_steps",
    "validation_split",
    "seed",
    "per_device_train_batch_size",
    "gradient_accumulation_steps",
)


#: The corpus-reading options ``train_ecg_model`` passes on to :class:`~hf_ecg.data.builder.ECGBlocksConfig`.
_READER_OPTIONS = ("format", "scheme", "strict", "token_column", "tag_column", "encoding")


def _source_digest(source: Any) -> str | None:
    """A corpus file's content digest, or a dataset's fingerprint (``None`` for neither)."""
    import hashlib

    if source is None:
        return None
    if isinstance(source, (str, os.PathLike)):
        return hashlib.sha256(Path(source).read_bytes()).hexdigest()[:16]
    return getattr(source, "_fingerprint", None)


def training_fingerprint(
    args: ECGTrainingArguments,
    model_name: str,
    data: Any,
    validation: Any,
    first_n: int | None,
    fraction: float | None,
    reader_options: dict[str, Any],
) -> dict[str, Any]:
    """What shapes a training's weights: the data (content digests, the part of it taken, how it is read), the
    base model and :data:`_WEIGHT_SETTINGS`; ``train --resume`` continues a folder only with the same."""
    from ..data.builder import ECGBlocksConfig

    return {
        "base_model": str(model_name),
        "data": _source_digest(data),
        "validation": _source_digest(validation),
        "first_n": first_n,
        "fraction": fraction,
        # as the blocks builder reads them, its defaults filled in: a default given or left out is the same
        "reader_options": {
            **{name: getattr(ECGBlocksConfig, name) for name in _READER_OPTIONS},
            **reader_options,
        },
        **{name: getattr(args, name) for name in _WEIGHT_SETTINGS},
    }


def _training_record(output_dir: str) -> dict[str, Any] | None:
    import json

    path = Path(output_dir) / TRAINING_RECORD
    return json.loads(path.read_text(encoding="utf-8")) if path.is_file() else None


def _check_resumed_settings(output_dir: str, record: dict[str, Any] | None, fingerprint: dict[str, Any]) -> None:
    """Refuse to resume a folder whose training ``record`` says it was begun with other data, base model or
    settings (``ValueError`` naming them), before any work; a folder without a record is resumed as it is."""
    before = (record or {}).get("fingerprint")
    if before is None:
        return
    changed = sorted(key for key in fingerprint.keys() | before.keys() if fingerprint.get(key) != before.get(key))
    if changed:
        raise ValueError(
            f"{output_dir} was begun with other {', '.join(changed)}: resuming would mix two trainings; resume "
            "with what it was begun with, or overwrite=True (--overwrite) to start again"
        )


def _check_not_finished(output_dir: str, record: dict[str, Any] | None, own_count: int) -> None:
    """Refuse to resume a training its ``record`` says finished, unless a second training on its own sentences is
    now asked of a model trained once."""
    if record is None or not record.get("finished"):
        return
    if own_count > 0 and not record.get("own_sentences"):
        return
    raise ValueError(
        f"{output_dir} holds a finished training: there is nothing to resume (overwrite=True, --overwrite, "
        "trains it again)"
    )


def _write_training_record(output_dir: str, fingerprint: dict[str, Any], own_count: int, *, finished: bool) -> None:
    import json

    Path(output_dir).mkdir(parents=True, exist_ok=True)
    record = {"fingerprint": fingerprint, "own_sentences": own_count, "finished": finished}
    (Path(output_dir) / TRAINING_RECORD).write_text(json.dumps(record, indent=2) + "\n", encoding="utf-8")


def _check_before_training(
    args: ECGTrainingArguments, data: Any, validation: Any, overwrite: bool, resume: bool, later: str
) -> list[Any]:
    """What can be refused before any work: the Hub access of a push, the inputs' kinds, the output folder (an
    earlier model is continued with ``resume``, replaced with ``overwrite``, refused otherwise). The input files."""
    from ..data.outputs import MODEL, prepare_output
    from ..hub.push import check_hub_access

    if args.push_to_hub:  # before hours of training, not after
        check_hub_access(
            args.hub_repo_id, args.hub_token, hint=f"or train without push_to_hub and publish later with `{later}`"
        )
    sources = [data] if validation is None else [data, validation]
    files = {isinstance(source, (str, os.PathLike)) for source in sources}
    if len(files) > 1:
        raise ValueError("give data and validation both as files or both as datasets")
    input_files = sources if files == {True} else []
    try:
        prepare_output(args.output_dir, MODEL, overwrite=overwrite or resume, inputs=input_files, dry_run=True)
    except ValueError:
        checkpoints = sorted(Path(args.output_dir).glob("checkpoint-*"))
        if not checkpoints or (Path(args.output_dir) / ECG_CONFIG_NAME).is_file():
            raise
        raise ValueError(  # an interrupted training: say how to continue it before how to discard it
            f"{args.output_dir} holds an interrupted training ({checkpoints[-1].name}): resume=True (--resume) "
            "continues it; overwrite=True (--overwrite) starts again and discards its checkpoints"
        ) from None
    return input_files


def _build_blocks(
    data: Any,
    validation: Any,
    args: ECGTrainingArguments,
    first_n: int | None,
    fraction: float | None,
    corpus_name: str | None,
    reader_options: dict[str, Any],
) -> tuple[datasets.DatasetDict, Any, ECGTrainingArguments]:
    """The Q&A blocks (a held-out ``validation`` split when none is given), the training corpus, and ``args``
    set to evaluate every epoch and keep the best checkpoint when there are validation blocks."""
    from ..data.builder import ECGBlocksBuilder

    sources = {"train": data} if validation is None else {"train": data, "validation": validation}
    as_files = isinstance(data, (str, os.PathLike))
    inputs = {"data_files": {k: str(v) for k, v in sources.items()}} if as_files else {"corpora": sources}
    builder = ECGBlocksBuilder(
        **inputs,
        first_n=first_n,
        fraction=fraction,
        layout=args.layout,
        mention_layout=args.mention_layout,
        mention_samples=args.mention_samples,
        **reader_options,
    )
    with args.main_process_first(desc="building Q&A blocks"):
        builder.download_and_prepare()
    blocks = builder.as_dataset()
    corpus = builder.corpus("train")
    if corpus_name:
        corpus = replace(corpus, name=corpus_name)
    if "validation" not in blocks and args.validation_split > 0:
        blocks = hold_out_sentences(blocks, len(corpus), args.validation_split, args.seed)
    return blocks, corpus, _evaluate_and_keep_best(args) if "validation" in blocks else args


def _load_base_model(
    model_name: str, args: ECGTrainingArguments, entity_types: list[str], trust_remote_code: bool
) -> tuple[Any, Any]:
    """The base model, seeded, with the ECG tokens added (and LoRA adapters when ``args.lora``)."""
    import torch
    from transformers import enable_full_determinism, set_seed

    from ..modeling import add_ecg_tokens, apply_lora, load_causal_lm

    # The seed must be set before the model is built: LoRA draws its A matrices when it is added,
    # before the Trainer (which seeds only at its own start) exists.
    if args.full_determinism:
        enable_full_determinism(args.seed)
    else:
        set_seed(args.seed)
    # float32 weights whatever the checkpoint's dtype (transformers 5 keeps a bfloat16 checkpoint's): optimizer
    # steps on bfloat16 weights lose the small updates; --bf16 trains under autocast over these.
    model, tokenizer = load_causal_lm(model_name, trust_remote_code=trust_remote_code, dtype=torch.float32)
    positions = getattr(model.config, "max_position_embeddings", None) or getattr(model.config, "n_positions", None)
    if positions is not None and positions < args.max_length:
        raise ValueError(
            f"{model_name} has {positions} positions, fewer than max_length {args.max_length}: "
            f"pass --max_length {positions} (or less)"
        )
    new_token_ids = add_ecg_tokens(tokenizer, model, entity_types, mention=args.mention_samples)
    if args.lora:
        model = apply_lora(
            model,
            new_token_ids,
            r=args.lora_r,
            alpha=args.lora_alpha,
            dropout=args.lora_dropout,
            target_modules=args.lora_target_modules,
        )
    return model, tokenizer
