"""Generated text split like the corpus: punctuation off the words, the corpus's own tokens kept whole."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from hf_ecg.data.corpus import read_conll
from hf_ecg.runtime.words import (
    WordSplitter,
    has_repetition,
    repeats_at_end,
    sentence_break_shares,
    sentence_breaks,
    sentence_endings,
    split_word,
    unended_share,
    word_exceptions,
)

SHARED_DATA = Path(__file__).resolve().parents[2] / "shared" / "data"


def test_punctuation_comes_off_words_as_a_corpus_writes_it():
    split = WordSplitter()
    assert split("the cells. In light, the (IL-2), and") == [
        "the",
        "cells",
        ".",
        "In",
        "light",
        ",",
        "the",
        "(",
        "IL-2",
        ")",
        ",",
        "and",
    ]
    assert split('"NF-kappa B" 3.5 kDa;') == ['"', "NF-kappa", "B", '"', "3.5", "kDa", ";"]
    assert split(". , ( )") == [".", ",", "(", ")"]  # lone punctuation stays as it is
    assert split_word("(...)") == ["(", ".", ".", ".", ")"]


def test_corpus_tokens_that_the_rule_would_break_are_kept_whole():
    corpus = [["e.g.", "the", "5'", "end", "of", "Smith", "'s", "gene", "."]]
    exceptions = word_exceptions(corpus)
    assert exceptions == ["'s", "5'", "e.g."]
    split = WordSplitter(exceptions)
    assert split("e.g. the 5' end of Smith 's gene.") == [*corpus[0]]
    assert split("(e.g. cells") == ["(", "e.g.", "cells"]  # an exception inside punctuation
    assert WordSplitter()("e.g.") == ["e.g", "."]  # without it, the rule splits


words = st.text(st.sampled_from("abAB12-.,;:()'\""), min_size=1, max_size=6)


@given(st.lists(st.lists(words, min_size=1, max_size=8), min_size=1, max_size=5))
def test_split_is_the_identity_on_the_corpus_it_learnt_from(sentences):
    split = WordSplitter(word_exceptions(sentences))
    for tokens in sentences:
        assert split(" ".join(tokens)) == tokens


@given(st.lists(words, min_size=1, max_size=10))
def test_split_loses_no_character(tokens):
    text = " ".join(tokens)
    assert "".join(WordSplitter()(text)) == text.replace(" ", "")


@pytest.mark.parametrize("corpus", ["jnlpba/devel.tsv", "bc5cdr/train.tsv"])
def test_split_is_the_identity_on_real_gold_sentences(corpus):
    path = SHARED_DATA / corpus
    if not path.is_file():
        pytest.skip(f"{path} not found (../shared/data)")
    sentences = [s.tokens for s in read_conll(path)]
    split = WordSplitter(word_exceptions(sentences))
    assert all(split(" ".join(tokens)) == list(tokens) for tokens in sentences)
    assert len(word_exceptions(sentences)) < 100  # few tokens need keeping: the rule fits the corpus


def test_sentence_endings_are_the_punctuation_that_ends_gold_sentences():
    gold = [["a", "b", "."]] * 97 + [["a", "?"]] * 2 + [["no", "end"]]
    assert sentence_endings(gold) == [".", "?"]  # "end" is a word, not an ending
    assert sentence_endings([["lol"], ["hi", "there"]]) == [".", "!", "?"]  # none: the usual ones


@given(st.lists(st.sampled_from(["a", "b", "c", "."]), max_size=14))
def test_repeats_at_end_is_has_repetition_for_the_newest_token(tokens):
    """Checking each new token with repeats_at_end finds a loop exactly when has_repetition does."""
    found_step_by_step = any(repeats_at_end(tokens[:end]) for end in range(1, len(tokens) + 1))
    assert found_step_by_step == has_repetition(tokens)


def test_a_sentence_ending_then_a_capital_a_number_or_an_entity_begins_a_second_sentence():
    tokens = "Cells died . The rest ( i . p . ) grew . 4 5 6 vs . 72 .".split()
    assert [tokens[i] for i in sentence_breaks(tokens, ["."])] == ["The", "4", "72"]
    # 'vs . 72' reads like '. 4 5 6': why each kind is looked for only where the training corpus lacks it
    assert [tokens[i] for i in sentence_breaks(tokens, ["."], kinds=["capital"])] == ["The"]
    tagged = "IL-2 binds <protein> . <protein> binds it .".split()
    assert sentence_breaks(tagged, ["."], entity_starts={4}, kinds=["entity"]) == [4]
    assert sentence_breaks(tagged, ["."], kinds=["entity"]) == []  # not an entity start: not that kind


def test_break_shares_count_sentences_per_kind():
    sentences = [
        ("A b . C d .".split(), set()),  # capital
        ("A b . 7 , C .".split(), set()),  # digit (', C' is not after an ending)
        ("A . B . 9 .".split(), {2}),  # entity and digit; the capital at 2 begins an entity: counted as entity
        ("A b c .".split(), set()),
    ]
    assert sentence_break_shares(sentences, ["."]) == {"capital": 0.25, "digit": 0.5, "entity": 0.25}
    assert sentence_break_shares([], ["."]) == {"capital": 0.0, "digit": 0.0, "entity": 0.0}


def test_sentence_split_corpora_almost_never_hold_a_second_sentence():
    """What redraw_run_on relies on (under 1%), and why it is per kind: BC5CDR writes 'P = 0 . 047'."""
    shares = {}
    for corpus in ("jnlpba/devel.tsv", "bc5cdr/train.tsv"):
        path = SHARED_DATA / corpus
        if not path.is_file():
            pytest.skip(f"{path} not found (../shared/data)")
        sentences = list(read_conll(path))
        endings = sentence_endings(s.tokens for s in sentences)
        shares[corpus] = sentence_break_shares(((s.tokens, {sp.start for sp in s.spans}) for s in sentences), endings)
    assert all(share < 0.01 for share in shares["jnlpba/devel.tsv"].values())
    assert shares["bc5cdr/train.tsv"]["capital"] < 0.01 and shares["bc5cdr/train.tsv"]["entity"] < 0.01
    assert shares["bc5cdr/train.tsv"]["digit"] > 0.05


def test_unended_share_counts_the_sentences_that_end_on_a_word():
    sentences = ["Cells died .".split(), "lol so tired".split(), [], "Why ?".split()]
    assert unended_share(sentences, [".", "?"]) == 1 / 3  # empty sentences do not count
    assert unended_share([], ["."]) == 0.0


def test_numbers_read_by_their_shape_make_a_changing_number_loop_a_loop():
    from hf_ecg.runtime.words import number_shape

    soup = "of 6.5 % of 2.5 % of 3.1 % of 8.1 %".split()
    assert not has_repetition(soup)
    assert has_repetition([number_shape(w) for w in soup])
    assert [number_shape(w) for w in ["IL-12", "1,500", "cells"]] == ["IL-0", "0,0", "cells"]


@given(st.text(max_size=40))
def test_visible_text_has_no_control_or_invisible_character_and_keeps_the_rest(text):
    """What a decoded block is split from: a model's NUL, zero-width space or BOM never reaches a sample."""
    import unicodedata

    from hf_ecg.runtime.words import INVISIBLE_CATEGORIES, visible

    kept = visible(text)
    assert not any(unicodedata.category(ch) in INVISIBLE_CATEGORIES and not ch.isspace() for ch in kept)
    assert kept == "".join(ch for ch in text if ch in kept)  # only removed, in order
    assert visible("fe\x00ver\u200b pain\ufeff") == "fever pain" and visible(kept) == kept


def test_no_mention_holds_a_replacement_character():
    from hf_ecg.runtime.mentions import mention_problem

    # a cut UTF-8 sequence decodes to U+FFFD: a written mention that holds one is drawn again
    cut = bytes([0x41, 0x73, 0x70, 0xE2, 0x80]).decode("utf-8", errors="replace")
    assert "\ufffd" in cut and "replacement character" in mention_problem((cut,))
