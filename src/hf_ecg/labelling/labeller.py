"""What every labeller answers and how labellers are joined.

A labeller reads one tokenized sentence and answers its entity spans (:class:`Labeller`, as skweak's annotators
answer ``find_spans`` and Snorkel's labelling functions a label): the dictionary lookup, a tagger, an ensemble of
taggers. :func:`label_sentences` puts one or several of them over sentences; where several speak, the earlier one's
spans stand and a later one adds only spans on words no earlier span covers (:func:`joined_spans`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

from ..data.corpus import Corpus, Sentence
from ..runtime.tags import Span

__all__ = ["Labeller", "joined_spans", "label_sentences", "spans_of"]


@runtime_checkable
class Labeller(Protocol):
    """Anything that answers the entity spans of one tokenized sentence. A labeller that reads many sentences
    faster at once (a tagger: one batched forward pass) may also answer ``spans_many(sentences)``."""

    def spans(self, tokens: Sequence[str]) -> list[Span]: ...


def spans_of(labeller: Labeller, sentences: Sequence[Sequence[str]]) -> list[list[Span]]:
    """``labeller``'s spans of each sentence, through its ``spans_many`` where it has one."""
    many = getattr(labeller, "spans_many", None)
    if many is not None:
        return [list(spans) for spans in many(sentences)]
    return [list(labeller.spans(tokens)) for tokens in sentences]


def joined_spans(first: Sequence[Span], then: Sequence[Span]) -> list[Span]:
    """``first``, and every span of ``then`` that overlaps none of them, in order of their start."""
    taken = {i for span in first for i in range(span.start, span.end)}
    kept = list(first) + [span for span in then if not taken & set(range(span.start, span.end))]
    return sorted(kept, key=lambda span: span.start)


def label_sentences(
    sentences: Sequence[Sequence[str]],
    labellers: Labeller | Sequence[Labeller],
    *,
    name: str = "unlabelled",
    source: str = "unlabelled",
) -> Corpus:
    """``sentences`` labelled by ``labellers`` (one, or several joined in order: :func:`joined_spans`), as a
    :class:`~hf_ecg.data.corpus.Corpus` called ``name`` whose sentence ``i`` points back at ``source[i]``."""
    if isinstance(labellers, Labeller):
        labellers = [labellers]
    if not labellers:
        raise ValueError("labelling needs at least one labeller")
    found = spans_of(labellers[0], sentences)
    for labeller in labellers[1:]:
        found = [joined_spans(a, b) for a, b in zip(found, spans_of(labeller, sentences), strict=True)]
    return Corpus(
        [
            Sentence(tuple(tokens), tuple(spans), f"{source}[{i}]")
            for i, (tokens, spans) in enumerate(zip(sentences, found, strict=True))
        ],
        name=name,
    )
