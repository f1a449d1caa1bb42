"""Tag schemes (IOB2/BIO, IOB1, BIOES) and entity spans.

Every reader turns its tags into :class:`Span` lists with :func:`tags_to_spans`;
everything downstream works on spans and writes IOB2 with :func:`spans_to_tags`.
Malformed sequences are repaired (and counted) unless ``strict`` is set, in
which case a :class:`TagError` names the offending position.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

__all__ = [
    "SCHEMES",
    "Span",
    "TagError",
    "detect_scheme",
    "marked",
    "normalize_scheme",
    "parse_tag",
    "spans_to_tags",
    "tags_to_spans",
    "text_spans",
]

#: Canonical scheme names; aliases are accepted by :func:`normalize_scheme`.
SCHEMES = ("IOB2", "IOB1", "BIOES")
_SCHEME_ALIASES = {
    "iob2": "IOB2",
    "bio": "IOB2",
    "iob": "IOB2",
    "iob1": "IOB1",
    "bioes": "BIOES",
    "iobes": "BIOES",
    "bilou": "BIOES",
}
_PREFIX_ALIASES = {"L": "E", "U": "S"}  # BILOU spelling of BIOES
_TAG_RE = re.compile(r"^([BIESLU])[-_](\S+)$")


class TagError(ValueError):
    """A tag or tag sequence that cannot be read; ``position`` is the 0-based token index, if known."""

    def __init__(self, message: str, position: int | None = None) -> None:
        super().__init__(message)
        self.position = position


@dataclass(frozen=True, order=True)
class Span:
    """An entity mention: tokens ``start`` (inclusive) to ``end`` (exclusive) of type ``label``."""

    start: int
    end: int
    label: str


def normalize_scheme(scheme: str) -> str:
    """Return the canonical name (``IOB2``, ``IOB1`` or ``BIOES``) of a scheme name or alias."""
    try:
        return _SCHEME_ALIASES[scheme.lower()]
    except KeyError:
        raise ValueError(
            f"unknown tag scheme {scheme!r}; known: {', '.join(SCHEMES)} "
            f"(aliases: {', '.join(sorted(_SCHEME_ALIASES))})"
        ) from None


def parse_tag(tag: str) -> tuple[str, str | None]:
    """Split a tag into ``(prefix, label)``: ``"B-Disease"`` → ``("B", "Disease")``, ``"O"`` → ``("O", None)``.

    BILOU prefixes ``L``/``U`` map to ``E``/``S``. Raises :class:`TagError` on anything else.
    """
    if tag == "O":
        return "O", None
    match = _TAG_RE.match(tag)
    if match is None:
        raise TagError(f"malformed tag {tag!r}: expected 'O' or PREFIX-TYPE with PREFIX in B, I, E, S")
    prefix, label = match.groups()
    return _PREFIX_ALIASES.get(prefix, prefix), label


def detect_scheme(tag_sequences: Iterable[Sequence[str]]) -> str:
    """Guess the scheme of a corpus from its tag sequences.

    ``E-``/``S-`` prefixes mean BIOES. Otherwise, counting spans that begin after ``O``
    or a span of another type, the corpus is IOB1 when most begin with ``I-`` (IOB1 uses
    ``B-`` only between two adjacent spans of one type) and IOB2 when most begin with
    ``B-`` (a stray ``I-`` start is then a repairable error).
    """
    b_starts = i_starts = 0
    for tags in tag_sequences:
        previous_label = None
        for tag in tags:
            prefix, label = parse_tag(tag)
            if prefix in ("E", "S"):
                return "BIOES"
            # Only starts after O or another type tell the schemes apart: between two
            # adjacent spans of one type both use B-.
            if label != previous_label:
                if prefix == "B":
                    b_starts += 1
                elif prefix == "I":
                    i_starts += 1
            previous_label = label
    return "IOB1" if i_starts > b_starts else "IOB2"


def tags_to_spans(tags: Sequence[str], scheme: str = "IOB2", *, strict: bool = False) -> tuple[list[Span], list[int]]:
    """Decode a tag sequence into spans.

    Returns ``(spans, repairs)``: ``repairs`` lists the 0-based positions of tags that
    did not fit the scheme and were read as the start (or end) of a span, e.g. an IOB2
    ``I-X`` after ``O`` becomes ``B-X``. With ``strict=True`` the first such tag raises
    :class:`TagError` (with its ``position``) instead.
    """
    scheme = normalize_scheme(scheme)
    spans: list[Span] = []
    repairs: list[int] = []
    start: int | None = None  # start of the open span
    open_label: str | None = None

    def close(end: int) -> None:
        nonlocal start, open_label
        if start is not None:
            spans.append(Span(start, end, open_label))  # type: ignore[arg-type]
        start, open_label = None, None

    def repair(position: int, message: str, lenient: str = "") -> None:
        if strict:  # rejected: say so, and how a lenient read would have taken it
            how = f"; without strict it is read as {lenient}" if lenient else ""
            raise TagError(f"token {position + 1}: {message} ({scheme}); rejected by the strict reading{how}", position)
        repairs.append(position)

    for i, tag in enumerate(tags):
        try:
            prefix, label = parse_tag(tag)
        except TagError as err:
            raise TagError(f"token {i + 1}: {err}", i) from None
        continues = start is not None and label == open_label
        if prefix == "O":
            if scheme == "BIOES" and start is not None:
                repair(i - 1, f"span of type {open_label!r} not closed with E- or S-")
            close(i)
        elif prefix == "B":
            if scheme == "BIOES" and start is not None:
                repair(i - 1, f"span of type {open_label!r} not closed with E- or S-")
            close(i)
            start, open_label = i, label
        elif prefix == "I":
            if continues:
                continue
            if scheme == "IOB1":
                close(i)
                start, open_label = i, label
                continue
            if scheme == "BIOES" and start is not None:
                repair(i - 1, f"span of type {open_label!r} not closed with E- or S-")
            repair(i, f"{tag!r} does not continue a span", f"B-{label}")
            close(i)
            start, open_label = i, label
        elif prefix in ("E", "S"):
            if scheme != "BIOES":
                raise TagError(f"token {i + 1}: {tag!r} is a BIOES tag in a {scheme} sequence", i)
            if prefix == "E" and continues:
                close(i + 1)
                continue
            if start is not None:
                repair(i - 1, f"span of type {open_label!r} not closed with E- or S-")
            if prefix == "E":
                repair(i, f"{tag!r} ends a span that never began", f"S-{label}")
            close(i)
            spans.append(Span(i, i + 1, label))
    if start is not None and scheme == "BIOES":
        repair(len(tags) - 1, f"span of type {open_label!r} not closed with E- or S-")
    close(len(tags))
    return spans, repairs


def spans_to_tags(spans: Iterable[Span], length: int, scheme: str = "IOB2") -> list[str]:
    """Encode non-overlapping spans over ``length`` tokens as tags of ``scheme``."""
    scheme = normalize_scheme(scheme)
    tags = ["O"] * length
    previous: Span | None = None
    for span in sorted(spans):
        if span.start < 0 or span.end > length or span.start >= span.end:
            raise ValueError(f"span {span} does not fit in {length} tokens")
        if previous is not None and span.start < previous.end:
            raise ValueError(f"spans {previous} and {span} overlap")
        width = span.end - span.start
        if scheme == "BIOES":
            if width == 1:
                tags[span.start] = f"S-{span.label}"
            else:
                tags[span.start] = f"B-{span.label}"
                tags[span.start + 1 : span.end - 1] = [f"I-{span.label}"] * (width - 2)
                tags[span.end - 1] = f"E-{span.label}"
        else:
            first = "B"
            if scheme == "IOB1":
                adjacent_same = previous is not None and previous.end == span.start and previous.label == span.label
                first = "B" if adjacent_same else "I"
            tags[span.start] = f"{first}-{span.label}"
            tags[span.start + 1 : span.end] = [f"I-{span.label}"] * (width - 1)
        previous = span
    return tags


def replace_mention(
    tokens: Sequence[str], tags: Sequence[str], span: Span, words: Sequence[str]
) -> tuple[list[str], list[str]]:
    """``tokens`` with the mention ``span`` replaced by ``words`` (labelled ``span.label``), and the IOB2 ``tags`` to
    match: what a balance, a counterfactual swap and a relabelled span all do to a sentence."""
    new_tags = [f"B-{span.label}", *[f"I-{span.label}"] * (len(words) - 1)]
    return (
        [*tokens[: span.start], *words, *tokens[span.end :]],
        [*tags[: span.start], *new_tags, *tags[span.end :]],
    )


def text_spans(tokens: Sequence[str], spans: Iterable[Span]) -> list[dict[str, Any]]:
    """Each entity as character offsets into ``" ".join(tokens)`` (the ``text`` column) and its type:
    ``[{"start": 0, "end": 7, "label": "Chemical"}]``, the form Gradio's ``HighlightedText``, Argilla and
    span-based taggers take; ``text[start:end]`` is the mention."""
    starts, position = [], 0
    for token in tokens:
        starts.append(position)
        position += len(token) + 1
    return [
        {"start": starts[span.start], "end": starts[span.end - 1] + len(tokens[span.end - 1]), "label": span.label}
        for span in spans
    ]


def marked(tokens: Sequence[str], tags: Sequence[str]) -> str:
    """The sentence with each entity of its IOB2 ``tags`` marked: ``[Chemical: aspirin] cures [Disease: headache]``
    (how samples are read with their labels)."""
    words = list(tokens)
    for span in reversed(tags_to_spans(list(tags), "IOB2")[0]):
        words[span.start : span.end] = [f"[{span.label}: {' '.join(tokens[span.start : span.end])}]"]
    return " ".join(words)
