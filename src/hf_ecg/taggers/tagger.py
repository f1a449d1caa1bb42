"""A token classifier over words and how it is trained (:class:`NERConfig`): what
:func:`~hf_ecg.taggers.training.train_tagger` trains, what selection and repair ask, and what ``hf-ecg evaluate
labels`` reads a synthetic set with (:meth:`Tagger.from_pretrained`).

A tagger folder is a plain ``transformers`` token-classification model (``config.json`` with its IOB2
``id2label``, weights, tokenizer) plus ``hf_ecg_tagger.json``: how it was trained and, when it was tested,
its scores on the test split (a reference's ceiling).
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..runtime.files import read_json
from ..runtime.tags import Span, tags_to_spans

if TYPE_CHECKING:
    from ..data.corpus import Corpus

__all__ = ["RECIPES", "TAGGER_RECORD", "NERConfig", "Tagger", "encode_words"]

#: How synthetic data can enter a tagger's training (:func:`training_stages`).
RECIPES = ("auto", "concat", "oversample", "two-stage")


@dataclass
class NERConfig:
    """How the token classifier is trained (defaults: the offline protocol of docs/benchmarks.md)."""

    model: str = field(
        default="minilm-l6",
        metadata={"help": "encoder: offline alias minilm-l6, a Hub id (bert-base-cased, a biomedical BERT) or folder"},
    )
    epochs: float = field(default=20.0, metadata={"help": "training epochs (no model selection)"})
    batch_size: int = field(default=8, metadata={"help": "training batch size"})
    learning_rate: float = field(default=1e-4, metadata={"help": "AdamW learning rate"})
    max_length: int = field(default=128, metadata={"help": "sub-word tokens per sentence; words beyond are 'O'"})
    eval_batch_size: int = field(default=64, metadata={"help": "prediction batch size"})
    max_steps: int = field(
        default=-1, metadata={"help": "if > 0, stop after this many updates whatever the epochs (a compute budget)"}
    )
    group_by_length: bool = field(
        default=True,
        metadata={"help": "batch sentences of similar length (much less padding, same data per epoch)"},
    )
    seeds: list[int] = field(default_factory=lambda: [1, 2, 3], metadata={"help": "one run per seed"})
    recipe: str = field(
        default="auto",
        metadata={
            "help": "how synthetic data enters training: two-stage (synthetic first, then gold), oversample (gold "
            "repeated to gold_share of the set), concat, or auto (default: oversample where the silver's dictionary "
            "finds half the gold names or more, else two-stage)",
            "choices": list(RECIPES),
        },
    )
    gold_share: float = field(default=0.5, metadata={"help": "oversample: gold's least share of the training set"})
    synthetic_epochs: float | None = field(
        default=None,
        metadata={
            "help": "two-stage: epochs of the synthetic stage (auto's oversampled stage too); default: epochs × "
            "√(gold / synthetic sentences), at most epochs, or the updates of one times when no synthetic mention "
            "is new (see docs/guides/evaluate.md)"
        },
    )
    patience: int = field(
        default=0,
        metadata={
            "help": "with a dev split: stop a stage once dev entity F1 has not risen for this many epochs (0: run "
            "every epoch); either way the epoch with the best dev F1 is kept"
        },
    )
    freeze_embeddings: bool = field(
        default=False,
        metadata={"help": "keep the encoder's word embeddings fixed (fewer weights to update per step)"},
    )
    bf16: bool = field(
        default=False,
        metadata={
            "help": "train and predict under bfloat16 autocast, weights and optimizer in float32: faster on "
            "CPUs and GPUs "
            "that support it (off by default)"
        },
    )

    def __post_init__(self) -> None:
        if self.recipe not in RECIPES:
            raise ValueError(f"unknown recipe {self.recipe!r}; known: {', '.join(RECIPES)}")
        if not 0.0 < self.gold_share < 1.0:
            raise ValueError(f"gold_share must be in (0, 1), got {self.gold_share}")
        if self.patience < 0:
            raise ValueError(f"patience must be 0 or more, got {self.patience}")


#: The record hf_ecg writes beside a saved tagger's weights: its labels, training and test scores.
TAGGER_RECORD = "hf_ecg_tagger.json"


def encode_words(batch: dict[str, list], tokenizer: Any, label_ids: dict[str, int], max_length: int) -> dict[str, list]:
    """Sub-word inputs; each word's label on its first sub-word, -100 on the rest and on a word whose tag is
    ``None`` (unknown: out of the loss); with a ``weights`` column (each word's loss weight), ``label_weights``
    aligned the same way (:func:`~hf_ecg.taggers.weighted.align_label_weights`)."""
    from .weighted import WEIGHTS, align_label_weights

    encoded = tokenizer(batch["tokens"], is_split_into_words=True, truncation=True, max_length=max_length)
    if "weights" in batch:
        encoded[WEIGHTS] = [
            align_label_weights(encoded.word_ids(row), weights) for row, weights in enumerate(batch["weights"])
        ]
    encoded["labels"] = []
    for row, tags in enumerate(batch["tags"]):
        previous = None
        labels = []
        for word in encoded.word_ids(row):
            known = word is not None and word != previous and tags[word] is not None
            labels.append(label_ids[tags[word]] if known else -100)
            previous = word
        encoded["labels"].append(labels)
    return encoded


class Tagger:
    """A trained token classifier over words: :func:`train_tagger` makes one, :meth:`predict` labels sentences.

    ``labels`` are the IOB2 label names in the classifier's order. Each word gets the prediction of its
    first sub-word; words cut off by ``max_length`` count as ``O`` (probability 1).
    """

    def __init__(self, model: Any, tokenizer: Any, labels: Sequence[str], config: NERConfig) -> None:
        self.model, self.tokenizer, self.labels, self.config = model, tokenizer, list(labels), config
        #: Per training stage with a dev split: dev F1 by epoch and the epoch kept (:func:`train_tagger`).
        self.selection: list[dict[str, Any]] = []
        #: What :meth:`save_pretrained` records beside the weights (training data, test scores).
        self.record: dict[str, Any] = {}

    @property
    def entity_types(self) -> list[str]:
        """The entity types the tagger labels (from its ``B-``/``I-`` labels), sorted."""
        return sorted({label[2:] for label in self.labels if label != "O"})

    def save_pretrained(self, path: str | os.PathLike) -> Path:
        """Write the model, its tokenizer and :data:`TAGGER_RECORD` to ``path`` (a new or empty folder)."""
        folder = Path(path)
        if folder.exists() and (not folder.is_dir() or any(folder.iterdir())):
            raise FileExistsError(f"{folder} exists and is not an empty folder: choose a new one")
        folder.mkdir(parents=True, exist_ok=True)
        self.model.save_pretrained(folder)
        self.tokenizer.save_pretrained(folder)
        record = {"labels": self.labels, "max_length": self.config.max_length, **self.record}
        (folder / TAGGER_RECORD).write_text(json.dumps(record, indent=2) + "\n", encoding="utf-8")
        return folder

    @classmethod
    def from_pretrained(cls, name: str | os.PathLike, config: NERConfig | None = None) -> Tagger:
        """Load a token classifier (a folder, a Hub id or an offline alias) whose labels are IOB2 entity labels.

        Raises ``ValueError`` naming the model when it is not a token classifier (its ``config.json`` names
        no ``...ForTokenClassification`` architecture) or when its labels are not ``O`` / ``B-X`` / ``I-X``;
        :class:`~hf_ecg.modeling.ModelNotFoundError` when it cannot be found. ``config`` sets the prediction
        batch size, length and bf16 (default: :class:`NERConfig`'s, with the
        ``max_length`` the tagger was trained with).
        """
        from transformers import AutoConfig, AutoModelForTokenClassification, AutoTokenizer

        from ..modeling import model_load_error, resolve_model

        path = resolve_model(str(name))
        try:
            model_config = AutoConfig.from_pretrained(path)
        except (OSError, ValueError) as error:
            raise model_load_error(name, error, "tagger") from None
        architectures = list(getattr(model_config, "architectures", None) or [])
        if not any(a.endswith("ForTokenClassification") for a in architectures):
            raise ValueError(
                f"{name} is not a token classifier: its config names the architectures "
                f"{architectures or 'none'}, none of them ...ForTokenClassification"
            )
        labels = [model_config.id2label[i] for i in range(len(model_config.id2label))]
        bad = [label for label in labels if label != "O" and label[:2] not in ("B-", "I-")]
        if bad or "O" not in labels:
            raise ValueError(f"{name}'s labels are not IOB2 entity labels (O, B-TYPE, I-TYPE): {labels}")
        record_file = Path(path) / TAGGER_RECORD
        record = read_json(record_file, "a tagger record") if record_file.is_file() else {}
        if config is None:
            config = NERConfig(max_length=int(record.get("max_length", NERConfig.max_length)))
        tokenizer = AutoTokenizer.from_pretrained(path)
        if not tokenizer.is_fast:
            raise ValueError(f"{name} has no fast tokenizer: word alignment needs one")
        tagger = cls(AutoModelForTokenClassification.from_pretrained(path), tokenizer, labels, config)
        tagger.record = {key: value for key, value in record.items() if key not in ("labels", "max_length")}
        return tagger

    def predict_proba(self, sentences: Sequence[Sequence[str]]) -> list[Any]:
        """Per sentence, a ``(words, labels)`` array of label probabilities (softmax of the first sub-word)."""
        import numpy as np
        import torch

        encoded = self.tokenizer(
            [list(s) for s in sentences], is_split_into_words=True, truncation=True, max_length=self.config.max_length
        )
        # Predict in order of length so that batches carry little padding; rows are put back after.
        order = sorted(range(len(sentences)), key=lambda i: len(encoded["input_ids"][i]))
        outside = self.labels.index("O")
        device = next(self.model.parameters()).device
        probabilities: list[Any] = [None] * len(sentences)
        self.model.eval()
        for start in range(0, len(order), self.config.eval_batch_size):
            rows = order[start : start + self.config.eval_batch_size]
            batch = self.tokenizer.pad(
                [{"input_ids": encoded["input_ids"][i], "attention_mask": encoded["attention_mask"][i]} for i in rows],
                return_tensors="pt",
            ).to(device)
            with torch.inference_mode(), torch.autocast(device.type, torch.bfloat16, enabled=self.config.bf16):
                scores = self.model(**batch).logits.float().softmax(-1).cpu().numpy()
            for row, row_scores in zip(rows, scores, strict=True):
                words = np.zeros((len(sentences[row]), len(self.labels)))
                words[:, outside] = 1.0  # words cut off by max_length
                previous = None
                for token, word in enumerate(encoded.word_ids(row)):
                    if word is not None and word != previous:
                        words[word] = row_scores[token]
                    previous = word
                probabilities[row] = words
        return probabilities

    def label(self, sentences: Sequence[Sequence[str]], name: str = "pseudo-labelled") -> Corpus:
        """``sentences`` as a :class:`~hf_ecg.data.corpus.Corpus` labelled with the tagger's predictions (a
        stray ``I-`` starts an entity, as seqeval reads it): self-training's pseudo-labels."""
        from ..data.corpus import Corpus, Sentence

        predicted = zip(sentences, self.predict(sentences), strict=True)
        return Corpus(
            [Sentence.from_tags(words, tags, f"{name}[{i}]") for i, (words, tags) in enumerate(predicted)], name=name
        )

    def spans_many(self, sentences: Sequence[Sequence[str]]) -> list[list[Span]]:
        """The entity spans of each sentence as predicted (a stray ``I-`` starts one, as seqeval reads it)."""
        return [list(tags_to_spans(tags, "IOB2")[0]) for tags in self.predict(sentences)]

    def spans(self, tokens: Sequence[str]) -> list[Span]:
        """The entity spans of one sentence as predicted: a tagger is a labeller
        (:class:`~hf_ecg.labelling.labeller.Labeller`)."""
        return self.spans_many([tokens])[0]

    def predict(self, sentences: Sequence[Sequence[str]]) -> list[list[str]]:
        """The most probable label of each word, as IOB2 strings (a stray ``I-`` is kept as predicted)."""
        return [[self.labels[i] for i in p.argmax(-1)] for p in self.predict_proba(sentences)]
