"""Chained block decoding: write a template block by block for each requested entity sequence.

For the sequence ``[t1 … tn]`` the model answers question ``<t1>`` with an empty context, the
block is appended to the context, question ``<t2>`` follows, … and finally ``<ENDTEXT>``
(DESIGN §1). Prompts are built by :mod:`hf_ecg.layout`, like the training rows::

    <|context|> context ids <|question|> tag id <|answer|>

Two procedures:

- ``batched`` (default): many samples advance together. A logits mask lets each row emit only its
  own target tag (``<ENDTEXT>`` only in the final block) and no other special token; a row's block
  ends when the model itself emits its target (``block_end="target"``, default), so the last block
  ends on the model's own ``<ENDTEXT>``; a block that reaches ``max_block_tokens`` is drawn again
  from its prompt (up to ``max_attempts`` tries, as the paper regenerates a block), and only then
  gets its tag forced (counted in ``forced_tags``). A block the model did end is drawn again too when
  it closes the sentence without a sentence ending (``redraw_unended``) or loops
  (``redraw_repetition``, checked as each word is written): rejection sampling, so the model is never
  pushed to write on. Under ``block_end="any-stop"`` the model may also end a block with another tag
  or ``<ENDTEXT>``, which is replaced by the target and counted in ``cut_blocks``: such a block ends
  where the model wanted to write something else.

  Rows live in the slots of one KV cache, right-aligned; a row that finishes a block leaves its
  slot, its next prompt is encoded in a batched prefill with other waiting rows, and the slot is
  refilled at once with a row that is ready, so the batch stays full. The next prompt
  starts with the last one's ``<|context|> context``, whose keys and values the row keeps when it
  leaves its slot: the prefill encodes only the finished block and the new question.
- ``sequential``: the paper's procedure, for comparison: one sample at a time, ``model.generate``
  each block and regenerate it until it ends with its tag (forced after ``max_attempts``).
"""

from __future__ import annotations

import logging
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import torch
from transformers import DynamicCache, LogitsProcessorList, TemperatureLogitsWarper, TopPLogitsWarper
from transformers.cache_utils import DynamicLayer

from .blocks import ANSWER_TOKEN, CONTEXT_TOKEN, ENDTEXT, QUESTION_TOKEN, SEGMENT_TOKENS, Template, tag_label
from .config import ECGConfig
from .layout import SegmentIds, context_prefix, prompt_ids
from .words import (
    DEFAULT_SENTENCE_ENDINGS,
    RARE_IN_TRAINING_SHARE,
    REPETITION_MAX_N,
    REPETITION_TIMES,
    WordSplitter,
    has_repetition,
    repeats_at_end,
    sentence_breaks,
)

__all__ = ["DECODING_MODES", "ChainedDecoder", "DecodedTemplate", "DecodingConfig", "TemplateLMDecoder", "make_decoder"]

logger = logging.getLogger(__name__)

DECODING_MODES = ("batched", "sequential")
BLOCK_ENDS = ("target", "any-stop")
#: Refuse requests beyond these: they are mistakes, not workloads.
MAX_ENTITIES_LIMIT = 256
MAX_BLOCK_TOKENS_LIMIT = 1024


@dataclass
class DecodingConfig:
    """How templates are sampled. Every limit is checked when the object is built."""

    mode: str = field(
        default="batched",
        metadata={
            "help": "'batched' (constrained, refilled batches) or "
            "'sequential' (the paper: one sample at a time, "
            "regenerate a block until its tag appears)."
        },
    )
    batch_size: int = field(default=32, metadata={"help": "Rows decoded together (batched mode)."})
    do_sample: bool = field(default=True, metadata={"help": "Sample (True) or take the most likely token."})
    temperature: float = field(default=1.0, metadata={"help": "Softmax temperature (> 0)."})
    top_k: int = field(default=50, metadata={"help": "Keep the k most likely tokens; 0 keeps all."})
    top_p: float = field(default=1.0, metadata={"help": "Nucleus sampling mass in (0, 1]; 1 keeps all."})
    block_end: str = field(
        default="target",
        metadata={
            "help": "What may end a block: 'target' (default): only the model's own choice of the requested tag "
            "(of <ENDTEXT> in the last block), so every sentence ends where the model ends it; 'any-stop': also "
            "any other tag or <ENDTEXT> the model writes, replaced by the requested one and counted in cut_blocks "
            "(fewer forced tags, but a sentence can be cut where the model wanted another entity).",
            "choices": list(BLOCK_ENDS),
        },
    )
    max_block_tokens: int = field(
        default=64,
        metadata={
            "help": "Most tokens in one block, tag included; a block reaching it is drawn again (max_attempts), then "
            "gets its tag forced. The default is as long as 99% of gold blocks (JNLPBA: 3% of its blocks are longer "
            "than 48 SmolLM2 tokens, 1% longer than 63)."
        },
    )
    end_at_sentence_end: bool = field(
        default=False,
        metadata={
            "help": "Batched mode: let the last block end (<ENDTEXT>) only after a token that ends the training "
            "sentences (their sentence_endings, e.g. '.'), so a weak generator cannot stop mid-phrase; it writes on "
            "instead. Off by default; for corpora whose sentences end on punctuation."
        },
    )
    redraw_unended: bool = field(
        default=True,
        metadata={
            "help": "When sampling, draw the last block again (up to max_attempts) when the sentence it closes does "
            "not end like the training sentences (sentence_endings, e.g. '.'): the model stopped mid-phrase. A "
            "rejection, not a mask: the model is never made to write on, so it does not fall into loops."
        },
    )
    redraw_repetition: bool = field(
        default=True,
        metadata={
            "help": "When sampling, draw a block again (up to max_attempts) when it repeats an n-gram of up to 4 "
            "words 3 times in a row ('36-I 36-I 36-I'), the loop a small model falls into."
        },
    )
    redraw_run_on: bool = field(
        default=True,
        metadata={
            "help": "When sampling, draw a block again (up to max_attempts) as soon as it ends a sentence and begins "
            "another: a sentence ending followed by a capitalised word, a number or an entity ('cells . The', "
            "'cells . 4 5 6', 'cells . IM-9'), each kind only where under 1% of the training sentences have it "
            "(ecg_config.sentence_breaks: sentence-split corpora, not tweets; BC5CDR writes 'P = 0 . 047'). "
            "Without it a rambling block runs on to its token limit."
        },
    )
    max_entities: int = field(default=32, metadata={"help": "Longest entity sequence accepted."})
    max_attempts: int = field(
        default=10,
        metadata={
            "help": "Tries per block. A block that reaches max_block_tokens without its tag, or that redraw_unended "
            "or redraw_repetition rejects, is drawn again (when sampling) while tries are left; then a full block "
            "gets its tag forced and a rejected one is kept as it is (its sample's flags say so). Sequential mode: "
            "the paper's regenerate-until-tag loop, with the same rejections."
        },
    )
    seed: int | None = field(
        default=None, metadata={"help": "Seed; the same seed, inputs and batch size give the same templates."}
    )

    def __post_init__(self) -> None:
        problems = []
        if self.mode not in DECODING_MODES:
            problems.append(f"mode must be one of {DECODING_MODES}, got {self.mode!r}")
        if self.block_end not in BLOCK_ENDS:
            problems.append(f"block_end must be one of {BLOCK_ENDS}, got {self.block_end!r}")
        if not 1 <= self.batch_size <= 4096:
            problems.append(f"batch_size must be in [1, 4096], got {self.batch_size}")
        if not self.temperature > 0:
            problems.append(f"temperature must be > 0, got {self.temperature} (use do_sample=False for greedy)")
        if self.top_k < 0:
            problems.append(f"top_k must be >= 0, got {self.top_k}")
        if not 0 < self.top_p <= 1:
            problems.append(f"top_p must be in (0, 1], got {self.top_p}")
        if not 1 <= self.max_block_tokens <= MAX_BLOCK_TOKENS_LIMIT:
            problems.append(f"max_block_tokens must be in [1, {MAX_BLOCK_TOKENS_LIMIT}], got {self.max_block_tokens}")
        if not 0 <= self.max_entities <= MAX_ENTITIES_LIMIT:
            problems.append(f"max_entities must be in [0, {MAX_ENTITIES_LIMIT}], got {self.max_entities}")
        if self.max_attempts < 1:
            problems.append(f"max_attempts must be >= 1, got {self.max_attempts}")
        if problems:
            raise ValueError("invalid decoding settings: " + "; ".join(problems))


@dataclass(frozen=True)
class DecodedTemplate:
    """One written template: its tags are exactly ``entities`` in order."""

    entities: tuple[str, ...]
    template: Template
    forced_tags: int = 0  # blocks that reached max_block_tokens and got their tag forced
    num_tokens: int = 0  # tokens the model emitted for the kept blocks, tags included
    discarded_tokens: int = 0  # tokens of the blocks drawn again (their cost: the model sampled them too)
    attempts: int = 0  # block generations, retries included
    cut_blocks: int = 0  # blocks ended by another stop token the model chose (block_end="any-stop")
    complete: bool = False  # ends like the training sentences end (its last token is one of their endings)


@dataclass(eq=False)
class _Row:
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
    emitted: int = 0
    discarded: int = 0  # tokens of blocks drawn again
    attempts: int = 1  # tries of the current block
    retries: int = 0  # blocks drawn again so far
    checked_words: int = 0  # complete words of the current block checked for a loop
    cache: tuple[Any, int, torch.Tensor | None] | None = None  # (prefill cache, row, columns) until placed
    prefix_ids: list[int] = field(default_factory=list)  # <|context|> + context ids of the current prompt
    prefix_kv: list[tuple[torch.Tensor, torch.Tensor]] | None = None  # their keys/values, per layer

    @property
    def target(self) -> int:
        return self.targets[self.block]

    def redraw(self, *, tag_sampled: bool) -> None:
        """Drop the current block, to draw it again from the same prompt (its prefix, if kept, still fits):
        its tokens, and its tag when the model wrote one, count as discarded."""
        self.emitted -= len(self.block_ids)
        self.discarded += len(self.block_ids) + tag_sampled
        self.block_ids, self.attempts, self.checked_words = [], self.attempts + 1, 0


#: Words before a block that a repetition through it can reach.
_REPETITION_SPAN = REPETITION_MAX_N * REPETITION_TIMES - 1

#: A forward pass costs about this many padded prompt tokens of fixed overhead (CPU measurement).
_PASS_OVERHEAD_TOKENS = 32


def _length_groups(lengths: list[int]) -> list[list[int]]:
    """Split a prefill (indices into ``lengths``) into at most two passes by prompt length when that
    saves more padding than a pass costs: short and long prompts rarely share a pass well."""
    order = sorted(range(len(lengths)), key=lambda j: lengths[j])
    sizes = [lengths[j] for j in order]
    best_cost, best_cut = len(sizes) * sizes[-1], len(sizes)
    for cut in range(1, len(sizes)):
        cost = cut * sizes[cut - 1] + (len(sizes) - cut) * sizes[-1] + _PASS_OVERHEAD_TOKENS
        if cost < best_cost:
            best_cost, best_cut = cost, cut
    return [group for group in (order[:best_cut], order[best_cut:]) if group]


def _live(states: torch.Tensor, row: int, length: int, columns: torch.Tensor | None) -> torch.Tensor:
    """A row's live cache positions, ``[heads, length, dim]``: its last ``length`` columns (right-aligned),
    or the given ``columns`` (a prefill over a kept prefix leaves padding between prefix and prompt)."""
    return states[row, :, -length:] if columns is None else states[row].index_select(1, columns)


class _SlotLayer(DynamicLayer):
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
        if not self.is_initialized:
            self.lazy_initialization(keys, values)
        rows, heads, width, dim = keys.shape
        shape = (rows, heads, left_room + width + self.HEADROOM, dim)
        self._keys, self._values = keys.new_zeros(shape), values.new_zeros(shape)
        self._keys[:, :, left_room : left_room + width] = keys
        self._values[:, :, left_room : left_room + width] = values
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

    def select_rows(self, index: torch.Tensor) -> None:
        """Keep only these rows, in this order."""
        self.assign(self.keys.index_select(0, index), self.values.index_select(0, index), left_room=self._start)


class ChainedDecoder:
    """Write templates for entity sequences with a trained ECG model.

    Args:
        model: a causal LM trained by :class:`~hf_ecg.ECGTrainer` (eval mode is set here).
        tokenizer: its tokenizer (with the ECG tokens).
        ecg_config: the model's :class:`~hf_ecg.ECGConfig` (entity types, ``max_length``).
        config: sampling settings and limits.
    """

    def __init__(self, model: Any, tokenizer: Any, ecg_config: ECGConfig, config: DecodingConfig | None = None):
        self.model = model.eval()
        self.tokenizer = tokenizer
        self.ecg_config = ecg_config
        self.config = config or DecodingConfig()
        vocab = tokenizer.get_vocab()
        needed = [CONTEXT_TOKEN, QUESTION_TOKEN, ANSWER_TOKEN, ENDTEXT, *ecg_config.tag_tokens.values()]
        missing = [token for token in needed if token not in vocab]
        if missing:
            raise ValueError(f"the tokenizer lacks the ECG tokens {missing}: is this a model trained with hf_ecg?")
        self.segments = SegmentIds.of(tokenizer)
        self.context_id, self.question_id, self.answer_id = self.segments.context, self.segments.question, \
            self.segments.answer  # fmt: skip
        self.endtext_id = vocab[ENDTEXT]
        self.tag_ids = {label: vocab[token] for label, token in ecg_config.tag_tokens.items()}
        structural = {self.endtext_id, *self.tag_ids.values(), self.context_id, self.question_id, self.answer_id}
        banned = sorted(structural | set(tokenizer.all_special_ids))
        self._banned = torch.tensor(banned, dtype=torch.long)
        self._stop_ids = sorted({self.endtext_id, *self.tag_ids.values()})
        self._stops = torch.tensor(self._stop_ids, dtype=torch.long)
        self._stop_set = frozenset(self._stop_ids)
        self.pad_id = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else self.endtext_id
        self._split_words = WordSplitter(ecg_config.word_exceptions)
        self._endings = frozenset(ecg_config.sentence_endings or DEFAULT_SENTENCE_ENDINGS)
        # redraw_run_on looks for the second-sentence openings the training sentences (almost) never have.
        breaks = ecg_config.sentence_breaks or {}  # empty: a model trained before it was recorded
        self._break_kinds = frozenset(
            kind for kind, share in breaks.items() if share < RARE_IN_TRAINING_SHARE and self.config.redraw_run_on
        )
        # Top-k is applied by sampling among the k best tokens (torch.topk) rather than masking the rest
        # of the vocabulary: the same distribution, without a softmax and a multinomial draw over ~50k
        # tokens per row (a tenth of a CPU decode step at batch 32).
        warpers: list[Any] = []
        if self.config.do_sample:
            if self.config.temperature != 1.0:
                warpers.append(TemperatureLogitsWarper(self.config.temperature))
            if self.config.top_p < 1.0:
                warpers.append(TopPLogitsWarper(self.config.top_p))
        self._warpers = LogitsProcessorList(warpers)
        self._first_prompts: dict[int, tuple[DynamicCache, int, torch.Tensor]] = {}
        self._reused_prompt_tokens = 0  # prompt positions not re-encoded thanks to a kept prefix

    @property
    def device(self) -> torch.device:
        return self.model.device

    # ------------------------------------------------------------------ public

    def decode(
        self, sequences: Sequence[Sequence[str]], *, progress: Callable[[int], None] | None = None
    ) -> list[DecodedTemplate]:
        """A template per entity sequence, in input order. ``progress(n)`` is called as ``n`` samples finish.

        Unknown entity types raise ``ValueError`` naming the known ones; an empty sequence gives an
        entity-free sentence.
        """
        if any(isinstance(sequence, str) for sequence in sequences):
            raise TypeError("each entity sequence is a list of types, not a string")
        sequences = [tuple(sequence) for sequence in sequences]
        for sequence in sequences:
            self.ecg_config.check_entity_types(sequence)
            if len(sequence) > self.config.max_entities:
                raise ValueError(
                    f"an entity sequence of {len(sequence)} entities exceeds max_entities={self.config.max_entities}"
                )
        if not sequences:
            return []
        generator = torch.Generator(device=self.device)
        generator.manual_seed(
            self.config.seed if self.config.seed is not None else random.SystemRandom().getrandbits(63)
        )
        with torch.inference_mode():
            if self.config.mode == "sequential":
                return self._decode_sequential(sequences, generator, progress)
            return self._decode_batched(sequences, generator, progress)

    # ------------------------------------------------------------------ prompts

    def _prompt_ids(self, words: list[str], question_id: int) -> list[int]:
        """``<|context|> ctx <|question|> tag <|answer|>``, the context cut from the left to leave room
        for a whole block inside ``ecg_config.max_length`` (as in training)."""
        context = self.tokenizer(" ".join(words), add_special_tokens=False)["input_ids"] if words else []
        return prompt_ids(self.segments, context, [question_id], max_length=self.ecg_config.max_length,
                          answer_room=self.config.max_block_tokens)  # fmt: skip

    def _block_words(self, ids: list[int]) -> list[str]:
        """The words of a generated block (its tag excluded), split like the training corpus's tokens
        (:class:`~hf_ecg.words.WordSplitter`); words that would read as structure are dropped."""
        text = self.tokenizer.decode(ids, skip_special_tokens=True, clean_up_tokenization_spaces=False)
        return [w for w in self._split_words(text) if tag_label(w) is None and w != ENDTEXT and w not in SEGMENT_TOKENS]

    def _targets(self, sequence: tuple[str, ...]) -> list[int]:
        return [self.tag_ids[label] for label in sequence] + [self.endtext_id]

    def _result(
        self,
        entities: tuple[str, ...],
        words: list[str],
        *,
        forced: int,
        emitted: int,
        cut: int = 0,
        attempts: int = 0,
        discarded: int = 0,
    ) -> DecodedTemplate:
        return DecodedTemplate(
            entities=entities, template=Template(tuple(words)), forced_tags=forced, num_tokens=emitted,
            discarded_tokens=discarded, attempts=attempts, cut_blocks=cut,
            complete=bool(words) and words[-1] in self._endings,
        )  # fmt: skip

    # ------------------------------------------------------------------ sampling

    def _sample(self, logits: torch.Tensor, rows: list[_Row], generator: torch.Generator) -> list[int]:
        """Next token per row: only the row's target may be structural; a full block must end now.

        Under ``block_end="any-stop"`` the other stop tokens (all tags and ``<ENDTEXT>``) keep their
        probability: one drawn ends the block as the target would, and counts in the row's ``cut``."""
        scores = logits.to(torch.float32, copy=True)
        targets = torch.tensor([row.target for row in rows], device=scores.device).unsqueeze(1)
        target_scores = scores.gather(1, targets)
        stops = self._stops.to(scores.device)
        stop_scores = scores[:, stops]
        scores[:, self._banned.to(scores.device)] = -float("inf")
        full = torch.tensor([self._full(row) for row in rows], device=scores.device)
        if full.any():
            scores[full] = -float("inf")
        # A sentence must not come out empty (no <ENDTEXT> before its first word), nor, when asked, stop
        # anywhere but after a sentence ending.
        unended = torch.tensor([self._may_not_end(row) for row in rows], device=scores.device)
        target_scores[unended & ~full] = -float("inf")
        if self.config.block_end == "any-stop":
            stop_scores[unended & ~full] = -float("inf")
            stop_scores[full] = -float("inf")
            scores[:, stops] = stop_scores
        scores.scatter_(1, targets, target_scores)
        if self.config.do_sample:
            candidates = None
            if 0 < self.config.top_k < scores.shape[-1]:
                scores, candidates = scores.topk(self.config.top_k, dim=-1)
            scores = self._warpers(None, scores)
            choice = torch.multinomial(torch.softmax(scores, dim=-1), 1, generator=generator)
            choice = (candidates.gather(1, choice) if candidates is not None else choice).squeeze(1)
        else:
            choice = scores.argmax(dim=-1)
        tokens = choice.tolist()
        for i, (row, was_full) in enumerate(zip(rows, full.tolist(), strict=True)):
            row.forced += was_full
            if tokens[i] != row.target and tokens[i] in self._stop_set:
                tokens[i] = row.target  # another stop the model chose: the block ends, with the requested tag
                row.cut += 1
        return tokens

    def _may_not_end(self, row: _Row) -> bool:
        """Whether a row in its last block may not write <ENDTEXT> yet: its sentence is empty so far or,
        under ``end_at_sentence_end``, its last word is not a sentence ending."""
        if row.block < len(row.targets) - 1 or (row.words and not self.config.end_at_sentence_end):
            return False
        words = self._block_words(row.block_ids) or row.words
        if not words:
            return True
        return self.config.end_at_sentence_end and words[-1] not in self._endings

    # ------------------------------------------------------------------ batched

    def _decode_batched(
        self, sequences: list[tuple[str, ...]], generator: torch.Generator, progress: Callable[[int], None] | None
    ) -> list[DecodedTemplate]:
        capacity = self.config.batch_size
        in_flight_cap = 2 * capacity  # a buffer of ready rows keeps slots full and prefills large
        results: list[DecodedTemplate | None] = [None] * len(sequences)
        upcoming = iter(range(len(sequences)))
        remaining = len(sequences)
        waiting: list[_Row] = []  # need their next prompt encoded
        ready: list[_Row] = []  # encoded, waiting for a slot
        slots: list[_Row | None] = []
        cache: DynamicCache | None = None
        in_flight = 0

        def finish_block(row: _Row) -> None:
            nonlocal in_flight, remaining
            words = self._block_words(row.block_ids)
            last = row.block == len(row.targets) - 1
            tag = None if last else self.ecg_config.tag_tokens[sequences[row.index][row.block]]
            forced = self._full(row)  # its tag was forced: keep it
            if not forced and self._tries_left(row.attempts) and self._rejects_block(row.words, words, tag=tag):
                row.redraw(tag_sampled=True)
                waiting.append(row)
                return
            row.words.extend(words)
            row.emitted += 1
            row.retries += row.attempts - 1
            row.attempts = 1
            if tag is not None:
                row.words.append(tag)
                row.block += 1
                row.block_ids, row.checked_words = [], 0
                waiting.append(row)
                return
            results[row.index] = self._result(
                sequences[row.index], row.words, forced=row.forced, emitted=row.emitted, cut=row.cut,
                attempts=len(row.targets) + row.retries, discarded=row.discarded,
            )  # fmt: skip
            in_flight -= 1
            remaining -= 1
            if progress is not None:
                progress(1)

        while remaining:
            free = [i for i, row in enumerate(slots) if row is None]
            if len(slots) < capacity:
                free += list(range(len(slots), capacity))
            if free and not ready:
                # Encode the waiting rows' prompts; top the pool up with new samples.
                batch, waiting, new = waiting, [], []
                while in_flight < in_flight_cap:
                    index = next(upcoming, None)
                    if index is None:
                        break
                    new.append(_Row(index, self._targets(sequences[index])))
                    in_flight += 1
                if new:
                    ready.extend(self._start(new, generator, finish_block))
                if batch:
                    ready.extend(self._prefill(batch, generator, finish_block))
                if batch or new:
                    continue  # rows that answered with their tag alone went back to waiting
            # Fill free slots with ready rows.
            for slot in free:
                if not ready:
                    break
                cache = self._place(ready.pop(0), slot, slots, cache)
            active = [i for i, row in enumerate(slots) if row is not None]
            if not active:
                continue
            if len(active) <= len(slots) // 2 and not ready and not waiting:
                slots, cache = self._compact(slots, cache, active)
            finished, retried = self._step(slots, cache, generator)
            for slot in finished:
                row = slots[slot]
                slots[slot] = None
                self._keep_prefix(row, cache, slot, row.length, None)
                finish_block(row)
            for slot in retried:  # the block reached its limit or looped: draw it again from its prompt
                row = slots[slot]
                slots[slot] = None
                self._keep_prefix(row, cache, slot, row.length, None)
                row.redraw(tag_sampled=False)
                waiting.append(row)
            cache = self._trim(slots, cache)
        return results  # type: ignore[return-value]

    def _start(self, rows: list[_Row], generator: torch.Generator, finish_block: Callable[[_Row], None]) -> list[_Row]:
        """New samples: the first prompt (empty context) depends only on the first tag, so each distinct
        one is encoded once per decoder and its cache and logits are shared."""
        missing = sorted({row.target for row in rows} - self._first_prompts.keys())
        if missing:
            prompts = torch.tensor([self._prompt_ids([], target) for target in missing], device=self.device)
            out = self.model(input_ids=prompts, past_key_values=self._new_cache(), use_cache=True, logits_to_keep=1)
            for j, target in enumerate(missing):
                self._first_prompts[target] = (out.past_key_values, j, out.logits[j, -1])
        logits = torch.stack([self._first_prompts[row.target][2] for row in rows])
        caches = [(*self._first_prompts[row.target][:2], None) for row in rows]
        lengths = [cache.layers[0].keys.shape[-2] for cache, _, _ in caches]
        for row in rows:
            row.prefix_ids = [self.context_id]
        return self._begin_blocks(rows, logits, caches, lengths, generator, finish_block)

    def _prefill(
        self, rows: list[_Row], generator: torch.Generator, finish_block: Callable[[_Row], None]
    ) -> list[_Row]:
        """Encode the rows' prompts (left-padded forwards) and sample each row's first block token.

        A row whose prompt starts with the ``<|context|> context`` it kept from its last prompt
        (``prefix_kv``; not when the context was cut on the left) feeds only the rest. Returns the
        rows that go on to a slot; a row whose first token is its tag already has its block finished
        (``finish_block``)."""
        prompts = [self._prompt_ids(row.words, row.target) for row in rows]
        pasts = []
        for row, prompt in zip(rows, prompts, strict=True):
            reusable = row.prefix_kv is not None and prompt[: len(row.prefix_ids)] == row.prefix_ids
            pasts.append(len(row.prefix_ids) if reusable else 0)
            if not reusable:
                row.prefix_kv = None
        placed = []
        for group in _length_groups([len(prompt) - past for prompt, past in zip(prompts, pasts, strict=True)]):
            placed += self._prefill_group(
                [rows[j] for j in group], [prompts[j] for j in group], [pasts[j] for j in group], generator,
                finish_block,
            )  # fmt: skip
        return placed

    def _prefill_group(
        self,
        rows: list[_Row],
        prompts: list[list[int]],
        pasts: list[int],
        generator: torch.Generator,
        finish_block: Callable[[_Row], None],
    ) -> list[_Row]:
        """One forward: each row's kept prefix (``pasts[j]`` positions, right-aligned in a past of
        width ``max(pasts)``) then the rest of its prompt (left-padded). A row's live cache columns are
        its past and its prompt's rest, with padding between; ``_place`` gathers them."""
        chunks = [prompt[past:] for prompt, past in zip(prompts, pasts, strict=True)]
        width, past_width = max(map(len, chunks)), max(pasts)
        input_ids = torch.full((len(rows), width), self.pad_id, dtype=torch.long)
        mask = torch.zeros((len(rows), past_width + width), dtype=torch.long)
        columns = []
        for j, (chunk, past) in enumerate(zip(chunks, pasts, strict=True)):
            input_ids[j, width - len(chunk) :] = torch.tensor(chunk)
            mask[j, past_width - past : past_width] = 1
            mask[j, past_width + width - len(chunk) :] = 1
            columns.append(mask[j].nonzero().squeeze(1).to(self.device) if past else None)
        positions = (mask.cumsum(-1) - 1).clamp(min=0)[:, past_width:]
        cache = self._new_cache()
        if past_width:
            for i, layer in enumerate(cache.layers):
                sample = next(row.prefix_kv for row in rows if row.prefix_kv is not None)[i][0]
                keys = sample.new_zeros((len(rows), sample.shape[0], past_width, sample.shape[-1]))
                values = torch.zeros_like(keys)
                for j, (row, past) in enumerate(zip(rows, pasts, strict=True)):
                    if past:
                        keys[j, :, past_width - past :], values[j, :, past_width - past :] = row.prefix_kv[i]
                layer.update(keys, values)
            self._reused_prompt_tokens += sum(pasts)
        for row, prompt in zip(rows, prompts, strict=True):
            row.prefix_kv, row.prefix_ids = None, context_prefix(prompt, 1)  # what the next prompt starts with
        out = self.model(
            input_ids=input_ids.to(self.device), attention_mask=mask.to(self.device),
            position_ids=positions.to(self.device), past_key_values=cache, use_cache=True, logits_to_keep=1,
        )  # fmt: skip
        caches = [(out.past_key_values, j, columns[j]) for j in range(len(rows))]
        lengths = [len(prompt) for prompt in prompts]
        return self._begin_blocks(rows, out.logits[:, -1, :], caches, lengths, generator, finish_block)

    def _begin_blocks(
        self,
        rows: list[_Row],
        logits: torch.Tensor,
        caches: list[tuple[Any, int, torch.Tensor | None]],
        lengths: list[int],
        generator: torch.Generator,
        finish_block: Callable[[_Row], None],
    ) -> list[_Row]:
        """Sample each row's first block token from its prompt's logits. A row whose first token is its
        tag has finished the block (``finish_block``); the others keep their prompt's cache for a slot."""
        placed = []
        tokens = self._sample(logits, rows, generator)
        for row, token, cache, length in zip(rows, tokens, caches, lengths, strict=True):
            row.emitted += token != row.target
            if token == row.target:
                source, j, columns = cache
                self._keep_prefix(row, source, j, length, columns)
                finish_block(row)
                continue
            row.pending, row.length, row.cache = token, length, cache
            placed.append(row)
        return placed

    def _place(self, row: _Row, slot: int, slots: list[_Row | None], cache: DynamicCache | None) -> DynamicCache:
        """Copy a prefilled row's cache into ``slot`` of the decode cache, right-aligned."""
        source, j, columns = row.cache  # type: ignore[misc]
        row.cache = None
        length = row.length

        def live(states: torch.Tensor) -> torch.Tensor:
            return _live(states, j, length, columns)

        if cache is None:  # the first row: a one-row cache
            cache = self._new_cache()
            cache.layers = [_SlotLayer() for _ in cache.layers]
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

    def _step(
        self, slots: list[_Row | None], cache: DynamicCache, generator: torch.Generator
    ) -> tuple[list[int], list[int]]:
        """Feed every slot's pending token; return the slots whose row just emitted its target, and those
        whose block reached ``max_block_tokens`` with tries left (sampling only: greedy would repeat it)."""
        width = cache.layers[0].keys.shape[-2]
        lengths = torch.tensor([row.length if row is not None else 0 for row in slots])
        tokens = torch.tensor([[row.pending if row is not None else self.pad_id] for row in slots])
        mask = torch.cat(
            [(torch.arange(width) >= width - lengths.unsqueeze(1)).long(), torch.ones(len(slots), 1, dtype=torch.long)],
            1,
        )
        out = self.model(
            input_ids=tokens.to(self.device), attention_mask=mask.to(self.device),
            position_ids=lengths.unsqueeze(1).to(self.device), past_key_values=cache, use_cache=True,
        )  # fmt: skip
        live = [i for i, row in enumerate(slots) if row is not None]
        for i in live:
            slots[i].block_ids.append(slots[i].pending)  # type: ignore[union-attr]
            slots[i].length += 1  # type: ignore[union-attr]
        retried = [i for i in live if self._retries_block(slots[i])]  # type: ignore[arg-type]
        live = [i for i in live if i not in retried]
        rows = [slots[i] for i in live]
        next_tokens = self._sample(out.logits[live, -1, :], rows, generator) if live else []  # type: ignore[arg-type]
        finished = []
        for slot, row, token in zip(live, rows, next_tokens, strict=True):
            row.emitted += token != row.target
            if token == row.target:
                finished.append(slot)
            else:
                row.pending = token
        return finished, retried

    def _retries_block(self, row: _Row) -> bool:
        """Whether a block in progress is drawn again now, while it has tries left (``max_attempts``) and only
        when sampling: it reached its token limit (rather than getting its tag by force, as the paper
        regenerates a block), or it has just looped (``redraw_repetition``; the check the block would fail
        when it ends, made as soon as the loop is written, so a loop does not run on to the limit)."""
        if not self._tries_left(row.attempts):
            return False
        if self._full(row):
            return True
        if not (self.config.redraw_repetition or self._break_kinds):
            return False
        complete = self._block_words(row.block_ids)[:-1]  # the last word may still grow
        checked = row.checked_words
        if len(complete) <= checked:
            return False
        row.checked_words = len(complete)
        if self._starts_sentence(row.words + complete[:checked], complete[checked:]):
            return True
        return self.config.redraw_repetition and repeats_at_end(row.words[-_REPETITION_SPAN:] + complete)

    def _full(self, row: _Row) -> bool:
        """Whether the row's block has room for its tag only (``max_block_tokens``): the tag is then forced."""
        return len(row.block_ids) + 1 >= self.config.max_block_tokens

    def _tries_left(self, attempts: int) -> bool:
        """Whether a block drawn ``attempts`` times may be drawn again (sampling only: greedy would repeat it)."""
        return self.config.do_sample and attempts < self.config.max_attempts

    def _rejects_block(self, words: list[str], block: list[str], *, tag: str | None) -> bool:
        """Whether a block the model ended (its ``block`` words after the sentence's ``words``, then ``tag``, or
        None for the last block) is drawn again: the last block leaves the sentence without a sentence ending
        (``redraw_unended``), the block begins a second sentence (``redraw_run_on``), or it makes an n-gram
        repeat 3 times in a row (``redraw_repetition``; one already before it does not count)."""
        if self.config.redraw_unended and tag is None and (block or words or [""])[-1] not in self._endings:
            return True
        if self._starts_sentence(words, block if tag is None else [*block, tag]):
            return True
        if self.config.redraw_repetition:
            recent = words[-_REPETITION_SPAN:]
            return has_repetition(recent + block) and not has_repetition(recent)
        return False

    def _starts_sentence(self, words: list[str], new: list[str]) -> bool:
        """Whether the ``new`` words after the sentence's ``words`` begin a second sentence (``redraw_run_on``,
        for models whose training sentences do not hold two): :func:`~hf_ecg.words.sentence_breaks`."""
        if not self._break_kinds or not new:
            return False
        tail = [*words[-1:], *new]
        entity_starts = {i for i, word in enumerate(tail) if tag_label(word) is not None}
        return bool(sentence_breaks(tail, self._endings, entity_starts, self._break_kinds))

    @staticmethod
    def _keep_prefix(row: _Row, cache: DynamicCache, j: int, length: int, columns: torch.Tensor | None) -> None:
        """Copy out the keys/values of the row's ``<|context|> context`` (the first of its ``length`` live
        columns in row ``j`` of ``cache``) before that cache is reused: the next prompt starts with them, and
        so does the same prompt when the block is drawn again."""
        size = len(row.prefix_ids)
        row.prefix_kv = [
            (_live(layer.keys, j, length, columns)[:, :size].clone(),
             _live(layer.values, j, length, columns)[:, :size].clone())
            for layer in cache.layers
        ]  # fmt: skip

    def _new_cache(self) -> DynamicCache:
        cache = DynamicCache(config=self.model.config)
        kinds = {type(layer).__name__ for layer in cache.layers}
        if kinds != {"DynamicLayer"}:
            raise NotImplementedError(
                f"batched decoding needs full-attention cache layers, this model has {sorted(kinds)}; "
                "use mode='sequential'"
            )
        return cache

    @staticmethod
    def _trim(slots: list[_Row | None], cache: DynamicCache) -> DynamicCache:
        """Drop cache columns on the left that no live row uses."""
        width = cache.layers[0].keys.shape[-2]
        needed = max((row.length for row in slots if row is not None), default=0)
        if 0 < needed < width:
            for layer in cache.layers:
                layer.trim_left(width - needed)
        return cache

    @staticmethod
    def _compact(
        slots: list[_Row | None], cache: DynamicCache, active: list[int]
    ) -> tuple[list[_Row | None], DynamicCache]:
        """Keep only live rows once the batch is mostly empty (the tail of a run)."""
        index = torch.tensor(active, device=cache.layers[0].keys.device)
        for layer in cache.layers:
            layer.select_rows(index)
        return [slots[i] for i in active], cache

    # ------------------------------------------------------------------ sequential (the paper)

    def _decode_sequential(
        self, sequences: list[tuple[str, ...]], generator: torch.Generator, progress: Callable[[int], None] | None
    ) -> list[DecodedTemplate]:
        torch.manual_seed(int(torch.randint(0, 2**62, (1,), generator=generator)))  # generate() uses the global RNG
        sampling = {"do_sample": self.config.do_sample}
        if self.config.do_sample:
            sampling.update(temperature=self.config.temperature, top_k=self.config.top_k, top_p=self.config.top_p)
        results = []
        for sequence in sequences:
            words: list[str] = []
            forced = attempts = emitted = discarded = 0
            targets = self._targets(sequence)
            for block, target in enumerate(targets):
                prompt = torch.tensor([self._prompt_ids(words, target)], device=self.device)
                for attempt in range(1, self.config.max_attempts + 1):
                    attempts += 1
                    out = self.model.generate(
                        prompt, attention_mask=torch.ones_like(prompt), max_new_tokens=self.config.max_block_tokens,
                        eos_token_id=self._stop_ids, pad_token_id=self.pad_id, **sampling,
                    )  # fmt: skip
                    new = out[0, prompt.shape[1] :].tolist()
                    if new and new[-1] == target:
                        tag = self.ecg_config.tag_tokens[sequence[block]] if block < len(sequence) else None
                        rejected = self._rejects_block(words, self._block_words(new[:-1]), tag=tag)
                        if not (rejected and self._tries_left(attempt)):
                            break
                    discarded += len(new)
                else:  # the paper loops until the tag appears; we stop and force it
                    forced += 1
                    kept = [t for t in new if t not in self._stop_ids][: self.config.max_block_tokens - 1]
                    discarded -= len(kept)
                    new = [*kept, target]
                emitted += len(new)
                words.extend(self._block_words(new[:-1]))
                if block < len(sequence):
                    words.append(self.ecg_config.tag_tokens[sequence[block]])
            results.append(
                self._result(sequence, words, forced=forced, emitted=emitted, attempts=attempts, discarded=discarded)
            )
            if progress is not None:
                progress(1)
        return results


class TemplateLMDecoder(ChainedDecoder):
    """ECG-LM, the paper's ablation: the whole template in one go, prompted with the entity list.

    The prompt is ``<|context|> <|question|> <t1> … <tn> <|answer|>`` (as ``layout="lm"`` training
    writes it); the answer is the template followed by ``<ENDTEXT>``. The same per-row constraint as
    the chained decoder applies (only the next requested tag may appear, a block reaching
    ``max_block_tokens`` gets it forced), so the entities are exactly the request; what differs from
    ECG-QALM is that the model never sees a question per block. Batches of ``batch_size`` rows run
    to their longest row (no refilling: this is a baseline).
    """

    def _lm_prompt_ids(self, sequence: tuple[str, ...]) -> list[int]:
        tags = " ".join(self.ecg_config.tag_tokens[label] for label in sequence)
        question = self.tokenizer(tags, add_special_tokens=False)["input_ids"] if sequence else []
        return prompt_ids(self.segments, [], question, max_length=self.ecg_config.max_length, answer_room=0)

    def _decode_sequential(
        self, sequences: list[tuple[str, ...]], generator: torch.Generator, progress: Callable[[int], None] | None
    ) -> list[DecodedTemplate]:
        raise ValueError("an ECG-LM model (layout 'lm') has no per-block procedure: use mode='batched'")

    def _decode_batched(
        self, sequences: list[tuple[str, ...]], generator: torch.Generator, progress: Callable[[int], None] | None
    ) -> list[DecodedTemplate]:
        results: list[DecodedTemplate] = []
        for start in range(0, len(sequences), self.config.batch_size):
            chunk = sequences[start : start + self.config.batch_size]
            results.extend(self._decode_chunk(chunk, generator))
            if progress is not None:
                progress(len(chunk))
        return results

    def _decode_chunk(self, sequences: list[tuple[str, ...]], generator: torch.Generator) -> list[DecodedTemplate]:
        rows = [_Row(i, self._targets(sequence)) for i, sequence in enumerate(sequences)]
        prompts = [self._lm_prompt_ids(sequence) for sequence in sequences]
        width = max(map(len, prompts))
        input_ids = torch.tensor([[self.pad_id] * (width - len(p)) + p for p in prompts], device=self.device)
        mask = (torch.arange(width) >= torch.tensor([width - len(p) for p in prompts])[:, None]).long()
        mask = mask.to(self.device)
        positions = (mask.cumsum(-1) - 1).clamp(min=0)
        cache = self._new_cache()
        out = self.model(input_ids=input_ids, attention_mask=mask, position_ids=positions, past_key_values=cache)
        done = [False] * len(rows)
        while True:
            live = [i for i, finished in enumerate(done) if not finished]
            tokens = self._sample(out.logits[live, -1, :], [rows[i] for i in live], generator)
            feed = [self.pad_id] * len(rows)
            for i, token in zip(live, tokens, strict=True):
                row = rows[i]
                row.emitted += 1
                if token != row.target:
                    row.block_ids.append(token)
                    feed[i] = token
                    continue
                row.words.extend(self._block_words(row.block_ids))
                row.block_ids = []
                if row.block < len(row.targets) - 1:
                    row.words.append(self.ecg_config.tag_tokens[sequences[i][row.block]])
                    row.block += 1
                    feed[i] = token
                else:
                    done[i] = True
            if all(done):
                break
            step_mask = torch.tensor([[0 if finished else 1] for finished in done], device=self.device)
            mask = torch.cat([mask, step_mask], 1)
            positions = positions[:, -1:] + 1
            out = self.model(
                input_ids=torch.tensor(feed, device=self.device)[:, None], attention_mask=mask,
                position_ids=positions, past_key_values=cache,
            )  # fmt: skip
        return [
            self._result(sequence, row.words, forced=row.forced, emitted=row.emitted, cut=row.cut)
            for sequence, row in zip(sequences, rows, strict=True)
        ]


def make_decoder(model: Any, tokenizer: Any, ecg_config: ECGConfig, config: DecodingConfig | None = None) -> Any:
    """The decoder for the model's training layout: :class:`ChainedDecoder` (``qa``, ECG-QALM) or
    :class:`TemplateLMDecoder` (``lm``, the ECG-LM ablation)."""
    cls = TemplateLMDecoder if ecg_config.layout == "lm" else ChainedDecoder
    return cls(model, tokenizer, ecg_config, config)
