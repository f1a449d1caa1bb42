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

Writing costs under half what the templates cost with a generator of the defaults (``after-sentence``, trained
twice; a whole JNLPBA 186 run of 1,860 samples, bfloat16 on a 2-core CPU: 53 s against 112 s, 0.47; 62 s against
119 s, 0.52, the same day, when each try's row left the batch), against 0.91 with an ``in-sentence`` generator
trained twice (118 s against 130 s). What keeps it there is that little is encoded twice and no step waits: one
batch of rows, a row a template's current try, over the templates of several shards
(:func:`~hf_ecg.generate_dataset` gives up to 1,024; each template draws from its own random stream, so which
templates share a call changes none of its random numbers); a template's first prompt is encoded on top of the keys
and values the decoder kept of the sentence before its last block (``prefixes``: the whole of it with
``after-template``, up to the first slot with ``in-sentence``; with ``after-sentence`` the decoder keeps its whole
last row, block included). With ``after-sentence`` the row then stays in the batch to its template's last slot: each
later prompt is the previous prompt and the mention drawn for it, whose keys and values the row holds, then
``<|question|> tag <|answer|>``, so the row is fed those ids (and ``<ENDTEXT>``) one a step among the rows drawing;
a try drawn again masks its answer out and feeds the prompt's last id again
(:meth:`~hf_ecg.runtime.decoding_cache.RowBatch.go_on`). With the other layouts a row leaves the batch as its try
ends and the next prompt is encoded on top of the same template's previous one up to where the two differ
(``in-sentence``: the earlier slot's marker; ``after-template``: the end of the template), a try drawn again on top
of its own prompt; those tries and the new templates join the rows still writing. A try stops as soon as it holds
more words than any training mention of its type.
"""

from __future__ import annotations

import random
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import torch

from .blocks import ENDTEXT, MENTION_TOKEN, SEGMENT_TOKENS, Template, mention_context, tag_label, tag_token
from .decoding_cache import KeptStates, RowBatch, encode_after_prefixes, length_groups, live_columns, new_cache
from .ecg_config import ECGConfig
from .layout import SEGMENTS_IN_PROMPT, SegmentIds, continued_answer, prompt_ids
from .mentions import MentionBank, mention_problem
from .sampler import Sampler, SamplingParams
from .vocabulary import VocabularyTables, word_start_tokens
from .words import WordSplitter

__all__ = ["MentionWriter", "WrittenMentions", "template_seeds"]

#: Prefill passes per draw at most: the rests to encode range from one id (a try drawn again) to a whole
#: sentence; with 4 passes a JNLPBA generator's padding fell from 84% to 27% of the real positions (2: 84%).
PREFILL_PASSES = 4
#: Share of the batch free before the tries waiting to be encoded join the rows still writing: fewer, larger
#: prefills (a JNLPBA generator's 256 templates: 135-186 forwards at three quarters, 176-278 at half, same time).
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
        batch_size: rows (tries) written together at most (on a 2-core CPU, a JNLPBA generator's 256 templates
            took 8% more time at 256).
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
        self.sampler = Sampler(sampling or SamplingParams())
        # without sampling a try repeats the last one: one is enough
        self.max_attempts = max_attempts if self.sampler.params.do_sample else 1
        self.batch_size = batch_size
        self.group_by_length = group_by_length
        self.segments = SegmentIds.of(tokenizer)
        self.endtext_id = vocab[ENDTEXT]
        self.tag_ids = {label: vocab[token] for label, token in ecg_config.tag_tokens.items()}
        structural = {*self.tag_ids.values(), vocab[MENTION_TOKEN], *tokenizer.convert_tokens_to_ids(SEGMENT_TOKENS)}
        self.banned = sorted((structural | set(tokenizer.all_special_ids)) - {self.endtext_id})
        # an answer holds the mention's ids (the longest training mention's: mention_max_tokens), then whatever text
        # tokenization puts before <ENDTEXT> (a space token with a byte-level BPE): without room for it the longest
        # training mentions could never end
        before_end = len(tokenizer(f" {ENDTEXT}", add_special_tokens=False)["input_ids"]) - 1
        self.max_tokens = (ecg_config.mention_max_tokens or 16) + before_end
        self.max_words = ecg_config.mention_max_words or {}
        self.split_words = WordSplitter(ecg_config.word_exceptions)
        # a try is stopped as soon as it is longer than its type's longest training mention (_words_at_least)
        tables = vocabulary.word_starts if vocabulary is not None else word_start_tokens(tokenizer)
        self._word_starts, self._blank = tables
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
        """The prompt of slot ``slot``: :func:`~hf_ecg.runtime.blocks.mention_context` in the model's mention layout
        (the slots before it filled by ``written``, a ``None`` staying a tag), the slot's tag as the question; with
        ``after-sentence``, the template's last block row then a tag/mention pair per earlier slot
        (:func:`~hf_ecg.runtime.layout.continued_answer`), the slot's tag as the last question."""
        layout = self.ecg_config.mention_layout
        if layout == "after-sentence":
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
        continued = self.ecg_config.mention_layout == "after-sentence" and self._continue_in_batch
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
                new, states = self._begin(
                    prompts, [kept.get(i) for i in joining], joining, streams, keep_states=not continued
                )
                fed.update(zip(joining, prompts, strict=True))
                kept.update({i: (prompt, st) for i, prompt, st in zip(joining, prompts, states, strict=True) if st})
                batch = RowBatch.merged([batch, *new])
            staying = set(range(len(batch.keys)))
            for row in self._ended(batch, lambda i: templates[i].entity_types[todo[i][0]]):
                i, ids = batch.keys[row], batch.answers[row]
                slot = todo[i][0]
                mention, reason = self._mention(ids, templates[i].entity_types[slot])
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
                    reused = _reused_length(prompt, [*fed[i], *ids[:-1]])
                    batch.go_on(row, reused, prompt[reused:])
                    fed[i] = prompt
                else:
                    staying.discard(row)
                    ready.append(i)
            if len(staying) < len(batch.keys):
                batch.keep(sorted(staying))
            if batch.keys:
                self._step(batch, streams)
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
        parts, states = self._begin(prompts, kept, list(range(len(prompts))), streams)
        batch = RowBatch.merged(parts)
        answers: dict[int, list[int]] = {}
        while True:
            ended = set(self._ended(batch, None))
            answers.update((batch.keys[row], batch.answers[row]) for row in ended)
            batch.keep([row for row in range(len(batch.keys)) if row not in ended])
            if not batch.keys:
                return [answers[j] for j in range(len(prompts))], states
            self._step(batch, streams)

    def _begin(
        self,
        prompts: list[list[int]],
        kept: Sequence[tuple[list[int], KeptStates] | None],
        keys: list[int],
        streams: Sequence[random.Random],
        *,
        keep_states: bool = True,
    ) -> tuple[list[RowBatch], list[KeptStates]]:
        """Encode the prompts (``keys[j]`` names prompt ``j``'s row) and draw each answer's first token: the rows,
        one batch per prefill pass, to merge (:meth:`RowBatch.merged`) for :meth:`_step`, and each prompt's
        keys/values (empty lists unless ``keep_states``: an ``after-sentence`` row goes on in the batch)."""
        pasts = [0 if k is None else _reused_length(prompt, k[0]) for prompt, k in zip(prompts, kept, strict=True)]
        device = self.model.device
        states: list[KeptStates] = [[] for _ in prompts]
        parts, logits = [], []
        # What is left to encode varies far more than the prompts' lengths: rows of similar rests share a pass.
        rests = [len(prompt) - past for prompt, past in zip(prompts, pasts, strict=True)]
        groups = length_groups(rests, max_groups=PREFILL_PASSES)
        for group in groups:
            cache = new_cache(self.model)
            past_states = [kept[j][1] if pasts[j] else None for j in group]  # type: ignore[index]
            out, mask = encode_after_prefixes(
                self.model, cache, [prompts[j] for j in group], [pasts[j] for j in group], past_states, self.pad_id
            )
            for row, j in enumerate(group):
                if not keep_states:
                    continue
                states[j] = _row_states(cache, row, mask[row].to(device))
            positions = torch.tensor([len(prompts[j]) for j in group], device=device)
            parts.append(RowBatch([keys[j] for j in group], cache, mask.to(device), positions, [[] for _ in group]))
            logits.append(out.logits[:, -1, :])
        rows = [keys[j] for group in groups for j in group]
        answers = [answer for part in parts for answer in part.answers]
        firsts = self._sample(torch.cat(logits), rows, streams, [False] * len(rows))
        for answer, token in zip(answers, firsts, strict=True):
            answer.append(token)
        return parts, states

    def _step(self, batch: RowBatch, streams: Sequence[random.Random]) -> None:
        """Feed each row its next id (the next of its ``forced`` ids, else the last it drew) and draw its next
        (none while it has forced ids left; its answer's first once it has none)."""
        batch.mask = torch.cat([batch.mask, batch.mask.new_ones((len(batch.keys), 1))], 1)
        tokens = [ids.pop(0) if ids else answer[-1] for ids, answer in zip(batch.forced, batch.answers, strict=True)]
        out = self.model(
            input_ids=torch.tensor(tokens, device=batch.mask.device)[:, None],
            attention_mask=batch.mask,
            position_ids=batch.positions[:, None],
            cache=batch.cache,
            use_cache=True,
        )
        batch.positions = batch.positions + 1
        drawing = [row for row, ids in enumerate(batch.forced) if not ids]
        logits = out.logits[:, -1, :]
        if len(drawing) < len(batch.keys):
            logits = logits[drawing]
        may_end = [bool(batch.answers[row]) for row in drawing]
        tokens = self._sample(logits, [batch.keys[row] for row in drawing], streams, may_end)
        for row, token in zip(drawing, tokens, strict=True):
            batch.answers[row].append(token)

    def _ended(self, batch: RowBatch, label_of: Callable[[int], str] | None) -> list[int]:
        """The rows whose answer ended: ``<ENDTEXT>``, the token limit, or more words than the longest training
        mention of the row's type (``label_of(key)``)."""
        return [
            row
            for row, answer in enumerate(batch.answers)
            if answer
            and (
                answer[-1] == self.endtext_id
                or len(answer) > self.max_tokens
                or (label_of is not None and self._too_long(answer, label_of(batch.keys[row])))
            )
        ]

    def _sample(
        self, logits: torch.Tensor, keys: Sequence[int], streams: Sequence[random.Random], may_end: Sequence[bool]
    ) -> list[int]:
        """A token per row (row ``r`` drawing from ``streams[keys[r]]``): never a structural one, nor
        ``<ENDTEXT>`` where ``may_end[r]`` is false (the mention's first token)."""
        scores = logits.to(torch.float32, copy=True)
        scores[:, self.banned] = -float("inf")
        if not all(may_end):
            scores[torch.tensor([not end for end in may_end], device=scores.device), self.endtext_id] = -float("inf")
        return self.sampler.draw_at(scores, [streams[key].random() for key in keys])

    def _words_at_least(self, ids: Sequence[int]) -> int:
        """How many words the answer ``ids`` holds at least (:meth:`_mention` splits the text on spaces first):
        its word starts, and one for text before the first of them."""
        starts = sum(i in self._word_starts for i in ids)
        first = next((i for i in ids if i not in self._blank), None)
        return starts + (first is not None and first not in self._word_starts)

    def _too_long(self, ids: Sequence[int], label: str) -> bool:
        """Whether an answer already holds more words than the longest training mention of ``label``."""
        limit = self.max_words.get(label)
        return limit is not None and len(ids) > limit and self._words_at_least(ids) > limit

    def _mention(self, ids: list[int], label: str) -> tuple[tuple[str, ...] | None, str]:
        """The mention's words, or ``None`` and why the try is rejected."""
        if self.endtext_id not in ids:
            return None, "too long" if self._too_long(ids, label) else "unended"
        text = self.tokenizer.decode(
            ids[: ids.index(self.endtext_id)], skip_special_tokens=True, clean_up_tokenization_spaces=False
        )
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


def template_seeds(seed: int, count: int) -> list[int]:
    """The seeds of the random streams the templates of a :meth:`MentionWriter.write` call seeded ``seed`` draw
    their mentions' tokens from (one uniform number a token), template by template."""
    return [random.Random(f"written mention:{seed}:{i}").getrandbits(63) for i in range(count)]


def _row_states(cache: Any, row: int, mask: torch.Tensor) -> KeptStates:
    """Row ``row``'s keys and values in ``cache``, per layer, at the columns its attention ``mask`` marks live."""
    columns = mask.nonzero().squeeze(1)
    return [
        (live_columns(layer.keys, row, 0, columns), live_columns(layer.values, row, 0, columns))
        for layer in cache.layers
    ]


def _reused_length(prompt: Sequence[int], earlier: Sequence[int]) -> int:
    """How many of ``prompt``'s first ids need not be encoded again after ``earlier`` ids (their keys and values are
    kept): those the two share, but never the last, whose scores draw the answer's first token."""
    return min(_shared_length(prompt, earlier), len(prompt) - 1)


def _shared_length(a: Sequence[int], b: Sequence[int]) -> int:
    """How many ids ``a`` and ``b`` share from their start."""
    n = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        n += 1
    return n


_CLOSING = {")": "(", "]": "["}


def _loose_edge(words: tuple[str, ...]) -> bool:
    """Whether a mention begins or ends on a word with no letter or digit (``pain -``, ``L - dopa ,``): the
    writer ran past the name. A closing bracket whose opening one is in the mention (``IL-2 receptor ( IL-2R )``)
    is part of it."""
    first, last = words[0], words[-1]
    if not any(ch.isalnum() for ch in first):
        return True
    return not any(ch.isalnum() for ch in last) and _CLOSING.get(last) not in words[:-1]
