from __future__ import annotations

import os
import re

import datasets
import pytest

from hf_ecg.data.builder import BLOCK_FEATURES, ECGBlocksBuilder
from hf_ecg.data.corpus import CorpusFormatError, read_conll
from hf_ecg.runtime.blocks import ENDTEXT, QASample, Template, qa_samples, template_from_qa

TRAIN = "Aspirin\tB-Chemical\ncures\tO\nbad\tB-Disease\nheadache\tI-Disease\n\nno\tO\nentity\tO\n\nx\tB-Disease\n\n"
DEV = "ibuprofen\tB-Chemical\n.\tO\n"


@pytest.fixture
def files(tmp_path):
    (tmp_path / "train.tsv").write_text(TRAIN)
    (tmp_path / "dev.tsv").write_text(DEV)
    return tmp_path


def build(tmp_path, **kwargs):
    builder = ECGBlocksBuilder(cache_dir=str(tmp_path / "cache"), **kwargs)
    builder.download_and_prepare()
    return builder, builder.as_dataset()


def test_builder_writes_qa_block_splits(files):
    _, ds = build(files, data_files={"train": str(files / "train.tsv"), "validation": str(files / "dev.tsv")})
    assert isinstance(ds, datasets.DatasetDict)
    assert set(ds) == {"train", "validation"}
    assert ds["train"].features == BLOCK_FEATURES
    assert ds["train"].num_rows == 3 + 1 + 2  # entities + 1 per sentence
    first = ds["train"][0:3]
    assert first["context"] == ["", "<Chemical>", "<Chemical> cures <Disease>"]
    assert first["question"] == ["<Chemical>", "<Disease>", ENDTEXT]
    assert first["answer"] == ["<Chemical>", "cures <Disease>", ENDTEXT]
    assert first["entities"][0] == ["Chemical", "Disease"]
    assert first["source"][0] == f"{files / 'train.tsv'}:1"
    assert ds["train"]["sentence_id"] == [0, 0, 0, 1, 2, 2]
    assert ds["validation"][1]["answer"] == f". {ENDTEXT}"


def test_final_rows_give_back_every_template(files):
    _, ds = build(files, data_files={"train": str(files / "train.tsv")})
    corpus = read_conll(files / "train.tsv")
    finals = [row for row in ds["train"] if row["block_index"] == row["num_blocks"] - 1]
    templates = [template_from_qa(QASample(r["context"], r["question"], r["answer"], r["block_index"])) for r in finals]
    assert templates[0] == Template(("<Chemical>", "cures", "<Disease>"))
    assert [t.entity_types for t in templates] == [s.entity_types for s in corpus]


def test_first_n_and_fraction_subset_train_only(files):
    both = {"train": str(files / "train.tsv"), "validation": str(files / "dev.tsv")}
    _, ds = build(files, data_files=both, first_n=1)
    assert set(ds["train"]["sentence_id"]) == {0}
    assert ds["validation"].num_rows == 2
    _, ds = build(files, data_files={"train": str(files / "train.tsv")}, fraction=0.7)
    assert set(ds["train"]["sentence_id"]) == {0, 1}


def test_builder_from_in_memory_dataset(tmp_path):
    names = ["O", "B-X", "I-X"]
    features = datasets.Features(
        {"tokens": datasets.List(datasets.Value("string")), "ner_tags": datasets.List(datasets.ClassLabel(names=names))}
    )
    train = datasets.Dataset.from_dict({"tokens": [["a", "b", "c"]], "ner_tags": [[0, 1, 2]]}, features=features)
    builder, ds = build(tmp_path, corpora={"train": train})
    assert ds["train"]["answer"] == ["a <X>", ENDTEXT]
    assert builder.corpus("train").entity_types == ["X"]


def test_builder_cache_follows_the_file(files):
    path = files / "train.tsv"
    _, ds = build(files, data_files={"train": str(path)})
    rows = ds["train"].num_rows
    path.write_text(TRAIN + "one\tB-Chemical\n")
    os.utime(path, (1, 1))  # a different mtime, as any edit gives
    _, ds = build(files, data_files={"train": str(path)})
    assert ds["train"].num_rows == rows + 2


def test_builder_cache_follows_the_code_that_makes_the_rows(files, monkeypatch):
    """``datasets`` keys a builder's cache on its config; the builder adds a hash of the code that makes its rows, so
    the same files and options read by an hf_ecg whose rows differ are built again, not read back from the blocks
    another version cached (within one version the cache is still read)."""
    import hf_ecg.data.builder as builder_module

    path = str(files / "train.tsv")
    first, ds = build(files, data_files={"train": path})
    assert first.hash == builder_module.rows_code_hash() and first.cache_dir.endswith(first.hash)
    again, _ = build(files, data_files={"train": path})
    assert again.cache_dir == first.cache_dir  # the same code reads its own cache

    def marked(template, **options):  # another version's rows
        return [
            QASample(f"{s.context} marked".strip(), s.question, s.answer, s.block_index)
            for s in qa_samples(template, **options)
        ]

    import hf_ecg.runtime.layout as layout_module

    monkeypatch.setattr(layout_module, "qa_samples", marked)  # the layout makes the rows of a template
    monkeypatch.setattr(builder_module, "rows_code_hash", lambda: "another-version")
    other, changed = build(files, data_files={"train": path})
    assert other.cache_dir != first.cache_dir
    assert all(context.endswith("marked") for context in changed["train"]["context"])
    assert changed["train"]["answer"] == ds["train"]["answer"]


def test_builder_reports_bad_input_with_its_place(tmp_path):
    bad = tmp_path / "bad.tsv"
    bad.write_text("a\tO\nb c\tO\n")
    with pytest.raises(CorpusFormatError, match=re.escape(f"{bad}:2: token 'b c' contains whitespace")):
        build(tmp_path, data_files={"train": str(bad)}, format="conll")


def test_builder_needs_data(tmp_path):
    with pytest.raises(ValueError, match="needs data_files"):
        build(tmp_path)


def test_save_blocks_writes_the_splits_and_statistics_and_verify_names_the_failing_sentence(files, tmp_path):
    import json

    from hf_ecg.runtime.blocks import RoundTripError

    data_files = {"train": str(files / "train.tsv"), "validation": str(files / "dev.tsv")}
    builder = ECGBlocksBuilder(cache_dir=str(tmp_path / "cache"), data_files=data_files)
    assert builder.verify_roundtrips() == {"train": 3, "validation": 1}
    dataset, stats = builder.save_blocks(tmp_path / "out")
    assert datasets.load_from_disk(str(tmp_path / "out"))["train"].num_rows == dataset["train"].num_rows
    saved = json.loads((tmp_path / "out" / "corpus_stats.json").read_text())
    assert saved["num_sentences"] == stats.num_sentences == len(builder.corpus("train"))

    bad = tmp_path / "bad.tsv"
    bad.write_text(f"fine\tO\n\nsays\tO\n{ENDTEXT}\tO\n")  # a reserved token in the text
    with pytest.raises(RoundTripError, match=re.escape(f"{bad}:3 (train sentence 1)")):
        ECGBlocksBuilder(cache_dir=str(tmp_path / "cache2"), data_files={"train": str(bad)}).verify_roundtrips()
