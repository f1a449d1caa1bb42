"""The user's mention lists (a gazetteer: one plain-text file per type) as a mention source, through the Python
API, the pipeline and `hf-ecg generate`; the file format's inverse as a property; bad lists as named errors."""

from __future__ import annotations

import json
import unicodedata
from collections import Counter
from dataclasses import replace
from pathlib import Path

import datasets
import pytest
from hypothesis import given
from hypothesis import strategies as st

from hf_ecg.cli import main
from hf_ecg.data.dataset_format import read_manifest
from hf_ecg.hub.dataset_card import ECGDatasetCardData
from hf_ecg.runtime.filling import MentionFiller
from hf_ecg.runtime.mention_sources import MentionLists
from hf_ecg.runtime.mentions import MentionBank, mention_list_files, read_mention_list
from hf_ecg.runtime.words import WordSplitter
from hf_ecg.synthetic.generate import generate_dataset
from hf_ecg.synthetic.run_config import DatasetRunConfig
from tiny import GENERATION_MENTIONS

DISEASES = ["acute asthma", "Parkinson's disease", "fever (acute)", "migraine"]


def write_list(path: Path, lines: list[str]) -> Path:
    path.write_text("".join(f"{line}\n" for line in lines), encoding="utf-8")
    return path


def mentions_of(dataset: datasets.Dataset, label: str) -> set[tuple[str, ...]]:
    found = set()
    for row in dataset:
        for span in row["spans"]:
            if span["label"] == label:
                found.add(tuple(row["text"][span["start"] : span["end"]].split(" ")))
    return found


words = st.text(st.characters(whitelist_categories=("L", "N")), min_size=1, max_size=6).map(
    lambda w: unicodedata.normalize("NFC", w)  # what a list reads back, so that a saved bank reads back the same
)
mention_lines = st.lists(st.tuples(st.lists(words, min_size=1, max_size=3), st.integers(1, 9)), min_size=1, max_size=8)


@given(mention_lines)
def test_a_list_reads_back_its_mentions_and_counts(tmp_path_factory, lines):
    """mention<TAB>count lines (and blank lines between them) read back as the counter they were written from,
    NFC-normalized as the corpus reader normalizes text."""
    path = tmp_path_factory.mktemp("lists") / "Disease.txt"
    write_list(path, ["", *[f"{' '.join(tokens)}\t{count}" for tokens, count in lines], "   "])
    expected: Counter[tuple[str, ...]] = Counter()
    for tokens, count in lines:
        expected[tuple(unicodedata.normalize("NFC", token) for token in tokens)] += count
    assert read_mention_list(path) == expected


@given(st.dictionaries(st.sampled_from(["Chemical", "Disease", "cell_line"]), mention_lines, min_size=1, max_size=3))
def test_a_bank_saved_as_lists_reads_back_as_the_same_bank(tmp_path_factory, lists):
    counts = {label: Counter() for label in lists}
    for label, lines in lists.items():
        for tokens, count in lines:
            counts[label][tuple(tokens)] += count
    bank = MentionBank(counts)
    files = bank.save_list_files(tmp_path_factory.mktemp("bank"))
    assert {label: file.name for label, file in files.items()} == {label: f"{label}.txt" for label in lists}
    assert MentionBank.from_list_files(mention_list_files(files[next(iter(files))].parent)) == bank


def test_a_list_is_tokenized_the_way_the_corpus_writes_its_tokens(tmp_path):
    split = WordSplitter(["e.g."])
    path = write_list(tmp_path / "Disease.txt", [*DISEASES, "pain, e.g."])
    read = read_mention_list(path, split)
    assert ("fever", "(", "acute", ")") in read and ("pain", ",", "e.g.") in read
    assert set(read) == {tuple(split(line)) for line in [*DISEASES, "pain, e.g."]}


def test_bad_lists_are_named_errors(tmp_path):
    with pytest.raises(ValueError, match=r"empty\.txt: no mentions in the list \(one mention per line\)"):
        read_mention_list(write_list(tmp_path / "empty.txt", ["", "  "]))
    latin = tmp_path / "latin.txt"
    latin.write_bytes("fever\nGrippe, f\xe9brile\n".encode("latin-1"))
    with pytest.raises(ValueError, match=r"latin\.txt:2: not utf-8 text \(byte 0xe9 at column 10 does not decode"):
        read_mention_list(latin)
    with pytest.raises(ValueError, match=r"count\.txt:2: 'many' after the tab is not a count"):
        read_mention_list(write_list(tmp_path / "count.txt", ["fever\t2", "pain\tmany"]))
    with pytest.raises(ValueError, match=r"no mention lists in the folder \(one TYPE\.txt file per type\)"):
        mention_list_files(tmp_path / "nothing-here")
    with pytest.raises(ValueError, match=r"the mention list for 'Disease', .*missing\.txt, is not a file"):
        mention_list_files({"Disease": tmp_path / "missing.txt"})


def test_a_list_for_a_type_the_model_does_not_write_names_the_ones_it_does(tiny, tmp_path):
    _, _, config = tiny
    lists = {"Diseese": write_list(tmp_path / "d.txt", DISEASES)}
    with pytest.raises(ValueError, match=r"\['Diseese'\] this model does not write \(.*d\.txt\); its types: Chemical"):
        MentionFiller.from_source(lists, config)


def test_lists_fill_their_types_and_the_bank_the_others(tiny, tmp_path):
    config = replace(tiny[2], mention_bank=MentionBank.from_lists(GENERATION_MENTIONS).to_dict())
    folder = tmp_path / "lists"
    folder.mkdir()
    write_list(folder / "Disease.txt", [f"{m}\t{i + 1}" for i, m in enumerate(DISEASES)])
    filler = MentionFiller.from_source(folder, config)  # a folder of TYPE.txt
    assert filler.strategy == "random"
    assert set(filler.bank.counts("Disease")) == {tuple(WordSplitter()(m)) for m in DISEASES}
    assert filler.bank.counts("Chemical") == MentionBank.from_dict(config.mention_bank).counts("Chemical")
    weighted = MentionFiller.from_source(MentionLists({"Disease": folder / "Disease.txt"}, "weighted"), config)
    assert weighted.strategy == "weighted" and weighted.bank.counts("Disease")[("migraine",)] == 4
    with pytest.raises(ValueError, match="unknown fill strategy 'often'"):
        MentionLists(folder, "often")


def test_generate_dataset_draws_list_mentions_records_them_and_refuses_a_changed_list(model_dir, tmp_path):
    diseases = write_list(tmp_path / "diseases.txt", DISEASES)
    out = tmp_path / "gen"
    generate_dataset(
        model_dir, out, 12, mentions={"Disease": str(diseases)}, seed=1, run=DatasetRunConfig(progress_bar=False)
    )
    data = datasets.load_dataset(str(out), split="train")
    listed = {tuple(WordSplitter()(m)) for m in DISEASES}
    assert mentions_of(data, "Disease") and mentions_of(data, "Disease") <= listed
    bank_chemicals = {tuple(m.split()) for m in GENERATION_MENTIONS["Chemical"]}
    assert mentions_of(data, "Chemical") <= bank_chemicals
    record = read_manifest(out).mentions.to_dict()
    assert record["source"] == "lists" and record["lists"] == {"Disease": str(diseases)}
    assert record["strategy"] == "random" and record["bank"] == "generator" and len(record["digest"]) == 16
    manifest = read_manifest(out)
    novelty = manifest.mention_novelty  # the Disease mentions are new, the Chemical ones the bank's
    spans = [s for row in data for s in row["spans"]]
    assert novelty["mentions"] == len(spans) and novelty["new"] == sum(s["label"] == "Disease" for s in spans)
    card = " ".join((out / "README.md").read_text().split())
    assert "drawn uniformly from the user's mention lists (Disease: `diseases.txt`" in card
    assert f"{100 * novelty['share']:.0f}% of the {len(spans)} mentions are not in the generator's training" in card
    assert "the other types from the generator's mention bank" in card

    # The same command resumes; after the list changed it is refused, naming the setting.
    generate_dataset(
        model_dir, out, 12, mentions={"Disease": str(diseases)}, seed=1, run=DatasetRunConfig(progress_bar=False)
    )
    write_list(diseases, [*DISEASES, "gout"])
    with pytest.raises(ValueError, match="differing: mentions"):
        generate_dataset(
            model_dir, out, 12, mentions={"Disease": str(diseases)}, seed=1, run=DatasetRunConfig(progress_bar=False)
        )


def test_the_pipeline_takes_mention_lists(gen, tmp_path):
    diseases = write_list(tmp_path / "Disease.txt", DISEASES)
    listed = {" ".join(WordSplitter()(m)) for m in DISEASES}
    for mentions in ({"Disease": str(diseases)}, str(tmp_path)):
        outputs = gen([["Disease", "Chemical"]], num_return_sequences=3, seed=0, mentions=mentions)
        for sample in outputs[0]:
            disease = next(s for s in sample["spans"] if s["label"] == "Disease")
            assert sample["text"][disease["start"] : disease["end"]] in listed


def test_cli_generate_with_mention_lists_and_their_errors(model_dir, tmp_path, capsys):
    diseases = write_list(tmp_path / "diseases.txt", DISEASES)
    genes = write_list(tmp_path / "genes.txt", ["BRCA2\t3", "TP53"])
    out = tmp_path / "gen"
    code = main(
        [
            "generate",
            "--model",
            str(model_dir),
            "-n",
            "6",
            "-o",
            str(out),
            "--mentions",
            f"Disease={diseases}",
            "--mentions",
            f"Gene={genes}",
            "--mentions",
            "weighted",
        ]
    )
    assert code == 0, capsys.readouterr().err
    record = read_manifest(out).mentions.to_dict()
    assert record["lists"] == {"Disease": str(diseases), "Gene": str(genes)} and record["strategy"] == "weighted"
    data = datasets.load_dataset(str(out), split="train")
    assert mentions_of(data, "Disease") <= {tuple(WordSplitter()(m)) for m in DISEASES}

    def error(*values: str) -> str:
        argv = ["generate", "--model", str(model_dir), "-n", "2", "-o", str(tmp_path / "x")]
        assert main([*argv, *(a for v in values for a in ("--mentions", v))]) == 2
        return capsys.readouterr().err

    assert f"this model does not write ({diseases}); its types: Chemical, Disease, Gene" in error(f"Diseese={diseases}")
    empty = write_list(tmp_path / "empty.txt", [""])
    assert "empty.txt: no mentions in the list (one mention per line)" in error(f"Disease={empty}")
    assert "no such file: nowhere.txt" in error("Disease=nowhere.txt")
    assert "two lists for 'Disease'" in error(f"Disease={diseases}", f"Disease={genes}")
    assert "one of random or weighted, not random and weighted" in error("random", "weighted")
    assert not (tmp_path / "x").exists()  # refused before anything was written


def test_json_mentions_and_strategies_are_unchanged_by_lists(model_dir, tmp_path):
    """The older sources keep their records (byte-identical manifests for the same command)."""
    path = tmp_path / "m.json"
    path.write_text(json.dumps({"Disease": ["fever"], "Chemical": ["aspirin"], "Gene": ["BRCA1"]}))
    out = tmp_path / "json"
    generate_dataset(model_dir, out, 2, mentions=str(path), seed=0, run=DatasetRunConfig(progress_bar=False))
    assert read_manifest(out).mentions.to_dict() == {"source": "file", "path": str(path)}


def test_mention_replacement_draws_from_the_same_lists(tmp_path, capsys):
    """The fair baseline once ECG-QALM has new mentions: mention replacement given the same lists."""
    from tiny import toy_corpus

    corpus = toy_corpus(tmp_path / "gold.tsv", repeat=2)
    diseases = write_list(tmp_path / "Disease.txt", DISEASES)
    out = tmp_path / "mr"
    code = main(
        [
            "baseline",
            "mention-replacement",
            "--data",
            str(corpus),
            "-n",
            "12",
            "-o",
            str(out),
            "--mentions",
            f"Disease={diseases}",
        ]
    )
    assert code == 0, capsys.readouterr().err
    data = datasets.load_dataset(str(out), split="train")
    assert mentions_of(data, "Disease") and mentions_of(data, "Disease") <= {tuple(WordSplitter()(m)) for m in DISEASES}
    assert mentions_of(data, "Chemical") <= {("Aspirin",), ("Ibuprofen",), ("paracetamol",)}  # gold's own
    settings = json.loads((out / "ecg_generation.json").read_text())["settings"]
    assert settings["mention_lists"] == {"Disease": str(diseases)}
    card = " ".join(str(ECGDatasetCardData.from_generated(out).to_dataset_card()).split())  # as push-dataset renders it
    assert "the replacing mentions of Disease drawn from the user's mention lists (Disease: `Disease.txt`)" in card
    argv = ["baseline", "mention-replacement", "--data", str(corpus), "-o", str(tmp_path / "x"), "--mentions"]
    assert main([*argv, f"Gene={diseases}"]) == 2
    assert "that gold.tsv does not have; its types: Chemical, Disease" in capsys.readouterr().err
    assert main([*argv, "weighted"]) == 2
    assert "mention replacement takes mention lists only" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("line", "problem"),
    [
        ("...", "punctuation only, no letter or digit"),
        ("--", "punctuation only, no letter or digit"),
        (" ".join(["word"] * 2002), r"too long for a name \(2002 words"),
        ("x" * 20000, r"too long for a name \(1 word, 20000 characters"),
    ],
)
def test_one_mention_check_for_lists_json_dicts_and_the_baseline(line, problem, tiny, tmp_path, capsys):
    """Every mention source refuses what no entity is, naming the file and line (issue 47, item 8)."""
    path = write_list(tmp_path / "Disease.txt", ["fever", line])
    with pytest.raises(ValueError, match=rf"Disease\.txt:2: .* is no mention: {problem}"):
        read_mention_list(path)
    config = tiny[2]
    with pytest.raises(ValueError, match=rf"mentions= the mention .* of 'Disease' is no mention: {problem}"):
        MentionFiller.from_source({"Disease": ["fever", line]}, config)
    json_file = tmp_path / "m.json"
    json_file.write_text(json.dumps({"Disease": ["fever", line]}))
    with pytest.raises(ValueError, match=rf"m\.json: the mention .* of 'Disease' is no mention: {problem}"):
        MentionFiller.from_source(str(json_file), config)
    from tiny import toy_corpus

    out = tmp_path / "mr"
    argv = [
        "baseline",
        "mention-replacement",
        "--data",
        str(toy_corpus(tmp_path / "gold.tsv")),
        "-o",
        str(out),
        "--mentions",
        f"Disease={path}",
    ]
    assert main(argv) == 2
    assert "Disease.txt:2:" in capsys.readouterr().err and not out.exists()


def test_a_control_character_is_refused_and_a_zero_width_one_dropped_from_every_mention_source(tiny, tmp_path):
    """The text policy of every user file: a NUL is refused naming the line (in a file) or the mention (in code or
    JSON, escaped), a zero-width space taken out wherever it stands."""
    config = tiny[2]
    path = write_list(tmp_path / "Disease.txt", ["fever", "fe\x00ver"])
    with pytest.raises(ValueError, match=r"Disease\.txt:2: holds U\+0000"):
        read_mention_list(path)
    problem = r"is no mention: a control or invisible character \(U\+0000\)"
    with pytest.raises(ValueError, match=problem):
        MentionFiller.from_source({"Disease": ["fever", "fe\x00ver"]}, config)
    json_file = tmp_path / "m.json"
    json_file.write_text(json.dumps({"Disease": ["fever", "fe\x00ver"]}))
    with pytest.raises(ValueError, match=problem):
        MentionFiller.from_source(str(json_file), config)
    invisible = ["fe\u200bver", "pain"]
    assert set(read_mention_list(write_list(tmp_path / "zw.txt", invisible))) == {("fever",), ("pain",)}
    assert MentionFiller.from_source({"Disease": invisible}, config).bank.counts("Disease") == {
        ("fever",): 1,
        ("pain",): 1,
    }
    json_file.write_text(json.dumps({"Disease": invisible}))
    assert set(MentionFiller.from_source(str(json_file), config).bank.counts("Disease")) == {("fever",), ("pain",)}


def test_a_mention_given_as_words_with_a_space_inside_one_is_refused(tiny, tmp_path):
    config = tiny[2]
    json_file = tmp_path / "m.json"
    json_file.write_text(json.dumps({"Disease": [["sev ere", "pain"], "fever"]}))
    with pytest.raises(
        ValueError, match=r"m\.json: the mention .* of 'Disease' is no mention: a word with a space inside"
    ):
        MentionFiller.from_source(str(json_file), config)
    assert MentionFiller.from_source({"Disease": [["severe", "pain"]]}, config).bank.counts("Disease")


def test_a_byte_order_mark_never_reaches_a_mention(tmp_path):
    path = tmp_path / "Disease.txt"
    path.write_bytes("\ufefffever\nmigraine\n".encode())  # what Notepad writes as "UTF-8"
    assert set(read_mention_list(path)) == {("fever",), ("migraine",)}
    decomposed = tmp_path / "Chemical.txt"
    decomposed.write_text("cafe\u0301ine\n", encoding="utf-8")  # é as e + combining accent
    assert set(read_mention_list(decomposed)) == {("caf\u00e9ine",)}  # NFC, as the corpus reader writes it


def test_user_mentions_of_an_unknown_type_or_an_empty_list_are_named(tiny, tmp_path):
    config = tiny[2]
    with pytest.raises(ValueError, match=r"mentions= mentions for type\(s\) \['Diseese'\] this model does not write"):
        MentionFiller.from_source({"Diseese": ["fever"]}, config)
    json_file = tmp_path / "m.json"
    json_file.write_text(json.dumps({"Disease": []}))
    with pytest.raises(ValueError, match=r"m\.json: the mentions of 'Disease' must be a non-empty list"):
        MentionFiller.from_source(str(json_file), config)
