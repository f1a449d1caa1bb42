"""Self-labelling: the user's sentences labelled by a tagger trained on the gold sentences alone (the first step of
self-training, and of every teacher that reads the user's text)."""

from __future__ import annotations

from collections.abc import Sequence

from ..data.corpus import Corpus
from ..taggers.tagger import NERConfig
from ..taggers.training import train_tagger

__all__ = ["self_labelled"]


def self_labelled(
    train: Sequence[Corpus],
    unlabelled: Sequence[Sequence[str]],
    config: NERConfig,
    seed: int,
    entity_types: Sequence[str] = (),
    progress_bar: bool = False,
) -> Corpus:
    """The ``unlabelled`` sentences labelled by a tagger trained on ``train`` alone (:meth:`Tagger.label
    <hf_ecg.taggers.tagger.Tagger.label>`)."""
    teacher = train_tagger(train, config, seed, entity_types=entity_types, progress_bar=progress_bar)
    return teacher.label(unlabelled, name=f"unlabelled, self-labelled (seed {seed})")
