"""The reproduction protocol (paper_protocol, what scripts/reproduce.py runs) end to end on tiny models: every
stage runs, the tables hold what this run computed."""

from __future__ import annotations

import json
from dataclasses import replace

import datasets
import pytest
from paper_protocol import run_protocol
from paper_protocol.config import ReproduceConfig, Row, ner_rows, parse_reproduce_config, wanted
from paper_protocol.mention_curve import MENTION_SOURCES, mention_curve_rows
from paper_protocol.ner_runs import cached_run, run_path
from paper_protocol.tables import verdict

from tiny import save_tiny_bert, save_tiny_model, toy_corpus


def test_reproduce_runs_every_stage_on_tiny_models_and_resumes(tmp_path, capsys):
    data = tmp_path / "data" / "bc5cdr"
    data.mkdir(parents=True)
    for split, repeat in (("train", 6), ("devel", 2), ("test", 2)):
        toy_corpus(data / f"{split}.tsv", repeat=repeat)
    reference = tmp_path / "reference.json"
    reference.write_text(json.dumps({"bc5cdr-8": {"gold": [0.5, 0.1], "gold+daga": [0.6, 0.01]}}))
    output = tmp_path / "run"
    argv = [
        "--dataset",
        "bc5cdr",
        "--first-n",
        "8",
        "--tables",
        "extended",
        "--scales",
        "1,3",
        "--seeds",
        "1,2",
        "--generator-model",
        str(save_tiny_model(tmp_path / "gpt2")),
        "--no-lora",
        "--generator-max-steps",
        "4",  # a generator some of whose samples pass the curve's repair rules (after 2 or 3 steps none did: chance)
        "--max-block-tokens",
        "4",
        "--max-attempts",
        "1",
        "--generation-batch-size",
        "8",
        "--rule",
        "duplicate",
        "--ner-model",
        str(save_tiny_bert(tmp_path / "bert")),
        "--ner-epochs",
        "1",
        "--dev-first-n",
        "4",
        "--workers",
        "1",
        "--data-dir",
        str(tmp_path / "data"),
        "--output",
        str(output),
        "--reference",
        str(reference),
    ]
    # The extended selections, with rules that a tiny generator's samples can pass; "whole" keeps none of them.
    variants = {
        "dup": (("duplicate",), False),
        "pair": (("duplicate", "near-copy"), True),
        "none-kept": (("whole",), False),
    }

    def reproduce(*more: str) -> None:
        assert run_protocol(parse_reproduce_config([*argv, *more]), selection_variants=variants) == output

    reproduce()
    printed = capsys.readouterr().out
    assert "gold " in printed and "against the reference 0.500" in printed
    assert "reference gold + DAGA: 0.600 ± 0.010" in printed

    results = json.loads((output / "ner.json").read_text())
    expected = {row.key for row in ner_rows("two-stage", ("concat", "oversample", "two-stage"), [1, 3], 2, variants)}
    expected |= {row.key for row in mention_curve_rows(list(MENTION_SOURCES), [1, 3], "two-stage")}
    expected.remove("gold+sel-none-kept")  # its selection kept nothing
    assert set(results) == expected and {"gold+qalm-3x", "gold+sel-concat", "gold+mr-two-stage"} <= set(results)
    assert "vs gold+mr " in printed and "vs gold+mr-two-stage " in printed  # every recipe of the baseline
    assert all(len(runs) == 2 and [r["seed"] for r in runs] == [1, 2] for runs in results.values())
    assert all(run["dev_selection"] for runs in results.values() for run in runs)  # epochs chosen on dev
    tables = (output / "tables.md").read_text()
    assert "not run" not in tables and "| gold + ECG-QALM, selected (two-stage) | 16 |" in tables
    assert "| gold | 8 |" in tables and "0.500 ± 0.100" in tables  # the reference beside this run's gold
    # gold's quality row is computed, each sentence against the others (the toy corpus repeats its sentences)
    assert "| gold (each sentence against the other gold sentences) |" in tables
    assert "| 1.000 / 1.000 | 100% |" in tables
    assert (output / "scaling.png").stat().st_size > 0
    quality = json.loads((output / "quality.json").read_text())
    assert {"mr", "lm", "qalm", "sel", "qalm-all", "gold"} <= set(quality)
    selected = json.loads((output / "work" / "synthetic-qalm-selected" / "ecg_generation.json").read_text())
    assert selected["selection"]["config"]["rules"] == ["duplicate"] and selected["selection"]["source_samples"] == 16
    curve = json.loads((output / "work" / "synthetic-qalm-curve" / "ecg_generation.json").read_text())
    assert curve["num_samples"] == 24  # the 3× point, beyond the 2× pool, in a folder of its own
    for name, (rules, ensemble) in variants.items():  # the extended tables' other selections
        if name == "none-kept":
            assert not (output / "work" / f"synthetic-qalm-selected-{name}" / "ecg_generation.json").exists()
            continue
        variant = json.loads((output / "work" / f"synthetic-qalm-selected-{name}" / "ecg_generation.json").read_text())
        assert variant["selection"]["config"]["rules"] == list(rules)
        assert variant["selection"]["config"]["tagger_seeds"] == ([1, 2] if ensemble else [1])
        assert f"selection {name}: kept {variant['selection']['kept']} of 16" in tables

    # The mention-source curve: one generator trained with mention samples, the same templates in every source's
    # set, a gazetteer of the whole training pool, mention replacement with it, each source repaired.
    assert json.loads((output / "work" / "ecg-qalm-mentions" / "ecg_config.json").read_text())["mention_token"]
    assert sorted(p.name for p in (output / "work" / "gazetteer").iterdir()) == ["Chemical.txt", "Disease.txt"]
    manifests = {
        source: json.loads((output / "work" / f"synthetic-curve-{source}" / "ecg_generation.json").read_text())
        for source in MENTION_SOURCES
    }
    assert {m["mentions"]["source"] for m in manifests.values()} == {"bank", "generated", "lists"}
    assert all(m["num_samples"] == 24 for m in manifests.values())
    columns = [
        datasets.load_dataset(str(output / "work" / f"synthetic-curve-{s}"), split="train", cache_dir=str(tmp_path))
        for s in MENTION_SOURCES
    ]
    assert columns[0]["template"] == columns[1]["template"] == columns[2]["template"]  # only the mentions differ
    assert len(columns[0]) == 24
    repaired = json.loads((output / "work" / "synthetic-curve-generated-repaired" / "ecg_generation.json").read_text())
    assert repaired["selection"]["config"]["rules"] == ["mention-type", "relabel"]
    assert repaired["selection"]["config"]["tagger_seeds"] == [1, 2]
    assert (output / "work" / "synthetic-mr-lists" / "data").is_dir()
    assert "## Mentions by source" in tables and "| generated mentions, repaired |" in tables
    assert (output / "mention_sources.png").stat().st_size > 0

    # A rerun computes nothing again: every stage's output is in the run folder.
    runs_before = {p.name: p.stat().st_mtime_ns for p in (output / "runs").iterdir()}
    reproduce()
    assert {p.name: p.stat().st_mtime_ns for p in (output / "runs").iterdir()} == runs_before
    assert json.loads((output / "timing.json").read_text())["invocations"] == 2
    assert "over 2 invocations" in capsys.readouterr().out

    # --rows picks rows by key or pattern; without the verdict's rows there is no verdict.
    assert [row.key for row in ner_rows("concat", ("concat",), [1]) if wanted(row, "gold,*-only")] == [
        "gold",
        "mr-only",
        "lm-only",
        "qalm-only",
        "sel-only",
    ]
    reproduce("--rows", "gold,gold+sel-dup")
    assert "no verdict" in capsys.readouterr().out

    # Another --recipe reruns the rows that mix data (their cached runs were made another way), and only those.
    reproduce("--rows", "gold,gold+mr,gold+sel", "--recipe", "concat")
    after = {p.name: p.stat().st_mtime_ns for p in (output / "runs").iterdir()}
    rerun = sorted(name for name in after if after[name] != runs_before[name])
    assert rerun == ["gold+sel-seed1.json", "gold+sel-seed2.json"]
    assert json.loads((output / "runs" / "gold+sel-seed1.json").read_text())["recipe"] == "concat"


def test_verdict_compares_selected_data_with_gold_and_every_mention_replacement_recipe():
    def runs(*scores):
        return [{"entity_f1": score} for score in scores]

    results = {
        "gold": runs(0.45, 0.46, 0.44),
        "gold+mr": runs(0.46, 0.47, 0.45),
        "gold+mr-two-stage": runs(0.47, 0.49, 0.45),
        "gold+sel": runs(0.48, 0.49, 0.47),
    }
    lines = verdict(results, {"gold": [0.48, 0.01], "gold+daga": [0.472, 0.0]})
    assert lines[0] == "gold 0.450 against the reference 0.480: NOT within 0.02"
    assert "vs gold 0.450: +0.030, above the larger std 0.010" in lines[1]
    assert "vs gold+mr 0.460: +0.020, above the larger std 0.010" in lines[2]
    assert "vs gold+mr-two-stage 0.470: +0.010, not above the larger std 0.020" in lines[3]
    assert lines[4] == "reference gold + DAGA: 0.472 ± 0.000"
    assert verdict({"gold": results["gold"]}, {})[0].startswith("no verdict")


def test_a_cached_run_counts_only_when_made_with_the_rows_recipe(tmp_path):
    mixed = Row("gold+sel", "x", True, "sel", recipe="two-stage")
    alone = Row("gold", "gold", True)
    assert run_path(tmp_path, "gold+sel", 3) == tmp_path / "gold+sel-seed3.json"
    assert not cached_run(tmp_path, mixed, 3)
    run_path(tmp_path, "gold+sel", 3).write_text(json.dumps({"recipe": "concat"}))
    run_path(tmp_path, "gold", 3).write_text(json.dumps({"recipe": "concat"}))
    assert not cached_run(tmp_path, mixed, 3)  # made another way: run again
    assert cached_run(tmp_path, replace(mixed, recipe="concat"), 3)
    assert cached_run(tmp_path, replace(alone, recipe="two-stage"), 3)  # mixes nothing: any recipe


def test_the_options_parse_into_a_typed_config_with_the_scripts_spellings():
    """scripts/reproduce.py's options, as the README writes them, become ReproduceConfig fields with their types."""
    config = parse_reproduce_config(
        [
            "--dataset",
            "jnlpba",
            "--first-n",
            "186",
            "--no-lora",
            "--rule",
            "duplicate",
            "whole",
            "--ner-learning-rate",
            "5e-5",
            "--generator_epochs",
            "2",
        ],
        data_dir="/data",
    )
    assert config == ReproduceConfig(
        dataset="jnlpba",
        first_n=186,
        lora=False,
        rule=["duplicate", "whole"],
        ner_learning_rate=5e-5,
        generator_epochs=2.0,
        data_dir="/data",
    )
    assert (
        parse_reproduce_config(
            ["--dataset", "bc5cdr", "--first-n", "45", "--data-dir", "/mine"], data_dir="/d"
        ).data_dir
        == "/mine"
    )
    with pytest.raises(SystemExit):
        parse_reproduce_config(["--dataset", "conll", "--first-n", "45"])
