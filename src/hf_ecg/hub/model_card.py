"""The model card: :class:`ECGModelCardData`, rendered from ``templates/model_card.md``.

The trainer's callback (:class:`hf_ecg.training.trainer.ECGModelCardCallback`) fills the training parts; the data
is saved beside the weights (``ecg_card.json``) so that ``hf-ecg push-model`` can render it again for a
repo. This module imports neither torch nor transformers.
"""

from __future__ import annotations

import importlib.metadata
import json
import os
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any

from huggingface_hub import EvalResult, ModelCard, ModelCardData

from ..citation import CITATION
from ..runtime.ecg_config import CARD_DATA_NAME
from ..runtime.files import read_json
from ..runtime.layout import layout_named

__all__ = [
    "CARD_DATA_NAME",
    "MODEL_CARD_TEMPLATE",
    "ECGModelCardData",
    "ModelCardFields",
    "library_versions",
    "looks_like_hub_id",
    "method_name",
]

MODEL_CARD_TEMPLATE = Path(__file__).parent / "templates" / "model_card.md"


def method_name(layout: str | None) -> str:
    """The paper's name for a generator trained with this layout, as its :class:`~hf_ecg.runtime.layout.Layout` says
    (``lm`` is its ECG-LM ablation); ECG-QALM when none is recorded."""
    return layout_named(layout).method if layout else "ECG-QALM"


def library_versions() -> dict[str, str]:
    out = {}
    for package in ("hf-ecg", "transformers", "torch", "datasets", "peft", "accelerate", "tokenizers"):
        try:
            out[package] = importlib.metadata.version(package)
        except importlib.metadata.PackageNotFoundError:
            pass
    return out


@dataclass(frozen=True)
class ModelCardFields:
    """What a user says of a generator for its card, beyond what its training tells (``None``: not said): its
    ``license`` and the Hub id of the gold corpus it learned from (``dataset_id``: the card's ``datasets``)."""

    license: str | None = None
    dataset_id: str | None = None


@dataclass
class ECGModelCardData:
    """Everything the model card says; :class:`~hf_ecg.training.trainer.ECGModelCardCallback` fills the training
    parts."""

    base_model: str = ""
    model_id: str | None = None
    entity_types: list[str] = field(default_factory=list)
    dataset_name: str | None = None
    dataset_id: str | None = None
    corpus_statistics: dict[str, Any] | None = None
    first_n: int | None = None
    license: str | None = None
    language: list[str] | None = None
    hyperparameters: dict[str, Any] = field(default_factory=dict)
    training_logs: list[dict[str, Any]] = field(default_factory=list)
    # The checkpoint the weights are from when the trainer kept the lowest held-out loss (load_best_model_at_end).
    best_step: int | None = None
    best_eval_loss: float | None = None
    # A downstream NER report (`hf-ecg evaluate ner -o`) of a tagger trained with this model's data: the
    # card's model-index and its "Downstream evaluation" section.
    downstream: dict[str, Any] | None = None
    # Trained twice (ECGTrainingArguments.own_sentences): what the first generator wrote, what was kept and added
    # (hf_ecg.training.own_sentences.OwnSentences.record, with the blocks added and the first training's best
    # held-out loss and steps).
    own_sentences: dict[str, Any] | None = None
    # Trained on the user's text too (train_ecg_model's text): the counts of its sentences judged and kept as
    # templates (hf_ecg.training.text_sentences.TextSentences.record, with the blocks added); never the text.
    text_sentences: dict[str, Any] | None = None
    total_steps: int | None = None
    versions: dict[str, str] = field(default_factory=library_versions)
    has_pipeline_code: bool = False  # the folder carries the pipeline code for trust_remote_code

    def save(self, directory: str | os.PathLike) -> Path:
        """Write the card data as ``ecg_card.json`` (so the card can be rendered again, e.g. for a repo id)."""
        path = Path(directory) / CARD_DATA_NAME
        path.write_text(json.dumps(asdict(self), indent=2, default=str) + "\n", encoding="utf-8")
        return path

    @classmethod
    def load(cls, directory: str | os.PathLike) -> ECGModelCardData | None:
        """The card data saved in ``directory``, or ``None`` if there is none."""
        path = Path(directory) / CARD_DATA_NAME
        if not path.is_file():
            return None
        data = read_json(path, "model card data")
        known = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in data.items() if k in known})

    @property
    def final_train_loss(self) -> float | None:
        losses = [log["loss"] for log in self.training_logs if "loss" in log]
        return losses[-1] if losses else None

    @property
    def method(self) -> str:
        """``"ECG-LM"`` for a model trained with ``layout="lm"`` (the paper's ablation), else ``"ECG-QALM"``."""
        return method_name(self.hyperparameters.get("layout"))

    @property
    def base_model_hub_id(self) -> str | None:
        """The base model when it names a Hub repo (not a local folder): :func:`looks_like_hub_id`."""
        return self.base_model if looks_like_hub_id(self.base_model) else None

    def downstream_eval_results(self) -> list[EvalResult] | None:
        """The downstream report as ``model-index`` entries: entity micro F1 (mean over seeds) and per type."""
        report = self.downstream
        if not report:
            return None
        test = report.get("test", {}).get("name") or "test"
        seeds = len(report.get("runs", [])) or 1
        common = {
            "task_type": "token-classification",
            "task_name": "Named entity recognition (downstream tagger)",
            "dataset_type": test,
            "dataset_name": test,
            "metric_type": "f1",
        }
        results = [
            EvalResult(
                **common,
                metric_value=round(report["entity_f1_mean"], 4),
                metric_name=f"entity micro F1, mean of {seeds} seed(s)",
            )
        ]
        for label, scores in sorted(report.get("per_type", {}).items()):
            results.append(
                EvalResult(
                    **common,
                    metric_value=round(scores["f1_mean"], 4),
                    metric_name=f"{label} F1, mean of {seeds} seed(s)",
                )
            )
        return results

    def card_data(self) -> ModelCardData:
        """The YAML metadata of the card."""
        base = self.base_model_hub_id
        results = self.downstream_eval_results()
        return ModelCardData(
            model_name=(self.model_id or "ecg-model") if results else None,
            eval_results=results,
            library_name="transformers",
            pipeline_tag="text-generation",
            base_model=base,
            license=self.license,
            language=self.language,
            datasets=[self.dataset_id] if self.dataset_id else None,
            tags=["hf_ecg", self.method.lower(), "entity-controlled-generation", "synthetic-data", "ner"],
        )

    def to_model_card(self) -> ModelCard:
        """Render the card from :data:`MODEL_CARD_TEMPLATE`."""
        return ModelCard.from_template(
            self.card_data(),
            template_path=str(MODEL_CARD_TEMPLATE),
            card=self,
            model_id=self.model_id or "path/to/this/model",
            citation=CITATION,
        )


def looks_like_hub_id(name: str | None) -> bool:
    """Whether ``name`` reads as a Hub repo id (``org/name``, or a canonical ``gpt2``) rather than a local
    folder: huggingface_hub accepts it as a repo id, and it is no path that exists here or starts with ``.``.
    The one such check of the cards (model, dataset): their links to the Hub follow it."""
    from huggingface_hub.utils import HFValidationError, validate_repo_id

    if not name or name.startswith(".") or Path(name).exists():
        return False
    try:
        validate_repo_id(name)
    except HFValidationError:
        return False
    return True
