"""The teacher's rules over generated samples: who judges them (the ``gold`` teacher: taggers trained on the gold
sentences, :func:`~hf_ecg.labelling.ensemble.train_gold_taggers`; the ``self`` teacher: per fold, taggers trained on
gold and the other folds' samples; either self-trained on the user's unlabelled text too), the agreement checks of
the tagger rules (``mention-type``, ``consistent``, ``no-extra``, ``exact``) and the ``unlabel`` repair; the
``relabel`` repair is the ensemble's (:func:`~hf_ecg.labelling.ensemble.relabel`). :mod:`hf_ecg.selection`
applies them.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

from ..data.corpus import Corpus, Sentence
from ..labelling.ensemble import ensemble_proba, train_gold_taggers
from ..labelling.self_labelling import self_labelled
from ..runtime.tags import tags_to_spans
from ..taggers.tagger import Tagger
from ..taggers.training import train_tagger
from .config import SelectionConfig

__all__ = ["agrees", "teacher_probabilities", "teacher_taggers", "unlabel"]

logger = logging.getLogger(__name__)


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
        return train_gold_taggers(gold, config.ner_config(), config.tagger_seeds, unlabelled=unlabelled)
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
