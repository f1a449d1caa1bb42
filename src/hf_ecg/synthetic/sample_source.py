"""What a generator family gives the one writer (:func:`~hf_ecg.synthetic.writer.write_samples`): a
:class:`SampleSource`.

A family (ECG-QALM in :mod:`hf_ecg.synthetic.ecg_qalm`, mention replacement in
:mod:`hf_ecg.synthetic.mention_replacement`) is a source: its requests, its model if it has one, its settings.
The writer does the rest for every family alike: the folder, the shards and their resume, the balance, the silver
split, the manifest and the card. A source writes the columns of :func:`~hf_ecg.data.dataset_format.dataset_features`
less the groups it has nothing for: a family without a decoder writes no decoder statistics
(:data:`~hf_ecg.data.dataset_format.DECODER_COLUMNS`) rather than zeros.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    import datasets

    from ..data.corpus import Corpus
    from ..data.groups import Balance
    from ..data.manifest import GenerationManifest
    from ..runtime.decoding_config import ShardSeeds
    from ..runtime.mention_writer import WrittenMentions
    from ..runtime.mentions import MentionBank
    from .run_config import DatasetRunConfig

__all__ = ["Progress", "SampleSource"]

#: How a source reports its work: ``progress(samples, cost)``, ``cost`` a decoder's
#: :class:`~hf_ecg.runtime.decoding_config.RedrawBudget` so far, or ``None`` for a family without a decoder.
Progress = Callable[[int, Any], None]


class SampleSource(Protocol):
    """A generator family as the writer drives it.

    ``method`` is what the manifest records as the family (``None``: ECG-QALM, as its folders have always
    recorded); ``entity_types`` the types it writes; ``training_bank`` the mentions it learned from or draws
    (the manifest's novelty figure is counted against it; ``None``: not counted); ``redraw_budget`` its decoder's
    budget (``None`` without a decoder); ``writes_mentions`` whether its model writes mentions (the manifest then
    records what writing them cost); ``model`` the generator's folder or Hub id (``None``: no model)."""

    method: str | None
    model: str | None

    @property
    def entity_types(self) -> list[str]: ...

    @property
    def training_bank(self) -> MentionBank | None: ...

    @property
    def redraw_budget(self) -> float | None: ...

    @property
    def writes_mentions(self) -> bool: ...

    def manifest(
        self, num_samples: int, run: DatasetRunConfig, seed: int, silver: Corpus | None, balance: Balance | None
    ) -> GenerationManifest:
        """The run's settings: what a resumed run must repeat."""
        ...

    def features(self, label_names: Sequence[str]) -> datasets.Features:
        """The columns its shards hold."""
        ...

    def shards_written_together(self, samples_per_shard: int) -> int:
        """How many consecutive shards one :meth:`shard_rows` call writes (1 unless batching across shards pays)."""
        ...

    def shard_rows(
        self, shards: Sequence[tuple[range, ShardSeeds]], progress: Progress
    ) -> tuple[list[list[dict[str, Any]]], WrittenMentions | None]:
        """The rows (without ``id``) of each shard ``(ids, seeds)``, seeded by its seeds alone, and what writing
        their mentions cost (``None`` when the source writes none)."""
        ...
