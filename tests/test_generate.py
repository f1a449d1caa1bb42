"""generate_dataset: whole synthetic datasets as Parquet shards, with labels in the gold order, resume,
the CLI and accelerate."""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import datasets
import pytest
from hypothesis import given
from hypothesis import settings as hypothesis_settings
from hypothesis import strategies as st

from hf_ecg.cli import main
from hf_ecg.data.dataset_format import ShardLayout, align_labels, bio_labels
from hf_ecg.runtime.decoding import DecodingConfig
from hf_ecg.runtime.tags import tags_to_spans
from hf_ecg.synthetic.generate import generate_dataset
from hf_ecg.synthetic.generation_report import UNDERTRAINED_REFUSED_SHARE, cost_line
from hf_ecg.synthetic.run_config import DatasetRunConfig
from tiny import GENERATION_TYPES as TYPES


def load(directory: Path) -> datasets.Dataset:
    return datasets.load_dataset(str(directory), split="train", cache_dir=str(directory.parent / "hf-cache"))


def test_generate_dataset_loads_with_classlabel_tags_and_is_reproducible(model_dir, tmp_path):
    settings = {
        "run": DatasetRunConfig(samples_per_shard=7),
        "seed": 5,
        "decoding": DecodingConfig(max_block_tokens=6, batch_size=4),
    }
    generate_dataset(model_dir, tmp_path / "a", 17, **settings)
    generate_dataset(model_dir, tmp_path / "b", 17, **settings)
    a, b = load(tmp_path / "a"), load(tmp_path / "b")
    assert sorted(a["id"]) == list(range(17))
    assert {"id", "tokens", "ner_tags", "entities", "template", "text"} <= set(a.column_names)
    assert a.features["ner_tags"].feature.names == bio_labels(TYPES)
    assert a.to_list() == b.to_list()  # same seed, same dataset
    names = a.features["ner_tags"].feature.names
    for row in a:
        spans, _ = tags_to_spans([names[i] for i in row["ner_tags"]], "IOB2", strict=True)
        assert [s.label for s in spans] == row["entities"]
        # the spans column: character offsets of each mention in text, with its type
        assert [(row["text"][o["start"] : o["end"]], o["label"]) for o in row["spans"]] == [
            (" ".join(row["tokens"][s.start : s.end]), s.label) for s in spans
        ]
    assert len(list((tmp_path / "a" / "data").glob("train-*.parquet"))) == 3
    # The decoder's flags are columns a user filters on.
    assert a.features["complete"].dtype == "bool" and a.features["cut_blocks"].dtype == "int32"
    whole = a.filter(lambda row: row["complete"])
    endings = {".", "!", "?"}  # the usual endings: this model's config records none of its own
    assert all(row["tokens"] and row["tokens"][-1] in endings for row in whole)
    assert all(not row["complete"] for row in a if not row["tokens"] or row["tokens"][-1] not in endings)
    assert sum(a["cut_blocks"]) == 0  # the default rule cuts nothing


# conll2003's order: O first, then B-/I- pairs, not sorted; one label the synthetic data never uses.
GOLD_LABELS = ["O", "B-Gene", "I-Gene", "B-Disease", "I-Disease", "B-MISC", "I-MISC", "B-Chemical", "I-Chemical"]


def gold_dataset() -> datasets.Dataset:
    features = datasets.Features(
        {
            "tokens": datasets.Sequence(datasets.Value("string")),
            "ner_tags": datasets.Sequence(datasets.ClassLabel(names=GOLD_LABELS)),
        }
    )
    return datasets.Dataset.from_dict(
        {"tokens": [["BRCA1", "causes", "fever", "."]], "ner_tags": [[1, 0, 3, 0]]}, features=features
    )


def tag_strings(dataset: datasets.Dataset) -> list[list[str]]:
    names = dataset.features["ner_tags"].feature.names
    return [[names[k] for k in row] for row in dataset["ner_tags"]]


def test_generated_data_concatenates_with_gold_in_the_gold_label_order(model_dir, tmp_path):
    gold = gold_dataset()
    settings = {"seed": 3, "decoding": DecodingConfig(max_block_tokens=4, batch_size=4)}
    sorted_names = load(generate_dataset(model_dir, tmp_path / "sorted", 6, **settings))
    with pytest.raises(ValueError, match="aligned"):  # what a user meets without the gold order
        datasets.concatenate_datasets([gold, sorted_names.select_columns(["tokens", "ner_tags"])])

    ordered = load(
        generate_dataset(model_dir, tmp_path / "ordered", 6, **settings, run=DatasetRunConfig(label_names=GOLD_LABELS))
    )
    assert ordered.features["ner_tags"].feature.names == GOLD_LABELS
    assert tag_strings(ordered) == tag_strings(sorted_names)  # the same tags, other ids
    assert any(tag != "O" for row in tag_strings(ordered) for tag in row)
    mixed = datasets.concatenate_datasets([gold, ordered.select_columns(["tokens", "ner_tags"])])
    assert tag_strings(mixed) == tag_strings(gold) + tag_strings(ordered)

    aligned = align_labels(sorted_names, gold)  # data generated before: re-numbered to the gold order
    assert aligned.features["ner_tags"] == ordered.features["ner_tags"]
    assert aligned["ner_tags"] == ordered["ner_tags"]
    assert align_labels(ordered, GOLD_LABELS) is ordered
    with pytest.raises(ValueError, match=r"lack \['B-Chemical', 'I-Chemical'\]"):
        generate_dataset(model_dir, tmp_path / "bad", 2, **settings, run=DatasetRunConfig(label_names=GOLD_LABELS[:-2]))
    with pytest.raises(ValueError, match="not among the label names"):
        align_labels(sorted_names, ["O", "B-Gene", "I-Gene"])


def test_the_guide_s_mixing_example_runs_as_written(model_dir, tmp_path, monkeypatch):
    guide = (Path(__file__).resolve().parents[1] / "docs" / "guides" / "gold-data.md").read_text()
    example = guide.split("```python\n")[1].split("```")[0]
    assert len(example.strip().splitlines()) == 5
    monkeypatch.chdir(tmp_path)
    gold_dataset().save_to_disk("my-gold")
    written = generate_dataset(
        model_dir,
        "outputs/quickstart/synthetic",
        4,
        decoding=DecodingConfig(max_block_tokens=4, batch_size=4),
        run=DatasetRunConfig(progress_bar=False),
    )
    namespace: dict = {}
    exec(example, namespace)
    mixed = namespace["mixed"]
    assert mixed.features["ner_tags"].feature.names == GOLD_LABELS
    assert tag_strings(mixed) == tag_strings(gold_dataset()) + tag_strings(load(written))


def test_interrupted_generation_resumes_to_exactly_n_unique_ids(model_dir, tmp_path, monkeypatch):
    import hf_ecg.synthetic.writer as generate_module

    settings = {
        "run": DatasetRunConfig(samples_per_shard=4),
        "seed": 1,
        "decoding": DecodingConfig(max_block_tokens=5, batch_size=3),
    }
    generate_dataset(model_dir, tmp_path / "whole", 14, **settings)

    real_write = generate_module.write_shard
    written = []

    def crash_after_two(rows, features, data_dir, shard, rank):
        if len(written) == 2:
            (data_dir / f".tmp-{rank}-train-{shard:05d}.parquet").write_bytes(b"half a shard")
            raise KeyboardInterrupt  # killed while writing the third shard
        written.append(shard)
        real_write(rows, features, data_dir, shard, rank)

    monkeypatch.setattr(generate_module, "write_shard", crash_after_two)
    with pytest.raises(KeyboardInterrupt):
        generate_dataset(model_dir, tmp_path / "resumed", 14, **settings)
    # The finished shards wait outside data/: the folder cannot pass for a dataset of 8 rows.
    assert len(list((tmp_path / "resumed" / "unfinished").glob("train-*.parquet"))) == 2
    assert not (tmp_path / "resumed" / "data").exists()
    with pytest.raises(datasets.exceptions.DataFilesNotFoundError):
        load(tmp_path / "resumed")
    monkeypatch.setattr(generate_module, "write_shard", real_write)
    generate_dataset(model_dir, tmp_path / "resumed", 14, **settings)
    resumed = load(tmp_path / "resumed")
    assert sorted(resumed["id"]) == list(range(14))  # exactly N, no duplicates
    assert resumed.sort("id").to_list() == load(tmp_path / "whole").sort("id").to_list()
    assert not list((tmp_path / "resumed" / "data").glob(".tmp-*"))
    assert not (tmp_path / "resumed" / "unfinished").exists()
    with pytest.raises(ValueError, match=r"other settings .*seed"):
        generate_dataset(model_dir, tmp_path / "resumed", 14, **{**settings, "seed": 2})


def test_a_folder_begun_before_the_spans_column_resumes_with_its_columns(model_dir, tmp_path):
    import pyarrow.parquet as pq

    settings = {
        "run": DatasetRunConfig(samples_per_shard=3),
        "seed": 2,
        "decoding": DecodingConfig(max_block_tokens=4, batch_size=3),
    }
    folder = generate_dataset(model_dir, tmp_path / "old", 6, **settings)
    first, second = sorted((folder / "data").glob("train-*.parquet"))
    pq.write_table(pq.read_table(first).drop_columns(["spans"]), first)  # as an older hf_ecg wrote it
    second.unlink()  # ... and stopped there
    generate_dataset(model_dir, folder, 6, **settings)
    assert [pq.read_schema(p).names for p in (first, second)] == [pq.read_schema(first).names] * 2
    assert "spans" not in load(folder).column_names and load(folder).num_rows == 6


def test_a_folder_written_before_a_decoding_option_existed_resumes(model_dir, tmp_path):
    old_rules = {
        "redraw_unended": False,
        "redraw_repetition": False,
        "redraw_run_on": False,
        "redraw_tag_pieces": False,
    }  # an older hf_ecg: none of these rules
    settings = {
        "run": DatasetRunConfig(samples_per_shard=3),
        "seed": 2,
        "decoding": DecodingConfig(max_block_tokens=4, batch_size=2, **old_rules),
    }
    generate_dataset(model_dir, tmp_path / "old", 3, **settings)
    manifest_path = tmp_path / "old" / "ecg_generation.json"
    manifest = json.loads(manifest_path.read_text())
    for option in ("end_at_sentence_end", "redraw_unrequested_tag", "redraw_budget", *old_rules):
        del manifest["decoding"][option]  # as an older hf_ecg wrote it
    assert manifest.pop("dtype") in ("float32", "bfloat16")  # before it was recorded, runs were float32
    manifest.pop("generation_cost")
    assert manifest["mentions"] == {"source": "bank", "strategy": "random", "bank": "generator"}
    manifest["mentions"] = None  # before the mentions record, the default was written as null
    assert manifest.pop("format_version") == 2  # version 1 did not record its version
    manifest_path.write_text(json.dumps(manifest))
    old_settings = {
        **settings,
        "decoding": replace(settings["decoding"], redraw_budget=None),
        "run": DatasetRunConfig(samples_per_shard=3, dtype="float32"),
    }
    generate_dataset(model_dir, tmp_path / "old", 3, **old_settings)  # the same settings: resumes, no error
    for changed in ({"end_at_sentence_end": True}, {"redraw_unended": True}, {"redraw_tag_pieces": True}, {}):
        # today's redraw defaults differ from what the folder was written with: refused, not mixed
        other = DecodingConfig(max_block_tokens=4, batch_size=2, **{**old_rules, **changed}) if changed else None
        other = other or DecodingConfig(max_block_tokens=4, batch_size=2)
        with pytest.raises(ValueError, match="other settings"):
            generate_dataset(model_dir, tmp_path / "old", 3, **{**settings, "decoding": other})
    with pytest.raises(ValueError, match="differing: decoding"):  # today's default budget: not the folder's
        generate_dataset(
            model_dir,
            tmp_path / "old",
            3,
            **{**settings, "run": DatasetRunConfig(samples_per_shard=3, dtype="float32")},
        )
    with pytest.raises(ValueError, match="differing: dtype"):
        generate_dataset(
            model_dir,
            tmp_path / "old",
            3,
            **{**old_settings, "run": DatasetRunConfig(samples_per_shard=3, dtype="bfloat16")},
        )


def test_a_run_records_what_it_cost_in_its_manifest_card_and_columns(model_dir, tmp_path, caplog):
    """The tiny model never ends a block: every sample is costly, the budget bounds it, the run says so."""
    decoding = DecodingConfig(max_block_tokens=6, batch_size=4, max_attempts=5)
    with caplog.at_level(logging.INFO, logger="hf_ecg.synthetic.writer"):
        generate_dataset(
            model_dir, tmp_path / "gen", 8, seed=1, decoding=decoding, run=DatasetRunConfig(dtype="float32")
        )
    manifest = json.loads((tmp_path / "gen" / "ecg_generation.json").read_text())
    ds = load(tmp_path / "gen")
    cost = manifest["generation_cost"]
    assert manifest["dtype"] == "float32" and cost["redraw_budget"] == 1.0
    assert cost["model_tokens"] == sum(ds["model_tokens"]) > 0
    assert cost["redrawn_tokens"] == sum(ds["redrawn_tokens"]) > 0
    assert cost["redrawn_tokens"] <= cost["model_tokens"] + 6 * 1 + 6  # 1x kept + the allowance (4 rows) + 1 block
    assert cost["refused_redraws"] == sum(ds["refused_redraws"]) > 0 and cost["blocks"] == 8 + sum(
        map(len, ds["entities"])
    )
    assert cost["undertrained"] == (cost["refused_redraws"] > UNDERTRAINED_REFUSED_SHARE * cost["blocks"])
    assert cost_line(cost) in caplog.text
    assert ("looks undertrained" in caplog.text) == cost["undertrained"]
    card = (tmp_path / "gen" / "README.md").read_text()
    assert f"{cost['model_tokens']} kept, {cost['redrawn_tokens']} (" in card
    assert "| `redrawn_tokens` | int32 |" in card
    # finished: the same call again changes nothing (the cost record is not a setting)
    generate_dataset(model_dir, tmp_path / "gen", 8, seed=1, decoding=decoding, run=DatasetRunConfig(dtype="float32"))


def test_cli_generate_with_entities_and_mention_file(model_dir, tmp_path, capsys):
    mentions = tmp_path / "mentions.json"
    mentions.write_text(json.dumps({"Chemical": ["zz-chem"], "Disease": ["zz-dis"]}))
    out = tmp_path / "gen"
    code = main(
        [
            "generate",
            "--model",
            str(model_dir),
            "-n",
            "5",
            "-o",
            str(out),
            "--entities",
            "Chemical,Disease",
            "--entities",
            "",
            "--mentions",
            str(mentions),
            "--max-block-tokens",
            "5",
            "--batch-size",
            "2",
            "--block-end",
            "target",
            "--max-attempts",
            "2",
            "--no-redraw-unended",
            "--no-redraw-run-on",
            "--redraw-budget",
            "none",
            "--dtype",
            "float32",
        ]
    )
    assert code == 0
    printed = capsys.readouterr().out
    assert f"wrote 5 samples to {out}/data/" in printed
    assert "the generator wrote " in printed and "in blocks drawn again" in printed
    manifest = json.loads((out / "ecg_generation.json").read_text())
    assert manifest["mentions"] == {"source": "file", "path": str(mentions)}
    decoding = manifest["decoding"]
    assert decoding["block_end"] == "target" and decoding["max_attempts"] == 2
    assert decoding["redraw_unended"] is False and decoding["redraw_repetition"] is True
    assert decoding["redraw_run_on"] is False and decoding["redraw_budget"] is None
    assert manifest["dtype"] == "float32"
    ds = load(out).sort("id")
    assert ds["entities"] == [["Chemical", "Disease"], [], ["Chemical", "Disease"], [], ["Chemical", "Disease"]]
    assert "zz-chem" in ds[0]["tokens"] and "zz-dis" in ds[0]["tokens"]
    code = main(
        ["generate", "--model", str(model_dir), "-n", "2", "-o", str(tmp_path / "bad"), "--entities", "Protein"]
    )
    assert code == 2
    assert "unknown entity type(s) ['Protein']; known types: Chemical, Disease, Gene" in capsys.readouterr().err


def test_cli_generate_and_filter_take_the_label_order_of_a_gold_dataset(model_dir, tmp_path, capsys):
    gold_dataset().save_to_disk(str(tmp_path / "gold"))
    out = tmp_path / "gen"
    common = ["--model", str(model_dir), "-n", "3", "--max-block-tokens", "4", "--batch-size", "4"]
    assert main(["generate", *common, "-o", str(out), "--label-names", str(tmp_path / "gold")]) == 0
    assert load(out).features["ner_tags"].feature.names == GOLD_LABELS
    sorted_out = tmp_path / "sorted"
    assert main(["generate", *common, "-o", str(sorted_out)]) == 0
    gold_file = tmp_path / "gold.tsv"
    gold_file.write_text("BRCA1\tB-Gene\ncauses\tO\nfever\tB-Disease\n.\tO\n\n")
    names = ",".join(GOLD_LABELS)
    assert (
        main(
            [
                "filter",
                "--generated",
                str(sorted_out),
                "--gold",
                str(gold_file),
                "--output",
                str(tmp_path / "kept"),
                "--rule",
                "duplicate",
                "--label-names",
                names,
            ]
        )
        == 0
    )
    kept = load(tmp_path / "kept")
    assert kept.features["ner_tags"].feature.names == GOLD_LABELS
    assert tag_strings(kept) == tag_strings(load(sorted_out).sort("id"))[: len(kept)]
    capsys.readouterr()
    assert main(["generate", *common, "-o", str(tmp_path / "bad"), "--label-names", "O,B-Gene,I-Gene"]) == 2
    assert "lack ['B-Chemical', 'I-Chemical', 'B-Disease', 'I-Disease']" in capsys.readouterr().err


def test_accelerate_two_processes_split_the_shards(model_dir, tmp_path):
    out = tmp_path / "parallel"
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "accelerate.commands.launch",
            "--cpu",
            "--num_processes",
            "2",
            "--num_machines",
            "1",
            "--mixed_precision",
            "no",
            "--dynamo_backend",
            "no",
            "-m",
            "hf_ecg.cli",
            "generate",
            "--model",
            str(model_dir),
            "-n",
            "10",
            "-o",
            str(out),
            "--samples-per-shard",
            "3",
            "--seed",
            "4",
            "--max-block-tokens",
            "5",
            "--batch-size",
            "2",
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    assert result.stdout.count("wrote 10 samples") == 1
    single = tmp_path / "single"
    assert (
        main(
            [
                "generate",
                "--model",
                str(model_dir),
                "-n",
                "10",
                "-o",
                str(single),
                "--samples-per-shard",
                "3",
                "--seed",
                "4",
                "--max-block-tokens",
                "5",
                "--batch-size",
                "2",
            ]
        )
        == 0
    )
    parallel = load(out).sort("id")
    assert parallel["id"] == list(range(10))
    assert parallel.to_list() == load(single).sort("id").to_list()  # the same dataset, whoever wrote it


def test_a_high_redrawn_share_alone_is_not_called_undertrained(tmp_path):
    """A converged small-corpus generator redraws about half its tokens at temperature 1, more as it overfits
    (docs/ablations.md, the training curves): with the redraw budget on, only blocks the budget kept as they were say
    the model is undertrained; with no budget, redrawing more than it kept still does."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from hf_ecg.synthetic.generation_report import generation_cost

    def shard(refused: int) -> None:
        rows = {
            "model_tokens": [40, 40],
            "redrawn_tokens": [60, 50],
            "refused_redraws": [refused, 0],
            "entities": [["Chemical"], ["Disease", "Chemical"]],
        }
        pq.write_table(pa.table(rows), tmp_path / "train-00000.parquet")

    shard(refused=0)
    assert generation_cost(tmp_path, 1.0)["undertrained"] is False  # 58% redrawn, nothing refused
    assert generation_cost(tmp_path, None)["undertrained"] is True  # no budget: redrawn > kept
    shard(refused=1)  # 1 of 5 blocks kept as it was by the budget
    assert generation_cost(tmp_path, 1.0)["undertrained"] is True


@hypothesis_settings(max_examples=80, deadline=None)
@given(st.integers(1, 40), st.integers(1, 9), st.integers(1, 6))
def test_every_shard_is_written_once_in_groups_that_do_not_depend_on_the_process_count(count, together, processes):
    layout = ShardLayout(Path("unused"), count * 3, 3)  # count shards of 3
    groups = layout.groups(together)
    assert groups == ShardLayout(Path("elsewhere"), count * 3 - 1, 3).groups(together)  # fixed by the indices
    assert [s for group in groups for s in group] == list(range(count))  # each shard once, in order
    assert all(1 <= len(group) <= together for group in groups)
    assert all(len(group) == together for group in groups[:-1])  # only the last group may hold fewer
    per_process = [[g for k, g in enumerate(groups) if k % processes == p] for p in range(processes)]
    assert sorted(s for mine in per_process for group in mine for s in group) == list(range(count))


def test_generate_dataset_writes_each_explicit_phrase_exactly_where_it_stands(tmp_path):
    """Requests of types and phrases: each sample's tokens hold the phrase verbatim once, after the mention of the
    type before it and before the one after it; its labels are the requested types; the manifest records the
    requests, phrases as ``{"phrase": words}``."""
    from hf_ecg.runtime.decoding_config import Phrase
    from tiny import save_tiny_ecg_model

    phrase = Phrase.of("zebra quartz lintel")
    requests = [["Chemical", phrase, "Disease"], [phrase, "Disease"], ["Chemical"]]
    out = generate_dataset(
        save_tiny_ecg_model(tmp_path / "model"),
        tmp_path / "out",
        6,
        entities=requests,
        decoding=DecodingConfig(max_block_tokens=4, batch_size=4),
        run=DatasetRunConfig(samples_per_shard=4, progress_bar=False),
    )
    data = datasets.load_dataset(str(out), split="train").sort("id")
    names = data.features["ner_tags"].feature.names
    for row in data:
        request = requests[row["id"] % len(requests)]
        spans, _ = tags_to_spans([names[k] for k in row["ner_tags"]], "IOB2")
        assert row["entities"] == [p for p in request if isinstance(p, str)] == [s.label for s in spans]
        words, n = row["tokens"], len(phrase.words)
        starts = [i for i in range(len(words) - n + 1) if tuple(words[i : i + n]) == phrase.words]
        assert len(starts) == (phrase in request), words
        if "Chemical" in request and phrase in request:
            assert spans[0].end <= starts[0] < starts[0] + n <= spans[1].start
    recorded = json.loads((out / "ecg_generation.json").read_text())["entities"]
    assert recorded[0] == ["Chemical", {"phrase": "zebra quartz lintel"}, "Disease"]
