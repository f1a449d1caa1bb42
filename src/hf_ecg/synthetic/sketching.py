"""Sketches of labelled sentences (GENIUS's target-aware extraction): which words outside the mentions a sketch keeps.

Each candidate is a 1-3-gram of consecutive words outside the mentions holding at least one word that is neither a
function word nor a mark; it is scored by the cosine between its embedding and ``0.5 x sentence + 0.5 x entities``
(the sentence's text, and its mentions joined), both from the shipped MiniLM sentence encoder (mean-pooled, unit
length, as ``sentence-transformers`` pools it). The best-scoring candidates that do not overlap are kept, by token
index (:meth:`~hf_ecg.runtime.sketches.Sketch.of`), until they hold ``kept_share`` of the words outside the mentions.
Training redraws which ones are kept for each sketch of a sentence (:func:`kept_indices` with ``noise``: Gumbel noise
on the scores), so no sentence is tied to one sketch; generation keeps the best ones.
"""

from __future__ import annotations

import math
import random
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from ..data.corpus import Sentence
from ..labelling.function_words import FUNCTION_WORDS
from ..runtime.blocks import Template, decompose, tag_label, tag_token
from ..runtime.sketches import GAP_TOKEN, Sketch
from ..runtime.tags import Span

__all__ = [
    "PhraseScorer",
    "ScoredSentence",
    "SketchConfig",
    "SketchedSentence",
    "excluding",
    "kept_indices",
    "mixed_sketch",
    "template_positions",
]

#: A sketch, the mentions its tags stand for (in order) and the template of the sentence(s) it was made from.
SketchedSentence = tuple[Sketch, tuple[tuple[str, ...], ...], tuple[str, ...]]


@dataclass(frozen=True)
class SketchConfig:
    """How sketches are made.

    Args:
        kept_share: the share of a sentence's words outside its mentions that its key phrases keep, in (0, 1).
        max_ngram: the longest key phrase, in words.
        encoder: the sentence encoder that scores the candidates (the offline alias ``minilm-l6``, a folder or a Hub
            id of a BERT-like encoder).
        candidates_per_sketch: the sentences a generator writes for each sample's sketch, the best by
            :func:`~hf_ecg.synthetic.genius.candidate_score` kept (1: the one written).
        mixup_share: the share of samples whose sketch is mixed (:func:`mixed_sketch`): the start of its sentence's
            sketch, then the end of another's, in [0, 1].
    """

    kept_share: float = 0.2
    max_ngram: int = 3
    encoder: str = "minilm-l6"
    candidates_per_sketch: int = 1
    mixup_share: float = 0.0

    def __post_init__(self) -> None:
        if not (isinstance(self.kept_share, (int, float)) and math.isfinite(self.kept_share)) or not (
            0 < self.kept_share < 1
        ):
            raise ValueError(f"kept share must be a number in (0, 1), got {self.kept_share!r}")
        if self.max_ngram < 1:
            raise ValueError(f"max_ngram must be >= 1, got {self.max_ngram}")
        k = self.candidates_per_sketch
        if isinstance(k, bool) or not isinstance(k, int) or k < 1:
            raise ValueError(f"candidates per sketch must be a whole number >= 1, got {k!r}")
        share = self.mixup_share
        if not (isinstance(share, (int, float)) and math.isfinite(share)) or not 0 <= share <= 1:
            raise ValueError(f"mixup share must be a number in [0, 1], got {share!r}")


@dataclass(frozen=True)
class ScoredSentence:
    """A sentence's template and its candidate key phrases ``(start, end, score)`` over the template's indices."""

    template: Template
    mentions: tuple[tuple[str, ...], ...]
    candidates: tuple[tuple[int, int, float], ...]

    @property
    def words_outside(self) -> int:
        return sum(tag_label(token) is None for token in self.template.tokens)


def _is_content(word: str) -> bool:
    return any(c.isalnum() for c in word) and word.lower() not in FUNCTION_WORDS


def candidate_spans(template: Template, max_ngram: int) -> list[tuple[int, int]]:
    """The 1-``max_ngram``-grams of consecutive words outside the mentions that hold a content word, as
    ``(start, end)`` template indices."""
    tokens = template.tokens
    found = []
    for start in range(len(tokens)):
        for end in range(start + 1, min(start + max_ngram, len(tokens)) + 1):
            if tag_label(tokens[end - 1]) is not None:
                break
            if any(_is_content(word) for word in tokens[start:end]):
                found.append((start, end))
    return found


class PhraseScorer:
    """Scores the candidate key phrases of sentences with a sentence encoder (:class:`SketchConfig`), each distinct
    text embedded once."""

    def __init__(self, config: SketchConfig | None = None, *, batch_size: int = 256) -> None:
        from transformers import AutoModel, AutoTokenizer

        from ..modeling import model_load_error, resolve_model

        self.config = config or SketchConfig()
        self.batch_size = batch_size
        path = resolve_model(self.config.encoder)
        try:
            self.tokenizer = AutoTokenizer.from_pretrained(path)
            self.model = AutoModel.from_pretrained(path).eval()
        except (OSError, ValueError) as err:
            raise model_load_error(self.config.encoder, err, "sentence encoder") from None
        self._cache: dict[str, Any] = {}

    def embed(self, texts: Sequence[str]) -> Any:
        """Unit-length mean-pooled embeddings of ``texts`` (a tensor, one row a text)."""
        import torch

        todo = sorted({t for t in texts if t not in self._cache}, key=len)
        with torch.inference_mode():
            for i in range(0, len(todo), self.batch_size):
                batch = todo[i : i + self.batch_size]
                encoded = self.tokenizer(batch, padding=True, truncation=True, max_length=128, return_tensors="pt")
                hidden = self.model(**encoded).last_hidden_state
                mask = encoded["attention_mask"].unsqueeze(-1).to(hidden.dtype)
                pooled = torch.nn.functional.normalize((hidden * mask).sum(1) / mask.sum(1).clamp(min=1), dim=-1)
                self._cache.update(zip(batch, pooled, strict=True))
        return torch.stack([self._cache[t] for t in texts]) if texts else torch.empty(0)

    def score(self, sentences: Sequence[tuple[Sequence[str], Sequence[Span]]]) -> list[ScoredSentence]:
        """Each sentence (tokens, spans) as its template and its scored candidates."""
        import torch

        decomposed = [decompose(tokens, spans) for tokens, spans in sentences]
        spans = [candidate_spans(template, self.config.max_ngram) for template, _ in decomposed]
        texts = [" ".join(tokens) for tokens, _ in sentences]
        entity_texts = [" , ".join(" ".join(m) for m in mentions) for _, mentions in decomposed]
        grams = [" ".join(t.tokens[a:b]) for (t, _), found in zip(decomposed, spans, strict=True) for a, b in found]
        self.embed([*texts, *filter(None, entity_texts), *grams])
        scored = []
        for (template, mentions), text, entities, found in zip(decomposed, texts, entity_texts, spans, strict=True):
            target = self._cache[text] if not entities else 0.5 * self._cache[text] + 0.5 * self._cache[entities]
            target = torch.nn.functional.normalize(target, dim=0)
            values = (self.embed([" ".join(template.tokens[a:b]) for a, b in found]) @ target).tolist() if found else []
            candidates = tuple((a, b, round(s, 6)) for (a, b), s in zip(found, values, strict=True))
            scored.append(ScoredSentence(template, tuple(mentions), candidates))
        return scored


def template_positions(length: int, spans: Sequence[Span]) -> list[int | None]:
    """Each of a sentence's ``length`` tokens' index in its template (:func:`~hf_ecg.runtime.blocks.decompose`:
    each span one tag), ``None`` for a word inside a span."""
    positions: list[int | None] = []
    starts = {span.start: span for span in spans}
    index, token = 0, 0
    while token < length:
        span = starts.get(token)
        if span is None:
            positions.append(index)
            token += 1
        else:
            positions.extend([None] * (span.end - span.start))
            token = span.end
        index += 1
    return positions


def excluding(scored: ScoredSentence, sentence: Sentence) -> ScoredSentence:
    """``scored`` (``sentence``'s candidates) without the key phrases that hold one of ``sentence``'s
    :attr:`~hf_ecg.data.corpus.Sentence.unknown` words: words no sketch keeps (a name of a type the target does not
    mark, unknown rather than ``O``)."""
    if not sentence.unknown:
        return scored
    positions = template_positions(len(sentence.tokens), sentence.spans)
    banned = {positions[i] for i in sentence.unknown} - {None}
    kept = tuple(c for c in scored.candidates if banned.isdisjoint(range(c[0], c[1])))
    return replace(scored, candidates=kept)


def kept_indices(
    sentence: ScoredSentence, kept_share: float, *, rng: random.Random | None = None, noise: float = 0.1
) -> list[int]:
    """The template indices a sketch of ``sentence`` keeps: the best candidates that overlap none kept before, until
    they hold ``kept_share`` of its words outside the mentions (at least one word when it has a candidate). With
    ``rng``, each score gets ``noise`` x Gumbel noise first (a training sketch: another draw, other key phrases)."""
    budget = max(1, round(kept_share * sentence.words_outside)) if sentence.candidates else 0

    def key(candidate: tuple[int, int, float]) -> float:
        if rng is None:
            return candidate[2]
        return candidate[2] - noise * math.log(-math.log(rng.random() or 1e-12))

    kept: set[int] = set()
    for start, end, _ in sorted(sentence.candidates, key=key, reverse=True):
        if len(kept) >= budget:
            break
        span = set(range(start, end))
        if not span & kept and len(kept) + len(span) <= budget:
            kept |= span
    return sorted(kept)


def sketch_of(sentence: ScoredSentence, kept_share: float, **draw: Any) -> Sketch:
    """The sketch of ``sentence`` keeping :func:`kept_indices`."""
    return Sketch.of(sentence.template, kept_indices(sentence, kept_share, **draw))


def mixed_sketch(first: SketchedSentence, second: SketchedSentence, rng: random.Random) -> SketchedSentence:
    """GENIUS's sketch mixup: ``first``'s sketch up to one of its gaps, one gap, then ``second``'s after one of its
    gaps (each gap drawn by ``rng`` among those that leave the mix a tag), with the mentions of the tags kept and
    both source templates (a tag between them, so no shared run spans the two)."""
    (a, a_mentions, a_source), (b, b_mentions, b_source) = first, second
    a_cuts = [i for i, piece in enumerate(a.pieces) if piece == GAP_TOKEN]
    b_cuts = [i for i, piece in enumerate(b.pieces) if piece == GAP_TOKEN]

    def tags(pieces: Sequence[str]) -> int:
        return sum(tag_label(piece) is not None for piece in pieces)

    pairs = [(i, j) for i in a_cuts for j in b_cuts if tags(a.pieces[:i]) + tags(b.pieces[j + 1 :])]
    if not pairs:  # a sketch without a gap: nothing to cut
        return first
    i, j = rng.choice(pairs)
    head, tail = a.pieces[:i], b.pieces[j + 1 :]
    mentions = (*a_mentions[: tags(head)], *b_mentions[len(b_mentions) - tags(tail) :])
    source = (*a_source, tag_token(a.entity_types[0]) if a.entity_types else GAP_TOKEN, *b_source)
    return Sketch((*head, GAP_TOKEN, *tail)), mentions, source
