"""Fine-tune a causal LM on Q&A blocks: ``ECGTrainer`` (its arguments: :mod:`hf_ecg.training.training_args`).

The trainer takes block splits (columns ``context``, ``question``, ``answer``, as written by
:class:`~hf_ecg.data.builder.ECGBlocksBuilder`), tokenizes each segment separately and
concatenates the ids behind the segment tokens (:mod:`hf_ecg.runtime.layout`), so boundaries are exact::

    <|context|> context ids <|question|> tag id <|answer|> answer ids

The context is truncated from the left when the sample does not fit ``max_length``; only the
answer carries loss unless ``loss_on="all"`` (the paper's whole-sequence loss).
"""

from __future__ import annotations

import copy
import logging
import os
import warnings
from dataclasses import replace
from typing import Any

import datasets
from transformers import DataCollatorForSeq2Seq, Trainer, TrainerCallback, TrainingArguments

from ..hub.model_card import ECGModelCardData
from ..runtime.blocks import SEGMENT_TOKENS
from ..runtime.ecg_config import ECGConfig
from ..runtime.layout import SegmentIds, training_sample
from .training_args import ECGTrainingArguments

__all__ = ["ECGModelCardCallback", "ECGTrainer", "ECGTrainingArguments", "encode_blocks", "hold_out_sentences",
           "train_ecg_model"]  # fmt: skip

logger = logging.getLogger(__name__)

REQUIRED_COLUMNS = ("context", "question", "answer")


def encode_blocks(
    batch: dict[str, list[str]], tokenizer: Any, max_length: int, loss_on: str = "answer"
) -> dict[str, list[list[int]]]:
    """Tokenize a batch of Q&A rows into ``input_ids`` and ``labels`` (``-100`` outside the answer
    unless ``loss_on == "all"``). Segments are tokenized separately and joined behind their
    segment tokens; the context is cut from the left to fit ``max_length`` (and an answer that
    alone does not fit loses its beginning: its end holds the tag)."""
    segments = SegmentIds.of(tokenizer)

    def ids(texts: list[str]) -> list[list[int]]:
        return tokenizer(texts, add_special_tokens=False)["input_ids"]

    input_ids, labels = [], []
    for context, question, answer in zip(
        ids(batch["context"]), ids(batch["question"]), ids(batch["answer"]), strict=True
    ):
        sample, prompt_length = training_sample(segments, context, question, answer, max_length=max_length)
        input_ids.append(sample)
        labels.append(sample.copy() if loss_on == "all" else [-100] * prompt_length + sample[prompt_length:])
    return {"input_ids": input_ids, "labels": labels}


class ECGModelCardCallback(TrainerCallback):
    """Records hyperparameters, losses and the checkpoint kept into the trainer's card data."""

    def __init__(self, trainer: ECGTrainer) -> None:
        self.trainer = trainer

    def on_train_begin(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
        from dataclasses import fields as dataclass_fields

        from transformers.modelcard import extract_hyperparameters_from_trainer

        # transformers' own list (as its Trainer cards have it), then every field ECG-QALM adds to it
        inherited = {f.name for f in dataclass_fields(TrainingArguments)}
        added = {f.name: getattr(args, f.name) for f in dataclass_fields(args) if f.name not in inherited}
        card = self.trainer.model_card_data
        card.hyperparameters = {**extract_hyperparameters_from_trainer(self.trainer), **added}

    def on_log(self, args: Any, state: Any, control: Any, logs: dict[str, float] | None = None, **kwargs: Any) -> None:
        losses = {k: v for k, v in (logs or {}).items() if k in ("loss", "eval_loss")}
        if not losses:
            return
        rows = self.trainer.model_card_data.training_logs
        if not rows or rows[-1]["step"] != state.global_step:  # training and eval logs of a step share a row
            rows.append({"step": state.global_step, "epoch": round(state.epoch or 0.0, 2)})
        rows[-1].update(losses)

    def on_train_end(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
        card = self.trainer.model_card_data
        card.total_steps = state.global_step
        if args.load_best_model_at_end and state.best_model_checkpoint:
            card.best_step = int(state.best_model_checkpoint.rstrip("/").rsplit("-", 1)[-1])
            card.best_eval_loss = state.best_metric


class ECGTrainer(Trainer):
    """A :class:`~transformers.Trainer` for Q&A block splits.

    Checks the dataset columns, tokenizes them (:func:`encode_blocks`), pads with
    :class:`~transformers.DataCollatorForSeq2Seq` (labels padded with ``-100``), and on every save
    writes ``ecg_config.json`` and a model card beside the weights. With ``args.lora`` and
    ``args.merge_lora``, the final :meth:`save_model` writes merged weights.

    ``args.push_to_hub`` does not push checkpoints during training: a model is only usable with its
    merged weights, ``ecg_config.json``, the pipeline code and its card, so :meth:`push_to_hub` pushes
    what ``hf-ecg push-model`` pushes (:func:`hf_ecg.hub.push_model`) to ``args.hub_model_id``, and
    :func:`train_ecg_model` calls it once training is done.
    """

    def __init__(
        self,
        model: Any,
        args: ECGTrainingArguments,
        ecg_config: ECGConfig,
        train_dataset: datasets.Dataset | None = None,
        eval_dataset: datasets.Dataset | None = None,
        processing_class: Any = None,
        model_card_data: ECGModelCardData | None = None,
        **kwargs: Any,
    ) -> None:
        if not isinstance(args, ECGTrainingArguments):
            raise TypeError(f"ECGTrainer needs ECGTrainingArguments, got {type(args).__name__}")
        if processing_class is None:
            raise ValueError("ECGTrainer needs the tokenizer as processing_class")
        missing = [t for t in SEGMENT_TOKENS if t not in processing_class.get_vocab()]
        if missing:
            raise ValueError(f"the tokenizer lacks the ECG tokens {missing}: call hf_ecg.add_ecg_tokens first")
        if args.lora and not hasattr(model, "peft_config"):
            logger.warning(
                "args.lora is true (the default recipe) but the model has no LoRA adapters: every weight trains at "
                "learning rate %g. Wrap it with hf_ecg.modeling.apply_lora, or pass lora=False (and a learning rate "
                "for full fine-tuning, 5e-4 by default).",
                args.learning_rate,
            )
        self.ecg_config = ecg_config
        #: The user's push_to_hub: honoured by push_to_hub() after training, not by the base Trainer's
        #: checkpoint pushes (unmerged weights, no ECG files, a generic card). A copy of the arguments says
        #: so to the base Trainer; the caller's object is left as it was given (as SpanMarker's trainer does).
        self.push_after_training = bool(args.push_to_hub)
        args = replace(args, push_to_hub=False)
        self.model_card_data = model_card_data or ECGModelCardData(base_model=ecg_config.base_model)
        self.model_card_data.entity_types = list(ecg_config.entity_types)
        train_dataset = self._encode(train_dataset, processing_class, args, "train")
        if isinstance(eval_dataset, dict):
            eval_dataset = {k: self._encode(v, processing_class, args, k) for k, v in eval_dataset.items()}
        else:
            eval_dataset = self._encode(eval_dataset, processing_class, args, "eval")
        kwargs.setdefault(
            "data_collator", DataCollatorForSeq2Seq(processing_class, label_pad_token_id=-100, pad_to_multiple_of=8)
        )
        callbacks = [*(kwargs.pop("callbacks", None) or []), ECGModelCardCallback(self)]
        super().__init__(
            model=model,
            args=args,
            train_dataset=train_dataset,
            eval_dataset=eval_dataset,
            processing_class=processing_class,
            callbacks=callbacks,
            **kwargs,
        )

    @staticmethod
    def _encode(
        dataset: datasets.Dataset | None, tokenizer: Any, args: ECGTrainingArguments, split: str
    ) -> datasets.Dataset | None:
        if dataset is None or "input_ids" in dataset.column_names:
            return dataset
        missing = [c for c in REQUIRED_COLUMNS if c not in dataset.column_names]
        if missing:
            raise ValueError(
                f"the {split} dataset lacks column(s) {missing}; it has {dataset.column_names}. "
                "Build Q&A blocks with hf_ecg.ECGBlocksBuilder or `hf-ecg blocks`."
            )
        return dataset.map(
            encode_blocks,
            batched=True,
            remove_columns=dataset.column_names,
            fn_kwargs={"tokenizer": tokenizer, "max_length": args.max_length, "loss_on": args.loss_on},
            desc=f"Tokenizing {split} blocks",
        )

    def save_model(self, output_dir: str | None = None, _internal_call: bool = False) -> None:
        """Save weights (merged when LoRA is merged on save), tokenizer, ``ecg_config.json`` and the card."""
        output_dir = output_dir or self.args.output_dir
        model = self.accelerator.unwrap_model(self.model)
        if not _internal_call and self.args.lora and self.args.merge_lora and hasattr(model, "merge_and_unload"):
            if self.args.should_save:
                merged = copy.deepcopy(model).merge_and_unload()
                merged.save_pretrained(output_dir)
                self.processing_class.save_pretrained(output_dir)
        else:
            super().save_model(output_dir, _internal_call=_internal_call)
        if self.args.should_save:
            self._write_ecg_files(output_dir)

    def _save(self, output_dir: str | None = None, state_dict: dict | None = None) -> None:
        # We resize the embeddings (the ECG tokens), so peft saves them with every LoRA checkpoint, as it should;
        # its warning that it does so came once per epoch.
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", message="Setting `save_embedding_layers` to `True`", category=UserWarning)
            super()._save(output_dir, state_dict)

    def create_model_card(self, **kwargs: Any) -> None:
        """Write this model's card (:class:`~hf_ecg.hub.model_card.ECGModelCardData`) as ``README.md`` in the
        output folder, in place of the Trainer's generic one; the keyword arguments are the Trainer's and unused."""
        if self.args.should_save:
            self._write_ecg_files(self.args.output_dir)

    def push_to_hub(  # type: ignore[override]
        self,
        commit_message: str | None = None,
        blocking: bool = True,
        token: str | None = None,
        revision: str | None = None,
        private: bool | None = None,
        *,
        local_dir: str | os.PathLike | None = None,
        **kwargs: Any,
    ) -> str | None:
        """Save the final model, then push what ``hf-ecg push-model`` pushes (merged weights, tokenizer,
        ``ecg_config.json``, the pipeline code, the card) to ``args.hub_model_id`` (default: the output
        folder's name). ``local_dir`` writes that folder instead of uploading. Returns the repo URL or
        ``local_dir`` (None on processes that do not save)."""
        from ..hub.push import push_model

        if revision is not None:
            raise ValueError("pushing to a revision is not supported: push-model writes the main branch")
        self.save_model()
        if not self.args.should_save:
            return None
        private = self.args.hub_private_repo if private is None else private
        return push_model(self.args.output_dir, self.args.hub_repo_id, private=bool(private), local_dir=local_dir,
                          token=token or self.args.hub_token, overwrite=True)  # fmt: skip

    def _write_ecg_files(self, output_dir: str) -> None:
        os.makedirs(output_dir, exist_ok=True)
        self.ecg_config.save(output_dir)
        self.model_card_data.save(output_dir)
        self.model_card_data.to_model_card().save(os.path.join(output_dir, "README.md"))


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


def mention_limits(corpus: Any, tokenizer: Any) -> dict[str, Any]:
    """The ``ecg_config.json`` fields of a model trained with mention samples: the slot marker, and the longest
    training mention per type in words and overall in tokens (what the mention writer may write)."""
    from ..runtime.blocks import MENTION_TOKEN

    words: dict[str, int] = {}
    tokens = 1
    for sentence in corpus:
        for span in sentence.spans:
            mention = sentence.tokens[span.start : span.end]
            words[span.label] = max(words.get(span.label, 0), len(mention))
            tokens = max(tokens, len(tokenizer(" ".join(mention), add_special_tokens=False)["input_ids"]))
    return {"mention_token": MENTION_TOKEN, "mention_max_words": dict(sorted(words.items())),
            "mention_max_tokens": tokens}  # fmt: skip


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

    What can be checked before training is, before anything is written: with ``args.push_to_hub`` a
    Hugging Face token and a valid repo id (``ValueError`` otherwise), and that the base model has at least
    ``args.max_length`` positions. A push that fails after training raises
    :class:`~hf_ecg.hub.push.HubUploadError` saying where the model was written and how to push it later.
    """
    from transformers import enable_full_determinism, set_seed
    from transformers.trainer_utils import get_last_checkpoint

    from ..data.builder import ECGBlocksBuilder
    from ..data.outputs import MODEL, prepare_output
    from ..data.statistics import CorpusStatistics
    from ..hub.push import HubUploadError, check_hub_access
    from ..modeling import add_ecg_tokens, apply_lora, load_causal_lm, upstream_model_id
    from ..runtime.mentions import MentionBank
    from ..runtime.tag_pieces import tag_piece_exceptions, tag_piece_forms, vocabulary_words
    from ..runtime.words import sentence_break_shares, sentence_endings, unended_share, word_exceptions

    later = f"hf-ecg push-model --model {args.output_dir} --repo-id {args.hub_model_id or 'ORG/NAME'}"
    if args.push_to_hub:  # before hours of training, not after
        check_hub_access(
            args.hub_repo_id, args.hub_token, hint=f"or train without push_to_hub and publish later with `{later}`"
        )
    sources = {"train": data} if validation is None else {"train": data, "validation": validation}
    files = {isinstance(source, (str, os.PathLike)) for source in sources.values()}
    if len(files) > 1:
        raise ValueError("give data and validation both as files or both as datasets")
    input_files = list(sources.values()) if files == {True} else []
    # the output rule before any work: an earlier model is continued (resume), replaced (overwrite) or refused
    prepare_output(args.output_dir, MODEL, overwrite=overwrite or resume, inputs=input_files, dry_run=True)
    inputs = {"data_files": {k: str(v) for k, v in sources.items()}} if files == {True} else {"corpora": sources}
    builder = ECGBlocksBuilder(
        **inputs,
        first_n=first_n,
        fraction=fraction,
        layout=args.layout,
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
    if "validation" in blocks:
        args = _evaluate_and_keep_best(args)
    stats = CorpusStatistics.from_corpus(corpus).to_dict()
    endings = sentence_endings(s.tokens for s in corpus)

    # The seed must be set before the model is built: LoRA draws its A matrices when it is added,
    # before the Trainer (which seeds only at its own start) exists.
    if args.full_determinism:
        enable_full_determinism(args.seed)
    else:
        set_seed(args.seed)
    model, tokenizer = load_causal_lm(model_name, trust_remote_code=trust_remote_code)
    positions = getattr(model.config, "max_position_embeddings", None) or getattr(model.config, "n_positions", None)
    if positions is not None and positions < args.max_length:
        raise ValueError(
            f"{model_name} has {positions} positions, fewer than max_length {args.max_length}: "
            f"pass --max_length {positions} (or less)"
        )
    new_token_ids = add_ecg_tokens(tokenizer, model, corpus.entity_types, mention=args.mention_samples)
    if args.lora:
        model = apply_lora(
            model, new_token_ids, r=args.lora_r, alpha=args.lora_alpha, dropout=args.lora_dropout,
            target_modules=args.lora_target_modules,
        )  # fmt: skip
    piece_forms = tag_piece_forms(tokenizer, corpus.entity_types)
    ecg_config = ECGConfig(
        entity_types=corpus.entity_types,
        base_model=str(model_name),
        loss_on=args.loss_on,
        max_length=args.max_length,
        lora=args.lora,
        layout=args.layout,
        word_exceptions=word_exceptions(s.tokens for s in corpus),
        sentence_endings=endings,
        sentence_breaks=sentence_break_shares(((s.tokens, {span.start for span in s.spans}) for s in corpus), endings),
        unended_share=unended_share((s.tokens for s in corpus), endings),
        label_names=_iob2_label_names(corpus),
        tag_pieces=piece_forms,
        tag_piece_exceptions=tag_piece_exceptions(
            piece_forms, [s.tokens for s in corpus], vocabulary_words(tokenizer.get_vocab()), [s.tags for s in corpus]
        ),
        tag_scheme=corpus.scheme,
        **(mention_limits(corpus, tokenizer) if args.mention_samples else {}),
        corpus_statistics=stats,
        mention_bank=MentionBank.from_sentences(corpus).to_dict() if args.save_mention_bank else None,
    )
    card = ECGModelCardData(
        base_model=upstream_model_id(str(model_name)),
        dataset_name=corpus.name,
        corpus_statistics=stats,
        first_n=first_n,
        license=license,
        dataset_id=dataset_id,
    )
    trainer = ECGTrainer(
        model=model,
        args=args,
        ecg_config=ecg_config,
        train_dataset=blocks["train"],
        eval_dataset=blocks.get("validation"),
        processing_class=tokenizer,
        model_card_data=card,
        callbacks=callbacks,
    )
    if overwrite and not resume:
        prepare_output(args.output_dir, MODEL, overwrite=True, inputs=input_files)
    checkpoint = get_last_checkpoint(args.output_dir) if resume and os.path.isdir(args.output_dir) else None
    if resume and checkpoint is None:
        logger.warning("no checkpoint in %s: starting from the beginning", args.output_dir)
    trainer.train(resume_from_checkpoint=checkpoint)
    trainer.save_model()
    if trainer.push_after_training:
        try:
            trainer.push_to_hub()
        except HubUploadError as error:
            raise HubUploadError(
                f"{error}; the trained model is in {args.output_dir}/: push it with `{later}`"
            ) from error
    return trainer
