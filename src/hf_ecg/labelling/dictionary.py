"""Name dictionaries: the typed names a user already has (MeSH, an ontology, a product catalogue), read once and
matched in text as a field library does it.

A :class:`Dictionary` maps each entity type to its names (token tuples). It is read from what users have
(:meth:`Dictionary.read`): ``TYPE=FILE`` plain-text lists (one name a line, optionally a tab and a count: the
mention-list format, :func:`~hf_ecg.runtime.mentions.read_mention_list`), a folder of ``TYPE.txt`` lists, or a JSON
file ``{type: [names]}``. Every name passes the one mention check; a name listed under two types is refused, naming
both places, since a lookup could not say which type it is.

Matching (:meth:`Dictionary.spans`) runs an Aho-Corasick automaton (``pyahocorasick``) over a sentence's text, case
folded, with a space only where two words meet (not around marks), and keeps the matches that begin and end on token
boundaries, longest first, left to right: ``Parkinson 's disease`` matches the name ``Parkinson's disease``,
``non - Hodgkin lymphoma`` matches ``non-Hodgkin lymphoma``, ``NSAIDs`` does not match ``NSAID``, ``the in`` does
not match ``thein``. :meth:`Dictionary.without_common_words` drops names that the user's labelled sentences hold
mostly as ordinary words (``lead``, ``more``).
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from ..data.corpus import Corpus
from ..runtime.mention_sources import NamesAsMentions
from ..runtime.mentions import MentionBank
from ..runtime.tags import Span, spans_to_tags
from .dictionary_files import DictionaryError, read_sources
from .function_words import FUNCTION_WORDS
from .labeller import joined_spans, label_sentences

__all__ = ["Dictionary", "DictionaryError", "name_key"]

#: Names shorter than this (spaces taken out) are left out: two letters begin too many words and abbreviations.
MIN_NAME_LENGTH = 3


def _joined(tokens: Sequence[str]) -> tuple[str, list[int]]:
    """Tokens as one case-folded string, a space between two tokens only where a letter or digit meets a letter or
    digit (``Parkinson 's`` is ``parkinson's``, ``non - Hodgkin`` is ``non-hodgkin``, ``the in`` stays ``the in``),
    and where each token starts in it."""
    text, starts = "", []
    for token in tokens:
        piece = "".join(token.casefold().split())
        if text and piece and text[-1].isalnum() and piece[0].isalnum():
            text += " "
        starts.append(len(text))
        text += piece
    return text, starts


#: A name that starts or ends with one of these is a list's artifact (a CSV cell, an inverted heading cut at its
#: comma: ``alcohol,``), never written so in text: it would label the comma after a name as part of it.
_SEPARATORS = ",;:"


def looked_up(key: str) -> bool:
    """Whether a name with this :func:`name_key` is looked up (and fills slots): :data:`MIN_NAME_LENGTH` characters
    or more, no separator at either end, and not an English function word
    (:data:`~hf_ecg.labelling.function_words.FUNCTION_WORDS`)."""
    return (
        len(key) >= MIN_NAME_LENGTH
        and key[0] not in _SEPARATORS
        and key[-1] not in _SEPARATORS
        and key not in FUNCTION_WORDS
    )


def name_key(tokens: Sequence[str]) -> str:
    """What a name and a stretch of text are matched on (:func:`_joined`)."""
    return _joined([part for token in tokens for part in token.split()])[0]


class Dictionary:
    """Typed names and the lookup that finds them in tokenized text.

    Args:
        names: per entity type, its names as token tuples (or strings, split on spaces).
        origins: optional ``{(type, name tokens): "file:line"}``, where each name was read, for messages.
    """

    def __init__(
        self,
        names: Mapping[str, Iterable[Sequence[str] | str]],
        origins: Mapping[tuple[str, tuple[str, ...]], str] | None = None,
    ) -> None:
        self.names: dict[str, frozenset[tuple[str, ...]]] = {}
        for label, entries in names.items():
            tokens = {tuple(e.split()) if isinstance(e, str) else tuple(e) for e in entries}
            self.names[str(label)] = frozenset(t for t in tokens if t)
        self._origins = dict(origins or {})
        self._types_of_key: dict[str, str] = {}
        for label in sorted(self.names):
            for name in sorted(self.names[label]):
                key = name_key(name)
                if not looked_up(key):
                    continue
                other = self._types_of_key.get(key)
                if other is not None and other != label:
                    raise DictionaryError(
                        f"{self._where(label, name)}: {' '.join(name)!r} is a {label} name and a {other} name "
                        f"({self._where(other, None, key)}): a lookup cannot tell which; keep it under one type"
                    )
                self._types_of_key[key] = label
        self._automaton: Any = None
        self._as_mentions: NamesAsMentions | None = None

    def _where(self, label: str, name: tuple[str, ...] | None, key: str | None = None) -> str:
        if name is None:
            name = next((n for n in self.names.get(label, ()) if name_key(n) == key), None)
        return self._origins.get((label, name), f"the {label} names") if name is not None else f"the {label} names"

    @classmethod
    def read(
        cls, sources: Sequence[str | os.PathLike] | Mapping[str, str | os.PathLike], *, encoding: str = "utf-8"
    ) -> Dictionary:
        """A dictionary from ``TYPE=FILE`` strings, folders of ``TYPE.txt`` lists, JSON files ``{type: [names]}``,
        or a ``{type: file}`` mapping. ``TYPE=FILE.obo`` (or ``.owl``, read by ``pronto``) takes an ontology's
        term names and exact synonyms, ``TYPE=FILE.obo#ID`` those of the term ``ID`` and the terms under it.
        Files are read as every user's text file is (:mod:`~hf_ecg.runtime.text_files`). :class:`DictionaryError`
        names the file (and line) of an empty list, a file that policy refuses (not text in ``encoding``, a control
        character), a name the mention check refuses, a folder with a file that is no list, an ontology without
        named terms, or a name under two types."""
        names, origins = read_sources(sources, encoding)
        return cls(names, origins)

    @property
    def types(self) -> list[str]:
        """The entity types, sorted."""
        return sorted(self.names)

    def check_types(self, types: Sequence[str], data: str = "the data") -> None:
        """Refuse (``ValueError``) a dictionary type outside ``types``, the entity types of ``data``: its names would
        be scored or written under a type the data does not have (``chemical`` against ``Chemical``)."""
        foreign = sorted(set(self.names) - set(types))
        if foreign:
            raise ValueError(
                f"has type(s) {', '.join(foreign)} that {data} does not have; its types: "
                f"{', '.join(sorted(types)) or 'none'}"
            )

    def __len__(self) -> int:
        return sum(len(names) for names in self.names.values())

    def __repr__(self) -> str:
        counts = ", ".join(f"{label}: {len(self.names[label])}" for label in self.types)
        return f"Dictionary({counts})"

    def function_words(self) -> list[str]:
        """Its names that are English function words (``the``, ``was``), which it never looks up, sorted."""
        keys = {name_key(name) for names in self.names.values() for name in names}
        return sorted(key for key in keys if key in FUNCTION_WORDS and looked_up(key.upper()))

    def type_of(self, tokens: Sequence[str]) -> str | None:
        """The type whose name ``tokens`` are (case and spaces aside), or None."""
        return self._types_of_key.get(name_key(tokens))

    def _built(self) -> Any:
        if self._automaton is None:
            import ahocorasick

            automaton = ahocorasick.Automaton()
            for key, label in self._types_of_key.items():
                automaton.add_word(key, (len(key), label))
            if len(automaton):
                automaton.make_automaton()
            self._automaton = automaton
        return self._automaton

    def spans(self, tokens: Sequence[str]) -> list[Span]:
        """The dictionary's names in ``tokens``: whole tokens only, the longest match first, left to right."""
        automaton = self._built()
        if not len(automaton) or not tokens:
            return []
        text, offsets = _joined(tokens)
        starts, ends = {}, {}
        for index, (at, token) in enumerate(zip(offsets, tokens, strict=True)):
            length = len("".join(token.split()))
            if length:
                starts[at] = index
                ends[at + length - 1] = index
        found = []
        for end, (length, label) in automaton.iter(text):
            start = end - length + 1
            if start in starts and end in ends:
                found.append((starts[start], ends[end] + 1, label))
        found.sort(key=lambda span: (span[0], -(span[1] - span[0])))
        kept: list[Span] = []
        covered = 0
        for start, end, label in found:
            if start >= covered:
                kept.append(Span(start, end, label))
                covered = end
        return kept

    def tags(self, tokens: Sequence[str]) -> list[str]:
        """IOB2 tags of ``tokens`` by lookup (:meth:`spans`)."""
        return spans_to_tags(self.spans(tokens), len(tokens))

    def without_common_words(
        self,
        labelled: Iterable[tuple[Sequence[str], Sequence[str]]] = (),
        text: Iterable[Sequence[str]] = (),
        *,
        common_share: float = 0.01,
    ) -> tuple[Dictionary, list[str]]:
        """This dictionary without the names the user's own text uses as ordinary words, and those names.

        A name is ordinary when ``labelled`` sentences (tokens and IOB2 tags: the gold corpus) hold it more often as
        ``O`` text than as an entity, or when it is one lower-case word found in at least ``common_share`` of the
        ``text`` sentences (unlabelled text: ``more``, ``lead``, ``parents`` are everywhere, names are not)."""
        as_entity: Counter[str] = Counter()
        as_word: Counter[str] = Counter()
        for tokens, tags in labelled:
            for span in self.spans(tokens):
                key = name_key(tokens[span.start : span.end])
                inside = all(tag != "O" for tag in tags[span.start : span.end])
                (as_entity if inside else as_word)[key] += 1
        sentences = 0
        seen_in: Counter[str] = Counter()
        for tokens in text:
            sentences += 1
            seen_in.update({token for token in tokens if token.islower()})
        stopped = {key for key, count in as_word.items() if count > as_entity[key]}
        if sentences:
            stopped |= {key for key in self._types_of_key if seen_in[key] >= common_share * sentences}
        names = {
            label: [name for name in entries if name_key(name) not in stopped] for label, entries in self.names.items()
        }
        return Dictionary(names, self._origins), sorted(stopped)

    def repaired(self, tokens: Sequence[str], tags: Sequence[str], types: Iterable[str] | None = None) -> list[str]:
        """``tags`` (IOB2) repaired by the dictionary: its names that stand in ``O`` text get their type, and an
        entity whose words are one of its names of another type gets that type; only ``types`` (default: all) are
        written. Entities the dictionary does not know stay as they are."""
        from ..runtime.tags import tags_to_spans

        allowed = set(self.types if types is None else types)
        spans = list(tags_to_spans(list(tags), "IOB2")[0])
        fixed = [
            Span(span.start, span.end, label)
            if (label := self.type_of(tokens[span.start : span.end])) in allowed
            else span
            for span in spans
        ]
        taken = {i for span in spans for i in range(span.start, span.end)}
        for span in self.spans(tokens):
            if span.label in allowed and not taken & set(range(span.start, span.end)):
                fixed.append(span)
        return spans_to_tags(sorted(fixed, key=lambda span: span.start), len(tokens))

    def merged(self, tokens: Sequence[str], tags: Sequence[str], types: Iterable[str] | None = None) -> list[str]:
        """The dictionary's names in ``tokens`` (only ``types``, default all), then every entity of ``tags``
        (IOB2) that overlaps none of them: the lookup first, a tagger's predictions for what it does not know
        (:func:`~hf_ecg.labelling.labeller.joined_spans`)."""
        from ..runtime.tags import tags_to_spans

        allowed = set(self.types if types is None else types)
        kept = [span for span in self.spans(tokens) if span.label in allowed]
        return spans_to_tags(joined_spans(kept, tags_to_spans(list(tags), "IOB2")[0]), len(tokens))

    def recall_on(self, gold: Sequence[Corpus]) -> float | None:
        """The lookup's entity recall on the ``gold`` sentences, over the types it has (``None`` when they hold no
        entity of them): how many names its silver sentences miss."""
        from ..taggers.metrics import entity_scores

        sentences = [s for corpus in gold for s in corpus]
        truth = [[t if t == "O" or t[2:] in self.names else "O" for t in s.tags] for s in sentences]
        if not any(t != "O" for tags in truth for t in tags):
            return None
        return entity_scores(truth, [self.tags(s.tokens) for s in sentences])["recall"]

    def label(self, sentences: Sequence[Sequence[str]], gold: Sequence[Corpus] = ()) -> Corpus:
        """Distant supervision: ``sentences`` labelled by lookup (:meth:`spans`), sentence ``i`` pointing back at
        ``unlabelled[i]`` (:func:`~hf_ecg.labelling.labeller.label_sentences`); weak labels, with the lookup's recall
        on the ``gold`` sentences when given (:meth:`recall_on`: how a tagger's ``auto`` recipe trains on them)."""
        corpus = label_sentences(sentences, self, name="unlabelled, labelled by the dictionary")
        corpus.weak = True
        corpus.labeller_recall = self.recall_on(gold) if gold else None
        return corpus

    def names_as_mentions(self) -> NamesAsMentions:
        """Its names as slot mentions (``generate_dataset(mentions=dictionary)``): each drawn alike, split the
        generator's corpus's way, but those the lookup ignores (under :data:`MIN_NAME_LENGTH` characters); the types
        it lacks come from the training bank."""
        if self._as_mentions is None:  # resolved wherever the mentions are (engine, manifest, mixture): built once
            names = {t: [n for n in self.names[t] if looked_up(name_key(n))] for t in self.types}
            bank = MentionBank({label: dict.fromkeys(found, 1) for label, found in names.items() if found})
            self._as_mentions = NamesAsMentions(bank)
        return self._as_mentions

    def to_dict(self) -> dict[str, list[str]]:
        """``{type: [names]}``, sorted, names joined with spaces (what a JSON dictionary file holds)."""
        return {label: sorted(" ".join(name) for name in self.names[label]) for label in self.types}
