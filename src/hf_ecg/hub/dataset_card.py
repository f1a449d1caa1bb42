"""The dataset card: :class:`ECGDatasetCardData`, filled from a folder that
:func:`hf_ecg.generate_dataset` wrote and rendered from ``templates/dataset_card.md``. This module
imports neither torch nor transformers (the dataset's readers are imported when a card is filled).
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from huggingface_hub import DatasetCard, DatasetCardData

from ..citation import CITATION
from ..data.groups import RULE_80
from ..data.selection_rules import RULE_DESCRIPTIONS
from .card_texts import (
    BASELINES,
    baseline_text,
    fairness_rows,
    mention_sources_text,
    mentions_text,
    sampler_text,
    sketches_text,
)
from .model_card import ECGModelCardData, library_versions, looks_like_hub_id, method_name

if TYPE_CHECKING:
    from ..data.manifest import MentionsRecord

__all__ = ["CARD_EXAMPLES", "DATASET_CARD_TEMPLATE", "DatasetCardFields", "ECGDatasetCardData", "write_dataset_card"]

DATASET_CARD_TEMPLATE = Path(__file__).parent / "templates" / "dataset_card.md"


#: Suffixes of corpus files: a corpus "named" train.tsv names no source dataset.
_CORPUS_FILE_SUFFIXES = (".tsv", ".txt", ".conll", ".iob", ".bio", ".jsonl", ".json", ".csv")

#: Samples the dataset card shows.
CARD_EXAMPLES = 3


def _examples(tokens: list[list[str]], tags: list[list[int]], names: list[str]) -> list[str]:
    """The first :data:`CARD_EXAMPLES` samples as markdown, each entity in bold with its type:
    ``**aspirin** *(Chemical)* cures **fever** *(Disease)* .``."""
    from ..runtime.tags import tags_to_spans

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


@dataclass(frozen=True)
class DatasetCardFields:
    """What a user says of a dataset for its card, beyond what its folder tells (``None``: not said; the card
    then says what it knows): its ``license``, ``language`` codes, the ``source_datasets`` it came from, its
    ``pretty_name``."""

    license: str | None = None
    language: list[str] | None = None
    source_datasets: list[str] | None = None
    pretty_name: str | None = None

    def given(self) -> dict[str, Any]:
        """The fields said, as :class:`ECGDatasetCardData` keywords."""
        return {key: value for key, value in vars(self).items() if value is not None}


@dataclass
class ECGDatasetCardData:
    """Everything a synthetic dataset's card says; :meth:`from_generated` fills it from a folder that
    :func:`hf_ecg.generate_dataset` wrote."""

    entity_types: list[str]
    num_samples: int
    label_names: list[str] | None = None  # the ner_tags ClassLabel names, in order; None: generate.bio_labels
    repo_id: str | None = None
    pretty_name: str | None = None
    license: str | None = None  # None: not stated; the card says the training corpus's license applies
    language: list[str] | None = field(default_factory=lambda: ["en"])
    generator: str = ""  # the model that wrote the data: a Hub id or a local path
    generator_fingerprint: str | None = None  # modeling.model_fingerprint of it (None: before it was recorded)
    method: str = "ECG-QALM"  # "ECG-LM" when the generator was trained with layout="lm" (the paper's ablation)
    base_model: str | None = None
    corpus_name: str | None = None
    corpus_sentences: int | None = None
    sampler: str | None = None  # None: explicit entity sequences
    # The manifest's mentions record (manifest.MentionsRecord.to_dict()); a strategy name, a file path or None
    # (random) are read as before the record existed.
    mentions: dict[str, Any] | str | None = None
    seed: int = 0
    decoding: dict[str, Any] = field(default_factory=dict)
    dtype: str | None = None  # the generator's dtype (None: written before it was recorded, float32)
    generation_cost: dict[str, Any] | None = None  # the manifest's record (generate.generation_cost)
    mention_novelty: dict[str, Any] | None = None  # the manifest's record (generate.mention_novelty)
    mention_writing: dict[str, Any] | None = None  # the manifest's record (mention_writer.WrittenMentions.to_dict)
    mention_sources: dict[str, int] | None = None  # the manifest's record (generate.mention_origins): per origin
    entity_counts: dict[str, int] = field(default_factory=dict)
    num_tokens: int = 0
    num_blocks: int = 0
    forced_tags: int | None = 0  # None: no decoder wrote the samples (a baseline's)
    cut_blocks: int = 0
    complete_samples: int | None = None  # None: written before hf_ecg flagged complete sentences
    tag_piece_samples: int | None = None  # samples whose O text spells a tag's name; None: not flagged
    short_samples: int = 0
    repetitive_samples: int = 0
    second_sentence_samples: int = 0  # a sentence ending, then a capitalised word, a number or an entity
    num_bytes: int = 0
    selection: dict[str, Any] | None = None  # the manifest's record of `hf-ecg filter`, when the data was selected
    # the manifest's record of the silver split (data.silver), when it has one, with its label_weights' counts
    silver: dict[str, Any] | None = None
    balance: dict[str, Any] | None = None  # the balance asked and reached (synthetic.balance), per group
    baseline: dict[str, Any] | None = None  # a baseline folder's settings (their "method" names it); None: generated
    # a sketch set's settings (its sketches' source, kept share, mention source) and its samples against their sources
    sketches: dict[str, Any] | None = None
    source_overlap: dict[str, Any] | None = None
    quality: dict[str, float] | None = None
    # The gold corpus the generator learned from (source_datasets); default: the generator card's dataset id,
    # else the corpus name.
    source_datasets: list[str] | None = None
    examples: list[str] = field(default_factory=list)  # the first samples, entities marked (markdown)
    columns: list[str] | None = None  # the columns the shards hold (a folder begun by an older hf_ecg lacks some)
    versions: dict[str, str] = field(default_factory=library_versions)

    @classmethod
    def from_generated(cls, data_dir: str | os.PathLike, **overrides: Any) -> ECGDatasetCardData:
        """Read the manifest and shards of ``data_dir`` (and the generator's config when reachable)."""
        import pyarrow.parquet as pq

        from ..data.dataset_format import read_generated
        from ..evaluation.quality import MIN_TOKENS, has_repetition
        from ..modeling import upstream_model_id
        from ..runtime.words import DEFAULT_SENTENCE_ENDINGS, sentence_breaks

        data_dir = Path(data_dir)
        columns = ("tokens", "ner_tags", "entities", "forced_tags", "cut_blocks", "complete", "tag_pieces")
        manifest, table = read_generated(data_dir, columns)
        shards = sorted((data_dir / "data").glob("*.parquet"))
        entity_counts = dict.fromkeys(manifest.entity_types, 0)
        entity_counts.update(Counter(label for labels in table.column("entities").to_pylist() for label in labels))
        generator_config = _generator_config(manifest.model)
        statistics = (generator_config.corpus_statistics or {}) if generator_config else {}
        tokens = table.column("tokens").to_pylist()
        endings = set((generator_config.sentence_endings if generator_config else None) or DEFAULT_SENTENCE_ENDINGS)
        label_names = manifest.label_names
        begins = {i for i, name in enumerate(label_names) if name.startswith("B-")}
        generator_card = ECGModelCardData.load(manifest.model) if Path(str(manifest.model)).is_dir() else None
        # A corpus name that is a file's name (train.tsv) says nothing of where the data came from.
        name = statistics.get("name")
        source = (generator_card.dataset_id if generator_card else None) or (
            name if name and Path(name).suffix.lower() not in _CORPUS_FILE_SUFFIXES else None
        )
        second_sentences = sum(
            bool(sentence_breaks(words, endings, {i for i, tag in enumerate(tags) if tag in begins}))
            for words, tags in zip(tokens, table.column("ner_tags").to_pylist(), strict=True)
        )
        baseline = _baseline_settings(manifest)
        values: dict[str, Any] = {
            "entity_types": list(manifest.entity_types),
            "num_samples": manifest.num_samples,
            "label_names": label_names,
            "generator": manifest.model or "",
            "generator_fingerprint": manifest.model_fingerprint,
            "method": BASELINES.get(manifest.method, (manifest.method,))[0]
            if baseline is not None
            else method_name(generator_config.layout if generator_config else None),
            "base_model": upstream_model_id(generator_config.base_model) if generator_config else None,
            "corpus_name": statistics.get("name"),
            "corpus_sentences": statistics.get("num_sentences"),
            "sampler": manifest.sampler,
            "sketches": manifest.settings if manifest.model and manifest.settings else None,
            "source_overlap": manifest.source_overlap,
            "mentions": manifest.mentions.to_dict() if manifest.mentions else None,
            "seed": manifest.seed or 0,
            "decoding": manifest.decoding or {},
            "dtype": manifest.dtype,
            "generation_cost": manifest.generation_cost,
            "mention_novelty": manifest.mention_novelty,
            "mention_writing": manifest.mention_writing,
            "mention_sources": manifest.mention_sources,
            "entity_counts": entity_counts,
            "num_tokens": sum(map(len, tokens)),
            "num_blocks": sum(entity_counts.values()) + table.num_rows,
            "forced_tags": _column_sum(table, "forced_tags"),
            "cut_blocks": _column_sum(table, "cut_blocks") or 0,
            "complete_samples": sum(table.column("complete").to_pylist()) if "complete" in table.column_names else None,
            "tag_piece_samples": sum(n > 0 for n in table.column("tag_pieces").to_pylist())
            if "tag_pieces" in table.column_names
            else None,
            "short_samples": sum(len(t) < MIN_TOKENS for t in tokens),
            "repetitive_samples": sum(map(has_repetition, tokens)),
            "second_sentence_samples": second_sentences,
            "num_bytes": sum(shard.stat().st_size for shard in shards),
            "selection": manifest.selection,
            "silver": _with_weights(data_dir, manifest.silver),
            "balance": {**manifest.balance, **(manifest.balance_reached or {})} if manifest.balance else None,
            "baseline": baseline,
            "source_datasets": [source] if source else None,
            "examples": _examples(tokens, table.column("ner_tags").to_pylist(), label_names),
            "columns": pq.read_schema(shards[0]).names if shards else None,
        }
        return cls(**{**values, **overrides})

    @staticmethod
    def rule_description(rule: str) -> str:
        """What a selection rule of :mod:`hf_ecg.selection` drops, in a few words."""
        return RULE_DESCRIPTIONS.get(rule, "")

    @property
    def generator_hub_id(self) -> str | None:
        return self.generator if looks_like_hub_id(self.generator) else None

    @property
    def base_model_hub_id(self) -> str | None:
        return self.base_model if looks_like_hub_id(self.base_model) else None

    @property
    def mentions_record(self) -> MentionsRecord | None:
        from ..data.manifest import MentionsRecord

        if isinstance(self.mentions, Mapping):
            return MentionsRecord(**self.mentions)
        return MentionsRecord.from_version_1(self.mentions, None)  # card data written before the record

    @property
    def real_mentions(self) -> bool:
        """Whether the mentions come from a real corpus (a mention bank)."""
        record = self.mentions_record
        return record is None or record.real

    @property
    def baseline_description(self) -> str:
        """How a baseline folder's rows were made (empty for generated data)."""
        return baseline_text(self.baseline)

    @property
    def fairness_rows(self) -> list[dict[str, Any]]:
        """Per group of the balanced type: its mentions in gold and in the set (counts and shares), and the disparate
        impact of each as the last row (``group`` ``disparate impact``)."""
        return fairness_rows(self.balance) if self.balance else []

    rule_80 = RULE_80

    @property
    def rule_80_holds(self) -> dict[str, bool | None]:
        """Whether the 80% rule holds for gold and for the set (``None``: no mention of a known group)."""
        impact = self.fairness_rows[-1] if self.balance else {}
        return {side: None if impact.get(side) is None else impact[side] >= RULE_80 for side in ("gold", "set")}

    @property
    def sampler_description(self) -> str:
        """How the entity sequences were drawn (a sketch set: whose sketches were written around)."""
        return sketches_text(self.sketches, self.source_overlap) if self.sketches else sampler_text(self.sampler)

    @property
    def mentions_description(self) -> str:
        """Where the mentions came from, and how they were drawn or written."""
        if self.sketches and self.sketches.get("mentions") == "sketch":
            return "each tag holds the mention its sketch's source sentence has there, so its type is the source's"
        return mentions_text(self.mentions_record, self.mention_writing)

    @property
    def mention_sources_description(self) -> str:
        """``1,234 written by the generator (83%), 250 from the bank (17%)``: where the mentions came from."""
        return mention_sources_text(self.mention_sources)

    def card_data(self) -> DatasetCardData:
        """The YAML metadata: license, language, task, size, the data files and the features."""
        import datasets
        from datasets.info import DatasetInfosDict
        from datasets.utils.metadata import MetadataConfigs

        from ..data.dataset_format import FAMILY_COLUMNS, STEP_COLUMNS, TRANSFER_COLUMNS, dataset_features

        card_data = DatasetCardData(
            license=self.license,
            language=self.language,
            pretty_name=self.pretty_name,
            size_categories=[_size_category(self.num_samples)],
            task_categories=["token-classification"],
            task_ids=["named-entity-recognition"],
            annotations_creators=["machine-generated"],
            language_creators=["machine-generated"],
            source_datasets=self.source_datasets,
            tags=["synthetic", "ner", "hf_ecg", self.method.lower().replace(" ", "-")],
        )
        data_files = [{"split": "train", "path": "data/train-*.parquet"}]
        if self.silver:
            data_files.append({"split": "silver", "path": "silver/silver-*.parquet"})
        MetadataConfigs({"default": {"data_files": data_files}}).to_dataset_card_data(card_data)
        splits = datasets.SplitDict()
        splits.add(datasets.SplitInfo("train", num_bytes=self.num_bytes, num_examples=self.num_samples))
        if self.silver:
            splits.add(datasets.SplitInfo("silver", num_examples=self.silver["sentences"]))
        features = dataset_features(self.entity_types, self.label_names)
        if self.columns is not None:
            features = datasets.Features({name: kind for name, kind in features.items() if name in self.columns})
            own = {**STEP_COLUMNS, **FAMILY_COLUMNS, **TRANSFER_COLUMNS}
            for name in self.columns:  # a step's or family's own column: the card must declare it
                if name in own:
                    features[name] = datasets.Value(own[name])
        if self.silver or "label_weights" in (self.columns or ()):
            # the silver split's column (declared so that one schema reads both splits), or the unknown rule's
            features["label_weights"] = datasets.Sequence(datasets.Value("float32"))
        info = datasets.DatasetInfo(features=features, splits=splits)
        DatasetInfosDict({"default": info}).to_dataset_card_data(card_data)
        return card_data

    def to_dataset_card(self) -> DatasetCard:
        """Render the card from :data:`DATASET_CARD_TEMPLATE`."""
        from ..data.dataset_format import ner_label_names

        return DatasetCard.from_template(
            self.card_data(),
            template_path=str(DATASET_CARD_TEMPLATE),
            card=self,
            repo_id=self.repo_id or "path/to/this/dataset",
            labels=ner_label_names(self.entity_types, self.label_names),
            citation=CITATION,
        )


def _baseline_settings(manifest: Any) -> dict[str, Any] | None:
    """A baseline's settings, its method named: a family without a model; a family with one (sketches) is described by
    its generator (``None``)."""
    return dict(manifest.settings or {}, method=manifest.method) if manifest.method and not manifest.model else None


def _generator_config(model: str | None) -> Any:
    """The generator's :class:`~hf_ecg.runtime.ecg_config.ECGConfig`, or ``None``: a family without a model (mention
    replacement), a model folder that moved, or a Hub repo while offline (the card says less)."""
    from ..runtime.ecg_config import ECGConfig

    if not model:
        return None
    try:
        return ECGConfig.from_pretrained(model)
    except Exception:
        return None


def write_dataset_card(data_dir: str | os.PathLike, fields: DatasetCardFields | None = None) -> Path:
    """Write the dataset card of a finished folder as its ``README.md`` (YAML header included, so that
    ``load_dataset``, the Hub viewer and a colleague opening the folder see what it is); ``fields`` are what the
    user said of it (:class:`DatasetCardFields`)."""
    path = Path(data_dir) / "README.md"
    ECGDatasetCardData.from_generated(data_dir, **(fields or DatasetCardFields()).given()).to_dataset_card().save(path)
    return path


def _with_weights(data_dir: Path, silver: dict[str, Any] | None) -> dict[str, Any] | None:
    """The silver split's record with the counts of its ``label_weights`` (``weights``), for the card."""
    from ..data.silver import silver_weight_counts

    return {**silver, "weights": silver_weight_counts(data_dir)} if silver else None


def _column_sum(table: Any, column: str) -> int | None:
    """The sum of a column of counts, ``None`` where the shards lack it (no decoder wrote the samples)."""
    return sum(table.column(column).to_pylist()) if column in table.column_names else None
