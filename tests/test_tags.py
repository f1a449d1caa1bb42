from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from conftest import labelled_sentences
from hf_ecg.runtime.tags import (
    SCHEMES,
    Span,
    TagError,
    detect_scheme,
    parse_tag,
    spans_to_tags,
    tags_to_spans,
    text_spans,
)


@given(labelled_sentences(), st.sampled_from(SCHEMES))
def test_encode_then_decode_gives_back_the_spans(sentence, scheme):
    tokens, spans = sentence
    tags = spans_to_tags(spans, len(tokens), scheme)
    decoded, repairs = tags_to_spans(tags, scheme, strict=True)
    assert decoded == spans
    assert repairs == []


def test_iob1_uses_b_only_between_adjacent_spans_of_one_type():
    spans = [Span(0, 2, "X"), Span(2, 3, "X"), Span(3, 4, "Y"), Span(5, 6, "X")]
    assert spans_to_tags(spans, 6, "IOB1") == ["I-X", "I-X", "B-X", "I-Y", "O", "I-X"]
    assert spans_to_tags(spans, 6, "BIOES") == ["B-X", "E-X", "S-X", "S-Y", "O", "S-X"]


def test_stray_inside_tag_is_repaired_and_counted():
    spans, repairs = tags_to_spans(["O", "I-Disease", "I-Disease", "B-Chemical", "I-Disease"])
    assert spans == [Span(1, 3, "Disease"), Span(3, 4, "Chemical"), Span(4, 5, "Disease")]
    assert repairs == [1, 4]


def test_strict_rejects_a_stray_inside_tag_naming_its_position():
    with pytest.raises(TagError, match="token 2: 'I-Disease' does not continue a span") as info:
        tags_to_spans(["O", "I-Disease"], strict=True)
    assert info.value.position == 1


def test_bioes_unclosed_and_orphan_end_are_repaired():
    spans, repairs = tags_to_spans(["B-X", "O", "E-Y"], "BIOES")
    assert spans == [Span(0, 1, "X"), Span(2, 3, "Y")]
    assert len(repairs) == 2


def test_bioes_tag_in_iob2_sequence_is_an_error():
    with pytest.raises(TagError, match="BIOES tag in a IOB2 sequence"):
        tags_to_spans(["S-X"], "IOB2")


@pytest.mark.parametrize("bad", ["B-", "X-Disease", "b-Disease", "B Disease", "", "o"])
def test_malformed_tags_are_rejected(bad):
    with pytest.raises(TagError, match="malformed tag"):
        parse_tag(bad)


def test_bilou_prefixes_read_as_bioes():
    assert parse_tag("U-PER") == ("S", "PER")
    assert parse_tag("L-PER") == ("E", "PER")


def test_detect_scheme():
    assert detect_scheme([["B-X", "I-X", "O"], ["I-Y"]]) == "IOB2"
    assert detect_scheme([["I-X", "I-X", "O"], ["I-Y", "B-Y"]]) == "IOB1"
    assert detect_scheme([["B-X", "E-X"], ["O"]]) == "BIOES"


def test_spans_that_overlap_or_overflow_are_refused():
    with pytest.raises(ValueError, match="overlap"):
        spans_to_tags([Span(0, 2, "X"), Span(1, 3, "Y")], 4)
    with pytest.raises(ValueError, match="does not fit"):
        spans_to_tags([Span(2, 5, "X")], 4)


def test_unknown_scheme_names_the_known_ones():
    with pytest.raises(ValueError, match="IOB2, IOB1, BIOES"):
        spans_to_tags([], 1, "IOE2")


@given(st.lists(labelled_sentences(), min_size=1, max_size=5), st.sampled_from(SCHEMES))
def test_detect_scheme_recognises_every_encoded_corpus(sentences, scheme):
    if not any(spans for _, spans in sentences):
        return  # a corpus without entities has no scheme to detect
    assert detect_scheme(spans_to_tags(spans, len(tokens), scheme) for tokens, spans in sentences) == scheme


@given(labelled_sentences())
def test_text_spans_point_at_each_mention_in_the_text(sentence):
    tokens, spans = sentence
    text = " ".join(tokens)
    offsets = text_spans(tokens, spans)
    assert [o["label"] for o in offsets] == [s.label for s in spans]
    for offset, span in zip(offsets, spans, strict=True):
        assert text[offset["start"] : offset["end"]] == " ".join(tokens[span.start : span.end])
