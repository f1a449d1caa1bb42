"""The one writer of every generator family: a :class:`~hf_ecg.synthetic.sample_source.SampleSource`'s samples as
Parquet shards that ``load_dataset`` reads.

The output folder::

    DIR/ecg_generation.json        the settings (a rerun must use the same ones)
    DIR/README.md                  the dataset card (its header points load_dataset at data/)
    DIR/data/train-00000.parquet   shard 0: sample ids 0 .. S-1
    DIR/data/train-00001.parquet   ...

While the run is under way its shards wait in ``DIR/unfinished/`` and ``data/`` does not exist, so
``load_dataset(DIR)`` finds no data and the readers (export, filter, evaluate) refuse the folder with
the command that resumes it; the last step moves the shards into ``data/`` and writes the card.

Shard ``s`` holds ids ``[s*S, (s+1)*S)``; its rows are seeded by ``(seed, s)`` alone. So a shard is the same whoever
writes it and whenever: a run killed midway is resumed by running the same command again (finished shards are kept,
the rest written), and under ``accelerate launch`` each process writes the groups of shards
``g % num_processes == process_index``. Each shard is written to a temporary file and renamed, so a shard on disk is
always complete. A group is one shard, or as many consecutive shards as the source writes in one call
(:meth:`~hf_ecg.synthetic.sample_source.SampleSource.shards_written_together`: ECG-QALM's written mentions, four
shards of 256): a killed run loses at most a group's work, and a group is always written whole, so that its
batches, and their rounding in bfloat16, do not depend on what was saved or on how many processes run.
"""

from __future__ import annotations

import itertools
import logging
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ..data.corpus import Corpus
from ..data.dataset_format import (
    UNFINISHED_DIR,
    ShardLayout,
    check_or_write_manifest,
    columns_of_folder,
    write_shard,
    write_unfinished_card,
)
from ..data.groups import Balance
from ..data.manifest import GenerationManifest
from ..data.outputs import DATASET, check_output
from ..runtime.decoding_config import ShardSeeds
from ..runtime.mention_writer import WrittenMentions
from .finishing import finish_run
from .generation_report import cost_postfix
from .run_config import DatasetRunConfig
from .sample_source import SampleSource

__all__ = ["prepare_folder", "write_samples"]

logger = logging.getLogger(__name__)


def prepare_folder(
    output_dir: Path, num_samples: int, run: DatasetRunConfig, *, inputs: Sequence[str | os.PathLike] = ()
) -> ShardLayout:
    """What is refused before a source is loaded or anything written: the count, an output that is not new, empty
    or a dataset hf_ecg wrote or that is inside one of ``inputs`` (or holds one), shard files this dataset has no
    place for (unless ``run.overwrite``). The shard layout."""
    if num_samples < 1:
        raise ValueError(f"num_samples must be >= 1, got {num_samples}")
    check_output(
        output_dir, DATASET, inputs=inputs
    )  # new, empty or a dataset hf_ecg wrote: never beside a user's files
    shards = ShardLayout(output_dir, num_samples, run.samples_per_shard)
    stray = shards.stray()
    if stray and not run.overwrite:  # checked before the manifest is touched: a refused run changes nothing
        raise ValueError(
            f"{output_dir} holds shard files this dataset of {num_samples} samples has no place for "
            f"({', '.join(stray[:3])}): move them out, or overwrite=True (--overwrite) to start again"
        )
    return shards


def write_samples(
    source: SampleSource,
    shards: ShardLayout,
    *,
    seed: int = 0,
    run: DatasetRunConfig | None = None,
    silver: Corpus | None = None,
    balance: Balance | None = None,
) -> Path:
    """Write ``source``'s samples into the folder of ``shards`` (:func:`prepare_folder`): the manifest first (a
    folder begun with other settings is refused unless ``run.overwrite``), the shards not yet on disk, then the
    balance, the silver split, the finished manifest and the card (:func:`~hf_ecg.synthetic.finishing.finish_run`).
    Returns the folder."""
    from accelerate import PartialState

    run = run or DatasetRunConfig()
    output_dir, num_samples, state = shards.output_dir, shards.num_samples, PartialState()
    manifest = source.manifest(num_samples, run, seed, silver, balance)
    with state.main_process_first():
        fresh = check_or_write_manifest(output_dir, manifest, run.overwrite and state.is_main_process)
        if state.is_main_process and (fresh or (output_dir / UNFINISHED_DIR).is_dir()):
            write_unfinished_card(output_dir, num_samples, run.resume_command or "the same generate_dataset call")
    groups = shards.groups(source.shards_written_together(run.samples_per_shard))
    mine = [group for k, group in enumerate(groups) if k % state.num_processes == state.process_index]
    writing, resumed = _write_shards(source, shards, mine, seed, manifest, state, run.progress_bar)
    state.wait_for_everyone()
    if state.is_main_process:
        if not all(shards.done(s) for s in range(shards.count)):
            raise RuntimeError(f"{output_dir} lacks shards after the run: run the same command again to write them")
        finish_run(output_dir, manifest, source, writing, resumed, run.card_fields, silver, balance, logger)
        logger.info("wrote %d samples in %d shards to %s", num_samples, shards.count, output_dir / "data")
    state.wait_for_everyone()
    return output_dir


def _write_shards(
    source: SampleSource,
    shards: ShardLayout,
    mine: list[list[int]],
    seed: int,
    manifest: GenerationManifest,
    state: Any,
    bar_on: bool,
) -> tuple[WrittenMentions, bool]:
    """Write this process's groups of shards (``mine``: the shards one :meth:`SampleSource.shard_rows` call writes)
    that are not all on disk yet, each shard seeded by ``(seed, shard)`` alone; what their written mentions cost,
    and whether the run resumed a folder (some shards were done). A group is always written whole, its shards saved
    before a run was killed written again and not saved: its rows are made in the same batches whatever was saved,
    so reduced-precision arithmetic rounds them as an uninterrupted run does."""
    from tqdm.auto import tqdm

    unfinished_dir = shards.output_dir / UNFINISHED_DIR
    begun = unfinished_dir if any(unfinished_dir.glob("*.parquet")) else shards.output_dir / "data"
    features = columns_of_folder(begun, source.features(manifest.label_names))
    saved = {s for group in mine for s in group if shards.done(s)}  # read once: each reads Parquet footers
    todo = [group for group in mine if not saved.issuperset(group)]
    total = sum(len(shards.ids(s)) for group in mine for s in group)
    done = total - sum(len(shards.ids(s)) for group in todo for s in group)
    resumed = bool(saved)
    if resumed:
        logger.info("resuming: some of this process's shards are already written")
    bar = tqdm(
        total=total,
        initial=done,
        unit="sample",
        desc="Generating",
        disable=not bar_on or not state.is_local_main_process,
    )
    for tmp in unfinished_dir.glob(f".tmp-{state.process_index}-*"):
        tmp.unlink()
    spent = [0, 0]  # generator tokens kept, redrawn: the shards whose templates are written
    writing = WrittenMentions()  # the mentions this run's shards had written
    for group in todo:
        ends = list(itertools.accumulate((len(shards.ids(shard)) for shard in group), initial=bar.n))[1:]
        finished = [0]  # the group's shards whose templates are written
        writing_what = f"Writing mentions of shard{'s' * (len(group) > 1)} {', '.join(map(str, group))}"

        def progress(
            n: int, budget: Any, ends: list[int] = ends, finished: list[int] = finished, what: str = writing_what
        ) -> None:
            bar.update(n)
            if budget is None:  # a family without a decoder: samples only
                return
            if finished[0] < len(ends) and bar.n == ends[finished[0]]:  # a shard's templates are done: its budget too
                finished[0] += 1
                spent[0], spent[1] = spent[0] + budget.kept, spent[1] + budget.redrawn
                bar.set_postfix_str(cost_postfix(*spent), refresh=False)
            else:
                bar.set_postfix_str(cost_postfix(spent[0] + budget.kept, spent[1] + budget.redrawn), refresh=False)
            if source.writes_mentions and finished[0] == len(ends):  # their mentions are written now
                bar.set_description_str(what)

        requests = [(shards.ids(shard), ShardSeeds.of(seed, shard)) for shard in group]
        filled, written = source.shard_rows(requests, progress)
        bar.set_description_str("Generating")
        if written is not None:
            writing.add(written)
        for shard, rows in zip(group, filled, strict=True):
            if shard not in saved:  # a shard saved before the run was killed holds these same rows
                rows = [{"id": i, **row} for i, row in zip(shards.ids(shard), rows, strict=True)]
                write_shard(rows, features, unfinished_dir, shard, state.process_index)
    bar.close()
    return writing, resumed
