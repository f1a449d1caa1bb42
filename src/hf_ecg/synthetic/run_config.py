"""How a :func:`~hf_ecg.synthetic.generate.generate_dataset` run loads its generator and writes its folder
(:class:`DatasetRunConfig`), apart from what it writes (the requests, the mentions, the decoding settings)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..hub.dataset_card import DatasetCardFields

__all__ = ["DatasetRunConfig"]


@dataclass(frozen=True)
class DatasetRunConfig:
    """How a generation run loads its generator and writes its folder.

    Args:
        samples_per_shard: rows per Parquet shard; the unit of resuming.
        overwrite: delete a previous dataset with other settings in the output folder instead of refusing.
        progress_bar: show the tokens kept, drawn and redrawn as the shards are written.
        dtype: ``auto`` (bfloat16 where the hardware computes it natively,
            :func:`~hf_ecg.modeling.inference_dtype`, float32 elsewhere), ``float32`` or ``bfloat16``; the one used
            is recorded in the manifest.
        trust_remote_code: let a generator from the Hub run its own code (only for a repository you trust).
        label_names: the ``ner_tags`` ClassLabel names in the order of the gold dataset the samples are to be
            mixed with (:func:`~hf_ecg.data.dataset_format.ner_label_names`); default: the order the generator's
            training corpus had when it was a ``ClassLabel`` dataset, else sorted BIO labels.
        card_fields: what the ``README.md`` card written when the run completes says of the set beyond what its
            folder tells (:class:`~hf_ecg.hub.dataset_card.DatasetCardFields`: license, language, source, title).
        resume_command: how to resume the run, shown by the readers of an unfinished folder (the CLI gives its
            command line; default: "the same generate_dataset call").
    """

    samples_per_shard: int = 256
    overwrite: bool = False
    progress_bar: bool = True
    dtype: str = "auto"
    trust_remote_code: bool = False
    label_names: Sequence[str] | None = None
    card_fields: DatasetCardFields | None = None
    resume_command: str | None = None

    def __post_init__(self) -> None:
        if self.samples_per_shard < 1:
            raise ValueError(f"samples_per_shard must be >= 1, got {self.samples_per_shard}")
