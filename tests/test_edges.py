"""The tool at its edges: nothing overwritten, nothing partial passed off as whole, every bad input one
clear line with exit code 2 and nothing created or changed."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import textwrap
import warnings
from pathlib import Path

import datasets
import pytest
import torch
import yaml

from hf_ecg.cli import main
from tiny import save_tiny_ecg_model, save_tiny_model, toy_corpus


def md5(path: Path) -> str:
    return hashlib.md5(path.read_bytes()).hexdigest()


def front_matter(readme: Path) -> dict:
    return yaml.safe_load(readme.read_text(encoding="utf-8").split("---\n")[1])


@pytest.fixture(scope="module")
def models(tmp_path_factory):
    root = tmp_path_factory.mktemp("edges")
    return {
        "ecg": save_tiny_ecg_model(root / "ecg"),
        "base": save_tiny_model(root / "base"),
        "corpus": toy_corpus(root / "toy.tsv", repeat=3),
    }


@pytest.fixture(scope="module")
def generated(models, tmp_path_factory):
    out = tmp_path_factory.mktemp("generated") / "synthetic"
    assert (
        main(
            [
                "generate",
                "--model",
                str(models["ecg"]),
                "-n",
                "6",
                "-o",
                str(out),
                "--samples-per-shard",
                "3",
                "--max-block-tokens",
                "6",
                "--license",
                "cc-by-4.0",
                "--source-dataset",
                "org/toy",
            ]
        )
        == 0
    )
    return out


def generate_argv(models, out: Path, n: int = 20) -> list[str]:
    return [
        "generate",
        "--model",
        str(models["ecg"]),
        "-n",
        str(n),
        "-o",
        str(out),
        "--samples-per-shard",
        "5",
        "--max-block-tokens",
        "6",
        "--seed",
        "3",
    ]


# 1. export never replaces a file silently


def test_export_refuses_an_existing_file_unless_overwrite(generated, tmp_path, capsys):
    target = tmp_path / "gold.tsv"
    target.write_text("Aspirin\tB-Chemical\n\n", encoding="utf-8")
    before = md5(target)
    assert main(["export", "--data", str(generated), "-o", str(target)]) == 2
    assert capsys.readouterr().err.strip().splitlines()[-1] == (
        f"hf-ecg export: error: {target} exists: give a new file name, or --overwrite to replace it"
    )
    assert md5(target) == before
    assert main(["export", "--data", str(generated), "-o", str(target), "--overwrite"]) == 0
    assert md5(target) != before and target.read_text().count("\n\n") == 6


# 2. a run killed midway is no dataset, and resumes to the identical one


def test_a_killed_generation_is_no_dataset_and_resumes_to_the_identical_one(models, tmp_path, capsys):
    whole, killed = tmp_path / "whole", tmp_path / "killed"
    assert main(generate_argv(models, whole)) == 0
    # A process that SIGKILLs itself right after its second shard is on disk: no cleanup, no finally.
    driver = textwrap.dedent(f"""
        import os, signal, sys
        import hf_ecg.synthetic.writer as generate
        real, written = generate.write_shard, []
        def write_then_die(*args):
            real(*args)
            written.append(1)
            if len(written) == 2:
                os.kill(os.getpid(), signal.SIGKILL)
        generate.write_shard = write_then_die
        from hf_ecg.cli import main
        sys.exit(main({generate_argv(models, killed)!r}))
    """)
    result = subprocess.run([sys.executable, "-c", driver], capture_output=True, text=True, cwd=tmp_path)
    assert result.returncode == -9, result.stderr[-2000:]

    with pytest.raises(datasets.exceptions.DataFilesNotFoundError):
        datasets.load_dataset(str(killed), split="train")  # not 10 of 20 rows passed off as the dataset
    resume = "hf-ecg " + " ".join(generate_argv(models, killed))
    message = f"{killed} is an unfinished generation (10 of 20 samples written): resume it with `{resume}`"
    assert main(["export", "--data", str(killed), "-o", str(tmp_path / "x.tsv")]) == 2
    assert capsys.readouterr().err.strip().splitlines()[-1] == f"hf-ecg export: error: {message}"
    assert not (tmp_path / "x.tsv").exists()
    assert (
        main(
            [
                "filter",
                "--generated",
                str(killed),
                "--gold",
                str(models["corpus"]),
                "-o",
                str(tmp_path / "f"),
                "--rule",
                "duplicate",
            ]
        )
        == 2
    )
    assert message in capsys.readouterr().err and not (tmp_path / "f").exists()
    assert (
        main(
            [
                "evaluate",
                "quality",
                "--generated",
                str(killed),
                "--reference",
                str(models["corpus"]),
                "--ref-model",
                "none",
            ]
        )
        == 2
    )
    assert message in capsys.readouterr().err
    assert "Resume it with" in (killed / "README.md").read_text()

    assert main(generate_argv(models, killed)) == 0  # the same command again
    assert not (killed / "unfinished").exists()
    resumed = datasets.load_dataset(str(killed), split="train")
    assert sorted(resumed["id"]) == list(range(20))
    assert resumed.sort("id").to_list() == datasets.load_dataset(str(whole), split="train").sort("id").to_list()


def test_a_resume_with_a_model_changed_in_place_is_refused_and_the_folder_kept(models, tmp_path, capsys):
    """Crash after one shard, retrain the model in place, run the same command: the samples of two models
    would share one manifest, so it is refused in one line that says so, and nothing on disk changes."""
    model = tmp_path / "model"
    shutil.copytree(models["ecg"], model)
    killed = tmp_path / "killed"
    argv = [
        "generate",
        "--model",
        str(model),
        "-n",
        "10",
        "-o",
        str(killed),
        "--samples-per-shard",
        "5",
        "--max-block-tokens",
        "6",
        "--seed",
        "3",
    ]
    driver = textwrap.dedent(f"""
        import os, signal, sys
        import hf_ecg.synthetic.writer as generate
        real = generate.write_shard
        def write_then_die(*args):
            real(*args)
            os.kill(os.getpid(), signal.SIGKILL)
        generate.write_shard = write_then_die
        from hf_ecg.cli import main
        sys.exit(main({argv!r}))
    """)
    result = subprocess.run([sys.executable, "-c", driver], capture_output=True, text=True, cwd=tmp_path)
    assert result.returncode == -9, result.stderr[-2000:]
    before = snapshot(killed)
    manifest = json.loads((killed / "ecg_generation.json").read_text())
    assert manifest["model_fingerprint"] and "unfinished" in {p.name for p in killed.iterdir()}

    from transformers import AutoModelForCausalLM

    retrained = AutoModelForCausalLM.from_pretrained(model)
    with torch.no_grad():
        next(retrained.parameters()).add_(0.01)
    retrained.save_pretrained(model)  # "retrained in place"
    assert main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()[-1]
    assert err.startswith(f"hf-ecg generate: error: {killed} was begun with another model: {model} changed since")
    assert snapshot(killed) == before
    assert main([*argv, "--overwrite"]) == 0  # starting again is the user's choice
    assert (
        json.loads((killed / "ecg_generation.json").read_text())["model_fingerprint"] != manifest["model_fingerprint"]
    )
    assert "(fingerprint `" in (killed / "README.md").read_text()


# 3. train --push_to_hub: token and repo id checked before training


@pytest.fixture
def no_token(monkeypatch, tmp_path):
    monkeypatch.delenv("HF_TOKEN", raising=False)
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf-home"))  # no stored `hf auth login` token either
    import huggingface_hub.constants as constants

    monkeypatch.setattr(constants, "HF_TOKEN_PATH", str(tmp_path / "hf-home" / "token"))
    monkeypatch.setattr(constants, "HF_STORED_TOKENS_PATH", str(tmp_path / "hf-home" / "stored_tokens"))


def test_train_push_to_hub_without_a_token_fails_before_training(models, tmp_path, capsys, no_token):
    out = tmp_path / "model"
    argv = [
        "train",
        "--data",
        str(models["corpus"]),
        "--model",
        str(models["base"]),
        "-o",
        str(out),
        "--max-steps",
        "1",
        "--max-length",
        "128",
        "--push_to_hub",
        "true",
    ]
    assert main(argv) == 2
    assert capsys.readouterr().err.strip().splitlines()[-1] == (
        f"hf-ecg train: error: no Hugging Face token to push model: set HF_TOKEN or run `hf auth login` (or train "
        f"without push_to_hub and publish later with `hf-ecg push-model --model {out} --repo-id ORG/NAME`)"
    )
    assert not out.exists()  # nothing trained, nothing written
    assert main([*argv, "--hub_model_id", "not a repo id"]) == 2
    assert "'not a repo id' is not a valid Hub repo id" in capsys.readouterr().err and not out.exists()


def test_train_help_names_push_to_hub_and_the_card_options(capsys):
    with pytest.raises(SystemExit):
        main(["train", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "--push-to-hub true [--hub-model-id ORG/NAME]" in text and "checked before training starts" in text
    assert "--license ID" in text and "--dataset-id ORG/NAME" in text


# 4. one line, exit code 2, nothing created


@pytest.mark.parametrize("command", ["generate", "blocks", "train", "baseline"])
def test_an_existing_file_as_output_folder_is_one_line(command, models, tmp_path, capsys):
    target = tmp_path / "taken.tsv"
    target.write_text("keep me\n")
    argv = {
        "generate": ["generate", "--model", str(models["ecg"]), "-n", "2", "-o", str(target)],
        "blocks": ["blocks", str(models["corpus"]), "-o", str(target)],
        "train": ["train", "--data", str(models["corpus"]), "--model", str(models["base"]), "-o", str(target)],
        "baseline": ["baseline", "mention-replacement", "--data", str(models["corpus"]), "-o", str(target)],
    }[command]
    assert main(argv) == 2
    expected = f"{target} exists and is a file: the output is a folder; give a new or empty folder"
    assert capsys.readouterr().err.strip().splitlines()[-1] == f"hf-ecg {argv[0]}: error: {expected}"
    assert target.read_text() == "keep me\n"


def test_a_model_folder_without_weights_is_one_line(models, tmp_path, capsys):
    folder = tmp_path / "no-weights"
    folder.mkdir()
    for path in models["ecg"].glob("*.json"):
        (folder / path.name).write_bytes(path.read_bytes())
    out = tmp_path / "out"
    assert main(["generate", "--model", str(folder), "-n", "2", "-o", str(out)]) == 2
    line = capsys.readouterr().err.strip().splitlines()[-1]
    assert line.startswith(f"hf-ecg generate: error: cannot load the model in the folder {folder}: ")
    assert "model.safetensors" in line and not out.exists()


def test_a_missing_model_says_so(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert main(["generate", "--model", "nosuchmodel", "-n", "2", "-o", "out"]) == 2
    assert capsys.readouterr().err.strip().splitlines()[-1] == (
        "hf-ecg generate: error: nosuchmodel: no such model folder, and no Hub model of that id with an "
        "ecg_config.json could be reached"
    )
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("command", ["generate", "push-model", "evaluate"])
def test_a_model_path_that_is_no_folder_and_no_hub_id_is_one_line(command, models, tmp_path, capsys, monkeypatch):
    """The README's own `outputs/quickstart/model` before the quickstart has run (a path, so no Hub id)."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    argv = {
        "generate": ["generate", "--model", "outputs/quickstart/model", "-n", "2", "-o", "out"],
        "push-model": ["push-model", "--model", "outputs/quickstart/model", "--repo-id", "org/x", "--local-dir", "out"],
        "evaluate": [
            "evaluate",
            "ner",
            "--model",
            "/missing",
            "--train",
            str(models["corpus"]),
            "--test",
            str(models["corpus"]),
            "-o",
            "out",
        ],
    }[command]
    assert main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err[-1].startswith(f"hf-ecg {argv[0]}: error: ") and "Traceback" not in "\n".join(err)
    assert "outputs/quickstart/model: no such model folder" in err[-1] or "cannot load model '/missing'" in err[-1]
    assert not (tmp_path / "out").exists()


def test_corrupt_json_names_its_file_and_line(models, generated, tmp_path, capsys):
    """A manifest, an ecg_config.json or a --quality file that is not JSON: one line naming the file."""
    data = tmp_path / "data"
    shutil.copytree(generated, data)
    (data / "ecg_generation.json").write_text('{"num_samples":\n')
    assert main(["export", "--data", str(data), "-o", str(tmp_path / "x.tsv")]) == 2
    assert f"{data / 'ecg_generation.json'}:2:1: not valid JSON" in capsys.readouterr().err
    model = tmp_path / "model"
    shutil.copytree(models["ecg"], model)
    (model / "ecg_config.json").write_text("{\n  'entity_types': []\n}\n")
    assert main(["generate", "--model", str(model), "-n", "2", "-o", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and f"{model / 'ecg_config.json'}:2:3: not valid JSON" in err[0]
    quality = tmp_path / "quality.json"
    quality.write_text("not json")
    assert (
        main(
            [
                "push-dataset",
                "--data",
                str(generated),
                "--repo-id",
                "org/x",
                "--local-dir",
                str(tmp_path / "p"),
                "--quality",
                str(quality),
            ]
        )
        == 2
    )
    assert f"{quality}:1:1: not valid JSON" in capsys.readouterr().err
    assert not (tmp_path / "out").exists() and not (tmp_path / "p").exists()


def test_values_that_would_be_ignored_or_misread_are_refused(models, generated, tmp_path, capsys):
    """Each was accepted without a word: train --max-steps 0 trained one step, a near-copy threshold above 1
    filtered nothing, a repo id the Hub refuses went into a card, ':abc' after a file said it did not exist."""
    corpus = models["corpus"]
    train = ["train", "--data", str(corpus), "--model", str(models["base"]), "-o", str(tmp_path / "m")]
    cases = [
        ([*train, "--max-steps", "0"], "--max-steps must be at least 1, got 0"),
        *(
            ([*train, "--num-train-epochs", epochs], f"--num-train-epochs must be above 0, got {float(epochs)}")
            for epochs in ("0", "-1")
        ),
        (
            [
                "filter",
                "--generated",
                str(generated),
                "--gold",
                str(corpus),
                "--rule",
                "near-copy",
                "--near-copy-threshold",
                "2",
                "-o",
                str(tmp_path / "f"),
            ],
            "--near-copy-threshold is a ROUGE-L score",
        ),
        (
            [
                "push-dataset",
                "--data",
                str(generated),
                "--repo-id",
                "not a repo id",
                "--local-dir",
                str(tmp_path / "p"),
            ],
            "'not a repo id' is not a valid Hub repo id",
        ),
        (
            ["filter", "--generated", str(generated), "--gold", f"{corpus}:abc", "-o", str(tmp_path / "f")],
            f"{corpus}:abc: 'abc' after the file name is not a number of sentences",
        ),
        (
            ["generate", "--model", str(models["ecg"]), "-n", "2", "-o", str(tmp_path / "g"), "--temperature", "0"],
            "(for greedy decoding: --no-do-sample)",
        ),
    ]
    for argv, message in cases:
        assert main(argv) == 2, argv
        err = capsys.readouterr().err.strip().splitlines()
        assert message in err[-1] and err[-1].startswith(f"hf-ecg {argv[0]}: error: "), (argv, err[-3:])
    assert not any((tmp_path / name).exists() for name in ("m", "f", "p", "g"))


def test_evaluate_ner_says_when_the_test_data_has_a_type_no_training_sentence_has(tmp_path, caplog):
    from hf_ecg.data.corpus import read_conll
    from hf_ecg.evaluation.ner import evaluate_ner
    from hf_ecg.taggers.tagger import NERConfig
    from tiny import save_tiny_bert

    train = read_conll(toy_corpus(tmp_path / "toy.tsv"))
    (tmp_path / "test.tsv").write_text("BRCA1\tB-Gene\nmutates\tO\n", encoding="utf-8")
    config = NERConfig(model=str(save_tiny_bert(tmp_path / "bert")), epochs=1, batch_size=4, seeds=[1])
    with caplog.at_level("WARNING"):
        evaluate_ner([train], read_conll(tmp_path / "test.tsv"), config)
    assert "the test data has type(s) Gene that no training sentence has" in caplog.text


def test_a_base_model_shorter_than_max_length_fails_before_anything_is_written(models, tmp_path, capsys):
    short = save_tiny_model(tmp_path / "short", n_positions=128)
    out = tmp_path / "model"
    argv = ["train", "--data", str(models["corpus"]), "--model", str(short), "-o", str(out), "--max-steps", "1"]
    assert main(argv) == 2  # max_length defaults to 256
    assert capsys.readouterr().err.strip().splitlines()[-1] == (
        f"hf-ecg train: error: {short} has 128 positions, fewer than --max-length 256: pass --max-length 128 (or less)"
    )
    assert not out.exists()


@pytest.mark.parametrize("command", ["train", "blocks"])
def test_corpus_paths_say_what_is_wrong(command, models, tmp_path, capsys):
    folder, missing = tmp_path / "adir", tmp_path / "nofile.tsv"
    folder.mkdir()
    out = tmp_path / "out"
    for data, expected in (
        (folder, " is a folder: give a corpus file (CoNLL/TSV or JSONL)"),
        (missing, ": no such file"),
    ):
        argv = {
            "train": ["train", "--data", str(data), "--model", str(models["base"]), "-o", str(out)],
            "blocks": ["blocks", str(data), "-o", str(out)],
        }[command]
        assert main(argv) == 2  # every input error exits 2, a missing file too
        given = f"--data {data}" if command == "train" else str(data)
        assert capsys.readouterr().err.strip().splitlines()[-1] == f"hf-ecg {command}: error: {given}{expected}"
    assert not out.exists()


def test_an_undecodable_corpus_names_the_option_that_reads_it(tmp_path, capsys):
    data = tmp_path / "latin.tsv"
    data.write_bytes("Caf\xe9\tO\n".encode("latin-1"))
    assert main(["blocks", str(data), "-o", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err
    assert f"{data}:1: not utf-8 text" in err and "--encoding" in err
    assert main(["blocks", str(data), "-o", str(tmp_path / "o"), "--encoding", "latin-1"]) == 0
    assert datasets.load_from_disk(str(tmp_path / "o"))["train"][0]["answer"].startswith("Café")


def test_strict_says_it_rejects(tmp_path, capsys):
    data = tmp_path / "train.tsv"
    data.write_text("a\tB-Disease\nb\tO\nc\tI-Disease\n")
    assert main(["blocks", str(data), "--strict", "-o", str(tmp_path / "o")]) == 2
    assert capsys.readouterr().err.strip().splitlines()[-1] == (
        f"hf-ecg blocks: error: {data}:3: token 3: 'I-Disease' does not continue a span (IOB2); rejected by the "
        "strict reading; without strict it is read as B-Disease"
    )


def test_train_notes_repaired_tags_as_blocks_does(models, tmp_path, capsys):
    data = tmp_path / "train.tsv"
    data.write_text(models["corpus"].read_text() + "\nx\tI-Disease\n.\tO\n")
    argv = [
        "train",
        "--data",
        str(data),
        "--model",
        str(models["base"]),
        "-o",
        str(tmp_path / "m"),
        "--max-steps",
        "1",
        "--max-length",
        "128",
    ]
    assert main(argv) == 0
    assert "note: 1 tags did not fit IOB2 and were repaired (use --strict to reject them)" in capsys.readouterr().out


# 5. never beside (or over) files hf_ecg did not write


@pytest.mark.parametrize("overwrite", [False, True])
def test_generate_refuses_a_folder_of_foreign_files(overwrite, models, tmp_path, capsys):
    folder = tmp_path / "mine"
    folder.mkdir()
    (folder / "notes.txt").write_text("mine\n")
    assert (
        main(
            ["generate", "--model", str(models["ecg"]), "-n", "2", "-o", str(folder)]
            + (["--overwrite"] if overwrite else [])
        )
        == 2
    )
    assert capsys.readouterr().err.strip().splitlines()[-1] == (
        f"hf-ecg generate: error: {folder} holds files hf_ecg did not write (notes.txt): give a new or empty folder "
        "(--overwrite replaces only a dataset hf_ecg wrote)"
    )
    assert sorted(p.name for p in folder.iterdir()) == ["notes.txt"]


def test_overwrite_replaces_only_what_hf_ecg_wrote(generated, models, tmp_path, capsys):
    folder = tmp_path / "again"
    assert main(generate_argv(models, folder, n=5)) == 0
    (folder / "extra.txt").write_text("mine\n")
    assert main([*generate_argv(models, folder, n=4), "--overwrite"]) == 2
    assert "holds files hf_ecg did not write (extra.txt)" in capsys.readouterr().err
    assert datasets.load_dataset(str(folder), split="train").num_rows == 5 and (folder / "extra.txt").exists()


def snapshot(folder: Path) -> dict[str, str]:
    """Every file under ``folder`` with its digest: what "left byte-identical" compares."""
    return {str(p.relative_to(folder)): md5(p) for p in sorted(folder.rglob("*")) if p.is_file()}


def users_folder(root: Path) -> Path:
    """A folder of the user's own files, one of them named like a file hf_ecg writes."""
    folder = root / "mine"
    (folder / "data").mkdir(parents=True)
    (folder / "README.md").write_text("my notes\n")
    (folder / "data" / "mine.parquet").write_bytes(b"not hf_ecg's")
    return folder


@pytest.mark.parametrize("overwrite", [False, True])
@pytest.mark.parametrize("command", ["baseline", "blocks", "train", "generate", "filter", "push-dataset", "push-model"])
def test_every_writing_command_leaves_a_folder_of_user_files_byte_identical(
    command, overwrite, models, generated, tmp_path, capsys
):
    folder = users_folder(tmp_path)
    before = snapshot(folder)
    argv = {
        "baseline": ["baseline", "mention-replacement", "--data", str(models["corpus"]), "-o", str(folder)],
        "blocks": ["blocks", str(models["corpus"]), "-o", str(folder)],
        "train": ["train", "--data", str(models["corpus"]), "--model", str(models["base"]), "-o", str(folder)],
        "generate": ["generate", "--model", str(models["ecg"]), "-n", "2", "-o", str(folder)],
        "filter": [
            "filter",
            "--generated",
            str(generated),
            "--gold",
            str(models["corpus"]),
            "--rule",
            "whole",
            "-o",
            str(folder),
        ],
        "push-dataset": ["push-dataset", "--data", str(generated), "--repo-id", "org/x", "--local-dir", str(folder)],
        "push-model": ["push-model", "--model", str(models["ecg"]), "--repo-id", "org/x", "--local-dir", str(folder)],
    }[command]
    assert main(argv + (["--overwrite"] if overwrite else [])) == 2
    err = capsys.readouterr().err.strip().splitlines()[-1]
    assert f"{folder} holds files hf_ecg did not write (README.md, data)" in err, err
    assert snapshot(folder) == before


def test_baseline_resumes_or_replaces_its_own_dataset_only_with_overwrite(models, tmp_path, capsys):
    out = tmp_path / "mr"
    argv = ["baseline", "mention-replacement", "--data", str(models["corpus"]), "-n", "4", "-o", str(out)]
    assert main(argv) == 0
    before = snapshot(out)
    assert main([*argv[:-4], "-n", "3", "-o", str(out)]) == 2
    refused = f"{out} holds a dataset generated with other settings (differing: num_samples, settings)"
    assert refused in capsys.readouterr().err
    assert snapshot(out) == before
    assert main([*argv[:-4], "-n", "3", "-o", str(out), "--overwrite"]) == 0
    assert datasets.load_dataset("parquet", data_files=str(out / "data" / "*.parquet"), split="train").num_rows == 3
    # a file of the user's among hf_ecg's shards: refused, --overwrite included, and nothing removed
    (out / "data" / "mine.parquet").write_bytes(b"mine")
    before = snapshot(out)
    assert main([*argv, "--overwrite"]) == 2
    assert "holds files hf_ecg did not write (data/mine.parquet)" in capsys.readouterr().err
    assert snapshot(out) == before


def test_blocks_and_train_refuse_an_earlier_output_without_overwrite(models, tmp_path, capsys):
    blocks = tmp_path / "blocks"
    assert main(["blocks", str(models["corpus"]), "-o", str(blocks)]) == 0
    before = snapshot(blocks)
    assert main(["blocks", str(models["corpus"]), "-o", str(blocks)]) == 2
    assert f"{blocks} holds another blocks hf_ecg wrote" in capsys.readouterr().err
    assert snapshot(blocks) == before
    rows = datasets.load_from_disk(str(blocks))["train"].num_rows
    assert main(["blocks", str(models["corpus"]), "--first-n", "2", "-o", str(blocks), "--overwrite"]) == 0
    assert 0 < datasets.load_from_disk(str(blocks))["train"].num_rows < rows
    # an earlier trained model in --output (the ECG generator the tests share): refused before any training
    model = tmp_path / "model"
    shutil.copytree(models["ecg"], model, ignore=shutil.ignore_patterns("*.tsv"))  # the corpus it learnt
    before = snapshot(model)
    assert main(["train", "--data", str(models["corpus"]), "--model", str(models["base"]), "-o", str(model)]) == 2
    assert f"{model} holds another model hf_ecg wrote" in capsys.readouterr().err
    assert snapshot(model) == before


def test_outputs_inside_their_inputs_are_refused(models, generated, tmp_path, capsys):
    manifest = generated / "ecg_generation.json"
    before = snapshot(generated)
    assert main(["export", "--data", str(generated), "-o", str(manifest), "--overwrite"]) == 2
    assert f"--output {manifest} is or is inside the input {generated}" in capsys.readouterr().err
    inner = generated / "kept"
    assert (
        main(
            [
                "filter",
                "--generated",
                str(generated),
                "--gold",
                str(models["corpus"]),
                "--rule",
                "whole",
                "-o",
                str(inner),
            ]
        )
        == 2
    )
    assert f"--output {inner} is or is inside the input {generated}" in capsys.readouterr().err
    assert snapshot(generated) == before


def test_a_stray_parquet_file_in_data_is_refused_not_counted(models, tmp_path, capsys):
    """A rerun once counted a stray Parquet file among the shards, rewrote the manifest with wrong counts and
    failed with the command that had just failed (issue 47, item 7)."""
    folder = tmp_path / "run"
    assert main(generate_argv(models, folder, n=5)) == 0
    shutil.copy(next((folder / "data").glob("*.parquet")), folder / "data" / "extra.parquet")
    before = snapshot(folder)
    assert main(generate_argv(models, folder, n=5)) == 2
    assert "holds files hf_ecg did not write (data/extra.parquet)" in capsys.readouterr().err
    assert snapshot(folder) == before


def test_a_stray_shard_named_like_hf_ecg_s_is_refused_before_the_manifest_is_touched(models, tmp_path, capsys):
    """A copy named as a shard (train-00001.parquet) in a finished set of one shard: the rerun rewrote the
    manifest with the counts doubled, then failed asking for the same command again."""
    folder = tmp_path / "run"
    assert main(generate_argv(models, folder, n=5)) == 0
    shards = sorted((folder / "data").glob("train-*.parquet"))
    shutil.copy(shards[0], folder / "data" / f"train-{len(shards):05d}.parquet")
    before = snapshot(folder)
    capsys.readouterr()
    assert main(generate_argv(models, folder, n=5)) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and f"no place for (data/train-{len(shards):05d}.parquet)" in err[0]
    assert snapshot(folder) == before


def test_generate_overwrite_never_removes_a_users_file_under_data(models, tmp_path, capsys):
    folder = tmp_path / "again"
    assert main(generate_argv(models, folder, n=5)) == 0
    (folder / "data" / "my_extra.txt").write_text("mine\n")
    before = snapshot(folder)
    assert main([*generate_argv(models, folder, n=4), "--overwrite"]) == 2
    assert "holds files hf_ecg did not write (data/my_extra.txt)" in capsys.readouterr().err
    assert snapshot(folder) == before


# 6. the card is where the data is


def test_generate_and_filter_write_the_dataset_card_with_its_metadata(generated, models, tmp_path):
    meta = front_matter(generated / "README.md")
    assert meta["license"] == "cc-by-4.0" and meta["source_datasets"] == ["org/toy"] and meta["language"] == ["en"]
    assert meta["configs"][0]["data_files"] == [{"split": "train", "path": "data/train-*.parquet"}]
    assert datasets.load_dataset(str(generated), split="train").num_rows == 6  # the card's header reads data/

    kept = tmp_path / "kept"
    assert (
        main(
            [
                "filter",
                "--generated",
                str(generated),
                "--gold",
                str(models["corpus"]),
                "-o",
                str(kept),
                "--rule",
                "duplicate",
                "--language",
                "en,de",
            ]
        )
        == 0
    )
    meta = front_matter(kept / "README.md")
    assert "license" not in meta and meta["language"] == ["en", "de"]  # none stated: not "other" with no name
    assert "that corpus's license applies" in " ".join((kept / "README.md").read_text().split())


def test_the_model_card_gets_license_datasets_and_spans(models, tmp_path):
    out = tmp_path / "model"
    assert (
        main(
            [
                "train",
                "--data",
                str(models["corpus"]),
                "--model",
                str(models["base"]),
                "-o",
                str(out),
                "--max-steps",
                "1",
                "--max-length",
                "128",
                "--license",
                "apache-2.0",
                "--dataset-id",
                "org/gold",
            ]
        )
        == 0
    )
    meta = front_matter(out / "README.md")
    assert meta["license"] == "apache-2.0" and meta["datasets"] == ["org/gold"]
    assert "`spans` (each entity as character offsets into `text`" in (out / "README.md").read_text()


# 8. no FutureWarning from transformers on the main paths


def test_generate_and_lora_training_raise_no_future_warning(models, tmp_path, capsys):
    with warnings.catch_warnings():
        warnings.simplefilter("error", FutureWarning)
        assert main(generate_argv(models, tmp_path / "g", n=4)) == 0
        assert (
            main(
                [
                    "train",
                    "--data",
                    str(models["corpus"]),
                    "--model",
                    str(models["base"]),
                    "-o",
                    str(tmp_path / "m"),
                    "--max-steps",
                    "1",
                    "--max-length",
                    "128",
                ]
            )
            == 0
        )
    assert "deprecated" not in capsys.readouterr().err
    assert json.loads((tmp_path / "g" / "ecg_generation.json").read_text())["num_samples"] == 4


# 9. the quickstart trains on sentences a reader takes for tweets


def test_the_demo_trains_on_readable_tweets_and_takes_other_corpora_as_they_are(tmp_path):
    from hf_ecg.data.corpus import read_conll
    from hf_ecg.demo.model import MIN_READABLE, readable_sentences

    def line(words: list[str]) -> str:
        return "\n".join(f"{w}\t{'B-person' if w == 'Ann' else 'O'}" for w in words) + "\n\n"

    tweet = "Ann is watching the game tonight with friends !".split()
    noise = [
        ["Ann", "http://bit.ly/x", "#a", "#b", "#c", "#d"],
        ["@a", "Ann", "says", "hi", "there", "now"],
        ["no", "entity", "in", "this", "one", "at", "all"],
        "Ann is watching the game tonight with".split(),
    ]  #  # the last one stops mid-phrase
    path = tmp_path / "tweets.tsv"
    path.write_text("".join(line(words) for words in noise * 40 + [tweet] * MIN_READABLE), encoding="utf-8")
    kept = readable_sentences(read_conll(path), 500)
    assert len(kept) == MIN_READABLE and all(list(s.tokens) == tweet for s in kept)
    clinical = readable_sentences(read_conll(path), 50)  # fewer asked than there are: still only tweets
    assert len(clinical) == 50 and all(list(s.tokens) == tweet for s in clinical)
    path.write_text("".join(line(words) for words in noise * 40), encoding="utf-8")
    assert len(readable_sentences(read_conll(path), 30)) == 30  # no tweets at all: the corpus as it is


def test_a_push_that_fails_after_training_says_where_the_model_is(models, tmp_path, capsys, monkeypatch):
    import hf_ecg.hub.push
    from hf_ecg.hub.push import HubUploadError

    def refuse(folder, repo_id, repo_type, private, token):  # the network boundary: the Hub says no
        raise HubUploadError(f"could not upload to the model repo {repo_id} (403)")

    monkeypatch.setattr(hf_ecg.hub.push, "_upload", refuse)
    monkeypatch.setenv("HF_TOKEN", "hf_test_token")
    out = tmp_path / "model"
    assert (
        main(
            [
                "train",
                "--data",
                str(models["corpus"]),
                "--model",
                str(models["base"]),
                "-o",
                str(out),
                "--max-steps",
                "1",
                "--max-length",
                "128",
                "--push_to_hub",
                "true",
                "--hub_model_id",
                "org/m",
            ]
        )
        == 2
    )
    assert capsys.readouterr().err.strip().splitlines()[-1] == (
        f"hf-ecg train: error: could not upload to the model repo org/m (403); the trained model is in {out}/: "
        f"push it with `hf-ecg push-model --model {out} --repo-id org/m`"
    )
    assert (out / "model.safetensors").is_file() and (out / "ecg_config.json").is_file()


def test_inference_dtype_is_bfloat16_only_where_the_hardware_computes_it():
    import torch

    from hf_ecg.modeling import inference_dtype

    assert inference_dtype("float32", "cpu") == "float32"
    assert inference_dtype("bfloat16", "cpu") == "bfloat16"
    native = torch.cpu._is_avx512_bf16_supported() or torch.cpu._is_amx_tile_supported()
    assert inference_dtype("auto", "cpu") == ("bfloat16" if native else "float32")
    assert inference_dtype("auto", "meta") == "float32"
    with pytest.raises(ValueError, match="unknown dtype 'fp8'; known: auto, float32, bfloat16"):
        inference_dtype("fp8")


# Reports are files under the output rule: refused when they exist (unless --overwrite) and always when they are
# an input, checked before any work


def _evaluate_argv(command: str, generated: Path, gold: Path, tmp_path: Path) -> list[str]:
    if command == "quality":
        return ["evaluate", "quality", "--generated", str(generated), "--reference", str(gold), "--ref-model", "none"]
    if command == "ner":
        return ["evaluate", "ner", "--train", f"{gold}:4", "--test", str(gold), "--seeds", "1"]
    return ["evaluate", "labels", "--data", str(gold), "--reference", str(tmp_path / "no-tagger")]


@pytest.mark.parametrize("command", ["quality", "ner", "labels"])
def test_evaluate_reports_never_replace_a_file_or_an_input(command, generated, tmp_path, capsys):
    gold = toy_corpus(tmp_path / "gold.tsv")
    argv = _evaluate_argv(command, generated, gold, tmp_path)
    mine = tmp_path / "mine.json"
    mine.write_text('{"my": "results"}\n')
    for output, overwrite, says in (
        (mine, [], "exists: give a new file, or --overwrite to replace it"),
        (gold, ["--overwrite"], "is or is inside the input"),
        (f"{gold}", [], "is or is inside the input"),
        (tmp_path, [], "is a folder: the output is a file"),
    ):
        before = {path: md5(path) for path in (mine, gold)}
        assert main([*argv, "-o", str(output), *overwrite]) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and says in err[0] and "--output" in err[0]
        assert {path: md5(path) for path in (mine, gold)} == before
    manifest = generated / "ecg_generation.json"
    before = md5(manifest)
    assert main([*argv, "-o", str(manifest), "--overwrite"]) == 2 and md5(manifest) == before
    if command == "quality":  # with --overwrite the user's file is replaced by the report
        assert main([*argv, "-o", str(mine), "--overwrite"]) == 0
        assert "rouge_l_mean" in json.loads(mine.read_text())


@pytest.mark.parametrize("command", ["ner", "quality", "fairness"])
def test_a_report_is_never_written_over_the_model_it_reads_a_hard_link_or_the_saved_taggers(
    command, generated, tmp_path, capsys
):
    gold = toy_corpus(tmp_path / "gold.tsv")
    model = tmp_path / "model"
    model.mkdir()
    (model / "config.json").write_text("{}\n")
    groups = tmp_path / "groups.tsv"
    groups.write_text("fever\tA\n")
    argv = {
        "ner": ["evaluate", "ner", "--train", f"{gold}:4", "--test", str(gold), "--seeds", "1", "--model", str(model)],
        "quality": ["evaluate", "quality", "--generated", str(generated), "--reference", str(gold)],
        "fairness": [
            "evaluate",
            "fairness",
            "--data",
            str(gold),
            "--groups",
            f"Disease={groups}",
            "--model",
            str(model),
        ],
    }[command]
    if command == "quality":
        argv += ["--ref-model", str(model)]
    linked = tmp_path / "linked.tsv"
    os.link(gold, linked)
    before = {path: md5(path) for path in (model / "config.json", gold)}
    for output in (model / "config.json", linked):
        assert main([*argv, "-o", str(output), "--overwrite"]) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and "is or is inside the input" in err[0], err
    assert {path: md5(path) for path in before} == before
    if command == "ner":
        saved = [*argv[:-2], "--save-taggers", str(tmp_path / "st"), "-o", str(tmp_path / "st" / "seed-1" / "c.json")]
        assert main(saved) == 2
        assert "inside the --save-taggers folder" in capsys.readouterr().err
        assert not (tmp_path / "st").exists()


def test_evaluate_ner_refuses_a_file_as_the_taggers_folder_before_training(tmp_path, capsys):
    gold = toy_corpus(tmp_path / "gold.tsv")
    (tmp_path / "taggers").write_text("mine\n")
    argv = ["evaluate", "ner", "--train", f"{gold}:4", "--test", str(gold), "--seeds", "1"]
    assert main([*argv, "--save-taggers", str(tmp_path / "taggers")]) == 2
    assert "is a file: the taggers go to a folder" in capsys.readouterr().err
    assert (tmp_path / "taggers").read_text() == "mine\n"


def test_messages_name_the_option_the_file_and_what_is_wrong(models, tmp_path, capsys):
    corpus = models["corpus"]
    (tmp_path / "folder").mkdir()
    ner = ["evaluate", "ner", "--train", f"{corpus}:4", "--test", str(corpus), "--unlabelled"]
    cases = [
        (
            [
                "generate",
                "--model",
                str(models["ecg"]),
                "-n",
                "2",
                "-o",
                str(tmp_path / "g"),
                "--mentions",
                f"Gene={tmp_path / 'folder'}",
            ],
            "is a folder: give the file of the Gene mentions",
        ),
        ([*ner, f"{corpus}:0"], f"--unlabelled {corpus}:0: ':0' keeps no sentence"),
        ([*ner, f"{corpus}:1:500"], "sentences, not up to 500"),
        (
            ["generate", "--model", str(models["ecg"]), "-n", "2", "-o", str(models["ecg"])],
            f"is or is inside the input {models['ecg']}: write the output somewhere else (--model)",
        ),
    ]
    for argv, message in cases:
        assert main(argv) == 2, argv
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and message in err[0], (argv, err)
    assert not (tmp_path / "g").exists()


def test_options_that_would_do_nothing_are_refused_not_recorded(models, generated, tmp_path, capsys):
    corpus = models["corpus"]
    gen = ["generate", "--model", str(models["ecg"]), "-n", "2", "-o", str(tmp_path / "g"), "--no-do-sample"]
    train = ["train", "--data", str(corpus), "--model", str(models["base"]), "-o", str(tmp_path / "m")]
    filt = ["filter", "--generated", str(generated), "--gold", str(corpus), "-o", str(tmp_path / "f")]
    groups = tmp_path / "groups.tsv"
    groups.write_text("fever\tA\nheadache\tB\n")
    yaml = tmp_path / "args.yaml"
    yaml.write_text("learning_rate: 1e-4\nmax_steps: [2\n")
    lower = tmp_path / "lists"  # a type spelled otherwise than the data's
    lower.mkdir()
    (lower / "disease.txt").write_text("fever\n")
    cases = [
        ([*gen, "--temperature", "0.7"], "--no-do-sample decodes greedily: --temperature would do nothing"),
        ([*gen, "--top-p", "0.9", "--top-k", "5"], "--top-k, --top-p would do nothing"),
        ([*train, "--no-mention-samples", "--mention-layout", "in-sentence"], "with --no-mention-samples"),
        ([*filt, "--rule", "near-copy", "--unlabelled", str(corpus)], "--unlabelled would do nothing"),
        ([*filt, "--rule", "near-copy", "--teacher-folds", "3"], "--teacher-folds would do nothing"),
        ([*filt, "--rule", "near-copy", "--dictionary", f"Disease={corpus}"], "--dictionary would do nothing"),
        ([*gen, "--no-silver"], "--no-silver would do nothing: the silver split is your --unlabelled text"),
        (
            ["evaluate", "ner", "--train", str(corpus), "--test", str(corpus), "--dictionary", str(lower)],
            "--dictionary has type(s) disease that the data does not have; its types: Chemical, Disease",
        ),
        (
            [*filt, "--rule", "dictionary", "--dictionary", str(lower)],
            "--dictionary has type(s) disease that the data does not have",
        ),
        (
            ["evaluate", "fairness", "--data", str(generated), "--groups", f"Disease={groups}", "--counterfactual"],
            "--counterfactual would do nothing: the counterfactual test trains its taggers on --gold",
        ),
        ([*train, "--config", str(yaml)], f"{yaml}:2: not YAML"),
    ]
    for argv, message in cases:
        assert main(argv) == 2, argv
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and message in err[0], (argv, err)
    assert not any((tmp_path / name).exists() for name in ("g", "m", "f"))


def test_train_killed_after_writing_its_record_is_its_own_folder_and_runs_again(models, tmp_path, capsys):
    from hf_ecg.data.outputs import TRAINING_RECORD

    out = tmp_path / "m"
    out.mkdir()
    (out / TRAINING_RECORD).write_text('{"finished": false}\n')  # killed before its first step
    argv = ["train", "--data", str(models["corpus"]), "--model", str(models["base"]), "-o", str(out)]
    argv += ["--max-steps", "1", "--validation-split", "0"]
    before = snapshot(out)
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "did not write" not in err and "--overwrite" in err and snapshot(out) == before
    assert main([*argv, "--overwrite"]) == 0 and (out / "ecg_config.json").is_file()


def test_train_on_an_interrupted_folder_says_resume_first(models, tmp_path, capsys):
    out = tmp_path / "m"
    (out / "checkpoint-100").mkdir(parents=True)
    (out / "checkpoint-100" / "trainer_state.json").write_text("{}")
    argv = ["train", "--data", str(models["corpus"]), "--model", str(models["base"]), "-o", str(out)]
    before = snapshot(out)
    assert main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "holds an interrupted training (checkpoint-100): --resume continues it" in err[0]
    assert snapshot(out) == before


def test_overwrite_starts_a_finished_set_again_and_says_what_it_removed(models, tmp_path, capsys, caplog):
    out = tmp_path / "set"
    argv = ["generate", "--model", str(models["ecg"]), "-n", "4", "-o", str(out), "--max-block-tokens", "4"]
    assert main(argv) == 0
    fresh = json.loads((out / "ecg_generation.json").read_text())
    shutil.copy(out / "data" / "train-00000.parquet", out / "data" / "train-00001.parquet")  # a stray shard
    before = snapshot(out)
    assert main(argv) == 2
    assert "has no place for (data/train-00001.parquet)" in capsys.readouterr().err and snapshot(out) == before
    with caplog.at_level("WARNING"):
        assert main([*argv, "--overwrite"]) == 0  # started again, not resumed over the stray shard
    assert "overwrite: starting" in caplog.text and "data" in caplog.text
    again = json.loads((out / "ecg_generation.json").read_text())
    assert again["generation_cost"]["model_tokens"] == fresh["generation_cost"]["model_tokens"] > 0  # not doubled
    assert sorted(p.name for p in (out / "data").iterdir()) == ["train-00000.parquet"]
    assert main(["export", "--data", str(out), "-o", str(tmp_path / "set.tsv")]) == 0
