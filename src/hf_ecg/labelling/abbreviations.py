"""Names the text itself defines: a short form in brackets after a long form another labeller marks
(``Emery-Dreifuss muscular dystrophy (EDMD)``) is labelled with the long form's type wherever the same document
uses it (:class:`AbbreviationLabeller`).

The pairs come from the Schwartz–Hearst algorithm (the ``abbreviations`` package), run on each sentence with its
brackets and hyphens written as prose writes them; a pair counts only where the long form ends in a span of the
labeller it wraps. A document is a run of sentences the text separates (blank lines, ``-DOCSTART-``); a text without
separators reads each sentence with its neighbours (:data:`DEFAULT_WINDOW`). A short form spelt like a word of the
gold sentences' ``O`` text, or a function word, is never labelled: the text could not tell it from the word.
"""

from __future__ import annotations

import logging
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass

from ..data.corpus import Corpus
from ..runtime.tags import Span
from .function_words import FUNCTION_WORDS
from .labeller import Labeller, joined_spans, spans_of

__all__ = ["DEFAULT_WINDOW", "AbbreviationLabeller", "Definition", "o_words", "short_form_pairs"]

logger = logging.getLogger(__name__)

#: Without document separators, a short form defined in one sentence is read in this many sentences either side (an
#: abstract's length).
DEFAULT_WINDOW = 20

#: What may close the bracket after a short form (``(EDMD)``, ``(EDMD; ...)``, ``(EDMD, ...)``).
_CLOSERS = frozenset({")", ";", ",", ":"})


@dataclass(frozen=True)
class Definition:
    """A short form the text defines: its words, the long form's type and the sentence that defines it."""

    short: tuple[str, ...]
    label: str
    sentence: int


def o_words(gold: Iterable[Corpus]) -> frozenset[str]:
    """The words the ``gold`` sentences tag ``O``, as spelt: a short form spelt like one is never labelled."""
    return frozenset(
        token for corpus in gold for s in corpus for token, tag in zip(s.tokens, s.tags, strict=True) if tag == "O"
    )


def _prose(tokens: Sequence[str]) -> str:
    """The sentence as prose writes it, brackets and hyphens against their words (the algorithm looks for `` (``
    and counts a short form's words by spaces)."""
    return " ".join(tokens).replace("( ", "(").replace(" )", ")").replace(" - ", "-")


def short_form_pairs(tokens: Sequence[str]) -> dict[str, str]:
    """``{short form: long form}`` of the pairs the Schwartz–Hearst algorithm finds in a tokenized sentence, each
    as prose writes it."""
    from abbreviations.schwartz_hearst import extract_abbreviation_definition_pairs

    if "(" not in tokens:
        return {}
    return extract_abbreviation_definition_pairs(doc_text=_prose(tokens))


def _squeezed(text: str) -> str:
    return "".join(text.split())


def _run_at(tokens: Sequence[str], start: int, squeezed: str) -> int | None:
    """The end of the words from ``start`` that spell ``squeezed`` (spaces aside), if they do."""
    spelt = ""
    for end in range(start, len(tokens)):
        spelt += tokens[end]
        if spelt == squeezed:
            return end + 1
        if not squeezed.startswith(spelt):
            return None
    return None


class AbbreviationLabeller:
    """``labeller``'s spans, and the short forms the text defines after a long form it marks, labelled with the long
    form's type in every sentence of the defining one's document (:attr:`documents`: each sentence's document
    number; ``None``: the ``window`` sentences either side). A short form the document defines with two types, one
    spelt like a word of ``common_words`` (:func:`o_words`) or a function word, is left alone. Answers a whole text
    at once (:meth:`spans_many`); :attr:`definitions` and :attr:`added` count what its last call found."""

    def __init__(
        self,
        labeller: Labeller,
        *,
        documents: Sequence[int] | None = None,
        window: int = DEFAULT_WINDOW,
        common_words: Collection[str] = (),
    ) -> None:
        if window < 0:
            raise ValueError(f"window must be >= 0, got {window}")
        self.labeller = labeller
        self.documents = documents
        self.window = window
        self.common_words = frozenset(common_words)
        self.definitions: list[Definition] = []
        self.added = 0

    def spans(self, tokens: Sequence[str]) -> list[Span]:
        """One sentence read alone: its own definitions only."""
        return self.spans_many([tokens])[0]

    def spans_many(self, sentences: Sequence[Sequence[str]]) -> list[list[Span]]:
        """Each sentence's spans: the wrapped labeller's, then each defined short form's that overlaps none."""
        if self.documents is not None and len(self.documents) != len(sentences):
            raise ValueError(f"{len(self.documents)} document numbers for {len(sentences)} sentences")
        found = spans_of(self.labeller, sentences)
        self.definitions = [d for i, tokens in enumerate(sentences) for d in self._defined(i, tokens, found[i])]
        self.added = 0
        by_sentence: dict[int, dict[tuple[str, ...], set[str]]] = {}
        for definition in self.definitions:
            for k in self._scope(definition.sentence, len(sentences)):
                by_sentence.setdefault(k, {}).setdefault(definition.short, set()).add(definition.label)
        for k, shorts in by_sentence.items():
            added = [
                Span(start, end, next(iter(labels)))
                for short, labels in shorts.items()
                if len(labels) == 1
                for start, end in self._uses(sentences[k], short)
            ]
            before = len(found[k])
            found[k] = joined_spans(found[k], _apart(added))
            self.added += len(found[k]) - before
        return found

    def _defined(self, index: int, tokens: Sequence[str], spans: Sequence[Span]) -> list[Definition]:
        definitions = []
        for short, long in short_form_pairs(tokens).items():
            where = self.located(tokens, short, long)
            if where is None or not self._usable(tokens[where[1] + 1 : where[2]]):
                continue
            long_start, bracket, _ = where
            label = next((s.label for s in spans if s.end == bracket and s.start >= long_start), None)
            if label is not None:
                definitions.append(Definition(tuple(tokens[bracket + 1 : where[2]]), label, index))
        return definitions

    @staticmethod
    def located(tokens: Sequence[str], short: str, long: str) -> tuple[int, int, int] | None:
        """``(long form's start, its bracket, the short form's end)`` of a pair :func:`short_form_pairs` found, as
        ``long (short`` stands in ``tokens`` (spaces aside)."""
        short, long = _squeezed(short), _squeezed(long)
        for bracket, token in enumerate(tokens):
            if token != "(":
                continue
            end = _run_at(tokens, bracket + 1, short)
            if end is None or (end < len(tokens) and tokens[end] not in _CLOSERS):
                continue
            for start in range(bracket - 1, -1, -1):
                if _run_at(tokens, start, long) == bracket:
                    return start, bracket, end
        return None

    def _usable(self, short: Sequence[str]) -> bool:
        spelt = "".join(short)
        if not any(c.isalpha() for c in spelt) or len(spelt) < 2:
            return False
        # as spelt: the uses are matched as spelt, so ``NO`` (nitric oxide) is not the word ``no``
        return spelt not in self.common_words and spelt not in FUNCTION_WORDS

    def _scope(self, index: int, count: int) -> range | list[int]:
        if self.documents is None:
            return range(max(0, index - self.window), min(count, index + self.window + 1))
        document = self.documents[index]
        first = index
        while first > 0 and self.documents[first - 1] == document:
            first -= 1
        last = index
        while last + 1 < count and self.documents[last + 1] == document:
            last += 1
        return range(first, last + 1)

    @staticmethod
    def _uses(tokens: Sequence[str], short: tuple[str, ...]) -> list[tuple[int, int]]:
        size = len(short)
        return [(i, i + size) for i in range(len(tokens) - size + 1) if tuple(tokens[i : i + size]) == short]


def _apart(spans: Sequence[Span]) -> list[Span]:
    """``spans`` without those that overlap an earlier one (two short forms over the same words)."""
    kept: list[Span] = []
    for span in sorted(spans, key=lambda s: (s.start, -s.end)):
        if not kept or span.start >= kept[-1].end:
            kept.append(span)
    return kept
