"""The entity constraint, as a ``transformers`` logits processor: in each row, of the structural tokens
(entity tags, ``<ENDTEXT>``, the segment tokens, the tokenizer's special tokens) only the row's requested
stop may be written, so every sentence carries exactly the requested entity sequence.

:class:`EntityConstraintLogitsProcessor` is what the decoders apply at every step (with their per-row state:
which stop each row waits for, whose block is full, who may not end yet), and what ``model.generate()``
takes for one block::

    constraint = EntityConstraintLogitsProcessor(stop_ids, banned_ids, targets=[tag_id] * batch,
                                                 max_block_tokens=64)
    model.generate(prompts, logits_processor=LogitsProcessorList([constraint]), eos_token_id=stop_ids, ...)
"""

from __future__ import annotations

from collections.abc import Sequence

import torch
from transformers import LogitsProcessor

__all__ = ["EntityConstraintLogitsProcessor"]


class EntityConstraintLogitsProcessor(LogitsProcessor):
    """Let each row write no structural token but its requested stop (``targets[i]``: a tag, or
    ``<ENDTEXT>`` for the last block), and only that one once a block has room for nothing else.

    Args:
        stop_ids: the tokens that end a block (every entity tag and ``<ENDTEXT>``).
        banned_ids: every structural token (the stops among them); none may appear in the text.
        targets: the stop each row waits for; for ``generate()`` (the decoders pass theirs per step).
        max_block_tokens: under ``generate()``, the block's length limit counted from the prompt: at
            ``max_block_tokens - 1`` written tokens the target is the only choice (the decoders call
            :meth:`constrain` with their own per-row ``full``).
        block_end: ``"target"`` (default): only the requested stop ends a block. ``"any-stop"``: the other
            stops keep their probability too (a decoder replaces one drawn by the target and counts a cut).
    """

    def __init__(
        self,
        stop_ids: Sequence[int],
        banned_ids: Sequence[int],
        *,
        targets: Sequence[int] | None = None,
        max_block_tokens: int | None = None,
        block_end: str = "target",
    ) -> None:
        if block_end not in ("target", "any-stop"):
            raise ValueError(f"block_end must be 'target' or 'any-stop', got {block_end!r}")
        if not set(stop_ids) <= set(banned_ids):
            raise ValueError("every stop token must be among the banned (structural) tokens")
        self.stops = torch.tensor(sorted(set(stop_ids)), dtype=torch.long)
        self.banned = torch.tensor(sorted(set(banned_ids)), dtype=torch.long)
        self.targets = None if targets is None else torch.tensor(list(targets), dtype=torch.long)
        self.max_block_tokens = max_block_tokens
        self.block_end = block_end
        self._prompt_length: int | None = None

    def constrain(
        self, scores: torch.Tensor, targets: torch.Tensor, full: torch.Tensor, unended: torch.Tensor
    ) -> torch.Tensor:
        """``scores`` (rows × vocabulary, modified in place and returned) constrained per row: ``targets`` the
        stop each row waits for, ``full`` the rows that must write it now, ``unended`` the rows that may not
        write it (nor, under ``any-stop``, another stop) yet."""
        device = scores.device
        targets = targets.to(device).unsqueeze(1)
        target_scores = scores.gather(1, targets)
        stops = self.stops.to(device)
        stop_scores = scores[:, stops]
        scores[:, self.banned.to(device)] = -float("inf")
        if full.any():
            scores[full] = -float("inf")
        target_scores[unended & ~full] = -float("inf")
        if self.block_end == "any-stop":
            stop_scores[unended & ~full] = -float("inf")
            stop_scores[full] = -float("inf")
            scores[:, stops] = stop_scores
        scores.scatter_(1, targets, target_scores)
        return scores

    def __call__(self, input_ids: torch.LongTensor, scores: torch.FloatTensor) -> torch.FloatTensor:
        if self.targets is None:
            raise ValueError("give targets (the stop each row waits for) to use the constraint in generate()")
        if len(self.targets) != scores.shape[0]:
            raise ValueError(f"{len(self.targets)} targets for a batch of {scores.shape[0]} rows")
        if self._prompt_length is None:  # the first call sees the prompts alone
            self._prompt_length = input_ids.shape[1]
        written = input_ids.shape[1] - self._prompt_length
        rows = scores.shape[0]
        at_limit = self.max_block_tokens is not None and written + 1 >= self.max_block_tokens
        full = torch.full((rows,), at_limit, dtype=torch.bool, device=scores.device)
        unended = torch.zeros(rows, dtype=torch.bool, device=scores.device)
        return self.constrain(scores.clone(), self.targets, full, unended)
