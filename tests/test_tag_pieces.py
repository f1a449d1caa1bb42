"""Tag pieces: the measure (words of O text that spell a tag's name) and the decoder that writes none."""

from __future__ import annotations

import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

from hf_ecg.modeling import add_ecg_tokens
from hf_ecg.runtime.blocks import ENDTEXT
from hf_ecg.runtime.decoding import ChainedDecoder, DecodingConfig
from hf_ecg.runtime.ecg_config import ECGConfig
from hf_ecg.runtime.tag_pieces import TagPieceFinder, tag_piece_exceptions, tag_piece_forms, vocabulary_words
from tiny import tiny_gpt2, tiny_tokenizer

DISEASE = {"Disease": ["Dise", "Disease", "ase"]}


@pytest.mark.parametrize(
    "word", ["Dise", "ase", "DiseEases", "DiseHLA", "DiseCAG", "Dise-13", "of/Dise", "Disease2", "asease", "Dise.ase"]
)
def test_pieces_of_a_tag_name_are_flagged(word):
    assert TagPieceFinder(DISEASE, ["disease"]).is_piece(word)


@pytest.mark.parametrize("word", ["disease", "Diseases", "increase", "phase", "case", "Dis", "DISEASE"])
def test_words_the_gold_corpus_writes_and_real_words_are_not(word):
    assert not TagPieceFinder(DISEASE, ["disease"]).is_piece(word)


def test_a_corpus_word_in_another_case_is_a_piece_but_at_a_sentence_start():
    """A corpus that writes `disease` does not excuse `the effects of Disease neuronal loss`: the model wrote the
    tag's name where it could not write the tag (33 times in a BC5CDR 45 set of 450, counted as 0 before)."""
    finder = TagPieceFinder(DISEASE, ["disease", "Disease-free"])  # as the corpus writes them
    assert finder(["the", "effects", "of", "Disease", "neuronal", "loss"]) == [3]
    assert finder(["Disease", "onset", "was", "late", "."]) == []  # a sentence's first word may be capitalised
    assert finder(["Disease", "onset"], starts_sentence=False) == [0]  # a later block's first word is not first
    assert TagPieceFinder(DISEASE, ["disease", "Disease"]).is_piece("Disease") is False  # the corpus writes both
    # a list recorded lower-cased (models trained before the case was kept) excuses its words in any case
    assert TagPieceFinder(DISEASE, ["disease"])(["the", "effects", "of", "Disease"]) == []


def test_exceptions_are_the_words_the_corpus_writes_as_ordinary_text_in_its_case():
    forms = {"Disease": ["Dise", "Disease", "ase"], "cell_line": ["cell", "line"]}
    gold = [["Parkinson", "Disease", "in", "a", "cell", "line", "."], ["Disease", "ase", "cell", "."]]
    tags = [["B-Disease", "I-Disease", "O", "O", "B-cell_line", "I-cell_line", "O"], ["O", "O", "O", "O"]]
    assert tag_piece_exceptions(forms, gold) == ["Disease", "ase", "cell", "line"]  # every word, any label
    assert tag_piece_exceptions(forms, gold, labels=tags) == ["Disease", "ase", "cell"]  # the O words only
    only_in_names = tag_piece_exceptions(forms, gold[:1], labels=tags[:1])
    assert TagPieceFinder(forms, only_in_names)(["effects", "of", "Disease", "cell", "line"]) == [2, 3, 4]


def test_a_cut_off_type_name_and_a_piece_glued_to_a_word_are_pieces():
    forms = {"Chemical": ["Chemical"], "Disease": ["Dise", "Disease", "ase"], "cell_line": ["cell", "line"]}
    words = {"daily", "and", "treatment", "age", "phone", "wing", "cell", "line", "ase", "chemical", "disease"}
    finder = TagPieceFinder(forms, ["disease", "cell", "line"], words=words)
    for piece in ["Chem", "Diseas", "Chemicaldaily", "Chemicaltreatment-", "Diseaseand", "Chemicaldailyand"]:
        assert finder.is_piece(piece), piece
    # an inflection, real words, and forms that are words themselves (line + age) are not
    for word in ["Chemicals", "Diseases", "lineage", "cellphone", "asewing", "aseptic", "Chemistry", "chemical"]:
        assert not finder.is_piece(word), word
    assert not TagPieceFinder(forms).is_piece("Chemicaldaily")  # without a vocabulary: only capitals and digits


def test_vocabulary_words_are_the_tokenizer_s_whole_words():
    tokenizer = tiny_tokenizer(["daily treatment of the patients daily"])
    words = vocabulary_words(tokenizer.get_vocab())
    assert "daily" in words and all(w.isalpha() and w == w.lower() and len(w) >= 3 for w in words)


def test_gold_words_made_of_a_tag_name_are_exceptions_by_part_too():
    forms = {"cell_line": ["cell", "cell_line", "cellline", "line"], "DNA": ["DNA"]}
    gold = [["The", "cell", "line", "binds", "DNA", "."], ["B-cell", "lines"]]
    finder = TagPieceFinder(forms, tag_piece_exceptions(forms, gold))
    assert finder(["cell", "cell-specific", "DNA-binding", "line", "B-cell"]) == []
    assert finder(["cell_", "cell_line", "cellline", "DNAHLA", "cells", "cell"]) == [0, 1, 2, 3]
    assert finder(["cell_", "cell_line"], ["O", "B-cell_line"]) == [0]  # only the O words


@given(st.lists(st.lists(st.text(min_size=1, max_size=12), min_size=1, max_size=8), min_size=1, max_size=6))
def test_no_word_of_the_training_corpus_is_ever_a_piece(sentences):
    forms = {"Disease": ["Dise", "Disease", "ase"], "cell_type": ["cell", "cell_type", "type"]}
    finder = TagPieceFinder(forms, tag_piece_exceptions(forms, sentences))
    assert all(finder(sentence) == [] for sentence in sentences)


def test_forms_are_the_sub_words_the_tag_token_starts_from():
    tokenizer = tiny_tokenizer(["Dise ase Dise ase of the Dise"])
    forms = tag_piece_forms(tokenizer, ["Disease", "Chemical", "cell_line"])
    assert forms["Disease"] == ["Dise", "Disease", "ase"]  # 'Disease' is split into Dise + ase
    assert forms["Chemical"] == ["Chemical"]  # split into pieces under 3 characters: only the name
    assert {"cell_line", "cellline"} <= set(forms["cell_line"])


@pytest.fixture(scope="module")
def pushed():
    """A tiny model whose tokenizer splits 'Disease' into 'Dise' + 'ase' (the tag token starts from them), pushed
    towards the tags, '<ENDTEXT>' and '.' (blocks end) and above all towards <Disease>, with its name's pieces as
    the next choice: where <Disease> may not be written, a mask leaves the model 'Dise' and 'ase'."""
    tokenizer = tiny_tokenizer(["Dise ase Dise ase of the Dise"])
    model = tiny_gpt2(len(tokenizer), seed=3)
    types = ["Chemical", "Disease"]
    add_ecg_tokens(tokenizer, model, types)
    config = ECGConfig(entity_types=types, max_length=128, tag_pieces=tag_piece_forms(tokenizer, types))
    vocab = tokenizer.get_vocab()
    bonus = torch.zeros(model.get_output_embeddings().weight.shape[0])
    for token in [ENDTEXT, *config.tag_tokens.values()]:
        bonus[vocab[token]] = 5.0
    bonus[vocab["."]] = 5.0
    bonus[vocab["<Disease>"]] = 6.5
    for piece in ["Dise", "ĠDise", "ase", "Ġase"]:
        bonus[vocab[piece]] = 4.0
    handle = model.get_output_embeddings().register_forward_hook(lambda module, inputs, output: output + bonus)
    yield model, tokenizer, config
    handle.remove()


def test_the_decoder_pushed_toward_a_forbidden_tag_writes_no_piece_of_its_name(pushed):
    """The batched decoder (the default); the sequential one is the paper's procedure, which draws a block again
    whenever it does not end on its tag, and keeps the last draw's text when its tries run out."""
    model, tokenizer, config = pushed
    finder = TagPieceFinder(config.tag_pieces)
    sequences = [("Chemical",), (), ("Chemical", "Chemical"), ("Disease",)] * 4

    def run(**redraw: bool) -> list:
        settings = DecodingConfig(
            batch_size=4, max_block_tokens=12, max_attempts=60, seed=5, redraw_budget=None, **redraw
        )
        decoded = ChainedDecoder(model, tokenizer, config, settings).decode(sequences)
        assert [r.template.entity_types for r in decoded] == sequences
        for r in decoded:  # the per-sample count is the finder's, on the O words
            assert r.tag_pieces == len(finder([w for w in r.template.tokens if not w.startswith("<")]))
        return decoded

    masked = run(redraw_tag_pieces=False)
    assert sum(r.tag_pieces > 0 for r in masked) >= 4  # the push works: under the mask the pieces come out
    unrequested = run(redraw_unrequested_tag=True, redraw_tag_pieces=False)  # the tag drawn: the block again
    assert sum(r.tag_pieces > 0 for r in unrequested) < sum(r.tag_pieces > 0 for r in masked)
    redrawn = run()  # the default: a block that spells the name is drawn again
    assert all(r.tag_pieces == 0 for r in redrawn)
    assert sum(r.attempts for r in redrawn) > sum(r.attempts for r in masked)  # what it cost: blocks drawn again


@pytest.mark.parametrize("word", ["PersonI", "personX", "Person2", "Diseaseangenics", "Chemicalology"])
def test_a_type_name_glued_to_a_word_in_any_case_is_a_piece(word):
    """The quickstart printed `PersonI know has been on ...`: the tag's name, capitalised, run into the next word."""
    forms = {"person": ["person"], "Disease": ["Dise", "Disease", "ase"], "Chemical": ["Chemical"]}
    words = {"person", "personality", "diseases", "chemicals", "know"}
    finder = TagPieceFinder(forms, ["person", "disease"], words=words)
    assert finder.is_piece(word)
    assert finder(["PersonI", "know", "has", "been", "on", "PEI", "."]) == [0]


@pytest.mark.parametrize("word", ["Personality", "Persons", "Diseases", "Chemicals", "PERSONS", "Person"])
def test_inflections_vocabulary_words_acronyms_and_the_corpus_words_are_not_glued_pieces(word):
    forms = {"person": ["person"], "Disease": ["Dise", "Disease", "ase"], "Chemical": ["Chemical"]}
    words = {"person", "personality", "diseases", "chemicals"}
    assert not TagPieceFinder(forms, ["person", "Person", "Disease"], words=words).is_piece(word)
