"""Shared fixtures and hypothesis strategies."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

from hf_ecg.runtime.tags import Span

settings.register_profile(
    "ci", max_examples=100, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow]
)
settings.register_profile("dev", max_examples=100, deadline=None)
settings.register_profile("thorough", max_examples=3000, deadline=None)  # HYPOTHESIS_PROFILE=thorough
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE") or ("ci" if os.environ.get("CI") else "dev"))

#: ../shared/data beside the checkout (CI and developer machines); tests that need it skip without it.
SHARED_DATA = Path(os.environ.get("HF_ECG_SHARED_DATA", Path(__file__).resolve().parents[2] / "shared" / "data"))


@pytest.fixture
def shared_data() -> Path:
    if not (SHARED_DATA / "bc5cdr" / "train.tsv").is_file():
        pytest.skip(f"shared corpora not found at {SHARED_DATA}")
    return SHARED_DATA


LABELS = ["Chemical", "Disease", "cell_type", "DNA"]
words = st.text(alphabet=st.characters(blacklist_categories=("Cs", "Z", "Cc")), min_size=1, max_size=6).filter(
    lambda w: not any(ch.isspace() for ch in w) and not (w.startswith("<") and w.endswith(">"))
)


@st.composite
def labelled_sentences(draw: st.DrawFn, max_items: int = 10) -> tuple[list[str], list[Span]]:
    """A tokenized sentence with non-overlapping spans (adjacent spans of one type included)."""
    tokens: list[str] = []
    spans: list[Span] = []
    for _ in range(draw(st.integers(0, max_items))):
        if draw(st.booleans()):
            tokens.append(draw(words))
        else:
            length = draw(st.integers(1, 3))
            label = draw(st.sampled_from(LABELS))
            spans.append(Span(len(tokens), len(tokens) + length, label))
            tokens.extend(draw(st.lists(words, min_size=length, max_size=length)))
    if not tokens:
        tokens.append(draw(words))
    return tokens, spans
