"""Gradio Space: try an ECG-QALM generator in the browser (the app is :mod:`hf_ecg.demo.app`).

The model is ``$HF_ECG_MODEL`` (a Hub id or a folder written by ``hf-ecg train``), else the first of the
``models:`` that the Space card (``README.md`` beside this file) names, as ``scripts/build_space.py
--model ORG/NAME`` writes it. With neither, for a local try-out, the app builds the offline demo model on
first start (about 4 minutes on 2 CPU cores).

Run locally with ``python spaces/app.py`` (``GRADIO_SERVER_PORT`` picks the port).
"""

from pathlib import Path

from hf_ecg.demo.app import build_demo, resolve_model

demo = build_demo(resolve_model(Path(__file__).with_name("README.md")))

if __name__ == "__main__":
    demo.launch(ssr_mode=False)
