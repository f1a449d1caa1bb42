"""Mentions written in context: a generator trained with mention samples
(:func:`~hf_ecg.runtime.blocks.mention_samples`) writes, for each slot of a written template, a mention of the
slot's type given the sentence around it (masked-entity imputation, as MELM and the Fair Data Generation seed
do), so that generated data carries mentions the training corpus never had.

Slots are written left to right: a slot's context holds the mentions written for the slots before it and the tags of
those after it, as in training, laid out as the model's mention samples were
(:data:`~hf_ecg.runtime.blocks.MENTION_LAYOUTS`: ``in-sentence``, the slot marked in the sentence;
``after-template``, the template then the earlier slots' tag/mention pairs, where a slot's prompt extends the one
before it; ``after-sentence``, the decoder's own last row, the sentence's last block sample, then the pairs, where a
slot's prompt is the previous slot's, the mention drawn there and three ids). A mention is drawn again (up to
``max_attempts`` times) when the model does not end it within the longest training mention's tokens, when it comes
out empty, longer in words than the longest training mention of its type, holds a word that reads as structure,
begins or ends on punctuation (it ran past the name), or is a training mention of another type only (the model
ignored the slot's tag); a slot that fails every try is left to the mention bank (:class:`WrittenMentions` counts
both).

What keeps writing cheap (docs/performance.md) is that little is encoded twice and no step waits: one batch of
rows, a row a template's current try, over the templates of several shards (:func:`~hf_ecg.generate_dataset` gives
up to 1,024; each template draws from its own random stream, so which templates share a call changes none of its
random numbers); a template's first prompt is encoded on top of the keys and values the decoder kept of the sentence
before its last block (``prefixes``). With ``after-sentence`` the row then stays in the batch to its template's last
slot: each later prompt is the previous prompt and the mention drawn for it, then ``<|question|> tag <|answer|>``,
so the row is fed those ids one a step among the rows drawing (:meth:`~hf_ecg.runtime.decoding_cache.RowBatch.go_on`).
With the other layouts a row leaves the batch as its try ends and the next prompt is encoded on top of the same
template's previous one up to where the two differ. The parts: :class:`~hf_ecg.runtime.mention_prompts.MentionPrompts`
(the prompts), :class:`~hf_ecg.runtime.mention_runner.MentionRunner` (the model runs and draws),
:class:`~hf_ecg.runtime.mention_rules.MentionRules` (when a try ends, whether it is kept); this module schedules the
rows. A try stops as soon as it holds more words than any training mention of its type.
"""

from __future__ import annotations

import random
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import torch

from .blocks import ENDTEXT, MENTION_TOKEN, SEGMENT_TOKENS, Template, continues_block
from .decoding_cache import KeptStates, RowBatch
from .ecg_config import ECGConfig
from .mention_prompts import MentionPrompts
from .mention_rules import MentionRules
from .mention_runner import MentionRunner, reused_length, shared_length
from .mentions import MentionBank
from .sampler import Sampler, SamplingParams
from .vocabulary import VocabularyTables

__all__ = ["MentionWriter", "WrittenMentions", "shared_length", "template_seeds"]

#: Share of the batch free before the tries waiting to be encoded join the rows still writing: fewer, larger
#: prefills for the same time (docs/performance.md).
JOIN_WHEN_FREE = 0.75


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
        self.slots += other.slots
        self.written += other.written
        self.redrawn += other.redrawn
        for reason, n in other.rejected.items():
            self.rejected[reason] = self.rejected.get(reason, 0) + n

    def to_dict(self, *, resumed: bool = False) -> dict[str, Any]:
        """The manifest's ``mention_writing`` record; ``resumed``: the counts cover only the shards this run wrote."""
        tries = self.slots + self.redrawn
        record = {
            "slots": self.slots,
            "written": self.written,
            "written_share": round(self.written / max(self.slots, 1), 4),
            "tries": tries,
            "rejected_share": round(sum(self.rejected.values()) / max(tries, 1), 4),
            "rejected": dict(sorted(self.rejected.items())),
        }
        return {**record, "resumed": True} if resumed else record


class MentionWriter:
    """Writes the mentions of templates' slots with a generator trained with mention samples.

    Args:
        model: the generator (a causal LM trained by hf_ecg with ``mention_samples=True``).
        tokenizer: its tokenizer.
        ecg_config: its :class:`~hf_ecg.ECGConfig` (``mention_token`` set).
        sampling: how the mention tokens are drawn (default: sampled, temperature 1, top-k 50, no top-p); the
            templates' :attr:`~hf_ecg.runtime.decoding_config.DecodingConfig.sampling`.
        max_attempts: tries per slot before it is left to the bank (one without sampling).
        batch_size: rows (tries) written together at most.
        group_by_length: take the templates longest first (the templates in the batch at one time have similar
            lengths: far less padding where sentence lengths vary; those with the most slots, which set how long
            writing takes, start first). Each template draws from its own random stream, so the order changes
            no template's random numbers (in bfloat16 the batch a template is written in can still round its
            scores otherwise, and so change a draw).
        known: the training mention bank: a mention of it written for a slot of a type it never has there
            (``selegiline`` for a Disease) is drawn again.
        vocabulary: the tokenizer's tables, computed once per model (:class:`~.engine.SampleEngine`); computed here
            when not given.
    """

    #: With ``after-sentence``, a row goes on in the batch from one try to the next (:meth:`_write_all`); false:
    #: it leaves as each try ends and each next prompt is encoded afresh (the reference the tests compare with).
    _continue_in_batch = True

    def __init__(
        self,
        model: Any,
        tokenizer: Any,
        ecg_config: ECGConfig,
        *,
        sampling: SamplingParams | None = None,
        max_attempts: int = 3,
        batch_size: int = 128,
        group_by_length: bool = True,
        known: MentionBank | None = None,
        vocabulary: VocabularyTables | None = None,
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
        sampler = Sampler(sampling or SamplingParams())
        # without sampling a try repeats the last one: one is enough
        self.max_attempts = max_attempts if sampler.params.do_sample else 1
        self.batch_size = batch_size
        self.group_by_length = group_by_length
        self.endtext_id = vocab[ENDTEXT]
        self.rules = MentionRules(tokenizer, ecg_config, self.endtext_id, known=known, vocabulary=vocabulary)
        self.prompts = MentionPrompts(tokenizer, ecg_config, self.rules.max_tokens)
        self.segments = self.prompts.segments
        structural = {
            *self.prompts.tag_ids.values(),
            vocab[MENTION_TOKEN],
            *tokenizer.convert_tokens_to_ids(SEGMENT_TOKENS),
        }
        banned = sorted((structural | set(tokenizer.all_special_ids)) - {self.endtext_id})
        pad_id = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else self.endtext_id
        self.runner = MentionRunner(model, sampler, banned, self.endtext_id, pad_id)

    def write(
        self,
        templates: Sequence[Template],
        seed: int | Sequence[int],
        given: Sequence[Sequence[tuple[str, ...] | None]] | None = None,
        prefixes: Sequence[tuple[list[int], KeptStates] | None] | None = None,
    ) -> WrittenMentions:
        """A mention per slot of each template (``None`` where every try was rejected), drawn with ``seed``.

        Each template draws from its own random stream, seeded ``seed[i]`` (one seed per template) or, for an
        int ``seed``, ``template_seeds(seed, len(templates))[i]``: which templates are written together changes
        none of a template's random numbers, so the templates of several shards may be written in one call
        (fuller batches); a template gets the mentions it would get alone up to the batch's rounding (in bfloat16
        another batch can round its scores otherwise and change a draw).

        ``given[i][k]``: a mention slot ``k`` of template ``i`` already has (from another source of a
        :class:`~hf_ecg.runtime.mention_sources.MentionMixture`): it is kept, and the slots written after it read it
        in their context; only the ``None`` slots are written and counted.

        ``prefixes[i]``: prompt ids and their keys/values that template ``i``'s first prompt may start with (the
        decoder's :attr:`~hf_ecg.runtime.decoding_config.DecodedTemplate.prompt_prefix`, the sentence before its
        last block): only the ids after those the two share are encoded."""
        if given is None:
            given = [[None] * len(t.entity_types) for t in templates]
        result = WrittenMentions(mentions=[list(row) for row in given])
        result.slots = sum(m is None for row in given for m in row)
        seeds = template_seeds(seed, len(templates)) if isinstance(seed, int) else list(seed)
        if len(seeds) != len(templates):
            raise ValueError(f"one seed per template: got {len(seeds)} seeds for {len(templates)} templates")
        streams = [random.Random(s) for s in seeds]
        order = list(range(len(templates)))
        if self.group_by_length:
            order.sort(key=lambda i: -len(templates[i].tokens))
        kept = {i: prefix for i, prefix in enumerate(prefixes or ()) if prefix is not None}
        with torch.inference_mode():
            self._write_all(templates, order, given, result, streams, kept)
        result.written = sum(
            m is not None and g is None
            for row, grow in zip(result.mentions, given, strict=True)
            for m, g in zip(row, grow, strict=True)
        )
        return result

    def prompt(self, template: Template, written: Sequence[tuple[str, ...] | None], slot: int) -> list[int]:
        """The prompt of slot ``slot`` of ``template``, the slots before it filled by ``written``
        (:meth:`MentionPrompts.prompt`)."""
        return self.prompts.prompt(template, written, slot)

    def _write_all(
        self,
        templates: Sequence[Template],
        order: list[int],
        given: Sequence[Sequence[tuple[str, ...] | None]],
        result: WrittenMentions,
        streams: list[random.Random],
        kept: dict[int, tuple[list[int], KeptStates]],
    ) -> None:
        """Write the templates' slots (templates taken in ``order``) in one batch of at most ``batch_size`` rows,
        a row a template's current try. The templates with the most to write go first: they set how long the run
        takes. ``kept[i]``: keys/values template ``i``'s next prompt may start with (to begin with: a prefix from
        the decoder; with ``in-sentence`` and ``after-template``, the template's last prompt's), the prompt encoded
        after the ids the two share.

        With ``after-sentence`` a row stays in the batch from its template's first slot to its last: each next
        prompt (the next slot's, or the same one for another try) goes on from the ids the row was fed, so the row
        is fed only the ids after those the two share (``<ENDTEXT> <|question|> tag <|answer|>`` after a mention
        the tokenizer writes alike; the last prompt id again for another try), one a step, among the rows drawing
        (:meth:`RowBatch.go_on`): nothing is copied out of the batch nor encoded apart. With the other layouts a
        row that ends leaves the batch and its template's next try waits with the new templates. Those join the
        rows still writing once :data:`JOIN_WHEN_FREE` of the batch is free: no step waits for a few long answers
        while the rest of the batch is idle."""
        continued = continues_block(self.ecg_config.mention_layout) and self._continue_in_batch
        fed: dict[int, list[int]] = {}  # each template's current prompt
        todo = {i: [k for k, m in enumerate(given[i]) if m is None] for i in order}  # slots left, in order
        tries = dict.fromkeys(order, 0)  # of the template's current slot
        waiting = deque(i for i in order if todo[i])  # templates not begun
        ready: list[int] = []  # templates begun, whose next try is to be encoded
        batch = RowBatch.empty()
        while True:
            room = self.batch_size - len(batch.keys)
            if room >= max(1, round(JOIN_WHEN_FREE * self.batch_size)) and (ready or waiting):
                joining, ready = ready[:room], ready[room:]
                while len(joining) < room and waiting:
                    joining.append(waiting.popleft())
                prompts = [self.prompt(templates[i], result.mentions[i], todo[i][0]) for i in joining]
                new, states = self.runner.begin(
                    prompts, [kept.get(i) for i in joining], joining, streams, keep_states=not continued
                )
                fed.update(zip(joining, prompts, strict=True))
                kept.update({i: (prompt, st) for i, prompt, st in zip(joining, prompts, states, strict=True) if st})
                batch = RowBatch.merged([batch, *new])
            staying = set(range(len(batch.keys)))
            for row in self._ended(batch, lambda i: templates[i].entity_types[todo[i][0]]):
                i, ids = batch.keys[row], batch.answers[row]
                slot = todo[i][0]
                mention, reason = self.rules.judge(ids, templates[i].entity_types[slot])
                tries[i] += 1
                if mention is None:
                    result.reject(reason)
                if mention is None and tries[i] < self.max_attempts:
                    result.redrawn += 1  # the same slot again
                else:  # written, or left to the bank
                    result.mentions[i][slot] = mention
                    todo[i].pop(0)
                    tries[i] = 0
                if not todo[i]:
                    staying.discard(row)
                    kept.pop(i, None)
                elif continued:  # the row goes on from the ids it was fed: its prompt and this answer's
                    prompt = self.prompt(templates[i], result.mentions[i], todo[i][0])
                    reused = reused_length(prompt, [*fed[i], *ids[:-1]])
                    batch.go_on(row, reused, prompt[reused:])
                    fed[i] = prompt
                else:
                    staying.discard(row)
                    ready.append(i)
            if len(staying) < len(batch.keys):
                batch.keep(sorted(staying))
            if batch.keys:
                self.runner.step(batch, streams)
            elif not (ready or waiting):
                return

    def draw(
        self,
        prompts: list[list[int]],
        kept: Sequence[tuple[list[int], KeptStates] | None],
        seed: int,
    ) -> tuple[list[list[int]], list[KeptStates]]:
        """One answer per prompt (its ids, ``<ENDTEXT>`` last unless it ran to the limit) and the prompt's keys
        and values, the prompts written together, prompt ``j`` drawing as template ``j`` of :meth:`write` does.
        ``kept[j]``: an earlier prompt of the same row and its keys/values: only what follows the ids the two share
        is encoded (a try drawn again: all but the last id)."""
        streams = [random.Random(s) for s in template_seeds(seed, len(prompts))]
        parts, states = self.runner.begin(prompts, kept, list(range(len(prompts))), streams)
        batch = RowBatch.merged(parts)
        answers: dict[int, list[int]] = {}
        while True:
            ended = set(self._ended(batch, None))
            answers.update((batch.keys[row], batch.answers[row]) for row in ended)
            batch.keep([row for row in range(len(batch.keys)) if row not in ended])
            if not batch.keys:
                return [answers[j] for j in range(len(prompts))], states
            self.runner.step(batch, streams)

    def _ended(self, batch: RowBatch, label_of: Callable[[int], str] | None) -> list[int]:
        """The rows whose answer ended (:meth:`MentionRules.ended`; ``label_of(key)``: the row's type)."""
        return [
            row
            for row, answer in enumerate(batch.answers)
            if self.rules.ended(answer, None if label_of is None else label_of(batch.keys[row]))
        ]


def template_seeds(seed: int, count: int) -> list[int]:
    """The seeds of the random streams the templates of a :meth:`MentionWriter.write` call seeded ``seed`` draw
    their mentions' tokens from (one uniform number a token), template by template."""
    return [random.Random(f"written mention:{seed}:{i}").getrandbits(63) for i in range(count)]
