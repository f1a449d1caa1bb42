"""The Gradio app of the Space (``spaces/app.py`` serves it): pick entity types in order (or let the app
sample sequences from the model's training data), the number of samples, temperature and seed; the
sentences come back with their entities highlighted, and as a JSONL file to download. A sketch generator
(``train --layout sketch``) gets a second tab: type a sketch, its tags and kept words in order and ``_`` for each
gap, and the model writes sentences around it.

The model is ``$HF_ECG_MODEL`` (a Hub id or a folder written by ``hf-ecg train``), else the first of the
``models:`` that the Space card names (``scripts/build_space.py --model ORG/NAME`` writes it). With neither,
for a local try-out, the app uses the demo model in ``$HF_ECG_CACHE/space-model`` and builds it offline on
first start (:func:`~hf_ecg.demo.model.build_demo_model`: SmolLM2-135M with LoRA on WNUT-16, about 4 minutes
on 2 CPU cores). Needs ``gradio``.
"""

from __future__ import annotations

import contextlib
import json
import os
import random
import tempfile
from pathlib import Path
from typing import Any

import gradio as gr

MODEL_ENV = "HF_ECG_MODEL"
MAX_ENTITIES = 8  # per sentence
MAX_SAMPLES = 16  # per click
MAX_BLOCK_TOKENS = 128  # per block: bounds a sentence at (entities + 1) * 128 tokens
DEFAULT_BLOCK_TOKENS = 64
MAX_ATTEMPTS = 3  # a demo answers in seconds: a block at its limit is drawn again at most twice


def card_model(card_path: Path) -> str | None:
    """The first model the Space card's ``models:`` names, or None."""
    from huggingface_hub import RepoCard

    if not card_path.is_file():
        return None
    models = RepoCard.load(card_path).data.to_dict().get("models") or []
    return models[0] if models else None


def resolve_model(card_path: Path) -> str:
    """``$HF_ECG_MODEL``, else the model the Space card at ``card_path`` names, else the offline demo model
    (built on first use)."""
    name = os.environ.get(MODEL_ENV) or card_model(card_path)
    if name:
        return name
    from ..modeling import cache_root
    from .model import build_demo_model

    folder = cache_root() / "space-model"
    if not (folder / "ecg_config.json").is_file():
        build_demo_model(folder)
    return str(folder)


def highlighted(sample: dict[str, Any]) -> list[tuple[str, str | None]]:
    """``HighlightedText`` segments of one sample: runs of plain tokens, and each mention with its type."""
    segments: list[tuple[str, str | None]] = []
    for token, tag in zip(sample["tokens"], sample["ner_tags"], strict=True):
        label = None if tag == "O" else tag[2:]
        if segments and segments[-1][1] == label and not tag.startswith("B-"):
            segments[-1] = (f"{segments[-1][0]} {token}", label)
        else:
            segments.append((f" {token}" if segments else token, label))
    return segments


class Generator:
    """The pipeline plus input checks; ``generate`` is what the button (and the API) calls."""

    def __init__(self, model: str) -> None:
        from transformers import pipeline

        self.model = model
        self.pipe = pipeline("entity-controlled-generation", model=model)
        self.entity_types = list(self.pipe.ecg_config.entity_types)
        self.writes_sketches = self.pipe.ecg_config.prompt_layout.sketch
        statistics = self.pipe.ecg_config.corpus_statistics
        self.sampler = None
        if statistics:
            from ..data.statistics import CorpusStatistics
            from ..synthetic.entity_sequences import make_sampler

            self.sampler = make_sampler("gold", CorpusStatistics.from_dict(statistics))

    def parse(self, entities: str) -> tuple[str, ...]:
        requested = tuple(t.strip() for t in entities.replace(";", ",").split(",") if t.strip())
        unknown = [t for t in requested if t not in self.entity_types]
        if unknown:
            raise gr.Error(f"Unknown entity type {unknown[0]!r}. This model knows: {', '.join(self.entity_types)}.")
        if len(requested) > MAX_ENTITIES:
            raise gr.Error(f"At most {MAX_ENTITIES} entities per sentence; you asked for {len(requested)}.")
        return requested

    def generate(
        self,
        entities: str,
        sample_entities: bool,
        num_samples: float,
        temperature: float,
        max_block_tokens: float,
        seed: float,
    ) -> tuple[list[tuple[str, str | None]], str]:
        """Generate ``num_samples`` sentences; returns the highlighted text and a JSONL file path."""
        num_samples, max_block_tokens, seed = self._checked(num_samples, temperature, max_block_tokens, seed)
        if sample_entities:
            if self.sampler is None:
                raise gr.Error("This model has no training statistics to sample from: type the entity types.")
            sequences = self.sampler.sample(num_samples, random.Random(seed))
            sequences = [s[:MAX_ENTITIES] for s in sequences]
        else:
            sequences = [self.parse(entities)] * num_samples
        return self._written([list(s) for s in sequences], temperature, max_block_tokens, seed)

    def parse_sketch(self, text: str) -> Any:
        """The :class:`~hf_ecg.runtime.sketches.Sketch` of a typed sketch: tags ``<Type>``, kept words, ``_`` (or
        ``<|gap|>``) for each gap."""
        from ..runtime.blocks import tag_label
        from ..runtime.sketches import GAP_TOKEN, Sketch

        pieces: list[str] = []
        for word in text.split():
            piece = GAP_TOKEN if word in ("_", GAP_TOKEN) else word
            if not (piece == GAP_TOKEN and pieces and pieces[-1] == GAP_TOKEN):
                pieces.append(piece)
        try:
            sketch = Sketch(tuple(pieces)) if pieces else None
        except ValueError as err:
            raise gr.Error(f"Not a sketch: {err}.") from None
        if sketch is None or not sketch.entity_types:
            raise gr.Error("A sketch needs at least one entity tag, e.g. _ <Disease> _ induced by <Chemical> _")
        self.parse(", ".join(sketch.entity_types))  # known types, at most MAX_ENTITIES
        wrong = [p for p in pieces if p.startswith("<") and p != GAP_TOKEN and tag_label(p) is None]
        if wrong:
            raise gr.Error(f"{wrong[0]} is not a tag: write tags as <{self.entity_types[0]}>.")
        return sketch

    def sketch(
        self, sketch: str, num_samples: float, temperature: float, max_block_tokens: float, seed: float
    ) -> tuple[list[tuple[str, str | None]], str]:
        """Write ``num_samples`` sentences around the typed ``sketch``; returns what :meth:`generate` returns."""
        if not self.writes_sketches:
            raise gr.Error("This model is not a sketch generator: train one with --layout sketch.")
        num_samples, max_block_tokens, seed = self._checked(num_samples, temperature, max_block_tokens, seed)
        return self._written([self.parse_sketch(sketch)] * num_samples, temperature, max_block_tokens, seed)

    def _checked(
        self, num_samples: float, temperature: float, max_block_tokens: float, seed: float
    ) -> tuple[int, int, int]:
        num_samples, max_block_tokens, seed = int(num_samples), int(max_block_tokens), int(seed)
        if not 1 <= num_samples <= MAX_SAMPLES:
            raise gr.Error(f"Number of samples must be between 1 and {MAX_SAMPLES}.")
        if not 0.05 <= temperature <= 2.0:
            raise gr.Error("Temperature must be between 0.05 and 2.0.")
        if not 4 <= max_block_tokens <= MAX_BLOCK_TOKENS:
            raise gr.Error(f"Tokens per block must be between 4 and {MAX_BLOCK_TOKENS}.")
        return num_samples, max_block_tokens, seed

    def _written(
        self, requests: list[Any], temperature: float, max_block_tokens: int, seed: int
    ) -> tuple[list[tuple[str, str | None]], str]:
        """The pipeline's first sample of each request, highlighted, and the JSONL file holding them."""
        outputs = self.pipe(
            requests,
            seed=seed,
            temperature=temperature,
            max_block_tokens=max_block_tokens,
            max_attempts=MAX_ATTEMPTS,
        )
        samples = [per_input[0] for per_input in outputs]
        segments: list[tuple[str, str | None]] = []
        for i, sample in enumerate(samples):
            segments.extend([(f"{i + 1}. ", None), *highlighted(sample), ("\n", None)])
        folder = Path(tempfile.mkdtemp(prefix="hf-ecg-space-"))
        path = folder / "samples.jsonl"
        with path.open("w", encoding="utf-8") as f:
            for sample in samples:
                f.write(json.dumps(sample, ensure_ascii=False) + "\n")
        return segments, str(path)


def build_demo(model: str) -> gr.Blocks:
    """The Space's ``Blocks`` serving ``model`` (a Hub id or a folder): inputs, a Generate button, highlighted
    results and a JSONL download; for a sketch generator, a Sketch tab beside the entity types."""
    generator = Generator(model)
    types = generator.entity_types
    sketches = generator.writes_sketches
    with gr.Blocks(title="hf_ecg: entity-controlled NER data", analytics_enabled=False) as demo:
        gr.Markdown(
            "# Entity-controlled NER data (ECG-QALM)\n"
            "Ask for entity types in order; the model writes new sentences with exactly those entities, "
            f"labelled. Model: `{generator.model}`."
        )
        with gr.Row():
            with gr.Column():
                with gr.Tabs() if sketches else contextlib.nullcontext():
                    with gr.Tab("Entity types") if sketches else contextlib.nullcontext():
                        entities = gr.Textbox(
                            label=f"Entity types, in order (comma-separated, at most {MAX_ENTITIES})",
                            value=", ".join(types[:2]),
                            info=f"Known: {', '.join(types)}",
                            elem_id="entities",
                        )
                        sample_entities = gr.Checkbox(label="Sample entity sequences from the training data instead")
                        button = gr.Button("Generate", variant="primary", elem_id="generate")
                    if sketches:
                        with gr.Tab("Sketch"):
                            sketch = gr.Textbox(
                                label="A sketch: entity tags and kept words in order, _ for each gap",
                                value=" _ ".join(["", *(f"<{t}>" for t in types[:2]), ""]).strip(),
                                info=f"Tags: {', '.join(f'<{t}>' for t in types)}",
                                elem_id="sketch",
                            )
                            sketch_button = gr.Button("Write around it", variant="primary", elem_id="write-sketch")
                num_samples = gr.Slider(1, MAX_SAMPLES, value=3, step=1, label="Number of samples")
                temperature = gr.Slider(0.05, 2.0, value=1.0, step=0.05, label="Temperature")
                max_block_tokens = gr.Slider(
                    4, MAX_BLOCK_TOKENS, value=DEFAULT_BLOCK_TOKENS, step=1, label="Longest block (tokens)"
                )
                seed = gr.Number(value=0, precision=0, label="Seed")
            with gr.Column():
                results = gr.HighlightedText(label="Generated sentences", show_legend=True, elem_id="results")
                download = gr.File(label="Samples (JSONL)", elem_id="download")
        settings = [num_samples, temperature, max_block_tokens, seed]
        button.click(
            generator.generate,
            inputs=[entities, sample_entities, *settings],
            outputs=[results, download],
            api_name="generate",
        )
        if sketches:
            sketch_button.click(
                generator.sketch, inputs=[sketch, *settings], outputs=[results, download], api_name="sketch"
            )
    return demo
