"""Publishing: push-dataset / push-model folders (--local-dir), their cards, and upload errors."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import datasets
import pytest
import yaml
from huggingface_hub import DatasetCard, ModelCard

import hf_ecg
from card_patterns import (
    DATASET_CARD_METADATA,
    DATASET_CARD_PATTERN,
    MODEL_CARD_METADATA,
    MODEL_CARD_PATTERN,
    split_card,
)
from hf_ecg.cli import main
from hf_ecg.data.dataset_format import bio_labels
from hf_ecg.hub.dataset_card import ECGDatasetCardData
from hf_ecg.hub.model_card import ECGModelCardData
from hf_ecg.hub.push import push_dataset
from hf_ecg.runtime.ecg_config import ECGConfig
from hf_ecg.synthetic.generate import generate_dataset
from hf_ecg.synthetic.run_config import DatasetRunConfig
from tiny import save_tiny_ecg_model, save_tiny_model, toy_corpus

TYPES = ("Chemical", "Disease")
MENTIONS = {"Chemical": ["aspirin", "acetyl salicylic acid"], "Disease": ["fever", "severe pain"]}


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory):
    return save_tiny_ecg_model(tmp_path_factory.mktemp("tiny-ecg"), TYPES, MENTIONS)


@pytest.fixture(scope="module")
def generated(model_dir, tmp_path_factory):
    from hf_ecg.runtime.decoding import DecodingConfig

    out = tmp_path_factory.mktemp("gen")
    config = DecodingConfig(batch_size=4, max_block_tokens=6)
    return generate_dataset(
        model_dir, out, 10, decoding=config, run=DatasetRunConfig(samples_per_shard=4, progress_bar=False)
    )


def front_matter(readme: Path) -> dict:
    text = readme.read_text(encoding="utf-8")
    assert text.startswith("---\n")
    return yaml.safe_load(text.split("---\n")[1])


def test_push_dataset_local_dir_loads_with_classlabel_tags_and_a_valid_card(generated, tmp_path, capsys):
    local = tmp_path / "repo"
    code = main(
        [
            "push-dataset",
            "--data",
            str(generated),
            "--repo-id",
            "org/toy-synth",
            "--local-dir",
            str(local),
            "--license",
            "cc-by-4.0",
            "--language",
            "en,de",
        ]
    )
    assert code == 0
    assert "nothing uploaded" in capsys.readouterr().out
    assert sorted(p.name for p in (local / "data").iterdir()) == [f"train-0000{i}.parquet" for i in range(3)]

    pushed = datasets.load_dataset(str(local), split="train")
    original = datasets.load_dataset(str(generated), split="train")
    assert pushed.features["ner_tags"].feature.names == bio_labels(TYPES)
    assert isinstance(pushed.features["ner_tags"].feature, datasets.ClassLabel)
    assert pushed.to_list() == original.to_list() and pushed.num_rows == 10

    meta = front_matter(local / "README.md")
    assert meta["task_categories"] == ["token-classification"]
    assert meta["license"] == "cc-by-4.0" and meta["language"] == ["en", "de"]
    assert meta["size_categories"] == ["n<1K"]
    assert "source_datasets" not in meta  # the corpus's file name (toy.tsv) names no dataset; nor is it "original"
    assert meta["dataset_info"]["splits"] == [
        {"name": "train", "num_bytes": meta["dataset_info"]["splits"][0]["num_bytes"], "num_examples": 10}
    ]
    tags = next(f for f in meta["dataset_info"]["features"] if f["name"] == "ner_tags")
    assert list(tags["list"]["class_label"]["names"].values()) == bio_labels(TYPES)
    card = DatasetCard.load(local / "README.md")
    assert card.data.to_dict()["configs"][0]["data_files"][0]["path"] == "data/train-*.parquet"
    examples = ECGDatasetCardData.from_generated(generated).examples  # the first rows, entities marked
    assert len(examples) == 3 and all(f"{i}. {example}\n" in card.text for i, example in enumerate(examples, 1))
    first = original.sort("id")[0]
    assert examples[0].count("** *(") == len(first["entities"])
    # The body counts what is really in the shards.
    counts = {t: sum(row.count(t) for row in original["entities"]) for t in TYPES}
    for label, count in counts.items():
        assert f"| {label} | {count} |" in card.text
    assert f"{sum(original['forced_tags'])} of {sum(counts.values()) + 10} blocks" in card.text
    complete = sum(original["complete"])
    assert f"| complete (ends like a training sentence) | {complete} | {100 * complete / 10:.1f}% |" in card.text
    short = sum(len(tokens) < 5 for tokens in original["tokens"])
    assert f"| short (under 5 tokens) | {short} | {100 * short / 10:.1f}% |" in card.text
    endings = set(
        ECGConfig.from_pretrained(json.loads((generated / "ecg_generation.json").read_text())["model"]).sentence_endings
        or [".", "!", "?"]
    )
    names = original.features["ner_tags"].feature.names
    second = sum(
        any(
            tokens[i - 1] in endings
            and (tokens[i][:1].isupper() or tokens[i][:1].isdigit() or names[tags[i]][:2] == "B-")
            for i in range(1, len(tokens))
        )
        for tokens, tags in zip(original["tokens"], original["ner_tags"], strict=True)
    )
    assert f"then a capitalised word, a number or an entity) | {second} | {100 * second / 10:.1f}% |" in card.text
    assert "real names from the generator's training corpus" in card.text  # default mentions: the bank


def test_push_dataset_refuses_an_unfinished_generation_and_a_non_empty_folder(generated, tmp_path):
    partial = tmp_path / "partial"
    (partial / "data").mkdir(parents=True)
    (partial / "ecg_generation.json").write_text((generated / "ecg_generation.json").read_text())
    shard = next((generated / "data").glob("*.parquet"))
    (partial / "data" / shard.name).write_bytes(shard.read_bytes())
    with pytest.raises(ValueError, match=r"unfinished generation \(4 of 10 samples written\)"):
        push_dataset(partial, "org/x", local_dir=tmp_path / "out")
    assert not (tmp_path / "out").exists()  # nothing written for a bad input

    occupied = tmp_path / "occupied"
    occupied.mkdir()
    (occupied / "keep.txt").write_text("mine")
    with pytest.raises(FileExistsError, match=r"holds files hf_ecg did not write \(keep.txt\)"):
        push_dataset(generated, "org/x", local_dir=occupied, overwrite=True)
    assert (occupied / "keep.txt").read_text() == "mine"


def test_dataset_card_states_its_metadata_and_facts():
    """The metadata exactly (tools read it), the body as a pattern: each fact in its place, any wording around."""
    card = ECGDatasetCardData(
        entity_types=["Chemical", "Disease"],
        num_samples=4,
        repo_id="org/bc5cdr-synth",
        pretty_name="BC5CDR synthetic",
        license="cc-by-4.0",
        generator="org/bc5cdr-ecg",
        base_model="HuggingFaceTB/SmolLM2-135M-Instruct",
        corpus_name="bc5cdr",
        corpus_sentences=45,
        sampler="gold",
        mentions="weighted",
        seed=7,
        decoding={"temperature": 1.0, "max_block_tokens": 48},
        dtype="bfloat16",
        generation_cost={
            "model_tokens": 60,
            "redrawn_tokens": 20,
            "redrawn_share": 0.25,
            "blocks": 8,
            "refused_redraws": 0,
            "redraw_budget": 1.0,
            "undertrained": False,
        },
        entity_counts={"Chemical": 3, "Disease": 1},
        num_tokens=40,
        num_blocks=8,
        forced_tags=2,
        cut_blocks=1,
        complete_samples=3,
        tag_piece_samples=1,
        short_samples=1,
        second_sentence_samples=1,
        num_bytes=1234,
        quality={"distinct_3": 0.5, "rouge_l_mean": 0.25},
        versions={"hf-ecg": "0.1.0", "datasets": "5.2.0"},
        source_datasets=["bigbio/bc5cdr"],
        examples=["**aspirin** *(Chemical)* cures **fever** *(Disease)* ."],
    )
    metadata, body = split_card(str(card.to_dataset_card()))
    assert metadata == DATASET_CARD_METADATA
    assert re.fullmatch(DATASET_CARD_PATTERN, body), body


@pytest.mark.parametrize(
    "mentions", [{"source": "user", "digest": "0123456789abcdef"}, "user mentions 0123456789abcdef"]
)  # the record, and the string a folder written before it holds
def test_dataset_card_says_where_user_mentions_come_from(mentions):
    card = ECGDatasetCardData(entity_types=["A"], num_samples=1, mentions=mentions)
    text = str(card.to_dataset_card())
    assert "supplied by the user in code (recorded only as a digest: `0123456789abcdef`)" in text
    assert "not taken from the training corpus" in text
    assert "license" not in card.card_data().to_dict()  # none stated: not "other" with no name
    assert "so that corpus's license applies to them" in " ".join(text.split())


def test_mentions_record_reads_every_manifest_form():
    from hf_ecg.data.manifest import GenerationManifest, MentionsRecord
    from hf_ecg.runtime.mentions import MentionBank

    def record(**manifest):
        return GenerationManifest.migrate({"entity_types": ["A"], **manifest}).mentions

    bank = {"source": "bank", "strategy": "weighted", "bank": "corpus"}
    assert record(mentions=bank).to_dict() == bank
    assert record(mentions="weighted", corpus="train.tsv").to_dict() == bank
    assert record(mentions=None) == MentionsRecord("bank", "random", "generator")
    assert record(mentions="my.json") == MentionsRecord("file", path="my.json")
    assert record(method="mention-replacement", model=None) is None
    digest = MentionsRecord.from_mentions({"A": ["x"]}, MentionBank.from_lists({"A": ["x"]}), False)
    assert digest.source == "user" and len(digest.digest) == 16 and "x" not in json.dumps(digest.to_dict())
    with pytest.raises(ValueError, match="unknown mention source"):
        MentionsRecord("somewhere")


def test_trained_model_pushed_to_a_local_dir_serves_through_remote_code(tmp_path, capsys):
    """`hf-ecg train` -> `hf-ecg push-model --local-dir` -> pipeline(trust_remote_code=True) without hf_ecg."""
    trained = tmp_path / "trained"
    code = main(
        [
            "train",
            "--data",
            str(toy_corpus(tmp_path / "toy.tsv", repeat=3)),
            "--model",
            str(save_tiny_model(tmp_path / "base")),
            "--output",
            str(trained),
            "--max-steps",
            "2",
            "--save_strategy",
            "no",
            "--use_cpu",
            "true",
            "--learning_rate",
            "0.003",
        ]
    )
    assert code == 0 and (trained / "ecg_card.json").is_file()
    assert "hf-ecg train: training once on" in capsys.readouterr().out  # --max-steps: a trial, trained once
    # the folder train wrote serves through its own code too, where hf_ecg cannot be imported at all
    assert _served_without_hf_ecg(trained, tmp_path) == {"entities": [["Disease", "Chemical"]] * 2, "hf_ecg": False}
    # and with hf_ecg installed, the task by its name needs no remote code (the folder's custom task is another name)
    from transformers import pipeline

    served = pipeline("entity-controlled-generation", model=str(trained), max_block_tokens=6)
    assert type(served).__module__ == "hf_ecg.runtime.pipeline"
    assert served(["Disease"], num_return_sequences=1, seed=0)[0]["entities"] == ["Disease"]
    local = tmp_path / "repo"
    code = main(["push-model", "--model", str(trained), "--repo-id", "org/toy-ecg", "--local-dir", str(local)])
    assert code == 0
    captured = capsys.readouterr()
    assert "nothing uploaded" in captured.out

    # one file of code, the package's generated one, in the folder train wrote and the one pushed
    bundle = Path(hf_ecg.__file__).parent / "remote_code" / "ecg_pipeline.py"
    for folder in (trained, local):
        assert [f.name for f in folder.glob("*.py")] == ["ecg_pipeline.py"]
        assert (folder / "ecg_pipeline.py").read_bytes() == bundle.read_bytes()
    config = json.loads((local / "config.json").read_text())
    assert (
        config["custom_pipelines"]["entity-controlled-generation-remote-code"]["impl"]
        == "ecg_pipeline.EntityControlledGenerationPipeline"
    )
    card = ModelCard.load(local / "README.md")
    assert card.data.pipeline_tag == "text-generation" and "ecg-qalm" in card.data.tags
    assert 'pipeline(model="org/toy-ecg", trust_remote_code=True)' in card.text
    assert 'pipeline("entity-controlled-generation", model="org/toy-ecg")' in card.text
    assert "learning_rate | 0.003" in card.text  # the training record survived the re-rendering
    assert "mention bank (real mentions from the training corpus) is included" in card.text
    assert json.loads((local / "ecg_config.json").read_text())["mention_bank"]["Chemical"]

    assert _served_without_hf_ecg(local, tmp_path) == {"entities": [["Disease", "Chemical"]] * 2, "hf_ecg": False}


def _served_without_hf_ecg(folder, cwd):
    """What ``pipeline(model=folder, trust_remote_code=True)`` writes in a Python where ``import hf_ecg`` fails."""
    script = (
        "import sys, json, importlib.abc\n"
        "class NoHfEcg(importlib.abc.MetaPathFinder):\n"
        "    def find_spec(self, name, path, target=None):\n"
        "        if name == 'hf_ecg' or name.startswith('hf_ecg.'):\n"
        "            raise ImportError('hf_ecg is not installed here')\n"
        "sys.meta_path.insert(0, NoHfEcg())\n"
        "from transformers import pipeline\n"
        f"gen = pipeline(model={str(folder)!r}, trust_remote_code=True, max_block_tokens=6)\n"
        "out = gen(['Disease', 'Chemical'], num_return_sequences=2, seed=0)\n"
        "print(json.dumps({'entities': [o['entities'] for o in out], 'hf_ecg': 'hf_ecg' in sys.modules}))\n"
    )
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    done = subprocess.run([sys.executable, "-c", script], cwd=cwd, env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_train_with_push_to_hub_pushes_what_push_model_pushes(tmp_path, monkeypatch, capsys):
    import hf_ecg.hub.push

    uploaded = {}

    def upload(folder, repo_id, repo_type, private, token):  # the network boundary: keep what would go up
        uploaded.update(
            repo_id=repo_id,
            repo_type=repo_type,
            private=private,
            files={p.relative_to(folder).as_posix(): p.read_bytes() for p in folder.rglob("*") if p.is_file()},
        )
        return f"https://huggingface.co/{repo_id}"

    monkeypatch.setattr(hf_ecg.hub.push, "_upload", upload)
    monkeypatch.setenv("HF_TOKEN", "hf_test_token")  # checked before training; the upload above never sends it
    trained = tmp_path / "trained"
    code = main(
        [
            "train",
            "--data",
            str(toy_corpus(tmp_path / "toy.tsv", repeat=3)),
            "--model",
            str(save_tiny_model(tmp_path / "base")),
            "--output",
            str(trained),
            "--max-steps",
            "2",
            "--save_strategy",
            "no",
            "--use_cpu",
            "true",
            "--push_to_hub",
            "true",
            "--hub_model_id",
            "org/toy-ecg",
            "--hub_private_repo",
            "true",
        ]
    )
    assert code == 0, capsys.readouterr().err
    assert "pushed it as hf-ecg push-model does to the model repo org/toy-ecg" in capsys.readouterr().out
    assert uploaded["repo_id"] == "org/toy-ecg" and uploaded["repo_type"] == "model" and uploaded["private"]
    local = tmp_path / "repo"
    assert main(["push-model", "--model", str(trained), "--repo-id", "org/toy-ecg", "--local-dir", str(local)]) == 0
    expected = {p.relative_to(local).as_posix(): p.read_bytes() for p in local.rglob("*") if p.is_file()}
    assert uploaded["files"].keys() == expected.keys()  # merged weights, pipeline code, ECG files, our card
    assert {"ecg_pipeline.py", "ecg_config.json", "README.md", "model.safetensors"} <= expected.keys()
    assert uploaded["files"]["README.md"] == expected["README.md"]
    assert not any(name.startswith("adapter_") for name in uploaded["files"])  # LoRA merged, not an adapter


def test_push_model_puts_a_downstream_ner_report_in_the_model_index(model_dir, tmp_path, capsys):
    report = {
        "train": [{"name": "train.tsv", "sentences": 45}],
        "synthetic": [{"name": "synthetic", "sentences": 45}],
        "test": {"name": "bc5cdr-test", "sentences": 4797},
        "config": {"model": "minilm-l6", "epochs": 20.0, "recipe": "concat"},
        "runs": [{"seed": 1}, {"seed": 2}],
        "entity_f1_mean": 0.4712,
        "entity_f1_std": 0.01,
        "per_type": {
            "Chemical": {"f1_mean": 0.6, "f1_std": 0.02, "support": 5385},
            "Disease": {"f1_mean": 0.3, "f1_std": 0.01, "support": 4424},
        },
    }
    path = tmp_path / "ner.json"
    path.write_text(json.dumps(report))
    local = tmp_path / "repo"
    assert (
        main(
            [
                "push-model",
                "--model",
                str(model_dir),
                "--repo-id",
                "org/x",
                "--local-dir",
                str(local),
                "--ner-report",
                str(path),
                "--license",
                "apache-2.0",
                "--language",
                "en,de",
                "--dataset-id",
                "bigbio/bc5cdr",
            ]
        )
        == 0
    )
    card = ModelCard.load(local / "README.md")
    assert (card.data.license, card.data.language) == ("apache-2.0", ["en", "de"])
    assert card.data.datasets == ["bigbio/bc5cdr"]
    (index,) = card.data.to_dict()["model-index"]
    assert index["name"] == "org/x"
    metrics = index["results"][0]["metrics"]
    assert [(m["name"], m["value"]) for m in metrics] == [
        ("entity micro F1, mean of 2 seed(s)", 0.4712),
        ("Chemical F1, mean of 2 seed(s)", 0.6),
        ("Disease F1, mean of 2 seed(s)", 0.3),
    ]
    assert index["results"][0]["dataset"]["name"] == "bc5cdr-test"
    assert (
        "| all (entity micro F1) | 0.471 ± 0.010 | |" in card.text and "| Disease | 0.300 ± 0.010 | 4424 |" in card.text
    )
    path.write_text("{}")
    assert (
        main(
            [
                "push-model",
                "--model",
                str(model_dir),
                "--repo-id",
                "org/x",
                "--local-dir",
                str(tmp_path / "r2"),
                "--ner-report",
                str(path),
            ]
        )
        == 2
    )
    assert "the NER report lacks ['entity_f1_mean'" in capsys.readouterr().err


def test_push_model_can_leave_the_mention_bank_out(model_dir, tmp_path):
    local = tmp_path / "repo"
    code = main(
        [
            "push-model",
            "--model",
            str(model_dir),
            "--repo-id",
            "org/x",
            "--local-dir",
            str(local),
            "--drop-mention-bank",
        ]
    )
    assert code == 0
    assert json.loads((local / "ecg_config.json").read_text())["mention_bank"] is None
    assert "is not included" in (local / "README.md").read_text()


def test_upload_errors_are_one_line_and_never_show_the_token(generated, tmp_path, monkeypatch, capsys):
    import huggingface_hub.constants

    secret = "hf_" + "x" * 34
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_OFFLINE", True)
    monkeypatch.setenv("HF_TOKEN", secret)
    code = main(["push-dataset", "--data", str(generated), "--repo-id", "org/toy-synth"])
    captured = capsys.readouterr()
    assert code == 2
    assert "could not upload to the dataset repo org/toy-synth" in captured.err
    assert secret not in captured.out + captured.err

    monkeypatch.delenv("HF_TOKEN")
    monkeypatch.setattr(huggingface_hub.constants, "HF_TOKEN_PATH", str(tmp_path / "no-token"))
    monkeypatch.setattr(huggingface_hub.constants, "HF_STORED_TOKENS_PATH", str(tmp_path / "no-tokens"))
    code = main(["push-dataset", "--data", str(generated), "--repo-id", "org/toy-synth"])
    assert code == 2
    assert "no Hugging Face token to push org/toy-synth: set HF_TOKEN or run `hf auth login`" in capsys.readouterr().err


def test_the_card_modules_load_without_torch_or_transformers():
    """Rendering a card needs neither: a Space or a CI job can write cards without a deep-learning stack."""
    code = (
        "import sys, hf_ecg.hub.model_card, hf_ecg.hub.dataset_card; "
        "print(sorted({'torch', 'transformers'} & set(sys.modules)))"
    )
    loaded = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert loaded.strip() == "[]"


@pytest.mark.parametrize(
    ("name", "hub_id"),
    [("org/name", True), ("gpt2", True), ("/abs/folder", False), ("./folder", False), ("a/b/c", False), ("", False)],
)
def test_one_hub_id_check_for_both_cards(name, hub_id, tmp_path):
    """The model card's base-model link and the dataset card's generator link follow one rule (they disagreed
    on `gpt2` and on `a/b/c`); an existing folder is never a Hub id."""
    from hf_ecg.hub.dataset_card import ECGDatasetCardData
    from hf_ecg.hub.model_card import looks_like_hub_id

    assert looks_like_hub_id(name) is hub_id
    assert (ECGModelCardData(base_model=name).base_model_hub_id == name) is hub_id
    card = ECGDatasetCardData(entity_types=["Disease"], num_samples=1, generator=name, base_model=name)
    assert (card.generator_hub_id == name) is hub_id and (card.base_model_hub_id == name) is hub_id
    (tmp_path / "org").mkdir()
    (tmp_path / "org" / "name").mkdir()
    assert not looks_like_hub_id(str(tmp_path / "org" / "name"))


def test_model_card_states_its_metadata_and_facts():
    """The model card as a pattern (tests/card_patterns.py): metadata exactly, each fact in its place."""
    card = ECGModelCardData(
        base_model="HuggingFaceTB/SmolLM2-135M",
        model_id="org/bc5cdr-ecg",
        entity_types=["Chemical", "Disease"],
        dataset_name="bc5cdr",
        license="cc-by-4.0",
        hyperparameters={"lora": True, "learning_rate": 0.001},
        corpus_statistics={
            "num_sentences": 45,
            "num_blocks": 96,
            "num_entities": 110,
            "entity_type_counts": {"Chemical": 60, "Disease": 50},
        },
        versions={"hf-ecg": "0.1.0"},
        has_pipeline_code=True,
    )
    metadata, body = split_card(str(card.to_model_card()))
    assert metadata == MODEL_CARD_METADATA
    assert re.fullmatch(MODEL_CARD_PATTERN, body), body
