"""Sketches: the round trip of their text, what a sketch keeps, and which templates fit it."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from conftest import labelled_sentences
from hf_ecg.runtime.blocks import ENDTEXT, Template, decompose, tag_label
from hf_ecg.runtime.sketches import GAP_TOKEN, Sketch


@st.composite
def templates_and_kept(draw):
    tokens, spans = draw(labelled_sentences())
    template, _ = decompose(tokens, spans)
    words = [i for i, token in enumerate(template.tokens) if tag_label(token) is None]
    kept = draw(st.sets(st.sampled_from(words))) if words else set()
    return template, kept


@given(templates_and_kept())
def test_a_sketch_reads_back_from_its_text_and_fits_its_template(item):
    template, kept = item
    sketch = Sketch.of(template, kept)
    assert Sketch.parse(str(sketch)) == sketch
    assert sketch.fits(template)
    assert sketch.entity_types == template.entity_types
    assert sketch.kept_words == tuple(template.tokens[i] for i in sorted(kept))
    assert all(not (a == b == GAP_TOKEN) for a, b in zip(sketch.pieces, sketch.pieces[1:], strict=False))
    # a gap for each run of left-out words, none elsewhere
    left_out = [i not in kept and tag_label(t) is None for i, t in enumerate(template.tokens)]
    runs = sum(1 for i, out in enumerate(left_out) if out and (i == 0 or not left_out[i - 1]))
    assert sketch.pieces.count(GAP_TOKEN) == max(runs, 0 if template.tokens else 1)
    blocks = sketch.blocks()
    assert len(blocks) == len(template.entity_types) + 1 and blocks[-1][-1] == ENDTEXT
    assert sketch.questions()[0] == f"{sketch} {ENDTEXT}"
    assert sketch.questions()[-1] == " ".join(blocks[-1])


def test_kept_words_are_tokens_not_substrings():
    template = Template(("ATM", "kinase", "binds", "<Protein>", "in", "AT", "cells", "."))
    sketch = Sketch.of(template, [5])
    assert str(sketch) == f"{GAP_TOKEN} <Protein> {GAP_TOKEN} AT {GAP_TOKEN}"
    assert sketch.fits(Template(("the", "<Protein>", "of", "AT", "patients", ".")))
    assert not sketch.fits(Template(("the", "<Protein>", "of", "ATM", "patients", ".")))  # AT is not inside ATM


@pytest.mark.parametrize(
    ("tokens", "fits"),
    [
        (("<Chemical>", "induced", "<Disease>", "."), True),  # a gap may hold no word
        (("Oral", "<Chemical>", "quickly", "induced", "severe", "<Disease>", "in", "rats", "."), True),
        (("<Chemical>", "induced", "<Disease>"), False),  # the kept end is missing
        (("<Chemical>", "caused", "<Disease>", "."), False),  # a kept word replaced
        (("<Disease>", "induced", "<Chemical>", "."), False),  # the tags out of order
        (("<Chemical>", "induced", "<Disease>", "and", "<Disease>", "."), False),  # a tag the sketch lacks
        (("Then", "<Chemical>", "induced", "<Disease>", "."), True),
    ],
)
def test_a_template_fits_a_sketch_only_with_its_tags_and_kept_words_in_order(tokens, fits):
    sketch = Sketch.parse(f"{GAP_TOKEN} <Chemical> {GAP_TOKEN} induced {GAP_TOKEN} <Disease> {GAP_TOKEN} .")
    assert sketch.fits(Template(tokens)) is fits


@pytest.mark.parametrize(
    "pieces",
    [(), (GAP_TOKEN, GAP_TOKEN), ("two words",), ("a", ENDTEXT), ("<|context|>",), ("",)],
)
def test_a_malformed_sketch_is_refused(pieces):
    with pytest.raises(ValueError):
        Sketch(pieces)


def test_a_kept_index_of_a_tag_or_outside_is_refused():
    template = Template(("a", "<Chemical>", "b"))
    for kept in ([1], [3], [-1]):
        with pytest.raises(ValueError, match="not words of the template"):
            Sketch.of(template, kept)
