"""hf-ecg export: CoNLL in the training corpus's scheme and JSONL, read back by the corpus readers."""

from __future__ import annotations

import json

import datasets
import pytest

from hf_ecg.cli import main
from hf_ecg.data.corpus import read_conll, read_jsonl
from hf_ecg.data.export import export_generated
from hf_ecg.runtime.decoding import DecodingConfig
from hf_ecg.runtime.ecg_config import ECGConfig
from hf_ecg.synthetic.generate import generate_dataset
from hf_ecg.synthetic.mention_replacement import MentionReplacementSource, write_mention_replacement
from hf_ecg.synthetic.run_config import DatasetRunConfig
from tiny import save_tiny_ecg_model, toy_corpus


@pytest.fixture(scope="module")
def generated(tmp_path_factory):
    directory = tmp_path_factory.mktemp("export")
    model = save_tiny_ecg_model(directory / "model")
    return generate_dataset(
        model,
        directory / "generated",
        7,
        decoding=DecodingConfig(max_block_tokens=4, batch_size=4),
        run=DatasetRunConfig(samples_per_shard=3, progress_bar=False),
    )


def rows(folder):
    data = datasets.load_dataset(str(folder), split="train", cache_dir=str(folder.parent / "cache")).sort("id")
    names = data.features["ner_tags"].feature.names
    return [(row["tokens"], [names[k] for k in row["ner_tags"]]) for row in data]


@pytest.mark.parametrize("scheme", ["IOB2", "BIOES"])
def test_conll_export_reads_back_as_the_same_sentences(generated, tmp_path, scheme):
    config = ECGConfig.load(generated.parent / "model")
    config.tag_scheme = scheme  # as if trained on a corpus in this scheme
    config.save(generated.parent / "model")
    path = export_generated(generated, tmp_path / "out.tsv")
    expected = rows(generated)
    corpus = read_conll(path, scheme=scheme, strict=True)
    assert [(list(s.tokens), s.tags) for s in corpus] == expected
    if scheme == "BIOES" and any(tag.startswith("B-") for _, tags in expected for tag in tags):
        assert any(tag.startswith(("S-", "E-")) for line in path.read_text().splitlines() for tag in line.split()[1:])


def test_jsonl_export_reads_back_with_text_and_spans(generated, tmp_path):
    path = export_generated(generated, tmp_path / "out.jsonl", "jsonl")
    assert [(list(s.tokens), s.tags) for s in read_jsonl(path, strict=True)] == rows(generated)
    for line in path.read_text().splitlines():
        record = json.loads(line)
        assert record["text"] == " ".join(record["tokens"])
        mentions = [record["text"][span["start"] : span["end"]] for span in record["spans"]]
        assert len(mentions) == sum(tag.startswith("B-") for tag in record["ner_tags"])
    assert [json.loads(line)["id"] for line in path.read_text().splitlines()] == list(range(7))


def test_cli_export_of_a_baseline_folder(tmp_path, capsys):
    gold = read_conll(toy_corpus(tmp_path / "gold.tsv"))
    folder = write_mention_replacement(MentionReplacementSource(gold, 4), tmp_path / "mr")
    assert main(["export", "--data", str(folder), "--format", "conll", "-o", str(tmp_path / "mr.tsv")]) == 0
    assert "wrote" in capsys.readouterr().out
    assert [(list(s.tokens), s.tags) for s in read_conll(tmp_path / "mr.tsv")] == rows(folder)
    (tmp_path / "plain").mkdir()
    assert main(["export", "--data", str(tmp_path / "plain"), "-o", str(tmp_path / "x.tsv")]) == 2
    assert "is not a dataset `hf-ecg generate` wrote" in capsys.readouterr().err
    assert main(["export", "--data", str(tmp_path), "-o", str(tmp_path / "x.tsv")]) == 2  # and never inside it
    assert "is or is inside the input" in capsys.readouterr().err
