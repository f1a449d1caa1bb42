"""The mention bank: per entity type, the mentions of a corpus with their counts.

Filling a generated template draws from it: ``random`` (uniform over distinct
mentions, the paper) or ``weighted`` (by corpus frequency). A bank also comes from a user's
plain-text mention lists, one file per type (:func:`read_mention_list`, :meth:`MentionBank.from_list_files`).
"""

from __future__ import annotations

import os
import random
import unicodedata
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Protocol

from .text_files import read_lines, visible_text
from .words import INVISIBLE_CATEGORIES, REPLACEMENT_CHARACTER

__all__ = [
    "FILL_STRATEGIES",
    "MAX_MENTION_CHARACTERS",
    "MAX_MENTION_WORDS",
    "MENTION_LIST_SUFFIX",
    "MentionBank",
    "mention_list_files",
    "mention_problem",
    "read_mention_list",
]

FILL_STRATEGIES = ("random", "weighted")


#: Past these a "mention" is a sentence or a paragraph, not a name (the longest BC5CDR and JNLPBA training
#: mentions have 18 and 21 words).
MAX_MENTION_WORDS = 32
MAX_MENTION_CHARACTERS = 300


def mention_problem(tokens: Sequence[str]) -> str | None:
    """Why ``tokens`` cannot be an entity mention, or ``None``: the one check that every mention source passes
    (lists, JSON files, the pipeline's dicts, the baseline's lists, the generator's written mentions). No
    words; a word with a space inside (``["sev ere"]``: one word of a mention given as words); a control or invisible
    character (a byte-order mark, a zero-width space, NUL); no letter or digit
    (``...``, ``--``); more than :data:`MAX_MENTION_WORDS` words or :data:`MAX_MENTION_CHARACTERS` characters."""
    if not tokens:
        return "no words"
    if any(not isinstance(token, str) for token in tokens):
        return "a word that is not text (give each mention as a string, or a list of strings)"
    if any(not token.strip() for token in tokens):
        return "an empty word"
    if any(any(ch.isspace() for ch in token) for token in tokens):
        return "a word with a space inside (give the mention as a string, or each of its words apart)"
    text = " ".join(tokens)
    bad = next((ch for ch in text if unicodedata.category(ch) in INVISIBLE_CATEGORIES), None)
    if bad is not None:
        return f"a control or invisible character (U+{ord(bad):04X})"
    if REPLACEMENT_CHARACTER in text:
        return "a replacement character (U+FFFD): text decoded from broken bytes"
    if not any(ch.isalnum() for ch in text):
        return "punctuation only, no letter or digit"
    if len(tokens) > MAX_MENTION_WORDS or len(text) > MAX_MENTION_CHARACTERS:
        words = f"{len(tokens)} word{'s' if len(tokens) != 1 else ''}"
        return (
            f"too long for a name ({words}, {len(text)} characters; at most {MAX_MENTION_WORDS} words, "
            f"{MAX_MENTION_CHARACTERS} characters)"
        )
    return None


#: The file name ending of a mention list in a folder of them: ``Disease.txt`` holds the Disease mentions.
MENTION_LIST_SUFFIX = ".txt"


def read_mention_entries(
    path: str | os.PathLike,
    split: Callable[[str], list[str]] = str.split,
    *,
    encoding: str = "utf-8",
    noun: str = "mention",
) -> dict[tuple[str, ...], tuple[int, int]]:
    """Each mention of a plain-text list with its count and the line it is first on (see
    :func:`read_mention_list`); ``noun`` names an entry in the messages (``name`` for a dictionary's list)."""
    path = Path(path)
    lines = read_lines(path, expected=f"a list of {noun}s, one a line", encoding=encoding)
    entries: dict[tuple[str, ...], tuple[int, int]] = {}
    for number, line in enumerate(lines, 1):
        entry, tab, count = line.partition("\t")
        tokens = tuple(split(entry.strip()))
        if not tokens:
            continue
        problem = mention_problem(tokens)
        if problem:
            raise ValueError(f"{path}:{number}: {entry.strip()[:60]!r} is no {noun}: {problem}")
        try:
            weight = int(count) if tab else 1
        except ValueError:
            weight = 0
        if weight < 1:
            raise ValueError(
                f"{path}:{number}: {count.strip()!r} after the tab is not a count (a whole number, 1 or more)"
            )
        total, first = entries.get(tokens, (0, number))
        entries[tokens] = (total + weight, first)
    if not entries:
        raise ValueError(f"{path}: no {noun}s in the list (one {noun} per line)")
    return entries


def read_mention_list(
    path: str | os.PathLike, split: Callable[[str], list[str]] = str.split, *, encoding: str = "utf-8"
) -> Counter[tuple[str, ...]]:
    """The mentions of a plain-text list: one mention per line, optionally followed by a tab and a count (its
    weight for ``weighted`` draws; 1 without one). The file is read as every user's text file is
    (:mod:`~hf_ecg.runtime.text_files`); blank lines are skipped; each mention is split into tokens by ``split``
    (the generator's corpus rules: :class:`~hf_ecg.runtime.words.WordSplitter`). ``ValueError`` naming the file
    (and line) for a file the text policy refuses, a bad count, a mention :func:`mention_problem` refuses, or a
    list with no mention."""
    entries = read_mention_entries(path, split, encoding=encoding)
    return Counter({tokens: count for tokens, (count, _) in entries.items()})


def mention_list_files(source: str | os.PathLike | Mapping[str, str | os.PathLike]) -> dict[str, Path]:
    """``{type: file}`` of mention lists given as a folder of ``TYPE.txt`` files or as a ``{type: file}``
    mapping; ``ValueError`` for a folder with no such file or a file that does not exist."""
    if isinstance(source, Mapping):
        files = {str(label): Path(file) for label, file in source.items()}
    else:
        folder = Path(source)
        files = {p.name[: -len(MENTION_LIST_SUFFIX)]: p for p in sorted(folder.glob(f"*{MENTION_LIST_SUFFIX}"))}
        if not files:
            raise ValueError(f"{folder}: no mention lists in the folder (one TYPE{MENTION_LIST_SUFFIX} file per type)")
    for label, file in files.items():
        if not file.is_file():
            raise ValueError(f"the mention list for {label!r}, {file}, is not a file")
    return files


class HasMentions(Protocol):
    """What :meth:`MentionBank.from_sentences` reads of a sentence (a corpus :class:`~hf_ecg.Sentence`): its
    ``(type, mention tokens)`` pairs. A protocol rather than an import, so that the corpus readers are not
    shipped with every model (this module is remote code: :mod:`hf_ecg.runtime`)."""

    @property
    def mentions(self) -> Iterable[tuple[str, tuple[str, ...]]]: ...


class MentionBank:
    """Mentions per entity type with their counts; mentions are token tuples."""

    def __init__(self, counts: Mapping[str, Mapping[tuple[str, ...], int]] | None = None) -> None:
        self._counts: dict[str, Counter[tuple[str, ...]]] = {
            label: Counter({tuple(m): c for m, c in mentions.items()}) for label, mentions in (counts or {}).items()
        }
        self._lists: dict[str, tuple[list[tuple[str, ...]], list[int]]] = {}

    @classmethod
    def from_sentences(cls, sentences: Iterable[HasMentions]) -> MentionBank:
        """Collect every mention of every sentence."""
        counts: dict[str, Counter[tuple[str, ...]]] = {}
        for sentence in sentences:
            for label, mention in sentence.mentions:
                counts.setdefault(label, Counter())[mention] += 1
        return cls(counts)

    @classmethod
    def from_lists(cls, mentions: Mapping[str, Sequence[str | Sequence[str]]]) -> MentionBank:
        """A bank from a user dict ``{type: [mention, ...]}``; a string mention is split on whitespace, each word
        read as a user's text file is (:func:`~hf_ecg.runtime.text_files.visible_text`). ``ValueError`` naming the
        type for an empty list or a mention :func:`mention_problem` refuses."""
        counts: dict[str, Counter[tuple[str, ...]]] = {}
        for label, items in mentions.items():
            bank = counts.setdefault(label, Counter())
            if isinstance(items, str) or not items:
                raise ValueError(f"the mentions of {label!r} must be a non-empty list of mentions, not {items!r}")
            for item in items:
                if not isinstance(item, str | list | tuple):
                    raise ValueError(
                        f"the mention {item!r} of {label!r} is no mention: give a string, or a list of its words"
                    )
                words = item.split() if isinstance(item, str) else item
                tokens = tuple(visible_text(word) if isinstance(word, str) else word for word in words)
                problem = mention_problem(tokens)
                if problem:
                    raise ValueError(f"the mention {str(item)[:60]!r} of {label!r} is no mention: {problem}")
                bank[tokens] += 1
        return cls(counts)

    @classmethod
    def from_list_files(
        cls, files: Mapping[str, str | os.PathLike], split: Callable[[str], list[str]] = str.split
    ) -> MentionBank:
        """A bank from plain-text mention lists, ``{type: file}`` (:func:`read_mention_list`)."""
        return cls({label: read_mention_list(file, split) for label, file in files.items()})

    def save_list_files(self, folder: str | os.PathLike) -> dict[str, Path]:
        """Write one plain-text mention list per type, ``folder/TYPE.txt`` (``mention<TAB>count`` lines, most
        frequent first): the inverse of :meth:`from_list_files`, e.g. a corpus's mentions as a stand-in for a
        user's gazetteer. Returns ``{type: file}``."""
        folder = Path(folder)
        folder.mkdir(parents=True, exist_ok=True)
        files = {}
        for label, entries in self.to_dict().items():
            if "/" in label or label.startswith("."):
                raise ValueError(f"type {label!r} cannot name a file")
            files[label] = folder / f"{label}{MENTION_LIST_SUFFIX}"
            files[label].write_text("".join(f"{e['mention']}\t{e['count']}\n" for e in entries), encoding="utf-8")
        return files

    def with_types_of(self, other: MentionBank) -> MentionBank:
        """This bank with ``other``'s types in place of its own: a mixture where ``other`` fills its types."""
        return MentionBank({**self._counts, **{label: other._counts[label] for label in other.types}})

    @property
    def types(self) -> list[str]:
        """Sorted entity types with at least one mention."""
        return sorted(label for label, mentions in self._counts.items() if mentions)

    def __contains__(self, label: object) -> bool:
        return bool(self._counts.get(label))  # type: ignore[call-overload]

    def counts(self, label: str) -> Counter[tuple[str, ...]]:
        """Mention → count for one type (a copy)."""
        return Counter(self._counts.get(label, {}))

    def sizes(self) -> dict[str, dict[str, int]]:
        """Per type: ``unique`` distinct mentions and ``total`` occurrences."""
        return {
            label: {"unique": len(self._counts[label]), "total": sum(self._counts[label].values())}
            for label in self.types
        }

    def sample(self, label: str, rng: random.Random, strategy: str = "random") -> tuple[str, ...]:
        """Draw one mention of ``label``: ``random`` is uniform over distinct mentions,
        ``weighted`` follows their counts."""
        if strategy not in FILL_STRATEGIES:
            raise ValueError(f"unknown fill strategy {strategy!r}; known: {', '.join(FILL_STRATEGIES)}")
        if label not in self:
            raise ValueError(f"no mentions of type {label!r}; known types: {', '.join(self.types) or 'none'}")
        if label not in self._lists:
            items = sorted(self._counts[label].items())  # sorted: draws do not depend on insertion order
            self._lists[label] = ([m for m, _ in items], [c for _, c in items])
        mentions, weights = self._lists[label]
        if strategy == "random":
            return mentions[rng.randrange(len(mentions))]
        return rng.choices(mentions, weights=weights, k=1)[0]

    def to_dict(self) -> dict[str, list[dict[str, object]]]:
        """JSON-ready form: ``{type: [{"mention": "a b", "tokens": [...], "count": n}, ...]}``, most frequent first."""
        return {
            label: [
                {"mention": " ".join(m), "tokens": list(m), "count": c}
                for m, c in sorted(self._counts[label].items(), key=lambda kv: (-kv[1], kv[0]))
            ]
            for label in self.types
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Sequence[Mapping[str, object]]]) -> MentionBank:
        """Inverse of :meth:`to_dict`."""
        return cls({label: {tuple(e["tokens"]): int(e["count"]) for e in entries} for label, entries in data.items()})  # type: ignore[arg-type, call-overload]

    def __eq__(self, other: object) -> bool:
        return isinstance(other, MentionBank) and self._counts == other._counts

    def __repr__(self) -> str:
        sizes = ", ".join(f"{label}: {size['unique']}" for label, size in self.sizes().items())
        return f"MentionBank({sizes})"
