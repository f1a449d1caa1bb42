"""Decoding settings (:class:`DecodingConfig`, every limit checked when built), the pieces a request is made of
(entity types, and :class:`Phrase`: words written exactly as given) and the result of decoding one request
(:class:`DecodedTemplate`)."""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from .blocks import Template
from .sampler import SamplingParams
from .sketches import Sketch

__all__ = [
    "BLOCK_ENDS",
    "DECODING_MODES",
    "DEFAULT_REDRAW_BUDGET",
    "MAX_BLOCK_TOKENS_LIMIT",
    "MAX_ENTITIES_LIMIT",
    "DecodedTemplate",
    "DecodingConfig",
    "Phrase",
    "RedrawBudget",
    "ShardSeeds",
    "split_request",
]

DECODING_MODES = ("batched", "sequential")
BLOCK_ENDS = ("target", "any-stop")
#: Refuse requests beyond these: they are mistakes, not workloads.
MAX_ENTITIES_LIMIT = 256
MAX_BLOCK_TOKENS_LIMIT = 1024
#: Tokens of redrawn blocks allowed per kept token (DecodingConfig.redraw_budget).
DEFAULT_REDRAW_BUDGET = 1.0


@dataclass
class DecodingConfig:
    """How templates are sampled. Every limit is checked when the object is built."""

    mode: str = field(
        default="batched",
        metadata={
            "help": "'batched' (constrained, refilled batches) or "
            "'sequential' (the paper: one sample at a time, "
            "regenerate a block until its tag appears).",
            "choices": list(DECODING_MODES),
        },
    )
    batch_size: int = field(
        default=64,
        metadata={"help": "Rows decoded together in batched mode; a GPU takes more. See docs/performance.md."},
    )
    do_sample: bool = field(default=True, metadata={"help": "Sample (True) or take the most likely token."})
    temperature: float = field(default=1.0, metadata={"help": "Softmax temperature (> 0)."})
    top_k: int = field(default=50, metadata={"help": "Keep the k most likely tokens; 0 keeps all."})
    top_p: float = field(default=1.0, metadata={"help": "Nucleus sampling mass in (0, 1]; 1 keeps all."})
    block_end: str = field(
        default="target",
        metadata={
            "help": "What may end a block: 'target' (default), only the model's own choice of the requested tag, or "
            "'any-stop', also any other tag it writes, replaced by the requested one and counted as cut.",
            "choices": list(BLOCK_ENDS),
        },
    )
    max_block_tokens: int = field(
        default=64,
        metadata={
            "help": "Most tokens in one block, tag included; a full block is drawn again, then gets its tag forced. "
            "Default: as long as 99% of the gold blocks."
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
            "help": "When sampling, draw the last block again when its sentence does not end the way the training "
            "sentences end (a rejection, not a mask)."
        },
    )
    redraw_repetition: bool = field(
        default=True,
        metadata={
            "help": "When sampling, draw a block again when it repeats an n-gram of up to 4 words 3 times in "
            "a row, the "
            "loop a small model falls into."
        },
    )
    redraw_run_on: bool = field(
        default=True,
        metadata={
            "help": "When sampling, draw a block again as soon as it ends a sentence and begins another, where that is "
            "rare in the training sentences."
        },
    )
    redraw_unrequested_tag: bool = field(
        default=False,
        metadata={
            "help": "When sampling, draw a block again when the model writes a tag the request does not allow there, "
            "instead of masking that tag out (off by default; see docs/ablations.md)."
        },
    )
    redraw_tag_pieces: bool = field(
        default=True,
        metadata={
            "help": "When sampling, draw a block again when its text spells a tag's name ('Dise', 'ase', "
            "'PersonI'): an "
            "entity the model meant, left as O text."
        },
    )
    max_entities: int = field(default=32, metadata={"help": "Longest entity sequence accepted."})
    max_attempts: int = field(
        default=10,
        metadata={
            "help": "Tries per block: a full or rejected block is drawn again while tries and the redraw budget last, "
            "then a full one gets its tag forced and a rejected one is kept, flagged."
        },
    )
    redraw_budget: float | None = field(
        default=DEFAULT_REDRAW_BUDGET,
        metadata={
            "help": "Bound on the tokens drawn again, as a multiple of the tokens kept so far, so that a run costs at "
            "most about twice its kept text; then blocks get no more tries. None: no bound (default 1.0)."
        },
    )
    seed: int | None = field(
        default=None, metadata={"help": "Seed; the same seed, inputs and batch size give the same templates."}
    )

    @property
    def sampling(self) -> SamplingParams:
        """The sampling settings, as the template decoder and the mention writer both read them."""
        return SamplingParams(self.do_sample, self.temperature, self.top_k, self.top_p)

    def recorded(self) -> dict[str, Any]:
        """The settings a generation manifest records: every field but ``seed`` (each shard derives its own)."""
        return {k: v for k, v in asdict(self).items() if k != "seed"}

    def __post_init__(self) -> None:
        problems = []
        if self.mode not in DECODING_MODES:
            problems.append(f"mode must be one of {DECODING_MODES}, got {self.mode!r}")
        if self.block_end not in BLOCK_ENDS:
            problems.append(f"block_end must be one of {BLOCK_ENDS}, got {self.block_end!r}")
        if not 1 <= self.batch_size <= 4096:
            problems.append(f"batch_size must be in [1, 4096], got {self.batch_size}")
        if not self.temperature > 0:
            problems.append(
                f"temperature must be > 0, got {self.temperature} "
                "(for greedy decoding: do_sample=False, `--no-do-sample`)"
            )
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
        if self.redraw_budget is not None and not self.redraw_budget >= 0:
            problems.append(f"redraw_budget must be >= 0 or None (no bound), got {self.redraw_budget}")
        if problems:
            raise ValueError("invalid decoding settings: " + "; ".join(problems))


@dataclass
class RedrawBudget:
    """The tokens one decode call keeps and throws away (blocks drawn again), and whether it may draw
    another block again: while ``redrawn < ratio * kept + allowance`` (``ratio`` None: always). The
    ``allowance`` (a block limit per 4 batch rows) lets the first blocks be drawn again before any is kept."""

    ratio: float | None
    allowance: int
    kept: int = 0  # tokens of kept blocks, tags included
    redrawn: int = 0  # tokens of blocks drawn again
    refused: int = 0  # redraws the budget refused (the block had tries left)

    def allows(self) -> bool:
        return self.ratio is None or self.redrawn < self.ratio * self.kept + self.allowance

    def spend(self, cost: int) -> bool:
        """Draw a block again at ``cost`` tokens if the budget allows (spent now, so a run redraws at most
        ``ratio * kept + allowance`` plus one block); a refusal is counted."""
        if self.allows():
            self.redrawn += cost
            return True
        self.refused += 1
        return False


@dataclass(frozen=True)
class ShardSeeds:
    """The seeds of one shard of requests (a :func:`~hf_ecg.generate_dataset` shard, a pipeline call's chunk of
    ``batch_size`` requests), derived from the run's seed and the shard's index alone: a shard is the same
    whoever writes it and whenever, and the pipeline and ``generate_dataset`` write the same samples for the
    same seed, requests and settings."""

    entities: int  # the entity sequences a sampler draws
    decoding: int  # the templates
    mentions: int  # the mentions drawn from a bank or lists, and a mixture's sources
    written_mentions: int  # the mentions the generator writes

    @classmethod
    def of(cls, seed: int, shard: int) -> ShardSeeds:
        purposes = ("entities", "decoding", "mentions", "written mentions")
        return cls(*(random.Random(f"{purpose}:{seed}:{shard}").getrandbits(63) for purpose in purposes))


@dataclass(frozen=True)
class Phrase:
    """A piece of a request written exactly as given, where it stands among the entity types: its words open the
    block after the tags before it (the sentence's first block, or the last one after every tag), and the model
    writes that block's own words after them, reading them as the sentence so far (jump-forward: a known string
    costs one prompt, no sampling). ``Phrase(("was", "given", "to"))`` or ``Phrase.of("was given to")``."""

    words: tuple[str, ...]

    def __post_init__(self) -> None:
        if isinstance(self.words, str) or not self.words or not all(isinstance(w, str) and w for w in self.words):
            raise ValueError(f"a phrase is a non-empty tuple of words, got {self.words!r}")
        if any(len(word.split()) != 1 for word in self.words):
            raise ValueError(f"a phrase's words hold no spaces, got {self.words!r}")

    @classmethod
    def of(cls, text: str) -> Phrase:
        """The phrase of ``text``'s words (split on spaces)."""
        return cls(tuple(text.split()))


def split_request(request: Sequence[str | Phrase] | Sketch) -> tuple[tuple[str, ...], dict[int, tuple[str, ...]]]:
    """A request's entity types, and the words of its phrases by the block they open (block ``k`` follows the
    ``k``-th tag; phrases in a row join); a :class:`~hf_ecg.runtime.sketches.Sketch` has its tags' types and no
    phrase (its kept words are in its questions)."""
    if isinstance(request, Sketch):
        return request.entity_types, {}
    labels: list[str] = []
    phrases: dict[int, tuple[str, ...]] = {}
    for piece in request:
        if isinstance(piece, Phrase):
            phrases[len(labels)] = phrases.get(len(labels), ()) + piece.words
        else:
            labels.append(piece)
    return tuple(labels), phrases


@dataclass(frozen=True)
class DecodedTemplate:
    """One written template: its tags are exactly ``entities`` in order."""

    entities: tuple[str, ...]
    template: Template
    forced_tags: int = 0  # blocks that reached max_block_tokens and got their tag forced
    model_tokens: int = 0  # tokens the model emitted for the kept blocks, tags included
    redrawn_tokens: int = 0  # tokens of the blocks drawn again (their cost: the model sampled them too)
    refused_redraws: int = 0  # blocks the redraw budget kept as they were (tries were left)
    attempts: int = 0  # block generations, retries included
    cut_blocks: int = 0  # blocks ended by another stop token the model chose (block_end="any-stop")
    complete: bool = False  # ends like the training sentences end (its last token is one of their endings)
    tag_pieces: int = 0  # words of its O text that spell a tag's name ("Dise", "ase": hf_ecg.runtime.tag_pieces)
    #: The ``<|context|> context`` ids of its last block's prompt and their keys/values per layer (``decode(...,
    #: keep_prefixes=True)``, batched mode; for a model of mention layout ``after-sentence``, the whole last row: that
    #: prompt and the ids of the block it drew, ``<ENDTEXT>`` not fed): a mention prompt that starts with the same ids
    #: reads them instead of encoding the sentence again (:meth:`~hf_ecg.runtime.mention_writer.MentionWriter.write`;
    #: a context the decoder cut on the left shares little more than ``<|context|>``).
    prompt_prefix: tuple[list[int], list[tuple[Any, Any]]] | None = field(default=None, repr=False, compare=False)
