"""Label noise: how far a labelled set's entities are from what a reference tagger reads in the same words.

A synthetic sentence's labels are claims: each labelled mention is of its type, and every ``O`` word is not an
entity. A tagger trained on the set learns both as truth. :func:`label_agreement` reads the set with a
reference token classifier (on our corpora: one trained on a whole training split, saved by ``hf-ecg evaluate
ner --save-taggers``) and scores the set's labels against its predictions as entity-level micro precision,
recall and F1 (seqeval's conlleval chunking, as :func:`~hf_ecg.taggers.metrics.entity_scores`):

- **precision**: the share of the set's entities that the reference also sees, same words and type;
- **recall**: the share of the reference's entities that the set labels (its complement: names left ``O``);

and it counts what each disagreement is (:data:`ERROR_KINDS`). Given the gold sentences, it also splits both by
the mentions' origin (:func:`agreement_by_origin`): a reference knows the names of its training pool best, so
a set can raise its agreement by recycling gold mentions without its labels being any better. The reference's
own F1 on a gold test split is the ceiling: agreement above it cannot be read as better labels. A reference is
a measure only: nothing that generates, filters or repairs data reads one.
"""

from __future__ import annotations

import logging
import random
from collections import Counter
from collections.abc import Sequence
from typing import Any

from ..data.corpus import Corpus, Sentence
from ..runtime.tags import Span, marked, tags_to_spans
from ..taggers.metrics import entity_scores, per_type_scores
from ..taggers.tagger import Tagger

logger = logging.getLogger(__name__)

__all__ = ["ERROR_KINDS", "agreement_by_origin", "label_agreement", "label_errors"]

#: What a disagreement between a set's entity and the reference's is (:func:`label_errors`):
#: - ``wrong-type``: a set entity over words the reference reads as an entity of another type;
#: - ``boundary``: a set entity that overlaps a reference entity of its type, with other words;
#: - ``not-an-entity``: a set entity over words the reference reads as ``O``;
#: - ``left-O``: a reference entity over words the set labels ``O`` (a name left in the text unlabelled).
ERROR_KINDS = ("wrong-type", "boundary", "not-an-entity", "left-O")


def label_errors(labelled: Sequence[str], reference: Sequence[str]) -> list[tuple[str, Span]]:
    """Each disagreement between one sentence's ``labelled`` IOB2 tags and the ``reference``'s, as
    ``(kind, span)`` (:data:`ERROR_KINDS`; the span is the set's, or the reference's for ``left-O``).
    Exact matches are not errors; a set entity overlapping reference entities of its own type and of
    another counts as ``wrong-type``."""
    ours = tags_to_spans(list(labelled), "IOB2")[0]
    theirs = tags_to_spans(list(reference), "IOB2")[0]
    exact = {(s.start, s.end, s.label) for s in theirs}
    errors: list[tuple[str, Span]] = []
    for span in ours:
        if (span.start, span.end, span.label) in exact:
            continue
        overlapping = [t for t in theirs if t.start < span.end and span.start < t.end]
        if not overlapping:
            errors.append(("not-an-entity", span))
        elif any(t.label != span.label for t in overlapping):
            errors.append(("wrong-type", span))
        else:
            errors.append(("boundary", span))
    for span in theirs:
        if not any(o.start < span.end and span.start < o.end for o in ours):
            errors.append(("left-O", span))
    return errors


def agreement_by_origin(
    data: Sequence[Sentence], predicted: Sequence[Sequence[str]], gold: Sequence[Sentence]
) -> dict[str, dict[str, Any]]:
    """Precision and recall of ``data``'s labels against ``predicted`` (the reference's tags), apart for the
    mentions a ``gold`` sentence holds, same type and words (``gold``), and the rest (``new``), as
    :func:`~hf_ecg.taggers.training.new_mention_share` counts them: a gold name written into a slot of another
    type is new.

    Precision: of the set's entities of that origin, the share the reference sees exactly (same words, same
    type). Recall: of the reference's entities of that origin, the share the set labels exactly. Each with its
    ``entities`` and ``reference_entities`` counts; a score is ``None`` where its count is 0.
    """
    known = set(mention for sentence in gold for mention in sentence.mentions)
    counts = {origin: Counter() for origin in ("gold", "new")}
    for sentence, tags in zip(data, predicted, strict=True):
        ours = {(s.start, s.end, s.label) for s in sentence.spans}
        theirs = {(s.start, s.end, s.label) for s in tags_to_spans(list(tags), "IOB2")[0]}
        for spans, total, agreed, other in (
            (ours, "entities", "precise", theirs),
            (theirs, "reference_entities", "recalled", ours),
        ):
            for start, end, label in spans:
                origin = "gold" if (label, tuple(sentence.tokens[start:end])) in known else "new"
                counts[origin][total] += 1
                counts[origin][agreed] += (start, end, label) in other
    return {
        origin: {
            "entities": c["entities"],
            "precision": c["precise"] / c["entities"] if c["entities"] else None,
            "reference_entities": c["reference_entities"],
            "recall": c["recalled"] / c["reference_entities"] if c["reference_entities"] else None,
        }
        for origin, c in counts.items()
    }


def _restricted(tags: Sequence[str], types: set[str]) -> list[str]:
    """``tags`` with the entities of types outside ``types`` made ``O``."""
    return [tag if tag == "O" or tag[2:] in types else "O" for tag in tags]


def _check_reference(data: Corpus, reference: Tagger, test: Corpus | None = None) -> list[str]:
    """Refuse a set (or a ``test`` split, scored as the ceiling) with a type the reference does not label, or a set
    with no sentences; the set's types the reference was trained on no entity of (warned: they all count as wrong)."""
    set_types = set(data.entity_types)
    for corpus in (data, *([test] if test is not None else [])):
        unknown = sorted(set(corpus.entity_types) - set(reference.entity_types))
        if unknown:
            raise ValueError(
                f"the reference does not label {', '.join(unknown)}, which {corpus.name} has: it labels "
                f"{', '.join(reference.entity_types) or 'nothing'}; use a reference trained on every "
                f"type of the {'set' if corpus is data else 'test split'}"
            )
    if not len(data):
        raise ValueError(f"{data.name} has no sentences")
    trained = reference.record.get("trained_types")
    unlearnt = sorted(set_types - set(trained)) if trained is not None else []
    if unlearnt:  # scored all the same, as evaluate ner scores a type no training sentence has
        logger.warning(
            "the reference was trained on no %s entity: it predicts none, so the set's %s labels all count as wrong",
            ", ".join(unlearnt),
            ", ".join(unlearnt),
        )
    return unlearnt


def _ceiling(reference: Tagger, test: Corpus | None) -> dict[str, Any] | None:
    """The reference's entity scores on ``test``, else those its saved record holds (``None`` if neither)."""
    from .ner import score_tagger

    if test is not None:
        test_scores = score_tagger(reference, test)
        ceiling: dict[str, Any] | None = {"name": test.name, "sentences": len(test), **test_scores}
    else:
        ceiling = reference.record.get("test")
    if ceiling is None:
        return None
    keys = ("name", "sentences", "entity_f1", "entity_precision", "entity_recall")
    return {key: ceiling[key] for key in keys if key in ceiling}


def label_agreement(
    data: Corpus,
    reference: Tagger,
    *,
    test: Corpus | None = None,
    gold: Sequence[Sentence] | None = None,
    examples: int = 0,
    seed: int = 0,
) -> dict[str, Any]:
    """Score the labels of ``data`` against what ``reference`` predicts on its words.

    Returns ``sentences``, ``entities`` (the set's) and ``reference_entities``, micro ``precision`` /
    ``recall`` / ``f1``, ``per_type`` (seqeval's report, the reference as the truth), ``errors`` (a count per
    :data:`ERROR_KINDS`), and ``ceiling``: the reference's entity scores on ``test`` when given, else those
    its saved record holds (``None`` if neither). With the ``gold`` sentences, ``by_origin``
    (:func:`agreement_by_origin`) and ``new_mention_share``. With ``examples``, that many sentences with a disagreement,
    drawn with ``seed``, each marked as the set labels it and as the reference reads it.

    The reference's predictions of types that ``data`` has no label for are read as ``O``; a set with a type
    the reference does not know is refused (``ValueError`` naming both), since its entities would all count
    as wrong.
    """
    set_types = set(data.entity_types)
    unlearnt = _check_reference(data, reference, test)
    labelled = [sentence.tags for sentence in data]
    predicted = [_restricted(tags, set_types) for tags in reference.predict([s.tokens for s in data])]
    scores = entity_scores(predicted, labelled)
    errors: Counter[str] = Counter({kind: 0 for kind in ERROR_KINDS})
    disagreements = {}  # sentence -> its errors' kinds, for the sentences with any
    for i, (ours, theirs) in enumerate(zip(labelled, predicted, strict=True)):
        kinds = [kind for kind, _ in label_errors(ours, theirs)]
        errors.update(kinds)
        if kinds:
            disagreements[i] = kinds
    ceiling = _ceiling(reference, test)
    report: dict[str, Any] = {
        "data": data.name,
        "sentences": len(data),
        "entities": sum(len(s.spans) for s in data),
        "reference_entities": sum(len(tags_to_spans(tags, "IOB2")[0]) for tags in predicted),
        **scores,
        "per_type": per_type_scores(predicted, labelled),
        "errors": dict(errors),
        "unlearnt_types": unlearnt,
        "ceiling": ceiling,
    }
    if gold is not None:
        from .ner import new_mention_share

        report["by_origin"] = agreement_by_origin(list(data), predicted, list(gold))
        report["new_mention_share"] = new_mention_share(list(gold), list(data))
    if examples:
        chosen = sorted(random.Random(seed).sample(list(disagreements), min(examples, len(disagreements))))
        report["examples"] = [
            {
                "sentence": i,
                "labelled": marked(data[i].tokens, labelled[i]),
                "reference": marked(data[i].tokens, predicted[i]),
                "errors": disagreements[i],
            }
            for i in chosen
        ]
    return report
