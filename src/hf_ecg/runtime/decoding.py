"""Chained block decoding: write a template block by block for each requested entity sequence.

For the sequence ``[t1 … tn]`` the model answers question ``<t1>`` with an empty context, the
block is appended to the context, question ``<t2>`` follows, … and finally ``<ENDTEXT>``
(docs/how-it-works.md). Prompts are built by :mod:`hf_ecg.runtime.layout`, like the training rows::

    <|context|> context ids <|question|> tag id <|answer|>

Two procedures:

- ``batched`` (default): many samples advance together. A logits mask lets each row emit only its
  own target tag (``<ENDTEXT>`` only in the final block) and no other special token; a row's block
  ends when the model itself emits its target (``block_end="target"``, default), so the last block
  ends on the model's own ``<ENDTEXT>``; a block that reaches ``max_block_tokens`` is drawn again
  from its prompt (up to ``max_attempts`` tries, as the paper regenerates a block), and only then
  gets its tag forced (counted in ``forced_tags``). A block the model did end is drawn again too when
  it closes the sentence without a sentence ending (``redraw_unended``), loops
  (``redraw_repetition``, checked as each word is written) or spells a tag's name in its text
  (``redraw_tag_pieces``: ``Dise``, ``ase``, :mod:`.tag_pieces`: where the model wants a tag it may not
  write, the mask leaves it the nearest tokens, the pieces of the tag's name); optionally also whenever
  the model draws such a tag (``redraw_unrequested_tag``, off: it costs more and leaves more pieces).
  Rejection sampling, so the model is never pushed to write on. Every sample counts the tag pieces
  left in its text (``tag_pieces``). What the redraws cost is bounded (``redraw_budget``, default 1.0:
  the tokens of blocks drawn again stay under that multiple of the tokens kept so far in the run; past
  it a block gets no more tries, and one that breaks a rule as it is written ends there with its tag
  forced), so a barely trained model costs about twice its kept text, not ten times. Under
  ``block_end="any-stop"`` the model may also end a block with another tag or ``<ENDTEXT>``, which is
  replaced by the target and counted in ``cut_blocks``: such a block ends where the model wanted to
  write something else. Over a byte-level vocabulary no token may leave a block inside a character, and
  a tag waits until the character is whole (:mod:`.char_boundaries`; both procedures), so no text
  decodes to U+FFFD.

  Rows live in the slots of one KV cache, right-aligned; a row that finishes a block leaves its
  slot, its next prompt is encoded in a batched prefill with other waiting rows, and the slot is
  refilled at once with a row that is ready, so the batch stays full. The next prompt
  starts with the last one's ``<|context|> context``, whose keys and values the row keeps when it
  leaves its slot: the prefill encodes only the finished block and the new question.
- ``sequential``: the paper's procedure, for comparison: one sample at a time, ``model.generate``
  each block and regenerate it until it ends with its tag (forced after ``max_attempts``).

The parts, a module each (flat, beside this one: the pipeline's code is saved with a model for
``trust_remote_code``, and transformers copies only flat modules): :mod:`.decoding_config` (settings
and the result), :mod:`.decoding_constraint` (the entity constraint, a ``transformers.LogitsProcessor``
that ``model.generate()`` takes too), :mod:`.char_boundaries` (whole characters), :mod:`.sampler` (the draw, with
the settings the mention writer shares), :mod:`.decoding_base` (the block rules both decoders share),
:mod:`.decoding_rules` (when a block is drawn again), :mod:`.decoding_cache` (the slot cache, a row in flight),
:mod:`.decoding_scheduler` (the rows' queues and slots), :mod:`.decoding_slots` (the slots' cache operations),
:mod:`.decoding_batched` (ECG-QALM's batched decoder),
:mod:`.decoding_sequential` (the paper's procedure, the reference), :mod:`.decoding_lm` (ECG-LM).
"""

from __future__ import annotations

from typing import Any

from .decoding_batched import ChainedDecoder
from .decoding_config import BLOCK_ENDS, DECODING_MODES, DecodedTemplate, DecodingConfig
from .decoding_constraint import EntityConstraintLogitsProcessor
from .decoding_lm import TemplateLMDecoder
from .ecg_config import ECGConfig
from .vocabulary import VocabularyTables

__all__ = [
    "BLOCK_ENDS",
    "DECODING_MODES",
    "ChainedDecoder",
    "DecodedTemplate",
    "DecodingConfig",
    "EntityConstraintLogitsProcessor",
    "TemplateLMDecoder",
    "make_decoder",
]


def make_decoder(
    model: Any,
    tokenizer: Any,
    ecg_config: ECGConfig,
    config: DecodingConfig | None = None,
    vocabulary: VocabularyTables | None = None,
) -> Any:
    """The decoder for the model's training layout: :class:`ChainedDecoder` (``qa``, ECG-QALM) or
    :class:`TemplateLMDecoder` (``lm``, the ECG-LM ablation); ``vocabulary``: the tokenizer's tables, if already
    computed."""
    cls = ChainedDecoder if ecg_config.prompt_layout.per_block else TemplateLMDecoder
    return cls(model, tokenizer, ecg_config, config, vocabulary)
