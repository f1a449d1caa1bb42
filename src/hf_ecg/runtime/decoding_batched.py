"""ECG-QALM's batched decoder: many samples advance together in the slots of one KV cache, refilled
as rows finish their blocks (the module docstring of :mod:`hf_ecg.runtime.decoding` tells the whole story)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch
from transformers import DynamicCache

from .decoding_base import BlockDecoder
from .decoding_cache import TemplateRow, encode_after_prefixes, length_groups
from .decoding_config import DecodedTemplate
from .decoding_scheduler import RowSchedule
from .decoding_sequential import decode_sequential
from .decoding_slots import compact_slots, keep_prefix, place_row, step_inputs, trim_cache
from .layout import context_prefix

__all__ = ["ChainedDecoder"]


class ChainedDecoder(BlockDecoder):
    """Write templates for entity sequences with a trained ECG model, block by block.

    Args:
        model: a causal LM trained by :class:`~hf_ecg.ECGTrainer` (eval mode is set here).
        tokenizer: its tokenizer (with the ECG tokens).
        ecg_config: the model's :class:`~hf_ecg.ECGConfig` (entity types, ``max_length``).
        config: sampling settings and limits; ``mode="sequential"`` runs the paper's procedure
            (:func:`~hf_ecg.runtime.decoding_sequential.decode_sequential`).
    """

    def _decode(
        self, sequences: list[tuple[str, ...]], rng: torch.Generator, progress: Callable[[int], None] | None
    ) -> list[DecodedTemplate]:
        if self.config.mode == "sequential":
            return decode_sequential(self, sequences, rng, progress)
        return self._decode_batched(sequences, rng, progress)

    # ------------------------------------------------------------------ batched

    def _decode_batched(
        self, sequences: list[tuple[str, ...]], rng: torch.Generator, progress: Callable[[int], None] | None
    ) -> list[DecodedTemplate]:
        schedule = RowSchedule(sequences, self.config.batch_size, progress)
        cache: DynamicCache | None = None
        while schedule.remaining:
            free = schedule.free_slots()
            if free and not schedule.ready:
                # Encode the waiting rows' prompts; top the pool up with new samples.
                batch, new = schedule.take_waiting(), schedule.admit(self._targets)
                for row in new:  # a phrase before the first tag: its first prompt has a context, encoded as a next one
                    row.words.extend(self._phrase(row.index, 0))
                batch += [row for row in new if row.words]
                new = [row for row in new if not row.words]
                for rows, begin in ((new, self._start), (batch, self._prefill)):
                    if rows:
                        placed, ended = begin(rows, rng)
                        schedule.ready.extend(placed)
                        for row in ended:
                            schedule.finish(row, self._end_block(row, sequences[row.index]))
                if batch or new:
                    continue  # rows that answered with their tag alone went back to waiting
            slots = schedule.slots
            for slot in free:  # fill free slots with ready rows
                if not schedule.ready:
                    break
                cache = place_row(schedule.ready.pop(0), slot, slots, cache, self._new_cache)
            active = [i for i, row in enumerate(slots) if row is not None]
            if not active:
                continue
            if len(active) <= len(slots) // 2 and not schedule.ready and not schedule.waiting:
                schedule.slots, cache = compact_slots(slots, cache, active)
                slots = schedule.slots
            finished, retried = self._step(slots, cache, rng)
            for slot in finished:
                row = slots[slot]
                slots[slot] = None
                keep_prefix(row, cache, slot, row.length, None, whole=self._keeps_whole_row(row))
                schedule.finish(row, self._end_block(row, sequences[row.index]))
            for slot in retried:  # the block reached its limit or looped: draw it again from its prompt
                row = slots[slot]
                slots[slot] = None
                keep_prefix(row, cache, slot, row.length, None)
                row.redraw(tag_sampled=False)
                schedule.waiting.append(row)
            cache = trim_cache(slots, cache)
        return schedule.results  # type: ignore[return-value]

    def _end_block(self, row: TemplateRow, sequence: tuple[str, ...]) -> DecodedTemplate | None:
        """A block the model ended with its tag (or got it forced): drawn again when a block rule rejects it and
        tries and the budget allow (``None``, the row waits to draw it again); else kept, and the row goes on to
        its next block (``None``) or, after its last, its sample is done (the result)."""
        words = self.row_sampler.block_words(row.block_ids)
        last = row.block == len(row.targets) - 1
        tag = None if last else self.ecg_config.tag_tokens[sequence[row.block]]
        forced = self.row_sampler.full(row)  # its tag was forced: keep it
        if (
            not forced
            and self.row_sampler.tries_left(row.attempts)
            and self.rules.rejects_block(row.words, words, tag=tag)
            and self.row_sampler.budget_allows(row, len(row.block_ids) + 1)
        ):
            row.redraw(tag_sampled=True)
            return None
        self.budget.kept += len(row.block_ids) + 1
        if row.keep_block(words, tag):
            row.words.extend(self._phrase(row.index, row.block))
            return None
        result = self._result(
            sequence,
            row.words,
            forced=row.forced,
            model_tokens=row.model_tokens,
            cut=row.cut,
            attempts=len(row.targets) + row.retries,
            redrawn_tokens=row.redrawn_tokens,
            refused=row.refused,
            prefix=None if row.prefix_kv is None else (row.prefix_ids, row.prefix_kv),
        )
        row.prefix_kv = None
        return result

    def _start(self, rows: list[TemplateRow], rng: torch.Generator) -> tuple[list[TemplateRow], list[TemplateRow]]:
        """New samples: the first prompt (empty context) depends only on its question (the first tag; with
        ``qa-plan`` the whole sequence), so each distinct one is encoded once per decoder and its cache and logits
        are shared."""
        keys = [self._first_prompt_key(row) for row in rows]
        prompts = {
            key: self._prompt_ids([], row.targets, row.index)
            for key, row in zip(keys, rows, strict=True)
            if key not in self._first_prompts
        }
        for length in sorted({len(prompt) for prompt in prompts.values()}):  # a forward per length: no padding
            same = sorted(key for key, prompt in prompts.items() if len(prompt) == length)
            ids = torch.tensor([prompts[key] for key in same], device=self.device)
            out = self.model(input_ids=ids, cache=self._new_cache(), use_cache=True, logits_to_keep=1)
            for j, key in enumerate(same):
                self._first_prompts[key] = (out.cache, j, out.logits[j, -1])
        logits = torch.stack([self._first_prompts[key][2] for key in keys])
        caches = [(*self._first_prompts[key][:2], None) for key in keys]
        lengths = [cache.layers[0].keys.shape[-2] for cache, _, _ in caches]
        for row in rows:
            row.prefix_ids = [self.context_id]
            row.prompt = self._prompt_ids([], row.targets, row.index)
        return self._begin_blocks(rows, logits, caches, lengths, rng)

    def _first_prompt_key(self, row: TemplateRow) -> tuple[int, ...]:
        """What a first block's prompt depends on: its tag (``qa``), every block's end (``qa-plan``), or its question
        (a sketch)."""
        if self._sketch_questions is not None:
            return tuple(self._sketch_questions[row.index][0])
        return tuple(row.targets) if self.ecg_config.prompt_layout.plan else (row.target,)

    def _prefill(self, rows: list[TemplateRow], rng: torch.Generator) -> tuple[list[TemplateRow], list[TemplateRow]]:
        """Encode the rows' prompts (left-padded forwards) and sample each row's first block token.

        A row whose prompt starts with the ``<|context|> context`` it kept from its last prompt
        (``prefix_kv``; not when the context was cut on the left) feeds only the rest. Returns the
        rows that go on to a slot, and those whose first token is their tag: their block has ended."""
        prompts = [self._prompt_ids(row.words, row.targets[row.block :], row.index, row.block) for row in rows]
        pasts = []
        for row, prompt in zip(rows, prompts, strict=True):
            size = len(row.prefix_ids)
            if size >= len(prompt):  # a whole last row was kept (_keeps_whole_row): its block is drawn again
                size = len(context_prefix(prompt, self.segments))
            reusable = row.prefix_kv is not None and prompt[:size] == row.prefix_ids[:size]
            pasts.append(size if reusable else 0)
            if not reusable:
                row.prefix_kv = None
        placed: list[TemplateRow] = []
        ended: list[TemplateRow] = []
        for group in length_groups([len(prompt) - past for prompt, past in zip(prompts, pasts, strict=True)]):
            to_place, to_end = self._prefill_group(
                [rows[j] for j in group], [prompts[j] for j in group], [pasts[j] for j in group], rng
            )
            placed += to_place
            ended += to_end
        return placed, ended

    def _prefill_group(
        self,
        rows: list[TemplateRow],
        prompts: list[list[int]],
        pasts: list[int],
        rng: torch.Generator,
    ) -> tuple[list[TemplateRow], list[TemplateRow]]:
        """One forward: each row's kept prefix (``pasts[j]`` positions, right-aligned in a past of
        width ``max(pasts)``) then the rest of its prompt (left-padded). A row's live cache columns are
        its past and its prompt's rest, with padding between; ``_place`` gathers them."""
        self._reused_prompt_tokens += sum(pasts)
        kept = [row.prefix_kv for row in rows]
        for row, prompt in zip(rows, prompts, strict=True):  # what the next prompt starts with
            row.prefix_kv, row.prefix_ids, row.prompt = None, context_prefix(prompt, self.segments), prompt
        out, mask = encode_after_prefixes(self.model, self._new_cache(), prompts, pasts, kept, self.pad_id)
        columns = [mask[j].nonzero().squeeze(1).to(self.device) if past else None for j, past in enumerate(pasts)]
        caches = [(out.cache, j, columns[j]) for j in range(len(rows))]
        lengths = [len(prompt) for prompt in prompts]
        return self._begin_blocks(rows, out.logits[:, -1, :], caches, lengths, rng)

    def _begin_blocks(
        self,
        rows: list[TemplateRow],
        logits: torch.Tensor,
        caches: list[tuple[Any, int, torch.Tensor | None]],
        lengths: list[int],
        rng: torch.Generator,
    ) -> tuple[list[TemplateRow], list[TemplateRow]]:
        """Sample each row's first block token from its prompt's logits: the rows that keep their prompt's cache
        for a slot, and those whose first token is their tag (their block has ended)."""
        placed, ended = [], []
        tokens = self.row_sampler.sample(logits, rows, rng)
        for row, token, cache, length in zip(rows, tokens, caches, lengths, strict=True):
            row.model_tokens += token != row.target
            if token == row.target:
                source, j, columns = cache
                keep_prefix(row, source, j, length, columns, whole=self._keeps_whole_row(row))
                ended.append(row)
                continue
            row.pending, row.length, row.cache = token, length, cache
            placed.append(row)
        return placed, ended

    def _step(
        self, slots: list[TemplateRow | None], cache: DynamicCache, rng: torch.Generator
    ) -> tuple[list[int], list[int]]:
        """Feed every slot's pending token; return the slots whose row just emitted its target, and those
        whose block is drawn again: it reached ``max_block_tokens`` or broke a block rule with tries left
        (sampling only: greedy would repeat it), or the model wrote a tag it may not write there."""
        tokens, mask, positions = step_inputs(slots, cache, self.pad_id)
        out = self.model(
            input_ids=tokens.to(self.device),
            attention_mask=mask.to(self.device),
            position_ids=positions.to(self.device),
            cache=cache,
            use_cache=True,
        )
        live = [i for i, row in enumerate(slots) if row is not None]
        for i in live:
            slots[i].block_ids.append(slots[i].pending)  # type: ignore[union-attr]
            slots[i].length += 1  # type: ignore[union-attr]
        retried = [i for i in live if self.row_sampler.retries_block(slots[i])]  # type: ignore[arg-type]
        live = [i for i in live if i not in retried]
        rows = [slots[i] for i in live]
        next_tokens = self.row_sampler.sample(out.logits[live, -1, :], rows, rng, open_tags=True) if live else []  # type: ignore[arg-type]
        finished = []
        for slot, row, token in zip(live, rows, next_tokens, strict=True):
            # it wanted an entity it may not have here: draw the block again
            if self.row_sampler.unrequested(row, token):
                row.redrawn_tokens += 1
                self.budget.redrawn += len(row.block_ids) + 1
                retried.append(slot)
                continue
            row.model_tokens += token != row.target
            if token == row.target:
                finished.append(slot)
            else:
                row.pending = token
        return finished, retried

    def _keeps_whole_row(self, row: TemplateRow) -> bool:
        """Whether the row's last block just ended and the mention writer continues the whole row (mention layout
        ``after-sentence``, :meth:`decode` asked to keep prefixes)."""
        return self._whole_rows and row.block == len(row.targets) - 1
