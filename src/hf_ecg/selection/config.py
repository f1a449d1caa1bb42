"""How selection runs: which rules, with which thresholds, and how the taggers that judge samples are trained
(:class:`SelectionConfig`). Apart from :mod:`hf_ecg.selection`, which applies the rules, and
:mod:`hf_ecg.selection.teacher`, which trains and asks the taggers, so that both read it and neither imports
the other's module for it."""

from __future__ import annotations

from dataclasses import dataclass, field

from ..data.selection_rules import DEFAULT_RULES, RULES, TAGGER_RULES
from ..taggers.tagger import NERConfig

__all__ = ["TEACHERS", "SelectionConfig"]

#: What the taggers of the tagger rules are trained on (:attr:`SelectionConfig.teacher`).
TEACHERS = ("gold", "self")


@dataclass
class SelectionConfig:
    """Which samples to keep, and how the gold taggers that judge the labels are trained."""

    rules: list[str] = field(
        default_factory=lambda: list(DEFAULT_RULES),
        metadata={"help": f"rules in the order they run, from {', '.join(RULES)}"},
    )
    near_copy_threshold: float = field(
        default=0.8,
        metadata={
            "help": "near-copy and text-copy: drop a sample whose ROUGE-L to the nearest gold sentence (near-copy) or "
            "sentence of your text (text-copy) is above"
        },
    )
    max_shared_run: int = field(
        default=8,
        metadata={
            "help": "text-copy: drop a sample that shares a run of this many words or more with a sentence of your "
            "text, each of its mentions standing for any name"
        },
    )
    extra_threshold: float = field(
        default=0.5,
        metadata={
            "help": "no-extra / relabel: an O word whose entity probability reaches this drops its sample (no-extra) "
            "or is labelled as the gold taggers read it (relabel)"
        },
    )
    target_size: int | None = field(
        default=None, metadata={"help": "keep at most this many of the samples that pass, the first by id"}
    )
    tagger_model: str = field(default="minilm-l6", metadata={"help": "encoder of the gold taggers"})
    tagger_epochs: float = field(default=20.0, metadata={"help": "training epochs of each gold tagger"})
    tagger_learning_rate: float = field(default=1e-4, metadata={"help": "learning rate of the gold taggers"})
    tagger_batch_size: int = field(default=8, metadata={"help": "training batch size of the gold taggers"})
    tagger_seeds: list[int] = field(
        default_factory=lambda: [1], metadata={"help": "one gold tagger per seed; several make an ensemble"}
    )
    teacher: str = field(
        default="gold",
        metadata={
            "help": "what the taggers of the tagger rules learn from: gold (the gold sentences alone) or self "
            "(self-training: the gold sentences and the samples being judged, two-stage, in teacher_folds folds, "
            "each fold judged by taggers that never saw it, so that no tagger vouches for a label it learnt)",
            "choices": list(TEACHERS),
        },
    )
    teacher_folds: int = field(
        default=2, metadata={"help": "self: folds of the samples (each judged by taggers trained on the others)"}
    )

    def __post_init__(self) -> None:
        unknown = [rule for rule in self.rules if rule not in RULES]
        if unknown:
            raise ValueError(f"unknown selection rule(s) {', '.join(unknown)}; known: {', '.join(RULES)}")
        if len(set(self.rules)) != len(self.rules):
            raise ValueError(f"a rule is named twice in {self.rules}")
        if not 0.0 <= self.near_copy_threshold <= 1.0:
            raise ValueError(f"near_copy_threshold is a ROUGE-L score, in [0, 1]; got {self.near_copy_threshold}")
        if self.max_shared_run < 1:
            raise ValueError(f"max_shared_run is a number of words, at least 1; got {self.max_shared_run}")
        if not 0.0 < self.extra_threshold <= 1.0:
            raise ValueError(f"extra_threshold must be in (0, 1], got {self.extra_threshold}")
        if self.target_size is not None and self.target_size < 1:
            raise ValueError(f"target_size must be >= 1, got {self.target_size}")
        if self.needs_taggers and not self.tagger_seeds:
            raise ValueError("the tagger rules need at least one tagger seed")
        if self.teacher not in TEACHERS:
            raise ValueError(f"unknown teacher {self.teacher!r}; known: {', '.join(TEACHERS)}")
        if self.teacher == "self" and self.teacher_folds < 2:
            raise ValueError(f"the self teacher needs at least 2 folds, got {self.teacher_folds}")

    @property
    def needs_taggers(self) -> bool:
        return bool(TAGGER_RULES & set(self.rules))

    def ner_config(self) -> NERConfig:
        """The training settings of the gold taggers, as an :class:`~hf_ecg.taggers.tagger.NERConfig`."""
        return NERConfig(
            model=self.tagger_model,
            epochs=self.tagger_epochs,
            learning_rate=self.tagger_learning_rate,
            batch_size=self.tagger_batch_size,
            seeds=list(self.tagger_seeds),
        )
