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
from typing import TYPE_CHECKING, Any

import datasets

from ..hub.model_card import ECGModelCardData, ModelCardFields
from ..runtime.ecg_config import ECGConfig
from ..runtime.layout import layout_named
from .sketch_rows import asked_with_sketches
from .trainer import ECGTrainer
from .training_args import ECGTrainingArguments

if TYPE_CHECKING:
    from .text_sentences import TextTemplates

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
    resume: bool = False,
    overwrite: bool = False,
    trust_remote_code: bool = False,
    corpus_name: str | None = None,
    card: ModelCardFields | None = None,
    callbacks: list[Any] | None = None,
    text: TextTemplates | None = None,
    **reader_options: Any,
) -> ECGTrainer:
    """Build Q&A blocks from a corpus, fine-tune ``model_name`` on them and save into ``args.output_dir``.

    ``data`` and ``validation`` are corpus files, or ``datasets.Dataset`` objects with ``tokens`` and
    ``ner_tags`` columns; a ``ClassLabel`` dataset's label order is kept in ``ecg_config.json`` and used by
    the generated data, so that it concatenates with the training dataset.

    ``reader_options`` (``format``, ``scheme``, ``strict``, ``token_column``, ``tag_column``, and ``first_n`` or
    ``fraction``: the first sentences kept) tell :class:`~hf_ecg.data.builder.ECGBlocksBuilder` how to read the
    corpus. ``resume`` continues from the last checkpoint in ``args.output_dir`` (a fresh start if none).
    ``args.output_dir`` follows :func:`hf_ecg.data.outputs.prepare_output`: new or empty, or a model hf_ecg wrote
    (continued with ``resume``, replaced with ``overwrite``, refused otherwise); never a folder with other files, nor
    one inside an input. ``corpus_name`` names the corpus in the model card and the saved statistics (default: its
    file's or dataset's name); ``card`` (:class:`~hf_ecg.hub.model_card.ModelCardFields`: a license, the gold
    corpus's Hub id) goes into the card's metadata; ``callbacks`` (``TrainerCallback`` objects) are added to the
    trainer's. Returns the trainer (its ``state`` holds the steps and logs).

    With ``args.own_sentences`` (by default on corpora under 500 sentences:
    :func:`~hf_ecg.hub.training_record.own_sentence_count`) it trains twice: the first generator writes sentences
    into ``args.output_dir/own-sentences``, and the model is trained again on the gold blocks and the templates of
    those that pass the rules (:mod:`hf_ecg.training.own_sentences`); the returned trainer is the second's, its card
    data's ``own_sentences`` says what was added. ``resume`` continues whichever step was stopped.

    With ``text`` (:class:`~hf_ecg.training.text_sentences.TextTemplates`: the user's tokenized sentences and a
    dictionary), sentences of the text become templates too (:mod:`hf_ecg.training.text_sentences`), in the own
    sentences' place unless ``args.own_sentences`` is given. ``args.layout="sketch"`` trains a sketch generator
    (:mod:`hf_ecg.training.sketch_rows`), without own sentences unless asked.

    What can be checked before training is, before anything is written: with ``args.push_to_hub`` a
    Hugging Face token and a valid repo id (``ValueError`` otherwise), and that the base model has at least
    ``args.max_length`` positions. A push that fails after training raises
    :class:`~hf_ecg.hub.push.HubUploadError` saying where the model was written and how to push it later.
    """
    from ..data.outputs import MODEL, prepare_output
    from ..hub.training_record import own_sentence_count
    from .resume import (
        check_before_training,
        check_not_finished,
        check_resumed_settings,
        read_training_record,
        training_fingerprint,
    )
    from .text_sentences import add_text_templates, text_fingerprint

    later = f"hf-ecg push-model --model {args.output_dir} --repo-id {args.hub_model_id or 'ORG/NAME'}"
    input_files = check_before_training(args, data, validation, overwrite, resume, later)
    first_n, fraction = reader_options.pop("first_n", None), reader_options.pop("fraction", None)
    fingerprint = training_fingerprint(args, model_name, data, validation, first_n, fraction, reader_options)
    fingerprint.update(text_fingerprint(text, args.text_sentences))
    record = read_training_record(args.output_dir) if resume else None  # None: a new training, or none recorded
    check_resumed_settings(args.output_dir, record, fingerprint)
    blocks, corpus, args = _build_blocks(data, validation, args, first_n, fraction, corpus_name, reader_options)
    blocks, text_record = add_text_templates(blocks, corpus, text, args, plan=PLAN_LOGGER)
    own_count = own_sentence_count(
        len(corpus), args.own_sentences_asked(with_text=bool(text_record)), trial=is_trial(args)
    )
    check_not_finished(args.output_dir, record, own_count)
    plan = training_plan(len(corpus), blocks["train"].num_rows, args, own_count, (text_record or {}).get("kept", 0))
    PLAN_LOGGER.info("%s", plan)
    card_data = _card_data(model_name, corpus, first_n, card or ModelCardFields(), text_record)
    training = _Training(args, str(model_name), blocks, corpus, card_data, trust_remote_code, callbacks)
    if overwrite and not resume:
        prepare_output(args.output_dir, MODEL, overwrite=True, inputs=input_files)
    trainer = training.run(resume, own_count, fingerprint, recorded=record is not None)
    training.push(trainer, later)
    return trainer


def _card_data(
    model_name: str,
    corpus: Any,
    first_n: int | None,
    card: ModelCardFields,
    text_sentences: dict[str, Any] | None,
) -> ECGModelCardData:
    """The card data of a new generator of ``corpus`` (its statistics), before training fills it in."""
    from ..data.statistics import CorpusStatistics
    from ..modeling import upstream_model_id

    return ECGModelCardData(
        base_model=upstream_model_id(str(model_name)),
        dataset_name=corpus.name,
        corpus_statistics=CorpusStatistics.from_corpus(corpus).to_dict(),
        first_n=first_n,
        license=card.license,
        dataset_id=card.dataset_id,
        text_sentences=text_sentences,
    )


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
        from .own_sentences import own_sentences_written, train_on_own_sentences
        from .resume import first_training_done, remove_checkpoints, train_and_save, write_training_record

        args = self.args
        trainer = None
        if not (resume and own_count and first_training_done(args.output_dir)):
            trainer = self.trainer_for(self.blocks["train"])  # the base model is checked here: nothing written before
            if args.should_save and not recorded:
                write_training_record(args.output_dir, fingerprint, own_count, finished=False)
            train_and_save(trainer, resume)
        if own_count:
            if not own_sentences_written(args.output_dir):
                remove_checkpoints(args)  # the first training's: the second's alone say where to resume it
            first = [trainer] if trainer is not None else []  # held by train_on_own_sentences alone, which lets it go
            trainer = None
            trainer = train_on_own_sentences(
                first, self.trainer_for, self.blocks, self.corpus, own_count, args, resume, self.trust_remote_code
            )
        assert trainer is not None
        if args.should_save:
            write_training_record(args.output_dir, fingerprint, own_count, finished=True)
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


def training_plan(
    num_sentences: int, num_rows: int, args: ECGTrainingArguments, own_count: int, text_count: int = 0
) -> str:
    """One line saying what :func:`train_ecg_model` will do and about how many optimizer steps it takes
    (``text_count``: sentences of the user's text added as templates)."""
    per_step = args.per_device_train_batch_size * args.gradient_accumulation_steps * max(1, args.world_size)
    if args.max_steps > 0:
        steps = f"{args.max_steps} steps (--max-steps)"
    else:
        epochs = f"{args.num_train_epochs:g} epoch{'s' * (args.num_train_epochs != 1)}"
        steps = f"about {math.ceil(num_rows / per_step * args.num_train_epochs)} steps ({epochs} of {num_rows} rows)"
    sentences = f"{num_sentences} sentences" + (f" and {text_count} of your text's" if text_count else "")
    if not own_count:
        return f"training once on {sentences}: {steps}"
    return (
        f"training twice on {sentences}: {steps}, then it writes {own_count} sentences and trains "
        "again on the gold ones and the whole ones it wrote, which helps a small corpus "
        "(--own-sentences 0 trains once)"
    )


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
    blocks = asked_with_sketches(builder.as_dataset(), builder, args)  # a sketch layout's questions
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
    sketch = layout_named(args.layout).sketch
    new_token_ids = add_ecg_tokens(tokenizer, model, entity_types, mention=args.mention_samples, sketch=sketch)
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
