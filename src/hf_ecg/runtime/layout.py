"""The prompt layout, the one place where training rows and decoding prompts are put together.

Every training sample and every decoding prompt is ::

    <|context|> context ids <|question|> question ids <|answer|> [answer ids]

``qa`` (ECG-QALM): one sample per block, the context the sentence so far, the question the block's
tag. ``qa-plan``: the same, the question the block's tag then the tags still to come and
``<ENDTEXT>`` (the block is written knowing how many entities the sentence still holds). ``lm``
(the paper's ECG-LM ablation): one sample per sentence, no context, the question the sentence's
tags, the answer the whole template. ``sketch`` (GeniusAug, the sketch generator): one sample per block, the
question the sentence's sketch from that block on (:meth:`~hf_ecg.runtime.sketches.Sketch.questions`: its tags, kept
words and gaps, ``<ENDTEXT>`` last), so a block is written around the words the sketch keeps. The context is cut from
the left so that the prompt and the room kept for the answer fit ``max_length``; the trainer keeps an answer's own
length as that room, the decoder the longest block it may write. A test asserts that the two
agree token for token.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from .blocks import ANSWER_TOKEN, CONTEXT_TOKEN, QUESTION_TOKEN, QASample, Template, lm_sample, qa_samples
from .sketches import Sketch

__all__ = [
    "LAYOUTS",
    "Layout",
    "SegmentIds",
    "context_prefix",
    "continued_answer",
    "fit_question",
    "layout_named",
    "prompt_ids",
    "register_layout",
    "training_sample",
]


@dataclass(frozen=True)
class Layout:
    """A prompt layout by name: what a training row of a template is, and so what a decoding prompt asks. Read
    through the model's config (:attr:`~hf_ecg.runtime.ecg_config.ECGConfig.prompt_layout`); every behaviour that
    depends on the layout asks this object, never its name."""

    name: str
    #: the paper's name for a generator trained with it
    method: str
    #: a sample per block, each ending in its tag (Q&A); else one sample per sentence, the whole template its answer
    per_block: bool
    #: the question holds the tags of the blocks still to come
    plan: bool
    #: the mention layout it trains with when none is given (:data:`~hf_ecg.runtime.blocks.MENTION_LAYOUTS`)
    mention_layout: str
    #: the question is the sketch from the block on (a sketch generator: its tokenizer has the gap token)
    sketch: bool = False

    def samples(self, template: Template, sketch: Sketch | None = None) -> list[QASample]:
        """The training samples of ``template`` (context, question, answer), in block order; a sketch layout asks
        ``sketch`` (default: the template's tags alone, a gap around each)."""
        if self.sketch:
            sketch = sketch or Sketch.of(template)
            questions = sketch.questions()
            return [replace(s, question=questions[s.block_index]) for s in qa_samples(template)]
        return qa_samples(template, plan=self.plan) if self.per_block else [lm_sample(template)]


_REGISTERED: dict[str, Layout] = {}


def register_layout(layout: Layout) -> Layout:
    """Make ``layout`` known by its name (a name taken twice is refused)."""
    if layout.name in _REGISTERED:
        raise ValueError(f"a layout named {layout.name!r} is registered already")
    _REGISTERED[layout.name] = layout
    return layout


def layout_named(name: str) -> Layout:
    """The layout registered as ``name``; ``ValueError`` naming the known ones."""
    try:
        return _REGISTERED[name]
    except KeyError:
        raise ValueError(f"unknown layout {name!r}; known: {', '.join(_REGISTERED)}") from None


#: ECG-QALM: a Q&A sample per block.
QA = register_layout(Layout("qa", "ECG-QALM", per_block=True, plan=False, mention_layout="after-sentence"))
#: The same, each question holding the tags still to come.
QA_PLAN = register_layout(Layout("qa-plan", "ECG-QALM", per_block=True, plan=True, mention_layout="after-sentence"))
#: ECG-LM, the paper's ablation: a sample per sentence (its mentions are written in the sentence: no last block row
#: to continue).
LM = register_layout(Layout("lm", "ECG-LM", per_block=False, plan=False, mention_layout="in-sentence"))
#: GeniusAug: a Q&A sample per block, each question the sketch from that block on.
SKETCH = register_layout(
    Layout("sketch", "GeniusAug", per_block=True, plan=False, mention_layout="after-sentence", sketch=True)
)
#: The names of the layouts, in the order they were registered.
LAYOUTS = tuple(_REGISTERED)
#: Segment tokens around the context and question: ``<|context|>``, ``<|question|>``, ``<|answer|>``.
SEGMENTS_IN_PROMPT = 3


@dataclass(frozen=True)
class SegmentIds:
    """The ids of the three segment tokens in a tokenizer."""

    context: int
    question: int
    answer: int

    @classmethod
    def of(cls, tokenizer: Any) -> SegmentIds:
        return cls(*tokenizer.convert_tokens_to_ids([CONTEXT_TOKEN, QUESTION_TOKEN, ANSWER_TOKEN]))


def fit_question(question: list[int], max_length: int) -> list[int]:
    """``question`` cut from the right so that the segment tokens and one answer token still fit ``max_length``: a
    ``qa-plan`` question of many tags keeps the block's own tag and the nearest ones to come. Training rows and
    decoding prompts both cut it here (:func:`prompt_ids`), so they stay the same token for token."""
    return question[: max(1, max_length - SEGMENTS_IN_PROMPT - 1)]


def prompt_ids(
    segments: SegmentIds, context: list[int], question: list[int], *, max_length: int, answer_room: int
) -> list[int]:
    """``<|context|> context <|question|> question <|answer|>``, the context cut from the left so that
    the prompt and ``answer_room`` more tokens fit ``max_length`` (no context when nothing is left); a question
    too long for ``max_length`` is cut by :func:`fit_question`."""
    question = fit_question(question, max_length)
    budget = max_length - SEGMENTS_IN_PROMPT - len(question) - answer_room
    kept = context[-budget:] if budget > 0 else []
    return [segments.context, *kept, segments.question, *question, segments.answer]


def context_prefix(prompt: list[int], segments: SegmentIds) -> list[int]:
    """The ``<|context|> context`` part of a prompt (what the next block's prompt starts with): everything before
    its ``<|question|>``, whatever the question's length."""
    return prompt[: len(prompt) - 1 - prompt[::-1].index(segments.question)]


def training_sample(
    segments: SegmentIds, context: list[int], question: list[int], answer: list[int], *, max_length: int
) -> tuple[list[int], int]:
    """A training sample and the length of its prompt (the answer follows it). An answer that alone does
    not fit keeps its end, which holds the tag."""
    question = fit_question(question, max_length)
    room = max_length - SEGMENTS_IN_PROMPT - len(question)
    answer = answer[-room:] if len(answer) > room else answer
    prompt = prompt_ids(segments, context, question, max_length=max_length, answer_room=len(answer))
    return [*prompt, *answer], len(prompt)


def continued_answer(
    segments: SegmentIds, block: list[int], pairs: Sequence[tuple[int, list[int]]]
) -> tuple[list[int], list[bool]]:
    """The answer of an ``after-sentence`` mention row (:func:`~hf_ecg.runtime.blocks.mention_samples`): the last
    block's ids (``<ENDTEXT>`` last), then per slot ``<|question|> tag <|answer|> mention ids`` (a pair: its tag id
    and its mention's ids, ``<ENDTEXT>`` last), segment ids joined without the space tokens text tokenization puts
    around them, as the decoder's rows are; and which ids carry loss (the last pair's mention: a row teaches its last
    slot, the pairs before it are its context, as in the writer's prompt). The writer's prompt for slot ``k`` is the
    final block's prompt, this answer for the first ``k`` pairs, then ``<|question|> tag <|answer|>``."""
    ids = list(block)
    for tag, mention in pairs:
        ids += [segments.question, tag, segments.answer, *mention]
    taught = len(pairs[-1][1]) if pairs else 0
    return ids, [False] * (len(ids) - taught) + [True] * taught
