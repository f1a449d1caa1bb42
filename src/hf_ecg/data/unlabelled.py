"""The user's unlabelled text: a plain-text file, one sentence a line, split into words the way the biomedical
corpora split them (:func:`read_text_lines`)."""

from __future__ import annotations

import os
import re
from pathlib import Path

from ..runtime.text_files import TextFileError, read_lines
from .corpus import CorpusFormatError, no_sentences_error

__all__ = ["WORD_PATTERN", "read_text_documents", "read_text_lines"]


#: How :func:`read_text_lines` splits a line into words: runs of letters and digits, and each other mark on its
#: own, as BC5CDR's and JNLPBA's tokenizers split punctuation and hyphens.
WORD_PATTERN = re.compile(r"\w+|[^\w\s]")


def read_text_lines(path: str | os.PathLike, *, encoding: str = "utf-8") -> list[tuple[str, ...]]:
    """The sentences of a plain-text file, one per non-blank line, each split into words (:data:`WORD_PATTERN`): a
    user's unlabelled text, read as every user's text file is (:mod:`~hf_ecg.runtime.text_files`)."""
    return [words for words, _ in _numbered_sentences(path, encoding)]


def read_text_documents(path: str | os.PathLike, *, encoding: str = "utf-8") -> list[int] | None:
    """The document number of each sentence :func:`read_text_lines` reads, blank lines separating documents;
    ``None`` when the file has no blank line between two sentences."""
    documents = [document for _, document in _numbered_sentences(path, encoding)]
    return documents if documents[-1] > 0 else None


def _numbered_sentences(path: str | os.PathLike, encoding: str) -> list[tuple[tuple[str, ...], int]]:
    file = Path(path)
    try:
        lines = read_lines(file, expected="unlabelled text, one sentence a line", encoding=encoding)
    except TextFileError as error:
        raise CorpusFormatError(str(error)) from None
    sentences, document = [], 0
    for line in lines:
        if words := tuple(WORD_PATTERN.findall(line)):
            sentences.append((words, document))
        elif not line.strip() and sentences and sentences[-1][1] == document:
            document += 1
    if not sentences:
        raise no_sentences_error(file, "unlabelled text, one sentence per line")
    return sentences
