"""Corpus statistics: what the generator learns from and samples from later."""

from __future__ import annotations

import json
import os
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..runtime.files import read_json
from ..runtime.mentions import MentionBank
from .corpus import Corpus

__all__ = ["CorpusStatistics"]


@dataclass
class CorpusStatistics:
    """Counts of a corpus: sentences, entities, blocks, entity types, entity sequences, mentions.

    ``sequence_counts`` maps each entity sequence (a tuple of types, possibly empty) to the
    number of sentences that have it: the distribution the gold-mimic sampler draws from.
    """

    name: str
    scheme: str
    num_sentences: int
    num_tokens: int
    num_entities: int
    num_blocks: int
    num_repairs: int
    entity_type_counts: dict[str, int]
    sequence_counts: Counter[tuple[str, ...]] = field(default_factory=Counter)
    mention_bank_sizes: dict[str, dict[str, int]] = field(default_factory=dict)

    @classmethod
    def from_corpus(cls, corpus: Corpus, mention_bank: MentionBank | None = None) -> CorpusStatistics:
        """Count everything in one pass over ``corpus``."""
        type_counts: Counter[str] = Counter()
        sequences: Counter[tuple[str, ...]] = Counter()
        for sentence in corpus:
            type_counts.update(sentence.entity_types)
            sequences[sentence.entity_types] += 1
        num_entities = sum(type_counts.values())
        bank = mention_bank if mention_bank is not None else MentionBank.from_sentences(corpus)
        return cls(
            name=corpus.name,
            scheme=corpus.scheme,
            num_sentences=len(corpus),
            num_tokens=sum(len(s.tokens) for s in corpus),
            num_entities=num_entities,
            num_blocks=num_entities + len(corpus),
            num_repairs=corpus.repairs,
            entity_type_counts=dict(sorted(type_counts.items())),
            sequence_counts=sequences,
            mention_bank_sizes=bank.sizes(),
        )

    @property
    def entity_types(self) -> list[str]:
        """Sorted entity types."""
        return list(self.entity_type_counts)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form; entity sequences most frequent first."""
        return {
            "name": self.name,
            "scheme": self.scheme,
            "num_sentences": self.num_sentences,
            "num_tokens": self.num_tokens,
            "num_entities": self.num_entities,
            "num_blocks": self.num_blocks,
            "num_repairs": self.num_repairs,
            "entity_types": self.entity_types,
            "entity_type_counts": self.entity_type_counts,
            "mention_bank_sizes": self.mention_bank_sizes,
            "entity_sequences": [
                {"entities": list(seq), "count": count}
                for seq, count in sorted(self.sequence_counts.items(), key=lambda kv: (-kv[1], kv[0]))
            ],
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> CorpusStatistics:
        """Inverse of :meth:`to_dict`."""
        return cls(
            name=data["name"],
            scheme=data["scheme"],
            num_sentences=data["num_sentences"],
            num_tokens=data["num_tokens"],
            num_entities=data["num_entities"],
            num_blocks=data["num_blocks"],
            num_repairs=data["num_repairs"],
            entity_type_counts=dict(data["entity_type_counts"]),
            sequence_counts=Counter({tuple(e["entities"]): e["count"] for e in data["entity_sequences"]}),
            mention_bank_sizes=dict(data["mention_bank_sizes"]),
        )

    def save(self, path: str | os.PathLike) -> None:
        """Write :meth:`to_dict` as indented JSON."""
        Path(path).write_text(json.dumps(self.to_dict(), indent=2, ensure_ascii=False) + "\n", encoding="utf-8")

    @classmethod
    def load(cls, path: str | os.PathLike) -> CorpusStatistics:
        """Read a file written by :meth:`save`."""
        return cls.from_dict(read_json(path, "corpus statistics"))

    def summary(self) -> str:
        """A few human-readable lines."""
        width = max((len(t) for t in self.entity_types), default=4)
        lines = [
            f"{self.name}: {self.num_sentences} sentences, {self.num_tokens} tokens, "
            f"{self.num_entities} entities, {self.num_blocks} blocks ({self.scheme}"
            + (f", {self.num_repairs} tags repaired" if self.num_repairs else "")
            + ")",
            f"  {'type':<{width}}  entities  distinct mentions",
        ]
        for label, count in self.entity_type_counts.items():
            unique = self.mention_bank_sizes.get(label, {}).get("unique", 0)
            lines.append(f"  {label:<{width}}  {count:>8}  {unique:>17}")
        top = sorted(self.sequence_counts.items(), key=lambda kv: (-kv[1], kv[0]))[:3]
        lines.append(
            f"  {len(self.sequence_counts)} distinct entity sequences; most common: "
            + "; ".join(f"[{', '.join(seq)}] ×{count}" for seq, count in top)
        )
        return "\n".join(lines)
