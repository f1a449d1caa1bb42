"""Evaluation: how good synthetic data is (``quality``) and how much it helps a tagger (``ner``)."""

from __future__ import annotations

import os
from pathlib import Path

from ..corpus import Corpus, load_corpus

__all__ = ["load_labelled"]


def load_labelled(source: str | os.PathLike, *, first_n: int | None = None) -> Corpus:
    """Labelled sentences from a corpus file (CoNLL/TSV, JSONL) or a dataset folder that
    ``hf-ecg generate`` / ``push-dataset`` wrote (read with ``datasets.load_dataset``)."""
    path = Path(source)
    if path.is_dir():
        import datasets

        if not any(path.glob("data/*.parquet")):
            raise FileNotFoundError(f"{path} is a folder without data/*.parquet: not a dataset hf-ecg generate wrote")
        corpus = load_corpus(datasets.load_dataset(str(path), split="train"), name=path.name)
    elif path.is_file():
        corpus = load_corpus(path)
    else:
        raise FileNotFoundError(f"no such file or folder: {path}")
    return corpus.subset(first_n=first_n)
