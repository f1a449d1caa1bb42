"""What a template row may draw next, and when its block is drawn again: :class:`RowSampler`, the sampler both
ECG decoders draw with (vLLM's sampler as a named part), over the constraint
(:class:`~hf_ecg.runtime.decoding_constraint.EntityConstraintLogitsProcessor`), whole characters
(:class:`~hf_ecg.runtime.char_boundaries.CharacterBoundaries`) and the block rules
(:class:`~hf_ecg.runtime.decoding_rules.BlockRules`), within the run's redraw budget."""

from __future__ import annotations

from typing import Any

import torch

from .blocks import ENDTEXT, SEGMENT_TOKENS, tag_label
from .char_boundaries import CharacterBoundaries
from .decoding_cache import TemplateRow
from .decoding_config import DecodingConfig, RedrawBudget
from .decoding_constraint import EntityConstraintLogitsProcessor
from .decoding_rules import BlockRules
from .sampler import Sampler
from .words import WordSplitter, visible

__all__ = ["RowSampler"]


class RowSampler:
    """Draws each row's next token: only the row's target may be structural, a full block must end, a block does
    not end inside a character; and says, as a block is written, whether it is drawn again.

    Args:
        tokenizer: the generator's tokenizer.
        config: the decoding settings (sampling, limits, which rules apply).
        rules: the block rules.
        tag_ids: each entity type's tag id.
        endtext_id: the id of ``<ENDTEXT>``.
        banned: ids never drawn but as a row's target (the structural and special tokens).
        characters: the tokens' byte boundaries.
        split_words: how a block's text splits into the corpus's words.
    """

    def __init__(
        self,
        tokenizer: Any,
        config: DecodingConfig,
        rules: BlockRules,
        *,
        tag_ids: dict[str, int],
        endtext_id: int,
        banned: list[int],
        characters: CharacterBoundaries,
        split_words: WordSplitter,
    ) -> None:
        self.tokenizer, self.config, self.rules = tokenizer, config, rules
        self.stop_ids = sorted({endtext_id, *tag_ids.values()})  # the tokens that end a block
        self._stop_set = frozenset(self.stop_ids)
        self._tag_id_list = torch.tensor(sorted(tag_ids.values()), dtype=torch.long)
        self._tag_id_set = frozenset(tag_ids.values())
        self.constraint = EntityConstraintLogitsProcessor(self.stop_ids, banned, block_end=config.block_end)
        # No token that leaves a block inside a character (an undertrained model's cut bytes decode as U+FFFD).
        self.characters = characters
        self.split_words = split_words
        self.sampler = Sampler(config.sampling)
        #: What the current (or last) decode call kept and threw away; progress bars read it.
        self.budget = RedrawBudget(config.redraw_budget, config.max_block_tokens)

    def block_words(self, ids: list[int]) -> list[str]:
        """The words of a generated block (its tag excluded), split like the training corpus's tokens
        (:class:`~hf_ecg.runtime.words.WordSplitter`); words that would read as structure are dropped."""
        text = visible(self.tokenizer.decode(ids, skip_special_tokens=True, clean_up_tokenization_spaces=False))
        return [w for w in self.split_words(text) if tag_label(w) is None and w != ENDTEXT and w not in SEGMENT_TOKENS]

    def sample(
        self, logits: torch.Tensor, rows: list[TemplateRow], rng: torch.Generator, *, open_tags: bool = False
    ) -> list[int]:
        """Next token per row: only the row's target may be structural; a full block must end now.

        Under ``block_end="any-stop"`` the other stop tokens (all tags and ``<ENDTEXT>``) keep their
        probability: one drawn ends the block as the target would, and counts in the row's ``cut``.
        With ``open_tags`` (``redraw_unrequested_tag``), the other entity tags keep their probability in the
        rows whose block may be drawn again, and one drawn is returned as it is: the caller draws the
        block again (:meth:`unrequested`) rather than let the mask turn it into pieces of its name."""
        scores = logits.to(torch.float32, copy=True)
        targets = torch.tensor([row.target for row in rows])
        full = torch.tensor([self.full(row) for row in rows], device=scores.device)
        # A sentence must not come out empty (no <ENDTEXT> before its first word), nor, when asked, stop
        # anywhere but after a sentence ending.
        unended = torch.tensor([self.may_not_end(row) for row in rows], device=scores.device)
        opened = None
        if open_tags and self.config.redraw_unrequested_tag and self.config.block_end == "target":
            may = [self.tries_left(row.attempts) and self.budget.allows() for row in rows]
            opened = torch.tensor(may, device=scores.device) & ~full
            tag_ids = self._tag_id_list.to(scores.device)
            tag_scores = scores[:, tag_ids]
            opened = opened.unsqueeze(1) & (tag_ids.unsqueeze(0) != targets.to(scores.device).unsqueeze(1))
        scores = self.constraint.constrain(scores, targets, full, unended)
        if opened is not None and opened.any():
            scores[:, tag_ids] = torch.where(opened, tag_scores, scores[:, tag_ids])
        if self.characters.active:
            states = [self.characters.state(row.block_ids) for row in rows]
            self.characters.mask(scores, states, exempt=full.tolist())
        tokens = self.sampler.draw(scores, rng).tolist()
        for i, (row, was_full) in enumerate(zip(rows, full.tolist(), strict=True)):
            row.forced += was_full
            if opened is not None and self.unrequested(row, tokens[i]):
                continue
            if tokens[i] != row.target and tokens[i] in self._stop_set:
                tokens[i] = row.target  # another stop the model chose: the block ends, with the requested tag
                row.cut += 1
        return tokens

    def unrequested(self, row: TemplateRow, token: int) -> bool:
        """Whether ``token`` is an entity tag the row's block may not end on (``redraw_unrequested_tag``)."""
        return token != row.target and token in self._tag_id_set

    def may_not_end(self, row: TemplateRow) -> bool:
        """Whether a row in its last block may not write <ENDTEXT> yet: its sentence is empty so far or,
        under ``end_at_sentence_end``, its last word is not a sentence ending."""
        if row.block < len(row.targets) - 1 or (row.words and not self.config.end_at_sentence_end):
            return False
        words = self.block_words(row.block_ids) or row.words
        if not words:
            return True
        return self.config.end_at_sentence_end and words[-1] not in self.rules.endings

    def retries_block(self, row: TemplateRow) -> bool:
        """Whether a block in progress is drawn again now, while it has tries left (``max_attempts``) and only
        when sampling: it reached its token limit (rather than getting its tag by force, as the paper
        regenerates a block), or it has just looped (``redraw_repetition``), begun a second sentence
        (``redraw_run_on``) or spelt a tag's name (``redraw_tag_pieces``): the checks the block would fail
        when it ends, made as each word is written, so a bad block does not run on to the limit."""
        if not self.tries_left(row.attempts):
            return False
        if self.full(row):
            return self.budget_allows(row, len(row.block_ids))
        if self.rules.line_break(row.block_ids):
            return self.redraw_or_end(row)  # a line break: no corpus sentence holds one
        if not self.rules.checks_words:
            return False
        complete = self.block_words(row.block_ids)[:-1]  # the last word may still grow
        checked = row.checked_words
        if len(complete) <= checked:
            return False
        row.checked_words = len(complete)
        return self.rules.breaks_as_written(row.words, complete, checked) and self.redraw_or_end(row)

    def redraw_or_end(self, row: TemplateRow) -> bool:
        """A block in progress broke a rule: drawn again if the budget allows, else it ends now, its tag forced
        (a rambling block ends at its first sign, rather than at max_block_tokens)."""
        if self.budget_allows(row, len(row.block_ids)):
            return True
        row.force_tag = True
        return False

    def full(self, row: TemplateRow) -> bool:
        """Whether the row's block has room for its tag only (``max_block_tokens``), or broke a block rule when the
        redraw budget was spent (``TemplateRow.force_tag``): the tag is then forced."""
        return row.force_tag or len(row.block_ids) + 1 >= self.config.max_block_tokens

    def tries_left(self, attempts: int) -> bool:
        """Whether a block drawn ``attempts`` times may be drawn again (sampling only: greedy would repeat it)."""
        return self.config.do_sample and attempts < self.config.max_attempts

    def budget_allows(self, row: TemplateRow, cost: int) -> bool:
        """Whether the run's redraw budget lets a rejected block with tries left, ``cost`` tokens so far, be
        drawn again (:meth:`RedrawBudget.spend`); a refusal also counts in the row's ``refused``."""
        if self.budget.spend(cost):
            return True
        row.refused += 1
        return False
