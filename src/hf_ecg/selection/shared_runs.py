"""How much of a user's text a generated sample copies, measured so that a name cannot hide a copy.

For each sample, :meth:`SharedRunIndex.compare` finds, against every sentence of the text, case aside:

- the longest **run** of the sample's words outside its entity mentions that one sentence holds in order, where each
  mention stands for any stretch of 0 to ``max_slot_tokens`` words of the sentence (the same name, another name, or
  none): a copied sentence whose names were swapped, or whose names the text holds too, shares its whole run;
- whether the sample **is a whole sentence** of the text, each of its mentions standing for such a stretch, its own
  words at least half of that sentence (the same sentence with other names);
- its highest **ROUGE-L** F1 with any sentence of the text (exact: the one the card reports).

The text is read once into an inverted index of its words and of its pairs of neighbouring words (``numpy`` arrays).
A sample is compared with the sentences in order of an upper bound on the run they can share (the words and word
pairs in common), and only while that bound can beat the best run found; the run itself is one dynamic programme over
those sentences at once. ROUGE-L is computed exactly for the sentences whose bound (``2·shared / (m + n)``) can still
beat the best score.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from .config import SelectionConfig

__all__ = ["SharedRun", "SharedRunIndex", "copy_record", "is_copy", "run_distribution"]

_SEPARATOR, _UNKNOWN = -1, -2  # never equal to a text token id, nor to each other
_CHUNK = 512  # sentences compared at once


@dataclass(frozen=True)
class SharedRun:
    """What a sample shares with the text: the ``length`` of its longest run (words outside its mentions, 0 when
    none), the index of a text ``sentence`` that holds it, whether the sample is a ``whole`` sentence of the text
    with its mentions standing for that sentence's other words (at most as many as its own), and its highest
    ``rouge_l`` F1 with a text sentence (``nearest``)."""

    length: int
    sentence: int | None
    whole: bool = False
    rouge_l: float = 0.0
    nearest: int | None = None


class _Postings:
    """For each key (a word id, or a pair of them), the sentences holding it and how often: an inverted index in
    three arrays."""

    def __init__(self, keys: np.ndarray, sentences: np.ndarray, num_sentences: int) -> None:
        self.num_sentences = num_sentences
        order = np.lexsort((sentences, keys))
        keys, sentences = keys[order], sentences[order]
        new = np.ones(len(keys), dtype=bool)
        new[1:] = (keys[1:] != keys[:-1]) | (sentences[1:] != sentences[:-1])
        starts = np.flatnonzero(new)
        self._keys, self._sentences = keys[starts], sentences[starts]
        self._counts = np.diff(np.append(starts, len(keys)))
        self._values, self._first = np.unique(self._keys, return_index=True)
        self._last = np.append(self._first[1:], len(self._keys))

    def shared(self, keys: np.ndarray) -> np.ndarray:
        """Per sentence, how many of ``keys`` (a multiset) it holds."""
        out = np.zeros(self.num_sentences, dtype=np.int32)
        wanted, counts = np.unique(keys, return_counts=True)
        where = np.searchsorted(self._values, wanted)
        for key, count, at in zip(wanted, counts, where, strict=True):
            if at < len(self._values) and self._values[at] == key:
                a, b = self._first[at], self._last[at]
                out[self._sentences[a:b]] += np.minimum(self._counts[a:b], count).astype(np.int32)
        return out


class SharedRunIndex:
    """A text's sentences (tokenized), indexed for :meth:`compare`; a mention stands for up to ``max_slot_tokens``
    words of a sentence (or for as many as it has, when longer)."""

    def __init__(self, sentences: Sequence[Sequence[str]], max_slot_tokens: int = 6) -> None:
        if max_slot_tokens < 1:
            raise ValueError(f"max_slot_tokens is a number of words, at least 1; got {max_slot_tokens}")
        self.sentences = sentences
        self.max_slot_tokens = max_slot_tokens
        self._ids: dict[str, int] = {}
        tokens = [[self._ids.setdefault(token.casefold(), len(self._ids)) for token in s] for s in sentences]
        self._lengths = np.asarray([len(s) for s in tokens], dtype=np.int64)
        # every sentence followed by a separator, the whole preceded by one: a sentence starts after a separator
        self._flat = np.asarray([_SEPARATOR, *(i for s in tokens for i in (*s, _SEPARATOR))], dtype=np.int64)
        self._starts = np.concatenate([[1], 1 + np.cumsum(self._lengths + 1)[:-1]]).astype(np.int64)
        words = np.asarray([i for s in tokens for i in s], dtype=np.int64)
        owner = np.repeat(np.arange(len(tokens), dtype=np.int64), self._lengths)
        self._words = _Postings(words, owner, len(tokens))
        within = np.ones(len(words), dtype=bool)  # a word followed by one of its own sentence
        within[np.cumsum(self._lengths)[self._lengths > 0] - 1] = False
        self._width = np.int64(len(self._ids) + 1)
        pairs = words[:-1][within[:-1]] * self._width + words[1:][within[:-1]]
        self._pairs = _Postings(pairs, owner[:-1][within[:-1]], len(tokens))

    def encode(self, tokens: Sequence[str]) -> np.ndarray:
        """``tokens`` as the index's ids: a token the text never holds matches nothing."""
        return np.asarray([self._ids.get(token.casefold(), _UNKNOWN) for token in tokens], dtype=np.int64)

    def compare(self, tokens: Sequence[str], masked: Sequence[bool] = ()) -> SharedRun:
        """What ``tokens`` share with the text, the tokens ``masked`` (its mentions) standing for any words."""
        ids = self.encode(tokens)
        mask = np.asarray(masked, dtype=bool) if len(masked) else np.zeros(len(ids), dtype=bool)
        elements = self._elements(ids, mask)
        words = ids[~mask]
        shared = self._words.shared(words[words >= 0])  # per sentence, how many of the sample's own words it holds
        length, sentence = self._longest_run(elements, shared, ids, mask)
        whole = self._whole(elements, words, shared)
        rouge, nearest = self._nearest(ids)
        return SharedRun(length, sentence, whole, rouge, nearest)

    def _elements(self, ids: np.ndarray, mask: np.ndarray) -> list[int]:
        """The sample as words (ids, ``>= -2``) and slots (``-(widest stretch) - 10``): a mention, or several in a
        row, is one slot."""
        elements: list[int] = []
        i = 0
        while i < len(ids):
            if not mask[i]:
                elements.append(int(ids[i]))
                i += 1
                continue
            j = i
            while j < len(ids) and mask[j]:
                j += 1
            elements.append(-max(self.max_slot_tokens, j - i) - 10)
            i = j
        return elements

    def _longest_run(
        self, elements: list[int], shared: np.ndarray, ids: np.ndarray, mask: np.ndarray
    ) -> tuple[int, int | None]:
        if not shared.any():
            return 0, None
        # a run of L words within s stretches between mentions holds at least L - s of the sample's word pairs
        neighbours = ~mask[:-1] & ~mask[1:] & (ids[:-1] >= 0) & (ids[1:] >= 0)
        stretches = sum(1 for k, e in enumerate(elements) if e >= -2 and (k == 0 or elements[k - 1] < -2))
        bound = np.minimum(
            shared,
            self._pairs.shared(ids[:-1][neighbours] * self._width + ids[1:][neighbours]) + stretches,
        )
        order = np.argsort(-bound, kind="stable")
        best, where = 0, None
        for start in range(0, len(order), _CHUNK):
            chunk = order[start : start + _CHUNK]
            chunk = chunk[bound[chunk] > best]
            if not len(chunk):
                break
            text, owner = self._gather(chunk)
            length, at = _longest(elements, text)
            if length > best:
                best, where = length, int(chunk[owner[at]])
        return best, where

    def _whole(self, elements: list[int], words: np.ndarray, shared: np.ndarray) -> bool:
        """Whether the sample, its mentions standing for stretches of words, is a whole sentence of the text of which
        its own words are at least half (so that ``<name> and <name> .`` is not every short sentence with an
        ``and``); a sample of fewer than two words outside its mentions is left to the run and ROUGE-L."""
        if len(words) < 2 or (words < 0).any():
            return False
        slots = [-e - 10 for e in elements if e < -2]
        longest = min(len(words) + sum(slots), 2 * len(words))
        fits = (shared == len(words)) & (self._lengths <= longest)
        candidates = np.flatnonzero(fits & (self._lengths >= len(words)))
        for start in range(0, len(candidates), _CHUNK):
            text, _ = self._gather(candidates[start : start + _CHUNK])
            if _whole(elements, text):
                return True
        return False

    def _nearest(self, ids: np.ndarray) -> tuple[float, int | None]:
        from ..evaluation.quality import rouge_l

        shared = self._words.shared(ids[ids >= 0])
        candidates = np.flatnonzero(shared)
        bounds = 2 * shared[candidates] / (len(ids) + self._lengths[candidates])
        order = np.argsort(-bounds, kind="stable")
        sample = ids.tolist()
        best, nearest = 0.0, None
        for j in order:
            if bounds[j] <= best:
                break
            k = int(candidates[j])
            start = self._starts[k]
            score = rouge_l(sample, self._flat[start : start + self._lengths[k]].tolist())
            if score > best:
                best, nearest = score, k
        return best, nearest

    def _gather(self, sentences: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The ``sentences`` as one array, a separator first and after each, and each position's place in
        ``sentences`` (the separators': the sentence before them)."""
        lengths = self._lengths[sentences] + 1
        offsets = np.repeat(self._starts[sentences] - np.cumsum(lengths) + lengths, lengths)
        positions = np.arange(lengths.sum()) + offsets
        owner = np.repeat(np.arange(len(sentences)), lengths)
        return np.concatenate([[_SEPARATOR], self._flat[positions]]), np.concatenate([[0], owner])


def _shifted(values: np.ndarray, by: int, fill: int | bool) -> np.ndarray:
    """``values`` moved ``by`` places to the right, ``fill`` coming in."""
    if by == 0:
        return values
    out = np.full_like(values, fill)
    out[by:] = values[:-by]
    return out


def _longest(elements: list[int], text: np.ndarray) -> tuple[int, int]:
    """The longest run of the sample's words (a slot standing for 0 to its width of valid words) that ``text``
    holds, and the position where it ends: ``run[j]``, the words of the best run ending at ``text[j]`` (-1: none)."""
    valid = text >= 0
    run = np.full(len(text), -1, dtype=np.int64)
    best, at = 0, 0
    for element in elements:
        if element >= -2:  # a word: it continues a run, or starts one
            run = np.where(text == element, np.maximum(_shifted(run, 1, -1), 0) + 1, -1)
        else:  # a slot: a run may start here, or continue over 0 to width words
            covered = valid.copy()
            current = np.maximum(run, np.where(valid, 0, -1))
            for width in range(1, -element - 10 + 1):
                covered = covered & _shifted(valid, width - 1, False) if width > 1 else covered
                before = _shifted(run, width, -1)
                current = np.where(covered & (before >= 0), np.maximum(current, before), current)
            run = current
        top = int(run.argmax())
        if run[top] > best:
            best, at = int(run[top]), top
    return best, at


def _whole(elements: list[int], text: np.ndarray) -> bool:
    """Whether the elements, from first to last, cover one whole sentence of ``text``."""
    valid = text >= 0
    reached = text == _SEPARATOR  # before the first element: just before a sentence starts
    for element in elements:
        if element >= -2:
            reached = (text == element) & _shifted(reached, 1, False)
        else:
            covered, current = valid.copy(), reached.copy()
            for width in range(1, -element - 10 + 1):
                covered = covered & _shifted(valid, width - 1, False) if width > 1 else covered
                current |= covered & _shifted(reached, width, False)
            reached = current
    ends = np.append(text[1:] == _SEPARATOR, False)
    return bool((reached & valid & ends).any())


def run_distribution(runs: Sequence[SharedRun], floor: int) -> dict[str, int]:
    """How many samples share a longest run of each length (``"<floor"`` for those under ``floor`` words), in length
    order: what a manifest and a card report."""
    counts: dict[str, int] = {}
    for length in sorted(run.length for run in runs):
        key = f"<{floor}" if length < floor else str(length)
        counts[key] = counts.get(key, 0) + 1
    return counts


def is_copy(run: SharedRun, config: SelectionConfig) -> bool:
    """Whether the ``text-copy`` rule drops a sample: a run of ``config.max_shared_run`` words or more, a whole
    sentence of the text with other names, or a ROUGE-L above ``config.near_copy_threshold`` with one."""
    return run.length >= config.max_shared_run or run.whole or run.rouge_l > config.near_copy_threshold


def copy_record(
    runs: Mapping[int, SharedRun], kept: Sequence[int], config: SelectionConfig, text_sentences: int
) -> dict[str, Any]:
    """The ``text-copy`` rule's record in a manifest and a card: its thresholds; of every sample it judged, how many
    share a longest run of each length, how many are a whole sentence with other names, and the mean and largest
    ROUGE-L; and the same maxima over the ``kept`` samples, the ones the set holds."""
    judged = list(runs.values())
    held = [runs[i] for i in kept if i in runs]
    scores = [run.rouge_l for run in judged]
    kept_scores = [run.rouge_l for run in held]
    return {
        "text_sentences": text_sentences,
        "max_shared_run": config.max_shared_run,
        "rouge_l_threshold": config.near_copy_threshold,
        "longest_run": run_distribution(judged, min(4, config.max_shared_run)),
        "whole_sentences": sum(run.whole for run in judged),
        "rouge_l_mean": round(sum(scores) / len(scores), 4) if scores else 0.0,
        "rouge_l_max": round(max(scores, default=0.0), 4),
        "kept": {
            "samples": len(held),
            "longest_run": max((run.length for run in held), default=0),
            "rouge_l_mean": round(sum(kept_scores) / len(kept_scores), 4) if kept_scores else 0.0,
            "rouge_l_max": round(max(kept_scores, default=0.0), 4),
        },
    }
