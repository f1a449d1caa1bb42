"""ECG-QALM's whole datasets: ``generate_dataset`` loads a trained generator as an
:class:`~hf_ecg.synthetic.ecg_qalm.ECGSource` and writes its samples with the one writer
(:mod:`hf_ecg.synthetic.writer`: the folder's layout, shards, resume and finishing), which ``load_dataset`` reads.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

from ..data.corpus import Corpus
from ..data.groups import Balance
from ..runtime.decoding import DecodingConfig
from ..runtime.decoding_config import Phrase
from ..runtime.mention_sources import Mentions
from .balance import balance_setting
from .ecg_qalm import ECGSource
from .run_config import DatasetRunConfig
from .writer import prepare_folder, write_samples

__all__ = ["DatasetRunConfig", "generate_dataset"]


def generate_dataset(
    model: str | os.PathLike,
    output_dir: str | os.PathLike,
    num_samples: int,
    *,
    sampler: str = "gold",
    entities: Sequence[Sequence[str | Phrase]] | None = None,
    mentions: Mentions | None = None,
    corpus: str | os.PathLike | None = None,
    seed: int = 0,
    decoding: DecodingConfig | None = None,
    run: DatasetRunConfig | None = None,
    silver: Corpus | None = None,
    balance: Balance | None = None,
) -> Path:
    """Generate ``num_samples`` labelled sentences with a trained ECG model into ``output_dir``.

    Args:
        model: folder or Hub id of a model trained by hf_ecg.
        sampler: which entity sequences to ask for (``gold``, ``urg``, ``uniform``), from the training
            statistics saved with the model (or from ``corpus``). Ignored when ``entities`` is given.
        entities: explicit requests, cycled over the sample ids: entity sequences, whose pieces may also be
            :class:`~hf_ecg.runtime.decoding_config.Phrase` objects, written exactly where they stand (the manifest
            records them as ``{"phrase": words}``).
        mentions: where the mentions come from (:data:`~hf_ecg.runtime.mention_sources.Mentions`: the bank, lists,
            a :class:`~hf_ecg.labelling.dictionary.Dictionary` or the names the user's text holds, a mixture);
            default (``None``): ``"generated"`` (each slot's mention written by the generator in its sentence; the
            manifest's ``mention_writing`` counts the slots written and the tries rejected) for a model trained
            with mention samples, else ``"random"`` from the training mention bank.
        corpus: the training corpus, for mentions and statistics when the model does not carry them.
        seed: the same seed and settings give the same dataset, whatever the number of processes.
        decoding: sampling settings and limits (its ``seed`` is ignored: shards derive theirs).
        run: how the generator is loaded and the folder written (:class:`DatasetRunConfig`: shard size,
            overwrite, progress bar, dtype, remote code, label order, card fields, the resume command).
        silver: silver sentences (the user's text labelled by their dictionary:
            :meth:`~hf_ecg.labelling.dictionary.Dictionary.label`), written as the folder's ``silver`` split
            (:mod:`hf_ecg.data.silver`).
        balance: a :class:`~hf_ecg.data.groups.Balance`: the set's mentions of its type are refilled from the
            group table so that each group gets its share (:mod:`hf_ecg.synthetic.balance`); a type the generator
            does not write is refused before its weights load.

    The progress bar shows the tokens kept, drawn and redrawn; the finished run's manifest records what it cost
    (:func:`~hf_ecg.synthetic.generation_report.generation_cost`), and the log warns when the generator looks
    undertrained.

    ``output_dir`` must be new, empty or a dataset hf_ecg wrote (``FileExistsError`` before any work otherwise).
    Returns it; ``datasets.load_dataset(str(output_dir), split="train")`` reads it.
    """
    from accelerate import PartialState

    run = run or DatasetRunConfig()
    if balance is not None:  # its config alone, before the weights load
        from ..runtime.ecg_config import ECGConfig

        balance_setting(balance, ECGConfig.from_pretrained(model).entity_types)
    shards = prepare_folder(Path(output_dir), num_samples, run)
    source = ECGSource.load(
        model, corpus, entities, sampler, mentions, decoding or DecodingConfig(), run, PartialState().device
    )
    return write_samples(source, shards, seed=seed, run=run, silver=silver, balance=balance)
