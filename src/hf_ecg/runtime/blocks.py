"""Entity templates, block decomposition and the contextual Q&A layout.

A sentence becomes a *template* by collapsing each entity span into one tag token
(``<Chemical>``). The template is cut after every tag into *blocks*; what follows the
last tag, plus ``<ENDTEXT>``, is the final block. Block ``k`` becomes one Q&A sample:
context = blocks ``1..k-1``, question = the tag block ``k`` ends with, answer = block ``k``.

Everything here has an exact inverse: :func:`recompose` gives back the tokens and spans
that :func:`decompose` took apart, and :func:`template_from_qa` gives back the template
from the Q&A samples of its last block.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from .tags import Span

__all__ = [
    "ANSWER_TOKEN",
    "CONTEXT_TOKEN",
    "ENDTEXT",
    "GAP_TOKEN",
    "MENTION_LAYOUTS",
    "MENTION_TOKEN",
    "QUESTION_TOKEN",
    "SEGMENT_TOKENS",
    "QASample",
    "RoundTripError",
    "Template",
    "continues_block",
    "decompose",
    "mention_context",
    "mention_samples",
    "qa_samples",
    "recompose",
    "tag_label",
    "tag_token",
    "template_from_qa",
    "token_description",
    "verify_roundtrip",
]

#: Ends the final block of every sentence; the question of the final Q&A sample.
ENDTEXT = "<ENDTEXT>"
#: Segment markers of the Q&A layout; special tokens, so no user text is confused with structure.
CONTEXT_TOKEN = "<|context|>"
QUESTION_TOKEN = "<|question|>"
ANSWER_TOKEN = "<|answer|>"
SEGMENT_TOKENS = (CONTEXT_TOKEN, QUESTION_TOKEN, ANSWER_TOKEN)
#: Marks, in a mention sample's context, the slot whose mention the answer writes (models trained with
#: mention samples only: :func:`mention_samples`).
MENTION_TOKEN = "<|mention|>"
#: One run of words a sketch leaves out (:mod:`hf_ecg.runtime.sketches`; models trained on sketches only).
GAP_TOKEN = "<|gap|>"
#: How a mention sample's context shows its slot. ``in-sentence``: the sentence up to the slot (earlier entities
#: as their mentions), :data:`MENTION_TOKEN`, the rest of the template (later entities as their tags).
#: ``after-template``: the whole template, then a question/answer pair per earlier slot (its tag, its mention and
#: ``<ENDTEXT>``): slot ``k``'s prompt is slot ``k - 1``'s plus that slot's pair, so a writer reads the sentence once
#: and only a few ids per later slot. ``after-sentence``: the sentence's last block sample as the decoder writes it
#: (context, ``<ENDTEXT>`` question, last block as the answer), then a question/answer pair per slot up to this one,
#: one training row a slot (:func:`mention_samples`): a writer continues the decoder's last row, encoding about four
#: ids a slot.
MENTION_LAYOUTS = ("in-sentence", "after-template", "after-sentence")


def continues_block(mention_layout: str) -> bool:
    """Whether a mention layout's rows continue the sentence's last block row (``after-sentence``): its prompts
    and the decoder's rows share their prefix."""
    return mention_layout == "after-sentence"


_LABEL_RE = re.compile(r"^[^\s<>|]+$")
_TAG_TOKEN_RE = re.compile(r"^<([^\s<>|]+)>$")


class RoundTripError(ValueError):
    """Decomposition followed by recomposition did not give back the input."""


def tag_token(label: str) -> str:
    """The tag token of an entity type: ``"Chemical"`` → ``"<Chemical>"``."""
    if not _LABEL_RE.match(label) or label == ENDTEXT[1:-1]:
        raise ValueError(
            f"entity type {label!r} cannot be a tag token: it must be non-empty, contain no "
            f"whitespace or '<', '>', '|', and not be {ENDTEXT[1:-1]!r}"
        )
    return f"<{label}>"


def token_description(token: str) -> str:
    """Words whose embedding a new ECG token starts from: ``<cell_type>`` → ``cell type``."""
    if token in (*SEGMENT_TOKENS, MENTION_TOKEN, GAP_TOKEN):
        return token.strip("<|>")  # context, question, answer, mention, gap
    if token == ENDTEXT:
        return "end"
    return token[1:-1].replace("_", " ").replace("-", " ")


def tag_label(token: str) -> str | None:
    """The entity type of a tag token (``"<Chemical>"`` → ``"Chemical"``); None for other tokens and ``<ENDTEXT>``."""
    if token == ENDTEXT:
        return None
    match = _TAG_TOKEN_RE.match(token)
    return match.group(1) if match else None


@dataclass(frozen=True)
class Template:
    """A sentence with each entity collapsed into its tag token (``<ENDTEXT>`` not included)."""

    tokens: tuple[str, ...]

    def __str__(self) -> str:
        return " ".join(self.tokens)

    @property
    def entity_types(self) -> tuple[str, ...]:
        """The entity sequence: types of the tags in order."""
        return tuple(label for label in map(tag_label, self.tokens) if label is not None)

    def blocks(self) -> list[tuple[str, ...]]:
        """Cut after every tag; the final block is what follows the last tag plus ``<ENDTEXT>``.

        There are always ``len(entity_types) + 1`` blocks.
        """
        blocks: list[tuple[str, ...]] = []
        current: list[str] = []
        for token in self.tokens:
            current.append(token)
            if tag_label(token) is not None:
                blocks.append(tuple(current))
                current = []
        blocks.append((*current, ENDTEXT))
        return blocks

    @classmethod
    def from_blocks(cls, blocks: Sequence[Sequence[str]]) -> Template:
        """Inverse of :meth:`blocks`: checks that every block but the last ends in a tag
        and the last in ``<ENDTEXT>``."""
        if not blocks:
            raise ValueError("a template has at least one block")
        for index, block in enumerate(blocks[:-1]):
            if not block or tag_label(block[-1]) is None:
                raise ValueError(f"block {index} does not end with a tag token: {list(block)}")
        if not blocks[-1] or blocks[-1][-1] != ENDTEXT:
            raise ValueError(f"the final block does not end with {ENDTEXT}: {list(blocks[-1])}")
        return cls(tuple(token for block in blocks for token in block)[:-1])


def decompose(
    tokens: Sequence[str], spans: Iterable[Span], *, reserved_types: Iterable[str] = ()
) -> tuple[Template, list[tuple[str, ...]]]:
    """Collapse each span into its tag token.

    Returns the template and the mentions (token tuples) in order. A word that would
    read as structure (``<ENDTEXT>``, a segment token, or the tag token of one of the
    sentence's types or of ``reserved_types``) raises ``ValueError``.
    """
    spans = sorted(spans)
    reserved = {
        ENDTEXT,
        *SEGMENT_TOKENS,
        MENTION_TOKEN,
        *(tag_token(label) for label in {*reserved_types, *(s.label for s in spans)}),
    }
    template: list[str] = []
    mentions: list[tuple[str, ...]] = []
    position = 0
    for span in spans:
        if span.start < position or span.end > len(tokens) or span.start >= span.end:
            raise ValueError(f"span {span} does not fit the sentence or overlaps another")
        template.extend(tokens[position : span.start])
        template.append(tag_token(span.label))
        mentions.append(tuple(tokens[span.start : span.end]))
        position = span.end
    template.extend(tokens[position:])
    clash = next((word for word in tokens if word in reserved), None)
    if clash is not None:
        raise ValueError(f"the word {clash!r} is reserved for the block format")
    return Template(tuple(template)), mentions


def recompose(template: Template, mentions: Sequence[Sequence[str]]) -> tuple[list[str], list[Span]]:
    """Fill the template's tags with ``mentions`` in order; inverse of :func:`decompose`.

    Returns the tokens and the spans (each of the type of the tag it replaced).
    """
    types = template.entity_types
    if len(mentions) != len(types):
        raise ValueError(f"template has {len(types)} tags but {len(mentions)} mentions were given")
    tokens: list[str] = []
    spans: list[Span] = []
    fill = iter(mentions)
    for token in template.tokens:
        label = tag_label(token)
        if label is None:
            tokens.append(token)
            continue
        mention = list(next(fill))
        if not mention:
            raise ValueError(f"empty mention for tag {token}")
        spans.append(Span(len(tokens), len(tokens) + len(mention), label))
        tokens.extend(mention)
    return tokens, spans


@dataclass(frozen=True)
class QASample:
    """One training sample: the answer (block ``block_index``) to the question (its final tag)
    given the context (the blocks before it). Segments are space-joined tokens."""

    context: str
    question: str
    answer: str
    block_index: int


def qa_samples(template: Template, *, plan: bool = False) -> list[QASample]:
    """The Q&A samples of a template, one per block: the question is the tag the block ends with (the paper's).

    ``plan`` (layout ``qa-plan``): the question is that tag followed by the tags of the blocks still to come and
    ``<ENDTEXT>``, so that a block is written knowing how many entities the sentence still holds."""
    samples = []
    context: list[str] = []
    blocks = template.blocks()
    ends = [block[-1] for block in blocks]
    for index, block in enumerate(blocks):
        question = " ".join(ends[index:]) if plan else block[-1]
        samples.append(QASample(" ".join(context), question, " ".join(block), index))
        context.extend(block)
    return samples


def mention_context(
    template: Template,
    mentions: Sequence[Sequence[str] | None],
    slot: int,
    *,
    layout: str = "in-sentence",
) -> str:
    """A mention sample's (and the writer's) context for slot ``slot`` of ``template``, the slots before it
    filled by ``mentions`` (a ``None`` stays its tag), laid out as ``layout`` (:data:`MENTION_LAYOUTS`)."""
    tags = [i for i, token in enumerate(template.tokens) if tag_label(token) is not None]
    if not 0 <= slot < len(tags):
        raise IndexError(f"the template has {len(tags)} slots, not {slot + 1}")
    filled = [tuple(mentions[k]) if mentions[k] is not None else (template.tokens[tags[k]],) for k in range(slot)]
    if layout == "after-template":
        pairs = [(QUESTION_TOKEN, template.tokens[tags[k]], ANSWER_TOKEN, *filled[k], ENDTEXT) for k in range(slot)]
        return " ".join((*template.tokens, *(token for pair in pairs for token in pair)))
    if layout != "in-sentence":
        raise ValueError(f"mention layout must be 'in-sentence' or 'after-template' here, got {layout!r}")
    words: list[str] = []
    start = 0
    for k in range(slot):
        words.extend(template.tokens[start : tags[k]])
        words.extend(filled[k])
        start = tags[k] + 1
    words.extend(template.tokens[start : tags[slot]])
    return " ".join((*words, MENTION_TOKEN, *template.tokens[tags[slot] + 1 :]))


def mention_samples(tokens: Sequence[str], spans: Iterable[Span], *, layout: str = "in-sentence") -> list[QASample]:
    """Samples that teach a generator to write the mention of a slot in its sentence (masked-entity imputation),
    ``block_index`` ``-1`` (not a block).

    ``in-sentence`` and ``after-template``: one sample per entity, context = :func:`mention_context` (the slots
    before it filled with their gold mentions), question = the slot's tag, answer = the mention's words and
    ``<ENDTEXT>``. ``after-sentence``: one sample per entity too, the sentence's last Q&A sample
    (:func:`qa_samples`) whose answer goes on with a pair per slot up to this one, ``<|question|> tag <|answer|>
    mention <ENDTEXT>`` (:func:`~hf_ecg.runtime.layout.continued_answer` lays it out at id level; only the last
    pair's mention carries loss, so every slot is a training row as with ``in-sentence``)."""
    spans = sorted(spans)
    template, mentions = decompose(tokens, spans)
    if layout == "after-sentence":
        if not spans:
            return []
        final = qa_samples(template)[-1]
        pairs = [
            f"{QUESTION_TOKEN} {tag_token(span.label)} {ANSWER_TOKEN} {' '.join((*mention, ENDTEXT))}"
            for span, mention in zip(spans, mentions, strict=True)
        ]
        return [
            QASample(final.context, final.question, " ".join((final.answer, *pairs[: k + 1])), -1)
            for k in range(len(pairs))
        ]
    if layout not in MENTION_LAYOUTS:
        raise ValueError(f"mention layout must be one of {MENTION_LAYOUTS}, got {layout!r}")
    return [
        QASample(
            mention_context(template, mentions, k, layout=layout),
            tag_token(span.label),
            " ".join((*mentions[k], ENDTEXT)),
            -1,
        )
        for k, span in enumerate(spans)
    ]


def lm_sample(template: Template) -> QASample:
    """The ECG-LM ablation's single sample: question = all the tags in order, answer = the whole
    template plus ``<ENDTEXT>``, no context."""
    tags = [token for token in template.tokens if tag_label(token) is not None]
    return QASample("", " ".join(tags), " ".join((*template.tokens, ENDTEXT)), 0)


def template_from_qa(final: QASample) -> Template:
    """Inverse of :func:`qa_samples`: the template from its final sample (context + answer)."""
    if final.question != ENDTEXT or not final.answer.endswith(ENDTEXT):
        raise ValueError(f"not a final block: question {final.question!r}, answer {final.answer!r}")
    tokens = (final.context.split(" ") if final.context else []) + final.answer.split(" ")
    return Template(tuple(tokens[:-1]))


def verify_roundtrip(tokens: Sequence[str], spans: Sequence[Span], *, reserved_types: Iterable[str] = ()) -> None:
    """Check every inverse on one sentence; raise :class:`RoundTripError` saying what differs.

    decompose → recompose gives back tokens and spans; blocks → template; Q&A → template;
    the block count is entities + 1; every answer ends with its question.
    """
    template, mentions = decompose(tokens, spans, reserved_types=reserved_types)
    back_tokens, back_spans = recompose(template, mentions)
    if back_tokens != list(tokens):
        raise RoundTripError(f"tokens differ after recompose: {back_tokens} != {list(tokens)}")
    if back_spans != sorted(spans):
        raise RoundTripError(f"spans differ after recompose: {back_spans} != {sorted(spans)}")
    blocks = template.blocks()
    if len(blocks) != len(spans) + 1:
        raise RoundTripError(f"{len(blocks)} blocks for {len(spans)} entities")
    if Template.from_blocks(blocks) != template:
        raise RoundTripError("blocks do not join back into the template")
    samples = qa_samples(template)
    for sample in samples:
        if sample.answer.split(" ")[-1] != sample.question:
            raise RoundTripError(f"answer {sample.answer!r} does not end with its question {sample.question!r}")
    if template_from_qa(samples[-1]) != template:
        raise RoundTripError("the final Q&A sample does not give back the template")
