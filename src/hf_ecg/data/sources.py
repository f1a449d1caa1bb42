"""What the commands read as data: labelled sentences from a corpus file or a generated folder
(:func:`load_labelled`), a command-line source ``DATA``, ``DATA:N`` or ``DATA:START:STOP`` (:func:`load_source`,
:func:`source_path`), synthetic data with a generated folder's silver split (:func:`load_synthetic`), unlabelled
sentences (:func:`load_unlabelled_source`) and a generated folder's per-sample decoder columns (:func:`load_flags`)."""

from __future__ import annotations

import bisect
import os
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

from .corpus import Corpus, load_corpus

__all__ = [
    "load_flags",
    "load_labelled",
    "load_source",
    "load_synthetic",
    "load_text_documents",
    "load_unlabelled_source",
    "source_path",
]

#: The per-sample columns the decoder writes about how each sample ended.
FLAG_COLUMNS = ("entities", "forced_tags", "cut_blocks", "complete", "tag_pieces")


def load_labelled(source: str | os.PathLike, *, first_n: int | None = None) -> Corpus:
    """Labelled sentences from a corpus file (CoNLL/TSV, JSONL) or a dataset folder that
    ``hf-ecg generate`` / ``push-dataset`` wrote (its ``data/*.parquet``:
    :func:`~hf_ecg.data.dataset_format.load_data_folder`; a ``label_weights`` column, which the ``unknown`` selection
    rule writes, read as each word's weight: 0.0 unknown)."""
    path = Path(source)
    if path.is_dir():
        from .dataset_format import MANIFEST_NAME, load_data_folder, read_generated
        from .silver import with_label_weights

        if (path / MANIFEST_NAME).is_file():
            read_generated(path, ["id"])  # an unfinished folder is refused, with the command that resumes it
        rows = load_data_folder(path)
        if "label_weights" in rows.column_names:
            weights = rows["label_weights"]
            corpus = with_label_weights(load_corpus(rows.remove_columns(["label_weights"]), name=path.name), weights)
        else:
            corpus = load_corpus(rows, name=path.name)
    elif path.is_file():
        corpus = load_corpus(path)
    else:
        raise FileNotFoundError(f"no such file or folder: {path}")
    return corpus.subset(first_n=first_n)


def _split_spec(spec: str | os.PathLike) -> tuple[str, list[int]]:
    """``DATA``, ``DATA:N`` or ``DATA:START:STOP`` as the path and its numbers (none when the whole spec is a
    path that exists)."""
    text = str(spec)
    parts = text.split(":")
    numbers: list[int] = []
    while len(parts) > 1 and len(numbers) < 2 and parts[-1].isdigit():
        numbers.insert(0, int(parts.pop()))
    if Path(text).exists():
        return text, []
    head, _, tail = text.rpartition(":")
    if not numbers and head and Path(head).exists():
        raise ValueError(
            f"{text}: {tail!r} after the file name is not a number of sentences (DATA:N or DATA:START:STOP)"
        )
    return ":".join(parts), numbers


def _sliced(items: list, numbers: list[int], text: str, path: str) -> list:
    if len(numbers) == 1:
        if numbers[0] < 1 or numbers[0] > len(items):
            raise ValueError(f"{text}: {path} has {len(items)} sentences, not {numbers[0]}")
        return items[: numbers[0]]
    start, stop = numbers
    if stop <= start:
        raise ValueError(f"{text}: the slice {start}:{stop} holds no sentences")
    if stop > len(items):
        raise ValueError(f"{text}: {path} has {len(items)} sentences, not up to {stop}")
    return items[start:stop]


def load_source(spec: str | os.PathLike) -> Corpus:
    """:func:`load_labelled` from a command-line source: ``DATA``, ``DATA:N`` (its first N sentences) or
    ``DATA:START:STOP`` (sentences START to STOP - 1, counted from 0 as in a Python slice: a dev split taken
    from a pool beyond the training sentences, ``devel.tsv:186:686``). A path that exists as given wins."""
    path, numbers = _split_spec(spec)
    if not numbers:
        return load_labelled(path)
    if len(numbers) == 1:
        if numbers[0] < 1:
            raise ValueError(f"{spec}: ':{numbers[0]}' keeps no sentence (the first N, N at least 1)")
        return load_labelled(path, first_n=numbers[0])
    corpus = load_labelled(path)
    return replace(corpus, sentences=_sliced(corpus.sentences, numbers, str(spec), path))


def source_path(spec: str | os.PathLike) -> Path:
    """The file or folder of a command-line source (``DATA``, ``DATA:N``, ``DATA:START:STOP``)."""
    return Path(_split_spec(spec)[0])


def load_unlabelled_source(spec: str | os.PathLike) -> list[tuple[str, ...]]:
    """Unlabelled sentences from a command-line source, sliced as :func:`load_source` slices: a ``.txt`` file
    (one sentence per line, :func:`~hf_ecg.data.unlabelled.read_text_lines`) or the words of a corpus or dataset
    folder whose labels are never read."""
    from .unlabelled import read_text_lines

    path, numbers = _split_spec(spec)
    if Path(path).suffix.lower() == ".txt":
        sentences = read_text_lines(path)
        return _sliced(sentences, numbers, str(spec), path) if numbers else sentences
    return [sentence.tokens for sentence in load_source(spec)]


def load_text_documents(spec: str | os.PathLike) -> list[int] | None:
    """The document number of each sentence :func:`load_unlabelled_source` reads from ``spec``: blank lines separate
    a ``.txt`` file's documents, ``-DOCSTART-`` lines a corpus file's; ``None`` when the source separates none."""
    from .corpus import DOCSTART
    from .unlabelled import read_text_documents

    path, numbers = _split_spec(spec)
    if Path(path).suffix.lower() == ".txt":
        documents = read_text_documents(path)
        if documents is None or not numbers:
            return documents
        return _sliced(documents, numbers, str(spec), path)
    if not Path(path).is_file():  # a dataset folder: no separators
        return None
    lines = Path(path).read_text(encoding="utf-8").split("\n")
    starts = [number for number, line in enumerate(lines, 1) if line.startswith(DOCSTART)]
    if not starts:
        return None
    return [bisect.bisect(starts, int(s.source.rpartition(":")[2])) for s in load_source(spec)]


def load_flags(source: str | os.PathLike) -> dict[str, list] | None:
    """The decoder's per-sample columns (``entities``, ``forced_tags``, ``cut_blocks``, ``complete``,
    ``tag_pieces``) of a generated dataset folder, in id order, as far as it has them (read through
    :func:`~hf_ecg.data.dataset_format.read_generated`); ``None`` for a corpus file or a folder hf_ecg did not write."""
    from .dataset_format import MANIFEST_NAME, read_generated

    path = Path(source)
    if not (path / MANIFEST_NAME).is_file():
        return None
    _, table = read_generated(path, ["id", *FLAG_COLUMNS])
    columns = [c for c in FLAG_COLUMNS if c in table.column_names]
    if "forced_tags" not in columns:
        return None
    if "id" in table.column_names:
        table = table.sort_by("id")
    return {c: table.column(c).to_pylist() for c in columns}


def load_synthetic(sources: Sequence[str | os.PathLike | Corpus]) -> list[Corpus]:
    """Synthetic data as a tagger trains on it: each source (a :class:`~hf_ecg.data.corpus.Corpus` as it is, or
    ``DATA``, ``DATA:N``, ``DATA:START:STOP`` read by :func:`load_source`) and, after them, the silver split of each
    generated folder that has one (the user's text labelled by their dictionary, part of the folder's recipe;
    ``FOLDER:N`` cuts the generated samples only)."""
    from .silver import load_silver

    corpora = [source if isinstance(source, Corpus) else load_source(source) for source in sources]
    silver = [load_silver(source_path(source)) for source in sources if not isinstance(source, Corpus)]
    return corpora + [split for split in silver if split is not None]
