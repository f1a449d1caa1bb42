"""Mixtures of mention sources (a share of the slots each) through the API, the pipeline and `hf-ecg generate`,
and the provenance every sample records (``mention_sources``); with generated mentions: test_mention_writer."""

from __future__ import annotations

import json
from pathlib import Path

import datasets
import pytest

from hf_ecg import MentionMixture
from hf_ecg.cli import main
from hf_ecg.data.dataset_format import read_manifest
from hf_ecg.runtime.engine import SampleEngine
from hf_ecg.runtime.mention_sources import MENTION_ORIGINS, MentionLists
from hf_ecg.runtime.words import WordSplitter
from hf_ecg.synthetic.generate import generate_dataset
from hf_ecg.synthetic.run_config import DatasetRunConfig
from tiny import GENERATION_MENTIONS

DISEASES = ["acute asthma", "Parkinson's disease", "migraine"]


def write_list(path: Path, lines: list[str]) -> Path:
    path.write_text("".join(f"{line}\n" for line in lines), encoding="utf-8")
    return path


def mentions_with_sources(row: dict) -> list[tuple[str, tuple[str, ...], str]]:
    """(type, words, origin) of each entity of a generated row."""
    return [
        (span["label"], tuple(row["text"][span["start"] : span["end"]].split(" ")), origin)
        for span, origin in zip(row["spans"], row["mention_sources"], strict=True)
    ]


@pytest.mark.parametrize(
    ("shares", "lists", "message"),
    [
        ({}, None, "needs a share for at least one of generated, lists, bank"),
        ({"generated": 1, "gazetteer": 1}, None, r"unknown mixture part\(s\) \['gazetteer'\]; known: generated, lists"),
        ({"bank": 0}, None, "the share of 'bank' must be a positive number, got 0"),
        ({"bank": -0.5, "generated": 1}, None, "the share of 'bank' must be a positive number"),
        ({"bank": float("nan")}, None, "the share of 'bank' must be a positive number"),
        ({"bank": True}, None, "the share of 'bank' must be a positive number, got True"),
        ({"generated": 1e308, "bank": 1e308}, None, "too large to add up: give them as fractions of 1"),
        ({"lists": 1}, None, "a 'lists' share needs the mentions"),
        ({"bank": 1}, {"Disease": "d.txt"}, "lists were given but no 'lists' share"),
        ({"lists": 1}, "random", "is not a list of mentions"),
    ],
)
def test_bad_mixtures_are_named_errors(shares, lists, message):
    with pytest.raises(ValueError, match=message):
        MentionMixture(shares, lists=lists)


def test_shares_are_normalized_in_part_order_and_lists_take_the_mixtures_strategy(tmp_path):
    mixture = MentionMixture({"bank": 1, "generated": 3}, strategy="weighted")
    assert mixture.normalized() == {"generated": 0.75, "bank": 0.25}
    assert mixture.source("generated") == "generated" and mixture.source("bank") == "weighted"
    folder = tmp_path / "lists"
    folder.mkdir()
    with_lists = MentionMixture({"lists": 1}, lists={"Disease": folder / "Disease.txt"}, strategy="weighted")
    assert with_lists.source("lists") == MentionLists({"Disease": folder / "Disease.txt"}, "weighted")
    own = MentionLists(folder, "random")  # a MentionLists keeps its own strategy
    assert MentionMixture({"lists": 1}, lists=own, strategy="weighted").source("lists") is own
    with pytest.raises(ValueError, match="unknown fill strategy 'often'"):
        MentionMixture({"bank": 1}, strategy="often")


def test_generated_shares_need_the_generator(model_dir, tiny):
    with pytest.raises(ValueError, match="mention_samples"):  # the tiny model was not trained to write mentions
        SampleEngine(tiny[0], tiny[1], tiny[2]).run(MentionMixture({"generated": 1, "bank": 1}))


def test_a_mixture_fills_each_slot_from_its_share_and_every_sample_says_where(model_dir, tmp_path):
    diseases = write_list(tmp_path / "diseases.txt", DISEASES)
    listed = {tuple(WordSplitter()(m)) for m in DISEASES}
    bank = {label: {tuple(m.split()) for m in mentions} for label, mentions in GENERATION_MENTIONS.items()}
    mixture = MentionMixture({"lists": 1, "bank": 1}, lists={"Disease": str(diseases)})
    out = tmp_path / "mix"
    generate_dataset(
        model_dir, out, 40, mentions=mixture, seed=3, run=DatasetRunConfig(samples_per_shard=16, progress_bar=False)
    )
    data = datasets.load_dataset(str(out), split="train")
    seen = []
    for row in data:
        assert [s["label"] for s in row["spans"]] == row["entities"]  # exactly the requested entities
        assert len(row["mention_sources"]) == len(row["entities"])
        for label, words, origin in mentions_with_sources(row):
            assert origin in MENTION_ORIGINS
            if origin == "lists":
                assert label == "Disease" and words in listed
            else:  # the bank share, and the lists share for types without a list
                assert origin == "bank" and words in bank[label]
            seen.append((label, origin))
    assert ("Disease", "lists") in seen and ("Disease", "bank") in seen  # both shares drew Diseases
    manifest = read_manifest(out)
    assert manifest.mentions.to_dict() == {
        "source": "mixture",
        "strategy": "random",
        "bank": "generator",
        "digest": manifest.mentions.digest,
        "lists": {"Disease": str(diseases)},
        "shares": {"lists": 0.5, "bank": 0.5},
    }
    counts = manifest.mention_sources
    assert counts == {origin: sum(o == origin for _, o in seen) for origin in ("lists", "bank") if counts.get(origin)}
    assert sum(counts.values()) == len(seen)
    card = " ".join((out / "README.md").read_text().split())
    assert "a mixture of sources, one drawn for each slot: 50% of the slots drawn uniformly from the user's" in card
    assert "50% of the slots drawn uniformly from the generator's mention bank" in card
    assert f"{counts['lists']:,} from the user's mention lists" in card and "`mention_sources` | list of string" in card

    # The same call resumes and changes nothing; other shares are refused, naming the setting.
    before = sorted(p.read_bytes() for p in (out / "data").glob("*.parquet"))
    generate_dataset(
        model_dir, out, 40, mentions=mixture, seed=3, run=DatasetRunConfig(samples_per_shard=16, progress_bar=False)
    )
    assert sorted(p.read_bytes() for p in (out / "data").glob("*.parquet")) == before
    with pytest.raises(ValueError, match="differing: mentions"):
        other = MentionMixture({"lists": 3, "bank": 1}, lists={"Disease": str(diseases)})
        generate_dataset(
            model_dir, out, 40, mentions=other, seed=3, run=DatasetRunConfig(samples_per_shard=16, progress_bar=False)
        )


def test_single_sources_record_their_origin(model_dir, tmp_path):
    diseases = write_list(tmp_path / "Disease.txt", DISEASES)
    out = tmp_path / "lists"
    generate_dataset(model_dir, out, 8, mentions=str(tmp_path), seed=0, run=DatasetRunConfig(progress_bar=False))
    for row in datasets.load_dataset(str(out), split="train"):
        for label, _, origin in mentions_with_sources(row):
            assert origin == ("lists" if label == "Disease" else "bank")
    path = tmp_path / "m.json"
    path.write_text(json.dumps({"Disease": ["fever"], "Chemical": ["aspirin"], "Gene": ["BRCA1"]}))
    generate_dataset(
        model_dir, tmp_path / "json", 4, mentions=str(path), seed=0, run=DatasetRunConfig(progress_bar=False)
    )
    rows = datasets.load_dataset(str(tmp_path / "json"), split="train")
    assert {o for row in rows for o in row["mention_sources"]} <= {"user"}
    assert diseases.is_file()


def test_the_pipeline_takes_a_mixture(gen, tmp_path):
    write_list(tmp_path / "Disease.txt", DISEASES)
    listed = {" ".join(WordSplitter()(m)) for m in DISEASES}
    mixture = MentionMixture({"lists": 1, "bank": 1}, lists=str(tmp_path))
    outputs = gen([["Disease", "Chemical", "Disease"]], num_return_sequences=6, seed=0, mentions=mixture)
    origins = set()
    for sample in outputs[0]:
        assert [s["label"] for s in sample["spans"]] == ["Disease", "Chemical", "Disease"]
        for span, origin in zip(sample["spans"], sample["mention_sources"], strict=True):
            text = sample["text"][span["start"] : span["end"]]
            assert (text in listed) == (origin == "lists")
            origins.add(origin)
    assert origins == {"lists", "bank"}
    assert gen([["Disease"]], num_return_sequences=4, seed=0, mentions=mixture) == gen(
        [["Disease"]], num_return_sequences=4, seed=0, mentions=mixture
    )  # seeded


def test_cli_mention_shares_and_their_errors(model_dir, tmp_path, capsys):
    diseases = write_list(tmp_path / "diseases.txt", DISEASES)
    out = tmp_path / "gen"
    code = main(
        [
            "generate",
            "--model",
            str(model_dir),
            "-n",
            "12",
            "-o",
            str(out),
            "--mention-shares",
            "lists=3,bank=1",
            "--mentions",
            f"Disease={diseases}",
            "--mentions",
            "weighted",
        ]
    )
    printed = capsys.readouterr()
    assert code == 0, printed.err
    record = read_manifest(out).mentions.to_dict()
    assert record["source"] == "mixture" and record["shares"] == {"lists": 0.75, "bank": 0.25}
    assert record["strategy"] == "weighted" and record["lists"] == {"Disease": str(diseases)}
    if len(read_manifest(out).mention_sources) > 1:
        assert "mentions: " in printed.out and "lists (" in printed.out

    def error(shares: str, *values: str) -> str:
        argv = ["generate", "--model", str(model_dir), "-n", "2", "-o", str(tmp_path / "x"), "--mention-shares", shares]
        assert main([*argv, *(a for v in values for a in ("--mentions", v))]) == 2
        return capsys.readouterr().err

    assert "'gazetteer' is none of generated, lists, bank" in error("gazetteer=1,bank=1")
    assert "--mention-shares 'lists': expected NAME=SHARE" in error("lists")
    assert "the share of 'bank' must be a positive number, got 'nan'" in error("bank=nan,lists=1")
    assert "two shares for 'bank'" in error("bank=1,bank=2")
    said = error("lists=1,bank=1")  # in the CLI's words, not the Python API's
    assert "a 'lists' share needs the lists: add --mentions TYPE=FILE or a folder" in said
    assert "MentionMixture" not in said
    said = error("bank=1", f"Disease={diseases}")
    assert "--mentions gives lists but no share takes them: add lists=SHARE" in said and "shares={" not in said
    assert "the share of 'bank' must be a positive number" in error("bank=0")
    assert "mention_samples" in error("generated=1,bank=1")  # this model was not trained to write mentions
    assert not (tmp_path / "x").exists()  # refused before anything was written
