"""The model runs of mention writing: :class:`MentionRunner` encodes the tries' prompts on top of the keys and values
kept of earlier ones and steps the batch of rows (:class:`~hf_ecg.runtime.decoding_cache.RowBatch`), drawing each
row's next token with the :class:`~hf_ecg.runtime.sampler.Sampler` from the row's template's random stream."""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any

import torch

from .decoding_cache import KeptStates, RowBatch, encode_after_prefixes, length_groups, live_columns, new_cache
from .sampler import Sampler

__all__ = ["PREFILL_PASSES", "MentionRunner", "reused_length", "shared_length"]

#: Prefill passes per draw at most: the rests to encode range from one id (a try drawn again) to a whole sentence;
#: rows of similar rests share a pass, so that little of a pass is padding.
PREFILL_PASSES = 4


class MentionRunner:
    """Runs the generator over the writer's rows.

    Args:
        model: the generator.
        sampler: how each token is drawn.
        banned: ids never drawn (the structural tokens, the special ones but ``<ENDTEXT>``).
        endtext_id: the id of ``<ENDTEXT>``, never drawn as an answer's first token.
        pad_id: the id that pads prompts encoded together.
    """

    def __init__(self, model: Any, sampler: Sampler, banned: list[int], endtext_id: int, pad_id: int) -> None:
        self.model, self.sampler, self.banned = model, sampler, banned
        self.endtext_id, self.pad_id = endtext_id, pad_id

    def begin(
        self,
        prompts: list[list[int]],
        kept: Sequence[tuple[list[int], KeptStates] | None],
        keys: list[int],
        streams: Sequence[random.Random],
        *,
        keep_states: bool = True,
    ) -> tuple[list[RowBatch], list[KeptStates]]:
        """Encode the prompts (``keys[j]`` names prompt ``j``'s row) and draw each answer's first token: the rows,
        one batch per prefill pass, to merge (:meth:`RowBatch.merged`) for :meth:`step`, and each prompt's
        keys/values (empty lists unless ``keep_states``: an ``after-sentence`` row goes on in the batch)."""
        pasts = [0 if k is None else reused_length(prompt, k[0]) for prompt, k in zip(prompts, kept, strict=True)]
        device = self.model.device
        states: list[KeptStates] = [[] for _ in prompts]
        parts, logits = [], []
        # What is left to encode varies far more than the prompts' lengths: rows of similar rests share a pass.
        rests = [len(prompt) - past for prompt, past in zip(prompts, pasts, strict=True)]
        groups = length_groups(rests, max_groups=PREFILL_PASSES)
        for group in groups:
            cache = new_cache(self.model)
            past_states = [kept[j][1] if pasts[j] else None for j in group]  # type: ignore[index]
            out, mask = encode_after_prefixes(
                self.model, cache, [prompts[j] for j in group], [pasts[j] for j in group], past_states, self.pad_id
            )
            for row, j in enumerate(group):
                if not keep_states:
                    continue
                states[j] = _row_states(cache, row, mask[row].to(device))
            positions = torch.tensor([len(prompts[j]) for j in group], device=device)
            parts.append(RowBatch([keys[j] for j in group], cache, mask.to(device), positions, [[] for _ in group]))
            logits.append(out.logits[:, -1, :])
        rows = [keys[j] for group in groups for j in group]
        answers = [answer for part in parts for answer in part.answers]
        firsts = self.sample(torch.cat(logits), rows, streams, [False] * len(rows))
        for answer, token in zip(answers, firsts, strict=True):
            answer.append(token)
        return parts, states

    def step(self, batch: RowBatch, streams: Sequence[random.Random]) -> None:
        """Feed each row its next id (the next of its ``forced`` ids, else the last it drew) and draw its next
        (none while it has forced ids left; its answer's first once it has none)."""
        batch.mask = torch.cat([batch.mask, batch.mask.new_ones((len(batch.keys), 1))], 1)
        tokens = [ids.pop(0) if ids else answer[-1] for ids, answer in zip(batch.forced, batch.answers, strict=True)]
        out = self.model(
            input_ids=torch.tensor(tokens, device=batch.mask.device)[:, None],
            attention_mask=batch.mask,
            position_ids=batch.positions[:, None],
            cache=batch.cache,
            use_cache=True,
        )
        batch.positions = batch.positions + 1
        drawing = [row for row, ids in enumerate(batch.forced) if not ids]
        logits = out.logits[:, -1, :]
        if len(drawing) < len(batch.keys):
            logits = logits[drawing]
        may_end = [bool(batch.answers[row]) for row in drawing]
        tokens = self.sample(logits, [batch.keys[row] for row in drawing], streams, may_end)
        for row, token in zip(drawing, tokens, strict=True):
            batch.answers[row].append(token)

    def sample(
        self, logits: torch.Tensor, keys: Sequence[int], streams: Sequence[random.Random], may_end: Sequence[bool]
    ) -> list[int]:
        """A token per row (row ``r`` drawing from ``streams[keys[r]]``): never a structural one, nor
        ``<ENDTEXT>`` where ``may_end[r]`` is false (the mention's first token)."""
        scores = logits.to(torch.float32, copy=True)
        scores[:, self.banned] = -float("inf")
        if not all(may_end):
            scores[torch.tensor([not end for end in may_end], device=scores.device), self.endtext_id] = -float("inf")
        return self.sampler.draw_at(scores, [streams[key].random() for key in keys])


def _row_states(cache: Any, row: int, mask: torch.Tensor) -> KeptStates:
    """Row ``row``'s keys and values in ``cache``, per layer, at the columns its attention ``mask`` marks live."""
    columns = mask.nonzero().squeeze(1)
    return [
        (live_columns(layer.keys, row, 0, columns), live_columns(layer.values, row, 0, columns))
        for layer in cache.layers
    ]


def reused_length(prompt: Sequence[int], earlier: Sequence[int]) -> int:
    """How many of ``prompt``'s first ids need not be encoded again after ``earlier`` ids (their keys and values are
    kept): those the two share, but never the last, whose scores draw the answer's first token."""
    return min(shared_length(prompt, earlier), len(prompt) - 1)


def shared_length(a: Sequence[int], b: Sequence[int]) -> int:
    """How many ids ``a`` and ``b`` share from their start."""
    n = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        n += 1
    return n
