"""The cards as patterns, as setfit's ``tests/model_card_pattern.py`` does: the metadata exactly (the Hub and
``datasets`` read it), the body as the facts it must state, in their order, with any wording between them. A
change of wording is not a test failure; a fact lost, wrong or out of place is."""

from __future__ import annotations

import re

import yaml

from hf_ecg.citation import CITATION


def in_order(*facts: str) -> str:
    """A regex matching a whole text that holds ``facts`` (literal strings) in this order."""
    return r"[\s\S]*?" + r"[\s\S]*?".join(map(re.escape, facts)) + r"[\s\S]*"


def split_card(text: str) -> tuple[dict, str]:
    """A card's YAML metadata (parsed) and its body."""
    _, front, body = text.split("---\n", 2)
    return yaml.safe_load(front), body


#: The dataset card of tests/test_hub.py's ECGDatasetCardData (4 samples, BC5CDR-like).
DATASET_CARD_METADATA = {
    "annotations_creators": ["machine-generated"],
    "language_creators": ["machine-generated"],
    "language": ["en"],
    "license": "cc-by-4.0",
    "size_categories": ["n<1K"],
    "source_datasets": ["bigbio/bc5cdr"],
    "task_categories": ["token-classification"],
    "task_ids": ["named-entity-recognition"],
    "pretty_name": "BC5CDR synthetic",
    "tags": ["synthetic", "ner", "hf_ecg", "ecg-qalm"],
    "configs": [{"config_name": "default", "data_files": [{"split": "train", "path": "data/train-*.parquet"}]}],
    "dataset_info": {
        "features": [
            {"name": "id", "dtype": "int64"},
            {"name": "tokens", "list": "string"},
            {
                "name": "ner_tags",
                "list": {
                    "class_label": {
                        "names": {"0": "O", "1": "B-Chemical", "2": "I-Chemical", "3": "B-Disease", "4": "I-Disease"}
                    }
                },
            },
            {"name": "entities", "list": "string"},
            {"name": "template", "dtype": "string"},
            {"name": "text", "dtype": "string"},
            {
                "name": "spans",
                "list": [
                    {"name": "start", "dtype": "int32"},
                    {"name": "end", "dtype": "int32"},
                    {"name": "label", "dtype": "string"},
                ],
            },
            {"name": "forced_tags", "dtype": "int32"},
            {"name": "cut_blocks", "dtype": "int32"},
            {"name": "complete", "dtype": "bool"},
            {"name": "tag_pieces", "dtype": "int32"},
            {"name": "model_tokens", "dtype": "int32"},
            {"name": "redrawn_tokens", "dtype": "int32"},
            {"name": "refused_redraws", "dtype": "int32"},
            {"name": "mention_sources", "list": "string"},
        ],
        "splits": [{"name": "train", "num_bytes": 1234, "num_examples": 4}],
    },
}

DATASET_CARD_PATTERN = in_order(
    "# BC5CDR synthetic",
    "4 **synthetic** sentences",
    "2\nentity types (Chemical, Disease)",
    "(ECG-QALM) trained on bc5cdr",
    "## Usage",
    'data = load_dataset("org/bc5cdr-synth", split="train")',
    "## Dataset structure",
    "| `id` | int64 | sample id, 0 .. 3 |",
    "| `ner_tags` | list of ClassLabel | IOB2 tag of each token: O, B-Chemical, I-Chemical, B-Disease, I-Disease |",
    "| `spans` | list of {start, end, label} |",
    "| `tag_pieces` | int32 |",
    'not row["tag_pieces"]',
    "1. **aspirin** *(Chemical)* cures **fever** *(Disease)* .",
    "## How the data was generated",
    "[Aggarwal et al., 2023](https://aclanthology.org/2023.findings-acl.349/)",
    "[`org/bc5cdr-ecg`](https://huggingface.co/org/bc5cdr-ecg)",
    "[`HuggingFaceTB/SmolLM2-135M-Instruct`](https://huggingface.co/HuggingFaceTB/SmolLM2-135M-Instruct)",
    "45 sentences of bc5cdr",
    "**Entity sequences:**",
    "**Mentions:**",
    "in proportion to their frequency",
    "temperature=1.0, max_block_tokens=48; seed 7; bfloat16",
    "80 tokens: 60 kept, 20 (25.0%)",
    "about 1.0× the kept tokens",
    "2 of 8 blocks (25.0%)",
    "1 (12.5%)",
    "## Sentence health",
    "| 3 | 75.0% |",
    "| 1 | 25.0% |",
    "| 1 | 25.0% |",
    "| 0 | 0.0% |",
    "| 1 | 25.0% |",
    "**Privacy.**",
    "## Entity distribution",
    "40 tokens, 4 entities",
    "(1.00 per sentence, 10.0 tokens per sentence)",
    "| Chemical | 3 | 75.0% |",
    "| Disease | 1 | 25.0% |",
    "## Quality",
    "| distinct_3 | 0.5 |",
    "| rouge_l_mean | 0.25 |",
    "## Intended use and limits",
    "`cc-by-4.0`; the sentences derive from bc5cdr",
    "- hf-ecg 0.1.0",
    "- datasets 5.2.0",
    "## Citation",
    CITATION,
)

#: The model card of tests/test_hub.py's ECGModelCardData (a LoRA generator for BC5CDR, pushed as org/bc5cdr-ecg).
MODEL_CARD_METADATA = {
    "base_model": "HuggingFaceTB/SmolLM2-135M",
    "library_name": "transformers",
    "license": "cc-by-4.0",
    "pipeline_tag": "text-generation",
    "tags": ["hf_ecg", "ecg-qalm", "entity-controlled-generation", "synthetic-data", "ner"],
}

MODEL_CARD_PATTERN = in_order(
    "# ECG-QALM generator for bc5cdr",
    "[`HuggingFaceTB/SmolLM2-135M`](https://huggingface.co/HuggingFaceTB/SmolLM2-135M)",
    "**Entity types:** Chemical, Disease",
    "LoRA",
    "## Usage",
    'pipeline("entity-controlled-generation", model="org/bc5cdr-ecg")',
    'generator([["Chemical", "Disease"]]',
    'pipeline(model="org/bc5cdr-ecg", trust_remote_code=True)',
    "hf-ecg generate --model org/bc5cdr-ecg",
    "## Training data",
    "45 sentences (110 entities, 96 Q&A blocks) from bc5cdr",
    "| Chemical | 60 |",
    "| Disease | 50 |",
    "is not included",
    "## Training",
    "| learning_rate | 0.001 |",
    "- hf-ecg 0.1.0",
    "## Citation",
    CITATION,
)
