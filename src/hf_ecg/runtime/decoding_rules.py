"""The block rules: when a block the model wrote is drawn again. A block is rejected when it leaves the sentence
without a sentence ending (``redraw_unended``), begins a second sentence where the training sentences never do
(``redraw_run_on``), makes an n-gram repeat (``redraw_repetition``) or spells a tag's name (``redraw_tag_pieces``):
checked when the block ends (:meth:`BlockRules.rejects_block`) and, but for the ending, as each word is written
(:meth:`BlockRules.breaks_as_written`), so that a bad block does not run on to its token limit. Each rule reads what
the model's training corpus does (``ECGConfig``: its sentence endings, second-sentence openings, unended share, the
tag pieces' forms)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .blocks import tag_label
from .decoding_config import DecodingConfig
from .ecg_config import ECGConfig
from .tag_pieces import TagPieceFinder, tag_piece_forms, vocabulary_words
from .words import (
    DEFAULT_SENTENCE_ENDINGS,
    RARE_IN_TRAINING_SHARE,
    REPETITION_MAX_N,
    REPETITION_TIMES,
    UNENDED_RULE_MAX_SHARE,
    has_repetition,
    number_shape,
    repeats_at_end,
    sentence_breaks,
)

__all__ = ["BlockRules"]

#: Words before a block that a repetition through it can reach.
_REPETITION_SPAN = REPETITION_MAX_N * REPETITION_TIMES - 1


def _shapes(words: list[str]) -> list[str]:
    """The words as redraw_repetition compares them: numbers as their shape, so a loop of changing numbers
    (``20 % of 30 % of 50 % of``, the number soup a generator writes until its block limit) is a loop."""
    return [number_shape(word) for word in words]


class BlockRules:
    """The rules of one decoder: ``config``'s ``redraw_*`` switches over what the model's corpus does.

    Args:
        tokenizer: the model's tokenizer (its tag pieces' forms, line-break tokens).
        ecg_config: the model's :class:`~hf_ecg.ECGConfig`.
        config: the decoding settings.
        words: the tokenizer's whole words (:func:`~.tag_pieces.vocabulary_words`), if already computed.
    """

    def __init__(
        self, tokenizer: Any, ecg_config: ECGConfig, config: DecodingConfig, words: frozenset[str] | None = None
    ) -> None:
        self.config = config
        vocab = tokenizer.get_vocab()
        forms = ecg_config.tag_pieces
        if forms is None:  # a model trained before they were recorded
            forms = tag_piece_forms(tokenizer, ecg_config.entity_types)
        words = words if words is not None else vocabulary_words(vocab)
        #: Finds the words of O text that spell a tag's name (also each sample's ``tag_pieces`` count).
        self.tag_pieces = TagPieceFinder(forms, ecg_config.tag_piece_exceptions or (), words=words)
        # Tokens that write a line break (byte-level BPE: "Ċ"; byte fallback: <0x0A>): redraw_run_on.
        self._line_breaks = frozenset(
            i for token, i in vocab.items() if "\n" in token or "Ċ" in token or token == "<0x0A>"
        )
        self.endings = frozenset(ecg_config.sentence_endings or DEFAULT_SENTENCE_ENDINGS)
        # redraw_unended draws again only what the training sentences rarely do (tweets often end on a word).
        unended = ecg_config.unended_share
        self._redraw_unended = config.redraw_unended and (unended is None or unended < UNENDED_RULE_MAX_SHARE)
        # redraw_run_on looks for the second-sentence openings the training sentences (almost) never have.
        breaks = ecg_config.sentence_breaks or {}  # empty: a model trained before it was recorded
        self._break_kinds = frozenset(
            kind for kind, share in breaks.items() if share < RARE_IN_TRAINING_SHARE and config.redraw_run_on
        )
        #: Whether any rule reads a block's words as they are written.
        self.checks_words = bool(config.redraw_repetition or self._break_kinds or config.redraw_tag_pieces)

    def line_break(self, block_ids: Sequence[int]) -> bool:
        """Whether the block's last token writes a line break (``redraw_run_on``): no corpus sentence holds one."""
        return self.config.redraw_run_on and bool(block_ids) and block_ids[-1] in self._line_breaks

    def breaks_as_written(self, words: list[str], complete: list[str], checked: int) -> bool:
        """Whether the block's words completed since the last check (``complete[checked:]``, after the sentence's
        ``words``) spell a tag's name, begin a second sentence or close a loop."""
        config = self.config
        return bool(
            (
                config.redraw_tag_pieces
                and self.tag_pieces(complete[checked:], starts_sentence=not words and not checked)
            )
            or self.starts_sentence(words + complete[:checked], complete[checked:])
            or (config.redraw_repetition and repeats_at_end(_shapes(words[-_REPETITION_SPAN:] + complete)))
        )

    def rejects_block(self, words: list[str], block: list[str], *, tag: str | None) -> bool:
        """Whether a block the model ended (its ``block`` words after the sentence's ``words``, then ``tag``, or
        None for the last block) is drawn again: the last block leaves the sentence without a sentence ending
        (``redraw_unended``), the block begins a second sentence (``redraw_run_on``), or it makes an n-gram
        repeat 3 times in a row (``redraw_repetition``; one already before it does not count), or its text spells
        a tag's name (``redraw_tag_pieces``)."""
        if self.config.redraw_tag_pieces and self.tag_pieces(block, starts_sentence=not words):
            return True
        if self._redraw_unended and tag is None and (block or words or [""])[-1] not in self.endings:
            return True
        if self.starts_sentence(words, block if tag is None else [*block, tag]):
            return True
        if self.config.redraw_repetition:
            recent, block = _shapes(words[-_REPETITION_SPAN:]), _shapes(block)
            return has_repetition(recent + block) and not has_repetition(recent)
        return False

    def starts_sentence(self, words: list[str], new: list[str]) -> bool:
        """Whether the ``new`` words after the sentence's ``words`` begin a second sentence (``redraw_run_on``,
        for models whose training sentences do not hold two): :func:`~hf_ecg.runtime.words.sentence_breaks`."""
        if not self._break_kinds or not new:
            return False
        tail = [*words[-1:], *new]
        entity_starts = {i for i, word in enumerate(tail) if tag_label(word) is not None}
        return bool(sentence_breaks(tail, self.endings, entity_starts, self._break_kinds))
