"""The cards, one module each: :mod:`hf_ecg.model_card` and :mod:`hf_ecg.dataset_card` (kept as one
import path for code written against it)."""

from .dataset_card import CARD_EXAMPLES, DATASET_CARD_TEMPLATE, ECGDatasetCardData
from .model_card import CARD_DATA_NAME, MODEL_CARD_TEMPLATE, ECGModelCardData

__all__ = ["CARD_DATA_NAME", "CARD_EXAMPLES", "DATASET_CARD_TEMPLATE", "MODEL_CARD_TEMPLATE", "ECGDatasetCardData",
           "ECGModelCardData"]  # fmt: skip
