"""Where mentions come from, in one place: what a user may give as ``mentions=`` (:data:`Mentions`), the kind
of source it is (:class:`MentionSource`, resolved once by :func:`resolve_mentions`), and where each mention of a
sample came from (:class:`MentionOrigin`, its ``mention_sources`` entry).

The sources: the training mention bank drawn ``random`` (uniform over distinct mentions, the paper) or
``weighted`` (by frequency); a user dict ``{type: [mention, ...]}``, a bank, or a JSON file of one (no real
mention of a private corpus need leave it); the user's mention lists (:class:`MentionLists`: new mentions,
tokenized the corpus's way); a name dictionary (a :class:`NameSource`: ``hf_ecg.Dictionary``, or its names that the
user's text holds); ``generated`` (the generator writes each slot's mention in its sentence); or a
:class:`MentionMixture` of these. Imports no torch: the dataset format and the CLI read it too.
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import Enum
from pathlib import Path
from typing import Any, Protocol, Union, runtime_checkable

from .mentions import FILL_STRATEGIES, MentionBank, mention_list_files

__all__ = [
    "GENERATED",
    "MENTION_ORIGINS",
    "MIXTURE_PARTS",
    "MentionLists",
    "MentionMixture",
    "MentionOrigin",
    "MentionSource",
    "Mentions",
    "NameSource",
    "NamesAsMentions",
    "ResolvedMentions",
    "resolve_mentions",
]


class MentionSource(str, Enum):
    """The kind of mention source a user chose (a manifest's ``mentions.source``)."""

    BANK = "bank"  # the training mention bank, drawn random or weighted
    FILE = "file"  # a JSON file of {type: [mentions]}
    USER = "user"  # a {type: [mentions]} dict or a bank passed in code
    LISTS = "lists"  # plain-text mention lists, one file per type
    DICTIONARY = "dictionary"  # the user's name dictionary, or its names that the user's text holds
    GENERATED = "generated"  # the generator writes each slot's mention in its sentence
    MIXTURE = "mixture"  # a share of the slots from each of several sources

    def __str__(self) -> str:
        return self.value


class MentionOrigin(str, Enum):
    """Where one mention of a sample came from (its ``mention_sources`` entry)."""

    GENERATED = "generated"  # written by the generator in context
    BANK = "bank"  # drawn from the training mention bank (real mentions of the corpus)
    LISTS = "lists"  # drawn from the user's plain-text mention lists
    USER = "user"  # from mentions the user gave as a dict, JSON file or bank
    DICTIONARY = "dictionary"  # drawn from the user's name dictionary
    GROUPS = "groups"  # drawn from the user's group table to balance a type (generate --balance)
    SKETCH = "sketch"  # the sketch's own mention: the one its source sentence holds there

    def __str__(self) -> str:
        return self.value


#: The source (and origin) name that has the generator write each slot's mention in context.
GENERATED = MentionSource.GENERATED.value
#: Every :class:`MentionOrigin`, as the strings a ``mention_sources`` column holds.
MENTION_ORIGINS = tuple(origin.value for origin in MentionOrigin)
#: The sources a :class:`MentionMixture` shares the slots between.
MIXTURE_PARTS = (MentionOrigin.GENERATED.value, MentionOrigin.LISTS.value, MentionOrigin.BANK.value)


def _check_strategy(strategy: str) -> None:
    if strategy not in FILL_STRATEGIES:
        raise ValueError(f"unknown fill strategy {strategy!r}; known: {', '.join(FILL_STRATEGIES)}")


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
        _check_strategy(self.strategy)

    def list_files(self) -> dict[str, Path]:
        """``{type: file}``; ``ValueError`` for a folder without lists or a list that is not a file."""
        return mention_list_files(self.files)


@dataclass(frozen=True)
class NamesAsMentions:
    """A name dictionary's names as slot mentions: what a :class:`NameSource` gives.

    ``names`` holds each type's names with their counts, drawn by ``strategy``: ``random`` (uniformly over the
    names: a dictionary) or ``weighted`` (by the counts: how often the user's text holds each). With
    ``split``, each name is split into tokens the way the generator's corpus writes them (a name as a dictionary
    lists it); without, its tokens stand as they are (as the user's text wrote them). ``text_sentences``: the
    sentences of text the names were counted in, if any (a count, never the text). The types the names lack are
    filled from the training mention bank.
    """

    names: MentionBank
    strategy: str = "random"
    split: bool = True
    text_sentences: int | None = None

    def __post_init__(self) -> None:
        _check_strategy(self.strategy)


@runtime_checkable
class NameSource(Protocol):
    """A name dictionary given as ``mentions=``: anything that answers :meth:`names_as_mentions`
    (``hf_ecg.Dictionary``, ``hf_ecg.labelling.dictionary_names.DictionaryNames``). The runtime reads a dictionary
    through this and never imports it."""

    def names_as_mentions(self) -> NamesAsMentions: ...


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
            folder of ``TYPE.txt`` (plain-text lists), a ``{type: [mentions]}`` dict or a JSON file of one, or a
            name dictionary (a :class:`NameSource`). A type without a list is filled from the bank in that share.
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
        if not math.isfinite(sum(self.shares.values())):
            raise ValueError(f"the shares {dict(self.shares)} are too large to add up: give them as fractions of 1")
        if "lists" in self.shares and self.lists is None:
            raise ValueError("a 'lists' share needs the mentions: MentionMixture(..., lists={type: file} or a folder)")
        if self.lists is not None and "lists" not in self.shares:
            raise ValueError(
                "lists were given but no 'lists' share: add one, e.g. shares={'generated': 0.5, 'lists': 0.5}"
            )
        if isinstance(self.lists, str) and self.lists in (*FILL_STRATEGIES, GENERATED):
            raise ValueError(f"lists={self.lists!r} is not a list of mentions: give it its own share instead")
        _check_strategy(self.strategy)

    def normalized(self) -> dict[str, float]:
        """The shares summing to 1, in :data:`MIXTURE_PARTS` order."""
        total = sum(self.shares.values())
        return {part: self.shares[part] / total for part in MIXTURE_PARTS if part in self.shares}

    def source(self, part: str) -> Mentions:
        """The single mention source of one part."""
        if part == GENERATED:
            return GENERATED
        if part == MentionOrigin.BANK:
            return self.strategy
        resolved = resolve_mentions(self.lists)
        if resolved.kind is MentionSource.LISTS and not isinstance(self.lists, MentionLists):
            return MentionLists(resolved.lists.files, self.strategy)
        return self.lists


#: What ``mentions=`` takes: ``"random"``, ``"weighted"``, ``"generated"``, a ``{type: [mentions]}`` dict, a
#: path to a JSON file of one, a bank (drawn by its counts), the user's mention lists (:class:`MentionLists`, a
#: ``{type: file}`` dict or a folder of ``TYPE.txt``), a name dictionary (:class:`NameSource`), or a
#: :class:`MentionMixture` of sources.
Mentions = Union[  # noqa: UP007 (a runtime alias)
    str, os.PathLike, Mapping[str, Sequence[str]], MentionBank, MentionLists, NameSource, MentionMixture
]


@dataclass(frozen=True)
class ResolvedMentions:
    """A ``mentions=`` value, resolved: its ``kind`` and the parts that kind needs."""

    kind: MentionSource
    strategy: str | None = None  # BANK, LISTS: how the bank (and lists) are drawn
    lists: MentionLists | None = None  # LISTS
    path: Path | None = None  # FILE
    given: Mapping[str, Sequence[str]] | None = None  # USER: a {type: [mentions]} dict
    bank: MentionBank | None = None  # USER: a bank passed in code
    mixture: MentionMixture | None = None  # MIXTURE
    names: NamesAsMentions | None = None  # DICTIONARY


def resolve_mentions(mentions: Mentions) -> ResolvedMentions:
    """The one resolver of a ``mentions=`` value (:data:`Mentions`); ``ValueError`` for what is none of them.

    A ``{type: file}`` mapping (its values paths, not lists) or a folder is mention lists; another existing
    path a JSON file. Whether a path exists is checked here; what a file holds is read by its user.
    """
    if isinstance(mentions, MentionMixture):
        return ResolvedMentions(MentionSource.MIXTURE, mixture=mentions)
    if isinstance(mentions, MentionBank):
        return ResolvedMentions(MentionSource.USER, bank=mentions)
    if isinstance(mentions, NameSource):
        names = mentions.names_as_mentions()
        return ResolvedMentions(MentionSource.DICTIONARY, strategy=names.strategy, names=names)
    if isinstance(mentions, MentionLists):
        return ResolvedMentions(MentionSource.LISTS, strategy=mentions.strategy, lists=mentions)
    if isinstance(mentions, Mapping):
        if mentions and all(isinstance(v, str | os.PathLike) for v in mentions.values()):
            return ResolvedMentions(MentionSource.LISTS, strategy="random", lists=MentionLists(dict(mentions)))
        return ResolvedMentions(MentionSource.USER, given=mentions)
    if isinstance(mentions, str) and mentions == GENERATED:
        return ResolvedMentions(MentionSource.GENERATED, strategy="random")
    if isinstance(mentions, str) and mentions in FILL_STRATEGIES:
        return ResolvedMentions(MentionSource.BANK, strategy=mentions)
    if isinstance(mentions, str | os.PathLike) and Path(mentions).is_dir():
        return ResolvedMentions(MentionSource.LISTS, strategy="random", lists=MentionLists(mentions))
    if isinstance(mentions, str | os.PathLike) and Path(mentions).is_file():
        return ResolvedMentions(MentionSource.FILE, path=Path(mentions))
    raise ValueError(
        f"mentions must be one of {(*FILL_STRATEGIES, GENERATED)}, a {{type: [mentions]}} dict, a JSON file "
        f"of one, mention lists ({{type: file}}, a folder of TYPE.txt) or a name dictionary; {str(mentions)!r} is "
        "none of these"
    )
