"""What a written mention's try must be to be kept, and when a try ends: :class:`MentionRules`, read by the
:class:`~hf_ecg.runtime.mention_writer.MentionWriter` at each step (ended?) and at each ended try (kept, or why not)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .blocks import ENDTEXT, MENTION_TOKEN, SEGMENT_TOKENS, tag_label
from .ecg_config import ECGConfig
from .mentions import MentionBank, mention_problem
from .vocabulary import VocabularyTables, word_start_tokens
from .words import WordSplitter

__all__ = ["MentionRules", "loose_edge"]


class MentionRules:
    """The limits a written mention keeps and the checks it passes.

    A try ends at ``<ENDTEXT>``, at :attr:`max_tokens` (the longest training mention's tokens, and room for what the
    tokenizer puts before ``<ENDTEXT>``), or as soon as it holds more words than the longest training mention of
    its type. An ended try is rejected (:meth:`judge`, with the reason) when it did not end, comes out empty, is
    longer in words than its type's longest training mention, holds a word that reads as structure, begins or ends
    on punctuation (it ran past the name), fails the check every mention source passes, or is a training mention
    of another type only (``selegiline`` written for a Disease: the model ignored the slot's tag).

    Args:
        tokenizer: the generator's tokenizer.
        ecg_config: its :class:`~hf_ecg.ECGConfig` (the training mentions' lengths, the word exceptions).
        endtext_id: the id of ``<ENDTEXT>``.
        known: the training mention bank (the types each known mention has).
        vocabulary: the tokenizer's tables, computed once per model; computed here when not given.
    """

    def __init__(
        self,
        tokenizer: Any,
        ecg_config: ECGConfig,
        endtext_id: int,
        *,
        known: MentionBank | None = None,
        vocabulary: VocabularyTables | None = None,
    ) -> None:
        self.tokenizer = tokenizer
        self.endtext_id = endtext_id
        # an answer holds the mention's ids (the longest training mention's: mention_max_tokens), then whatever text
        # tokenization puts before <ENDTEXT> (a space token with a byte-level BPE): without room for it the longest
        # training mentions could never end
        before_end = len(tokenizer(f" {ENDTEXT}", add_special_tokens=False)["input_ids"]) - 1
        self.max_tokens = (ecg_config.mention_max_tokens or 16) + before_end
        self.max_words: dict[str, int] = ecg_config.mention_max_words or {}
        self.split_words = WordSplitter(ecg_config.word_exceptions)
        tables = vocabulary.word_starts if vocabulary is not None else word_start_tokens(tokenizer)
        self._word_starts, self._blank = tables
        # The types each known mention has (case folded).
        self.known_types: dict[str, set[str]] = {}
        for label in known.types if known is not None else ():
            for mention in known.counts(label):
                self.known_types.setdefault(" ".join(mention).casefold(), set()).add(label)

    def ended(self, answer: Sequence[int], label: str | None) -> bool:
        """Whether a try's ``answer`` ended: ``<ENDTEXT>``, the token limit, or more words than the longest training
        mention of ``label`` (not checked for ``None``)."""
        return bool(answer) and (
            answer[-1] == self.endtext_id
            or len(answer) > self.max_tokens
            or (label is not None and self.too_long(answer, label))
        )

    def words_at_least(self, ids: Sequence[int]) -> int:
        """How many words the answer ``ids`` holds at least (:meth:`judge` splits the text on spaces first): its word
        starts, and one for text before the first of them."""
        starts = sum(i in self._word_starts for i in ids)
        first = next((i for i in ids if i not in self._blank), None)
        return starts + (first is not None and first not in self._word_starts)

    def too_long(self, ids: Sequence[int], label: str) -> bool:
        """Whether an answer already holds more words than the longest training mention of ``label``."""
        limit = self.max_words.get(label)
        return limit is not None and len(ids) > limit and self.words_at_least(ids) > limit

    def judge(self, ids: list[int], label: str) -> tuple[tuple[str, ...] | None, str]:
        """The mention's words, or ``None`` and why the try is rejected."""
        if self.endtext_id not in ids:
            return None, "too long" if self.too_long(ids, label) else "unended"
        text = self.tokenizer.decode(
            ids[: ids.index(self.endtext_id)], skip_special_tokens=True, clean_up_tokenization_spaces=False
        )
        words = tuple(self.split_words(text))
        if not words:
            return None, "empty"
        if any(tag_label(w) is not None or w == ENDTEXT or w in (*SEGMENT_TOKENS, MENTION_TOKEN) for w in words):
            return None, "structure"
        if len(words) > self.max_words.get(label, len(words)):
            return None, "too long"
        if loose_edge(words):
            return None, "punctuation at an edge"
        if mention_problem(words):  # the check every mention source passes (a control character, ...)
            return None, "no mention"
        if label not in self.known_types.get(" ".join(words).casefold(), {label}):
            return None, "another type's mention"
        return words, ""


_CLOSING = {")": "(", "]": "["}


def loose_edge(words: tuple[str, ...]) -> bool:
    """Whether a mention begins or ends on a word with no letter or digit (``pain -``, ``L - dopa ,``): the
    writer ran past the name. A closing bracket whose opening one is in the mention (``IL-2 receptor ( IL-2R )``)
    is part of it."""
    first, last = words[0], words[-1]
    if not any(ch.isalnum() for ch in first):
        return True
    return not any(ch.isalnum() for ch in last) and _CLOSING.get(last) not in words[:-1]
