"""The last step of a generation run (:func:`finish_run`): what is done to its shards while they are still
unfinished (the balance, the silver split beside them), the move that makes the folder a dataset, and what the
finished run records and says."""

from __future__ import annotations

import logging
from pathlib import Path

from ..data.corpus import Corpus
from ..data.dataset_format import UNFINISHED_DIR, finish_folder
from ..data.groups import Balance
from ..data.manifest import GenerationManifest, write_manifest
from ..data.silver import write_silver
from ..hub.dataset_card import DatasetCardFields
from ..hub.training_record import undertrained_advice
from ..runtime.mention_writer import WrittenMentions
from .balance import balance_shards, bank_groups
from .generation_report import generation_cost, mention_novelty, mention_origins, result_lines, source_overlap
from .sample_source import SampleSource

__all__ = ["finish_run"]


def finish_run(
    output_dir: Path,
    manifest: GenerationManifest,
    source: SampleSource,
    writing: WrittenMentions,
    resumed: bool,
    card_fields: DatasetCardFields | None,
    silver: Corpus | None,
    balance: Balance | None,
    log: logging.Logger,
) -> None:
    """Balance the shards' mentions and write the silver split while the shards are unfinished, move them into
    ``data/``, record what the run measured in the manifest, say it on ``log`` (the caller's, which a caller may
    quiet), write the card. Each step gives the same files when run again, so a run killed at any step resumes to
    the folder a run never killed writes."""
    from ..hub.dataset_card import write_dataset_card

    bank = source.training_bank
    reached = None
    if balance is not None:  # while the shards are unfinished: a run killed here resumes and balances them whole
        shards = sorted(
            [*(output_dir / UNFINISHED_DIR).glob("*.parquet"), *(output_dir / "data").glob("*.parquet")],
            key=lambda shard: shard.name,
        )
        dealt = balance_shards(shards, balance, manifest.seed or 0)
        reached = {"gold": bank_groups(bank, balance.table), "set": {**dealt, "unknown": 0}}
    if silver is not None:  # before the shards move: a finished folder holds the split its manifest declares
        write_silver(output_dir, silver, manifest.label_names)
    finish_folder(output_dir)
    data_dir = output_dir / "data"
    cost = generation_cost(data_dir, source.redraw_budget)
    novelty = mention_novelty(data_dir, bank)
    origins = mention_origins(data_dir)
    written = writing.to_dict(resumed=resumed) if source.writes_mentions else None
    finished = manifest.with_results(
        generation_cost=cost,
        mention_novelty=novelty,
        mention_writing=written,
        mention_sources=origins,
        balance_reached=reached,
        source_overlap=source_overlap(data_dir),
    )
    if finished != manifest:
        write_manifest(output_dir, finished)
    for line in result_lines(finished):
        log.info("%s", line)
    if cost is not None and cost["undertrained"]:
        log.warning(
            "%.0f%% of the generator's tokens were redrawn and %d of %d blocks kept as they were when the "
            "redraw budget was spent, so the generator looks undertrained: %s",
            100 * cost["redrawn_share"],
            cost["refused_redraws"],
            cost["blocks"],
            undertrained_advice(source.model),
        )
    write_dataset_card(output_dir, card_fields)
