"""The ECG-QALM family as a :class:`~hf_ecg.synthetic.sample_source.SampleSource`: a trained generator writes a
sentence block by block for each entity sequence asked (drawn by a sampler from the training statistics, or given),
and its slots are filled from the mention source (:mod:`hf_ecg.runtime.engine`)."""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ..data.corpus import Corpus
from ..data.dataset_format import dataset_features, ner_label_names
from ..data.groups import Balance
from ..data.manifest import GenerationManifest, MentionsRecord
from ..data.silver import silver_record
from ..data.statistics import CorpusStatistics
from ..runtime.decoding import DecodingConfig
from ..runtime.decoding_config import Phrase, ShardSeeds, split_request
from ..runtime.engine import SampleEngine, SampleRun, shards_per_writer_call
from ..runtime.filling import training_bank
from ..runtime.mention_sources import Mentions
from ..runtime.mention_writer import WrittenMentions
from ..runtime.mentions import MentionBank
from .balance import balance_setting
from .entity_sequences import FixedSampler, make_sampler
from .run_config import DatasetRunConfig
from .sample_source import Progress

__all__ = ["ECGSource"]


@dataclass
class ECGSource:
    """What an ECG-QALM run writes with: the generator, the entity sequences asked for (``draw`` a sampler, else
    the explicit ``sequences`` cycled over the ids) and the engine run that writes them."""

    model: str
    dtype: str
    engine_run: SampleRun  # the engine run: the generator, its ECGConfig, the mentions and the decoding settings
    corpus: str | None
    corpus_bank: MentionBank | None
    sampler: str
    draw: Any = None
    sequences: list[tuple[str | Phrase, ...]] | None = None
    method: str | None = None  # ECG-QALM's folders record no method

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
    ) -> ECGSource:
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
            FixedSampler([split_request(s)[0] for s in sequences], ecg_config.entity_types)  # validates the types
        elif stats is None:
            raise ValueError("the model carries no corpus statistics: give the training corpus or explicit entities")
        else:
            draw = make_sampler(sampler, stats)
        engine = SampleEngine(model_obj, tokenizer, ecg_config)
        engine_run = engine.run(mentions, decoding=decoding, corpus_bank=corpus_bank)
        requested = (
            ecg_config.entity_types
            if sequences is None
            else sorted({t for s in sequences for t in split_request(s)[0]})
        )
        engine_run.check_types(requested)
        corpus_path = None if corpus is None else str(corpus)
        return cls(str(model), dtype, engine_run, corpus_path, corpus_bank, sampler, draw, sequences)

    @property
    def ecg_config(self) -> Any:
        return self.engine_run.ecg_config

    @property
    def decoding(self) -> DecodingConfig:
        return self.engine_run.decoding

    @property
    def entity_types(self) -> list[str]:
        return list(self.ecg_config.entity_types)

    @property
    def training_bank(self) -> MentionBank | None:
        return training_bank(self.ecg_config, self.corpus_bank)

    @property
    def redraw_budget(self) -> float | None:
        return self.decoding.redraw_budget

    @property
    def writes_mentions(self) -> bool:
        return self.engine_run.writer is not None

    def manifest(
        self, num_samples: int, run: DatasetRunConfig, seed: int, silver: Corpus | None, balance: Balance | None
    ) -> GenerationManifest:
        """The run's settings."""
        from ..modeling import model_fingerprint

        explicit = self.sequences is not None
        return GenerationManifest(
            model=self.model,
            model_fingerprint=model_fingerprint(self.model),
            num_samples=num_samples,
            samples_per_shard=run.samples_per_shard,
            seed=seed,
            sampler=None if explicit else self.sampler,
            entities=[[_recorded(piece) for piece in s] for s in self.sequences] if explicit else None,
            mentions=MentionsRecord.from_mentions(
                self.engine_run.mentions, self.engine_run.bank, self.corpus is not None
            ),
            corpus=self.corpus,
            decoding=self.decoding.recorded(),
            dtype=self.dtype,
            entity_types=self.entity_types,
            label_names=ner_label_names(self.ecg_config.entity_types, run.label_names or self.ecg_config.label_names),
            silver=None if silver is None else silver_record(silver, silver.name),
            balance=None if balance is None else balance_setting(balance, self.ecg_config.entity_types),
        )

    def features(self, label_names: Sequence[str]) -> Any:
        """Every column, the decoder's statistics included."""
        return dataset_features(self.ecg_config.entity_types, label_names)

    def shards_written_together(self, samples_per_shard: int) -> int:
        """How many shards' mentions one writer call writes (:func:`~hf_ecg.runtime.engine.shards_per_writer_call`),
        one when no mention is written: written together, the templates of the next shards fill the writer's batch
        while a few of the last ones write on alone (docs/performance.md). Groups do not depend on the number of
        processes (a process writes whole groups), so a run of fewer than 1,024 samples a process leaves some
        processes idle."""
        return shards_per_writer_call(samples_per_shard) if self.writes_mentions else 1

    def requests(self, ids: range, seeds: ShardSeeds) -> list[tuple[str | Phrase, ...]]:
        """The requests of the samples ``ids``: entity sequences, explicit ones with their phrases."""
        if self.sequences is not None:
            return [self.sequences[i % len(self.sequences)] for i in ids]
        return self.draw.sample(len(ids), random.Random(seeds.entities))

    def shard_rows(
        self, shards: Sequence[tuple[range, ShardSeeds]], progress: Progress
    ) -> tuple[list[list[dict[str, Any]]], WrittenMentions | None]:
        """Each shard's samples: its templates decoded, then the mentions of all of them written in one call."""
        requests = [(self.requests(ids, seeds), seeds) for ids, seeds in shards]
        filled, _, written = self.engine_run.shard_samples(requests, progress)
        return filled, written


def _recorded(piece: str | Phrase) -> str | dict[str, str]:
    """A request's piece as the manifest records it: a type as its name, a phrase as ``{"phrase": its words}``."""
    return {"phrase": " ".join(piece.words)} if isinstance(piece, Phrase) else piece
