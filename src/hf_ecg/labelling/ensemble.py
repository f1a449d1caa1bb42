"""An ensemble of taggers trained on the gold sentences: the teacher that judges generated samples and reads the
user's text. :func:`train_gold_taggers` trains it, :func:`ensemble_proba` averages its label probabilities,
:class:`TaggerEnsemble` answers its confident reading of a sentence as spans (a
:class:`~hf_ecg.labelling.labeller.Labeller`), and :func:`relabel` labels the ``O`` words it reads as names.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from ..data.corpus import Corpus
from ..runtime.tags import Span, replace_mention, tags_to_spans
from ..taggers.tagger import NERConfig, Tagger
from ..taggers.training import train_tagger
from .self_labelling import self_labelled

__all__ = [
    "GOLD_TAGGER_SEEDS",
    "MIN_LABEL_WEIGHT",
    "TaggerEnsemble",
    "ensemble_proba",
    "entity_like",
    "entity_words",
    "o_weighted",
    "relabel",
    "train_gold_taggers",
]

#: The seeds of the gold taggers that read the user's text (judging its sentences as templates, weighing the silver
#: split's words): an ensemble of three, as the weak-label measurements use.
GOLD_TAGGER_SEEDS = (1, 2, 3)

#: The least weight :func:`o_weighted` gives a word: a weight of 0 reads back as an unknown label.
MIN_LABEL_WEIGHT = 1e-3


def train_gold_taggers(
    gold: Corpus,
    config: NERConfig,
    seeds: Sequence[int],
    *,
    progress_bar: bool = False,
    unlabelled: Sequence[Sequence[str]] = (),
) -> list[Tagger]:
    """One tagger per seed, each trained on all of ``gold``; with ``unlabelled`` sentences, each self-trained:
    trained on them as a gold tagger labels them, then on gold (:func:`~hf_ecg.labelling.self_labelling.self_labelled`,
    the two-stage recipe)."""
    taggers = []
    for seed in seeds:
        synthetic = [self_labelled([gold], unlabelled, config, seed, gold.entity_types)] if unlabelled else []
        taggers.append(train_tagger([gold], config, seed, synthetic=synthetic, progress_bar=progress_bar))
    return taggers


def ensemble_proba(taggers: Sequence[Tagger], sentences: Sequence[Sequence[str]]) -> list[Any]:
    """Each word's label probabilities averaged over ``taggers`` (which must share their labels)."""
    labels = taggers[0].labels
    if any(t.labels != labels for t in taggers):
        raise ValueError("the taggers of an ensemble must share their labels")
    total = taggers[0].predict_proba(sentences)
    for tagger in taggers[1:]:
        total = [a + b for a, b in zip(total, tagger.predict_proba(sentences), strict=True)]
    return [p / len(taggers) for p in total]


def o_weighted(corpus: Corpus, taggers: Sequence[Tagger]) -> Corpus:
    """``corpus`` (weak labels: the user's text as a dictionary labels it) with each word outside its entities
    weighted by how surely ``taggers`` (the gold taggers) read it as ``O``, its entities' words 1.0: a name the
    dictionary missed weighs little on a tagger's loss (a noise-aware loss; ``Sentence.weights``)."""
    outside = list(taggers[0].labels).index("O")
    sentences = []
    for sentence, probabilities in zip(corpus, ensemble_proba(taggers, [s.tokens for s in corpus]), strict=True):
        covered = {i for span in sentence.spans for i in range(span.start, span.end)}
        weights = tuple(
            1.0 if i in covered else max(float(probabilities[i][outside]), MIN_LABEL_WEIGHT)
            for i in range(len(sentence.tokens))
        )
        sentences.append(replace(sentence, weights=weights))
    return replace(corpus, sentences=sentences, name=f"{corpus.name}, O weighted by {len(taggers)} gold taggers")


#: Brackets a relabelled span may end with when it opens them itself: ``NF-kappa B ( NFkB )``.
_BRACKETS = {")": "(", "]": "[", "}": "{"}


def _wordlike(word: str) -> bool:
    return any(c.isalnum() for c in word)


def entity_like(words: Sequence[str], first_label: str) -> bool:
    """Whether a span the taggers predict may become an entity by relabelling: its first label is ``B-`` (a
    span that starts with ``I-`` began on a word the taggers were unsure of: a fragment, ``24 h [protein:
    products]``), its first word has a letter or digit, and so has its last, unless that closes a bracket
    the span opens. No gold entity of BC5CDR or JNLPBA is punctuation only; 0.2% start with a mark."""
    if not words or not first_label.startswith("B-") or not _wordlike(words[0]):
        return False
    last = words[-1]
    return _wordlike(last) or (last in _BRACKETS and _BRACKETS[last] in words[:-1])


def entity_words(
    tokens: Sequence[str], tags: Sequence[str], probabilities: Any, labels: Sequence[str], threshold: float
) -> list[int]:
    """The ``O`` words of ``tags`` with a letter or digit that the taggers read as an entity with probability
    ``threshold`` or more (``probabilities``: one row a word, columns in ``labels`` order)."""
    outside = list(labels).index("O")
    return [
        j
        for j, tag in enumerate(tags)
        if tag == "O" and _wordlike(tokens[j]) and 1.0 - float(probabilities[j][outside]) >= threshold
    ]


def relabel(
    tokens: Sequence[str], tags: list[str], probabilities: Any, labels: Sequence[str], threshold: float
) -> list[str] | None:
    """``tags`` with each predicted entity span that lies on ``O`` words, every word of it with a letter or
    digit confident (entity probability at least ``threshold``) and :func:`entity_like`, labelled as
    predicted; ``None`` when a confident ``O`` word is left (its predicted span touches a requested entity, or
    is partly unsure): the sample cannot be repaired. Words of spans that are not entity-like, and words
    with no letter or digit, are never taken for names: they stay ``O`` and do not drop the sample."""
    outside = list(labels).index("O")
    confident = [_wordlike(tokens[j]) and 1.0 - float(probabilities[j][outside]) >= threshold for j in range(len(tags))]
    predicted = [labels[k] for k in probabilities.argmax(-1)]
    repaired = list(tags)
    for span in tags_to_spans(predicted, "IOB2")[0]:
        words = range(span.start, span.end)
        if not entity_like(tokens[span.start : span.end], predicted[span.start]):
            for j in words:
                confident[j] = False
        elif all(tags[j] == "O" and (confident[j] or not _wordlike(tokens[j])) for j in words):
            _, repaired = replace_mention(tokens, repaired, span, tokens[span.start : span.end])
    if any(tag == "O" and confident[j] for j, tag in enumerate(repaired)):
        return None
    return repaired


class TaggerEnsemble:
    """Taggers that share their labels, read together: each word's most probable label under their mean
    probabilities, and of the spans that makes only the entity-like ones (:func:`entity_like`) whose every word the
    ensemble reads as an entity with probability ``min_probability`` or more (0: every one; a teacher that
    completes weak labels keeps only its confident ones)."""

    def __init__(self, taggers: Sequence[Tagger], min_probability: float = 0.0) -> None:
        if not taggers:
            raise ValueError("an ensemble needs at least one tagger")
        self.taggers = list(taggers)
        self.labels = list(self.taggers[0].labels)
        self.min_probability = min_probability

    def spans_many(self, sentences: Sequence[Sequence[str]]) -> list[list[Span]]:
        """The entity-like, confident spans of the ensemble's reading of each sentence."""
        outside = self.labels.index("O")
        found = []
        for tokens, probabilities in zip(sentences, ensemble_proba(self.taggers, sentences), strict=True):
            tags = [self.labels[k] for k in probabilities.argmax(-1)]
            found.append(
                [
                    s
                    for s in tags_to_spans(tags, "IOB2")[0]
                    if entity_like(tokens[s.start : s.end], tags[s.start])
                    and all(1.0 - probabilities[i][outside] >= self.min_probability for i in range(s.start, s.end))
                ]
            )
        return found

    def spans(self, tokens: Sequence[str]) -> list[Span]:
        """The entity-like, confident spans of the ensemble's reading of ``tokens``."""
        return self.spans_many([tokens])[0]
