"""Whole synthetic datasets: ``generate_dataset`` writes Parquet shards that ``load_dataset`` reads.

The output folder::

    DIR/ecg_generation.json        the settings (a rerun must use the same ones)
    DIR/README.md                  the dataset card (its header points load_dataset at data/)
    DIR/data/train-00000.parquet   shard 0: sample ids 0 .. S-1
    DIR/data/train-00001.parquet   ...

While the run is under way its shards wait in ``DIR/unfinished/`` and ``data/`` does not exist, so
``load_dataset(DIR)`` finds no data and the readers (export, filter, evaluate) refuse the folder with
the command that resumes it; the last step moves the shards into ``data/`` and writes the card.

Shard ``s`` holds ids ``[s*S, (s+1)*S)``; its entity sequences, decoding and filling are seeded by
``(seed, s)`` alone. So a shard is the same whoever writes it and whenever: a run killed midway is
resumed by running the same command again (finished shards are kept, the rest written), and under
``accelerate launch`` each process writes the groups of shards ``g % num_processes == process_index``. Each
shard is written to a temporary file and renamed, so a shard on disk is always complete. A group is one
shard, or, when the generator writes the mentions, as many consecutive shards as hold 1,024 samples (four
of 256): their mentions are written in one call (fuller batches; each template draws from its own seeded
stream) and their shards saved together, so a killed run loses at most a group's work, and a group is
always written whole, so that its batches, and their rounding in bfloat16, do not depend on what was saved
or on how many processes run.
"""

from __future__ import annotations

import itertools
import logging
import os
import random
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..data.corpus import Corpus
from ..data.dataset_format import (
    UNFINISHED_DIR,
    ShardLayout,
    check_or_write_manifest,
    columns_of_folder,
    dataset_features,
    ner_label_names,
    write_shard,
    write_unfinished_card,
)
from ..data.groups import Balance
from ..data.manifest import GenerationManifest, MentionsRecord
from ..data.outputs import DATASET, check_output
from ..data.silver import silver_record
from ..data.statistics import CorpusStatistics
from ..runtime.decoding import DecodingConfig
from ..runtime.decoding_config import ShardSeeds
from ..runtime.engine import SampleEngine, SampleRun, shards_per_writer_call
from ..runtime.mention_sources import Mentions
from ..runtime.mention_writer import WrittenMentions
from ..runtime.mentions import MentionBank
from .balance import balance_setting
from .entity_sequences import FixedSampler, make_sampler
from .finishing import finish_run
from .generation_report import cost_postfix
from .run_config import DatasetRunConfig

__all__ = ["DatasetRunConfig", "generate_dataset"]

logger = logging.getLogger(__name__)


def generate_dataset(
    model: str | os.PathLike,
    output_dir: str | os.PathLike,
    num_samples: int,
    *,
    sampler: str = "gold",
    entities: Sequence[Sequence[str]] | None = None,
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
        entities: explicit entity sequences, cycled over the sample ids.
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
    shards = _check_before_generating(Path(output_dir), num_samples, run, model, balance)
    output_dir, decoding, state = shards.output_dir, decoding or DecodingConfig(), PartialState()
    job = _Run.load(model, corpus, entities, sampler, mentions, decoding, run, state.device)
    manifest = job.manifest(num_samples, run, seed, silver, balance)
    with state.main_process_first():
        fresh = check_or_write_manifest(output_dir, manifest, run.overwrite and state.is_main_process)
        if state.is_main_process and (fresh or (output_dir / UNFINISHED_DIR).is_dir()):
            write_unfinished_card(output_dir, num_samples, run.resume_command or "the same generate_dataset call")
    groups = shards.groups(_shards_written_together(job, run.samples_per_shard))
    mine = [group for k, group in enumerate(groups) if k % state.num_processes == state.process_index]
    writing, resumed = _write_shards(job, shards, mine, seed, manifest, state, run.progress_bar)
    state.wait_for_everyone()
    if state.is_main_process:
        if not all(shards.done(s) for s in range(shards.count)):
            raise RuntimeError(f"{output_dir} lacks shards after the run: run the same command again to write them")
        finish_run(output_dir, manifest, job, writing, resumed, model, run.card_fields, silver, balance, logger)
        logger.info("wrote %d samples in %d shards to %s", num_samples, shards.count, output_dir / "data")
    state.wait_for_everyone()
    return output_dir


def _check_before_generating(
    output_dir: Path, num_samples: int, run: DatasetRunConfig, model: Any, balance: Balance | None
) -> ShardLayout:
    """What is refused before anything is loaded or written: the count, a balance of a type the generator does not
    write, an output that is not new, empty or a dataset hf_ecg wrote, shard files this dataset has no place for
    (unless ``run.overwrite``). The shard layout."""
    if num_samples < 1:
        raise ValueError(f"num_samples must be >= 1, got {num_samples}")
    if balance is not None:  # its config alone, before the weights load
        from ..runtime.ecg_config import ECGConfig

        balance_setting(balance, ECGConfig.from_pretrained(model).entity_types)
    check_output(output_dir, DATASET)  # new, empty or a dataset hf_ecg wrote: never beside a user's files
    shards = ShardLayout(output_dir, num_samples, run.samples_per_shard)
    stray = shards.stray()
    if stray and not run.overwrite:  # checked before the manifest is touched: a refused run changes nothing
        raise ValueError(
            f"{output_dir} holds shard files this dataset of {num_samples} samples has no place for "
            f"({', '.join(stray[:3])}): move them out, or overwrite=True (--overwrite) to start again"
        )
    return shards


@dataclass
class _Run:
    """What a run writes with: the generator, the entity sequences asked for (``draw`` a sampler, else the
    explicit ``sequences`` cycled over the ids) and the engine run that writes them."""

    model_path: str
    dtype: str
    engine_run: SampleRun  # the engine run: the generator, its ECGConfig, the mentions and the decoding settings
    corpus: str | None
    corpus_bank: MentionBank | None
    sampler: str
    draw: Any = None
    sequences: list[tuple[str, ...]] | None = None

    @classmethod
    def load(
        cls,
        model: Any,
        corpus: Any,
        entities: Any,
        sampler: str,
        mentions: Mentions | None,
        decoding: DecodingConfig,
        run: DatasetRunConfig,
        device: Any,
    ) -> _Run:
        """Load the generator (as ``run`` says, on ``device``) and resolve the requests and the mentions."""
        import torch

        from ..data.corpus import load_corpus
        from ..modeling import inference_dtype, load_ecg_model

        model_obj, tokenizer, ecg_config = load_ecg_model(model, trust_remote_code=run.trust_remote_code)
        dtype = inference_dtype(run.dtype, device)
        model_obj.to(device, getattr(torch, dtype))
        corpus_bank = stats = None
        if corpus is not None:
            gold = load_corpus(corpus)
            corpus_bank = MentionBank.from_sentences(gold)
            stats = CorpusStatistics.from_corpus(gold, corpus_bank)
        elif ecg_config.corpus_statistics:
            stats = CorpusStatistics.from_dict(ecg_config.corpus_statistics)
        draw = sequences = None
        if entities is not None:
            sequences = [tuple(s) for s in entities]
            FixedSampler(sequences, ecg_config.entity_types)  # validates the types
        elif stats is None:
            raise ValueError("the model carries no corpus statistics: give the training corpus or explicit entities")
        else:
            draw = make_sampler(sampler, stats)
        engine = SampleEngine(model_obj, tokenizer, ecg_config)
        engine_run = engine.run(mentions, decoding=decoding, corpus_bank=corpus_bank)
        requested = ecg_config.entity_types if entities is None else sorted({t for s in entities for t in s})
        engine_run.check_types(requested)
        corpus_path = None if corpus is None else str(corpus)
        return cls(str(model), dtype, engine_run, corpus_path, corpus_bank, sampler, draw, sequences)

    @property
    def ecg_config(self) -> Any:
        return self.engine_run.ecg_config

    @property
    def decoding(self) -> DecodingConfig:
        return self.engine_run.decoding

    def manifest(
        self, num_samples: int, run: DatasetRunConfig, seed: int, silver: Corpus | None, balance: Balance | None
    ) -> GenerationManifest:
        """The run's settings."""
        from ..modeling import model_fingerprint

        explicit = self.sequences is not None
        return GenerationManifest(
            model=self.model_path,
            model_fingerprint=model_fingerprint(self.model_path),
            num_samples=num_samples,
            samples_per_shard=run.samples_per_shard,
            seed=seed,
            sampler=None if explicit else self.sampler,
            entities=[list(s) for s in self.sequences] if explicit else None,
            mentions=MentionsRecord.from_mentions(
                self.engine_run.mentions, self.engine_run.bank, self.corpus is not None
            ),
            corpus=self.corpus,
            decoding=self.decoding.recorded(),
            dtype=self.dtype,
            entity_types=list(self.ecg_config.entity_types),
            label_names=ner_label_names(self.ecg_config.entity_types, run.label_names or self.ecg_config.label_names),
            silver=None if silver is None else silver_record(silver, silver.name),
            balance=None if balance is None else balance_setting(balance, self.ecg_config.entity_types),
        )

    def requests(self, ids: range, seeds: ShardSeeds) -> list[tuple[str, ...]]:
        """The entity sequences of the samples ``ids``."""
        if self.sequences is not None:
            return [self.sequences[i % len(self.sequences)] for i in ids]
        return self.draw.sample(len(ids), random.Random(seeds.entities))


def _write_shards(
    run: _Run,
    shards: ShardLayout,
    mine: list[list[int]],
    seed: int,
    manifest: GenerationManifest,
    state: Any,
    bar_on: bool,
) -> tuple[WrittenMentions, bool]:
    """Write this process's groups of shards (``mine``: the shards whose mentions one writer call writes) that
    are not all on disk yet, each shard seeded by ``(seed, shard)`` alone; what their written mentions cost, and
    whether the run resumed a folder (some shards were done). A group is always written whole, its shards saved
    before a run was killed written again and not saved: its templates are written in the same batches whatever
    was saved, so reduced-precision arithmetic rounds them as an uninterrupted run does."""
    from tqdm.auto import tqdm

    unfinished_dir = shards.output_dir / UNFINISHED_DIR
    begun = unfinished_dir if any(unfinished_dir.glob("*.parquet")) else shards.output_dir / "data"
    features = columns_of_folder(begun, dataset_features(run.ecg_config.entity_types, manifest.label_names))
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
        seeds = [ShardSeeds.of(seed, shard) for shard in group]
        ends = list(itertools.accumulate((len(shards.ids(shard)) for shard in group), initial=bar.n))[1:]
        finished = [0]  # the group's shards whose templates are written
        writing_what = f"Writing mentions of shard{'s' * (len(group) > 1)} {', '.join(map(str, group))}"

        def progress(
            n: int, budget: Any, ends: list[int] = ends, finished: list[int] = finished, what: str = writing_what
        ) -> None:
            bar.update(n)
            if finished[0] < len(ends) and bar.n == ends[finished[0]]:  # a shard's templates are done: its budget too
                finished[0] += 1
                spent[0], spent[1] = spent[0] + budget.kept, spent[1] + budget.redrawn
                bar.set_postfix_str(cost_postfix(*spent), refresh=False)
            else:
                bar.set_postfix_str(cost_postfix(spent[0] + budget.kept, spent[1] + budget.redrawn), refresh=False)
            if run.engine_run.writer is not None and finished[0] == len(ends):  # their mentions are written now
                bar.set_description_str(what)

        requests = [(run.requests(shards.ids(shard), s), s) for shard, s in zip(group, seeds, strict=True)]
        filled, _, written = run.engine_run.shard_samples(requests, progress)
        bar.set_description_str("Generating")
        if written is not None:
            writing.add(written)
        for shard, rows in zip(group, filled, strict=True):
            if shard not in saved:  # a shard saved before the run was killed holds these same rows
                rows = [{"id": i, **row} for i, row in zip(shards.ids(shard), rows, strict=True)]
                write_shard(rows, features, unfinished_dir, shard, state.process_index)
    bar.close()
    return writing, resumed


def _shards_written_together(run: _Run, per_shard: int) -> int:
    """How many shards' mentions one writer call writes (:func:`~hf_ecg.runtime.engine.shards_per_writer_call`), one
    when no mention is written: written together, the templates of the next shards fill the writer's batch while a
    few of the last ones write on alone (docs/performance.md). Groups do not depend on the number of processes (a
    process writes whole groups), so a run of fewer than 1,024 samples a process leaves some processes idle."""
    if run.engine_run.writer is None:
        return 1
    return shards_per_writer_call(per_shard)
