"""What a generator's training did, read from its card data, and what to change when it looks undertrained.

``hf-ecg generate`` warns when a run redrew much of what the model wrote. The advice names what to change
against what the model's training did (``ecg_card.json``: its updates, epochs, sentences and held-out losses),
so it never sends a user back to the command they have just run; and how many of its own sentences a generator
of a small corpus writes for its second training (:func:`own_sentence_count`), which training and the advice
both read. Below training and generation alike: no torch or transformers here.
"""

from __future__ import annotations

import math
import os
from pathlib import Path
from typing import Any

__all__ = [
    "NO_RECORD_ADVICE",
    "OWN_SENTENCES_MAX_CORPUS",
    "OWN_SENTENCES_MIN",
    "OWN_SENTENCES_PER_GOLD",
    "TrainingRecord",
    "own_sentence_count",
    "undertrained_advice",
]

#: With the default (``own_sentences`` unset), corpora of this many training sentences or more train once: enough
#: gold sentences already keep the blocks drawn again low (docs/ablations.md).
OWN_SENTENCES_MAX_CORPUS = 500
#: The default number of own sentences: this many per training sentence, and at least :data:`OWN_SENTENCES_MIN`
#: (the counts measured in docs/ablations.md).
OWN_SENTENCES_PER_GOLD = 2
OWN_SENTENCES_MIN = 400

#: Said when the model carries no training record (a Hub id, or a model hf_ecg did not train).
NO_RECORD_ADVICE = (
    "train it for more epochs, with a held-out split so that the epoch with the lowest held-out loss is kept"
)


class TrainingRecord:
    """The parts of a model's card data (:class:`~hf_ecg.hub.model_card.ECGModelCardData`) that say how long it
    trained: updates, epochs, sentences, the held-out loss at each evaluation and the fixed step budget, if any."""

    def __init__(self, card: Any) -> None:
        logs = card.training_logs or []
        self.updates: int = card.total_steps or (logs[-1]["step"] if logs else 0)
        self.epochs: float = max((row.get("epoch", 0.0) for row in logs), default=0.0)
        self.sentences: int | None = (card.corpus_statistics or {}).get("num_sentences")
        self.max_steps: int | None = card.hyperparameters.get("training_steps")
        self.own_sentences: int = (card.own_sentences or {}).get("kept", 0)
        self.held_out: list[tuple[float, float]] = [
            (row["epoch"], row["eval_loss"]) for row in logs if "eval_loss" in row
        ]

    @classmethod
    def load(cls, model: str | os.PathLike) -> TrainingRecord | None:
        """The record of a local model folder, or ``None`` (a Hub id, or no ``ecg_card.json``)."""
        from .model_card import ECGModelCardData

        card = ECGModelCardData.load(model) if Path(model).is_dir() else None
        return cls(card) if card is not None and card.training_logs else None

    def describe(self) -> str:
        """``it trained 63 updates (3 epochs over 54 sentences)``."""
        over = f" over {self.sentences} sentences" if self.sentences else ""
        over += f" and {self.own_sentences} of its own" if self.own_sentences and over else ""
        return f"it trained {self.updates} updates ({self.epochs:.3g} epochs{over})"

    def advice(self) -> str:
        """What to change: more epochs (or updates) when the held-out loss was still falling at the end or was
        not measured; more sentences when it had already turned up, since more of the same would not help. The
        numbers suggested are always above what the model ran."""
        best = min(range(len(self.held_out)), key=lambda i: self.held_out[i][1], default=None)
        if best is not None and best < len(self.held_out) - 1:
            best_epoch, best_loss = self.held_out[best]
            return (
                f"{self.describe()}, and its held-out loss was lowest at epoch {best_epoch:.3g} ({best_loss:.2f}) "
                "and no lower after it, so more epochs would not help: train it on more sentences"
                + self._own_sentences_advice()
            )
        if self.held_out:
            first, last = self.held_out[0][1], self.held_out[-1][1]
            why = f"its held-out loss was still falling at its last epoch ({first:.2f} -> {last:.2f})"
        else:
            why = "it had no held-out split to say when to stop"
        if self.max_steps:
            change = f"`--max-steps {2 * self.updates}`"
        else:
            change = f"`--num-train-epochs {max(math.ceil(2 * self.epochs), math.floor(self.epochs) + 1)}`"
        keep = " (the lowest held-out loss is kept)" if self.held_out else ""
        return f"{self.describe()} and {why}: train it longer, e.g. {change}{keep}"

    def _own_sentences_advice(self) -> str:
        """For a generator of a small corpus trained once: that its own whole sentences are more sentences."""
        count = own_sentence_count(self.sentences, None) if self.sentences else 0
        if self.own_sentences or not count:
            return ""
        return f", or train it twice, the second time with its own whole sentences (`--own-sentences {count}`)"


def undertrained_advice(model: str | os.PathLike) -> str:
    """What to change so that ``model`` writes blocks that keep: from its training record where it has one
    (:class:`TrainingRecord`), else :data:`NO_RECORD_ADVICE`."""
    record = TrainingRecord.load(model)
    return record.advice() if record is not None else NO_RECORD_ADVICE


def own_sentence_count(num_sentences: int, requested: int | None, *, trial: bool = False) -> int:
    """How many sentences the first generator writes: ``requested`` when given (0: train once), else
    :data:`OWN_SENTENCES_PER_GOLD` per training sentence and at least :data:`OWN_SENTENCES_MIN`, for corpora of
    fewer than :data:`OWN_SENTENCES_MAX_CORPUS` sentences (0 for larger ones). A ``trial`` (a run the user cut
    short with ``max_steps`` or under one epoch) trains once unless ``requested`` says otherwise: a second
    training on what a few steps wrote is no trial."""
    if requested is not None:
        return requested
    if trial or num_sentences >= OWN_SENTENCES_MAX_CORPUS:
        return 0
    return max(OWN_SENTENCES_PER_GOLD * num_sentences, OWN_SENTENCES_MIN)
