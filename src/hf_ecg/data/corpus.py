"""Labelled NER corpora: readers for CoNLL/TSV, JSONL and Hugging Face datasets.

Every reader returns a :class:`Corpus` of :class:`Sentence` objects whose entities are
:class:`~hf_ecg.runtime.tags.Span` lists, whatever the tag scheme of the input. Errors are
:class:`CorpusFormatError` and name the file (or dataset row) and line. Files are read as every user's text file is
(:mod:`~hf_ecg.runtime.text_files`: a byte-order mark dropped, NFC, invisible format characters taken out, a control
character refused); a dataset's tokens lose their invisible format characters too, and a control character in one is
refused.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from ..runtime.tags import Span, TagError, detect_scheme, normalize_scheme, parse_tag, spans_to_tags, tags_to_spans
from ..runtime.text_files import TextFileError, clean_line, read_lines

__all__ = [
    "Corpus",
    "CorpusFormatError",
    "Sentence",
    "from_hf_dataset",
    "load_corpus",
    "read_conll",
    "read_jsonl",
]

DOCSTART = "-DOCSTART-"


class CorpusFormatError(ValueError):
    """Input that cannot be read as a labelled corpus; the message starts with ``file:line``."""


@dataclass(frozen=True)
class Sentence:
    """A tokenized sentence with its entity spans.

    ``source`` says where it came from (``file:line`` of its first token, or
    ``dataset[row]``), so that later errors can point back at the input.
    """

    tokens: tuple[str, ...]
    spans: tuple[Span, ...]
    source: str = ""
    #: Where tags that did not fit the scheme were repaired (see :func:`~hf_ecg.runtime.tags.tags_to_spans`).
    repaired_at: tuple[str, ...] = ()
    #: The tokens whose label no labeller vouches for (weak labels: a name the dictionary may have missed): a tagger
    #: leaves them out of its loss (label -100) rather than learning them as ``O``.
    unknown: tuple[int, ...] = ()
    #: Each token's label confidence between 0 and 1, a weight on its loss (a noise-aware loss); empty: every label
    #: known, weight 1. The :attr:`unknown` tokens weigh 0 whatever this says.
    weights: tuple[float, ...] = ()

    @classmethod
    def from_tags(cls, tokens: Sequence[str], tags: Sequence[str], source: str = "") -> Sentence:
        """A sentence from its tokens and IOB2 ``tags`` (a stray ``I-`` starts an entity, as seqeval reads it):
        predicted or generated labels, which need no file to point back at."""
        return cls(tuple(tokens), tuple(tags_to_spans(list(tags), "IOB2")[0]), source)

    @property
    def tags(self) -> list[str]:
        """The IOB2 tags of the sentence."""
        return spans_to_tags(self.spans, len(self.tokens))

    @property
    def training_tags(self) -> list[str | None]:
        """The IOB2 tags a tagger learns, ``None`` for the :attr:`unknown` tokens (out of the loss)."""
        tags: list[str | None] = list(self.tags)
        for index in self.unknown:
            tags[index] = None
        return tags

    @property
    def training_weights(self) -> list[float]:
        """Each token's weight on a tagger's loss: :attr:`weights` (1.0 when empty), 0.0 on the :attr:`unknown`
        tokens."""
        weights = list(self.weights) if self.weights else [1.0] * len(self.tokens)
        for index in self.unknown:
            weights[index] = 0.0
        return weights

    @property
    def entity_types(self) -> tuple[str, ...]:
        """Types of the entities in order of appearance."""
        return tuple(span.label for span in self.spans)

    @property
    def mentions(self) -> list[tuple[str, tuple[str, ...]]]:
        """``(type, tokens)`` of each entity in order of appearance."""
        return [(span.label, self.tokens[span.start : span.end]) for span in self.spans]


@dataclass
class Corpus:
    """Sentences of one labelled corpus, in file order.

    ``scheme`` is the tag scheme the input used; ``label_names`` the input's ``ClassLabel`` names in their
    order, when it had them (a :class:`datasets.Dataset`): generated data keeps that order, so that it
    concatenates with the input.
    """

    sentences: list[Sentence]
    name: str = "corpus"
    scheme: str = "IOB2"
    label_names: list[str] | None = None
    #: Labels a labeller gave (the user's text labelled by their dictionary: a silver split), which miss names.
    weak: bool = False
    #: For weak labels, the labeller's entity recall on the user's gold sentences, when it was measured: how many
    #: names it misses. A tagger's ``auto`` recipe mixes gold into every batch of data whose labeller finds most
    #: names (:func:`~hf_ecg.taggers.training.resolved_recipe`).
    labeller_recall: float | None = None

    def __len__(self) -> int:
        return len(self.sentences)

    def __iter__(self) -> Iterator[Sentence]:
        return iter(self.sentences)

    def __getitem__(self, index: int) -> Sentence:
        return self.sentences[index]

    @property
    def repair_locations(self) -> list[str]:
        """Where tags that did not fit the scheme were repaired, in file order."""
        return [where for sentence in self.sentences for where in sentence.repaired_at]

    @property
    def repairs(self) -> int:
        """How many tags did not fit the scheme and were repaired."""
        return len(self.repair_locations)

    @property
    def entity_types(self) -> list[str]:
        """Sorted entity types that occur in the corpus."""
        return sorted({label for sentence in self.sentences for label in sentence.entity_types})

    def subset(self, first_n: int | None = None, fraction: float | None = None) -> Corpus:
        """The first ``first_n`` sentences, or the first ``floor(fraction * len)`` (at least one).

        This is how the paper builds its low-resource settings (first 1% / 10% of a split).
        """
        if first_n is not None and fraction is not None:
            raise ValueError("give first_n or fraction, not both")
        if first_n is None and fraction is None:
            return self
        if fraction is not None:
            if not 0 < fraction <= 1:
                raise ValueError(f"fraction must be in (0, 1], got {fraction}")
            first_n = max(1, math.floor(fraction * len(self.sentences)))
        assert first_n is not None
        if first_n < 1:
            raise ValueError(f"first_n must be at least 1, got {first_n}")
        if first_n > len(self.sentences):
            raise ValueError(f"first_n={first_n} but {self.name} has only {len(self.sentences)} sentences")
        return replace(self, sentences=self.sentences[:first_n])


def _corpus_lines(path: Path, encoding: str) -> list[str]:
    """A corpus file's lines as every user's text file is read (:mod:`~hf_ecg.runtime.text_files`)."""
    try:
        return read_lines(
            path,
            expected="a labelled corpus in text (`hf-ecg blocks` and `train` read other encodings with --encoding, "
            "e.g. latin-1)",
            encoding=encoding,
        )
    except TextFileError as error:
        raise CorpusFormatError(str(error)) from None


def no_sentences_error(path: Path, expected: str) -> CorpusFormatError:
    """The error for a file with no sentence: empty, or only blank lines."""
    state = "is empty" if path.stat().st_size == 0 else "holds no sentence"
    return CorpusFormatError(f"{path}: the file {state}; expected {expected}")


def _visible_token(token: str, where: str) -> str:
    """``token`` as every user's text is read (:func:`~hf_ecg.runtime.text_files.clean_line`: NFC, without invisible
    format characters; a control, surrogate or private-use character refused naming the line); an empty token or
    one with a space is refused too."""
    try:
        token = clean_line(token, where)
    except TextFileError as error:
        raise CorpusFormatError(str(error)) from None
    if not token:
        raise CorpusFormatError(f"{where}: empty token")
    if any(ch.isspace() for ch in token):
        raise CorpusFormatError(f"{where}: token {token!r} contains whitespace")
    return token


def _build_corpus(
    raw: Iterable[tuple[list[str], list[str], list[str]]],
    *,
    name: str,
    scheme: str | None,
    strict: bool,
    label_names: Sequence[str] | None = None,
) -> Corpus:
    """Turn ``(tokens, tags, token_locations)`` triples into a :class:`Corpus`."""
    raw = [
        ([_visible_token(token, where) for token, where in zip(tokens, locations, strict=True)], tags, locations)
        for tokens, tags, locations in raw
    ]
    for _, tags, locations in raw:
        for tag, where in zip(tags, locations, strict=True):
            try:
                parse_tag(tag)
            except TagError as err:
                raise CorpusFormatError(f"{where}: {err}") from None
    scheme = normalize_scheme(scheme) if scheme else detect_scheme(tags for _, tags, _ in raw)
    sentences: list[Sentence] = []
    for tokens, tags, locations in raw:
        try:
            spans, repaired = tags_to_spans(tags, scheme, strict=strict)
        except TagError as err:
            raise CorpusFormatError(f"{locations[err.position or 0]}: {err}") from None
        repaired_at = tuple(locations[i] for i in repaired)
        sentences.append(Sentence(tuple(tokens), tuple(spans), locations[0], repaired_at))
    return Corpus(sentences, name=name, scheme=scheme, label_names=list(label_names) if label_names else None)


def read_conll(
    path: str | os.PathLike,
    *,
    token_column: int = 0,
    tag_column: int = -1,
    scheme: str | None = None,
    strict: bool = False,
    encoding: str = "utf-8",
) -> Corpus:
    """Read a CoNLL-style file: one token per line, columns split by tabs (or by spaces
    when a line has no tab), a blank line between sentences.

    ``-DOCSTART-`` lines separate documents and are not sentences. ``token_column`` and
    ``tag_column`` select the columns of multi-column files (negative counts from the end).
    ``scheme`` is detected when not given. With ``strict`` an ``I-`` tag that starts a span
    is an error instead of being repaired to ``B-``.
    """
    path = Path(path)
    # Columns a line must have for both indices to exist (negative ones count from the end).
    needed = max(c + 1 if c >= 0 else -c for c in (token_column, tag_column))

    def sentences() -> Iterator[tuple[list[str], list[str], list[str]]]:
        tokens: list[str] = []
        tags: list[str] = []
        locations: list[str] = []
        for lineno, line in enumerate(_corpus_lines(path, encoding), start=1):
            where = f"{path}:{lineno}"
            if not line.strip():
                if tokens:
                    yield tokens, tags, locations
                    tokens, tags, locations = [], [], []
                continue
            fields = [f.strip() for f in line.split("\t")] if "\t" in line else line.split()
            if fields[0] == DOCSTART:
                if tokens:
                    yield tokens, tags, locations
                    tokens, tags, locations = [], [], []
                continue
            if len(fields) < max(needed, 2):
                raise CorpusFormatError(
                    f"{where}: expected at least {max(needed, 2)} columns "
                    f"(token column {token_column}, tag column {tag_column}), found {len(fields)}: {line!r}"
                )
            tokens.append(fields[token_column])
            tags.append(fields[tag_column])
            locations.append(where)
        if tokens:
            yield tokens, tags, locations

    if not path.is_file():
        raise FileNotFoundError(f"no such corpus file: {path}")
    corpus = _build_corpus(sentences(), name=path.name, scheme=scheme, strict=strict)
    if not corpus.sentences:
        raise no_sentences_error(path, "one token and its tag per line, a blank line between sentences (CoNLL/TSV)")
    return corpus


def _label_names_of(feature: Any) -> list[str] | None:
    """ClassLabel names of a ``Sequence``/``List`` of ``ClassLabel`` feature, else None."""
    inner = getattr(feature, "feature", None)
    return list(inner.names) if inner is not None and hasattr(inner, "names") else None


def _tags_as_strings(tags: Sequence[Any], label_names: Sequence[str] | None, where: str) -> list[str]:
    if all(isinstance(tag, str) for tag in tags):
        return list(tags)
    if label_names is None:
        raise CorpusFormatError(f"{where}: tags are ids {list(tags)[:5]}... but no label names were given")
    try:
        return [label_names[tag] for tag in tags]
    except (IndexError, TypeError):
        raise CorpusFormatError(
            f"{where}: tag ids {list(tags)} do not index the {len(label_names)} label names"
        ) from None


def read_jsonl(
    path: str | os.PathLike,
    *,
    tokens_key: str = "tokens",
    tags_key: str = "ner_tags",
    label_names: Sequence[str] | None = None,
    scheme: str | None = None,
    strict: bool = False,
    encoding: str = "utf-8",
) -> Corpus:
    """Read JSON lines of ``{"tokens": [...], "ner_tags": [...]}``.

    Tags are strings, or integer ids into ``label_names``.
    """
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"no such corpus file: {path}")

    def sentences() -> Iterator[tuple[list[str], list[str], list[str]]]:
        for lineno, line in enumerate(_corpus_lines(path, encoding), start=1):
            where = f"{path}:{lineno}"
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except json.JSONDecodeError as err:
                raise CorpusFormatError(f"{where}: invalid JSON ({err.msg} at column {err.colno})") from None
            if not isinstance(record, dict) or tokens_key not in record or tags_key not in record:
                raise CorpusFormatError(f"{where}: expected an object with keys {tokens_key!r} and {tags_key!r}")
            tokens, tags = record[tokens_key], record[tags_key]
            if not isinstance(tokens, list) or not all(isinstance(t, str) for t in tokens):
                raise CorpusFormatError(f"{where}: {tokens_key!r} must be a list of strings")
            if not isinstance(tags, list):
                raise CorpusFormatError(f"{where}: {tags_key!r} must be a list")
            if len(tags) != len(tokens):
                raise CorpusFormatError(f"{where}: {len(tokens)} tokens but {len(tags)} tags")
            if tokens:
                tags = _tags_as_strings(tags, label_names, where)
                yield tokens, tags, [f"{where} (token {i + 1})" for i in range(len(tokens))]

    corpus = _build_corpus(sentences(), name=path.name, scheme=scheme, strict=strict, label_names=label_names)
    if not corpus.sentences:
        raise no_sentences_error(path, f'one JSON object per line, {{"{tokens_key}": [...], "{tags_key}": [...]}}')
    return corpus


def from_hf_dataset(
    dataset: Any,
    *,
    tokens_column: str = "tokens",
    tags_column: str = "ner_tags",
    scheme: str | None = None,
    strict: bool = False,
    name: str | None = None,
) -> Corpus:
    """Read a :class:`datasets.Dataset` whose tag column holds ``ClassLabel`` ids or strings."""
    missing = [c for c in (tokens_column, tags_column) if c not in dataset.column_names]
    if missing:
        raise CorpusFormatError(f"dataset has no column(s) {missing}; columns: {dataset.column_names}")
    name = name or (dataset.info.dataset_name or "dataset")
    label_names = _label_names_of(dataset.features[tags_column])

    def sentences() -> Iterator[tuple[list[str], list[str], list[str]]]:
        for row, record in enumerate(dataset):
            where = f"{name}[{row}]"
            tokens, tags = record[tokens_column], record[tags_column]
            if len(tokens) != len(tags):
                raise CorpusFormatError(f"{where}: {len(tokens)} tokens but {len(tags)} tags")
            if tokens:
                yield (
                    list(tokens),
                    _tags_as_strings(tags, label_names, where),
                    [f"{where} (token {i + 1})" for i in range(len(tokens))],
                )

    return _build_corpus(sentences(), name=name, scheme=scheme, strict=strict, label_names=label_names)


def load_corpus(source: Any, *, format: str | None = None, **kwargs: Any) -> Corpus:
    """Read a corpus from a path (``format`` ``conll`` or ``jsonl``, guessed from the
    extension when not given) or from a :class:`datasets.Dataset`; ``kwargs`` go to the reader."""
    if isinstance(source, Corpus):
        return source
    if not isinstance(source, (str, os.PathLike)):
        return from_hf_dataset(source, **kwargs)
    path = Path(source)
    if format is None:
        format = "jsonl" if path.suffix.lower() in (".jsonl", ".json") else "conll"
    if format == "conll":
        return read_conll(path, **kwargs)
    if format == "jsonl":
        return read_jsonl(path, **kwargs)
    raise ValueError(f"unknown corpus format {format!r}; known: conll, jsonl")
