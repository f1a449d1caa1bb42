"""Filling: a written template's tags become mentions, and the sample gets its BIO labels.

:class:`MentionFiller` fills a decoded template's slots from a mention bank (a bank, the user's mentions or lists:
:mod:`.mention_sources`), or with mentions chosen before (``generated`` ones the
:class:`~hf_ecg.runtime.mention_writer.MentionWriter` wrote, another source's in a
:class:`~.mention_sources.MentionMixture`); each sample records where each of its mentions came from
(``mention_sources``, one :class:`~.mention_sources.MentionOrigin` per entity). The engine
(:class:`~.engine.SampleRun`) runs it after the decoder and the writer.
"""

from __future__ import annotations

import os
import random
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from .blocks import recompose
from .decoding import DecodedTemplate
from .ecg_config import ECGConfig
from .mention_sources import (
    GENERATED,
    MENTION_ORIGINS,
    MentionOrigin,
    Mentions,
    MentionSource,
    ResolvedMentions,
    resolve_mentions,
)
from .mentions import FILL_STRATEGIES, MentionBank
from .tags import spans_to_tags, text_spans
from .text_files import read_user_json
from .words import WordSplitter

__all__ = ["MentionFiller", "default_mentions", "training_bank"]


def default_mentions(ecg_config: ECGConfig) -> str:
    """The mention source when none is given: ``generated`` for a model trained with mention samples (new
    mentions in context, measured better than the bank in docs/ablations.md), else ``random`` from the bank
    (the paper)."""
    return GENERATED if ecg_config.mention_token else "random"


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
            raise TypeError("a MentionMixture fills from several sources: use SampleEngine.run")
        if kind is MentionSource.USER:
            if resolved.bank is not None:  # a bank carries counts (names found in text): drawn by them
                _refuse_unknown_types(dict.fromkeys(resolved.bank.types, ""), ecg_config, "mentions")
                return cls(resolved.bank, "weighted", origin=MentionOrigin.USER)
            return cls(_user_bank(resolved.given, ecg_config, "mentions="), origin=MentionOrigin.USER)
        if kind is MentionSource.FILE:
            data = read_user_json(resolved.path, expected="a JSON object {type: [mention, ...]}")
            if not isinstance(data, dict) or not all(isinstance(v, list) for v in data.values()):
                raise ValueError(f"{resolved.path}: expected a JSON object {{type: [mention, ...]}}")
            return cls(_user_bank(data, ecg_config, f"{resolved.path}:"), origin=MentionOrigin.USER)
        if kind is MentionSource.GENERATED and not ecg_config.mention_token:
            raise ValueError(
                "mentions='generated' needs a model trained to write mentions: train it with "
                "mention_samples=True (the `hf-ecg train` default)"
            )
        bank = training_bank(ecg_config, corpus_bank)
        if kind is MentionSource.DICTIONARY:
            names = resolved.names.names
            _refuse_unknown_types(dict.fromkeys(names.types, ""), ecg_config, "dictionary type(s)")
            if resolved.names.split:  # a name as a dictionary lists it: split the corpus's way, as lists are
                split, resplit = WordSplitter(ecg_config.word_exceptions or ()), {}
                for label in names.types:
                    resplit[label] = Counter()
                    for name, count in names.counts(label).items():
                        resplit[label][tuple(split(" ".join(name)))] += count
                names = MentionBank(resplit)
            origins = dict.fromkeys(names.types, MentionOrigin.DICTIONARY)
            return cls((bank or MentionBank()).with_types_of(names), resolved.strategy, origins=origins)
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
