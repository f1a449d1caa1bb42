"""Shared fixtures and hypothesis strategies."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

from hf_ecg.runtime.mentions import MentionBank
from hf_ecg.runtime.pipeline import EntityControlledGenerationPipeline
from hf_ecg.runtime.tags import Span
from tiny import GENERATION_MENTIONS, GENERATION_TYPES, save_tiny_bert, save_tiny_ecg_model, tiny_ecg_model, toy_corpus

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


@pytest.fixture(autouse=True)
def own_datasets_cache(tmp_path_factory, monkeypatch):
    """Each test its own datasets cache: datasets 5.2 caches a local folder whose card has a ``configs`` header
    by the folder's name and card alone, so a test's ``load_dataset(tmp/"kept")`` could read the rows another
    test (or an earlier run) wrote to a folder of that name."""
    import datasets

    monkeypatch.setattr(datasets.config, "HF_DATASETS_CACHE", tmp_path_factory.mktemp("datasets-cache"))


@pytest.fixture(autouse=True, scope="session")
def train_once_by_default():
    """Tests train tiny models on toy corpora to test other things: by default they train once, as on a large
    corpus; tests of the second training (tests/test_own_sentences.py) ask for it with ``own_sentences``. For the
    whole session, so that module-scoped model fixtures train once too."""
    from hf_ecg.hub import training_record

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(training_record, "OWN_SENTENCES_MAX_CORPUS", 0)
        yield


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


# The generation tests' tiny model (test_pipeline, test_decoding, test_generate): an untrained 2-layer GPT-2.
@pytest.fixture(scope="module")
def tiny():
    """(model, tokenizer, ECGConfig) of an untrained tiny ECG model over GENERATION_TYPES."""
    return tiny_ecg_model(GENERATION_TYPES)


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory):
    """A saved tiny ECG model with a mention bank and corpus statistics, as `hf-ecg train` writes it."""
    return save_tiny_ecg_model(tmp_path_factory.mktemp("tiny-ecg"), GENERATION_TYPES, GENERATION_MENTIONS)


@pytest.fixture(scope="module")
def gen(tiny):
    """The pipeline over ``tiny``, its mention bank set."""
    model, tokenizer, config = tiny
    config.mention_bank = MentionBank.from_lists(GENERATION_MENTIONS).to_dict()
    return EntityControlledGenerationPipeline(
        model=model, tokenizer=tokenizer, ecg_config=config, device="cpu", max_block_tokens=8, max_attempts=2
    )  # an untrained model rarely ends a block itself: keep blocks short and their tries few


@pytest.fixture(scope="module")
def toy_tagger(tmp_path_factory):
    """A tiny BERT tagger that has learnt the toy corpus (tests/tiny.py) by heart: the gold tagger of the tagger rules'
    tests (test_selection, test_text_sentences)."""
    from hf_ecg.data.corpus import read_conll
    from hf_ecg.taggers.tagger import NERConfig
    from hf_ecg.taggers.training import train_tagger

    directory = tmp_path_factory.mktemp("tagger")
    corpus = read_conll(toy_corpus(directory / "toy.tsv", repeat=8))
    config = NERConfig(model=str(save_tiny_bert(directory / "bert")), epochs=15, batch_size=4, learning_rate=5e-3)
    return train_tagger([corpus], config, seed=1)


@pytest.fixture(scope="module")
def sketch_model(tmp_path_factory):
    """A tiny generator trained two steps with ``--layout sketch`` on the toy corpus, and that corpus."""
    from hf_ecg.cli import main
    from tiny import save_tiny_model, toy_corpus

    root = tmp_path_factory.mktemp("sketch")
    data = toy_corpus(root / "toy.tsv", repeat=3)
    argv = ["train", "--data", str(data), "--model", str(save_tiny_model(root / "base")), "--output", str(root / "m")]
    assert main([*argv, "--max-steps", "2", "--layout", "sketch", "--save_strategy", "no", "--use_cpu", "true"]) == 0
    return root / "m", data
