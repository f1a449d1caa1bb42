"""Entity-sequence samplers: which entity sequences the generator is asked to write.

- ``gold``: the sequence of a random gold sentence (the paper's default).
- ``urg``: under-represented generation (paper, Appendix A.1): each gold sentence is
  weighted by the sum of the inverse corpus frequencies of its entities, so sentences
  with rare types are drawn more often. Entity-free sentences weigh 0.
- ``uniform``: the length of a random gold sequence, each type uniform over all types.
- ``target``: the length of a random gold sequence, each type drawn from a given distribution.
- ``fixed``: explicit sequences, cycled.

All samplers draw from a :class:`random.Random`, so a seed makes them reproducible.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Protocol

from ..data.statistics import CorpusStatistics

__all__ = [
    "SAMPLERS",
    "STATISTICS_SAMPLERS",
    "EntitySequenceSampler",
    "FixedSampler",
    "GoldSampler",
    "TargetDistributionSampler",
    "UnderRepresentedSampler",
    "UniformSampler",
    "make_sampler",
]

EntitySequence = tuple[str, ...]
SAMPLERS = ("gold", "urg", "uniform", "target", "fixed")
#: The samplers that need nothing but the corpus statistics (``hf-ecg generate --sampler``).
STATISTICS_SAMPLERS = SAMPLERS[:3]


class EntitySequenceSampler(Protocol):
    """Anything that draws ``n`` entity sequences from a random generator."""

    def sample(self, n: int, rng: random.Random) -> list[EntitySequence]: ...


def _check_known(types: Sequence[str], known: Sequence[str]) -> None:
    unknown = sorted(set(types) - set(known))
    if unknown:
        raise ValueError(f"unknown entity type(s) {unknown}; known types: {', '.join(sorted(known))}")


class _WeightedSequences:
    """Draw from ``sequences`` with ``weights`` (cumulative weights computed once)."""

    def __init__(self, sequences: Sequence[EntitySequence], weights: Sequence[float]) -> None:
        if not sequences or sum(weights) <= 0:
            raise ValueError("nothing to sample from: no sequence has positive weight")
        self.sequences = list(sequences)
        self.cum_weights = []
        total = 0.0
        for weight in weights:
            total += weight
            self.cum_weights.append(total)

    def sample(self, n: int, rng: random.Random) -> list[EntitySequence]:
        return rng.choices(self.sequences, cum_weights=self.cum_weights, k=n)


class GoldSampler(_WeightedSequences):
    """The entity sequence of a random gold sentence: mimics the gold distribution exactly."""

    def __init__(self, sequence_counts: Mapping[EntitySequence, int]) -> None:
        items = sorted(sequence_counts.items())
        super().__init__([s for s, _ in items], [c for _, c in items])


class UnderRepresentedSampler(_WeightedSequences):
    """Paper Appendix A.1: weight each gold sentence by the summed inverse frequencies of its entities."""

    def __init__(self, sequence_counts: Mapping[EntitySequence, int]) -> None:
        type_counts: Counter[str] = Counter()
        for sequence, count in sequence_counts.items():
            for label in sequence:
                type_counts[label] += count
        items = sorted(sequence_counts.items())
        weights = [count * sum(1.0 / type_counts[label] for label in seq) for seq, count in items]
        super().__init__([s for s, _ in items], weights)


class _LengthFromGold:
    def __init__(self, sequence_counts: Mapping[EntitySequence, int]) -> None:
        lengths: Counter[int] = Counter()
        for sequence, count in sequence_counts.items():
            lengths[len(sequence)] += count
        self.lengths = sorted(lengths)
        self.length_weights = [lengths[n] for n in self.lengths]

    def _lengths(self, n: int, rng: random.Random) -> list[int]:
        return rng.choices(self.lengths, weights=self.length_weights, k=n)


class UniformSampler(_LengthFromGold):
    """Gold length distribution; every position's type uniform over ``types``."""

    def __init__(self, sequence_counts: Mapping[EntitySequence, int], types: Sequence[str]) -> None:
        super().__init__(sequence_counts)
        if not types:
            raise ValueError("uniform sampling needs at least one entity type")
        self.types = sorted(types)

    def sample(self, n: int, rng: random.Random) -> list[EntitySequence]:
        return [tuple(rng.choice(self.types) for _ in range(k)) for k in self._lengths(n, rng)]


class TargetDistributionSampler(_LengthFromGold):
    """Gold length distribution; every position's type drawn from ``distribution`` (weights, normalised)."""

    def __init__(
        self,
        sequence_counts: Mapping[EntitySequence, int],
        distribution: Mapping[str, float],
        known_types: Sequence[str] | None = None,
    ) -> None:
        super().__init__(sequence_counts)
        if known_types is not None:
            _check_known(list(distribution), known_types)
        if any(w < 0 for w in distribution.values()) or sum(distribution.values()) <= 0:
            raise ValueError(
                f"target distribution needs non-negative weights with a positive sum: {dict(distribution)}"
            )
        self.types = sorted(distribution)
        self.weights = [distribution[t] for t in self.types]

    def sample(self, n: int, rng: random.Random) -> list[EntitySequence]:
        return [tuple(rng.choices(self.types, weights=self.weights, k=k)) for k in self._lengths(n, rng)]


class FixedSampler:
    """Explicit sequences, cycled in order (``sample`` ignores the generator)."""

    def __init__(self, sequences: Sequence[Sequence[str]], known_types: Sequence[str] | None = None) -> None:
        if not sequences:
            raise ValueError("give at least one entity sequence")
        self.sequences = [tuple(s) for s in sequences]
        if known_types is not None:
            _check_known([t for s in self.sequences for t in s], known_types)
        self._next = 0

    def sample(self, n: int, rng: random.Random) -> list[EntitySequence]:
        out = [self.sequences[(self._next + i) % len(self.sequences)] for i in range(n)]
        self._next = (self._next + n) % len(self.sequences)
        return out


def make_sampler(
    name: str,
    stats: CorpusStatistics,
    *,
    distribution: Mapping[str, float] | None = None,
    sequences: Sequence[Sequence[str]] | None = None,
) -> EntitySequenceSampler:
    """Build the sampler ``name`` (one of :data:`SAMPLERS`) from a corpus' statistics."""
    if name == "gold":
        return GoldSampler(stats.sequence_counts)
    if name == "urg":
        return UnderRepresentedSampler(stats.sequence_counts)
    if name == "uniform":
        return UniformSampler(stats.sequence_counts, stats.entity_types)
    if name == "target":
        if distribution is None:
            raise ValueError("the 'target' sampler needs a distribution {type: weight}")
        return TargetDistributionSampler(stats.sequence_counts, distribution, stats.entity_types)
    if name == "fixed":
        if sequences is None:
            raise ValueError("the 'fixed' sampler needs explicit entity sequences")
        return FixedSampler(sequences, stats.entity_types)
    raise ValueError(f"unknown sampler {name!r}; known: {', '.join(SAMPLERS)}")
