"""The demo: an offline model built in minutes (:mod:`~hf_ecg.demo.model`, for the quickstart and the Space)
and the Gradio app the Space serves (:mod:`~hf_ecg.demo.app`, imported on its own: it needs gradio)."""

from .model import DEMO_BASE_MODEL, DEMO_DECODING, build_demo_model, readable_sentences, shipped_corpus

__all__ = ["DEMO_BASE_MODEL", "DEMO_DECODING", "build_demo_model", "readable_sentences", "shipped_corpus"]
