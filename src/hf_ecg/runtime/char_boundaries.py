"""Whole characters in generated text: which tokens a byte-level vocabulary may write next so that a block's bytes
stay valid UTF-8.

A byte-level BPE vocabulary (GPT-2, SmolLM2) holds tokens that are a part of a multi-byte character (``\\xe2\\x80``,
a lone continuation byte). An undertrained model draws them anywhere, and a tokenizer decodes a cut character as
U+FFFD. :class:`CharacterBoundaries` knows each token's bytes and which tokens may follow a block's bytes:
inside a character only the bytes that go on with it, at a character boundary no token that begins inside one.
The decoders mask the rest before they draw (and keep a block's tag back until its last character is whole)::

    boundaries = CharacterBoundaries(tokenizer)
    boundaries.mask(scores, [boundaries.state(block_ids) for block_ids in rows])
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

import torch
from transformers import LogitsProcessor
from transformers.convert_slow_tokenizer import bytes_to_unicode

__all__ = ["STATES", "CharacterBoundaries", "CharacterBoundaryLogitsProcessor", "token_bytes", "utf8_state_after"]

_BYTE_FALLBACK = re.compile(r"<0x([0-9A-Fa-f]{2})>")

#: Where a block's bytes stand: at a character boundary (state 0), or inside a character, as (continuation bytes
#: still owed, the lowest and highest byte the next one may be). UTF-8 (RFC 3629) narrows the second byte after
#: E0, ED, F0 and F4, so that no character is encoded too long, as a surrogate or past U+10FFFF.
STATES: tuple[tuple[int, int, int], ...] = (
    (0, 0, 0),
    (1, 0x80, 0xBF),
    (2, 0x80, 0xBF),
    (3, 0x80, 0xBF),
    (2, 0xA0, 0xBF),  # after E0
    (2, 0x80, 0x9F),  # after ED
    (3, 0x90, 0xBF),  # after F0
    (3, 0x80, 0x8F),  # after F4
)
_STATE_OF = {state: i for i, state in enumerate(STATES)}
_AFTER_LEAD = {0xE0: 4, 0xED: 5, 0xF0: 6, 0xF4: 7}


def _first_byte_state(byte: int) -> int | None:
    """The state after a character's first byte (``None``: no character begins with it)."""
    if byte < 0x80:
        return 0
    if byte in _AFTER_LEAD:
        return _AFTER_LEAD[byte]
    if 0xC2 <= byte <= 0xDF:
        return 1
    if 0xE1 <= byte <= 0xEF:
        return 2
    if 0xF1 <= byte <= 0xF3:
        return 3
    return None


def utf8_state_after(state: int, data: bytes) -> int | None:
    """The state (an index into :data:`STATES`) after ``data`` is written in ``state``; ``None``: the bytes would
    not be valid UTF-8 there."""
    for byte in data:
        owed, low, high = STATES[state]
        if not owed:
            first = _first_byte_state(byte)
            if first is None:
                return None
            state = first
        elif not low <= byte <= high:
            return None
        else:
            state = 0 if owed == 1 else _STATE_OF[(owed - 1, 0x80, 0xBF)]
    return state


def token_bytes(tokenizer: Any) -> list[bytes | None]:
    """Each token id's bytes as the tokenizer decodes it (``None``: an added or special token, not text).
    Byte-level vocabularies map each byte to a character (:func:`bytes_to_unicode`); others write text, with
    byte-fallback tokens ``<0xE2>`` for single bytes."""
    byte_of = {char: byte for byte, char in bytes_to_unicode().items()}
    decoder = getattr(getattr(tokenizer, "backend_tokenizer", None), "decoder", None)
    byte_level = type(decoder).__name__ == "ByteLevel"
    added = set(tokenizer.get_added_vocab().values()) | set(tokenizer.all_special_ids)
    tokens = tokenizer.convert_ids_to_tokens(list(range(len(tokenizer))))
    result: list[bytes | None] = []
    for i, token in enumerate(tokens):
        if i in added or token is None:
            result.append(None)
        elif byte_level and all(char in byte_of for char in token):
            result.append(bytes(byte_of[char] for char in token))
        elif fallback := _BYTE_FALLBACK.fullmatch(token):
            result.append(bytes([int(fallback.group(1), 16)]))
        else:
            result.append(token.replace("\u2581", " ").encode("utf-8"))
    return result


class CharacterBoundaries:
    """The UTF-8 state of generated blocks, over one tokenizer's vocabulary.

    Args:
        tokenizer: the model's tokenizer. With no token that holds part of a character (a vocabulary of whole
            characters), :attr:`active` is false and :meth:`mask` changes nothing.
    """

    def __init__(self, tokenizer: Any) -> None:
        self._next: dict[int, tuple[int | None, ...]] = {}  # non-ASCII tokens: state after, per state before
        banned: list[list[int]] = [[] for _ in STATES]
        for i, data in enumerate(token_bytes(tokenizer)):
            if data is None:  # structural: at a boundary only (the constraint decides which)
                for state in range(1, len(STATES)):
                    banned[state].append(i)
                continue
            if data.isascii():  # most tokens: whole characters, written at a boundary only
                after: tuple[int | None, ...] = (0,) + (None,) * (len(STATES) - 1)
            else:
                after = tuple(utf8_state_after(state, data) for state in range(len(STATES)))
                self._next[i] = after
            for state, then in enumerate(after):
                if then is None:
                    banned[state].append(i)
        self._banned = [torch.tensor(ids, dtype=torch.long) for ids in banned]
        self.active = bool(self._next)

    def state(self, ids: Sequence[int]) -> int:
        """Where a block's ``ids`` end (:data:`STATES`; 0: on a whole character). Only the block's last non-ASCII
        tokens are read: an ASCII token ends every character."""
        start = len(ids)
        while start and ids[start - 1] in self._next:
            start -= 1
        state = 0
        for token in ids[start:]:
            state = self._next[token][state] or 0  # a token the mask let through; a forced one starts afresh
        return state

    def mask(self, scores: torch.Tensor, states: Sequence[int], *, exempt: Sequence[bool] | None = None) -> None:
        """Set to ``-inf``, in place, the scores of the tokens each row may not write next (row ``r`` in
        ``states[r]``): inside a character every token but those that go on with it, structural ones included;
        at a boundary every token that begins inside a character or holds bytes no UTF-8 text holds. Rows with
        ``exempt[r]`` (a block that must end now) are left alone."""
        if not self.active:
            return
        by_state: dict[int, list[int]] = {}
        for row, state in enumerate(states):
            if exempt is None or not exempt[row]:
                by_state.setdefault(state, []).append(row)
        for state, rows in by_state.items():
            banned = self._banned[state].to(scores.device)
            banned = banned[banned < scores.shape[-1]]
            scores[torch.tensor(rows, device=scores.device).unsqueeze(1), banned.unsqueeze(0)] = -float("inf")


class CharacterBoundaryLogitsProcessor(LogitsProcessor):
    """:class:`CharacterBoundaries` for ``model.generate()`` over one block per row: the tokens after the first
    call's prompt length are the block (the sequential decoder's procedure)."""

    def __init__(self, boundaries: CharacterBoundaries) -> None:
        self.boundaries = boundaries
        self._prompt_length: int | None = None

    def __call__(self, input_ids: torch.LongTensor, scores: torch.FloatTensor) -> torch.FloatTensor:
        if self._prompt_length is None:  # the first call sees the prompts alone
            self._prompt_length = input_ids.shape[1]
        states = [self.boundaries.state(row[self._prompt_length :].tolist()) for row in input_ids]
        scores = scores.clone()
        self.boundaries.mask(scores, states)
        return scores
