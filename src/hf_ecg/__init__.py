"""hf_ecg: entity-controlled synthetic NER data (ECG-QALM) for the Hugging Face ecosystem.

What users call, one name each: read a corpus (:func:`load_corpus`) and build its Q&A blocks
(:class:`ECGBlocksBuilder`); train a generator (:func:`train_ecg_model`, or :class:`ECGTrainer` with
:class:`ECGTrainingArguments`); write samples with the ``entity-controlled-generation`` pipeline
(:class:`EntityControlledGenerationPipeline`) or a whole dataset (:func:`generate_dataset`), filled from the
generator's own mentions, the training bank, your lists or a mixture (:class:`MentionBank`, :class:`MentionLists`,
:class:`MentionMixture`) or a name :class:`Dictionary`, one type's names dealt to groups as a :class:`Balance`
says; select and repair (:func:`filter_generated`); score a tagger trained on it (:func:`evaluate_ner`, trained as
:class:`NERConfig` says); push to the Hub with cards (:func:`push_dataset`, :func:`push_model`)::

    import hf_ecg
    from transformers import pipeline

    corpus = hf_ecg.load_corpus("train.tsv")
    gen = pipeline("entity-controlled-generation", model="path/to/model")
    gen([["Chemical", "Disease"]], num_return_sequences=3)

The block format, tags, samplers and decoders are in their modules (``hf_ecg.runtime.blocks``,
``hf_ecg.runtime.tags``, ``hf_ecg.synthetic.entity_sequences``, ``hf_ecg.runtime.decoding``, ...). Their former
top-level names still work for one version, with a ``FutureWarning`` naming the module.
"""

import importlib
import warnings
from importlib.metadata import PackageNotFoundError, version
from typing import TYPE_CHECKING

try:
    __version__ = version("hf-ecg")
except PackageNotFoundError:  # running from a source tree that is not installed
    __version__ = "0.0.0"

from ._registration import register_on_transformers_import
from .data.builder import ECGBlocksBuilder, ECGBlocksConfig
from .data.corpus import Corpus, Sentence, load_corpus
from .runtime.ecg_config import ECGConfig
from .runtime.mentions import MentionBank

# Model-side symbols import transformers/torch: load them on first use (the TYPE_CHECKING block below
# names them for IDEs and type checkers, as TRL's _LazyModule does).
_LAZY = {
    "DecodingConfig": "runtime.decoding",
    "Dictionary": "labelling.dictionary",
    "Balance": "data.groups",
    "NERConfig": "taggers.tagger",
    "EntityControlledGenerationPipeline": "runtime.pipeline",
    "MentionLists": "runtime.mention_sources",
    "MentionMixture": "runtime.mention_sources",
    "generate_dataset": "synthetic.generate",
    "align_labels": "data.dataset_format",
    "SelectionConfig": "selection",
    "filter_generated": "selection",
    "evaluate_ner": "evaluation.ner",
    "push_dataset": "hub.push",
    "push_model": "hub.push",
    "ECGDatasetCardData": "hub.dataset_card",
    "ECGModelCardData": "hub.model_card",
    "ECGTrainer": "training.trainer",
    "ECGTrainingArguments": "training.training_args",
    "train_ecg_model": "training.train",
}

#: Former top-level names, each with the module that holds it: they work for one more version, with a warning.
_MOVED = {
    **dict.fromkeys(
        [
            "ANSWER_TOKEN",
            "CONTEXT_TOKEN",
            "ENDTEXT",
            "QUESTION_TOKEN",
            "SEGMENT_TOKENS",
            "QASample",
            "RoundTripError",
            "Template",
            "decompose",
            "qa_samples",
            "recompose",
            "tag_label",
            "tag_token",
            "template_from_qa",
            "verify_roundtrip",
        ],
        "runtime.blocks",
    ),
    **dict.fromkeys(["Span", "TagError", "detect_scheme", "spans_to_tags", "tags_to_spans"], "runtime.tags"),
    **dict.fromkeys(["CorpusFormatError", "from_hf_dataset", "read_conll", "read_jsonl"], "data.corpus"),
    **dict.fromkeys(
        [
            "FixedSampler",
            "GoldSampler",
            "TargetDistributionSampler",
            "UnderRepresentedSampler",
            "UniformSampler",
            "make_sampler",
        ],
        "synthetic.entity_sequences",
    ),
    **dict.fromkeys(["ChainedDecoder", "DecodedTemplate", "EntityConstraintLogitsProcessor"], "runtime.decoding"),
    **dict.fromkeys(["ModelNotFoundError", "add_ecg_tokens", "apply_lora", "load_causal_lm"], "modeling"),
    "CITATION": "citation",
    "CorpusStatistics": "data.statistics",
    "MentionFiller": "runtime.filling",
    "export_generated": "data.export",
    "select_samples": "selection",
}

if TYPE_CHECKING:
    from .data.dataset_format import align_labels
    from .data.groups import Balance
    from .evaluation.ner import evaluate_ner
    from .hub.dataset_card import ECGDatasetCardData
    from .hub.model_card import ECGModelCardData
    from .hub.push import push_dataset, push_model
    from .labelling.dictionary import Dictionary
    from .runtime.decoding import DecodingConfig
    from .runtime.mention_sources import MentionLists, MentionMixture
    from .runtime.pipeline import EntityControlledGenerationPipeline
    from .selection import SelectionConfig, filter_generated
    from .synthetic.generate import generate_dataset
    from .taggers.tagger import NERConfig
    from .training.train import train_ecg_model
    from .training.trainer import ECGTrainer
    from .training.training_args import ECGTrainingArguments


# The pipeline task is registered as soon as transformers.pipelines is imported (see _registration).
register_on_transformers_import()


def __getattr__(name: str):
    if name in _LAZY:
        return getattr(importlib.import_module(f".{_LAZY[name]}", __name__), name)
    if name in _MOVED:
        warnings.warn(
            f"hf_ecg.{name} is deprecated and leaves the top level in the next version: "
            f"import it from hf_ecg.{_MOVED[name]}",
            FutureWarning,
            stacklevel=2,
        )
        return getattr(importlib.import_module(f".{_MOVED[name]}", __name__), name)
    raise AttributeError(f"module 'hf_ecg' has no attribute {name!r}")


__all__ = [
    "Balance",
    "Corpus",
    "DecodingConfig",
    "Dictionary",
    "ECGBlocksBuilder",
    "ECGBlocksConfig",
    "ECGConfig",
    "ECGDatasetCardData",
    "ECGModelCardData",
    "ECGTrainer",
    "ECGTrainingArguments",
    "EntityControlledGenerationPipeline",
    "MentionBank",
    "MentionLists",
    "MentionMixture",
    "NERConfig",
    "SelectionConfig",
    "Sentence",
    "__version__",
    "align_labels",
    "evaluate_ner",
    "filter_generated",
    "generate_dataset",
    "load_corpus",
    "push_dataset",
    "push_model",
    "train_ecg_model",
]
