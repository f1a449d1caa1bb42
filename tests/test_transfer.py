"""Style transfer on the sketch generator: another domain's labelled sentences, their types mapped to the model's,
written around their sketches, the candidates chosen for the target domain."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from conftest import labelled_sentences
from hf_ecg.data.corpus import Corpus, Sentence, read_conll
from hf_ecg.data.type_map import TypeMap, map_types
from hf_ecg.runtime.blocks import decompose, tag_label
from hf_ecg.runtime.tags import Span
from hf_ecg.synthetic.sketching import ScoredSentence, excluding, template_positions
from hf_ecg.synthetic.transfer import TRANSFER_WEIGHTS, TransferScore, filled_text

#: A neighbouring domain: its drugs are the model's chemicals, its genes a type the model does not write.
SOURCE = """\
Metformin\tB-Drug
lowers\tO
glucose\tO
in\tO
BRCA1\tB-Gene
carriers\tO
.\tO

Oral\tO
insulin\tB-Drug
calms\tO
the\tO
TP53\tB-Gene
pathway\tO
.\tO

Rats\tO
were\tO
dosed\tO
.\tO
"""

TYPES = st.text(alphabet="ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz_", min_size=1, max_size=8)


@given(st.dictionaries(TYPES, TYPES, min_size=1, max_size=4))
def test_a_type_map_reads_back_from_its_text(mapping):
    type_map = TypeMap(mapping)
    assert TypeMap.parse(str(type_map)) == type_map
    assert type_map.target_types == sorted(set(mapping.values()))


@pytest.mark.parametrize("text", ["", "CHEBI", "CHEBI=", "=Chemical", "A=B,A=C", "A B=C"])
def test_a_malformed_type_map_is_refused(text):
    with pytest.raises(ValueError):
        TypeMap.parse(text)


@given(labelled_sentences())
def test_each_word_outside_the_spans_has_its_template_index(sentence):
    tokens, spans = sentence
    template, _ = decompose(tokens, spans)
    positions = template_positions(len(tokens), spans)
    inside = {i for span in spans for i in range(span.start, span.end)}
    assert [i for i, p in enumerate(positions) if p is None] == sorted(inside)
    for i, p in enumerate(positions):
        if p is not None:
            assert template.tokens[p] == tokens[i]
    assert sorted(p for p in positions if p is not None) == [
        i for i, t in enumerate(template.tokens) if tag_label(t) is None
    ]


def test_a_mapped_corpus_renames_its_types_and_leaves_the_others_unknown(tmp_path):
    path = tmp_path / "source.tsv"
    path.write_text(SOURCE, encoding="utf-8")
    mapped = map_types(read_conll(path), TypeMap.parse("Drug=Chemical"))
    first, second, third = mapped
    assert first.mentions == [("Chemical", ("Metformin",))] and first.unknown == (4,)  # BRCA1: a name, not O
    assert second.mentions == [("Chemical", ("insulin",))] and second.unknown == (4,)
    assert third.spans == () and third.unknown == ()
    assert mapped.entity_types == ["Chemical"] and "(Drug=Chemical)" in mapped.name
    assert first.training_tags[4] is None and first.training_weights[4] == 0.0
    with pytest.raises(ValueError, match="no entity of type Protein"):
        map_types(read_conll(path), TypeMap.parse("Protein=Chemical"))
    with pytest.raises(ValueError, match="holds no entity"):
        map_types(Corpus([Sentence(("no", "names"), ())], name="plain"), TypeMap.parse("Drug=Chemical"))


def test_a_sketch_never_keeps_a_word_left_unknown():
    tokens, spans = ("Oral", "Metformin", "lowers", "BRCA1", "levels"), (Span(1, 2, "Chemical"),)
    template, mentions = decompose(tokens, spans)
    scored = ScoredSentence(
        template, tuple(mentions), ((0, 1, 0.5), (2, 3, 0.9), (2, 4, 0.8), (3, 4, 0.7), (4, 5, 0.1))
    )
    assert excluding(scored, Sentence(tokens, spans, unknown=(3,))).candidates == (
        (0, 1, 0.5),
        (2, 3, 0.9),
        (4, 5, 0.1),
    )
    assert excluding(scored, Sentence(tokens, spans)) is scored


def test_a_candidate_reads_whole_first_then_by_the_seeds_weighted_sum():
    def score(whole=True, vocabulary=0.0, **parts):
        values = dict.fromkeys(TRANSFER_WEIGHTS, 0.5) | parts
        return TransferScore(whole, vocabulary, **values)

    assert score(style=0.9).value == pytest.approx(0.9 + 0.5 + 0.05 + 0.25)
    assert score(whole=False, style=1.0, adequacy=1.0).key() < score(style=0.0).key()
    assert score(adequacy=0.7).key() > score(style=0.6).key()  # adequacy weighs as style does
    assert score(diversity=0.9).key() < score(adequacy=0.8).key()  # diversity half as much
    assert score(vocabulary=0.9).key() == score(vocabulary=0.1).key()  # the vocabulary only when asked first
    assert score(vocabulary=0.9).key(True) > score(vocabulary=0.1, style=1.0).key(True)
    assert filled_text(["<Chemical>", "lowers", "<Chemical>", "."], [("a", "b"), ("c",)]) == "a b lowers c ."


@pytest.fixture(scope="module")
def source_and_target(tmp_path_factory):
    root = tmp_path_factory.mktemp("transfer")
    source = root / "source.tsv"
    source.write_text(SOURCE, encoding="utf-8")
    target = root / "target.txt"
    target.write_text("Aspirin cures headache .\nPatients with fever received paracetamol .\n", encoding="utf-8")
    return source, target


def test_transferred_samples_keep_every_mapped_mention_and_record_their_scores(sketch_model, source_and_target):
    """Another domain's drugs, written as the model's chemicals: each sample holds its source's mapped mentions
    with their type (100%); a gene, unmapped, is never kept in a sketch; the candidates' target scores are columns
    and their spread is in the manifest."""
    import statistics

    import datasets

    from hf_ecg.cli import main
    from hf_ecg.runtime.sketches import Sketch
    from hf_ecg.runtime.tags import tags_to_spans

    model, _ = sketch_model
    source, target = source_and_target
    out = source.parent / "out"
    argv = ["generate", "--model", str(model), "-n", "6", "-o", str(out), "--max-block-tokens", "4"]
    extra = ["--sketches", str(source), "--type-map", "Drug=Chemical", "--target-text", str(target)]
    assert main([*argv, *extra, "--candidates", "2", "--target-vocabulary"]) == 0
    rows = datasets.load_dataset(str(out), split="train").sort("id")
    names = rows.features["ner_tags"].feature.names
    expected = [[("Chemical", ("Metformin",))], [("Chemical", ("insulin",))]]
    for row in rows:
        spans, _ = tags_to_spans([names[k] for k in row["ner_tags"]], "IOB2")
        assert [(s.label, tuple(row["tokens"][s.start : s.end])) for s in spans] == expected[row["id"] % 2]
        kept = Sketch.parse(row["sketch"]).kept_words
        assert "BRCA1" not in kept and "TP53" not in kept
        assert 0 <= row["target_likeness"] <= 1 and -1 <= row["adequacy"] <= 1
    manifest = json.loads((out / "ecg_generation.json").read_text())
    assert "(Drug=Chemical)" in manifest["settings"]["sketches"]
    selection = manifest["settings"]["target"]
    assert selection["target_sentences"] == 2 and selection["source_sentences"] == 3
    assert selection["vocabulary_first"] and selection["weights"] == TRANSFER_WEIGHTS
    card = " ".join((out / "README.md").read_text(encoding="utf-8").split())
    assert f"each sketch's 2 candidates were judged for the target text `{target}`" in card
    assert "MiniLM embeddings of 2 of its sentences against 3 of the source's" in card
    spread = manifest["source_overlap"]["target_likeness"]
    assert spread["p10"] <= spread["median"] <= spread["p90"]
    assert spread["median"] == pytest.approx(statistics.median(rows["target_likeness"]), abs=1e-4)


def test_bad_transfer_input_is_refused_in_one_line_before_anything_is_written(sketch_model, source_and_target, capsys):
    from hf_ecg.cli import main

    model, _ = sketch_model
    source, _ = source_and_target
    plain = source.parent / "plain.tsv"
    plain.write_text("No\tO\nnames\tO\n", encoding="utf-8")
    empty = source.parent / "empty.tsv"
    empty.write_text("", encoding="utf-8")
    bad = source.parent / "bad"
    argv = ["generate", "--model", str(model), "-n", "2", "-o", str(bad), "--max-block-tokens", "4"]
    cases = [
        (["--sketches", str(source), "--type-map", "Protein=Chemical"], "--type-map Protein=Chemical"),
        (["--sketches", str(source), "--type-map", "Drug"], "not SRC=TGT"),
        (["--sketches", str(source), "--type-map", "Drug=Gene"], "the generator does not write"),
        (["--sketches", str(plain), "--type-map", "Drug=Chemical"], "holds no entity"),
        (["--sketches", str(empty), "--type-map", "Drug=Chemical"], "empty.tsv"),
        (["--sketches", str(source), "--type-map", "Drug=Chemical", "--target-vocabulary"], "needs --target-text"),
        (["--sketches", str(source), "--type-map", "Drug=Chemical", "--target-text", str(empty)], "empty.tsv"),
    ]
    # the sketch family's options without --sketches would do nothing: refused, not silently unused
    cases += [
        (["--type-map", "Drug=Chemical"], "--type-map would do nothing"),
        (["--candidates", "1"], "--candidates would do nothing"),
        (["--kept-share", "0.2"], "--kept-share would do nothing"),
        (["--mixup", "0"], "--mixup would do nothing"),
    ]
    for extra, message in cases:
        assert main([*argv, *extra]) == 2
        err = capsys.readouterr().err
        assert message in err and len(err.strip().splitlines()) == 1, err
        assert not bad.exists()


class _WordScorer:
    """A stand-in for the sentence encoder: a text's embedding says whether it holds a clinical word."""

    def embed(self, texts):
        import torch

        rows = [[1.0, 0.0] if {"patients", "placebo"} & set(t.split()) else [0.0, 1.0] for t in texts]
        return torch.tensor(rows)


def test_the_target_classifier_prefers_the_targets_sentences_and_counts_what_the_target_holds():
    from hf_ecg.synthetic.transfer import TargetDomain, TransferSelection

    target = TargetDomain([("patients", "improved"), ("placebo", "given"), ("patients", "recovered")] * 4)
    selection = TransferSelection(_WordScorer(), target, [("mice", "alleles"), ("strain", "survey")] * 4)
    assert selection.accuracy == 1.0 and selection.record()["target_sentences"] == 12
    clinical, genetic = selection.scores(
        ["patients improved", "mice alleles"],
        [["improved"], ["alleles", "Given"]],
        ["mice alleles", "mice alleles"],
        [True, True],
        [0.0, 0.5],
        [1.0, 0.0],
    )
    assert clinical.style > 0.5 > genetic.style
    assert clinical.adequacy == 0.0 and genetic.adequacy == 1.0  # cosine to the source sentence
    assert clinical.in_vocabulary == 1.0 and genetic.in_vocabulary == 0.5  # "Given" is the target's, case aside
    assert genetic.fluency == 0.5 and clinical.diversity == 1.0
    lopsided = TransferSelection(_WordScorer(), TargetDomain([("patients",)] * 4), [("mice",)])
    assert lopsided.accuracy is None  # the held-out sentence is the only source one: nothing to measure
    with pytest.raises(ValueError, match="no sentence"):
        TargetDomain([()])
