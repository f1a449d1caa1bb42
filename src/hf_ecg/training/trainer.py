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
from ..runtime.blocks import ANSWER_TOKEN, QUESTION_TOKEN, SEGMENT_TOKENS
from ..runtime.ecg_config import ECGConfig
from ..runtime.layout import SegmentIds, continued_answer, training_sample
from .training_args import ECGTrainingArguments

__all__ = ["ECGModelCardCallback", "ECGTrainer", "ECGTrainingArguments", "encode_blocks"]

logger = logging.getLogger(__name__)

REQUIRED_COLUMNS = ("context", "question", "answer")


def encode_blocks(
    batch: dict[str, list[str]], tokenizer: Any, max_length: int, loss_on: str = "answer"
) -> dict[str, list[list[int]]]:
    """Tokenize a batch of Q&A rows into ``input_ids`` and ``labels`` (``-100`` outside the answer
    unless ``loss_on == "all"``). Segments are tokenized separately and joined behind their
    segment tokens; the context is cut from the left to fit ``max_length`` (and an answer that
    alone does not fit loses its beginning: its end holds the tag). An ``after-sentence`` mention row (its answer
    holds ``<|question|>``: no corpus word can) is laid out by :func:`~hf_ecg.runtime.layout.continued_answer`, only
    its last mention carrying loss."""
    segments = SegmentIds.of(tokenizer)

    def ids(texts: list[str]) -> list[list[int]]:
        return tokenizer(texts, add_special_tokens=False)["input_ids"]

    input_ids, labels = [], []
    for context, question, answer, text in zip(
        ids(batch["context"]), ids(batch["question"]), ids(batch["answer"]), batch["answer"], strict=True
    ):
        loss = [True] * len(answer)
        if f" {QUESTION_TOKEN} " in text:
            answer, loss = _continued_answer(text, tokenizer, segments)
        sample, prompt_length = training_sample(segments, context, question, answer, max_length=max_length)
        loss = loss[len(loss) - (len(sample) - prompt_length) :]  # an answer cut on the left keeps its end
        input_ids.append(sample)
        labels.append(
            sample.copy()
            if loss_on == "all"
            else [-100] * prompt_length
            + [i if carries else -100 for i, carries in zip(sample[prompt_length:], loss, strict=True)]
        )
    return {"input_ids": input_ids, "labels": labels}


def _continued_answer(text: str, tokenizer: Any, segments: SegmentIds) -> tuple[list[int], list[bool]]:
    """The ids and loss of an ``after-sentence`` answer's text: ``block <|question|> tag <|answer|> mention ...``."""
    block, *pairs = text.split(f" {QUESTION_TOKEN} ")
    tags, mentions = zip(*(pair.split(f" {ANSWER_TOKEN} ", 1) for pair in pairs), strict=True)
    block_ids, *mention_ids = tokenizer([block, *mentions], add_special_tokens=False)["input_ids"]
    tag_ids = tokenizer.convert_tokens_to_ids(list(tags))
    return continued_answer(segments, block_ids, list(zip(tag_ids, mention_ids, strict=True)))


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
    what ``hf-ecg push-model`` pushes (:func:`hf_ecg.hub.push.push_model`) to ``args.hub_model_id``, and
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
            raise ValueError(f"the tokenizer lacks the ECG tokens {missing}: call hf_ecg.modeling.add_ecg_tokens first")
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
            # datasets fingerprints a map by the function's name, not its code nor the layout code it calls: a cache
            # file an earlier hf_ecg wrote for these blocks would be read back as this version's encoding
            load_from_cache_file=False,
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
            if not _internal_call:  # the final model: loadable by pipeline(trust_remote_code=True) without hf_ecg
                from ..runtime.pipeline import save_pipeline_code

                save_pipeline_code(output_dir)
                self.model_card_data.has_pipeline_code = True
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
        return push_model(
            self.args.output_dir,
            self.args.hub_repo_id,
            private=bool(private),
            local_dir=local_dir,
            token=token or self.args.hub_token,
            overwrite=True,
        )

    def _write_ecg_files(self, output_dir: str) -> None:
        os.makedirs(output_dir, exist_ok=True)
        self.ecg_config.save(output_dir)
        self.model_card_data.save(output_dir)
        self.model_card_data.to_model_card().save(os.path.join(output_dir, "README.md"))
