"""What the ECG-QALM and ECG-LM decoders share: the model's ECG tokens, the per-row constraint on the
next token, the block rules that draw a block again, prompts (:mod:`hf_ecg.runtime.layout`) and results."""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from typing import Any

import torch
from transformers import DynamicCache

from .blocks import (
    ANSWER_TOKEN,
    CONTEXT_TOKEN,
    ENDTEXT,
    MENTION_TOKEN,
    QUESTION_TOKEN,
    SEGMENT_TOKENS,
    Template,
    continues_block,
    tag_label,
)
from .char_boundaries import CharacterBoundaries
from .decoding_cache import new_cache
from .decoding_config import DecodedTemplate, DecodingConfig, Phrase, RedrawBudget, split_request
from .decoding_constraint import EntityConstraintLogitsProcessor
from .decoding_rules import BlockRules
from .decoding_sampler import RowSampler
from .ecg_config import ECGConfig
from .layout import SegmentIds, prompt_ids
from .sketches import Sketch
from .vocabulary import VocabularyTables
from .words import (
    WordSplitter,
)

__all__ = ["BlockDecoder"]


#: Templates a decode call keeps their last prompt's keys/values for at most (``keep_prefixes``): about 1 MB each
#: for SmolLM2-135M in bfloat16, so a call's 256-template shard holds a few hundred MB until its mentions are written.
MAX_KEPT_PREFIXES = 1024


class BlockDecoder:
    """What both decoders share: the ECG tokens of the model, the row sampler (:class:`RowSampler`: the per-row
    constraint on the next token, when a block is drawn again), prompts and results. A subclass writes the
    templates (:meth:`_decode`).

    Args:
        model: a causal LM trained by :class:`~hf_ecg.ECGTrainer` (eval mode is set here).
        tokenizer: its tokenizer (with the ECG tokens).
        ecg_config: the model's :class:`~hf_ecg.ECGConfig` (entity types, ``max_length``).
        config: sampling settings and limits.
        vocabulary: the tokenizer's tables, computed once per model (:class:`~.engine.SampleEngine`); computed here
            when not given.
    """

    def __init__(
        self,
        model: Any,
        tokenizer: Any,
        ecg_config: ECGConfig,
        config: DecodingConfig | None = None,
        vocabulary: VocabularyTables | None = None,
    ):
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
        self._questions: dict[tuple[int, ...], list[int]] = {}  # qa-plan: a question's ids, per blocks' ends
        self.context_id, self.question_id, self.answer_id = (
            self.segments.context,
            self.segments.question,
            self.segments.answer,
        )
        self.endtext_id = vocab[ENDTEXT]
        self.tag_ids = {label: vocab[token] for label, token in ecg_config.tag_tokens.items()}
        structural = {self.endtext_id, *self.tag_ids.values(), self.context_id, self.question_id, self.answer_id}
        self.rules = BlockRules(tokenizer, ecg_config, self.config, vocabulary.words if vocabulary else None)
        self.row_sampler = RowSampler(
            tokenizer,
            self.config,
            self.rules,
            tag_ids=self.tag_ids,
            endtext_id=self.endtext_id,
            banned=sorted(structural | set(tokenizer.all_special_ids)),
            characters=vocabulary.characters if vocabulary is not None else CharacterBoundaries(tokenizer),
            split_words=WordSplitter(ecg_config.word_exceptions),
        )
        self.stop_ids = self.row_sampler.stop_ids
        self.constraint = self.row_sampler.constraint
        self.pad_id = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else self.endtext_id
        # a first block's prompt (empty context), per the ids its question is made of: its cache, row and logits
        self._first_prompts: dict[tuple[int, ...], tuple[DynamicCache, int, torch.Tensor]] = {}
        self._reused_prompt_tokens = 0  # prompt positions not re-encoded thanks to a kept prefix
        self._prefixes_left = 0  # templates of this decode call that may still keep their prompt prefix
        self._phrases: list[dict[int, tuple[str, ...]]] = []  # per request of this call, its phrases by block
        self._sketch_questions: list[list[list[int]]] | None = None  # a sketch layout: per request, per block
        self._whole_rows = False  # keep a template's whole last row (prompt and block), not its context only

    @property
    def device(self) -> torch.device:
        return self.model.device

    @property
    def budget(self) -> RedrawBudget:
        """What the current (or last) decode call kept and threw away; progress bars read it."""
        return self.row_sampler.budget

    # ------------------------------------------------------------------ public

    def decode(
        self,
        sequences: Sequence[Sequence[str | Phrase]],
        *,
        progress: Callable[[int], None] | None = None,
        keep_prefixes: bool = False,
    ) -> list[DecodedTemplate]:
        """A template per entity sequence, in input order. ``progress(n)`` is called as ``n`` samples finish.

        ``keep_prefixes``: each template keeps its last prompt's context (with mention layout ``after-sentence``,
        its whole last row) and its keys/values (:attr:`DecodedTemplate.prompt_prefix`, batched mode, at most
        :data:`MAX_KEPT_PREFIXES` templates a call), for the mention writer to start from.

        A request may hold :class:`~hf_ecg.runtime.decoding_config.Phrase` pieces among its entity types: each is
        written exactly as given where it stands, the model's own words around it (batched and sequential modes of a
        Q&A layout). Unknown entity types raise ``ValueError`` naming the known ones; an empty sequence gives an
        entity-free sentence.
        """
        self._prefixes_left = MAX_KEPT_PREFIXES if keep_prefixes else 0
        self._whole_rows = keep_prefixes and continues_block(self.ecg_config.mention_layout)
        if any(isinstance(sequence, str) for sequence in sequences):
            raise TypeError("each entity sequence is a list of types, not a string")
        self._sketch_questions = sketch_questions(self.tokenizer, self.ecg_config, sequences)
        requests = [split_request(sequence) for sequence in sequences]
        sequences = [labels for labels, _ in requests]
        self._phrases = [phrases for _, phrases in requests]
        if any(self._phrases) and not self.ecg_config.prompt_layout.per_block:
            raise ValueError(f"phrase pieces open blocks: a model of layout {self.ecg_config.layout!r} has none")
        structure = {*self.ecg_config.tag_tokens.values(), ENDTEXT, MENTION_TOKEN, *SEGMENT_TOKENS}
        for phrases in self._phrases:
            taken = [word for words in phrases.values() for word in words if word in structure]
            if taken:
                raise ValueError(f"a phrase holds {taken[0]!r}, one of the model's structure tokens")
        for sequence in sequences:
            self.ecg_config.check_entity_types(sequence)
            if len(sequence) > self.config.max_entities:
                raise ValueError(
                    f"an entity sequence of {len(sequence)} entities exceeds max_entities={self.config.max_entities}"
                )
        if not sequences:
            return []
        # Before any block is kept, a quarter of the batch's first blocks may be drawn again at full length.
        rows = 1 if self.config.mode == "sequential" else min(self.config.batch_size, len(sequences))
        self.row_sampler.budget = RedrawBudget(self.config.redraw_budget, self.config.max_block_tokens * -(-rows // 4))
        rng = torch.Generator(device=self.device)
        rng.manual_seed(self.config.seed if self.config.seed is not None else random.SystemRandom().getrandbits(63))
        with torch.inference_mode():
            return self._decode(sequences, rng, progress)

    def _decode(
        self, sequences: list[tuple[str, ...]], rng: torch.Generator, progress: Callable[[int], None] | None
    ) -> list[DecodedTemplate]:
        raise NotImplementedError

    def logits_processor(
        self, targets: Sequence[str | None], *, max_block_tokens: int | None = None
    ) -> EntityConstraintLogitsProcessor:
        """This decoder's constraint for one ``model.generate()`` call over one block per row: ``targets[i]``
        the entity type that row's block must end on (``None``: ``<ENDTEXT>``, the sentence's last block).
        Pass the decoder's stops as ``eos_token_id`` so that a row stops at its tag::

            processor = decoder.logits_processor(["Chemical", None], max_block_tokens=32)
            model.generate(prompts, logits_processor=LogitsProcessorList([processor]),
                           eos_token_id=decoder.stop_ids, max_new_tokens=32, do_sample=True)
        """
        unknown = sorted({t for t in targets if t is not None and t not in self.tag_ids})
        if unknown:
            raise ValueError(f"unknown entity types {unknown}; the model knows {', '.join(self.tag_ids)}")
        ids = [self.endtext_id if t is None else self.tag_ids[t] for t in targets]
        return EntityConstraintLogitsProcessor(
            self.stop_ids,
            self.constraint.banned.tolist(),
            targets=ids,
            max_block_tokens=max_block_tokens,
            block_end=self.config.block_end,
        )

    def block_prompt(self, words: Sequence[str], target: str | None, later: Sequence[str] = ()) -> list[int]:
        """The prompt ids of the block that follows the sentence so far (``words``, tags as ``<Type>``) and ends
        on ``target`` (an entity type; ``None``: ``<ENDTEXT>``), laid out as in training: what
        :meth:`logits_processor` and ``model.generate()`` continue. ``later``: the entity types requested after
        ``target`` (a ``qa-plan`` model reads them in its question)."""
        unknown = [label for label in (target, *later) if label is not None and label not in self.tag_ids]
        if unknown:
            raise ValueError(f"unknown entity type {unknown[0]!r}; the model knows {', '.join(self.tag_ids)}")
        targets = [] if target is None else [self.tag_ids[target], *(self.tag_ids[label] for label in later)]
        return self._prompt_ids(list(words), [*targets, self.endtext_id])

    # ------------------------------------------------------------------ prompts

    def _prompt_ids(
        self, words: list[str], targets: Sequence[int], index: int | None = None, block: int = 0
    ) -> list[int]:
        """``<|context|> ctx <|question|> question <|answer|>`` of the block ending on ``targets[0]`` (``targets``:
        the ids it and the blocks after it end on), the context cut from the left to leave room for a whole
        block inside ``ecg_config.max_length`` (as in training)."""
        context = self.tokenizer(" ".join(words), add_special_tokens=False)["input_ids"] if words else []
        return prompt_ids(
            self.segments,
            context,
            self._question(targets, index, block),
            max_length=self.ecg_config.max_length,
            answer_room=self.config.max_block_tokens,
        )

    def _question(self, targets: Sequence[int], index: int | None = None, block: int = 0) -> list[int]:
        """The question of the block ending on ``targets[0]``: that tag (``qa``); with layout ``qa-plan`` the tags of
        every block still to come, tokenized as training tokenizes its question text; with a sketch layout, request
        ``index``'s sketch from block ``block`` on."""
        if self._sketch_questions is not None and index is not None:
            return self._sketch_questions[index][block]
        if self.ecg_config.prompt_layout.sketch:  # a prompt outside a decode call: the sketch of its tags
            labels = [tag_label(token) for token in self.tokenizer.convert_ids_to_tokens(list(targets[:-1]))]
            question = Sketch.of_types(labels).questions()[0]
            return self.tokenizer(question, add_special_tokens=False)["input_ids"]
        if not self.ecg_config.prompt_layout.plan:
            return [targets[0]]
        key = tuple(targets)
        if key not in self._questions:
            text = " ".join(self.tokenizer.convert_ids_to_tokens(list(key)))
            self._questions[key] = self.tokenizer(text, add_special_tokens=False)["input_ids"]
        return self._questions[key]

    def _phrase(self, index: int, block: int) -> tuple[str, ...]:
        """The words of request ``index``'s phrase that open its block ``block`` (none: empty)."""
        return self._phrases[index].get(block, ()) if self._phrases else ()

    def _targets(self, sequence: tuple[str, ...]) -> list[int]:
        return [self.tag_ids[label] for label in sequence] + [self.endtext_id]

    def _result(
        self,
        entities: tuple[str, ...],
        words: list[str],
        *,
        forced: int,
        model_tokens: int,
        cut: int = 0,
        attempts: int = 0,
        redrawn_tokens: int = 0,
        refused: int = 0,
        prefix: tuple[list[int], Any] | None = None,
    ) -> DecodedTemplate:
        if prefix is not None:
            if self._prefixes_left > 0:
                self._prefixes_left -= 1
            else:
                prefix = None
        return DecodedTemplate(
            entities=entities,
            template=Template(tuple(words)),
            forced_tags=forced,
            model_tokens=model_tokens,
            redrawn_tokens=redrawn_tokens,
            refused_redraws=refused,
            attempts=attempts,
            cut_blocks=cut,
            complete=bool(words) and words[-1] in self.rules.endings,
            tag_pieces=len(
                self.rules.tag_pieces(
                    [w for w in words if tag_label(w) is None],
                    starts_sentence=bool(words) and tag_label(words[0]) is None,
                )
            ),
            prompt_prefix=prefix,
        )

    def _new_cache(self) -> DynamicCache:
        return new_cache(self.model)


def sketch_questions(tokenizer: Any, ecg_config: ECGConfig, requests: Sequence[Any]) -> list[list[list[int]]] | None:
    """Per request, the ids of its sketch's question of each block (a sketch layout: a request of types is the sketch
    of its tags, a gap around each); ``None`` for another layout, which refuses a sketch."""
    if not ecg_config.prompt_layout.sketch:
        if any(isinstance(r, Sketch) for r in requests):
            raise ValueError(f"a sketch request needs a sketch generator; this one has layout {ecg_config.layout!r}")
        return None
    found = []
    for request in requests:
        sketch = request if isinstance(request, Sketch) else Sketch.of_types(split_request(request)[0])
        found.append([tokenizer(q, add_special_tokens=False)["input_ids"] for q in sketch.questions()])
    return found
