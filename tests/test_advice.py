"""The undertrained warning's advice: read from the model's training record, never the command it ran."""

from __future__ import annotations

import logging
import re
import shutil

import pytest
from hypothesis import given
from hypothesis import strategies as st

from hf_ecg.hub import training_record
from hf_ecg.hub.model_card import ECGModelCardData
from hf_ecg.hub.training_record import NO_RECORD_ADVICE, TrainingRecord, undertrained_advice
from hf_ecg.runtime.decoding import DecodingConfig
from hf_ecg.synthetic.generate import generate_dataset
from hf_ecg.synthetic.run_config import DatasetRunConfig

MAX_CORPUS = training_record.OWN_SENTENCES_MAX_CORPUS  # before conftest.train_once_by_default sets it to 0


def card(
    epochs: int, updates_per_epoch: int, losses: list[float] | None, max_steps: int | None, own: int | None = None
) -> ECGModelCardData:
    """Card data as the trainer's callback writes it: a training-loss row every few updates, a held-out row at
    the end of each epoch when there was a held-out split."""
    total = max_steps or epochs * updates_per_epoch
    logs = [{"step": step, "epoch": round(step / updates_per_epoch, 2), "loss": 3.0} for step in range(5, total + 1, 5)]
    for epoch, loss in enumerate(losses or [], start=1):
        logs.append({"step": epoch * updates_per_epoch, "epoch": float(epoch), "eval_loss": loss})
    logs.sort(key=lambda row: row["step"])
    hyperparameters = {"training_steps": max_steps} if max_steps else {"num_epochs": float(epochs)}
    return ECGModelCardData(
        training_logs=logs,
        total_steps=total,
        hyperparameters=hyperparameters,
        corpus_statistics={"num_sentences": 54},
        own_sentences=None if own is None else {"written": 2 * own, "kept": own},
    )


def suggested(advice: str) -> int:
    return int(re.search(r"`--(?:num-train-epochs|max-steps) (\d+)`", advice).group(1))


@given(
    epochs=st.integers(1, 12),
    updates_per_epoch=st.integers(5, 80),
    losses=st.none() | st.lists(st.floats(1.0, 6.0), min_size=1, max_size=12),
    max_steps=st.none() | st.integers(5, 400),
    own=st.none() | st.integers(1, 300),
)
def test_the_advice_never_names_what_the_model_ran(epochs, updates_per_epoch, losses, max_steps, own):
    losses = None if losses is None else losses[:epochs]
    record = TrainingRecord(card(epochs, updates_per_epoch, losses, max_steps, own))
    with pytest.MonkeyPatch.context() as patch:  # the library's threshold (conftest sets it to 0 for training)
        patch.setattr(training_record, "OWN_SENTENCES_MAX_CORPUS", MAX_CORPUS)
        advice = record.advice()
    assert "hf-ecg train" not in advice and "default" not in advice
    assert f"it trained {record.updates} updates" in advice and "54 sentences" in advice
    if own is not None:  # trained twice already: said, and not suggested again
        assert f"54 sentences and {own} of its own" in advice and "--own-sentences" not in advice
    if max_steps:
        assert f"--max-steps {max_steps}`" not in advice and f"--max_steps {max_steps}`" not in advice
    else:
        assert f"--num-train-epochs {epochs}`" not in advice and f"--epochs {epochs}`" not in advice
    if losses and losses.index(min(losses)) < len(losses) - 1:  # more epochs of the same would not help
        assert "more sentences" in advice and "--num-train-epochs" not in advice and "--max-steps" not in advice
        if own is None:  # trained once on a small corpus: its own whole sentences are more sentences
            assert advice.endswith("with its own whole sentences (`--own-sentences 400`)")
    else:
        ran = record.updates if max_steps else record.epochs
        assert suggested(advice) > ran


def test_the_advice_reads_how_the_model_trained():
    falling = TrainingRecord(card(3, 21, [3.54, 3.38, 3.37], None)).advice()
    assert falling == (
        "it trained 63 updates (3 epochs over 54 sentences) and its held-out loss was still falling at its last "
        "epoch (3.54 -> 3.37): train it longer, e.g. `--num-train-epochs 6` (the lowest held-out loss is kept)"
    )
    rose = TrainingRecord(card(3, 21, [3.66, 3.51, 3.53], None)).advice()
    assert "lowest at epoch 2 (3.51) and no lower after it" in rose and "train it on more sentences" in rose
    steps = TrainingRecord(card(2, 60, None, 120)).advice()
    assert steps.endswith("it had no held-out split to say when to stop: train it longer, e.g. `--max-steps 240`")


def test_generate_warns_with_the_models_own_record(model_dir, tmp_path, caplog):
    """The tiny model never ends a block, so the run looks undertrained: the warning says what the model ran and
    what to change, not the command that trained it."""
    assert undertrained_advice(model_dir) == NO_RECORD_ADVICE  # no ecg_card.json: no record
    assert undertrained_advice("org/some-hub-model") == NO_RECORD_ADVICE
    model = tmp_path / "model"
    shutil.copytree(model_dir, model)
    card(3, 21, [3.54, 3.38, 3.37], None).save(model)
    decoding = DecodingConfig(max_block_tokens=6, batch_size=4, max_attempts=5)
    with caplog.at_level(logging.WARNING, logger="hf_ecg.synthetic.writer"):
        generate_dataset(model, tmp_path / "gen", 8, seed=1, decoding=decoding, run=DatasetRunConfig(dtype="float32"))
    warning = next(r.getMessage() for r in caplog.records if "looks undertrained" in r.getMessage())
    assert "it trained 63 updates (3 epochs over 54 sentences)" in warning
    assert "`--num-train-epochs 6`" in warning and "hf-ecg train" not in warning
