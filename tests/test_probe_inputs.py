"""A probe over every command and every option that reads a path: each input, a file inside each input folder and
a hard link to each input file, given as each output option, with and without ``--overwrite``, is refused with
exit code 2 and leaves every file as it was. The valid runs the probe starts from write no control, invisible or
private-use character into any split and no non-finite number into any JSON file."""

from __future__ import annotations

import argparse
import json
import os
import unicodedata
from pathlib import Path

import datasets
import pytest

from hf_ecg.cli import build_parser, main
from tiny import save_tiny_bert, save_tiny_ecg_model, save_tiny_model, toy_corpus

#: Options a command writes to; every other option whose value is a path is an input.
OUTPUTS = ("-o", "--local-dir", "--save-taggers")

#: Path options the probe leaves out, and why.
NOT_PROBED = {
    ("generate", "--label-names"): "names or a Hub dataset's labels; a local dataset is read as names",
    ("filter", "--label-names"): "names or a Hub dataset's labels; a local dataset is read as names",
}

#: One valid command line for each command; {name} is a path of the workspace, {OUT} the output under probe.
TEMPLATES: dict[str, list[str]] = {
    "blocks": ["blocks", "{gold}", "--validation", "{test}", "--test", "{test}", "-o", "{OUT}"],
    "train": [
        "train", "--data", "{gold}", "--validation", "{test}", "--model", "{base}", "--config", "{config}",
        "--max-steps", "1", "-o", "{OUT}",
    ],
    "train:text": [
        "train", "--data", "{gold}", "--model", "{base}", "--unlabelled", "{text}", "--dictionary", "{dictionary}",
        "--max-steps", "1", "-o", "{OUT}",
    ],
    "generate": [
        "generate", "--model", "{ecg}", "-n", "2", "--max-block-tokens", "6", "--mentions", "Disease={diseases}",
        "--balance", "Disease={groups}", "--corpus", "{gold}", "-o", "{OUT}",
    ],
    "generate:dictionary": [
        "generate", "--model", "{ecg}", "-n", "2", "--max-block-tokens", "6", "--dictionary", "{dictionary}",
        "--unlabelled", "{text}", "--gold", "{gold}", "-o", "{OUT}",
    ],
    "generate:tagger": [
        "generate", "--model", "{ecg}", "-n", "2", "--max-block-tokens", "6", "--gold", "{gold}", "--filter",
        "unlabel", "--tagger-model", "{bert}", "--tagger-epochs", "1", "--tagger-seeds", "1", "-o", "{OUT}",
    ],
    "generate:sketches": [
        "generate", "--model", "{sketch}", "-n", "2", "--max-block-tokens", "6", "--sketches", "{gold}", "-o", "{OUT}",
    ],
    "generate:transfer": [
        "generate", "--model", "{sketch}", "-n", "2", "--max-block-tokens", "6", "--sketches", "{gold}",
        "--type-map", "Chemical=Chemical", "--target-text", "{text}", "-o", "{OUT}",
    ],
    "mine-names": [
        "mine-names", "--gold", "{gold}", "--unlabelled", "{text}", "--synthetic", "{set}", "--dictionary",
        "{dictionary}", "--model", "{bert}", "--seeds", "1", "--epochs", "15", "--learning-rate", "5e-3",
        "--batch-size", "4", "--min-names", "1", "--min-count", "1", "-o", "{OUT}",
    ],
    "filter": [
        "filter", "--generated", "{set}", "--gold", "{gold}", "--rule", "dictionary", "--dictionary", "{dictionary}",
        "-o", "{OUT}",
    ],
    "filter:tagger": [
        "filter", "--generated", "{set}", "--gold", "{gold}", "--rule", "unlabel", "--tagger-model", "{bert}",
        "--unlabelled", "{text}",
        "--tagger-epochs", "1", "--tagger-seeds", "1", "-o", "{OUT}",
    ],
    "push-dataset": [
        "push-dataset", "--data", "{set}", "--quality", "{quality}", "--repo-id", "org/x", "--local-dir", "{OUT}",
        "--silver",
    ],
    "push-model": [
        "push-model", "--model", "{ecg}", "--ner-report", "{ner}", "--repo-id", "org/x", "--local-dir", "{OUT}",
    ],
    "evaluate quality": [
        "evaluate", "quality", "--generated", "{set}", "--reference", "{gold}", "--ref-model", "{base}", "-o", "{OUT}",
    ],
    "evaluate ner": [
        "evaluate", "ner", "--train", "{gold}", "--synthetic", "{set}", "--test", "{test}", "--dev", "{test}",
        "--unlabelled", "{text}", "--dictionary", "{dictionary}", "--model", "{bert}", "--seeds", "1",
        "--max-steps", "1", "--save-taggers", "{OUT}", "-o", "{OUT}.json",
    ],
    "evaluate labels": [
        "evaluate", "labels", "--data", "{set}", "--reference", "{reference}", "--test", "{test}", "--gold", "{gold}",
        "-o", "{OUT}",
    ],
    "evaluate fairness": [
        "evaluate", "fairness", "--data", "{set}", "--groups", "Disease={groups}", "--gold", "{gold}", "--model",
        "{bert}", "--seeds", "1", "--max-steps", "1", "-o", "{OUT}",
    ],
    "baseline mention-replacement": [
        "baseline", "mention-replacement", "--data", "{gold}", "--mentions", "Disease={diseases}", "-n", "2",
        "-o", "{OUT}",
    ],
    "export": ["export", "--data", "{set}", "-o", "{OUT}"],
}  # fmt: skip

#: Characters no written split may hold: control, format (invisible), private-use, line and paragraph separators.
FORBIDDEN_CATEGORIES = {"Cc", "Cf", "Co", "Zl", "Zp"}


def _path_options() -> dict[str, set[str]]:
    """Every command's options whose value names a file or folder, outputs excluded."""
    found: dict[str, set[str]] = {}

    def walk(parser: argparse.ArgumentParser, prefix: list[str]) -> None:
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                for name, sub in action.choices.items():
                    walk(sub, [*prefix, name])
                return
        options = set()
        for action in parser._actions:
            metavar = str(action.metavar or "")
            names = action.option_strings or [action.dest]
            if any(word in metavar for word in ("DATA", "DIR", "FILE", "TEXT", "MODEL", "JSON", "DATASET")) or (
                names[-1] in {"--model", "--ref-model", "--tagger-model", "--reference"}
            ):
                options.add(names[-1] if action.option_strings else action.dest)
        found[" ".join(prefix)] = {option for option in options if option not in OUTPUTS}

    walk(build_parser(), [])
    return found


def _takes_overwrite(argv: list[str]) -> bool:
    parser = build_parser()
    for word in argv:
        sub = next((a for a in parser._actions if isinstance(a, argparse._SubParsersAction)), None)
        if sub is None or word not in sub.choices:
            break
        parser = sub.choices[word]
    return any("--overwrite" in action.option_strings for action in parser._actions)


def _option_of(argv: list[str], index: int) -> str:
    return argv[index - 1] if index and argv[index - 1].startswith("-") else "data"


@pytest.fixture(scope="module")
def workspace(tmp_path_factory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("probe")
    paths = {
        "ecg": save_tiny_ecg_model(root / "ecg", mentions={"Chemical": ["aspirin"], "Disease": ["fever", "pain"]}),
        "base": save_tiny_model(root / "base"),
        "bert": save_tiny_bert(root / "bert"),
        "gold": toy_corpus(root / "gold.tsv", repeat=3),
        "test": toy_corpus(root / "test.tsv"),
    }
    (root / "dictionary").mkdir()
    (root / "dictionary" / "Chemical.txt").write_text("Aspirin\nIbuprofen\nparacetamol\n", encoding="utf-8")
    (root / "dictionary" / "Disease.txt").write_text("headache\nfever\nsevere pain\n", encoding="utf-8")
    paths["dictionary"] = root / "dictionary"
    # a byte-order mark and a zero-width space inside a name: both dropped by the text reader
    text = "\ufeffAspirin eases head\u200bache .\nPatients with fever took paracetamol .\nIbuprofen is sold .\n"
    for name, file, content in (
        ("text", "text.txt", text),
        ("diseases", "diseases.txt", "fever\nsevere pain\n"),
        ("groups", "groups.tsv", "name\tgroup\nfever\tA\nsevere pain\tB\n"),
        ("config", "train.yaml", "learning_rate: 0.001\n"),
    ):
        paths[name] = root / file
        paths[name].write_text(content, encoding="utf-8")
    paths["set"] = root / "set"
    paths["sketch"] = root / "sketch"  # a sketch generator, for generate --sketches
    sketch = ["train", "--data", str(paths["gold"]), "--model", str(paths["base"]), "--layout", "sketch"]
    assert (
        main([*sketch, "--max-steps", "1", "--save_strategy", "no", "--use_cpu", "true", "-o", str(root / "sketch")])
        == 0
    )
    run = {key: str(path) for key, path in paths.items()}
    assert main([*fill(TEMPLATES["generate:dictionary"][:-1], run), str(paths["set"])]) == 0
    ner = fill(TEMPLATES["evaluate ner"], {**run, "OUT": str(root / "taggers")})
    assert main(ner) == 0
    paths["ner"], paths["reference"] = root / "taggers.json", root / "taggers" / "seed-1"
    quality = ["evaluate", "quality", "--generated", run["set"], "--reference", run["gold"], "--ref-model", "none"]
    assert main([*quality, "-o", str(paths.setdefault("quality", root / "quality.json"))]) == 0
    links = root / "links"
    links.mkdir()
    for name, path in list(paths.items()):
        if path.is_file():
            os.link(path, links / f"{name}{path.suffix}")
    return paths


def fill(template: list[str], values: dict[str, str]) -> list[str]:
    return [word.format(**values) for word in template]


def snapshot(root: Path) -> dict[str, tuple[int, int]]:
    """Every path under ``root`` with its size and modification time: what "left as it was" compares."""
    return {
        str(path.relative_to(root)): (path.stat().st_size, path.stat().st_mtime_ns) if path.is_file() else (-1, -1)
        for path in root.rglob("*")
    }


def test_the_templates_cover_every_path_option_of_every_command():
    covered: dict[str, set[str]] = {}
    for name, argv in TEMPLATES.items():
        command = name.split(":")[0]
        covered.setdefault(command, set()).update(
            _option_of(argv, i) for i, word in enumerate(argv) if "{" in word and "{OUT}" not in word
        )
    for command, options in _path_options().items():
        missing = options - covered.get(command, set()) - {o for (c, o) in NOT_PROBED if c == command}
        assert not missing, f"{command}: no probe reads {sorted(missing)}"


def _written_files(root: Path) -> list[Path]:
    return [path for path in root.rglob("*") if path.is_file()]


def _assert_clean(output: Path) -> None:
    for path in _written_files(output) if output.is_dir() else [output]:
        if path.suffix == ".json":
            json.loads(path.read_text(encoding="utf-8"), parse_constant=_non_finite(path))
        if path.suffix == ".parquet":
            for row in datasets.Dataset.from_parquet(str(path)).to_list():
                for token in row.get("tokens", []):
                    bad = {unicodedata.category(ch) for ch in token} & FORBIDDEN_CATEGORIES
                    assert not bad, f"{path}: token {token!r} holds a {sorted(bad)} character"
        if path.suffix in {".jsonl", ".tsv", ".conll", ".txt"}:
            text = path.read_text(encoding="utf-8")
            bad = {unicodedata.category(ch) for ch in text if ch not in "\t\n"} & FORBIDDEN_CATEGORIES
            assert not bad, f"{path}: holds a {sorted(bad)} character"


def _non_finite(path: Path):
    def refuse(constant: str):
        raise AssertionError(f"{path}: a non-finite number ({constant}) is no JSON")

    return refuse


@pytest.mark.parametrize("name", sorted(TEMPLATES))
def test_no_output_is_written_over_an_input(name, workspace, tmp_path, capsys):
    root = workspace["gold"].parent
    values = {key: str(path) for key, path in workspace.items()}
    template = TEMPLATES[name]
    # the template runs as it is: a refusal below is the overlap's, and what it writes is clean
    valid = tmp_path / "valid"
    assert main(fill(template, {**values, "OUT": str(valid)})) == 0, capsys.readouterr().err
    _assert_clean(tmp_path)
    capsys.readouterr()
    inputs = sorted({word.split("=")[-1] for word in template if "{" in word and "{OUT}" not in word})
    candidates = []
    for word in inputs:
        path = Path(word.format(**values))
        candidates.append(path)
        if path.is_dir():
            candidates += [path / "inside", next(p for p in sorted(path.rglob("*")) if p.is_file())]
        else:
            candidates += [p for p in (root / "links").iterdir() if os.path.samefile(p, path)]
    outputs = [i for i, word in enumerate(template) if "{OUT}" in word]
    for index in outputs:
        for candidate in candidates:
            for overwrite in ([], ["--overwrite"]) if _takes_overwrite(template) else ([],):
                argv = fill(template, {**values, "OUT": str(tmp_path / "fresh")})
                argv[index] = str(candidate)
                before = snapshot(root)
                code = main([*argv, *overwrite])
                err = [line for line in capsys.readouterr().err.splitlines() if line.strip()]
                assert code == 2, f"{name} {template[index - 1]} {candidate} {overwrite}: rc {code}"
                assert snapshot(root) == before, f"{name} {template[index - 1]} {candidate} {overwrite} changed files"
                assert len(err) == 1, (name, candidate, err)


def test_the_sets_the_probe_reads_are_clean_and_the_text_s_invisible_characters_dropped(workspace):
    root = workspace["gold"].parent
    for written in (workspace["set"], root / "taggers", workspace["ner"], workspace["quality"]):
        _assert_clean(written)
    silver = datasets.load_dataset(str(workspace["set"]), split="silver")
    words = [word for row in silver["tokens"] for word in row]
    assert "headache" in words and "Aspirin" in words  # the zero-width space and the byte-order mark dropped
