"""hf_ecg: entity-controlled synthetic NER data (ECG-QALM) for the Hugging Face ecosystem.

The data layer: read a labelled corpus, turn it into templates, blocks and Q&A samples
(and back), count its mentions and entity sequences, and sample new entity sequences::

    import hf_ecg
    corpus = hf_ecg.load_corpus("train.tsv")
    template, mentions = hf_ecg.decompose(corpus[0].tokens, corpus[0].spans)
    hf_ecg.qa_samples(template)
"""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("hf-ecg")
except PackageNotFoundError:  # running from a source tree that is not installed
    __version__ = "0.0.0"

from ._registration import register_on_transformers_import
from .blocks import (
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
from .builder import ECGBlocksBuilder, ECGBlocksConfig
from .citation import CITATION
from .config import ECGConfig
from .corpus import Corpus, CorpusFormatError, Sentence, from_hf_dataset, load_corpus, read_conll, read_jsonl
from .mentions import MentionBank
from .sampling import (
    FixedSampler,
    GoldSampler,
    TargetDistributionSampler,
    UnderRepresentedSampler,
    UniformSampler,
    make_sampler,
)
from .stats import CorpusStatistics
from .tags import Span, TagError, detect_scheme, spans_to_tags, tags_to_spans

# Model-side symbols import transformers/torch: load them on first use.
_LAZY = {
    "ChainedDecoder": "decoding",
    "DecodedTemplate": "decoding",
    "DecodingConfig": "decoding",
    "EntityConstraintLogitsProcessor": "decoding",
    "EntityControlledGenerationPipeline": "pipeline",
    "MentionFiller": "filling",
    "generate_dataset": "generate",
    "align_labels": "dataset_format",
    "export_generated": "export",
    "SelectionConfig": "selection",
    "filter_generated": "selection",
    "select_samples": "selection",
    "push_dataset": "hub",
    "push_model": "hub",
    "ECGDatasetCardData": "dataset_card",
    "ECGModelCardData": "model_card",
    "ECGTrainer": "trainer",
    "ECGTrainingArguments": "training_args",
    "train_ecg_model": "trainer",
    "load_causal_lm": "modeling",
    "add_ecg_tokens": "modeling",
    "apply_lora": "modeling",
    "ModelNotFoundError": "modeling",
}


# The pipeline task is registered as soon as transformers.pipelines is imported (see _registration).
register_on_transformers_import()


def __getattr__(name: str):
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(f".{_LAZY[name]}", __name__), name)
    raise AttributeError(f"module 'hf_ecg' has no attribute {name!r}")


__all__ = [
    *_LAZY,
    "ANSWER_TOKEN",
    "CITATION",
    "CONTEXT_TOKEN",
    "ENDTEXT",
    "QUESTION_TOKEN",
    "SEGMENT_TOKENS",
    "Corpus",
    "CorpusFormatError",
    "CorpusStatistics",
    "ECGBlocksBuilder",
    "ECGBlocksConfig",
    "ECGConfig",
    "FixedSampler",
    "GoldSampler",
    "MentionBank",
    "QASample",
    "RoundTripError",
    "Sentence",
    "Span",
    "TagError",
    "TargetDistributionSampler",
    "Template",
    "UnderRepresentedSampler",
    "UniformSampler",
    "__version__",
    "decompose",
    "detect_scheme",
    "from_hf_dataset",
    "load_corpus",
    "make_sampler",
    "qa_samples",
    "read_conll",
    "read_jsonl",
    "recompose",
    "spans_to_tags",
    "tag_label",
    "tag_token",
    "tags_to_spans",
    "template_from_qa",
    "verify_roundtrip",
]
