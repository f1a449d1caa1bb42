"""The generation engine: entity sequences in, labelled samples out, with one generator.

:class:`SampleEngine` is built once per model (the pipeline builds it with the pipeline,
:func:`~hf_ecg.generate_dataset` once per run): it holds the model, its tokenizer and :class:`~hf_ecg.ECGConfig`,
and the tokenizer's tables (:class:`~.vocabulary.VocabularyTables`) that every decoder and mention writer reads.
Each call brings its settings:
:meth:`SampleEngine.run` gives a :class:`SampleRun` for a mention source and decoding settings, whose
:meth:`~SampleRun.shard_samples` decodes templates (:func:`~.decoding.make_decoder`: the scheduler, the model runner
and the :class:`~.sampler.Sampler`), writes their mentions (:class:`~.mention_writer.MentionWriter`) and fills the
slots (:class:`~.filling.MentionFiller`)::

    engine = SampleEngine(model, tokenizer, ecg_config)
    run = engine.run("generated", decoding=DecodingConfig(temperature=0.8))
    samples, budget, written = run.samples([("Chemical", "Disease")], ShardSeeds.of(seed=0, shard=0))
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any

from .decoding import DecodedTemplate, DecodingConfig, make_decoder
from .decoding_base import MAX_KEPT_PREFIXES
from .decoding_config import RedrawBudget, ShardSeeds
from .ecg_config import ECGConfig
from .filling import MentionFiller, default_mentions
from .mention_sources import GENERATED, MentionOrigin, Mentions, MentionSource, resolve_mentions
from .mention_writer import MentionWriter, WrittenMentions, template_seeds
from .mentions import MentionBank
from .vocabulary import VocabularyTables

__all__ = ["SampleEngine", "SampleRun", "shards_per_writer_call"]


def shards_per_writer_call(samples_per_shard: int) -> int:
    """How many shards of ``samples_per_shard`` samples :meth:`SampleRun.shard_samples` takes at once: as many as
    keep at most :data:`~hf_ecg.runtime.decoding_base.MAX_KEPT_PREFIXES` templates' prompt keys and values for the
    writer (one at least). :func:`~hf_ecg.generate_dataset` groups its shards and the pipeline its chunks so."""
    return max(1, MAX_KEPT_PREFIXES // samples_per_shard)


class SampleRun:
    """One run's settings over an engine's model: decodes templates, writes their mentions and fills the slots from a
    mention source or a :class:`~.mention_sources.MentionMixture`; the one step from entity sequences to labelled
    samples, shared by the pipeline and :func:`~hf_ecg.generate_dataset` (made by :meth:`SampleEngine.run`).

    Args:
        mentions: a :data:`~.mention_sources.Mentions` value; ``None``: the default (:func:`default_mentions`).
        ecg_config: the generator's :class:`~hf_ecg.ECGConfig`.
        model, tokenizer: the generator, needed when mentions are ``generated`` (alone or in a mixture).
        corpus_bank: the training corpus's mentions, when given at generation (:func:`training_bank`).
        decoding: the templates' settings (default :class:`~hf_ecg.runtime.decoding.DecodingConfig`'s); written
            mentions are drawn with the same sampling settings (:attr:`DecodingConfig.sampling`).
        vocabulary: the tokenizer's tables (:class:`~.vocabulary.VocabularyTables`), computed once by the engine.
    """

    def __init__(
        self,
        mentions: Mentions | None,
        ecg_config: ECGConfig,
        model: Any = None,
        tokenizer: Any = None,
        *,
        corpus_bank: MentionBank | None = None,
        decoding: DecodingConfig | None = None,
        vocabulary: VocabularyTables | None = None,
    ) -> None:
        self.model, self.tokenizer, self.ecg_config = model, tokenizer, ecg_config
        self.vocabulary = vocabulary
        self.decoding = decoding or DecodingConfig()
        self.mentions = default_mentions(ecg_config) if mentions is None else mentions
        self.shares: dict[str, float] = {}
        self.parts: dict[str, MentionFiller] = {}
        resolved = resolve_mentions(self.mentions)
        kind = resolved.kind
        if kind is MentionSource.MIXTURE:
            self.shares = self.mentions.normalized()
            self.parts = {
                part: MentionFiller.from_source(self.mentions.source(part), ecg_config, corpus_bank=corpus_bank)
                for part in self.shares
            }
            # what fills a generated slot whose every try was rejected: the training bank, as for `generated`
            fallback = (MentionOrigin.GENERATED, MentionOrigin.BANK, MentionOrigin.LISTS)
            self.filler = next(self.parts[part.value] for part in fallback if part.value in self.parts)
            writes = GENERATED in self.shares
        else:
            self.filler = MentionFiller.from_resolved(resolved, ecg_config, corpus_bank=corpus_bank)
            writes = kind is MentionSource.GENERATED
        self.writer: MentionWriter | None = None
        if writes:
            if model is None or tokenizer is None:
                raise ValueError("generated mentions need the generator: pass model and tokenizer")
            sampling = self.decoding.sampling
            self.writer = MentionWriter(
                model, tokenizer, ecg_config, sampling=sampling, known=self.filler.bank, vocabulary=vocabulary
            )

    @property
    def bank(self) -> MentionBank:
        """The bank of the single source (for a mixture: of its ``lists`` part, else of its fallback)."""
        return self.parts["lists"].bank if "lists" in self.parts else self.filler.bank

    def check_types(self, entity_types: Sequence[str]) -> None:
        """Raise ``ValueError`` if a requested type has no mention in some source to fill it with."""
        for filler in self.parts.values() or (self.filler,):
            filler.check_types(entity_types)

    def samples(
        self, requested: Sequence[Sequence[str]], seeds: ShardSeeds, progress: Callable[[int, Any], None] | None = None
    ) -> tuple[list[dict[str, Any]], RedrawBudget, WrittenMentions | None]:
        """One shard: templates for the ``requested`` entity sequences, then their slots filled (:meth:`fill`),
        each step seeded from ``seeds``; with what the templates cost (the decoder's budget) and what writing
        their mentions cost. ``progress(n, budget)`` is called as ``n`` templates finish. The pipeline and
        :func:`~hf_ecg.generate_dataset` write their samples with this, so that one gives what the other does."""
        (rows,), (budget,), written = self.shard_samples([(requested, seeds)], progress)
        return rows, budget, written

    def shard_samples(
        self,
        shards: Sequence[tuple[Sequence[Sequence[str]], ShardSeeds]],
        progress: Callable[[int, Any], None] | None = None,
    ) -> tuple[list[list[dict[str, Any]]], list[RedrawBudget], WrittenMentions | None]:
        """:meth:`samples` of several shards, each ``(requested, seeds)``: each shard's samples and its templates'
        cost, and what writing all their mentions cost. The templates are decoded shard by shard, then the
        mentions of all of them written in one call: the writer's last steps, where a few templates with many
        slots write on alone, are shared with the other shards' templates (each template draws from its own
        seeded stream, so every shard gets the samples it gets alone)."""
        decoded: list[list[DecodedTemplate]] = []
        budgets: list[RedrawBudget] = []
        for requested, seeds in shards:
            templates, budget = self.templates(requested, seeds, progress)
            decoded.append(templates)
            budgets.append(budget)
        rngs = [random.Random(seeds.mentions) for _, seeds in shards]
        rows, written = self._fill(decoded, rngs, [seeds.written_mentions for _, seeds in shards])
        return rows, budgets, written

    def templates(
        self, requested: Sequence[Any], seeds: ShardSeeds, progress: Callable[[int, Any], None] | None = None
    ) -> tuple[list[DecodedTemplate], RedrawBudget]:
        """The templates of one shard's requests (entity sequences, or a sketch generator's sketches), decoded with
        the shard's seed, and what they cost."""
        decoder = make_decoder(
            self.model, self.tokenizer, self.ecg_config, replace(self.decoding, seed=seeds.decoding), self.vocabulary
        )
        report = None if progress is None else (lambda n: progress(n, decoder.budget))
        # the writer's first prompt of a template starts with the sentence the decoder's last prompt encoded
        return decoder.decode(requested, progress=report, keep_prefixes=self.writer is not None), decoder.budget

    def fill(
        self, decoded: Sequence[DecodedTemplate], rng: random.Random, write_seed: int
    ) -> tuple[list[dict[str, Any]], WrittenMentions | None]:
        """The labelled samples of ``decoded`` (:meth:`MentionFiller.fill`), and what writing their mentions
        cost (``None`` when no mention is written). ``rng`` draws the mixture's sources and the drawn mentions,
        ``write_seed`` the written ones."""
        (rows,), written = self._fill([decoded], [rng], [write_seed])
        return rows, written

    def _fill(
        self, shards: Sequence[Sequence[DecodedTemplate]], rngs: Sequence[random.Random], write_seeds: Sequence[int]
    ) -> tuple[list[list[dict[str, Any]]], WrittenMentions | None]:
        """:meth:`fill` of several shards (``rngs[j]`` and ``write_seeds[j]`` are shard ``j``'s), their mentions
        written in one call."""
        given = [self._given(decoded, rng) for decoded, rng in zip(shards, rngs, strict=True)]
        written = None
        if self.writer is not None:
            flat = [d for decoded in shards for d in decoded]
            seeds = [
                s for decoded, seed in zip(shards, write_seeds, strict=True) for s in template_seeds(seed, len(decoded))
            ]
            written = self.writer.write(
                [d.template for d in flat],
                seeds,
                [row for shard_given, _ in given for row in shard_given],
                [d.prompt_prefix for d in flat],
            )
            mentions = iter(written.mentions)
            given = [
                ([next(mentions) for _ in decoded], origins)
                for decoded, (_, origins) in zip(shards, given, strict=True)
            ]
        rows = [
            [self.filler.fill(d, rng, m, o) for d, m, o in zip(decoded, shard_given, origins, strict=True)]
            for decoded, rng, (shard_given, origins) in zip(shards, rngs, given, strict=True)
        ]
        return rows, written

    def _given(
        self, decoded: Sequence[DecodedTemplate], rng: random.Random
    ) -> tuple[list[list[tuple[str, ...] | None]], list[list[str]]]:
        """Each slot's mention from a mixture's other sources (``None``: to be written) and where it came from."""
        given: list[list[tuple[str, ...] | None]] = [[None] * len(d.entities) for d in decoded]
        origins = [[GENERATED] * len(d.entities) for d in decoded]
        if self.shares:
            parts, weights = list(self.shares), list(self.shares.values())
            for i, sample in enumerate(decoded):
                for k, label in enumerate(sample.entities):
                    part = rng.choices(parts, weights)[0]
                    if part != GENERATED:
                        filler = self.parts[part]
                        given[i][k] = filler.bank.sample(label, rng, filler.strategy)
                        origins[i][k] = filler.origin(label)
        return given, origins


class SampleEngine:
    """Writes labelled samples with one generator; built once per model, run with each call's settings.

    Args:
        model: the generator (a causal LM trained by hf_ecg).
        tokenizer: its tokenizer.
        ecg_config: its :class:`~hf_ecg.ECGConfig`.
    """

    def __init__(self, model: Any, tokenizer: Any, ecg_config: ECGConfig) -> None:
        self.model, self.tokenizer, self.ecg_config = model, tokenizer, ecg_config
        self.vocabulary = VocabularyTables.of(tokenizer)

    def run(
        self,
        mentions: Mentions | None = None,
        *,
        decoding: DecodingConfig | None = None,
        corpus_bank: MentionBank | None = None,
    ) -> SampleRun:
        """A :class:`SampleRun` of this engine's model with these settings (``mentions`` ``None``: the model's
        default source)."""
        return SampleRun(
            mentions,
            self.ecg_config,
            self.model,
            self.tokenizer,
            corpus_bank=corpus_bank,
            decoding=decoding,
            vocabulary=self.vocabulary,
        )
