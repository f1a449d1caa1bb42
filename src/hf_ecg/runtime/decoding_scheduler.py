"""The batched decoder's scheduler: which rows wait for their next prompt, which are encoded and wait for a slot,
which slot holds which row, and the results as samples finish (vLLM's scheduler, for template rows).

A row moves ``waiting`` (its next prompt to encode) → ``ready`` (encoded, its prompt's cache kept) → a slot of the
decode cache → back to ``waiting`` when its block ends or is drawn again, until its last block ends and its
result is stored. New samples are admitted while fewer than twice the batch are in flight, so that a buffer of
ready rows keeps the slots full and the prefills large.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from .decoding_cache import TemplateRow
from .decoding_config import DecodedTemplate

__all__ = ["RowSchedule"]


@dataclass
class RowSchedule:
    """The rows of one decode call over ``sequences`` (entity sequences), ``capacity`` slots at a time."""

    sequences: Sequence[tuple[str, ...]]
    capacity: int
    progress: Callable[[int], None] | None = None
    results: list[DecodedTemplate | None] = field(init=False)
    remaining: int = field(init=False)
    waiting: list[TemplateRow] = field(default_factory=list)  # need their next prompt encoded
    ready: list[TemplateRow] = field(default_factory=list)  # encoded, waiting for a slot
    slots: list[TemplateRow | None] = field(default_factory=list)
    in_flight: int = 0

    def __post_init__(self) -> None:
        self.results = [None] * len(self.sequences)
        self.remaining = len(self.sequences)
        self._upcoming = iter(range(len(self.sequences)))

    def free_slots(self) -> list[int]:
        """The slots without a row, those the cache has not grown to yet included."""
        free = [i for i, row in enumerate(self.slots) if row is None]
        return free + list(range(len(self.slots), self.capacity)) if len(self.slots) < self.capacity else free

    def take_waiting(self) -> list[TemplateRow]:
        """The rows whose next prompt is to be encoded now (the list is emptied)."""
        rows, self.waiting = self.waiting, []
        return rows

    def admit(self, targets: Callable[[tuple[str, ...]], list[int]]) -> list[TemplateRow]:
        """New samples, while fewer than twice the slots are in flight (``targets``: a sequence's block ends)."""
        new = []
        while self.in_flight < 2 * self.capacity:
            index = next(self._upcoming, None)
            if index is None:
                break
            new.append(TemplateRow(index, targets(self.sequences[index])))
            self.in_flight += 1
        return new

    def finish(self, row: TemplateRow, result: DecodedTemplate | None) -> None:
        """A row's block ended: with a ``result``, its sample is done; without, it waits for its next prompt (its
        next block, or the same one drawn again)."""
        if result is None:
            self.waiting.append(row)
            return
        self.results[row.index] = result
        self.in_flight -= 1
        self.remaining -= 1
        if self.progress is not None:
            self.progress(1)
