"""Sketches (GENIUS): a sentence's entities and key phrases in their order, every other run of words one gap.

A :class:`Sketch` is made from a :class:`~hf_ecg.runtime.blocks.Template` (its tags stand for the entities) and the
indices of the words it keeps (:meth:`Sketch.of`): chosen over token indices, never by searching strings, so a kept
``AT`` is that word and not the start of ``ATM``. Its text is its pieces joined by spaces, tags as ``<Type>`` and each
gap one :data:`GAP_TOKEN`; :meth:`Sketch.parse` reads it back exactly. A sketch generator is given a sketch and writes
a template that :meth:`Sketch.fits`: the same tags in order, each kept word where the sketch keeps it, any words (or
none) in each gap. Like a template, a sketch is cut after every tag into blocks (:meth:`Sketch.blocks`); the question of
block ``k`` is the sketch from that block on (:meth:`Sketch.questions`), so a block is written knowing what the rest of
the sentence keeps.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from .blocks import ENDTEXT, GAP_TOKEN, MENTION_TOKEN, SEGMENT_TOKENS, Template, tag_label, tag_token

__all__ = ["GAP_TOKEN", "Sketch"]


@dataclass(frozen=True)
class Sketch:
    """A template's tags and kept words in their order, each run of other words one :data:`GAP_TOKEN` (never two
    gaps in a row). ``ValueError`` for no pieces, two gaps in a row, a piece with a space, or structure (``<ENDTEXT>``,
    a segment token) among the pieces."""

    pieces: tuple[str, ...]

    def __post_init__(self) -> None:
        if isinstance(self.pieces, str) or not self.pieces:
            raise ValueError(f"a sketch is a non-empty tuple of pieces, got {self.pieces!r}")
        for before, piece in zip((None, *self.pieces), self.pieces, strict=False):
            if not isinstance(piece, str) or not piece or len(piece.split()) != 1:
                raise ValueError(f"a sketch's pieces are words without spaces, got {piece!r}")
            if piece in (ENDTEXT, MENTION_TOKEN, *SEGMENT_TOKENS):
                raise ValueError(f"{piece} is structure, not a piece of a sketch")
            if piece == before == GAP_TOKEN:
                raise ValueError(f"a sketch has one gap marker per gap, got two in a row in {' '.join(self.pieces)}")

    @classmethod
    def of(cls, template: Template, kept: Iterable[int] = ()) -> Sketch:
        """The sketch of ``template`` keeping its tags and the words at the indices ``kept`` (of ``template.tokens``;
        an index of a tag or out of range is refused)."""
        kept = set(kept)
        wrong = sorted(i for i in kept if not 0 <= i < len(template.tokens) or tag_label(template.tokens[i]))
        if wrong:
            raise ValueError(f"kept indices {wrong} are not words of the template: {template}")
        pieces: list[str] = []
        for index, token in enumerate(template.tokens):
            if index in kept or tag_label(token) is not None:
                pieces.append(token)
            elif not pieces or pieces[-1] != GAP_TOKEN:
                pieces.append(GAP_TOKEN)
        return cls(tuple(pieces) or (GAP_TOKEN,))

    @classmethod
    def parse(cls, text: str) -> Sketch:
        """The sketch whose text is ``text`` (the inverse of ``str``)."""
        return cls(tuple(text.split()))

    def __str__(self) -> str:
        return " ".join(self.pieces)

    @classmethod
    def of_types(cls, entity_types: Iterable[str]) -> Sketch:
        """The sketch of a plain entity sequence: its tags, a gap around each (what a sketch generator is asked for
        an ECG request)."""
        return cls((GAP_TOKEN, *(piece for label in entity_types for piece in (tag_token(label), GAP_TOKEN))))

    @property
    def entity_types(self) -> tuple[str, ...]:
        """The types of its tags, in order: the entity sequence a sample of it holds."""
        return tuple(label for label in map(tag_label, self.pieces) if label is not None)

    @property
    def kept_words(self) -> tuple[str, ...]:
        """Its words that are neither tags nor gaps."""
        return tuple(p for p in self.pieces if p != GAP_TOKEN and tag_label(p) is None)

    def blocks(self) -> list[tuple[str, ...]]:
        """Cut after every tag; the final block is what follows the last tag plus ``<ENDTEXT>`` (as
        :meth:`Template.blocks`): ``len(entity_types) + 1`` blocks."""
        blocks: list[tuple[str, ...]] = []
        current: list[str] = []
        for piece in self.pieces:
            current.append(piece)
            if tag_label(piece) is not None:
                blocks.append(tuple(current))
                current = []
        blocks.append((*current, ENDTEXT))
        return blocks

    def questions(self) -> list[str]:
        """The question of each block: the sketch from that block on, ``<ENDTEXT>`` last."""
        blocks = self.blocks()
        return [" ".join(piece for block in blocks[k:] for piece in block) for k in range(len(blocks))]

    def fits(self, template: Template) -> bool:
        """Whether ``template`` is a sentence of this sketch: its tokens are the sketch's tags and kept words in
        order, each run between two gaps (or an end) side by side, and any words (or none) where a gap stands; no
        other tag."""
        if template.entity_types != self.entity_types:
            return False
        runs: list[tuple[str, ...]] = [()]
        for piece in self.pieces:
            if piece == GAP_TOKEN:
                runs.append(())
            else:
                runs[-1] = (*runs[-1], piece)
        tokens = template.tokens
        if len(runs) == 1:  # no gap: the sketch is the whole template
            return tokens == runs[0]
        first, *middle, last = runs
        if tokens[: len(first)] != first or (last and tokens[len(tokens) - len(last) :] != last):
            return False
        start, end = len(first), len(tokens) - len(last)
        for run in middle:  # leftmost match of each run: any later one leaves less room for the rest
            found = next(
                (i for i in range(start, end - len(run) + 1) if tokens[i : i + len(run)] == run),
                None,
            )
            if found is None:
                return False
            start = found + len(run)
        return start <= end
