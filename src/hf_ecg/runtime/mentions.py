"""The mention bank: per entity type, the mentions of a corpus with their counts.

Filling a generated template draws from it: ``random`` (uniform over distinct
mentions, the paper) or ``weighted`` (by corpus frequency).
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import Protocol

__all__ = ["FILL_STRATEGIES", "MentionBank"]

FILL_STRATEGIES = ("random", "weighted")


class HasMentions(Protocol):
    """What :meth:`MentionBank.from_sentences` reads of a sentence (a corpus :class:`~hf_ecg.Sentence`): its
    ``(type, mention tokens)`` pairs. A protocol rather than an import, so that the corpus readers are not
    shipped with every model (this module is remote code: :mod:`hf_ecg.runtime`)."""

    @property
    def mentions(self) -> Iterable[tuple[str, tuple[str, ...]]]: ...


class MentionBank:
    """Mentions per entity type with their counts; mentions are token tuples."""

    def __init__(self, counts: Mapping[str, Mapping[tuple[str, ...], int]] | None = None) -> None:
        self._counts: dict[str, Counter[tuple[str, ...]]] = {
            label: Counter({tuple(m): c for m, c in mentions.items()}) for label, mentions in (counts or {}).items()
        }
        self._lists: dict[str, tuple[list[tuple[str, ...]], list[int]]] = {}

    @classmethod
    def from_sentences(cls, sentences: Iterable[HasMentions]) -> MentionBank:
        """Collect every mention of every sentence."""
        counts: dict[str, Counter[tuple[str, ...]]] = {}
        for sentence in sentences:
            for label, mention in sentence.mentions:
                counts.setdefault(label, Counter())[mention] += 1
        return cls(counts)

    @classmethod
    def from_lists(cls, mentions: Mapping[str, Sequence[str | Sequence[str]]]) -> MentionBank:
        """A bank from a user dict ``{type: [mention, ...]}``; a string mention is split on whitespace."""
        counts: dict[str, Counter[tuple[str, ...]]] = {}
        for label, items in mentions.items():
            bank = counts.setdefault(label, Counter())
            for item in items:
                tokens = tuple(item.split()) if isinstance(item, str) else tuple(item)
                if not tokens:
                    raise ValueError(f"empty mention in the list for {label!r}")
                bank[tokens] += 1
        return cls(counts)

    @property
    def types(self) -> list[str]:
        """Sorted entity types with at least one mention."""
        return sorted(label for label, mentions in self._counts.items() if mentions)

    def __contains__(self, label: object) -> bool:
        return bool(self._counts.get(label))  # type: ignore[call-overload]

    def counts(self, label: str) -> Counter[tuple[str, ...]]:
        """Mention → count for one type (a copy)."""
        return Counter(self._counts.get(label, {}))

    def sizes(self) -> dict[str, dict[str, int]]:
        """Per type: ``unique`` distinct mentions and ``total`` occurrences."""
        return {
            label: {"unique": len(self._counts[label]), "total": sum(self._counts[label].values())}
            for label in self.types
        }

    def sample(self, label: str, rng: random.Random, strategy: str = "random") -> tuple[str, ...]:
        """Draw one mention of ``label``: ``random`` is uniform over distinct mentions,
        ``weighted`` follows their counts."""
        if strategy not in FILL_STRATEGIES:
            raise ValueError(f"unknown fill strategy {strategy!r}; known: {', '.join(FILL_STRATEGIES)}")
        if label not in self:
            raise ValueError(f"no mentions of type {label!r}; known types: {', '.join(self.types) or 'none'}")
        if label not in self._lists:
            items = sorted(self._counts[label].items())  # sorted: draws do not depend on insertion order
            self._lists[label] = ([m for m, _ in items], [c for _, c in items])
        mentions, weights = self._lists[label]
        if strategy == "random":
            return mentions[rng.randrange(len(mentions))]
        return rng.choices(mentions, weights=weights, k=1)[0]

    def to_dict(self) -> dict[str, list[dict[str, object]]]:
        """JSON-ready form: ``{type: [{"mention": "a b", "tokens": [...], "count": n}, ...]}``, most frequent first."""
        return {
            label: [
                {"mention": " ".join(m), "tokens": list(m), "count": c}
                for m, c in sorted(self._counts[label].items(), key=lambda kv: (-kv[1], kv[0]))
            ]
            for label in self.types
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Sequence[Mapping[str, object]]]) -> MentionBank:
        """Inverse of :meth:`to_dict`."""
        return cls({label: {tuple(e["tokens"]): int(e["count"]) for e in entries} for label, entries in data.items()})  # type: ignore[arg-type, call-overload]

    def __eq__(self, other: object) -> bool:
        return isinstance(other, MentionBank) and self._counts == other._counts

    def __repr__(self) -> str:
        sizes = ", ".join(f"{label}: {size['unique']}" for label, size in self.sizes().items())
        return f"MentionBank({sizes})"
