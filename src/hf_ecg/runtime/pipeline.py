"""The ``entity-controlled-generation`` pipeline: entity sequences in, labelled sentences out.

::

    import hf_ecg  # registers the task
    from transformers import pipeline

    gen = pipeline("entity-controlled-generation", model="path/to/model")
    gen(["Chemical", "Disease"], num_return_sequences=3)          # one sequence -> list of samples
    gen([["Chemical"], {"entities": ["Disease"]}], seed=0)        # several -> a list per input
    for samples in gen(dataset, batch_size=64): ...               # a datasets.Dataset with an "entities"
                                                                  # column, a KeyDataset or a generator: streamed
    gen(["Chemical", Phrase.of("was given for"), "Disease"])      # a phrase written as given where it stands
    gen(Sketch.parse("<|gap|> <Chemical> <|gap|> induced <|gap|> <Disease> <|gap|>"))  # a sketch generator's sketch

Each sample is a dict with ``tokens``, ``ner_tags`` (IOB2 strings), ``text``, ``template``,
``entities`` (exactly the request's entity types), and how it ended: ``complete`` (ends like the training
sentences end), ``forced_tags`` and ``cut_blocks`` (blocks that ended anywhere but at the model's
own choice of the requested tag). ``save_pretrained`` writes this code, as the one file
:data:`REMOTE_CODE_FILE`, and a ``custom_pipelines`` entry, so ``pipeline(model=folder, trust_remote_code=True)``
works without hf_ecg.
"""

from __future__ import annotations

import json
import os
import random
import shutil
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import fields
from typing import Any

from transformers import AutoModelForCausalLM, Pipeline

from .decoding import DecodingConfig
from .decoding_config import Phrase, ShardSeeds, split_request
from .ecg_config import CARD_DATA_NAME, ECG_CONFIG_NAME, ECGConfig
from .engine import SampleEngine, shards_per_writer_call
from .sketches import Sketch

__all__ = [
    "REMOTE_CODE_FILE",
    "REMOTE_TASK",
    "TASK",
    "EntityControlledGenerationPipeline",
    "register_pipeline",
    "save_pipeline_code",
]

TASK = "entity-controlled-generation"
#: The task a saved folder's ``custom_pipelines`` names: not :data:`TASK`, since transformers asks for
#: ``trust_remote_code`` whenever the task requested is one a folder's config names, and a user with hf_ecg installed
#: asks for :data:`TASK` with no remote code; ``pipeline(model=folder, trust_remote_code=True)`` finds this one alone.
REMOTE_TASK = f"{TASK}-remote-code"
#: The one file of code a saved folder carries: this package's modules joined by ``scripts/bundle_remote_code.py``
#: into ``hf_ecg/remote_code/``, so that a reader audits one file before ``trust_remote_code=True``.
REMOTE_CODE_FILE = "ecg_pipeline.py"
_DECODING_OPTIONS = {f.name for f in fields(DecodingConfig)} - {"seed"}


def _is_piece(value: Any) -> bool:
    """Whether ``value`` is a piece of a request: an entity type, or a :class:`~.decoding_config.Phrase`."""
    return isinstance(value, str | Phrase)


def _entity_sequence(item: Any) -> tuple[str | Phrase, ...] | Sketch:
    """One input: a list of entity types (and phrases), a dict (a dataset row) with the key ``entities``, or a
    :class:`~.sketches.Sketch` (a sketch generator's)."""
    if isinstance(item, Sketch):
        return item
    if isinstance(item, Mapping):
        if "entities" not in item:
            raise ValueError(f"an input dict needs the key 'entities', got keys {sorted(item)}")
        item = item["entities"]
    if isinstance(item, str) or not isinstance(item, Sequence) or not all(map(_is_piece, item)):
        raise TypeError(f"an entity sequence is a list of entity types (strings) and phrases, got {item!r}")
    return tuple(item)


def _is_count(value: Any) -> bool:
    """Whether ``value`` is a whole number of at least 1 (not a bool, a float or a string of digits)."""
    return isinstance(value, int) and not isinstance(value, bool) and value >= 1


def _is_one_sequence(inputs: Any) -> bool:
    """Whether ``inputs`` is a single request (a non-empty list of types, or a dict), not several. ``[]`` is an
    empty batch, as for other pipelines; one entity-free sentence is ``[[]]``."""
    if isinstance(inputs, str):
        example = [t.strip() for t in inputs.split(",") if t.strip()] or [inputs]
        raise TypeError(f"give a list of entity types, e.g. {example!r}, not a bare string")
    if isinstance(inputs, Mapping | Sketch):
        return True
    return isinstance(inputs, Sequence) and bool(inputs) and all(map(_is_piece, inputs))


def _chunks(inputs: Iterable[Any], size: int) -> Iterator[list[Any]]:
    chunk: list[Any] = []
    for item in inputs:
        chunk.append(item)
        if len(chunk) == size:
            yield chunk
            chunk = []
    if chunk:
        yield chunk


class EntityControlledGenerationPipeline(Pipeline):
    """Write new labelled sentences whose entities are exactly the requested types, in order.

    Call options (also accepted when the pipeline is built): ``num_return_sequences`` (samples per
    input, default 1), ``seed``, ``mentions`` (``"generated"``: the model writes each slot's mention in its
    sentence, the default for a model trained with mention samples; ``"random"``, the default for others, or
    ``"weighted"`` from the training bank; a ``{type: [mentions]}`` dict or a JSON path; mention lists: a
    ``{type: "list.txt"}`` dict or a folder of ``TYPE.txt``, one mention per line; or a
    :class:`~hf_ecg.MentionMixture` of generated, list and bank mentions, a share of the slots each; every sample's
    ``mention_sources`` says where each of its mentions came from), and the
    :class:`~hf_ecg.runtime.decoding.DecodingConfig` fields but ``seed`` ({decoding_options}), which set the
    templates' decoding, and their sampling settings the written mentions' too.

    Inputs are what other pipelines take: one request, a list, or a stream (a ``datasets.Dataset``
    whose rows have ``entities``, a ``KeyDataset``, a generator), which gives an iterator of results.
    ``batch_size`` (default :class:`~hf_ecg.runtime.decoding.DecodingConfig`'s, 64) requests are decoded together,
    and the slots of up to 1,024 samples filled together (a stream's results come a group of chunks at a time).
    """

    _load_tokenizer = True
    _load_processor = False
    _load_image_processor = False
    _load_feature_extractor = False

    def __init__(self, *args: Any, ecg_config: ECGConfig | None = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.ecg_config = ecg_config or self._load_ecg_config()
        # built once with the model; each call runs it with that call's settings
        self.engine = SampleEngine(self.model, self.tokenizer, self.ecg_config)

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
        unused = sorted({"temperature", "top_k", "top_p"} & set(kwargs)) if kwargs.get("do_sample") is False else []
        if unused:  # as the CLI refuses them: greedy decoding draws nothing
            raise ValueError(f"do_sample=False decodes greedily: {', '.join(unused)} would do nothing; leave it out")
        preprocess: dict[str, Any] = {}
        if num_return_sequences is not None:
            if not _is_count(num_return_sequences):
                raise ValueError(f"num_return_sequences must be a whole number >= 1, got {num_return_sequences!r}")
            preprocess["num_return_sequences"] = num_return_sequences
        forward = dict(kwargs)
        if seed is not None:
            forward["seed"] = seed
        if mentions is not None:
            forward["mentions"] = mentions
        return preprocess, forward, {}

    def __call__(self, inputs: Any, batch_size: int | None = None, **kwargs: Any) -> Any:
        """Generate for one entity sequence (returns a list of samples), a list of them (a list of lists;
        ``[]`` gives ``[]``, ``[[]]`` one entity-free request), or a stream of them (an iterator of lists)."""
        if isinstance(inputs, list | tuple) and not inputs:
            return []  # an empty batch, not a request for a sentence with no entity
        if batch_size is None and self._batch_size is None:
            batch_size = DecodingConfig.batch_size  # not Pipeline's 1: rows decode faster together
        for given in (batch_size, self._batch_size):
            if given is not None and not _is_count(given):
                raise ValueError(f"batch_size must be a whole number >= 1, got {given!r}")
        if _is_one_sequence(inputs):
            return super().__call__([inputs], batch_size=batch_size, **kwargs)[0]
        if isinstance(inputs, tuple):
            inputs = list(inputs)
        elif not isinstance(inputs, list) and not _is_torch_dataset(inputs):
            if not isinstance(inputs, Iterable):
                raise TypeError(f"unsupported input {type(inputs).__name__}: give entity sequences (lists of types)")
            inputs = (item for item in inputs)  # a datasets.Dataset (rows), a Column, any iterable: a stream
        return super().__call__(inputs, batch_size=batch_size, **kwargs)

    def get_iterator(
        self,
        inputs: Any,
        num_workers: int,
        batch_size: int,
        preprocess_params: dict[str, Any],
        forward_params: dict[str, Any],
        postprocess_params: dict[str, Any],
    ) -> Iterator[list[dict[str, Any]]]:
        """Results in input order, ``batch_size`` requests decoded at a time. Entity sequences need no
        tensors, so the requests are chunked here rather than by a ``DataLoader``; chunk ``k`` is seeded as
        :func:`~hf_ecg.generate_dataset` seeds its shard ``k`` (:class:`~hf_ecg.runtime.decoding_config.ShardSeeds`),
        so that equal requests in two chunks differ, and the chunks are filled in the groups that
        ``generate_dataset`` writes its shards' mentions in (:func:`~hf_ecg.runtime.engine.shards_per_writer_call`)."""
        group = shards_per_writer_call(batch_size * preprocess_params.get("num_return_sequences", 1))
        for index, taken in enumerate(_chunks(_chunks(inputs, batch_size), group)):
            prepared = [
                self.preprocess([_entity_sequence(item) for item in chunk], **preprocess_params) for chunk in taken
            ]
            outputs = self.forward(
                {"chunks": prepared}, **{**forward_params, "batch_size": batch_size, "shard": index * group}
            )
            for chunk in outputs["chunks"]:
                yield from self.postprocess(chunk, **postprocess_params)

    def preprocess(self, sequences: list[tuple[str, ...]], num_return_sequences: int = 1) -> dict[str, Any]:
        for sequence in sequences:
            self.ecg_config.check_entity_types(split_request(sequence)[0])
        expanded = [sequence for sequence in sequences for _ in range(num_return_sequences)]
        return {"sequences": expanded, "num_return_sequences": num_return_sequences}

    def _forward(
        self,
        model_inputs: dict[str, Any],
        seed: int | None = None,
        shard: int = 0,
        mentions: Any = None,
        **options: Any,
    ) -> dict[str, Any]:
        """Templates for the requests of each chunk (``model_inputs["chunks"]``, the first seeded as shard
        ``shard``), and their slots filled: the engine built with the pipeline, run with this call's settings."""
        if seed is None:
            seed = random.SystemRandom().getrandbits(63)
        run = self.engine.run(mentions, decoding=DecodingConfig(**options))
        chunks = model_inputs["chunks"]
        run.check_types(
            [label for chunk in chunks for sequence in chunk["sequences"] for label in split_request(sequence)[0]]
        )
        shards = [(chunk["sequences"], ShardSeeds.of(seed, shard + k)) for k, chunk in enumerate(chunks)]
        samples, _, _ = run.shard_samples(shards)
        return {"chunks": [{**chunk, "samples": rows} for chunk, rows in zip(chunks, samples, strict=True)]}

    def postprocess(self, model_outputs: dict[str, Any]) -> list[list[dict[str, Any]]]:
        samples, k = model_outputs["samples"], model_outputs["num_return_sequences"]
        return [samples[i : i + k] for i in range(0, len(samples), k)]

    def save_pretrained(self, save_directory: str, **kwargs: Any) -> None:
        """Save model, tokenizer, ``ecg_config.json`` and this pipeline's code (for ``trust_remote_code``), and the
        model card (``README.md``, ``ecg_card.json``) of the folder the model was loaded from, when it has one."""
        # not Pipeline.save_pretrained: it writes custom_pipelines under TASK, which save_pipeline_code rewrites
        os.makedirs(save_directory, exist_ok=True)
        self.model.save_pretrained(save_directory, **kwargs)
        self.tokenizer.save_pretrained(save_directory, **kwargs)
        save_pipeline_code(save_directory)
        self.ecg_config.save(save_directory)
        source = getattr(self.model, "name_or_path", "") or ""
        card = os.path.join(source, CARD_DATA_NAME)  # hf_ecg's card: the README beside it is its rendering
        if os.path.isfile(card) and not os.path.samefile(source, save_directory):
            for name in (CARD_DATA_NAME, "README.md"):  # the card travels with the weights it describes
                if os.path.isfile(os.path.join(source, name)):
                    shutil.copyfile(os.path.join(source, name), os.path.join(save_directory, name))


# The options as the dataclass has them, not a list kept by hand.
EntityControlledGenerationPipeline.__doc__ = (EntityControlledGenerationPipeline.__doc__ or "").replace(
    "{decoding_options}", ", ".join(f"``{name}``" for name in sorted(_DECODING_OPTIONS))
)


def _is_torch_dataset(inputs: Any) -> bool:
    try:
        from torch.utils.data import Dataset
    except ImportError:
        return False
    return isinstance(inputs, Dataset)


def save_pipeline_code(save_directory: str | os.PathLike) -> None:
    """Write this pipeline's code into a saved model folder and its ``custom_pipelines`` entry into the folder's
    ``config.json``, as :meth:`EntityControlledGenerationPipeline.save_pretrained` does, so that
    ``pipeline(model=folder, trust_remote_code=True)`` works where hf_ecg is not installed."""
    register_pipeline()
    info = dict(EntityControlledGenerationPipeline._registered_impl[TASK])
    info["impl"] = f"{REMOTE_CODE_FILE.removesuffix('.py')}.{EntityControlledGenerationPipeline.__name__}"
    info["pt"] = [model_class.__name__ for model_class in info["pt"]]
    source, target = _remote_code_source(), os.path.join(save_directory, REMOTE_CODE_FILE)
    if not (os.path.exists(target) and os.path.samefile(source, target)):
        shutil.copyfile(source, target)
    config_file = os.path.join(save_directory, "config.json")
    with open(config_file, encoding="utf-8") as file:
        config = json.load(file)
    config["custom_pipelines"] = {REMOTE_TASK: info}
    with open(config_file, "w", encoding="utf-8") as file:
        json.dump(config, file, indent=2, sort_keys=True)
        file.write("\n")


def _remote_code_source() -> str:
    """The file :func:`save_pipeline_code` copies: this file itself where it runs as a model folder's code, the
    package's generated one otherwise."""
    here = os.path.abspath(__file__)
    if os.path.basename(here) == REMOTE_CODE_FILE:
        return here
    return os.path.join(os.path.dirname(os.path.dirname(here)), "remote_code", REMOTE_CODE_FILE)


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
