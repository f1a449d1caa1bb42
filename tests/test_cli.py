from __future__ import annotations

import json
import subprocess
import sys

import datasets
import pytest

from hf_ecg.cli import main


def test_blocks_writes_dataset_dict_stats_and_summary(tmp_path, capsys):
    data = tmp_path / "train.tsv"
    data.write_text("Aspirin\tB-Chemical\ncures\tO\nflu\tB-Disease\n\nok\tO\n\nx\tI-Disease\n")
    dev = tmp_path / "dev.tsv"
    dev.write_text("y\tB-Chemical\n")
    out = tmp_path / "out"
    assert main(["blocks", str(data), "--validation", str(dev), "--output", str(out), "--check"]) == 0
    printed = capsys.readouterr().out
    assert "check: train: decompose -> recompose exact on all 3 sentences" in printed
    assert "3 sentences" in printed and "3 entities" in printed and "6 blocks" in printed
    assert "1 tags did not fit IOB2 and were repaired" in printed
    ds = datasets.load_from_disk(str(out))
    assert ds["train"].num_rows == 6 and ds["validation"].num_rows == 2
    assert {"context", "question", "answer", "sentence_id", "block_index"} <= set(ds["train"].column_names)
    stats = json.loads((out / "corpus_stats.json").read_text())
    assert stats["entity_type_counts"] == {"Chemical": 1, "Disease": 2}
    assert stats["num_sentences"] == 3 and stats["num_blocks"] == 6
    assert stats["mention_bank_sizes"]["Disease"] == {"unique": 2, "total": 2}


def test_blocks_strict_names_file_and_line(tmp_path, capsys):
    data = tmp_path / "train.tsv"
    data.write_text("a\tB-X\n\nb\tO\nc\tI-X\n")
    assert main(["blocks", str(data), "--strict", "--output", str(tmp_path / "o")]) == 2
    assert f"{data}:4: token 2: 'I-X' does not continue a span" in capsys.readouterr().err
    assert not (tmp_path / "o").exists()


def test_blocks_check_names_the_failing_sentence(tmp_path, capsys):
    data = tmp_path / "train.tsv"
    data.write_text("fine\tO\n\nsays\tO\n<ENDTEXT>\tO\n")
    assert main(["blocks", str(data), "--check", "--output", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err
    assert f"check failed at {data}:3 (train sentence 1)" in err and "reserved" in err


def test_blocks_rejects_first_n_with_fraction(tmp_path):
    with pytest.raises(SystemExit):
        main(["blocks", "x.tsv", "--first-n", "3", "--fraction", "0.1", "--output", str(tmp_path)])


def test_console_script_help():
    result = subprocess.run([sys.executable, "-m", "hf_ecg", "blocks", "--help"], capture_output=True, text=True)
    assert result.returncode == 0
    assert "--first-n" in result.stdout and "--check" in result.stdout


@pytest.mark.parametrize(
    ("corpus", "first_n", "sentences", "entities", "rows"),
    [("bc5cdr/train.tsv", 45, 45, 112, 157), ("jnlpba/devel.tsv", 186, 186, 375, 561)],
)
def test_paper_low_resource_splits(shared_data, tmp_path, capsys, corpus, first_n, sentences, entities, rows):
    out = tmp_path / "b"
    assert main(["blocks", str(shared_data / corpus), "--first-n", str(first_n), "--output", str(out)]) == 0
    stats = json.loads((out / "corpus_stats.json").read_text())
    assert (stats["num_sentences"], stats["num_entities"]) == (sentences, entities)
    assert datasets.load_from_disk(str(out))["train"].num_rows == rows


@pytest.mark.parametrize("corpus", ["bc5cdr/train.tsv", "jnlpba/devel.tsv"])
def test_check_passes_on_whole_shared_corpora(shared_data, tmp_path, capsys, corpus):
    assert main(["blocks", str(shared_data / corpus), "--check", "--output", str(tmp_path / "b")]) == 0
    assert "decompose -> recompose exact on all" in capsys.readouterr().out


def test_train_help_shows_each_option_once_and_no_old_spelling(capsys):
    import re

    from hf_ecg.cli.train import OLD_SPELLINGS, TRAINING_OPTIONS

    with pytest.raises(SystemExit):
        main(["train", "--help"])
    text = capsys.readouterr().out
    listed = set(re.findall(r"--[a-z][a-z0-9_-]*", text))
    flags = [line.split()[0].rstrip(",") for line in text.splitlines() if re.match(r"  --", line)]
    assert len(flags) == len(set(flags)), flags  # each option once in the option list
    for name in TRAINING_OPTIONS:  # the training fields, dashed, one spelling each
        dashed = name.replace("_", "-")
        assert f"--{dashed}" in flags or f"--no-{dashed}" in flags
        if "_" in name:
            assert f"--{name}" not in listed
    for old in ("--epochs", "--full", "--lora"):  # hidden: read, not shown
        assert old in OLD_SPELLINGS and old not in flags and f"{old} " not in text


@pytest.mark.parametrize(
    ("old", "field", "value"),
    [(["--epochs", "2"], "num_train_epochs", 2.0), (["--full"], "lora", False), (["--lora"], "lora", True)],
)
def test_train_reads_the_old_spellings_with_a_warning(old, field, value, tmp_path, capsys):
    from hf_ecg.cli import build_parser
    from hf_ecg.cli.train import _training_arguments

    args = build_parser().parse_args(["train", "--data", "d.tsv", "--model", "m", "--output", str(tmp_path), *old])
    assert getattr(_training_arguments(args, []), field) == value
    assert f"{old[0]} is an old spelling and will be removed" in capsys.readouterr().err


def test_train_refuses_a_field_given_in_the_old_and_the_new_spelling(tmp_path):
    from hf_ecg.cli import build_parser
    from hf_ecg.cli.common import CLIError
    from hf_ecg.cli.train import _training_arguments

    argv = ["train", "--data", "d.tsv", "--model", "m", "--output", str(tmp_path), "--epochs", "2"]
    args = build_parser().parse_args([*argv, "--num-train-epochs", "3"])
    with pytest.raises(CLIError, match="--epochs and another option both set num_train_epochs"):
        _training_arguments(args, [])
    args = build_parser().parse_args([*argv[:-2], "--max-steps", "5"])
    assert _training_arguments(args, ["--max_steps", "7"]).max_steps == 7  # the command line's extra flag wins
