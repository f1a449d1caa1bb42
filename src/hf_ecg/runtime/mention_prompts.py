"""The prompt a mention is written after: :class:`MentionPrompts` lays a template's slot out as the generator's
mention samples were (:data:`~hf_ecg.runtime.blocks.MENTION_LAYOUTS`)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .blocks import ENDTEXT, Template, continues_block, mention_context, tag_label, tag_token
from .ecg_config import ECGConfig
from .layout import SEGMENTS_IN_PROMPT, SegmentIds, continued_answer, prompt_ids

__all__ = ["MentionPrompts"]


class MentionPrompts:
    """A slot's prompt: its context (the slots before it filled with what was written for them, the ones after it
    tags), then the slot's tag as the question.

    Args:
        tokenizer: the generator's tokenizer.
        ecg_config: its :class:`~hf_ecg.ECGConfig` (the mention layout, the length limit, the tag tokens).
        max_tokens: the longest answer a try may draw (room is left for it).
    """

    def __init__(self, tokenizer: Any, ecg_config: ECGConfig, max_tokens: int) -> None:
        vocab = tokenizer.get_vocab()
        self.tokenizer, self.ecg_config, self.max_tokens = tokenizer, ecg_config, max_tokens
        self.segments = SegmentIds.of(tokenizer)
        self.endtext_id = vocab[ENDTEXT]
        self.tag_ids = {label: vocab[token] for label, token in ecg_config.tag_tokens.items()}

    def prompt(self, template: Template, written: Sequence[tuple[str, ...] | None], slot: int) -> list[int]:
        """The prompt of slot ``slot``: :func:`~hf_ecg.runtime.blocks.mention_context` in the model's mention layout
        (the slots before it filled by ``written``, a ``None`` staying a tag), the slot's tag as the question; with
        ``after-sentence``, the template's last block row then a tag/mention pair per earlier slot
        (:func:`~hf_ecg.runtime.layout.continued_answer`), the slot's tag as the last question."""
        layout = self.ecg_config.mention_layout
        if continues_block(layout):
            return self._continued_prompt(template, written, slot)
        context = mention_context(template, written, slot, layout=layout)
        return prompt_ids(
            self.segments,
            self.tokenizer(context, add_special_tokens=False)["input_ids"],
            [self.tag_ids[template.entity_types[slot]]],
            max_length=self.ecg_config.max_length,
            answer_room=self.max_tokens + 1,
        )

    def _continued_prompt(self, template: Template, written: Sequence[tuple[str, ...] | None], slot: int) -> list[int]:
        """:meth:`prompt` for mention layout ``after-sentence``. The context is cut on the left (as a training row's)
        to leave room for the last block and a pair per slot at the writer's limits, the same for every slot of the
        template, so that slot ``k``'s prompt goes on from slot ``k - 1``'s and its drawn mention."""
        last = max(i for i, token in enumerate(template.tokens) if tag_label(token) is not None)
        types = template.entity_types
        context, block, *mentions = self.tokenizer(
            [
                " ".join(template.tokens[: last + 1]),
                " ".join((*template.tokens[last + 1 :], ENDTEXT)),
                *(" ".join((*(written[k] or (tag_token(types[k]),)), ENDTEXT)) for k in range(slot)),
            ],
            add_special_tokens=False,
        )["input_ids"]
        answer, _ = continued_answer(self.segments, block, [(self.tag_ids[types[k]], mentions[k]) for k in range(slot)])
        room = len(block) + len(types) * (self.max_tokens + 1 + SEGMENTS_IN_PROMPT)
        prompt = prompt_ids(
            self.segments, context, [self.endtext_id], max_length=self.ecg_config.max_length, answer_room=room
        )
        return [*prompt, *answer, self.segments.question, self.tag_ids[types[slot]], self.segments.answer]
