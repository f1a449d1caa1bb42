"""The user's unlabelled text: a plain-text file, one sentence a line, split into words the way the biomedical
corpora split them (:func:`read_text_lines`)."""

from __future__ import annotations

import os
import re
import unicodedata
from pathlib import Path

from .corpus import no_sentences_error, not_text_error

__all__ = ["WORD_PATTERN", "read_text_lines"]


#: How :func:`read_text_lines` splits a line into words: runs of letters and digits, and each other mark on its
#: own, as BC5CDR's and JNLPBA's tokenizers split punctuation and hyphens.
WORD_PATTERN = re.compile(r"\w+|[^\w\s]")


def read_text_lines(path: str | os.PathLike, *, encoding: str = "utf-8-sig") -> list[tuple[str, ...]]:
    """The sentences of a plain-text file, one per non-blank line, each split into words (:data:`WORD_PATTERN`,
    Unicode NFC): a user's unlabelled text. A file that is not text names its line."""
    file = Path(path)
    try:
        lines = file.read_text(encoding=encoding).splitlines()
    except UnicodeDecodeError as error:
        raise not_text_error(file, encoding, error) from None
    sentences = [tuple(WORD_PATTERN.findall(unicodedata.normalize("NFC", line))) for line in lines]
    sentences = [words for words in sentences if words]
    if not sentences:
        raise no_sentences_error(file, "unlabelled text, one sentence per line")
    return sentences
