"""The prompt layout, the one place where training rows and decoding prompts are put together.

Every training sample and every decoding prompt is ::

    <|context|> context ids <|question|> question ids <|answer|> [answer ids]

``qa`` (ECG-QALM): one sample per block, the context the sentence so far, the question the block's
tag. ``qa-plan``: the same, the question the block's tag then the tags still to come and
``<ENDTEXT>`` (the block is written knowing how many entities the sentence still holds). ``lm``
(the paper's ECG-LM ablation): one sample per sentence, no context, the question the sentence's
tags, the answer the whole template. The context is cut from the left so that the
prompt and the room kept for the answer fit ``max_length``; the trainer keeps an answer's own
length as that room, the decoder the longest block it may write. A test asserts that the two
agree token for token.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from .blocks import ANSWER_TOKEN, CONTEXT_TOKEN, ENDTEXT, QUESTION_TOKEN

__all__ = [
    "LAYOUTS",
    "SegmentIds",
    "context_prefix",
    "continued_answer",
    "fit_question",
    "mention_answers",
    "pair_question",
    "prompt_ids",
    "training_sample",
]

#: ``qa``: ECG-QALM, a Q&A sample per block; ``qa-plan``: the same, each question holding the tags still to come;
#: ``lm``: ECG-LM, a sample per sentence.
LAYOUTS = ("qa", "qa-plan", "lm")
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


def pair_question(segments: SegmentIds, tag: int, *, compact: bool) -> list[int]:
    """How an ``after-sentence`` pair asks for its slot's mention: the tag's id alone (``compact``, models trained
    since :attr:`~hf_ecg.ECGConfig.compact_mention_answers`), or ``<|question|> tag <|answer|>``."""
    return [tag] if compact else [segments.question, tag, segments.answer]


def mention_answers(tokenizer: Any, mentions: Sequence[str], *, compact: bool) -> list[list[int]]:
    """The ids of mention answers, each mention's words joined by spaces: ``compact``, the words' ids then
    ``<ENDTEXT>``'s; else the text ``words <ENDTEXT>`` tokenized (a byte-level BPE puts a space token before
    ``<ENDTEXT>``: one more id to write per mention, which carries nothing)."""
    if compact:
        end = tokenizer.convert_tokens_to_ids(ENDTEXT)
        return [[*ids, end] for ids in tokenizer(list(mentions), add_special_tokens=False)["input_ids"]]
    return tokenizer([f"{mention} {ENDTEXT}" for mention in mentions], add_special_tokens=False)["input_ids"]


def continued_answer(
    segments: SegmentIds, block: list[int], pairs: Sequence[tuple[int, list[int]]], *, compact: bool
) -> tuple[list[int], list[bool]]:
    """The answer of an ``after-sentence`` mention row (:func:`~hf_ecg.runtime.blocks.mention_samples`): the last
    block's ids (``<ENDTEXT>`` last), then per slot a pair, :func:`pair_question` then the mention's ids
    (:func:`mention_answers`, ``<ENDTEXT>`` last), joined at id level as the decoder's rows are; and which ids carry
    loss (the last pair's mention: a row teaches its last slot, the pairs before it are its context, as in the
    writer's prompt). The writer's prompt for slot ``k`` is the final block's prompt, this answer for the first
    ``k`` pairs, then slot ``k``'s :func:`pair_question`. ``compact``: a pair is ``tag mention``; else
    ``<|question|> tag <|answer|> mention`` (models trained before; two more ids to encode per slot)."""
    ids = list(block)
    for tag, mention in pairs:
        ids += [*pair_question(segments, tag, compact=compact), *mention]
    taught = len(pairs[-1][1]) if pairs else 0
    return ids, [False] * (len(ids) - taught) + [True] * taught
