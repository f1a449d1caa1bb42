"""Mentions written in context: a generator trained with mention samples
(:func:`~hf_ecg.runtime.blocks.mention_samples`) writes, for each slot of a written template, a mention of the
slot's type given the sentence around it (masked-entity imputation, as MELM and the Fair Data Generation seed
do), so that generated data carries mentions the training corpus never had.

Slots are written left to right: a slot's context holds the mentions written for the slots before it and the
tags of those after it, as in training. A mention is drawn again (up to ``max_attempts`` times) when the model
does not end it within the longest training mention's tokens, when it comes out empty, longer in words than the
longest training mention of its type, holds a word that reads as structure, begins or ends on punctuation (it
ran past the name), or is a training mention of another type only (the model ignored the slot's tag); a slot
that fails every try is left to the mention bank (:class:`WrittenMentions` counts both).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import torch

from .blocks import ENDTEXT, MENTION_TOKEN, SEGMENT_TOKENS, Template, mention_context, tag_label
from .ecg_config import ECGConfig
from .layout import SegmentIds, prompt_ids
from .mentions import MentionBank, mention_problem
from .words import WordSplitter

__all__ = ["MentionWriter", "WrittenMentions", "writing_line"]


@dataclass
class WrittenMentions:
    """The mentions written for a batch of templates, and what writing them cost.

    ``mentions[i][k]`` is slot ``k`` of template ``i``: its words, or ``None`` when every try was rejected
    (the filler then draws it from the bank)."""

    mentions: list[list[tuple[str, ...] | None]] = field(default_factory=list)
    slots: int = 0
    written: int = 0
    redrawn: int = 0  # tries rejected and drawn again
    rejected: dict[str, int] = field(default_factory=dict)  # per reason, every rejected try

    def reject(self, reason: str) -> None:
        self.rejected[reason] = self.rejected.get(reason, 0) + 1

    def add(self, other: WrittenMentions) -> None:
        """Count ``other``'s slots, tries and rejections in these totals (its mentions are not kept)."""
        self.slots, self.written, self.redrawn = (
            self.slots + other.slots, self.written + other.written, self.redrawn + other.redrawn,
        )  # fmt: skip
        for reason, n in other.rejected.items():
            self.rejected[reason] = self.rejected.get(reason, 0) + n

    def to_dict(self, *, resumed: bool = False) -> dict[str, Any]:
        """The manifest's ``mention_writing`` record; ``resumed``: the counts cover only the shards this run wrote."""
        tries = self.slots + self.redrawn
        record = {
            "slots": self.slots, "written": self.written, "written_share": round(self.written / max(self.slots, 1), 4),
            "tries": tries, "rejected_share": round(sum(self.rejected.values()) / max(tries, 1), 4),
            "rejected": dict(sorted(self.rejected.items())),
        }  # fmt: skip
        return {**record, "resumed": True} if resumed else record


class MentionWriter:
    """Writes the mentions of templates' slots with a generator trained with mention samples.

    Args:
        model: the generator (a causal LM trained by hf_ecg with ``mention_samples=True``).
        tokenizer: its tokenizer.
        ecg_config: its :class:`~hf_ecg.ECGConfig` (``mention_token`` set).
        temperature, top_p: sampling of the mention tokens.
        max_attempts: tries per slot before it is left to the bank.
        batch_size: slots written per ``model.generate`` call.
        group_by_length: batch the prompts of similar length together (far less padding where sentence
            lengths vary; which prompts share a batch changes the sampled mentions, not their distribution).
        known: the training mention bank: a mention of it written for a slot of a type it never has there
            (``selegiline`` for a Disease) is drawn again.
    """

    def __init__(
        self,
        model: Any,
        tokenizer: Any,
        ecg_config: ECGConfig,
        *,
        temperature: float = 1.0,
        top_p: float = 1.0,
        max_attempts: int = 3,
        batch_size: int = 64,
        group_by_length: bool = True,
        known: MentionBank | None = None,
    ) -> None:
        vocab = tokenizer.get_vocab()
        if not ecg_config.mention_token or ecg_config.mention_token not in vocab:
            raise ValueError(
                "this model was not trained to write mentions: train it with mention_samples=True "
                "(the `hf-ecg train` default), or fill its tags from the bank or your mention lists"
            )
        if max_attempts < 1:
            raise ValueError(f"max_attempts must be >= 1, got {max_attempts}")
        self.model, self.tokenizer, self.ecg_config = model, tokenizer, ecg_config
        self.temperature, self.top_p, self.max_attempts, self.batch_size = temperature, top_p, max_attempts, batch_size
        self.group_by_length = group_by_length
        self.segments = SegmentIds.of(tokenizer)
        self.endtext_id = vocab[ENDTEXT]
        self.tag_ids = {label: vocab[token] for label, token in ecg_config.tag_tokens.items()}
        structural = {*self.tag_ids.values(), vocab[MENTION_TOKEN], *tokenizer.convert_tokens_to_ids(SEGMENT_TOKENS)}
        self.banned = sorted((structural | set(tokenizer.all_special_ids)) - {self.endtext_id})
        self.max_tokens = ecg_config.mention_max_tokens or 16
        self.max_words = ecg_config.mention_max_words or {}
        self.split_words = WordSplitter(ecg_config.word_exceptions)
        self.pad_id = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else self.endtext_id
        # The types each known mention has (case folded): a known mention written for a slot of another type
        # only (``selegiline`` for a Disease) is the model ignoring the question's tag.
        self.known_types: dict[str, set[str]] = {}
        for label in known.types if known is not None else ():
            for mention in known.counts(label):
                self.known_types.setdefault(" ".join(mention).casefold(), set()).add(label)

    def write(
        self,
        templates: Sequence[Template],
        seed: int,
        given: Sequence[Sequence[tuple[str, ...] | None]] | None = None,
    ) -> WrittenMentions:
        """A mention per slot of each template (``None`` where every try was rejected), drawn with ``seed``.

        ``given[i][k]``: a mention slot ``k`` of template ``i`` already has (from another source of a
        :class:`~hf_ecg.runtime.filling.MentionMixture`): it is kept, and the slots written after it read it
        in their context; only the ``None`` slots are written and counted."""
        if given is None:
            given = [[None] * len(t.entity_types) for t in templates]
        result = WrittenMentions(mentions=[list(row) for row in given])
        result.slots = sum(m is None for row in given for m in row)
        with torch.random.fork_rng(devices=[]), torch.inference_mode():
            torch.manual_seed(seed)
            for slot in range(max((len(t.entity_types) for t in templates), default=0)):
                todo = [i for i, t in enumerate(templates) if slot < len(t.entity_types) and given[i][slot] is None]
                for attempt in range(self.max_attempts):
                    if not todo:
                        break
                    result.redrawn += len(todo) if attempt else 0
                    todo = self._write_slot(templates, result, slot, todo)
        result.written = sum(m is not None and g is None for row, grow in zip(result.mentions, given, strict=True)
                             for m, g in zip(row, grow, strict=True))  # fmt: skip
        return result

    def prompt(self, template: Template, written: Sequence[tuple[str, ...] | None], slot: int) -> list[int]:
        """The prompt of slot ``slot``: the template with the slots before it filled by ``written`` (a ``None``
        stays a tag), the slot marked, the later slots as tags; the slot's tag as the question."""
        words: list[str] = []
        seen = 0
        for position, token in enumerate(template.tokens):
            if tag_label(token) is None:
                words.append(token)
                continue
            if seen == slot:
                context = mention_context(words, template.tokens[position + 1 :])
                context_ids = self.tokenizer(context, add_special_tokens=False)["input_ids"]
                return prompt_ids(self.segments, context_ids, [self.tag_ids[tag_label(token)]],
                                  max_length=self.ecg_config.max_length, answer_room=self.max_tokens + 1)  # fmt: skip
            words.extend(written[seen] or (token,))
            seen += 1
        raise IndexError(f"the template has {seen} slots, not {slot + 1}")

    def _write_slot(
        self, templates: Sequence[Template], result: WrittenMentions, slot: int, todo: list[int]
    ) -> list[int]:
        """One try at slot ``slot`` of the templates ``todo``; returns those whose try was rejected."""
        failed: list[int] = []
        prompts = {i: self.prompt(templates[i], result.mentions[i], slot) for i in todo}
        order = sorted(todo, key=lambda i: len(prompts[i])) if self.group_by_length else todo
        for start in range(0, len(order), self.batch_size):
            batch = order[start : start + self.batch_size]
            for i, ids in zip(batch, self._generate([prompts[i] for i in batch]), strict=True):
                label = templates[i].entity_types[slot]
                mention, reason = self._mention(ids, label)
                if mention is None:
                    result.reject(reason)
                    failed.append(i)
                else:
                    result.mentions[i][slot] = mention
        return sorted(failed)

    def _generate(self, prompts: list[list[int]]) -> list[list[int]]:
        width = max(map(len, prompts))
        device = self.model.device
        input_ids = torch.tensor([[self.pad_id] * (width - len(p)) + p for p in prompts], device=device)
        attention = torch.tensor([[0] * (width - len(p)) + [1] * len(p) for p in prompts], device=device)
        output = self.model.generate(
            input_ids=input_ids, attention_mask=attention, do_sample=True, temperature=self.temperature,
            top_p=self.top_p, top_k=0, max_new_tokens=self.max_tokens + 1, min_new_tokens=1,
            eos_token_id=self.endtext_id, pad_token_id=self.pad_id, suppress_tokens=self.banned,
        )  # fmt: skip
        return output[:, width:].tolist()

    def _mention(self, ids: list[int], label: str) -> tuple[tuple[str, ...] | None, str]:
        """The mention's words, or ``None`` and why the try is rejected."""
        if self.endtext_id not in ids:
            return None, "unended"
        text = self.tokenizer.decode(ids[: ids.index(self.endtext_id)], skip_special_tokens=True,
                                     clean_up_tokenization_spaces=False)  # fmt: skip
        words = tuple(self.split_words(text))
        if not words:
            return None, "empty"
        if any(tag_label(w) is not None or w == ENDTEXT or w in (*SEGMENT_TOKENS, MENTION_TOKEN) for w in words):
            return None, "structure"
        if len(words) > self.max_words.get(label, len(words)):
            return None, "too long"
        if _loose_edge(words):
            return None, "punctuation at an edge"
        if mention_problem(words):  # the check every mention source passes (a control character, ...)
            return None, "no mention"
        if label not in self.known_types.get(" ".join(words).casefold(), {label}):
            return None, "another type's mention"
        return words, ""


_CLOSING = {")": "(", "]": "["}


def _loose_edge(words: tuple[str, ...]) -> bool:
    """Whether a mention begins or ends on a word with no letter or digit (``pain -``, ``L - dopa ,``): the
    writer ran past the name. A closing bracket whose opening one is in the mention (``IL-2 receptor ( IL-2R )``)
    is part of it."""
    first, last = words[0], words[-1]
    if not any(ch.isalnum() for ch in first):
        return True
    return not any(ch.isalnum() for ch in last) and _CLOSING.get(last) not in words[:-1]


def writing_line(record: Mapping[str, Any]) -> str:
    """One line for the log of a manifest's ``mention_writing`` record: slots written, tries rejected and why,
    slots left to the bank."""
    reasons = ", ".join(f"{n} {reason}" for reason, n in record["rejected"].items()) or "none"
    return (
        f"the generator wrote {record['written']} of {record['slots']} mentions "
        f"({100 * record['written_share']:.0f}%); {100 * record['rejected_share']:.0f}% of {record['tries']} tries "
        f"rejected ({reasons}); {record['slots'] - record['written']} filled from the bank"
    )
