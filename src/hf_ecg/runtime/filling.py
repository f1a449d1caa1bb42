"""Filling: a written template's tags become mentions, and the sample gets its BIO labels.

:class:`TemplateFiller` is the one step that fills templates from any mention source
(:mod:`.mention_sources`: a bank, the user's mentions or lists, ``generated`` mentions written by
:class:`~hf_ecg.runtime.mention_writer.MentionWriter`, or a :class:`~.mention_sources.MentionMixture`), for the
pipeline and :func:`~hf_ecg.generate_dataset`; each sample records where each of its mentions came from
(``mention_sources``, one :class:`~.mention_sources.MentionOrigin` per entity).
"""

from __future__ import annotations

import os
import random
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from typing import Any

from .blocks import recompose
from .decoding import DecodedTemplate, DecodingConfig, make_decoder
from .decoding_base import MAX_KEPT_PREFIXES
from .decoding_config import RedrawBudget, ShardSeeds
from .ecg_config import ECGConfig
from .files import read_json
from .mention_sources import (
    GENERATED,
    MENTION_ORIGINS,
    MentionOrigin,
    Mentions,
    MentionSource,
    ResolvedMentions,
    resolve_mentions,
)
from .mention_writer import MentionWriter, WrittenMentions, template_seeds
from .mentions import FILL_STRATEGIES, MentionBank
from .tags import spans_to_tags, text_spans
from .words import WordSplitter

__all__ = ["MentionFiller", "TemplateFiller", "default_mentions", "shards_per_writer_call", "training_bank"]


def default_mentions(ecg_config: ECGConfig) -> str:
    """The mention source when none is given: ``generated`` for a model trained with mention samples (new
    mentions in context, measured better than the bank in docs/ablations.md), else ``random`` from the bank
    (the paper)."""
    return GENERATED if ecg_config.mention_token else "random"


def shards_per_writer_call(samples_per_shard: int) -> int:
    """How many shards of ``samples_per_shard`` samples :meth:`TemplateFiller.shard_samples` takes at once: as many as
    keep at most :data:`~hf_ecg.runtime.decoding_base.MAX_KEPT_PREFIXES` templates' prompt keys and values for the
    writer (one at least). :func:`~hf_ecg.generate_dataset` groups its shards and the pipeline its chunks so."""
    return max(1, MAX_KEPT_PREFIXES // samples_per_shard)


def training_bank(ecg_config: ECGConfig, corpus_bank: MentionBank | None = None) -> MentionBank | None:
    """The generator's training mentions: ``corpus_bank`` (the training corpus, given at generation) when
    given, else the bank saved in the model's ``ecg_config.json``, else ``None``."""
    if corpus_bank is not None:
        return corpus_bank
    return MentionBank.from_dict(ecg_config.mention_bank) if ecg_config.mention_bank else None


class MentionFiller:
    """Fill templates from a :class:`~hf_ecg.MentionBank` with a strategy (``random`` or ``weighted``).

    ``origin``: what the bank's mentions are (one of :data:`MENTION_ORIGINS`), recorded per mention;
    ``origins`` overrides it for some types (mention lists for their types beside the bank)."""

    def __init__(
        self,
        bank: MentionBank,
        strategy: str = "random",
        origin: str = MentionOrigin.BANK,
        origins: Mapping[str, str] | None = None,
    ) -> None:
        if strategy not in FILL_STRATEGIES:
            raise ValueError(f"unknown fill strategy {strategy!r}; known: {', '.join(FILL_STRATEGIES)}")
        for value in (origin, *(origins or {}).values()):
            if value not in MENTION_ORIGINS:
                raise ValueError(f"unknown mention origin {value!r}; known: {', '.join(MENTION_ORIGINS)}")
        self.bank = bank
        self.strategy = strategy
        self.origins = {label: str(value) for label, value in (origins or {}).items()}
        self.default_origin = str(origin)

    def origin(self, label: str) -> str:
        """Where this filler's mentions of ``label`` come from (one of :data:`MENTION_ORIGINS`)."""
        return self.origins.get(label, self.default_origin)

    @classmethod
    def from_source(
        cls, source: Mentions | None, ecg_config: ECGConfig, *, corpus_bank: MentionBank | None = None
    ) -> MentionFiller:
        """Resolve a mention source for a model: ``None`` is its default (:func:`default_mentions`).

        ``random``/``weighted`` draw from ``corpus_bank`` when given (the training corpus), else from the bank
        in the model's ``ecg_config.json``; so does ``generated`` for the slots the writer leaves to the bank.
        Lists fill their types, that bank the others. Mentions of a type the model does not write are refused.
        """
        resolved = resolve_mentions(default_mentions(ecg_config) if source is None else source)
        return cls.from_resolved(resolved, ecg_config, corpus_bank=corpus_bank)

    @classmethod
    def from_resolved(
        cls, resolved: ResolvedMentions, ecg_config: ECGConfig, *, corpus_bank: MentionBank | None = None
    ) -> MentionFiller:
        """:meth:`from_source` of a source already resolved (:func:`~.mention_sources.resolve_mentions`)."""
        kind = resolved.kind
        if kind is MentionSource.MIXTURE:
            raise TypeError("a MentionMixture fills from several sources: use TemplateFiller")
        if kind is MentionSource.USER:
            if resolved.bank is not None:  # a bank carries counts (names found in text): drawn by them
                _refuse_unknown_types(dict.fromkeys(resolved.bank.types, ""), ecg_config, "mentions")
                return cls(resolved.bank, "weighted", origin=MentionOrigin.USER)
            return cls(_user_bank(resolved.given, ecg_config, "mentions="), origin=MentionOrigin.USER)
        if kind is MentionSource.FILE:
            data = read_json(resolved.path, "a JSON object {type: [mention, ...]}")
            if not isinstance(data, dict) or not all(isinstance(v, list) for v in data.values()):
                raise ValueError(f"{resolved.path}: expected a JSON object {{type: [mention, ...]}}")
            return cls(_user_bank(data, ecg_config, f"{resolved.path}:"), origin=MentionOrigin.USER)
        if kind is MentionSource.GENERATED and not ecg_config.mention_token:
            raise ValueError(
                "mentions='generated' needs a model trained to write mentions: train it with "
                "mention_samples=True (the `hf-ecg train` default)"
            )
        bank = training_bank(ecg_config, corpus_bank)
        if kind is MentionSource.LISTS:
            files = resolved.lists.list_files()
            _refuse_unknown_types(files, ecg_config, "mention list(s)")
            listed = MentionBank.from_list_files(files, WordSplitter(ecg_config.word_exceptions or ()))
            lists_origin = dict.fromkeys(files, MentionOrigin.LISTS)
            return cls((bank or MentionBank()).with_types_of(listed), resolved.strategy, origins=lists_origin)
        if bank is None:  # BANK, GENERATED (the slots the writer leaves)
            raise ValueError(
                "this model has no mention bank (it was trained with save_mention_bank=False): give your own "
                "mentions as {type: [mentions]} or a JSON file of them, or the training corpus "
                "(`hf-ecg generate --corpus TRAIN_FILE`)"
            )
        return cls(bank, resolved.strategy)

    def check_types(self, entity_types: Sequence[str]) -> None:
        """Raise ``ValueError`` if a requested type has no mention to fill it with."""
        missing = sorted(set(entity_types) - set(self.bank.types))
        if missing:
            raise ValueError(
                f"no mentions of type(s) {missing} to fill tags with; the mentions cover: "
                f"{', '.join(self.bank.types) or 'nothing'}"
            )

    def fill(
        self,
        decoded: DecodedTemplate,
        rng: random.Random,
        written: Sequence[Sequence[str] | None] | None = None,
        origins: Sequence[str] | None = None,
    ) -> dict[str, Any]:
        """A labelled sample: ``tokens``, ``ner_tags`` (IOB2 strings), ``text``, ``spans`` (character offsets
        into ``text`` and types), ``template``, ``entities``, and the decoder's flags ``complete``,
        ``forced_tags``, ``cut_blocks`` and ``tag_pieces``, and its cost, ``model_tokens`` (the generator's
        tokens of the kept blocks), ``redrawn_tokens`` (of the blocks drawn again) and ``refused_redraws`` (blocks
        kept as they were because the redraw budget was spent), and ``mention_sources``, where each entity's
        mention came from (:data:`MENTION_ORIGINS`).

        ``written``: the slots' mentions already chosen (the generator's, :class:`~hf_ecg.runtime.mention_writer.
        MentionWriter`, or another source's), ``origins`` where each came from (default ``generated``); a
        ``None`` slot is drawn from this filler's bank."""
        written = written if written is not None else [None] * len(decoded.entities)
        origins = origins if origins is not None else [GENERATED] * len(decoded.entities)
        mentions, sources = [], []
        for label, mention, origin in zip(decoded.entities, written, origins, strict=True):
            if mention is None:
                mentions.append(self.bank.sample(label, rng, self.strategy))
                sources.append(self.origin(label))
            else:
                mentions.append(tuple(mention))
                sources.append(origin)
        tokens, spans = recompose(decoded.template, mentions)
        return {
            "tokens": tokens,
            "ner_tags": spans_to_tags(spans, len(tokens), "IOB2"),
            "text": " ".join(tokens),
            "spans": text_spans(tokens, spans),
            "template": str(decoded.template),
            "entities": list(decoded.entities),
            "forced_tags": decoded.forced_tags,
            "cut_blocks": decoded.cut_blocks,
            "complete": decoded.complete,
            "tag_pieces": decoded.tag_pieces,
            "model_tokens": decoded.model_tokens,
            "redrawn_tokens": decoded.redrawn_tokens,
            "refused_redraws": decoded.refused_redraws,
            "mention_sources": sources,
        }


class TemplateFiller:
    """Fills the slots of written templates from a mention source or a :class:`MentionMixture`: the one step
    from decoded templates to labelled samples, shared by the pipeline and :func:`~hf_ecg.generate_dataset`.

    Args:
        mentions: a :data:`~.mention_sources.Mentions` value; ``None``: the default (:func:`default_mentions`).
        ecg_config: the generator's :class:`~hf_ecg.ECGConfig`.
        model, tokenizer: the generator, needed when mentions are ``generated`` (alone or in a mixture).
        corpus_bank: the training corpus's mentions, when given at generation (:func:`training_bank`).
        decoding: the templates' settings (default :class:`~hf_ecg.runtime.decoding.DecodingConfig`'s); written
            mentions are drawn with the same sampling settings (:attr:`DecodingConfig.sampling`).
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
    ) -> None:
        self.model, self.tokenizer, self.ecg_config = model, tokenizer, ecg_config
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
            self.writer = MentionWriter(model, tokenizer, ecg_config, sampling=sampling, known=self.filler.bank)

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
            decoder = make_decoder(
                self.model, self.tokenizer, self.ecg_config, replace(self.decoding, seed=seeds.decoding)
            )
            report = None if progress is None else (lambda n, decoder=decoder: progress(n, decoder.budget))
            # the writer's first prompt of a template starts with the sentence the decoder's last prompt encoded
            decoded.append(decoder.decode(requested, progress=report, keep_prefixes=self.writer is not None))
            budgets.append(decoder.budget)
        rngs = [random.Random(seeds.mentions) for _, seeds in shards]
        rows, written = self._fill(decoded, rngs, [seeds.written_mentions for _, seeds in shards])
        return rows, budgets, written

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


def _refuse_unknown_types(given: Mapping[str, Any], ecg_config: ECGConfig, what: str) -> None:
    """``ValueError`` for mentions of a type the model does not write, naming their sources and its types."""
    unknown = sorted(set(given) - set(ecg_config.entity_types))
    if unknown:
        sources = "; ".join(str(given[label]) for label in unknown if isinstance(given[label], str | os.PathLike))
        raise ValueError(
            f"{what} for type(s) {unknown} this model does not write{f' ({sources})' if sources else ''}; "
            f"its types: {', '.join(ecg_config.entity_types)}"
        )


def _user_bank(mentions: Mapping[str, Any], ecg_config: ECGConfig, where: str) -> MentionBank:
    """A user's ``{type: [mentions]}`` as a bank, each mention checked; ``where`` starts the errors."""
    _refuse_unknown_types(mentions, ecg_config, f"{where} mentions")
    try:
        return MentionBank.from_lists(mentions)
    except ValueError as error:
        raise ValueError(f"{where} {error}") from None
