"""What a training folder records so that ``train --resume`` continues only the same training, and what is refused
before any work: the Hub access of a push, the inputs' kinds, the output folder, a resume with other data or
settings, a resume of a finished training. Also the training steps that read or clear the folder's checkpoints."""

from __future__ import annotations

import logging
import os
from pathlib import Path
from typing import Any

from ..data.outputs import TRAINING_RECORD
from ..runtime.ecg_config import ECG_CONFIG_NAME
from .trainer import ECGTrainer
from .training_args import ECGTrainingArguments

__all__ = [
    "check_before_training",
    "check_not_finished",
    "check_resumed_settings",
    "first_training_done",
    "read_training_record",
    "remove_checkpoints",
    "train_and_save",
    "training_fingerprint",
    "write_training_record",
]

logger = logging.getLogger(__name__)


#: The training arguments that shape the weights: a run resumed with another value would mix two trainings.
_WEIGHT_SETTINGS = (
    "layout",
    "mention_layout",
    "mention_samples",
    "loss_on",
    "max_length",
    "lora",
    "lora_r",
    "lora_alpha",
    "learning_rate",
    "num_train_epochs",
    "max_steps",
    "validation_split",
    "seed",
    "per_device_train_batch_size",
    "gradient_accumulation_steps",
)


#: The corpus-reading options ``train_ecg_model`` passes on to :class:`~hf_ecg.data.builder.ECGBlocksConfig`.
_READER_OPTIONS = ("format", "scheme", "strict", "token_column", "tag_column", "encoding")


def _source_digest(source: Any) -> str | None:
    """A corpus file's content digest, or a dataset's fingerprint (``None`` for neither)."""
    import hashlib

    if source is None:
        return None
    if isinstance(source, (str, os.PathLike)):
        return hashlib.sha256(Path(source).read_bytes()).hexdigest()[:16]
    return getattr(source, "_fingerprint", None)


def training_fingerprint(
    args: ECGTrainingArguments,
    model_name: str,
    data: Any,
    validation: Any,
    first_n: int | None,
    fraction: float | None,
    reader_options: dict[str, Any],
) -> dict[str, Any]:
    """What shapes a training's weights: the data (content digests, the part of it taken, how it is read), the
    base model and :data:`_WEIGHT_SETTINGS`; ``train --resume`` continues a folder only with the same."""
    from ..data.builder import ECGBlocksConfig

    return {
        "base_model": str(model_name),
        "data": _source_digest(data),
        "validation": _source_digest(validation),
        "first_n": first_n,
        "fraction": fraction,
        # as the blocks builder reads them, its defaults filled in: a default given or left out is the same
        "reader_options": {
            **{name: getattr(ECGBlocksConfig, name) for name in _READER_OPTIONS},
            **reader_options,
        },
        **{name: getattr(args, name) for name in _WEIGHT_SETTINGS},
    }


def read_training_record(output_dir: str) -> dict[str, Any] | None:
    """The training record ``output_dir`` holds (what :func:`write_training_record` wrote), or ``None``."""
    import json

    path = Path(output_dir) / TRAINING_RECORD
    return json.loads(path.read_text(encoding="utf-8")) if path.is_file() else None


def check_resumed_settings(output_dir: str, record: dict[str, Any] | None, fingerprint: dict[str, Any]) -> None:
    """Refuse to resume a folder whose training ``record`` says it was begun with other data, base model or
    settings (``ValueError`` naming them), before any work; a folder without a record is resumed as it is."""
    before = (record or {}).get("fingerprint")
    if before is None:
        return
    changed = sorted(key for key in fingerprint.keys() | before.keys() if fingerprint.get(key) != before.get(key))
    if changed:
        raise ValueError(
            f"{output_dir} was begun with other {', '.join(changed)}: resuming would mix two trainings; resume "
            "with what it was begun with, or overwrite=True (--overwrite) to start again"
        )


def check_not_finished(output_dir: str, record: dict[str, Any] | None, own_count: int) -> None:
    """Refuse to resume a training its ``record`` says finished, unless a second training on its own sentences is
    now asked of a model trained once."""
    if record is None or not record.get("finished"):
        return
    if own_count > 0 and not record.get("own_sentences"):
        return
    raise ValueError(
        f"{output_dir} holds a finished training: there is nothing to resume (overwrite=True, --overwrite, "
        "trains it again)"
    )


def write_training_record(output_dir: str, fingerprint: dict[str, Any], own_count: int, *, finished: bool) -> None:
    """Record in ``output_dir`` what shapes the training's weights, whether it trains twice, and whether it ended."""
    import json

    Path(output_dir).mkdir(parents=True, exist_ok=True)
    record = {"fingerprint": fingerprint, "own_sentences": own_count, "finished": finished}
    (Path(output_dir) / TRAINING_RECORD).write_text(json.dumps(record, indent=2) + "\n", encoding="utf-8")


def check_before_training(
    args: ECGTrainingArguments, data: Any, validation: Any, overwrite: bool, resume: bool, later: str
) -> list[Any]:
    """What can be refused before any work: the Hub access of a push, the inputs' kinds, the output folder (an
    earlier model is continued with ``resume``, replaced with ``overwrite``, refused otherwise). The input files."""
    from ..data.outputs import MODEL, prepare_output
    from ..hub.push import check_hub_access

    if args.push_to_hub:  # before hours of training, not after
        check_hub_access(
            args.hub_repo_id, args.hub_token, hint=f"or train without push_to_hub and publish later with `{later}`"
        )
    sources = [data] if validation is None else [data, validation]
    files = {isinstance(source, (str, os.PathLike)) for source in sources}
    if len(files) > 1:
        raise ValueError("give data and validation both as files or both as datasets")
    input_files = sources if files == {True} else []
    try:
        prepare_output(args.output_dir, MODEL, overwrite=overwrite or resume, inputs=input_files, dry_run=True)
    except ValueError:
        checkpoints = sorted(Path(args.output_dir).glob("checkpoint-*"))
        if not checkpoints or (Path(args.output_dir) / ECG_CONFIG_NAME).is_file():
            raise
        raise ValueError(  # an interrupted training: say how to continue it before how to discard it
            f"{args.output_dir} holds an interrupted training ({checkpoints[-1].name}): resume=True (--resume) "
            "continues it; overwrite=True (--overwrite) starts again and discards its checkpoints"
        ) from None
    return input_files


def train_and_save(trainer: ECGTrainer, resume: bool) -> None:
    """Train (from the last checkpoint in the output folder with ``resume``) and save the final model."""
    from transformers.trainer_utils import get_last_checkpoint

    output_dir = trainer.args.output_dir
    checkpoint = get_last_checkpoint(output_dir) if resume and os.path.isdir(output_dir) else None
    if resume and checkpoint is None:
        logger.warning("no checkpoint in %s: starting from the beginning", output_dir)
    trainer.train(resume_from_checkpoint=checkpoint)
    trainer.save_model()


def first_training_done(output_dir: str) -> bool:
    """Whether the first of two trainings saved its model in ``output_dir`` (the card is written by the final save
    only; the second training's saved model has one too, and resuming it trains from its last checkpoint)."""
    from ..hub.model_card import CARD_DATA_NAME

    return os.path.isfile(os.path.join(output_dir, CARD_DATA_NAME))


def remove_checkpoints(args: ECGTrainingArguments) -> None:
    """Delete the first training's checkpoints (its best model is saved)."""
    import glob
    import shutil

    from accelerate import PartialState

    if args.should_save:
        for checkpoint in glob.glob(os.path.join(args.output_dir, "checkpoint-*")):
            shutil.rmtree(checkpoint)
    PartialState().wait_for_everyone()
