"""Baselines that write datasets in the same schema as ``hf-ecg generate``, for side-by-side tables.

- :func:`mention_replacement` (Dai & Adel, 2020): a gold sentence whose mentions are swapped, each
  with probability ``probability``, for another gold mention of the same type. Templates and
  labels are the gold ones by construction; only the mention strings change. Given the user's mention
  lists (:func:`replacement_bank`), the swapped-in mentions come from them: the fair baseline for
  ECG-QALM data filled from the same lists.
"""

from __future__ import annotations

import json
import os
import random
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ..data.corpus import Corpus
from ..runtime.blocks import decompose, recompose
from ..runtime.mentions import MentionBank, mention_list_files
from ..runtime.tags import spans_to_tags, text_spans
from ..runtime.words import WordSplitter, word_exceptions

__all__ = ["mention_replacement", "replacement_bank", "write_dataset"]

_MAX_REDRAWS = 20  # draws before accepting the original mention (a type with one distinct mention)


def mention_replacement(
    corpus: Corpus,
    num_samples: int | None = None,
    *,
    seed: int = 0,
    probability: float = 1.0,
    bank: MentionBank | None = None,
) -> list[dict[str, Any]]:
    """``num_samples`` rows (default: one per gold sentence), cycling over the gold sentences in order.

    Each mention is replaced with probability ``probability`` by a different mention of its type,
    drawn uniformly from the distinct mentions in ``bank`` (default: the corpus's own).
    """
    if not 0.0 <= probability <= 1.0:
        raise ValueError(f"probability must be in [0, 1], got {probability}")
    if not len(corpus):
        raise ValueError(f"{corpus.name} has no sentences")
    num_samples = len(corpus) if num_samples is None else num_samples
    if num_samples < 1:
        raise ValueError(f"num_samples must be >= 1, got {num_samples}")
    bank = bank or MentionBank.from_sentences(corpus)
    rng = random.Random(seed)
    rows = []
    for i in range(num_samples):
        sentence = corpus[i % len(corpus)]
        template, mentions = decompose(sentence.tokens, sentence.spans)
        swapped = []
        for mention, label in zip(mentions, template.entity_types, strict=True):
            new = mention
            if rng.random() < probability:
                for _ in range(_MAX_REDRAWS):
                    new = bank.sample(label, rng)
                    if new != mention:
                        break
            swapped.append(new)
        tokens, spans = recompose(template, swapped)
        rows.append(
            {
                "id": i,
                "tokens": tokens,
                "ner_tags": spans_to_tags(spans, len(tokens)),
                "entities": list(template.entity_types),
                "template": str(template),
                "text": " ".join(tokens),
                "spans": text_spans(tokens, spans),
            }
        )
    return rows


def replacement_bank(corpus: Corpus, lists: Any = None) -> MentionBank:
    """The mentions :func:`mention_replacement` draws from: the corpus's own, with the types of the user's
    mention ``lists`` (``{type: file}`` or a folder of ``TYPE.txt``: :func:`~hf_ecg.runtime.mentions.read_mention_list`)
    taken from the lists instead, each mention split into tokens the way the corpus writes them."""
    bank = MentionBank.from_sentences(corpus)
    if lists is None:
        return bank
    files = mention_list_files(lists)
    unknown = sorted(set(files) - set(corpus.entity_types))
    if unknown:
        raise ValueError(
            f"mention list(s) for type(s) {unknown} that {corpus.name} does not have; its types: "
            f"{', '.join(corpus.entity_types)}"
        )
    split = WordSplitter(word_exceptions(s.tokens for s in corpus))
    return bank.with_types_of(MentionBank.from_list_files(files, split))


def write_dataset(
    rows: list[dict[str, Any]],
    entity_types: list[str],
    output_dir: str | os.PathLike,
    settings: dict[str, Any],
    *,
    overwrite: bool = False,
    inputs: Sequence[str | os.PathLike] = (),
) -> Path:
    """Write ``rows`` as ``output_dir/data/train-00000.parquet`` in the generated-dataset format
    (:mod:`hf_ecg.data.dataset_format`: the ``hf-ecg generate`` schema and an ``ecg_generation.json`` manifest,
    so that :func:`~hf_ecg.data.dataset_format.read_generated`, selection and export take it), and
    ``output_dir/baseline.json`` (the settings); ``datasets.load_dataset(output_dir)`` reads it.

    ``output_dir`` follows :func:`hf_ecg.data.outputs.prepare_output`: new or empty, or a dataset hf_ecg wrote
    when ``overwrite``; never a folder with other files, nor one inside ``inputs``."""
    from ..data.dataset_format import GENERATION_COLUMNS, bio_labels, dataset_features, write_shard
    from ..data.manifest import GenerationManifest, write_manifest
    from ..data.outputs import DATASET, prepare_output

    output_dir = prepare_output(output_dir, DATASET, overwrite=overwrite, inputs=inputs)
    data_dir = output_dir / "data"
    features = dataset_features(entity_types)
    for column in GENERATION_COLUMNS:
        del features[column]
    write_shard(rows, features, data_dir, 0, 0)
    manifest = GenerationManifest(
        method=settings.get("method", "baseline"),
        entity_types=sorted(entity_types),
        label_names=bio_labels(entity_types),
        num_samples=len(rows),
        settings=settings,
    )
    write_manifest(output_dir, manifest)
    (output_dir / "baseline.json").write_text(json.dumps(settings, indent=2) + "\n", encoding="utf-8")
    return output_dir
