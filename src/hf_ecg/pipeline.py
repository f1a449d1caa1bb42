"""The ``entity-controlled-generation`` pipeline: entity sequences in, labelled sentences out.

::

    import hf_ecg  # registers the task
    from transformers import pipeline

    gen = pipeline("entity-controlled-generation", model="path/to/model")
    gen(["Chemical", "Disease"], num_return_sequences=3)          # one sequence -> list of samples
    gen([["Chemical"], {"entities": ["Disease"]}], seed=0)        # several -> a list per input

Each sample is a dict with ``tokens``, ``ner_tags`` (IOB2 strings), ``text``, ``template``,
``entities`` (exactly the request), and how it ended: ``complete`` (ends like the training
sentences end), ``forced_tags`` and ``cut_blocks`` (blocks that ended anywhere but at the model's
own choice of the requested tag). ``save_pretrained`` writes this code and a
``custom_pipelines`` entry, so ``pipeline(model=folder, trust_remote_code=True)`` works without hf_ecg.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from dataclasses import fields
from typing import Any

from transformers import AutoModelForCausalLM, Pipeline

from .config import ECG_CONFIG_NAME, ECGConfig
from .decoding import DecodingConfig, make_decoder
from .filling import MentionFiller

__all__ = ["TASK", "EntityControlledGenerationPipeline", "register_pipeline"]

TASK = "entity-controlled-generation"
_DECODING_OPTIONS = {f.name for f in fields(DecodingConfig)} - {"seed"}


def _normalize(inputs: Any) -> tuple[list[tuple[str, ...]], bool]:
    """Entity sequences from the accepted input forms; ``True`` if a single sequence was given."""

    def one(item: Any) -> tuple[str, ...]:
        if isinstance(item, Mapping):
            if "entities" not in item:
                raise ValueError(f"an input dict needs the key 'entities', got keys {sorted(item)}")
            item = item["entities"]
        if isinstance(item, str) or not isinstance(item, Sequence) or not all(isinstance(t, str) for t in item):
            raise TypeError(f"an entity sequence is a list of entity types (strings), got {item!r}")
        return tuple(item)

    if isinstance(inputs, Mapping):
        return [one(inputs)], True
    if isinstance(inputs, str):
        raise TypeError(f"give a list of entity types, e.g. [{inputs!r}], not a bare string")
    if isinstance(inputs, Sequence) and all(isinstance(t, str) for t in inputs):
        return [tuple(inputs)], True  # includes [] : one entity-free sentence
    if isinstance(inputs, Sequence):
        return [one(item) for item in inputs], False
    raise TypeError(f"unsupported input {type(inputs).__name__}: give entity sequences (lists of types)")


class EntityControlledGenerationPipeline(Pipeline):
    """Write new labelled sentences whose entities are exactly the requested types, in order.

    Call options (also accepted when the pipeline is built): ``num_return_sequences`` (samples per
    input, default 1), ``seed``, ``mentions`` (``"random"`` (default), ``"weighted"``, a ``{type:
    [mentions]}`` dict or a JSON path), and the :class:`~hf_ecg.decoding.DecodingConfig` fields
    (``temperature``, ``top_k``, ``top_p``, ``do_sample``, ``block_end``, ``max_block_tokens``,
    ``max_entities``, ``mode``, ``max_attempts``, ``redraw_unended``, ``redraw_repetition``,
    ``redraw_run_on``, ``end_at_sentence_end``); ``batch_size`` sets the decoder's batch.
    """

    _load_tokenizer = True
    _load_processor = False
    _load_image_processor = False
    _load_feature_extractor = False

    def __init__(self, *args: Any, ecg_config: ECGConfig | None = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.ecg_config = ecg_config or self._load_ecg_config()

    def _load_ecg_config(self) -> ECGConfig:
        source = getattr(self.model, "name_or_path", "") or ""
        if not source:
            raise ValueError(f"the model has no name_or_path to find {ECG_CONFIG_NAME} by: pass ecg_config=...")
        return ECGConfig.from_pretrained(source)

    def _sanitize_parameters(
        self, num_return_sequences: int | None = None, seed: int | None = None, mentions: Any = None, **kwargs: Any
    ) -> tuple[dict[str, Any], dict[str, Any], dict[str, Any]]:
        unknown = sorted(set(kwargs) - _DECODING_OPTIONS)
        if unknown:
            raise TypeError(f"unknown option(s) {unknown}; known: {sorted(_DECODING_OPTIONS | {'mentions', 'seed'})}")
        preprocess: dict[str, Any] = {}
        if num_return_sequences is not None:
            if num_return_sequences < 1:
                raise ValueError(f"num_return_sequences must be >= 1, got {num_return_sequences}")
            preprocess["num_return_sequences"] = num_return_sequences
        forward = dict(kwargs)
        postprocess: dict[str, Any] = {}
        if seed is not None:
            forward["seed"] = postprocess["seed"] = seed
        if mentions is not None:
            postprocess["mentions"] = mentions
        return preprocess, forward, postprocess

    def __call__(self, inputs: Any, **kwargs: Any) -> list[Any]:
        """Generate for one entity sequence (returns a list of samples) or several (a list of lists)."""
        sequences, single = _normalize(inputs)
        if "batch_size" not in kwargs and self._batch_size is not None:
            kwargs["batch_size"] = self._batch_size
        preprocess, forward, postprocess = self._sanitize_parameters(**kwargs)
        model_inputs = self.preprocess(sequences, **{**self._preprocess_params, **preprocess})
        outputs = self.forward(model_inputs, **{**self._forward_params, **forward})
        results = self.postprocess(outputs, **{**self._postprocess_params, **postprocess})
        return results[0] if single else results

    def preprocess(self, sequences: list[tuple[str, ...]], num_return_sequences: int = 1) -> dict[str, Any]:
        for sequence in sequences:
            self.ecg_config.check_entity_types(sequence)
        expanded = [sequence for sequence in sequences for _ in range(num_return_sequences)]
        return {"sequences": expanded, "num_return_sequences": num_return_sequences}

    def _forward(self, model_inputs: dict[str, Any], seed: int | None = None, **options: Any) -> dict[str, Any]:
        decoder = make_decoder(self.model, self.tokenizer, self.ecg_config, DecodingConfig(seed=seed, **options))
        return {**model_inputs, "decoded": decoder.decode(model_inputs["sequences"])}

    def postprocess(
        self, model_outputs: dict[str, Any], mentions: Any = None, seed: int | None = None
    ) -> list[list[dict[str, Any]]]:
        filler = MentionFiller.from_source(mentions, self.ecg_config)
        filler.check_types([label for sequence in model_outputs["sequences"] for label in sequence])
        rng = random.Random(seed)
        samples = [filler.fill(decoded, rng) for decoded in model_outputs["decoded"]]
        k = model_outputs["num_return_sequences"]
        return [samples[i : i + k] for i in range(0, len(samples), k)]

    def save_pretrained(self, save_directory: str, **kwargs: Any) -> None:
        """Save model, tokenizer, ``ecg_config.json`` and this pipeline's code (for ``trust_remote_code``)."""
        register_pipeline()  # _registered_impl tells save_pretrained to write custom_pipelines
        super().save_pretrained(save_directory, **kwargs)
        self.ecg_config.save(save_directory)


def register_pipeline() -> None:
    """Register the task with transformers once (later calls, and other copies of this class, are no-ops)."""
    from transformers.pipelines import PIPELINE_REGISTRY

    registered = PIPELINE_REGISTRY.supported_tasks.get(TASK)
    if registered is not None and registered["impl"].__name__ == EntityControlledGenerationPipeline.__name__:
        EntityControlledGenerationPipeline._registered_impl = {
            TASK: {**registered, "impl": EntityControlledGenerationPipeline}
        }
        return
    PIPELINE_REGISTRY.register_pipeline(
        TASK, pipeline_class=EntityControlledGenerationPipeline, pt_model=AutoModelForCausalLM, type="text"
    )


register_pipeline()
