"""The batched decoder's rows and KV cache: a template in flight (:class:`TemplateRow`), a preallocated slot layer
per model layer, rows that decode together (:class:`RowBatch`), and the helpers that group prefills by length and
read a row's live columns."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import torch
from transformers import DynamicCache
from transformers.cache_utils import DynamicLayer

__all__ = [
    "PASS_OVERHEAD_TOKENS",
    "KeptStates",
    "RowBatch",
    "SlotLayer",
    "TemplateRow",
    "encode_after_prefixes",
    "length_groups",
    "live_columns",
    "new_cache",
]

#: A row's kept keys and values, per layer: ``(keys, values)``, each ``[heads, positions, dim]``.
KeptStates = list[tuple[torch.Tensor, torch.Tensor]]

#: A forward pass costs about this many padded prompt tokens of fixed overhead (CPU measurement).
PASS_OVERHEAD_TOKENS = 32


def length_groups(lengths: list[int], *, max_groups: int = 2) -> list[list[int]]:
    """Split a prefill (indices into ``lengths``) into at most ``max_groups`` passes of similar prompt lengths,
    the split that computes the fewest positions, padding included, counting each pass beyond the first as
    :data:`PASS_OVERHEAD_TOKENS` more (an exact dynamic programme over the sorted lengths). Two passes at most
    by default: in bfloat16 on a CPU more passes (new shapes, oneDNN builds kernels per shape) cost more time than
    the padding they save (docs/performance.md)."""
    order = sorted(range(len(lengths)), key=lambda j: lengths[j])
    sizes = [lengths[j] for j in order]
    n = len(sizes)
    # best[g][i]: the cost of the first i sorted prompts in g passes; a pass over sizes[k:i] costs (i - k) * sizes[i-1].
    inf = float("inf")
    best = [[0.0] + [inf] * n] + [[inf] * (n + 1) for _ in range(max_groups)]
    cut = [[0] * (n + 1) for _ in range(max_groups + 1)]
    for g in range(1, max_groups + 1):
        for i in range(1, n + 1):
            for k in range(g - 1, i):
                cost = best[g - 1][k] + (i - k) * sizes[i - 1] + (PASS_OVERHEAD_TOKENS if g > 1 else 0)
                if cost < best[g][i]:
                    best[g][i], cut[g][i] = cost, k
    groups = min(range(1, max_groups + 1), key=lambda g: (best[g][n], g)) if n else 0
    bounds, end = [], n
    for g in range(groups, 0, -1):
        bounds.append((cut[g][end], end))
        end = cut[g][end]
    return [order[start:stop] for start, stop in reversed(bounds)]


def live_columns(states: torch.Tensor, row: int, length: int, columns: torch.Tensor | None) -> torch.Tensor:
    """A row's live cache positions, ``[heads, length, dim]``: its last ``length`` columns (right-aligned),
    or the given ``columns`` (a prefill over a kept prefix leaves padding between prefix and prompt)."""
    return states[row, :, -length:] if columns is None else states[row].index_select(1, columns)


class SlotLayer(DynamicLayer):
    """One layer of the batched decode cache, over a preallocated buffer.

    ``DynamicLayer`` concatenates every step, a copy of the whole cache per layer and token (a fifth
    of a CPU decode step at batch 128). Here a step writes into spare columns on the right, dropping
    unused columns on the left moves a start offset, and the buffer is re-laid out only when a side
    runs out of room. ``keys``/``values`` are views of the live columns ``[start, end)``.
    """

    HEADROOM = 64  # spare columns made on a re-layout

    def lazy_initialization(self, key_states: torch.Tensor, value_states: torch.Tensor) -> None:
        self.dtype, self.device = key_states.dtype, key_states.device
        self.is_initialized = True

    def assign(self, keys: torch.Tensor, values: torch.Tensor, left_room: int = 0) -> None:
        """Hold a copy of these states, with ``left_room`` spare columns on the left and headroom on the right."""
        rows, _, width, _ = keys.shape
        self._allocate(keys, rows, width, left_room)
        self.keys.copy_(keys)
        self.values.copy_(values)

    def _allocate(self, like: torch.Tensor, rows: int, width: int, left_room: int = 0, *, zeroed: bool = True) -> None:
        """Buffers for ``rows`` rows of ``width`` live columns (heads, dim, dtype and device of ``like``),
        ``left_room`` spare columns on their left and headroom on their right; zeroed unless the caller writes every
        live column itself (the headroom is written by each step before it is read)."""
        if not self.is_initialized:
            self.lazy_initialization(like, like)
        shape = (rows, like.shape[1], left_room + width + self.HEADROOM, like.shape[-1])
        new = like.new_zeros if zeroed else like.new_empty
        self._keys, self._values = new(shape), new(shape)
        self._start, self._end = left_room, left_room + width
        self._refresh()

    def _refresh(self) -> None:
        self.keys = self._keys[:, :, self._start : self._end]
        self.values = self._values[:, :, self._start : self._end]

    def update(
        self, key_states: torch.Tensor, value_states: torch.Tensor, *args: Any, **kwargs: Any
    ) -> tuple[torch.Tensor, torch.Tensor]:
        if not self.is_initialized:
            self.assign(key_states, value_states)
            return self.keys, self.values
        new = key_states.shape[-2]
        if self._end + new > self._keys.shape[-2]:
            self.assign(self.keys, self.values)
        self._keys[:, :, self._end : self._end + new] = key_states
        self._values[:, :, self._end : self._end + new] = value_states
        self._end += new
        self._refresh()
        return self.keys, self.values

    def extend_left(self, columns: int) -> None:
        """Add ``columns`` zeroed columns on the left (a longer prompt joins)."""
        if self._start < columns:
            self.assign(self.keys, self.values, left_room=columns + self.HEADROOM)
        self._start -= columns
        self._keys[:, :, self._start : self._start + columns] = 0
        self._values[:, :, self._start : self._start + columns] = 0
        self._refresh()

    def trim_left(self, columns: int) -> None:
        """Drop ``columns`` columns on the left (no live row reaches back that far)."""
        self._start += columns
        self._refresh()

    def add_rows(self, rows: int) -> None:
        """Append ``rows`` zeroed rows (slots)."""
        extra = self.keys.new_zeros((rows, *self.keys.shape[1:]))
        self.assign(torch.cat([self.keys, extra]), torch.cat([self.values, extra]), left_room=self._start)

    def move_rows(self, sources: torch.Tensor, targets: torch.Tensor, rows: int) -> None:
        """Copy rows ``sources`` onto rows ``targets``, then keep the first ``rows`` rows (a view: only the moved
        rows are copied)."""
        if len(sources):
            self._keys[targets] = self._keys[sources]
            self._values[targets] = self._values[sources]
        self._keys, self._values = self._keys[:rows], self._values[:rows]
        self._refresh()

    def select_rows(self, index: torch.Tensor) -> None:
        """Keep only these rows, in this order (one copy: the buffer's layout stays)."""
        self._keys, self._values = self._keys.index_select(0, index), self._values.index_select(0, index)
        self._refresh()

    @classmethod
    def packed(cls, parts: list[tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]], rows: int) -> SlotLayer:
        """A layer of ``rows`` rows from ``parts``, each ``(index, keys, values, columns)``: row ``r`` of a part goes
        to row ``index[r]`` and holds its states at ``columns[r]`` (a row's live columns, right-aligned in the new
        width, its others any of its own columns: masked out, they only need to be finite); one copy each. A row's
        keys carry their positions (rotary), so packing its live columns together changes none of its scores."""
        layer = cls()
        layer._allocate(parts[0][1], rows, parts[0][3].shape[1], zeroed=False)  # every live column is written below
        for index, keys, values, columns in parts:
            picked = torch.arange(len(columns), device=columns.device)[:, None]
            layer.keys[index] = keys[picked, :, columns].transpose(1, 2)
            layer.values[index] = values[picked, :, columns].transpose(1, 2)
        return layer


@dataclass
class RowBatch:
    """Rows decoding together, each with its own prompt: each row's key (the caller's name for it), one cache whose
    steps write into spare columns (:class:`SlotLayer`), the attention mask over its columns, each row's next
    position, the ids it has drawn so far (the last one not yet fed) and the ids it is to be fed before it draws
    again (``forced``: a row that goes on to another prompt, :meth:`go_on`). Rows join (:meth:`merged`) and leave
    (:meth:`keep`) between steps."""

    keys: list[int]
    cache: Any
    mask: torch.Tensor
    positions: torch.Tensor
    answers: list[list[int]]
    forced: list[list[int]] = field(default_factory=list)

    def __post_init__(self) -> None:
        if not self.forced:
            self.forced = [[] for _ in self.keys]

    @classmethod
    def empty(cls) -> RowBatch:
        return cls([], None, torch.zeros(0, 0, dtype=torch.long), torch.zeros(0, dtype=torch.long), [])

    @classmethod
    def merged(cls, parts: list[RowBatch]) -> RowBatch:
        """The parts as one batch, rows in ascending key order, each row's live columns packed together on the
        right (the columns a row left behind, :meth:`go_on`, and the padding of narrower rows are not copied: the
        batch is as wide as its longest row)."""
        parts = [part for part in parts if part.keys]
        keys = sorted(key for part in parts for key in part.keys)
        row_of = {key: row for row, key in enumerate(keys)}
        device = parts[0].mask.device
        index = [torch.tensor([row_of[key] for key in part.keys], device=device) for part in parts]
        lives = [part.mask.sum(1) for part in parts]
        width = max(int(live.max()) for live in lives)
        columns = [_packed_columns(part.mask, live, width) for part, live in zip(parts, lives, strict=True)]
        mask = parts[0].mask.new_zeros((len(keys), width))
        positions = parts[0].positions.new_zeros(len(keys))
        answers: list[list[int]] = [[] for _ in keys]
        forced: list[list[int]] = [[] for _ in keys]
        for part, rows, live in zip(parts, index, lives, strict=True):
            mask[rows] = (torch.arange(width, device=device) >= width - live[:, None]).to(mask.dtype)
            positions[rows] = part.positions
            for row, answer, ids in zip(rows.tolist(), part.answers, part.forced, strict=True):
                answers[row], forced[row] = answer, ids
        cache = parts[-1].cache  # a prefill's: its layers are replaced
        layers = [
            [(rows, layer.keys, layer.values, cols) for layer in part.cache.layers]
            for part, rows, cols in zip(parts, index, columns, strict=True)
        ]
        cache.layers = [SlotLayer.packed(list(states), len(keys)) for states in zip(*layers, strict=True)]
        return cls(keys, cache, mask, positions, answers, forced)

    def keep(self, rows: list[int]) -> None:
        """Keep only these rows; drop the columns on the left that none of them uses. The last rows kept move into
        the places of those that leave below them, so that a step that ends a few rows copies only those few, not
        the whole cache."""
        kept = set(rows)
        size = len(rows)
        holes = [k for k in range(size) if k not in kept]
        movers = [k for k in rows if k >= size]
        for hole, mover in zip(holes, movers, strict=True):
            self.keys[hole], self.answers[hole] = self.keys[mover], self.answers[mover]
            self.forced[hole] = self.forced[mover]
        del self.keys[size:], self.answers[size:], self.forced[size:]
        if not rows:
            return
        sources = torch.tensor(movers, dtype=torch.long, device=self.mask.device)
        targets = torch.tensor(holes, dtype=torch.long, device=self.mask.device)
        if movers:
            self.mask[targets] = self.mask[sources]
            self.positions[targets] = self.positions[sources]
        self.mask, self.positions = self.mask[:size], self.positions[:size]
        unused = int(self.mask.any(0).long().argmax())  # the first column a row uses
        self.mask = self.mask[:, unused:]
        for layer in self.cache.layers:
            layer.move_rows(sources, targets, size)
            layer.trim_left(unused)

    def go_on(self, row: int, fed: int, ids: list[int]) -> None:
        """Row ``row`` goes on to a prompt whose first ``fed`` ids are the first ``fed`` it was fed (its other live
        columns are masked out: their keys and values stay, unread) and whose other ids are ``ids``: they are fed
        to it one a step, then it draws its answer anew."""
        columns = self.mask[row].nonzero().squeeze(1)
        self.mask[row, columns[fed:]] = 0
        self.positions[row] = fed
        self.answers[row], self.forced[row] = [], list(ids)


def _packed_columns(mask: torch.Tensor, live: torch.Tensor, width: int) -> torch.Tensor:
    """Per row of ``mask``, the columns to read into a row ``width`` wide: its ``live[r]`` live columns, in order,
    right-aligned, after copies of its first one."""
    order = torch.argsort(mask.eq(0).to(torch.int8), dim=1, stable=True)[:, :width]  # live columns first, in order
    shift = (width - live)[:, None]
    slots = torch.arange(width, device=mask.device)[None, :]
    return torch.where(slots >= shift, order.gather(1, (slots - shift).clamp(min=0)), order[:, :1])


def encode_after_prefixes(
    model: Any,
    cache: DynamicCache,
    prompts: list[list[int]],
    pasts: list[int],
    kept: list[KeptStates | None],
    pad_id: int,
) -> tuple[Any, torch.Tensor]:
    """One forward over each prompt after its first ``pasts[j]`` ids, whose keys and values are the first
    ``pasts[j]`` columns of ``kept[j]`` (``None`` where ``pasts[j]`` is 0): the pasts right-aligned in a past of
    width ``max(pasts)``, the rests left-padded after it. Returns the model's output (logits at the last position
    only, ``cache`` filled) and the attention mask over the cache's columns, ``[rows, past width + rest width]``,
    1 on a row's live columns: its past, then its rest, with padding between."""
    chunks = [prompt[past:] for prompt, past in zip(prompts, pasts, strict=True)]
    width, past_width = max(map(len, chunks)), max(pasts)
    input_ids = torch.full((len(prompts), width), pad_id, dtype=torch.long)
    mask = torch.zeros((len(prompts), past_width + width), dtype=torch.long)
    for j, (chunk, past) in enumerate(zip(chunks, pasts, strict=True)):
        input_ids[j, width - len(chunk) :] = torch.tensor(chunk)
        mask[j, past_width - past : past_width] = 1
        mask[j, past_width + width - len(chunk) :] = 1
    positions = (mask.cumsum(-1) - 1).clamp(min=0)[:, past_width:]
    if past_width:
        first = next(states for states in kept if states is not None)
        for i, layer in enumerate(cache.layers):
            sample = first[i][0]
            keys = sample.new_zeros((len(prompts), sample.shape[0], past_width, sample.shape[-1]))
            values = torch.zeros_like(keys)
            for j, (states, past) in enumerate(zip(kept, pasts, strict=True)):
                if past:
                    keys[j, :, past_width - past :] = states[i][0][:, :past]  # type: ignore[index]
                    values[j, :, past_width - past :] = states[i][1][:, :past]  # type: ignore[index]
            layer.update(keys, values)
    device = model.device
    out = model(
        input_ids=input_ids.to(device),
        attention_mask=mask.to(device),
        position_ids=positions.to(device),
        cache=cache,
        use_cache=True,
        logits_to_keep=1,
    )
    return out, mask


def new_cache(model: Any) -> DynamicCache:
    """An empty cache for ``model``; batched decoding needs full-attention layers."""
    cache = DynamicCache(config=model.config)
    kinds = {type(layer).__name__ for layer in cache.layers}
    if kinds != {"DynamicLayer"}:
        raise NotImplementedError(
            f"batched decoding needs full-attention cache layers, this model has {sorted(kinds)}; use mode='sequential'"
        )
    return cache


@dataclass(eq=False)
class TemplateRow:
    """A sample in flight (batched mode)."""

    index: int
    targets: list[int]  # tag ids, then <ENDTEXT>
    block: int = 0
    words: list[str] = field(default_factory=list)  # template tokens so far
    block_ids: list[int] = field(default_factory=list)  # ids fed in the current block
    pending: int = -1  # sampled, not yet fed
    length: int = 0  # valid cache positions (right-aligned)
    forced: int = 0
    cut: int = 0
    model_tokens: int = 0
    redrawn_tokens: int = 0  # tokens of blocks drawn again
    attempts: int = 1  # tries of the current block
    retries: int = 0  # blocks drawn again so far
    refused: int = 0  # blocks the redraw budget kept with tries left
    force_tag: bool = False  # the block broke a rule, the budget refused a redraw: it ends now, its tag forced
    checked_words: int = 0  # complete words of the current block checked for a loop
    cache: tuple[Any, int, torch.Tensor | None] | None = None  # (prefill cache, row, columns) until placed
    prefix_ids: list[int] = field(default_factory=list)  # <|context|> + context ids of the current prompt
    prompt: list[int] = field(default_factory=list)  # the current block's prompt
    prefix_kv: list[tuple[torch.Tensor, torch.Tensor]] | None = None  # their keys/values, per layer

    @property
    def target(self) -> int:
        return self.targets[self.block]

    def redraw(self, *, tag_sampled: bool) -> None:
        """Drop the current block, to draw it again from the same prompt (its prefix, if kept, still fits):
        its tokens, and its tag when the model wrote one, count as redrawn."""
        self.model_tokens -= len(self.block_ids)
        self.redrawn_tokens += len(self.block_ids) + tag_sampled
        self.block_ids, self.attempts, self.checked_words, self.force_tag = [], self.attempts + 1, 0, False

    def keep_block(self, words: list[str], tag: str | None) -> bool:
        """Keep the current block's ``words`` and, unless it is the last block, its ``tag``; ``True`` when a next
        block follows."""
        self.words.extend(words)
        self.model_tokens += 1
        self.retries += self.attempts - 1
        self.attempts = 1
        if tag is None:
            return False
        self.words.append(tag)
        self.block += 1
        self.block_ids, self.checked_words, self.force_tag = [], 0, False
        return True
