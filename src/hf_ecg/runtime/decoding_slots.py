"""The decode cache's slots, the model runner's state in the batched decoder: a prefilled row copied into a slot
(right-aligned), the keys and values of a row's context kept when it leaves its slot, columns no row uses trimmed,
and the batch compacted to its live rows at the tail of a run."""

from __future__ import annotations

from typing import Any

import torch
from transformers import DynamicCache

from .decoding_cache import SlotLayer, TemplateRow, live_columns

__all__ = ["compact_slots", "keep_prefix", "place_row", "trim_cache"]


def place_row(
    row: TemplateRow, slot: int, slots: list[TemplateRow | None], cache: DynamicCache | None, new_cache: Any
) -> DynamicCache:
    """Copy a prefilled row's cache into ``slot`` of the decode cache, right-aligned (``new_cache()`` makes the
    cache for the first row)."""
    source, j, columns = row.cache  # type: ignore[misc]
    row.cache = None
    length = row.length

    def live(states: torch.Tensor) -> torch.Tensor:
        return live_columns(states, j, length, columns)

    if cache is None:  # the first row: a one-row cache
        cache = new_cache()
        cache.layers = [SlotLayer() for _ in cache.layers]
        for layer, src in zip(cache.layers, source.layers, strict=True):
            layer.assign(live(src.keys).unsqueeze(0), live(src.values).unsqueeze(0))
        slots[:] = [row]
        return cache
    width = cache.layers[0].keys.shape[-2]
    grow_rows = slot + 1 - cache.layers[0].keys.shape[0]
    for layer, src in zip(cache.layers, source.layers, strict=True):
        if length > width:  # make room on the left
            layer.extend_left(length - width)
        if grow_rows > 0:
            layer.add_rows(grow_rows)
        layer.keys[slot, :, -length:] = live(src.keys)
        layer.values[slot, :, -length:] = live(src.values)
    while len(slots) <= slot:
        slots.append(None)
    slots[slot] = row
    return cache


def keep_prefix(
    row: TemplateRow, cache: DynamicCache, j: int, length: int, columns: torch.Tensor | None, *, whole: bool = False
) -> None:
    """Copy out the keys/values of the row's ``<|context|> context`` (the first of its ``length`` live
    columns in row ``j`` of ``cache``) before that cache is reused: the next prompt starts with them, and
    so does the same prompt when the block is drawn again. ``whole``: all of them, the prompt and the block
    it drew (``prefix_ids`` becomes those ids)."""
    if whole:
        row.prefix_ids = [*row.prompt, *row.block_ids]
    size = len(row.prefix_ids)
    row.prefix_kv = [
        (
            live_columns(layer.keys, j, length, columns)[:, :size].clone(),
            live_columns(layer.values, j, length, columns)[:, :size].clone(),
        )
        for layer in cache.layers
    ]


def trim_cache(slots: list[TemplateRow | None], cache: DynamicCache) -> DynamicCache:
    """Drop cache columns on the left that no live row uses."""
    width = cache.layers[0].keys.shape[-2]
    needed = max((row.length for row in slots if row is not None), default=0)
    if 0 < needed < width:
        for layer in cache.layers:
            layer.trim_left(width - needed)
    return cache


def compact_slots(
    slots: list[TemplateRow | None], cache: DynamicCache, active: list[int]
) -> tuple[list[TemplateRow | None], DynamicCache]:
    """Keep only live rows once the batch is mostly empty (the tail of a run)."""
    index = torch.tensor(active, device=cache.layers[0].keys.device)
    for layer in cache.layers:
        layer.select_rows(index)
    return [slots[i] for i in active], cache


def step_inputs(
    slots: list[TemplateRow | None], cache: DynamicCache, pad_id: int
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """A decoding step's inputs: each slot's pending token (``pad_id`` for an empty slot), the attention mask over
    the cache's columns (a row's live columns are the last ``row.length``) and the new one, and each row's position."""
    width = cache.layers[0].keys.shape[-2]
    lengths = torch.tensor([row.length if row is not None else 0 for row in slots])
    tokens = torch.tensor([[row.pending if row is not None else pad_id] for row in slots])
    live = (torch.arange(width) >= width - lengths.unsqueeze(1)).long()
    mask = torch.cat([live, torch.ones(len(slots), 1, dtype=torch.long)], 1)
    return tokens, mask, lengths.unsqueeze(1)
