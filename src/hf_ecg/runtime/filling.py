"""Filling: a written template's tags become mentions, and the sample gets its BIO labels.

Mention sources: ``random`` (uniform over the training mention bank's distinct mentions, the paper),
``weighted`` (by frequency), a user dict ``{type: [mention, ...]}`` or a JSON file of one (no real mention of a
private corpus need leave it), the user's mention lists (:class:`MentionLists`: new mentions, tokenized the
corpus's way), ``generated`` (the generator writes each slot's mention in its sentence:
:class:`~hf_ecg.runtime.mention_writer.MentionWriter`, the bank filling a slot whose every try was rejected),
or a :class:`MentionMixture` of these. :class:`TemplateFiller` is the one step that fills templates from any
of them (for the pipeline and :func:`~hf_ecg.generate_dataset`); each sample records where each of its
mentions came from (``mention_sources``, one of :data:`MENTION_ORIGINS` per entity).
"""

from __future__ import annotations

import math
import os
import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Union

from .blocks import recompose
from .decoding import DecodedTemplate
from .ecg_config import ECGConfig
from .files import read_json
from .mention_writer import MentionWriter, WrittenMentions
from .mentions import FILL_STRATEGIES, MentionBank, mention_list_files
from .tags import spans_to_tags, text_spans
from .words import WordSplitter

__all__ = [
    "GENERATED",
    "MENTION_ORIGINS",
    "MIXTURE_PARTS",
    "MentionFiller",
    "MentionLists",
    "MentionMixture",
    "MentionSource",
    "TemplateFiller",
    "default_mentions",
    "training_bank",
]

#: The mention source that has the generator write each slot's mention in context.
GENERATED = "generated"
#: Where one mention of a sample came from (its ``mention_sources`` entry): written by the generator in
#: context, drawn from the training mention ``bank`` (real mentions of the corpus), from the user's plain-text
#: mention ``lists``, or from mentions the ``user`` gave as a ``{type: [mentions]}`` dict, JSON file or bank.
MENTION_ORIGINS = (GENERATED, "bank", "lists", "user")
#: The sources a :class:`MentionMixture` shares the slots between.
MIXTURE_PARTS = (GENERATED, "lists", "bank")


def default_mentions(ecg_config: ECGConfig) -> str:
    """The mention source when none is given: ``generated`` for a model trained with mention samples (new
    mentions in context, measured better than the bank in docs/results.md), else ``random`` from the bank
    (the paper)."""
    return GENERATED if ecg_config.mention_token else "random"


@dataclass(frozen=True)
class MentionLists:
    """The user's mention lists, one plain-text file per entity type (a gazetteer: drug names, gene symbols,
    MeSH terms), one mention per line, optionally a tab and a count
    (:func:`~hf_ecg.runtime.mentions.read_mention_list`).

    ``files`` is ``{type: file}`` or a folder of ``TYPE.txt`` files. Each mention is split into tokens the way
    the generator's training corpus writes them. Types without a list are filled from the mention bank (a
    mixture); ``strategy`` draws from both: ``random`` uniformly over distinct mentions, ``weighted`` by the
    counts (a line without one counts 1).
    """

    files: Mapping[str, str | os.PathLike] | str | os.PathLike
    strategy: str = "random"

    def __post_init__(self) -> None:
        if self.strategy not in FILL_STRATEGIES:
            raise ValueError(f"unknown fill strategy {self.strategy!r}; known: {', '.join(FILL_STRATEGIES)}")

    @classmethod
    def from_source(cls, source: Any) -> MentionLists | None:
        """``source`` as mention lists when it is some: a :class:`MentionLists`, a ``{type: file}`` mapping (its
        values paths, not lists of mentions) or a folder; else ``None``."""
        if isinstance(source, MentionLists):
            return source
        if isinstance(source, Mapping) and source and all(isinstance(v, str | os.PathLike) for v in source.values()):
            return cls(dict(source))
        if isinstance(source, str | os.PathLike) and Path(source).is_dir():
            return cls(source)
        return None

    def list_files(self) -> dict[str, Path]:
        """``{type: file}``; ``ValueError`` for a folder without lists or a list that is not a file."""
        return mention_list_files(self.files)


@dataclass(frozen=True)
class MentionMixture:
    """Mentions from several sources, each filling a share of the slots: for each slot a source is drawn with
    these shares (seeded, so a run is reproducible), then the slot's mention from it.

    Args:
        shares: ``{part: share}`` over :data:`MIXTURE_PARTS`: ``generated`` (the generator writes the mention in
            its sentence; a model trained with mention samples), ``lists`` (the user's mentions given as
            ``lists``) and ``bank`` (the training mention bank, the real mentions of the corpus). Shares are
            positive numbers, normalized to sum to 1: ``{"generated": 3, "lists": 1}`` is 75% / 25%.
        lists: the user's mentions for the ``lists`` share: :class:`MentionLists`, a ``{type: file}`` dict or a
            folder of ``TYPE.txt`` (plain-text lists), a ``{type: [mentions]}`` dict or a JSON file of one. A type
            without a list is filled from the bank in that share.
        strategy: how ``bank`` and plain-text ``lists`` are drawn: ``random`` (uniform over distinct mentions)
            or ``weighted`` (by their counts).

    Generated slots are written after the others are drawn, so a written mention reads the list and bank
    mentions of its sentence in its context; a slot whose every try is rejected is drawn from the bank.
    """

    shares: Mapping[str, float]
    lists: Any = None
    strategy: str = "random"

    def __post_init__(self) -> None:
        if not self.shares:
            raise ValueError(f"a mention mixture needs a share for at least one of {', '.join(MIXTURE_PARTS)}")
        unknown = sorted(set(self.shares) - set(MIXTURE_PARTS))
        if unknown:
            raise ValueError(f"unknown mixture part(s) {unknown}; known: {', '.join(MIXTURE_PARTS)}")
        for part, share in self.shares.items():
            if isinstance(share, bool) or not isinstance(share, int | float) or not math.isfinite(share) or share <= 0:
                raise ValueError(f"the share of {part!r} must be a positive number, got {share!r}")
        if "lists" in self.shares and self.lists is None:
            raise ValueError("a 'lists' share needs the mentions: MentionMixture(..., lists={type: file} or a folder)")
        if self.lists is not None and "lists" not in self.shares:
            raise ValueError(
                "lists were given but no 'lists' share: add one, e.g. shares={'generated': 0.5, 'lists': 0.5}"
            )
        if isinstance(self.lists, str) and self.lists in (*FILL_STRATEGIES, GENERATED):
            raise ValueError(f"lists={self.lists!r} is not a list of mentions: give it its own share instead")
        if self.strategy not in FILL_STRATEGIES:
            raise ValueError(f"unknown fill strategy {self.strategy!r}; known: {', '.join(FILL_STRATEGIES)}")

    def normalized(self) -> dict[str, float]:
        """The shares summing to 1, in :data:`MIXTURE_PARTS` order."""
        total = sum(self.shares.values())
        return {part: self.shares[part] / total for part in MIXTURE_PARTS if part in self.shares}

    def source(self, part: str) -> MentionSource:
        """The single mention source of one part."""
        if part == GENERATED:
            return GENERATED
        if part == "bank":
            return self.strategy
        lists = MentionLists.from_source(self.lists)
        if lists is not None and not isinstance(self.lists, MentionLists):
            return MentionLists(lists.files, self.strategy)
        return self.lists


#: ``"random"``, ``"weighted"``, a ``{type: [mentions]}`` dict, a path to a JSON file of one, a bank, or the
#: user's mention lists (:class:`MentionLists`, a ``{type: file}`` dict or a folder of ``TYPE.txt``), or a
#: :class:`MentionMixture` of sources.
MentionSource = Union[str, os.PathLike, Mapping[str, Sequence[str]], MentionBank, MentionLists, MentionMixture]  # noqa: UP007 (a runtime alias)


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
        origin: str = "bank",
        origins: Mapping[str, str] | None = None,
    ) -> None:
        if strategy not in FILL_STRATEGIES:
            raise ValueError(f"unknown fill strategy {strategy!r}; known: {', '.join(FILL_STRATEGIES)}")
        for value in (origin, *(origins or {}).values()):
            if value not in MENTION_ORIGINS:
                raise ValueError(f"unknown mention origin {value!r}; known: {', '.join(MENTION_ORIGINS)}")
        self.bank = bank
        self.strategy = strategy
        self.origins = dict(origins or {})
        self.default_origin = origin

    def origin(self, label: str) -> str:
        """Where this filler's mentions of ``label`` come from (one of :data:`MENTION_ORIGINS`)."""
        return self.origins.get(label, self.default_origin)

    @classmethod
    def from_source(
        cls, source: MentionSource | None, ecg_config: ECGConfig, *, corpus_bank: MentionBank | None = None
    ) -> MentionFiller:
        """Resolve a mention source for a model: ``None`` is its default (:func:`default_mentions`).

        ``random``/``weighted`` draw from ``corpus_bank`` when given (the training corpus), else from the bank
        in the model's ``ecg_config.json``; so does ``generated`` for the slots the writer leaves to the bank.
        Lists fill their types, that bank the others. Mentions of a type the model does not write are refused.
        """
        if source is None:
            source = default_mentions(ecg_config)
        if isinstance(source, MentionMixture):
            raise TypeError("a MentionMixture fills from several sources: use TemplateFiller")
        if isinstance(source, MentionBank):
            return cls(source, origin="user")
        lists = MentionLists.from_source(source)
        if lists is not None:
            files = lists.list_files()
            _refuse_unknown_types(files, ecg_config, "mention list(s)")
            listed = MentionBank.from_list_files(files, WordSplitter(ecg_config.word_exceptions or ()))
            bank = training_bank(ecg_config, corpus_bank) or MentionBank()
            return cls(bank.with_types_of(listed), lists.strategy, origins=dict.fromkeys(files, "lists"))
        if isinstance(source, Mapping):
            return cls(_user_bank(source, ecg_config, "mentions="), origin="user")
        if str(source) in (*FILL_STRATEGIES, GENERATED):
            if source == GENERATED and not ecg_config.mention_token:
                raise ValueError(
                    "mentions='generated' needs a model trained to write mentions: train it with "
                    "mention_samples=True (the `hf-ecg train` default)"
                )
            bank = training_bank(ecg_config, corpus_bank)
            if bank is not None:
                return cls(bank, "random" if source == GENERATED else str(source))
            raise ValueError(
                "this model has no mention bank (it was trained with save_mention_bank=False): give your own "
                "mentions as {type: [mentions]} or a JSON file of them, or the training corpus "
                "(`hf-ecg generate --corpus TRAIN_FILE`)"
            )
        path = Path(source)
        if not path.is_file():
            raise ValueError(
                f"mentions must be one of {(*FILL_STRATEGIES, GENERATED)}, a {{type: [mentions]}} dict, a JSON file "
                f"of one, or mention lists ({{type: file}}, a folder of TYPE.txt); {str(source)!r} is none of these"
            )
        data = read_json(path, "a JSON object {type: [mention, ...]}")
        if not isinstance(data, dict) or not all(isinstance(v, list) for v in data.values()):
            raise ValueError(f"{path}: expected a JSON object {{type: [mention, ...]}}")
        return cls(_user_bank(data, ecg_config, f"{path}:"), origin="user")

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
            "model_tokens": decoded.num_tokens,
            "redrawn_tokens": decoded.discarded_tokens,
            "refused_redraws": decoded.refused_redraws,
            "mention_sources": sources,
        }


class TemplateFiller:
    """Fills the slots of written templates from a mention source or a :class:`MentionMixture`: the one step
    from decoded templates to labelled samples, shared by the pipeline and :func:`~hf_ecg.generate_dataset`.

    Args:
        mentions: a :data:`MentionSource`; ``None`` is the model's default (:func:`default_mentions`).
        ecg_config: the generator's :class:`~hf_ecg.ECGConfig`.
        model, tokenizer: the generator, needed when mentions are ``generated`` (alone or in a mixture).
        corpus_bank: the training corpus's mentions, when given at generation (:func:`training_bank`).
        temperature, top_p: sampling of written mentions.
    """

    def __init__(
        self,
        mentions: MentionSource | None,
        ecg_config: ECGConfig,
        model: Any = None,
        tokenizer: Any = None,
        *,
        corpus_bank: MentionBank | None = None,
        temperature: float = 1.0,
        top_p: float = 1.0,
    ) -> None:
        self.mentions = default_mentions(ecg_config) if mentions is None else mentions
        self.shares: dict[str, float] = {}
        self.parts: dict[str, MentionFiller] = {}
        if isinstance(self.mentions, MentionMixture):
            self.shares = self.mentions.normalized()
            self.parts = {
                part: MentionFiller.from_source(self.mentions.source(part), ecg_config, corpus_bank=corpus_bank)
                for part in self.shares
            }
            # what fills a generated slot whose every try was rejected: the training bank, as for `generated`
            self.filler = self.parts.get(GENERATED) or self.parts.get("bank") or self.parts["lists"]
            writes = GENERATED in self.shares
        else:
            self.filler = MentionFiller.from_source(self.mentions, ecg_config, corpus_bank=corpus_bank)
            writes = self.mentions == GENERATED
        self.writer: MentionWriter | None = None
        if writes:
            if model is None or tokenizer is None:
                raise ValueError("generated mentions need the generator: pass model and tokenizer")
            self.writer = MentionWriter(model, tokenizer, ecg_config, temperature=temperature, top_p=top_p,
                                        known=self.filler.bank)  # fmt: skip

    @property
    def bank(self) -> MentionBank:
        """The bank of the single source (for a mixture: of its ``lists`` part, else of its fallback)."""
        return self.parts["lists"].bank if "lists" in self.parts else self.filler.bank

    def check_types(self, entity_types: Sequence[str]) -> None:
        """Raise ``ValueError`` if a requested type has no mention in some source to fill it with."""
        for filler in self.parts.values() or (self.filler,):
            filler.check_types(entity_types)

    def fill(
        self, decoded: Sequence[DecodedTemplate], rng: random.Random, write_seed: int
    ) -> tuple[list[dict[str, Any]], WrittenMentions | None]:
        """The labelled samples of ``decoded`` (:meth:`MentionFiller.fill`), and what writing their mentions
        cost (``None`` when no mention is written). ``rng`` draws the mixture's sources and the drawn mentions,
        ``write_seed`` the written ones."""
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
        written = None
        if self.writer is not None:
            written = self.writer.write([d.template for d in decoded], write_seed, given)
            given = written.mentions
        rows = [self.filler.fill(d, rng, m, o) for d, m, o in zip(decoded, given, origins, strict=True)]
        return rows, written


def _refuse_unknown_types(given: Mapping[str, Any], ecg_config: ECGConfig, what: str) -> None:
    """``ValueError`` for mentions of a type the model does not write, naming their sources and its types."""
    unknown = sorted(set(given) - set(ecg_config.entity_types))
    if unknown:
        sources = "; ".join(str(given[label]) for label in unknown if isinstance(given[label], str | os.PathLike))
        raise ValueError(f"{what} for type(s) {unknown} this model does not write{f' ({sources})' if sources else ''}; "
                         f"its types: {', '.join(ecg_config.entity_types)}")  # fmt: skip


def _user_bank(mentions: Mapping[str, Any], ecg_config: ECGConfig, where: str) -> MentionBank:
    """A user's ``{type: [mentions]}`` as a bank, each mention checked; ``where`` starts the errors."""
    _refuse_unknown_types(mentions, ecg_config, f"{where} mentions")
    try:
        return MentionBank.from_lists(mentions)
    except ValueError as error:
        raise ValueError(f"{where} {error}") from None
