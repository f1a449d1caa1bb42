"""The taggers that judge generated samples, and what they do with them: who trains them (the ``gold`` teacher
on the gold sentences, the ``self`` teacher on gold and the other folds' samples, either self-trained on the
user's unlabelled text too), their ensemble's label probabilities, the agreement checks of the tagger rules
(``mention-type``, ``consistent``, ``no-extra``, ``exact``) and the label repairs (``unlabel``, ``relabel``).
:mod:`hf_ecg.synthetic.selection` applies them.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

from ..data.corpus import Corpus, Sentence
from ..evaluation.ner import Tagger, self_labelled, train_tagger
from ..runtime.tags import tags_to_spans
from .selection_config import SelectionConfig

__all__ = [
    "agrees",
    "ensemble_proba",
    "entity_like",
    "relabel",
    "teacher_probabilities",
    "teacher_taggers",
    "train_gold_taggers",
    "unlabel",
]

logger = logging.getLogger(__name__)


def train_gold_taggers(
    gold: Corpus,
    config: SelectionConfig,
    *,
    progress_bar: bool = False,
    unlabelled: Sequence[Sequence[str]] = (),
) -> list[Tagger]:
    """One tagger per ``config.tagger_seeds``, each trained on all of ``gold``; with ``unlabelled`` sentences,
    each self-trained: trained on them as a gold tagger labels them, then on gold
    (:func:`~hf_ecg.evaluation.ner.self_labelled`, the two-stage recipe)."""
    ner = config.ner_config()
    taggers = []
    for seed in config.tagger_seeds:
        synthetic = [self_labelled([gold], unlabelled, ner, seed, gold.entity_types)] if unlabelled else []
        taggers.append(train_tagger([gold], ner, seed, synthetic=synthetic, progress_bar=progress_bar))
    return taggers


def teacher_taggers(
    tokens: Sequence[Sequence[str]],
    tags: Sequence[Sequence[str]],
    gold: Corpus,
    config: SelectionConfig,
    unlabelled: Sequence[Sequence[str]] = (),
) -> list[Tagger]:
    """The taggers of the tagger rules: :func:`train_gold_taggers` for the ``gold`` teacher; for ``self``, per
    fold (sample ``i`` is in fold ``i % teacher_folds``) and seed, a tagger trained two-stage on the samples of
    the other folds, as labelled (and the ``unlabelled`` sentences as a gold tagger labels them), then on
    gold, in fold-major order."""
    if config.teacher == "gold":
        return train_gold_taggers(gold, config, unlabelled=unlabelled)
    ner = config.ner_config()
    folds = config.teacher_folds
    # The user's text is labelled once per seed (by a gold tagger of that seed), whatever the fold.
    own = {
        seed: [self_labelled([gold], unlabelled, ner, seed, gold.entity_types)] if unlabelled else []
        for seed in config.tagger_seeds
    }
    taggers = []
    for fold in range(folds):
        outside = [i for i in range(len(tokens)) if i % folds != fold]
        others = [Sentence.from_tags(tokens[i], tags[i], f"sample[{i}]") for i in outside]
        synthetic = Corpus(others, name=f"samples outside fold {fold}")
        for seed in config.tagger_seeds:
            logger.info("self teacher: fold %d of %d, seed %d, %d samples", fold + 1, folds, seed, len(others))
            taggers.append(
                train_tagger([gold], ner, seed, synthetic=[synthetic, *own[seed]], entity_types=gold.entity_types)
            )
    return taggers


def teacher_probabilities(
    taggers: Sequence[Tagger], tokens: Sequence[Sequence[str]], indices: Sequence[int], config: SelectionConfig
) -> dict[int, Any]:
    """The label probabilities of the samples ``indices``: the ensemble of ``taggers``, or with the ``self``
    teacher (``taggers`` fold-major, :func:`teacher_taggers`) the ensemble of the taggers of each sample's
    fold."""
    if config.teacher == "gold":
        return dict(zip(indices, ensemble_proba(taggers, [tokens[i] for i in indices]), strict=True))
    per_fold = len(config.tagger_seeds)
    if len(taggers) != per_fold * config.teacher_folds:
        raise ValueError(
            f"the self teacher needs {per_fold * config.teacher_folds} taggers (per fold and seed), got {len(taggers)}"
        )
    probabilities: dict[int, Any] = {}
    for fold in range(config.teacher_folds):
        members = [i for i in indices if i % config.teacher_folds == fold]
        if members:
            fold_taggers = taggers[fold * per_fold : (fold + 1) * per_fold]
            probabilities.update(zip(members, ensemble_proba(fold_taggers, [tokens[i] for i in members]), strict=True))
    return probabilities


def ensemble_proba(taggers: Sequence[Tagger], sentences: Sequence[Sequence[str]]) -> list[Any]:
    """Each word's label probabilities averaged over ``taggers`` (which must share their labels)."""
    labels = taggers[0].labels
    if any(t.labels != labels for t in taggers):
        raise ValueError("the taggers of an ensemble must share their labels")
    total = taggers[0].predict_proba(sentences)
    for tagger in taggers[1:]:
        total = [a + b for a, b in zip(total, tagger.predict_proba(sentences), strict=True)]
    return [p / len(taggers) for p in total]


def agrees(rule: str, tags: list[str], probabilities: Any, labels: Sequence[str], extra_threshold: float) -> bool:
    unknown = {t[2:] for t in tags if t != "O"} - {label[2:] for label in labels if label != "O"}
    if unknown:  # a type the gold taggers never saw: no tagger can vouch for it
        return False
    predicted = [labels[k] for k in probabilities.argmax(-1)]
    if rule == "exact":
        return predicted == tags
    if rule == "mention-type":  # each entity's probability mass, over its words, on its own type vs another
        types = sorted({label[2:] for label in labels if label != "O"})
        for span in tags_to_spans(tags, "IOB2")[0]:
            mass = {
                t: sum(
                    float(probabilities[j][k])
                    for j in range(span.start, span.end)
                    for k, label in enumerate(labels)
                    if label[2:] == t
                )
                for t in types
            }
            if max(mass.values()) > mass[span.label]:
                return False
        return True
    if rule == "consistent":
        wanted = {(s.start, s.end, s.label) for s in tags_to_spans(tags, "IOB2")[0]}
        found = {(s.start, s.end, s.label) for s in tags_to_spans(predicted, "IOB2")[0]}
        return wanted <= found
    # no-extra: an O word whose probability mass on entity labels reaches the threshold
    outside = list(labels).index("O")
    return all(1.0 - probabilities[j][outside] < extra_threshold for j, tag in enumerate(tags) if tag == "O")


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
            repaired[span.start : span.end] = [f"B-{span.label}", *[f"I-{span.label}"] * (len(words) - 1)]
    if any(tag == "O" and confident[j] for j, tag in enumerate(repaired)):
        return None
    return repaired


def unlabel(tags: list[str], probabilities: Any, labels: Sequence[str], threshold: float) -> list[str]:
    """``tags`` with each entity whose words the taggers read as ``O`` (mean ``O`` probability over its words
    at least ``threshold``) made ``O``: a mention that names nothing (``in rats``, ``cerebral``)."""
    outside = list(labels).index("O")
    repaired = list(tags)
    for span in tags_to_spans(tags, "IOB2")[0]:
        words = range(span.start, span.end)
        if sum(float(probabilities[j][outside]) for j in words) / len(words) >= threshold:
            repaired[span.start : span.end] = ["O"] * len(words)
    return repaired
