"""The privacy path: what may copy the user's text is caught, what is unchecked is never published unasked, and the
user's text leaves only when told to."""

from __future__ import annotations

import json
import re

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from hf_ecg.cli import main
from tiny import save_tiny_ecg_model, toy_corpus

#: Private sentences with names: a word ``name/C`` is a Chemical, ``name/D`` a Disease.
PRIVATE = [
    "Three of the patients given aspirin/C for a week developed a severe headache/D after the second dose .",
    "In the control group paracetamol/C was stopped because of a fever/D that lasted more than two days .",
    "All twelve children treated with ibuprofen/C recovered without nausea/D or any other complaint at home .",
]
OTHER_TEXT = [
    "The weather report did not mention anything about the hospital or its visitors .",
    "Nobody expected the meeting to end before the evening train left the station .",
]
SWAP = {"aspirin": "paracetamol", "paracetamol": "ibuprofen", "ibuprofen": "aspirin", "headache": "nausea"}
SWAP |= {"fever": "headache", "nausea": "fever"}


def labelled(sentence: str) -> tuple[list[str], list[str]]:
    tokens, tags = [], []
    for word in sentence.split():
        name, _, kind = word.partition("/")
        tokens.append(name)
        tags.append({"C": "B-Chemical", "D": "B-Disease"}.get(kind, "O"))
    return tokens, tags


def planted_copies() -> list[tuple[list[str], list[str]]]:
    """Each private sentence copied word for word (its names labelled, and left O), with other names in its slots,
    and with one ordinary word changed."""
    copies = []
    for sentence in PRIVATE:
        tokens, tags = labelled(sentence)
        copies.append((tokens, tags))
        copies.append((tokens, ["O"] * len(tokens)))
        copies.append(([SWAP.get(t, t) if g != "O" else t for t, g in zip(tokens, tags, strict=True)], tags))
        changed = next(i for i, g in enumerate(tags) if g == "O" and i > 2)
        copies.append(([*tokens[:changed], "several", *tokens[changed + 1 :]], tags))
    return copies


def write_text(path):
    path.write_text("\n".join([*(" ".join(labelled(s)[0]) for s in PRIVATE), *OTHER_TEXT]) + "\n", encoding="utf-8")
    return path


def write_dictionary(folder):
    folder.mkdir()
    (folder / "Chemical.txt").write_text("aspirin\nparacetamol\nibuprofen\n", encoding="utf-8")
    (folder / "Disease.txt").write_text("headache\nfever\nnausea\n", encoding="utf-8")
    return folder


def plant(folder, copies) -> list[int]:
    """Replace the first samples of ``folder``'s first shard with ``copies``; their ids."""
    from hf_ecg.data.manifest import read_manifest

    names = read_manifest(folder).label_names
    shard = sorted((folder / "data").glob("*.parquet"))[0]
    table = pq.read_table(shard)
    tokens, tags = table.column("tokens").to_pylist(), table.column("ner_tags").to_pylist()
    assert len(tokens) > len(copies)
    for k, (words, labels) in enumerate(copies):
        tokens[k], tags[k] = words, [names.index(label) for label in labels]
    for column, values in (("tokens", tokens), ("ner_tags", tags)):
        at = table.schema.get_field_index(column)
        table = table.set_column(at, table.schema.field(column), pa.array(values, table.schema.field(column).type))
    pq.write_table(table, shard)
    return table.column("id").to_pylist()[: len(copies)]


def lcs(a, b) -> int:
    table = [[0] * (len(b) + 1) for _ in range(len(a) + 1)]
    for i, x in enumerate(a):
        for j, y in enumerate(b):
            table[i + 1][j + 1] = table[i][j] + 1 if x == y else max(table[i][j + 1], table[i + 1][j])
    return table[-1][-1]


def highest_rouge_l(samples, sentences) -> float:
    """The highest ROUGE-L F1 of any sample with any sentence, case aside, by trying every pair."""
    return max(
        2 * lcs([t.lower() for t in s], [t.lower() for t in r]) / (len(s) + len(r)) for s in samples for r in sentences
    )


def check_card_against_the_text(folder, text_sentences) -> None:
    """The card's and the manifest's ROUGE-L maximum of the kept samples is the one computed here."""
    import datasets

    kept = datasets.load_dataset(str(folder), split="train")["tokens"]
    true_max = highest_rouge_l(kept, text_sentences)
    record = json.loads((folder / "ecg_generation.json").read_text())["selection"]["shared_runs"]["kept"]
    assert record["samples"] == len(kept) and record["rouge_l_max"] == round(true_max, 4)
    card = (folder / "README.md").read_text(encoding="utf-8")
    found = re.search(r"nearest sentence of the text is ([\d.]+) on average, ([\d.]+) at most", card)
    assert found and float(found.group(2)) == round(true_max, 3)


@pytest.fixture(scope="module")
def model(tmp_path_factory):
    return save_tiny_ecg_model(tmp_path_factory.mktemp("ecg"))


def test_filter_text_copy_drops_every_planted_copy_and_its_card_tells_the_true_rouge_l(tmp_path, model):
    import datasets

    gold, text = toy_corpus(tmp_path / "gold.tsv", repeat=2), write_text(tmp_path / "private.txt")
    generated = tmp_path / "set"
    assert main(["generate", "--model", str(model), "-n", "24", "-o", str(generated), "--max-block-tokens", "6"]) == 0
    planted = plant(generated, planted_copies())
    kept_dir = tmp_path / "shareable"
    argv = ["filter", "--generated", str(generated), "--gold", str(gold), "--rule", "text-copy"]
    assert main([*argv, "--unlabelled", str(text), "-o", str(kept_dir)]) == 0
    kept_ids = set(datasets.load_dataset(str(kept_dir), split="train")["id"])
    assert kept_ids and not kept_ids & set(planted)
    check_card_against_the_text(kept_dir, [line.split() for line in text.read_text().splitlines()])


def generate_shareable(tmp_path, model, samples: int):
    """``generate --shareable`` of ``samples`` with the private text: the checked set, its unchecked source, the
    text."""
    text = write_text(tmp_path / "private.txt")
    out = tmp_path / "shareable"
    argv = [
        "generate", "--model", str(model), "-n", str(samples), "-o", str(out), "--max-block-tokens", "6",
        "--dictionary", str(write_dictionary(tmp_path / "dictionary")), "--unlabelled", str(text),
        "--gold", str(toy_corpus(tmp_path / "gold.tsv", repeat=2)), "--shareable",
    ]  # fmt: skip
    assert main(argv) == 0
    return out, tmp_path / "shareable-unfiltered", text


def test_generate_shareable_drops_every_copy_planted_before_its_check(tmp_path, model, monkeypatch, capsys):
    import datasets

    from hf_ecg.synthetic import generate

    real = generate.generate_dataset
    planted: list[int] = []

    def generate_then_plant(model_name, output, *args, **kwargs):
        folder = real(model_name, output, *args, **kwargs)
        planted.extend(plant(output, planted_copies()))
        return folder

    monkeypatch.setattr(generate, "generate_dataset", generate_then_plant)
    out, _, text = generate_shareable(tmp_path, model, 24)
    kept_ids = set(datasets.load_dataset(str(out), split="train")["id"])
    assert planted and kept_ids and not kept_ids & set(planted)
    record = json.loads((out / "ecg_generation.json").read_text())
    assert record["copy_checked"] is True and record["selection"]["dropped"]["text-copy"] >= len(planted)
    check_card_against_the_text(out, [line.split() for line in text.read_text().splitlines()])


@pytest.fixture
def shareable(tmp_path, model):
    """A checked set and its unchecked source (``generate --shareable``), and the text they were checked against."""
    return generate_shareable(tmp_path, model, 12)


def test_a_set_filtered_from_an_unchecked_one_stays_unchecked_until_the_text_copy_rule_checks_it(
    tmp_path, shareable, capsys
):
    checked, raw, text = shareable
    gold = str(toy_corpus(tmp_path / "gold.tsv"))
    derived, rechecked = tmp_path / "derived", tmp_path / "rechecked"
    assert main(["filter", "--generated", str(raw), "--gold", gold, "--rule", "duplicate", "-o", str(derived)]) == 0
    capsys.readouterr()
    for folder, fix in ((raw, f"publish {checked}, the checked set"), (derived, "check it first")):
        refused = tmp_path / f"refused-{folder.name}"
        assert main(["push-dataset", "--data", str(folder), "--repo-id", "me/set", "--local-dir", str(refused)]) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and "not checked against your text" in err[0] and fix in err[0]
        assert not refused.exists()
    exported = tmp_path / "derived.tsv"
    assert main(["export", "--data", str(derived), "-o", str(exported)]) == 0
    assert capsys.readouterr().err.count("not checked against your text") == 1 and exported.is_file()
    argv = ["filter", "--generated", str(derived), "--gold", gold, "--rule", "text-copy", "--unlabelled", str(text)]
    assert main([*argv, "-o", str(rechecked)]) == 0
    assert (
        main(["push-dataset", "--data", str(rechecked), "--repo-id", "me/set", "--local-dir", str(tmp_path / "h")]) == 0
    )
    assert main(["export", "--data", str(checked), "-o", str(tmp_path / "checked.tsv")]) == 0
    assert "not checked" not in capsys.readouterr().err


def test_push_dataset_publishes_the_silver_split_only_when_told(tmp_path, model, monkeypatch, capsys):
    import datasets

    from hf_ecg.hub import push

    uploads = []

    def upload(folder, repo_id, repo_type, private, token):
        uploads.append(sorted({p.relative_to(folder).parts[0] for p in folder.rglob("*.parquet")}))
        said = "goes with the set" in capsys.readouterr().err  # before anything leaves
        assert said == ("silver" in uploads[-1])
        return f"https://hub/{repo_id}"

    monkeypatch.setattr(push, "_upload", upload)
    text = write_text(tmp_path / "private.txt")
    out = tmp_path / "set"
    argv = ["generate", "--model", str(model), "-n", "4", "-o", str(out), "--max-block-tokens", "6"]
    assert main([*argv, "--dictionary", str(write_dictionary(tmp_path / "d")), "--unlabelled", str(text)]) == 0
    card = (out / "README.md").read_text(encoding="utf-8")
    assert "every label, `O` included, is the dictionary's" in card  # the weights it holds: 1.0 everywhere
    assert {w for row in datasets.load_dataset(str(out), split="silver")["label_weights"] for w in row} == {1.0}
    capsys.readouterr()
    local = tmp_path / "local"
    for extra in ([], ["--local-dir", str(local)]):
        assert main(["push-dataset", "--data", str(out), "--repo-id", "me/set", *extra]) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and "holds a silver split: 5 sentences of your own text" in err[0]
        assert "--silver" in err[0] and "--no-silver" in err[0] and "silver=True" not in err[0]
    assert not uploads and not local.exists()
    assert main(["push-dataset", "--data", str(out), "--repo-id", "me/set", "--silver"]) == 0
    assert main(["push-dataset", "--data", str(out), "--repo-id", "me/set", "--no-silver"]) == 0
    assert uploads == [["data", "silver"], ["data"]]


def test_selection_options_are_checked_before_any_model_is_loaded(tmp_path, capsys):
    gold = str(toy_corpus(tmp_path / "gold.tsv"))
    text = write_text(tmp_path / "private.txt")
    dictionary = str(write_dictionary(tmp_path / "dictionary"))
    argv = ["generate", "--model", str(tmp_path / "no-model"), "-n", "4", "-o", str(tmp_path / "out")]
    shareable = [*argv, "--dictionary", dictionary, "--unlabelled", str(text), "--shareable"]
    for extra, says in (
        (["--gold", gold, "--max-shared-run", "0"], "--max-shared-run is a number of words, at least 1; got 0"),
        (["--gold", gold, "--max-shared-run", "-1"], "--max-shared-run is a number of words, at least 1; got -1"),
        ([], "--shareable needs --gold"),
    ):
        assert main([*shareable, *extra]) == 2
        assert says in capsys.readouterr().err
    with pytest.raises(SystemExit) as exited:
        main([*shareable, "--gold", gold, "--max-shared-run", "abc"])
    assert exited.value.code == 2 and "--max-shared-run" in capsys.readouterr().err
    assert main([*argv, "--max-shared-run", "4"]) == 2
    assert "--max-shared-run would do nothing" in capsys.readouterr().err
    assert main([*argv, "--gold", gold, "--filter", "duplicate", "--max-shared-run", "4"]) == 2
    assert "--max-shared-run would do nothing" in capsys.readouterr().err
    filter_argv = ["filter", "--generated", str(tmp_path / "none"), "--gold", gold, "-o", str(tmp_path / "kept")]
    assert main([*filter_argv, "--rule", "duplicate", "--max-shared-run", "4"]) == 2
    assert "--max-shared-run would do nothing" in capsys.readouterr().err
    assert not any(tmp_path.glob("out*")) and not (tmp_path / "kept").exists()


def test_a_dictionary_never_labels_english_function_words_with_or_without_gold(tmp_path, model, capsys):
    import datasets

    from hf_ecg.labelling.dictionary import Dictionary

    names = Dictionary({"Chemical": ["the", "was", "with", "aspirin"], "Disease": ["Fever", "ALL"]})
    tokens = "the fever was treated with aspirin in ALL of them".split()
    assert [(s.start, s.label) for s in names.spans(tokens)] == [(1, "Disease"), (5, "Chemical")]
    assert names.function_words() == ["all", "the", "was", "with"]

    folder = tmp_path / "dictionary"
    folder.mkdir()
    (folder / "Chemical.txt").write_text("the\nwas\nwith\naspirin\n", encoding="utf-8")
    text = tmp_path / "text.txt"
    text.write_text("The patient was given aspirin with water .\nthe fever was high .\n", encoding="utf-8")
    out = tmp_path / "set"
    argv = ["generate", "--model", str(model), "-n", "4", "-o", str(out), "--max-block-tokens", "6"]
    assert main([*argv, "--dictionary", str(folder), "--unlabelled", str(text)]) == 0  # no --gold
    assert "3 names are English function words, never looked up (the, was, with)" in capsys.readouterr().err
    silver = datasets.load_dataset(str(out), split="silver")
    label_names = silver.features["ner_tags"].feature.names
    found = [
        word for row in silver for word, tag in zip(row["tokens"], row["ner_tags"], strict=True) if tag
    ]  # every word labelled as an entity
    assert found == ["aspirin"]
    samples = datasets.load_dataset(str(out), split="train")
    filled = {
        word.lower()
        for row in samples
        for word, tag in zip(row["tokens"], row["ner_tags"], strict=True)
        if label_names[tag].endswith("Chemical")
    }
    assert filled <= {"aspirin"}


def test_library_messages_speak_the_command_s_options(tmp_path, model, capsys):
    gold = toy_corpus(tmp_path / "gold.tsv")
    out = tmp_path / "set"
    assert main(["generate", "--model", str(model), "-n", "2", "-o", str(out), "--max-block-tokens", "4"]) == 0
    taken = tmp_path / "taken.tsv"
    taken.write_text("x\n", encoding="utf-8")
    capsys.readouterr()
    assert main(["export", "--data", str(out), "-o", str(taken)]) == 2
    err = capsys.readouterr().err
    assert "or --overwrite to replace it" in err and "overwrite=True" not in err
    kept = tmp_path / "kept"
    argv = ["filter", "--generated", str(out), "--gold", str(gold), "-o", str(kept), "--rule", "duplicate"]
    assert main([*argv, "--near-copy-threshold", "2"]) == 2
    err = capsys.readouterr().err
    assert "--near-copy-threshold is a ROUGE-L score" in err and "near_copy_threshold" not in err


def test_a_push_of_an_unfinished_folder_says_it_is_unfinished_not_that_its_silver_is_gone(tmp_path, model, capsys):
    import shutil

    text = write_text(tmp_path / "private.txt")
    out = tmp_path / "set"
    argv = ["generate", "--model", str(model), "-n", "4", "-o", str(out), "--max-block-tokens", "6"]
    assert main([*argv, "--dictionary", str(write_dictionary(tmp_path / "d")), "--unlabelled", str(text)]) == 0
    shutil.rmtree(out / "silver")  # as a run stopped before its finish leaves it: shards waiting, no split yet
    (out / "data").rename(out / "unfinished")
    capsys.readouterr()
    for said in ([], ["--silver"], ["--no-silver"]):
        pushed = tmp_path / "pushed"
        assert main(["push-dataset", "--data", str(out), "--repo-id", "me/set", "--local-dir", str(pushed), *said]) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and "is an unfinished generation" in err[0] and "silver" not in err[0]
        assert not pushed.exists()


def test_train_and_evaluate_speak_of_their_options_and_costs(tmp_path, monkeypatch, capsys):
    from hf_ecg import modeling
    from tiny import save_tiny_model

    data = toy_corpus(tmp_path / "toy.tsv")
    names = tmp_path / "names.json"
    names.write_text('{"Chemical": ["Aspirin"], "Disease": ["fever"]}', encoding="utf-8")
    argv = ["train", "--data", str(data), "--model", str(save_tiny_model(tmp_path / "base")), "-o", str(tmp_path / "m")]
    text = ["--unlabelled", str(write_text(tmp_path / "text.txt")), "--dictionary", str(names)]
    assert main([*argv, *text, "--text-sentences", "0", "--max-steps", "1"]) == 2
    err = capsys.readouterr().err
    assert "--text-sentences must be >= 1" in err and "text_sentences" not in err
    assert not (tmp_path / "m").exists()

    monkeypatch.setattr(modeling, "inference_dtype", lambda name, device="cpu": "float32")  # a CPU without it
    ner = ["evaluate", "ner", "--train", str(tmp_path / "missing.tsv"), "--test", str(data), "--bf16"]
    assert main(ner) == 2  # refused for its missing file, after the note, before any training
    assert "--bf16: this CPU has no native bfloat16" in capsys.readouterr().err
