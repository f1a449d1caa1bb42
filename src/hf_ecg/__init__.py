"""hf_ecg: entity-controlled synthetic NER data (ECG-QALM) for the Hugging Face ecosystem.

The data layer: read a labelled corpus, turn it into templates, blocks and Q&A samples
(and back), count its mentions and entity sequences, and sample new entity sequences::

    import hf_ecg
    corpus = hf_ecg.load_corpus("train.tsv")
    template, mentions = hf_ecg.decompose(corpus[0].tokens, corpus[0].spans)
    hf_ecg.qa_samples(template)
"""

from importlib.metadata import PackageNotFoundError, version
from typing import TYPE_CHECKING

try:
    __version__ = version("hf-ecg")
except PackageNotFoundError:  # running from a source tree that is not installed
    __version__ = "0.0.0"

from ._registration import register_on_transformers_import
from .citation import CITATION
from .data.builder import ECGBlocksBuilder, ECGBlocksConfig
from .data.corpus import Corpus, CorpusFormatError, Sentence, from_hf_dataset, load_corpus, read_conll, read_jsonl
from .data.statistics import CorpusStatistics
from .runtime.blocks import (
    ANSWER_TOKEN,
    CONTEXT_TOKEN,
    ENDTEXT,
    QUESTION_TOKEN,
    SEGMENT_TOKENS,
    QASample,
    RoundTripError,
    Template,
    decompose,
    qa_samples,
    recompose,
    tag_label,
    tag_token,
    template_from_qa,
    verify_roundtrip,
)
from .runtime.ecg_config import ECGConfig
from .runtime.mentions import MentionBank
from .runtime.tags import Span, TagError, detect_scheme, spans_to_tags, tags_to_spans
from .synthetic.entity_sequences import (
    FixedSampler,
    GoldSampler,
    TargetDistributionSampler,
    UnderRepresentedSampler,
    UniformSampler,
    make_sampler,
)

# Model-side symbols import transformers/torch: load them on first use (the TYPE_CHECKING block below
# names them for IDEs and type checkers, as TRL's _LazyModule does).
_LAZY = {
    "ChainedDecoder": "runtime.decoding",
    "DecodedTemplate": "runtime.decoding",
    "DecodingConfig": "runtime.decoding",
    "EntityConstraintLogitsProcessor": "runtime.decoding",
    "EntityControlledGenerationPipeline": "runtime.pipeline",
    "MentionFiller": "runtime.filling",
    "MentionLists": "runtime.mention_sources",
    "MentionMixture": "runtime.mention_sources",
    "generate_dataset": "synthetic.generate",
    "align_labels": "data.dataset_format",
    "export_generated": "data.export",
    "SelectionConfig": "synthetic.selection",
    "filter_generated": "synthetic.selection",
    "select_samples": "synthetic.selection",
    "push_dataset": "hub.push",
    "push_model": "hub.push",
    "ECGDatasetCardData": "hub.dataset_card",
    "ECGModelCardData": "hub.model_card",
    "ECGTrainer": "training.trainer",
    "ECGTrainingArguments": "training.training_args",
    "train_ecg_model": "training.train",
    "load_causal_lm": "modeling",
    "add_ecg_tokens": "modeling",
    "apply_lora": "modeling",
    "ModelNotFoundError": "modeling",
}

if TYPE_CHECKING:
    from .data.dataset_format import align_labels
    from .data.export import export_generated
    from .hub.dataset_card import ECGDatasetCardData
    from .hub.model_card import ECGModelCardData
    from .hub.push import push_dataset, push_model
    from .modeling import ModelNotFoundError, add_ecg_tokens, apply_lora, load_causal_lm
    from .runtime.decoding import ChainedDecoder, DecodedTemplate, DecodingConfig, EntityConstraintLogitsProcessor
    from .runtime.filling import MentionFiller
    from .runtime.mention_sources import MentionLists, MentionMixture
    from .runtime.pipeline import EntityControlledGenerationPipeline
    from .synthetic.generate import generate_dataset
    from .synthetic.selection import SelectionConfig, filter_generated, select_samples
    from .training.train import train_ecg_model
    from .training.trainer import ECGTrainer
    from .training.training_args import ECGTrainingArguments


# The pipeline task is registered as soon as transformers.pipelines is imported (see _registration).
register_on_transformers_import()


def __getattr__(name: str):
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(f".{_LAZY[name]}", __name__), name)
    raise AttributeError(f"module 'hf_ecg' has no attribute {name!r}")


__all__ = [
    "ANSWER_TOKEN",
    "CITATION",
    "CONTEXT_TOKEN",
    "ENDTEXT",
    "QUESTION_TOKEN",
    "SEGMENT_TOKENS",
    "ChainedDecoder",
    "Corpus",
    "CorpusFormatError",
    "CorpusStatistics",
    "DecodedTemplate",
    "DecodingConfig",
    "ECGBlocksBuilder",
    "ECGBlocksConfig",
    "ECGConfig",
    "ECGDatasetCardData",
    "ECGModelCardData",
    "ECGTrainer",
    "ECGTrainingArguments",
    "EntityConstraintLogitsProcessor",
    "EntityControlledGenerationPipeline",
    "FixedSampler",
    "GoldSampler",
    "MentionBank",
    "MentionFiller",
    "MentionLists",
    "MentionMixture",
    "ModelNotFoundError",
    "QASample",
    "RoundTripError",
    "SelectionConfig",
    "Sentence",
    "Span",
    "TagError",
    "TargetDistributionSampler",
    "Template",
    "UnderRepresentedSampler",
    "UniformSampler",
    "__version__",
    "add_ecg_tokens",
    "align_labels",
    "apply_lora",
    "decompose",
    "detect_scheme",
    "export_generated",
    "filter_generated",
    "from_hf_dataset",
    "generate_dataset",
    "load_causal_lm",
    "load_corpus",
    "make_sampler",
    "push_dataset",
    "push_model",
    "qa_samples",
    "read_conll",
    "read_jsonl",
    "recompose",
    "select_samples",
    "spans_to_tags",
    "tag_label",
    "tag_token",
    "tags_to_spans",
    "template_from_qa",
    "train_ecg_model",
    "verify_roundtrip",
]
