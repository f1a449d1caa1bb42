"""Label noise: a set's labels scored against a reference tagger (`hf-ecg evaluate labels`), the saved tagger
that serves as one, and the errors counted by kind."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from hf_ecg.cli import main
from hf_ecg.data.corpus import read_conll
from hf_ecg.evaluation.labels import ERROR_KINDS, agreement_by_origin, label_agreement, label_errors
from hf_ecg.evaluation.ner import evaluate_ner
from hf_ecg.runtime.tags import tags_to_spans
from hf_ecg.taggers.metrics import entity_scores
from hf_ecg.taggers.tagger import TAGGER_RECORD, NERConfig, Tagger
from tiny import save_tiny_bert, save_tiny_model, toy_corpus

# The toy corpus (tests/tiny.py) has four sentences, e.g. "Ibuprofen/B-Chemical relieves severe/B-Disease
# pain/I-Disease ." and "No effect was seen ." (no entity).
NOISY = """\
Ibuprofen\tO
relieves\tB-Chemical
severe\tB-Disease
pain\tI-Disease
.\tO

Aspirin\tB-Disease
cures\tO
headache\tB-Disease
.\tO

Patients\tO
with\tO
fever\tB-Disease
received\tO
paracetamol\tO
.\tO
"""


@pytest.fixture(scope="module")
def reference(tmp_path_factory):
    """A tiny BERT that has learnt the toy corpus by heart, saved as `evaluate ner --save-taggers` saves it."""
    directory = tmp_path_factory.mktemp("reference")
    corpus = read_conll(toy_corpus(directory / "toy.tsv", repeat=8))
    test = read_conll(toy_corpus(directory / "test.tsv"))
    config = NERConfig(
        model=str(save_tiny_bert(directory / "bert")), epochs=15, batch_size=4, learning_rate=5e-3, seeds=[1]
    )
    report = evaluate_ner([corpus], test, config, save_taggers=directory / "taggers")
    assert report["entity_f1_mean"] == 1.0, report
    return directory / "taggers" / "seed-1"


def test_a_saved_tagger_loads_with_its_labels_record_and_predictions(reference, tmp_path):
    tagger = Tagger.from_pretrained(reference)
    record = json.loads((reference / TAGGER_RECORD).read_text())
    assert tagger.labels == record["labels"] == ["O", "B-Chemical", "I-Chemical", "B-Disease", "I-Disease"]
    assert tagger.entity_types == ["Chemical", "Disease"]
    assert tagger.record["test"]["entity_f1"] == 1.0 and tagger.record["test"]["sentences"] == 4
    assert tagger.record["train"] == [{"name": "toy.tsv", "sentences": 32}]
    gold = read_conll(toy_corpus(tmp_path / "toy.tsv"))
    assert tagger.predict([s.tokens for s in gold]) == [s.tags for s in gold]
    with pytest.raises(FileExistsError, match="not an empty folder"):
        tagger.save_pretrained(reference)
    with pytest.raises(FileExistsError, match="seed-1 already exist"):  # checked before any training
        evaluate_ner([gold], gold, NERConfig(model="no-such-encoder", seeds=[1]), save_taggers=reference.parent)


def test_gold_labels_agree_fully_and_noisy_ones_are_counted_by_kind(reference, tmp_path):
    tagger = Tagger.from_pretrained(reference)
    gold = read_conll(toy_corpus(tmp_path / "toy.tsv"))
    report = label_agreement(gold, tagger)
    assert (report["precision"], report["recall"], report["f1"]) == (1.0, 1.0, 1.0)
    assert report["errors"] == dict.fromkeys(ERROR_KINDS, 0)
    assert report["ceiling"]["entity_f1"] == 1.0 and report["ceiling"]["name"] == "test.tsv"

    (tmp_path / "noisy.tsv").write_text(NOISY, encoding="utf-8")
    noisy = read_conll(tmp_path / "noisy.tsv")
    report = label_agreement(noisy, tagger, test=gold, examples=5)
    # the set's 5 entities: severe pain and headache agree; "relieves" is not one, Aspirin is the wrong type and
    # fever agrees; the reference's 6: Ibuprofen and paracetamol are left O.
    assert (report["entities"], report["reference_entities"]) == (5, 6)
    assert report["precision"] == pytest.approx(3 / 5) and report["recall"] == pytest.approx(3 / 6)
    assert report["errors"] == {"wrong-type": 1, "boundary": 0, "not-an-entity": 1, "left-O": 2}
    assert report["per_type"]["Chemical"]["support"] == 3 and report["per_type"]["Chemical"]["recall"] == 0.0
    assert report["ceiling"] == {
        "name": "toy.tsv",
        "sentences": 4,
        "entity_f1": 1.0,
        "entity_precision": 1.0,
        "entity_recall": 1.0,
    }
    assert [example["sentence"] for example in report["examples"]] == [0, 1, 2]  # every sentence disagrees
    assert report["examples"][0] == {
        "sentence": 0,
        "labelled": "Ibuprofen [Chemical: relieves] [Disease: severe pain] .",
        "reference": "[Chemical: Ibuprofen] relieves [Disease: severe pain] .",
        "errors": ["not-an-entity", "left-O"],
    }


def test_agreement_is_split_between_gold_mentions_and_new_ones(tmp_path):
    """A reference knows the gold names best: precision and recall apart for mentions a gold sentence holds
    (type and words) and the rest, so that recycling gold mentions cannot pass for better labels."""
    toy = read_conll(toy_corpus(tmp_path / "toy.tsv"))
    gold = [toy[0], toy[1]]  # Aspirin, headache, Ibuprofen, severe pain
    (tmp_path / "noisy.tsv").write_text(NOISY, encoding="utf-8")
    noisy = read_conll(tmp_path / "noisy.tsv")
    predicted = [toy[1].tags, toy[0].tags, toy[2].tags]  # the reference reads the noisy set's words rightly
    origin = agreement_by_origin(noisy, predicted, gold)
    # set: severe pain and headache (gold, both right); relieves, Aspirin as a Disease, fever (new, fever right)
    assert origin["gold"] == {"entities": 2, "precision": 1.0, "reference_entities": 4, "recall": 0.5}
    assert origin["new"]["entities"] == 3 and origin["new"]["precision"] == pytest.approx(1 / 3)
    # reference: Ibuprofen, Aspirin (gold, left unlabelled or mistyped), fever (new, labelled), paracetamol (new)
    assert origin["new"]["reference_entities"] == 2 and origin["new"]["recall"] == 0.5
    assert agreement_by_origin([], [], gold) == {
        o: {"entities": 0, "precision": None, "reference_entities": 0, "recall": None} for o in ("gold", "new")
    }


_TAGS = st.lists(st.sampled_from(["O", "O", "B-A", "I-A", "B-B", "I-B"]), min_size=1, max_size=12)


@given(st.data())
def test_errors_account_for_every_entity_that_does_not_match(data):
    """Every set entity is matched by the reference or is one error of the set's kinds; every reference entity
    is matched, overlapped by a set entity, or left O: the counts tie back to precision and recall."""
    labelled = data.draw(_TAGS)
    reference = data.draw(
        st.lists(st.sampled_from(["O", "B-A", "I-A", "B-B", "I-B"]), min_size=len(labelled), max_size=len(labelled))
    )
    ours = tags_to_spans(labelled, "IOB2")[0]
    theirs = tags_to_spans(reference, "IOB2")[0]
    errors = label_errors(labelled, reference)
    set_errors = [kind for kind, _ in errors if kind != "left-O"]
    scores = entity_scores([reference], [labelled])
    matched = len({(s.start, s.end, s.label) for s in ours} & {(s.start, s.end, s.label) for s in theirs})
    assert len(set_errors) == len(ours) - matched
    assert scores["precision"] == (matched / len(ours) if ours else 0.0)
    left_o = [span for kind, span in errors if kind == "left-O"]
    assert all(all(tag == "O" for tag in labelled[span.start : span.end]) for span in left_o)
    if labelled == reference:
        assert errors == []


def test_cli_evaluate_labels_and_its_named_errors(reference, tmp_path, capsys):
    toy = toy_corpus(tmp_path / "toy.tsv")
    (tmp_path / "noisy.tsv").write_text(NOISY, encoding="utf-8")
    out = tmp_path / "labels.json"
    code = main(
        [
            "evaluate",
            "labels",
            "--data",
            str(tmp_path / "noisy.tsv"),
            "--reference",
            str(reference),
            "--examples",
            "2",
            "--gold",
            f"{toy}:2",
            "-o",
            str(out),
        ]
    )
    assert code == 0
    printed = json.loads(capsys.readouterr().out)
    assert printed == json.loads(out.read_text())
    assert printed["f1"] == pytest.approx(6 / 11) and len(printed["examples"]) == 2
    assert printed["ceiling"]["entity_f1"] == 1.0  # from the reference's record
    assert printed["new_mention_share"] == pytest.approx(3 / 5)  # relieves, Aspirin as a Disease, fever
    assert printed["by_origin"]["gold"]["entities"] == 2 and printed["by_origin"]["new"]["entities"] == 3

    # a set with a type the reference does not label
    (tmp_path / "gene.tsv").write_text("BRCA1\tB-Gene\nmutates\tO\n", encoding="utf-8")
    assert main(["evaluate", "labels", "--data", str(tmp_path / "gene.tsv"), "--reference", str(reference)]) == 2
    err = capsys.readouterr().err
    assert "the reference does not label Gene" in err and "it labels Chemical, Disease" in err
    # nor a test split with one (its ceiling would score the type at 0)
    argv = [
        "evaluate",
        "labels",
        "--data",
        str(toy),
        "--reference",
        str(reference),
        "--test",
        str(tmp_path / "gene.tsv"),
    ]
    assert main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert "does not label Gene, which gene.tsv has" in err[-1] and "the test split" in err[-1]
    # references that are no token classifier: a causal LM, a bare encoder, a folder that is not a model
    models = (save_tiny_model(tmp_path / "gpt2"), save_tiny_bert(tmp_path / "bert"))
    capsys.readouterr()
    for model in models:
        assert main(["evaluate", "labels", "--data", str(toy), "--reference", str(model)]) == 2
        err = capsys.readouterr().err
        assert "is not a token classifier" in err and err.count("\n") == 1, err
    assert main(["evaluate", "labels", "--data", str(toy), "--reference", str(tmp_path / "missing")]) == 2
    assert "cannot load model" in capsys.readouterr().err
    # an unfinished generation is refused with the command that resumes it
    partial = tmp_path / "partial"
    (partial / "data").mkdir(parents=True)
    (partial / "ecg_generation.json").write_text(json.dumps({"num_samples": 12, "entity_types": ["Chemical"]}))
    assert main(["evaluate", "labels", "--data", str(partial), "--reference", str(reference)]) == 2
    assert "unfinished" in capsys.readouterr().err


def test_evaluate_labels_says_when_the_reference_never_learnt_a_type_of_the_set(reference, tmp_path, caplog):
    import shutil

    record = json.loads((reference / TAGGER_RECORD).read_text())
    assert record["trained_types"] == ["Chemical", "Disease"]  # written by evaluate ner --save-taggers
    chemicals_only = tmp_path / "chemicals-only"
    shutil.copytree(reference, chemicals_only)
    (chemicals_only / TAGGER_RECORD).write_text(json.dumps({**record, "trained_types": ["Chemical"]}))
    data = read_conll(toy_corpus(tmp_path / "toy.tsv"))
    with caplog.at_level("WARNING"):
        report = label_agreement(data, Tagger.from_pretrained(chemicals_only))
    assert report["unlearnt_types"] == ["Disease"]
    assert "the reference was trained on no Disease entity" in caplog.text
    assert label_agreement(data, Tagger.from_pretrained(reference))["unlearnt_types"] == []
