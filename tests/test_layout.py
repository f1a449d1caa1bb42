"""The prompt layout: a decoding prompt is, token for token, the prompt of the training row it answers."""

from __future__ import annotations

from dataclasses import replace

from hypothesis import example, given, settings
from hypothesis import strategies as st

from hf_ecg.runtime.blocks import ENDTEXT, decompose, lm_sample, qa_samples
from hf_ecg.runtime.decoding import ChainedDecoder, DecodingConfig, TemplateLMDecoder
from hf_ecg.runtime.layout import SegmentIds, context_prefix, prompt_ids, training_sample
from hf_ecg.runtime.tags import Span
from hf_ecg.training.trainer import encode_blocks
from tiny import tiny_ecg_model

TYPES = ("Chemical", "Disease")
MODEL, TOKENIZER, CONFIG = tiny_ecg_model(TYPES)
WORDS = st.sampled_from(["aspirin", "causes", "fever", "in", "the", "rats", ".", ",", "(", ")", "5-HT", "ß"])


@st.composite
def sentences(draw):
    """Tokens with non-overlapping spans of the two types."""
    tokens = draw(st.lists(WORDS, min_size=1, max_size=30))
    spans, start = [], 0
    while start < len(tokens):
        if draw(st.booleans()):
            end = min(len(tokens), start + draw(st.integers(1, 3)))
            spans.append(Span(start, end, draw(st.sampled_from(TYPES))))
            start = end + draw(st.integers(0, 3))
        else:
            start += draw(st.integers(1, 4))
    return tokens, spans


def _rows(samples) -> dict[str, list[str]]:
    return {
        "context": [s.context for s in samples],
        "question": [s.question for s in samples],
        "answer": [s.answer for s in samples],
    }


@settings(max_examples=60, deadline=None)
@given(sentences(), st.integers(8, 96), st.sampled_from(["qa", "qa-plan"]))
# a qa-plan question of three tags and <ENDTEXT> leaves no room for an answer in 8 tokens unless it is cut
@example((["aspirin"] * 3, [Span(i, i + 1, "Chemical") for i in range(3)]), 8, "qa-plan")
@example((["aspirin"] * 2, [Span(i, i + 1, "Chemical") for i in range(2)]), 8, "qa-plan")
def test_every_decoding_prompt_is_its_training_rows_prompt(sentence, max_length, layout):
    tokens, spans = sentence
    template, _ = decompose(tokens, spans)
    samples = qa_samples(template, plan=layout == "qa-plan")
    encoded = encode_blocks(_rows(samples), TOKENIZER, max_length)
    config = replace(CONFIG, max_length=max_length, layout=layout)
    decoder = ChainedDecoder(MODEL, TOKENIZER, config, DecodingConfig())
    ends = TOKENIZER.convert_tokens_to_ids([sample.answer.split()[-1] for sample in samples])
    words: list[str] = []
    for index, (sample, ids, labels) in enumerate(zip(samples, encoded["input_ids"], encoded["labels"], strict=True)):
        prompt_length = labels.index(next(label for label in labels if label != -100))
        answer_length = len(ids) - prompt_length
        # the decoder keeps room for its longest block; the training row for its own answer
        decoder.config = DecodingConfig(max_block_tokens=answer_length)
        assert decoder._prompt_ids(words, ends[index:]) == ids[:prompt_length]
        assert len(ids) <= max_length
        words.extend(sample.answer.split())
    assert words == [*template.tokens, ENDTEXT]  # the prompts walked the whole template


def test_a_plan_question_holds_the_tags_still_to_come():
    template, _ = decompose(["aspirin", "causes", "fever", "."], [Span(0, 1, "Chemical"), Span(2, 3, "Disease")])
    questions = [sample.question for sample in qa_samples(template, plan=True)]
    assert questions == [f"<Chemical> <Disease> {ENDTEXT}", f"<Disease> {ENDTEXT}", ENDTEXT]
    assert [sample.question for sample in qa_samples(template)] == ["<Chemical>", "<Disease>", ENDTEXT]
    decoder = ChainedDecoder(MODEL, TOKENIZER, replace(CONFIG, layout="qa-plan"), DecodingConfig())
    for target, later, text in [("Disease", [], f"<Disease> {ENDTEXT}"), ("Chemical", ["Disease"], questions[0])]:
        question = TOKENIZER(text, add_special_tokens=False)["input_ids"]
        prompt = decoder.block_prompt(["aspirin"], target, later)
        assert prompt[-len(question) - 2 :] == [decoder.question_id, *question, decoder.answer_id]


@settings(max_examples=30, deadline=None)
@given(sentences())
def test_the_ecg_lm_prompt_is_its_training_rows_prompt(sentence):
    tokens, spans = sentence
    template, _ = decompose(tokens, spans)
    sample = lm_sample(template)
    encoded = encode_blocks(_rows([sample]), TOKENIZER, 4096)
    (ids,), (labels,) = encoded["input_ids"], encoded["labels"]
    prompt_length = labels.index(next(label for label in labels if label != -100))
    decoder = TemplateLMDecoder(MODEL, TOKENIZER, replace(CONFIG, layout="lm"), DecodingConfig())
    assert decoder._lm_prompt_ids(tuple(template.entity_types)) == ids[:prompt_length]


def test_layout_cuts_the_context_from_the_left_and_keeps_an_answers_end():
    segments = SegmentIds(context=1, question=2, answer=3)
    assert prompt_ids(segments, [10, 11, 12, 13], [20], max_length=8, answer_room=2) == [1, 12, 13, 2, 20, 3]
    assert prompt_ids(segments, [10, 11], [20], max_length=4, answer_room=5) == [1, 2, 20, 3]
    assert context_prefix([1, 12, 13, 2, 20, 3], segments) == [1, 12, 13]
    assert context_prefix([1, 12, 2, 20, 21, 22, 3], segments) == [1, 12]  # a qa-plan question of three ids
    sample, prompt_length = training_sample(segments, [10, 11], [20], [30, 31, 32, 33, 34, 35], max_length=8)
    assert (sample, prompt_length) == ([1, 2, 20, 3, 32, 33, 34, 35], 4)  # no room is left for the context
