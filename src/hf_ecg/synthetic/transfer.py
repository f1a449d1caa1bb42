"""Choosing among a sketch's candidates for a target domain (style transfer): a sketch generator trained on the
target's text and gold writes each sketch of a *source* domain's labelled sentence k times; the candidate kept is
the one that reads most like the target, says what its source said and reads well, without copying it.

Each candidate that reads whole (:class:`~hf_ecg.synthetic.genius.CandidateScore`) is scored by the style-transfer
seed's weighted sum: 1.0 x *style* (the probability that the sentence is the target's, from a logistic regression on
the shipped MiniLM's embeddings of the target text against the source text) + 1.0 x *adequacy* (cosine between the
candidate's and its source sentence's embeddings) + 0.1 x *fluency* (the share of its words that are not odd) + 0.5 x
*diversity* (the share of its words outside the mentions its source lacks). With ``vocabulary_first``, the share of
its words outside the mentions that the target text holds comes before the sum: the seed's target vocabulary as a
preference among the candidates.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ..runtime.blocks import tag_label

__all__ = ["TRANSFER_WEIGHTS", "TargetDomain", "TransferScore", "TransferSelection", "filled_text"]

#: The seed's weights of style, adequacy, fluency and diversity.
TRANSFER_WEIGHTS = {"style": 1.0, "adequacy": 1.0, "fluency": 0.1, "diversity": 0.5}


@dataclass(frozen=True)
class TargetDomain:
    """The target domain's text (its sentences' words; no label is read) that a transfer selection learns to
    recognise, and whether its vocabulary is preferred first. At most ``max_sentences`` of each side (evenly spaced)
    train the classifier."""

    text: Sequence[tuple[str, ...]]
    name: str = "target text"
    vocabulary_first: bool = False
    max_sentences: int = 2000

    def __post_init__(self) -> None:
        if not any(self.text):
            raise ValueError(f"{self.name}: no sentence to learn the target domain from")


@dataclass(frozen=True)
class TransferScore:
    """One candidate's scores; :meth:`key` orders them (higher is better)."""

    whole: bool
    in_vocabulary: float
    style: float
    adequacy: float
    fluency: float
    diversity: float

    @property
    def value(self) -> float:
        """The seed's weighted sum (:data:`TRANSFER_WEIGHTS`)."""
        return sum(weight * getattr(self, name) for name, weight in TRANSFER_WEIGHTS.items())

    def key(self, vocabulary_first: bool = False) -> tuple[bool, float, float]:
        return self.whole, self.in_vocabulary if vocabulary_first else 0.0, self.value


def filled_text(template: Sequence[str], mentions: Sequence[Sequence[str]]) -> str:
    """``template``'s words with its tags replaced, in order, by ``mentions`` (a tag beyond them is left out)."""
    words: list[str] = []
    remaining = iter(mentions)
    for token in template:
        words.extend(next(remaining, ()) if tag_label(token) is not None else (token,))
    return " ".join(words)


def _spread(items: Sequence[Any], most: int) -> list[Any]:
    step = max(1, -(-len(items) // most))
    return list(items[::step])


class TransferSelection:
    """The target-domain classifier and vocabulary, fitted once per run on ``target`` against ``source_text`` with
    ``scorer``'s encoder (:class:`~hf_ecg.synthetic.sketching.PhraseScorer`)."""

    def __init__(self, scorer: Any, target: TargetDomain, source_text: Sequence[Sequence[str]]) -> None:
        from sklearn.linear_model import LogisticRegression

        self.scorer, self.target = scorer, target
        targets = [" ".join(s) for s in _spread([s for s in target.text if s], target.max_sentences)]
        sources = [" ".join(s) for s in _spread([s for s in source_text if s], target.max_sentences)]
        if not sources:
            raise ValueError("no source sentence to tell the target domain from")
        features = scorer.embed([*targets, *sources]).numpy()
        labels = [1] * len(targets) + [0] * len(sources)
        held_out = [i % 5 == 4 for i in range(len(labels))]  # every fifth sentence scores the classifier
        fit = [i for i, out in enumerate(held_out) if not out]
        test = [i for i, out in enumerate(held_out) if out]
        self.accuracy: float | None = None  # too few sentences to hold some out: not measured
        if test and len({labels[i] for i in fit}) == 2:
            probe = LogisticRegression(max_iter=1000).fit(features[fit], [labels[i] for i in fit])
            self.accuracy = round(float(probe.score(features[test], [labels[i] for i in test])), 4)
        self.classifier = LogisticRegression(max_iter=1000).fit(features, labels)
        self.counts = len(targets), len(sources)
        self.vocabulary = frozenset(word.lower() for sentence in target.text for word in sentence)

    def record(self) -> dict[str, Any]:
        """What the manifest says of the selection: the texts' sizes, the classifier's held-out accuracy, the
        weights."""
        return {
            "target_text": self.target.name,
            "target_sentences": self.counts[0],
            "source_sentences": self.counts[1],
            "classifier_accuracy": self.accuracy,
            "weights": dict(TRANSFER_WEIGHTS),
            "vocabulary_first": self.target.vocabulary_first,
        }

    def scores(
        self,
        texts: Sequence[str],
        outside: Sequence[Sequence[str]],
        sources: Sequence[str],
        whole: Sequence[bool],
        odd_shares: Sequence[float],
        new_shares: Sequence[float],
    ) -> list[TransferScore]:
        """The :class:`TransferScore` of each candidate: its filled ``texts``, its words ``outside`` the mentions,
        its source sentence's text, and what the candidate score and the source overlap measured."""
        embedded = self.scorer.embed(list(texts))
        style = self.classifier.predict_proba(embedded.numpy())[:, 1].tolist()
        adequacy = (embedded * self.scorer.embed(list(sources))).sum(-1).tolist()
        return [
            TransferScore(
                whole=w,
                in_vocabulary=round(sum(x.lower() in self.vocabulary for x in words) / len(words), 6) if words else 1.0,
                style=round(s, 6),
                adequacy=round(a, 6),
                fluency=round(1.0 - odd, 6),
                diversity=round(new, 6),
            )
            for w, words, s, a, odd, new in zip(whole, outside, style, adequacy, odd_shares, new_shares, strict=True)
        ]
