"""Model cards: a dataclass filled during training by a callback, rendered from a Jinja template."""

from __future__ import annotations

import importlib.metadata
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from huggingface_hub import ModelCard, ModelCardData
from transformers import TrainerCallback

from .citation import CITATION

if TYPE_CHECKING:
    from .trainer import ECGTrainer

__all__ = ["MODEL_CARD_TEMPLATE", "ECGModelCardCallback", "ECGModelCardData"]

MODEL_CARD_TEMPLATE = Path(__file__).parent / "templates" / "model_card.md"
_HYPERPARAMETERS = (
    "learning_rate", "num_train_epochs", "max_steps", "per_device_train_batch_size", "gradient_accumulation_steps",
    "weight_decay", "warmup_steps", "lr_scheduler_type", "optim", "seed", "max_length", "loss_on",
    "lora", "lora_r", "lora_alpha", "lora_dropout", "lora_target_modules",
)  # fmt: skip


def _versions() -> dict[str, str]:
    out = {}
    for package in ("hf-ecg", "transformers", "torch", "datasets", "peft", "accelerate", "tokenizers"):
        try:
            out[package] = importlib.metadata.version(package)
        except importlib.metadata.PackageNotFoundError:
            pass
    return out


@dataclass
class ECGModelCardData:
    """Everything the model card says; :class:`ECGModelCardCallback` fills the training parts."""

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
    eval_results: dict[str, float] = field(default_factory=dict)
    total_steps: int | None = None
    versions: dict[str, str] = field(default_factory=_versions)

    @property
    def final_train_loss(self) -> float | None:
        losses = [log["loss"] for log in self.training_logs if "loss" in log]
        return losses[-1] if losses else None

    @property
    def base_model_hub_id(self) -> str | None:
        """The base model when it names a Hub repo (not a local folder)."""
        looks_local = Path(self.base_model).is_absolute() or self.base_model.startswith(".")
        return self.base_model if self.base_model and not looks_local and not Path(self.base_model).exists() else None

    def card_data(self) -> ModelCardData:
        """The YAML metadata of the card."""
        base = self.base_model_hub_id
        return ModelCardData(
            library_name="transformers",
            pipeline_tag="text-generation",
            base_model=base,
            license=self.license,
            language=self.language,
            datasets=[self.dataset_id] if self.dataset_id else None,
            tags=["hf_ecg", "ecg-qalm", "entity-controlled-generation", "synthetic-data", "ner"],
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


class ECGModelCardCallback(TrainerCallback):
    """Records hyperparameters, losses and evaluation results into the trainer's card data."""

    def __init__(self, trainer: ECGTrainer) -> None:
        self.trainer = trainer

    def on_train_begin(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
        card = self.trainer.model_card_data
        card.hyperparameters = {name: getattr(args, name) for name in _HYPERPARAMETERS if hasattr(args, name)}

    def on_log(self, args: Any, state: Any, control: Any, logs: dict[str, float] | None = None, **kwargs: Any) -> None:
        losses = {k: v for k, v in (logs or {}).items() if k in ("loss", "eval_loss")}
        if not losses:
            return
        rows = self.trainer.model_card_data.training_logs
        if not rows or rows[-1]["step"] != state.global_step:  # training and eval logs of a step share a row
            rows.append({"step": state.global_step, "epoch": round(state.epoch or 0.0, 2)})
        rows[-1].update(losses)

    def on_evaluate(
        self, args: Any, state: Any, control: Any, metrics: dict[str, float] | None = None, **kwargs: Any
    ) -> None:
        if metrics:
            self.trainer.model_card_data.eval_results.update(metrics)

    def on_train_end(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
        self.trainer.model_card_data.total_steps = state.global_step
