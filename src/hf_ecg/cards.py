"""Cards: dataclasses rendered from Jinja templates under ``templates/``.

- :class:`ECGModelCardData`, filled during training by :class:`ECGModelCardCallback` and saved
  beside the weights (``ecg_card.json``) so that ``hf-ecg push-model`` can render it again for a repo;
- :class:`ECGDatasetCardData`, filled from a generated dataset by ``hf-ecg push-dataset``.
"""

from __future__ import annotations

import importlib.metadata
import json
import os
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import TYPE_CHECKING, Any

from huggingface_hub import DatasetCard, DatasetCardData, EvalResult, ModelCard, ModelCardData
from transformers import TrainerCallback

from .citation import CITATION

if TYPE_CHECKING:
    from .trainer import ECGTrainer

__all__ = [
    "CARD_DATA_NAME",
    "DATASET_CARD_TEMPLATE",
    "MODEL_CARD_TEMPLATE",
    "ECGDatasetCardData",
    "ECGModelCardCallback",
    "ECGModelCardData",
]

MODEL_CARD_TEMPLATE = Path(__file__).parent / "templates" / "model_card.md"
DATASET_CARD_TEMPLATE = Path(__file__).parent / "templates" / "dataset_card.md"
CARD_DATA_NAME = "ecg_card.json"


def _method(layout: str | None) -> str:
    """The paper's name for a generator trained with this layout: ``"lm"`` is its ECG-LM ablation."""
    return "ECG-LM" if layout == "lm" else "ECG-QALM"


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
    # A downstream NER report (`hf-ecg evaluate ner -o`) of a tagger trained with this model's data: the
    # card's model-index and its "Downstream evaluation" section.
    downstream: dict[str, Any] | None = None
    total_steps: int | None = None
    versions: dict[str, str] = field(default_factory=_versions)
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
        data = json.loads(path.read_text(encoding="utf-8"))
        known = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in data.items() if k in known})

    @property
    def final_train_loss(self) -> float | None:
        losses = [log["loss"] for log in self.training_logs if "loss" in log]
        return losses[-1] if losses else None

    @property
    def method(self) -> str:
        """``"ECG-LM"`` for a model trained with ``layout="lm"`` (the paper's ablation), else ``"ECG-QALM"``."""
        return _method(self.hyperparameters.get("layout"))

    @property
    def base_model_hub_id(self) -> str | None:
        """The base model when it names a Hub repo (not a local folder)."""
        looks_local = Path(self.base_model).is_absolute() or self.base_model.startswith(".")
        return self.base_model if self.base_model and not looks_local and not Path(self.base_model).exists() else None

    def downstream_eval_results(self) -> list[EvalResult] | None:
        """The downstream report as ``model-index`` entries: entity micro F1 (mean over seeds) and per type."""
        report = self.downstream
        if not report:
            return None
        test = report.get("test", {}).get("name") or "test"
        seeds = len(report.get("runs", [])) or 1
        common = {"task_type": "token-classification", "task_name": "Named entity recognition (downstream tagger)",
                  "dataset_type": test, "dataset_name": test, "metric_type": "f1"}  # fmt: skip
        results = [EvalResult(**common, metric_value=round(report["entity_f1_mean"], 4),
                              metric_name=f"entity micro F1, mean of {seeds} seed(s)")]  # fmt: skip
        for label, scores in sorted(report.get("per_type", {}).items()):
            results.append(EvalResult(**common, metric_value=round(scores["f1_mean"], 4),
                                      metric_name=f"{label} F1, mean of {seeds} seed(s)"))  # fmt: skip
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


class ECGModelCardCallback(TrainerCallback):
    """Records hyperparameters, losses and evaluation results into the trainer's card data."""

    def __init__(self, trainer: ECGTrainer) -> None:
        self.trainer = trainer

    def on_train_begin(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
        from dataclasses import fields as dataclass_fields

        from transformers import TrainingArguments
        from transformers.modelcard import extract_hyperparameters_from_trainer

        # transformers' own list (as its Trainer cards have it), then every field ECG-QALM adds to it
        inherited = {f.name for f in dataclass_fields(TrainingArguments)}
        added = {f.name: getattr(args, f.name) for f in dataclass_fields(args) if f.name not in inherited}
        card = self.trainer.model_card_data
        card.hyperparameters = {**extract_hyperparameters_from_trainer(self.trainer), **added}

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


_SAMPLERS = {
    "gold": "drawn from the generator's training corpus: each is the entity sequence of a random gold "
    "sentence, so the synthetic distribution mimics the gold one",
    "urg": "drawn from the gold sentences weighted towards under-represented entity types (paper, Appendix A.1)",
    "uniform": "of gold lengths, each position's type uniform over the entity types",
}


#: Samples the dataset card shows.
CARD_EXAMPLES = 3


def _examples(tokens: list[list[str]], tags: list[list[int]], names: list[str]) -> list[str]:
    """The first :data:`CARD_EXAMPLES` samples as markdown, each entity in bold with its type:
    ``**aspirin** *(Chemical)* cures **fever** *(Disease)* .``."""
    from .tags import tags_to_spans

    examples = []
    for words, ids in list(zip(tokens, tags, strict=True))[:CARD_EXAMPLES]:
        spans, _ = tags_to_spans([names[k] for k in ids], "IOB2")
        starts = {span.start: span for span in spans}
        parts, i = [], 0
        while i < len(words):
            if i in starts:
                span = starts[i]
                parts.append(f"**{' '.join(words[span.start : span.end])}** *({span.label})*")
                i = span.end
            else:
                parts.append(words[i].replace("*", "\\*").replace("|", "\\|"))
                i += 1
        examples.append(" ".join(parts))
    return examples


def _size_category(n: int) -> str:
    bounds = [(1_000, "n<1K"), (10_000, "1K<n<10K"), (100_000, "10K<n<100K"), (1_000_000, "100K<n<1M")]
    return next((label for bound, label in bounds if n < bound), "1M<n<10M" if n < 10_000_000 else "n>10M")


def _looks_like_hub_id(name: str | None) -> bool:
    return bool(name) and name.count("/") == 1 and not name.startswith((".", "/")) and not Path(name).exists()


@dataclass
class ECGDatasetCardData:
    """Everything a synthetic dataset's card says; :meth:`from_generated` fills it from a folder that
    :func:`hf_ecg.generate_dataset` wrote."""

    entity_types: list[str]
    num_samples: int
    label_names: list[str] | None = None  # the ner_tags ClassLabel names, in order; None: generate.bio_labels
    repo_id: str | None = None
    pretty_name: str | None = None
    license: str | None = "other"
    language: list[str] | None = field(default_factory=lambda: ["en"])
    generator: str = ""  # the model that wrote the data: a Hub id or a local path
    method: str = "ECG-QALM"  # "ECG-LM" when the generator was trained with layout="lm" (the paper's ablation)
    base_model: str | None = None
    corpus_name: str | None = None
    corpus_sentences: int | None = None
    sampler: str | None = None  # None: explicit entity sequences
    mentions: str | None = None  # as recorded in ecg_generation.json; None means "random"
    seed: int = 0
    decoding: dict[str, Any] = field(default_factory=dict)
    entity_counts: dict[str, int] = field(default_factory=dict)
    num_tokens: int = 0
    num_blocks: int = 0
    forced_tags: int = 0
    cut_blocks: int = 0
    complete_samples: int | None = None  # None: written before hf_ecg flagged complete sentences
    short_samples: int = 0
    repetitive_samples: int = 0
    second_sentence_samples: int = 0  # a sentence ending, then a capitalised word, a number or an entity
    num_bytes: int = 0
    selection: dict[str, Any] | None = None  # the manifest's record of `hf-ecg filter`, when the data was selected
    quality: dict[str, float] | None = None
    # The gold corpus the generator learned from (source_datasets); default: the generator card's dataset id,
    # else the corpus name.
    source_datasets: list[str] | None = None
    examples: list[str] = field(default_factory=list)  # the first samples, entities marked (markdown)
    versions: dict[str, str] = field(default_factory=_versions)

    @classmethod
    def from_generated(cls, data_dir: str | os.PathLike, **overrides: Any) -> ECGDatasetCardData:
        """Read the manifest and shards of ``data_dir`` (and the generator's config when reachable)."""
        from .config import ECGConfig
        from .evaluation.quality import MIN_TOKENS, has_repetition
        from .generate import generated_label_names, read_generated
        from .modeling import upstream_model_id
        from .words import DEFAULT_SENTENCE_ENDINGS, sentence_breaks

        data_dir = Path(data_dir)
        columns = ("tokens", "ner_tags", "entities", "forced_tags", "cut_blocks", "complete")
        manifest, table = read_generated(data_dir, columns)
        shards = sorted((data_dir / "data").glob("*.parquet"))
        entity_counts = {label: 0 for label in manifest["entity_types"]}
        for sequence in table.column("entities").to_pylist():
            for label in sequence:
                entity_counts[label] += 1
        try:
            generator_config = ECGConfig.from_pretrained(manifest["model"])
        except Exception:  # a model folder that moved, or a Hub repo while offline: the card says less
            generator_config = None
        statistics = (generator_config.corpus_statistics or {}) if generator_config else {}
        tokens = table.column("tokens").to_pylist()
        endings = set((generator_config.sentence_endings if generator_config else None) or DEFAULT_SENTENCE_ENDINGS)
        label_names = generated_label_names(manifest)
        begins = {i for i, name in enumerate(label_names) if name.startswith("B-")}
        generator_card = ECGModelCardData.load(manifest["model"]) if Path(str(manifest["model"])).is_dir() else None
        source = (generator_card.dataset_id if generator_card else None) or statistics.get("name")
        second_sentences = sum(
            bool(sentence_breaks(words, endings, {i for i, tag in enumerate(tags) if tag in begins}))
            for words, tags in zip(tokens, table.column("ner_tags").to_pylist(), strict=True)
        )
        values: dict[str, Any] = {
            "entity_types": list(manifest["entity_types"]),
            "num_samples": manifest["num_samples"],
            "label_names": label_names,
            "generator": manifest["model"],
            "method": _method(generator_config.layout if generator_config else None),
            "base_model": upstream_model_id(generator_config.base_model) if generator_config else None,
            "corpus_name": statistics.get("name"),
            "corpus_sentences": statistics.get("num_sentences"),
            "sampler": manifest.get("sampler"),
            "mentions": manifest.get("mentions"),
            "seed": manifest.get("seed", 0),
            "decoding": manifest.get("decoding", {}),
            "entity_counts": entity_counts,
            "num_tokens": sum(map(len, tokens)),
            "num_blocks": sum(entity_counts.values()) + table.num_rows,
            "forced_tags": sum(table.column("forced_tags").to_pylist()),
            "cut_blocks": sum(table.column("cut_blocks").to_pylist()) if "cut_blocks" in table.column_names else 0,
            "complete_samples": sum(table.column("complete").to_pylist()) if "complete" in table.column_names else None,
            "short_samples": sum(len(t) < MIN_TOKENS for t in tokens),
            "repetitive_samples": sum(map(has_repetition, tokens)),
            "second_sentence_samples": second_sentences,
            "num_bytes": sum(shard.stat().st_size for shard in shards),
            "selection": manifest.get("selection"),
            "source_datasets": [source] if source else None,
            "examples": _examples(tokens, table.column("ner_tags").to_pylist(), label_names),
        }
        return cls(**{**values, **overrides})

    @staticmethod
    def rule_description(rule: str) -> str:
        """What a selection rule of :mod:`hf_ecg.selection` drops, in a few words."""
        from .selection import RULE_DESCRIPTIONS

        return RULE_DESCRIPTIONS.get(rule, "")

    @property
    def generator_hub_id(self) -> str | None:
        return self.generator if _looks_like_hub_id(self.generator) else None

    @property
    def base_model_hub_id(self) -> str | None:
        return self.base_model if _looks_like_hub_id(self.base_model) else None

    @property
    def sampler_description(self) -> str:
        if self.sampler is None:
            return "given explicitly by the user, cycled over the sample ids"
        return _SAMPLERS.get(self.sampler, f"drawn by the `{self.sampler}` sampler")

    @property
    def real_mentions(self) -> bool:
        """Whether the mentions come from a real corpus (the generator's mention bank)."""
        return self.mentions in (None, "random", "weighted")

    @property
    def mentions_description(self) -> str:
        if self.mentions in (None, "random"):
            return "drawn uniformly from the generator's mention bank, the real mentions of its training corpus"
        if self.mentions == "weighted":
            return (
                "drawn from the generator's mention bank, the real mentions of its training corpus, "
                "in proportion to their frequency there"
            )
        if self.mentions.startswith("user mentions"):
            return f"supplied by the user as a dictionary (recorded only as a digest: `{self.mentions.split()[-1]}`)"
        return f"supplied by the user in the file `{Path(self.mentions).name}`"

    def card_data(self) -> DatasetCardData:
        """The YAML metadata: license, language, task, size, the data files and the features."""
        import datasets
        from datasets.info import DatasetInfosDict
        from datasets.utils.metadata import MetadataConfigs

        from .generate import dataset_features

        card_data = DatasetCardData(
            license=self.license,
            language=self.language,
            pretty_name=self.pretty_name,
            size_categories=[_size_category(self.num_samples)],
            task_categories=["token-classification"],
            task_ids=["named-entity-recognition"],
            annotations_creators=["machine-generated"],
            language_creators=["machine-generated"],
            source_datasets=self.source_datasets or ["original"],
            tags=["synthetic", "ner", "hf_ecg", self.method.lower()],
        )
        data_files = [{"split": "train", "path": "data/train-*.parquet"}]
        MetadataConfigs({"default": {"data_files": data_files}}).to_dataset_card_data(card_data)
        splits = datasets.SplitDict()
        splits.add(datasets.SplitInfo("train", num_bytes=self.num_bytes, num_examples=self.num_samples))
        info = datasets.DatasetInfo(features=dataset_features(self.entity_types, self.label_names), splits=splits)
        DatasetInfosDict({"default": info}).to_dataset_card_data(card_data)
        return card_data

    def to_dataset_card(self) -> DatasetCard:
        """Render the card from :data:`DATASET_CARD_TEMPLATE`."""
        from .generate import ner_label_names

        return DatasetCard.from_template(
            self.card_data(),
            template_path=str(DATASET_CARD_TEMPLATE),
            card=self,
            repo_id=self.repo_id or "path/to/this/dataset",
            labels=ner_label_names(self.entity_types, self.label_names),
            citation=CITATION,
        )
