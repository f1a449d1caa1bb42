"""A sketch generator's training rows (``--layout sketch``): each block row of a sentence asked with sketches of that
sentence (:mod:`hf_ecg.synthetic.sketching`).

A sentence gets ``sketch_variants`` sketches: the first keeps its best key phrases (what generation asks), the others
redraw them with noise on the scores (GENIUS's dynamic masking: no sentence is tied to one sketch), so one pass over
the rows sees each sentence with several sketches. Each of its block rows is repeated once a sketch, its question that
sketch from the block on; the mention rows (block index ``-1``) are kept once.
"""

from __future__ import annotations

import logging
import random
from collections.abc import Mapping
from typing import Any

import datasets

from ..data.corpus import Corpus
from ..synthetic.sketching import PhraseScorer, SketchConfig, sketch_of

__all__ = ["asked_with_sketches", "sketch_blocks", "text_sketch_blocks"]

logger = logging.getLogger(__name__)

#: Gumbel noise on the key phrases' scores for the redrawn sketches (cosines differ by a few hundredths).
REDRAW_NOISE = 0.1


def sketch_blocks(
    blocks: datasets.DatasetDict,
    corpora: Mapping[str, Corpus],
    *,
    kept_share: float,
    variants: int,
    seed: int,
    first_sentence_id: int = 0,
    scorer: PhraseScorer | None = None,
) -> datasets.DatasetDict:
    """``blocks`` (the builder's rows of ``corpora``, by split) with each block row asked with ``variants`` sketches of
    its sentence (a validation split: the first only); a row's sentence is ``corpora[split][sentence_id -
    first_sentence_id]``."""
    scorer = scorer or PhraseScorer(SketchConfig(kept_share=kept_share))
    result = {}
    for split, rows in blocks.items():
        corpus = corpora[split]
        logger.info("scoring the key phrases of %d %s sentences", len(corpus), split)
        scored = scorer.score([(s.tokens, s.spans) for s in corpus])
        count = variants if split == "train" else 1
        questions = [
            [
                sketch_of(
                    sentence, kept_share, rng=None if v == 0 else random.Random(f"{seed}-{i}-{v}"), noise=REDRAW_NOISE
                ).questions()
                for v in range(count)
            ]
            for i, sentence in enumerate(scored)
        ]
        result[split] = _asked(rows, questions, first_sentence_id)
    return datasets.DatasetDict(result)


def asked_with_sketches(blocks: datasets.DatasetDict, builder: Any, args: Any) -> datasets.DatasetDict:
    """The builder's ``blocks`` as training asks them: with a sketch layout (``args.layout``), each block row asked
    with sketches of its sentence (:func:`sketch_blocks`); with another, as they are."""
    from ..runtime.layout import layout_named

    if not layout_named(args.layout).sketch:
        return blocks
    corpora = {split: builder.corpus(split) for split in blocks}
    return sketch_blocks(
        blocks, corpora, kept_share=args.sketch_kept_share, variants=args.sketch_variants, seed=args.seed
    )


def _asked(rows: datasets.Dataset, questions: list[list[list[str]]], first_sentence_id: int) -> datasets.Dataset:
    """``rows`` with each block row repeated once a sketch of its sentence (``questions[sentence_id -
    first_sentence_id]``), asked with that sketch's question."""

    def expand(batch: dict[str, list[Any]]) -> dict[str, list[Any]]:
        out: dict[str, list[Any]] = {key: [] for key in batch}
        for i in range(len(batch["question"])):
            block = batch["block_index"][i]
            sentence = batch["sentence_id"][i] - first_sentence_id
            asked = [None] if block < 0 else [q[block] for q in questions[sentence]]
            for question in asked:
                for key in batch:
                    out[key].append(batch[key][i])
                if question is not None:
                    out["question"][-1] = question
        return out

    return rows.map(expand, batched=True, desc="Asking with sketches")


def text_sketch_blocks(
    sentences: list[list[str]], dictionary: Any, first_sentence_id: int, args: Any
) -> tuple[datasets.Dataset, dict[str, Any]]:
    """The sketch rows of the user's text (``train --layout sketch --unlabelled TEXT``): ``sentences`` (a seeded
    choice of the text's) labelled by ``dictionary`` (their spans the names it finds; a sentence without one still
    teaches context), each asked with its sketches, their ``sentence_id`` from ``first_sentence_id`` on; and the
    card's record (counts only)."""
    from .own_sentences import template_blocks

    corpus = dictionary.label(sentences)
    rows = template_blocks(corpus, args.layout, first_sentence_id)
    asked = sketch_blocks(
        datasets.DatasetDict({"train": rows}),
        {"train": corpus},
        kept_share=args.sketch_kept_share,
        variants=args.sketch_variants,
        seed=args.seed,
        first_sentence_id=first_sentence_id,
    )["train"]
    record = {
        "sketched": len(corpus),
        "kept": len(corpus),
        "with_names": sum(bool(s.spans) for s in corpus),
        "names": sum(len(s.spans) for s in corpus),
        "blocks": asked.num_rows,
    }
    return asked, record
