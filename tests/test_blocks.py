from __future__ import annotations

import pytest
from hypothesis import given

from conftest import labelled_sentences
from hf_ecg.runtime.blocks import (
    ENDTEXT,
    QASample,
    Template,
    decompose,
    qa_samples,
    recompose,
    tag_label,
    tag_token,
    template_from_qa,
    verify_roundtrip,
)
from hf_ecg.runtime.tags import Span, spans_to_tags, tags_to_spans

# The method's example sentence.
TOKENS = "Selegiline induced postural hypotension in Parkinson 's disease".split()
TAGS = ["B-Chemical", "O", "B-Disease", "I-Disease", "O", "B-Disease", "I-Disease", "I-Disease"]


def test_design_example():
    spans, _ = tags_to_spans(TAGS)
    template, mentions = decompose(TOKENS, spans)
    assert str(template) == "<Chemical> induced <Disease> in <Disease>"
    assert mentions == [("Selegiline",), ("postural", "hypotension"), ("Parkinson", "'s", "disease")]
    assert template.blocks() == [("<Chemical>",), ("induced", "<Disease>"), ("in", "<Disease>"), (ENDTEXT,)]
    assert qa_samples(template) == [
        QASample("", "<Chemical>", "<Chemical>", 0),
        QASample("<Chemical>", "<Disease>", "induced <Disease>", 1),
        QASample("<Chemical> induced <Disease>", "<Disease>", "in <Disease>", 2),
        QASample("<Chemical> induced <Disease> in <Disease>", ENDTEXT, ENDTEXT, 3),
    ]


def test_sentence_without_entities_is_one_endtext_block():
    template, mentions = decompose(["no", "entity", "here"], [])
    assert mentions == []
    assert template.blocks() == [("no", "entity", "here", ENDTEXT)]
    assert qa_samples(template) == [QASample("", ENDTEXT, f"no entity here {ENDTEXT}", 0)]


@given(labelled_sentences())
def test_recompose_inverts_decompose_exactly(sentence):
    tokens, spans = sentence
    template, mentions = decompose(tokens, spans)
    back_tokens, back_spans = recompose(template, mentions)
    assert back_tokens == tokens
    assert spans_to_tags(back_spans, len(back_tokens)) == spans_to_tags(spans, len(tokens))


@given(labelled_sentences())
def test_block_count_is_entities_plus_one_and_answers_end_with_their_question(sentence):
    tokens, spans = sentence
    template, _ = decompose(tokens, spans)
    blocks = template.blocks()
    assert len(blocks) == len(spans) + 1
    samples = qa_samples(template)
    assert [s.question for s in samples] == [tag_token(s.label) for s in spans] + [ENDTEXT]
    for sample in samples:
        assert sample.answer.split(" ")[-1] == sample.question
    assert Template.from_blocks(blocks) == template
    assert template_from_qa(samples[-1]) == template
    assert template.entity_types == tuple(s.label for s in spans)


@given(labelled_sentences())
def test_verify_roundtrip_accepts_every_valid_sentence(sentence):
    verify_roundtrip(*sentence)


def test_reserved_words_are_refused():
    with pytest.raises(ValueError, match="'<ENDTEXT>' is reserved"):
        decompose(["a", ENDTEXT], [])
    with pytest.raises(ValueError, match="'<Disease>' is reserved"):
        decompose(["<Disease>", "x"], [Span(1, 2, "Chemical")], reserved_types=["Disease"])
    # A word that merely looks like a tag, of a type the corpus does not have, is plain text.
    template, _ = decompose(["<URL>", "x"], [Span(1, 2, "Chemical")])
    assert template.tokens == ("<URL>", "<Chemical>")


@pytest.mark.parametrize("label", ["", "two words", "a<b", "ENDTEXT", "x|y"])
def test_labels_that_cannot_be_tag_tokens(label):
    with pytest.raises(ValueError, match="cannot be a tag token"):
        tag_token(label)


def test_tag_label():
    assert tag_label("<Chemical>") == "Chemical"
    assert tag_label(ENDTEXT) is None
    assert tag_label("word") is None


def test_from_blocks_checks_block_ends():
    with pytest.raises(ValueError, match="does not end with a tag"):
        Template.from_blocks([("a",), (ENDTEXT,)])
    with pytest.raises(ValueError, match="final block"):
        Template.from_blocks([("a", "<X>"), ("b",)])


def test_recompose_needs_one_mention_per_tag():
    template = Template(("<X>", "and", "<Y>"))
    with pytest.raises(ValueError, match="2 tags but 1 mentions"):
        recompose(template, [("a",)])
