"""What the decoders and the mention writer read from a tokenizer's whole vocabulary, computed once per model:
which tokens keep characters whole (:class:`~.char_boundaries.CharacterBoundaries`), the vocabulary's words (for the
tag-piece rule, :func:`~.tag_pieces.vocabulary_words`) and which tokens begin a word (the writer's word count).

:class:`~.engine.SampleEngine` builds one :class:`VocabularyTables` per model and hands it to every decoder and
writer it makes; a decoder or writer built alone computes what it needs itself.
"""

from __future__ import annotations

from functools import cached_property
from typing import Any

from .char_boundaries import CharacterBoundaries
from .tag_pieces import vocabulary_words

__all__ = ["VocabularyTables", "word_start_tokens"]


def word_start_tokens(tokenizer: Any) -> tuple[frozenset[int], frozenset[int]]:
    """The tokens whose text is a space then more (`` cell``), and the tokens of white space alone: an answer holds
    at least as many words as it has such word starts (:meth:`~.mention_writer.MentionWriter._words_at_least`).
    Decodes the whole vocabulary token by token (about half a second for SmolLM2's 49k tokens)."""
    ids = sorted(tokenizer.get_vocab().values())
    texts = tokenizer.batch_decode([[i] for i in ids], clean_up_tokenization_spaces=False)
    starts = frozenset(i for i, text in zip(ids, texts, strict=True) if text[:1].isspace() and text.strip())
    blank = frozenset(i for i, text in zip(ids, texts, strict=True) if not text.strip())
    return starts, blank


class VocabularyTables:
    """One tokenizer's tables: ``characters`` (the UTF-8 mask) and ``words`` (its whole words), which every decoder
    reads, and :attr:`word_starts` (:func:`word_start_tokens`), which only a mention writer reads: decoded on first
    use, so that an engine that writes no mentions does not pay for it."""

    def __init__(self, tokenizer: Any) -> None:
        self._tokenizer = tokenizer
        self.characters = CharacterBoundaries(tokenizer)
        self.words = vocabulary_words(tokenizer.get_vocab())

    @classmethod
    def of(cls, tokenizer: Any) -> VocabularyTables:
        return cls(tokenizer)

    @cached_property
    def word_starts(self) -> tuple[frozenset[int], frozenset[int]]:
        """The word-start tokens and the blank ones (:func:`word_start_tokens`)."""
        return word_start_tokens(self._tokenizer)
