"""A noise-aware loss for token classification: each label weighs on the loss as much as it is trusted.

A silver split's ``label_weights`` column says per word how sure its label is (1.0 known, 0.0 unknown, between for
a labeller's confidence). :func:`align_label_weights` puts a word's weight on its first sub-word (where its label
sits), :class:`LabelWeightCollator` pads the weights with the labels, and :class:`WeightedLossTrainer` is a
``transformers.Trainer`` whose loss is the weighted mean of the token losses. With a plain ``Trainer``::

    trainer = WeightedLossTrainer(
        model=model, args=args, train_dataset=encoded,  # columns input_ids, labels, label_weights
        data_collator=LabelWeightCollator(tokenizer),
    )

Rows without weights (every weight 1.0) train exactly as with ``Trainer``'s own cross-entropy.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from transformers import DataCollatorForTokenClassification, Trainer

__all__ = ["LabelWeightCollator", "WeightedLossTrainer", "align_label_weights"]

#: The column that carries each sub-word's loss weight through the collator to the loss.
WEIGHTS = "label_weights"


def align_label_weights(word_ids: Sequence[int | None], weights: Sequence[float]) -> list[float]:
    """Sub-word weights from word weights: a word's weight on its first sub-word, 0.0 on the rest and on special
    tokens (where the label is -100 anyway)."""
    aligned, previous = [], None
    for word in word_ids:
        aligned.append(float(weights[word]) if word is not None and word != previous else 0.0)
        previous = word
    return aligned


class LabelWeightCollator(DataCollatorForTokenClassification):
    """``DataCollatorForTokenClassification`` that also pads a ``label_weights`` column (with 0.0) to the labels'
    length; rows without it weigh 1.0 wherever they have a label."""

    def __call__(self, features: list[dict[str, Any]], return_tensors: Any = None) -> dict[str, Any]:
        import torch

        weights = [feature.pop(WEIGHTS, None) for feature in features]
        batch = super().__call__(features, return_tensors)
        labels = batch["labels"]
        padded = torch.zeros(labels.shape, dtype=torch.float32)
        for row, row_weights in enumerate(weights):
            if row_weights is None:
                padded[row] = (labels[row] != -100).float()
            else:
                padded[row, : len(row_weights)] = torch.tensor(row_weights[: labels.shape[1]], dtype=torch.float32)
        batch[WEIGHTS] = padded
        return batch


class WeightedLossTrainer(Trainer):
    """``Trainer`` whose token-classification loss is the cross-entropy of each labelled sub-word times its
    ``label_weights``, summed and divided by the weights' sum (a batch of weights 1.0: the usual mean). It keeps
    the ``label_weights`` column that ``Trainer`` would drop as unknown to the model."""

    #: A per-batch mean: ``Trainer`` divides it by the gradient accumulation steps.
    loss_is_scaled_for_ga = False

    def _set_signature_columns_if_needed(self) -> None:
        super()._set_signature_columns_if_needed()
        if WEIGHTS not in self._signature_columns:
            self._signature_columns.append(WEIGHTS)

    def compute_loss(
        self, model: Any, inputs: dict[str, Any], return_outputs: bool = False, num_items_in_batch: Any = None
    ) -> Any:
        import torch

        weights = inputs.pop(WEIGHTS)
        labels = inputs.pop("labels")
        outputs = model(**inputs)
        logits = outputs.logits
        losses = torch.nn.functional.cross_entropy(
            logits.reshape(-1, logits.shape[-1]).float(), labels.reshape(-1), ignore_index=-100, reduction="none"
        )
        weights = weights.reshape(-1).to(losses.device) * (labels.reshape(-1) != -100)
        loss = (losses * weights).sum() / weights.sum().clamp(min=1e-8)
        return (loss, outputs) if return_outputs else loss
