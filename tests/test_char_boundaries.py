"""Whole characters in generated text: the UTF-8 state machine against Python's codec, the vocabulary's bytes, the
mask, and decoders that write no U+FFFD."""

from __future__ import annotations

from dataclasses import replace

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from hf_ecg.runtime.char_boundaries import STATES, CharacterBoundaries, token_bytes, utf8_state_after
from hf_ecg.runtime.decoding import DecodingConfig, make_decoder
from hf_ecg.runtime.decoding_cache import TemplateRow
from hf_ecg.runtime.words import REPLACEMENT_CHARACTER, visible
from tiny import tiny_tokenizer

# bytes that decide UTF-8's cases: ASCII, each continuation range's edges, every kind of first byte, never-valid ones
_EDGE_BYTES = [0x41, 0x7F, 0x80, 0x8F, 0x90, 0x9F, 0xA0, 0xBF, 0xC0, 0xC1, 0xC2, 0xDF, 0xE0, 0xE1, 0xED, 0xEF, 0xF0]
_EDGE_BYTES += [0xF1, 0xF4, 0xF5, 0xFF]


@given(st.lists(st.sampled_from(_EDGE_BYTES), max_size=8).map(bytes) | st.binary(max_size=8))
def test_state_machine_agrees_with_pythons_codec(data):
    """At a boundary exactly where the bytes decode strictly; inside a character only where one more character's
    worth of the bytes it allows would make them decode; ``None`` where no continuation could."""
    state = utf8_state_after(0, data)
    try:
        data.decode("utf-8")
        decodes = True
    except UnicodeDecodeError:
        decodes = False
    assert (state == 0) == decodes
    if state:
        owed, low, _ = STATES[state]
        (data + bytes([low]) + b"\x80" * (owed - 1)).decode("utf-8")
    if state is None:
        for tail in (b"", b"\x80", b"\x80\x80", b"\xa0\x80", b"\x90\x80\x80", b"A"):
            with pytest.raises(UnicodeDecodeError):
                (data + tail).decode("utf-8")


@pytest.fixture(scope="module")
def tokenizer():
    return tiny_tokenizer()


def test_token_bytes_are_what_the_tokenizer_decodes(tokenizer):
    """Each text token's bytes decode (lossily) to the tokenizer's own decoding of it; special tokens have none."""
    data = token_bytes(tokenizer)
    assert data[tokenizer.eos_token_id] is None
    assert sum(b is not None and not b.isascii() for b in data) >= 128  # the byte alphabet's upper half
    for i, b in enumerate(data):
        if b is not None:
            assert tokenizer.decode([i], clean_up_tokenization_spaces=False) == b.decode("utf-8", "replace")


@settings(max_examples=60, deadline=None)
@given(st.text(min_size=1, max_size=12))
def test_a_texts_tokens_pass_the_mask_and_its_state_follows_its_bytes(tokenizer, text):
    """Every token of a real text's tokenization is allowed where it stands, and the state after each prefix is
    a boundary exactly where the prefix's bytes decode."""
    boundaries = CharacterBoundaries(tokenizer)
    data = token_bytes(tokenizer)
    ids = tokenizer(text, add_special_tokens=False)["input_ids"]
    for k, token in enumerate(ids):
        scores = torch.zeros(1, len(tokenizer))
        boundaries.mask(scores, [boundaries.state(ids[:k])])
        assert scores[0, token] == 0
        prefix = b"".join(data[i] for i in ids[: k + 1])
        try:
            prefix.decode("utf-8")
            decodes = True
        except UnicodeDecodeError:
            decodes = False
        assert (boundaries.state(ids[: k + 1]) == 0) == decodes
    assert boundaries.state(ids) == 0


def test_mask_inside_a_character_leaves_its_continuations_only(tokenizer):
    """After a 3-byte character's first byte: no structural token, no ASCII, no first byte; its continuation
    bytes stay. At a boundary, no lone continuation byte."""
    boundaries = CharacterBoundaries(tokenizer)
    data = token_bytes(tokenizer)
    lead = data.index(b"\xe2")
    scores = torch.zeros(2, len(tokenizer))
    boundaries.mask(scores, [boundaries.state([lead]), 0])
    inside = {bytes(data[i]) for i in torch.nonzero(scores[0] == 0).flatten().tolist()}
    assert inside and all(0x80 <= b[0] <= 0xBF for b in inside)
    assert b"\x80" in inside and scores[0, tokenizer.eos_token_id] == -float("inf")
    assert scores[1, data.index(b"\x80")] == -float("inf") and scores[1, data.index(b"A")] == 0
    exempt = torch.zeros(1, len(tokenizer))
    boundaries.mask(exempt, [boundaries.state([lead])], exempt=[True])
    assert (exempt == 0).all()


def test_a_block_inside_a_character_draws_its_continuation_not_its_tag(tiny):
    """The decoder's draw: a row whose block ends on a character's first byte writes a continuation byte, however
    much the model wants the row's tag."""
    model, tokenizer, config = tiny
    decoder = make_decoder(model, tokenizer, config, DecodingConfig(seed=0, max_block_tokens=16))
    data = token_bytes(tokenizer)
    tag = decoder.tag_ids["Chemical"]
    for seed in range(20):
        row = TemplateRow(index=0, targets=[tag, decoder.endtext_id], block_ids=[data.index(b"\xe2")])
        logits = torch.randn(1, len(tokenizer), generator=torch.Generator().manual_seed(seed))
        logits[0, tag] = 50.0
        (token,) = decoder.row_sampler.sample(logits, [row], torch.Generator().manual_seed(seed))
        assert token != tag and 0x80 <= data[token][0] <= 0xBF


@pytest.mark.parametrize(("mode", "layout"), [("batched", "qa"), ("sequential", "qa"), ("batched", "lm")])
def test_an_untrained_models_templates_hold_no_replacement_character(tiny, mode, layout):
    """An untrained model over a vocabulary of bytes writes cut characters anywhere; its templates hold none, and
    its words keep their non-ASCII characters (the mask, not a strip, keeps them whole)."""
    model, tokenizer, config = tiny
    decoder = make_decoder(
        model,
        tokenizer,
        replace(config, layout=layout),
        DecodingConfig(seed=3, max_block_tokens=12, max_attempts=2, mode=mode),
    )
    decoded = decoder.decode([["Chemical", "Disease"]] * 8 + [[]] * 4)
    words = [w for result in decoded for w in result.template.tokens]
    assert words and not any(REPLACEMENT_CHARACTER in w for w in words)
    assert any(not w.isascii() for w in words)  # multi-byte characters written whole
    assert all(result.template.tokens for result in decoded)


def test_visible_drops_a_replacement_character_and_keeps_the_rest():
    assert visible("cut\ufffd word é") == "cut word é"
    assert visible("\ufffd\ufffd") == ""
