"""Evaluation: how good synthetic data is (``quality``) and how much it helps a tagger (``ner``)."""

from __future__ import annotations

import os
from dataclasses import replace
from pathlib import Path

from ..data.corpus import Corpus, load_corpus

__all__ = ["load_flags", "load_labelled", "load_source"]

#: The per-sample columns the decoder writes about how each sample ended.
FLAG_COLUMNS = ("entities", "forced_tags", "cut_blocks", "complete", "tag_pieces")


def load_labelled(source: str | os.PathLike, *, first_n: int | None = None) -> Corpus:
    """Labelled sentences from a corpus file (CoNLL/TSV, JSONL) or a dataset folder that
    ``hf-ecg generate`` / ``push-dataset`` wrote (read with ``datasets.load_dataset``)."""
    path = Path(source)
    if path.is_dir():
        import datasets

        from ..data.dataset_format import MANIFEST_NAME, read_generated

        if (path / MANIFEST_NAME).is_file():
            read_generated(path, ["id"])  # an unfinished folder is refused, with the command that resumes it
        elif not any(path.glob("data/*.parquet")):
            raise FileNotFoundError(f"{path} is a folder without data/*.parquet: not a dataset hf-ecg generate wrote")
        corpus = load_corpus(datasets.load_dataset(str(path), split="train"), name=path.name)
    elif path.is_file():
        corpus = load_corpus(path)
    else:
        raise FileNotFoundError(f"no such file or folder: {path}")
    return corpus.subset(first_n=first_n)


def load_source(spec: str | os.PathLike) -> Corpus:
    """:func:`load_labelled` from a command-line source: ``DATA``, ``DATA:N`` (its first N sentences) or
    ``DATA:START:STOP`` (sentences START to STOP - 1, counted from 0 as in a Python slice: a dev split taken
    from a pool beyond the training sentences, ``devel.tsv:186:686``). A path that exists as given wins."""
    text = str(spec)
    parts = text.split(":")
    numbers = []
    while len(parts) > 1 and len(numbers) < 2 and parts[-1].isdigit():
        numbers.insert(0, int(parts.pop()))
    path = ":".join(parts)
    if Path(text).exists() or not numbers:
        return load_labelled(text)
    if len(numbers) == 1:
        return load_labelled(path, first_n=numbers[0])
    start, stop = numbers
    if stop <= start:
        raise ValueError(f"{text}: the slice {start}:{stop} holds no sentences")
    corpus = load_labelled(path)
    if start >= len(corpus):
        raise ValueError(f"{text}: {path} has {len(corpus)} sentences, none from {start}")
    return replace(corpus, sentences=corpus.sentences[start:stop])


def load_flags(source: str | os.PathLike) -> dict[str, list] | None:
    """The decoder's per-sample columns (``entities``, ``forced_tags``, ``cut_blocks``, ``complete``,
    ``tag_pieces``) of a generated dataset folder, in id order, as far as it has them (read through
    :func:`~hf_ecg.data.dataset_format.read_generated`); ``None`` for a corpus file or a folder hf_ecg did not write."""
    from ..data.dataset_format import MANIFEST_NAME, read_generated

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
