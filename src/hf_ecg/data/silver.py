"""Silver sentences: the user's own text labelled by their name dictionary (distant supervision), kept beside the
generated samples as the folder's ``silver`` split, so that the folder holds a recipe's whole synthetic side.

::

    DIR/data/train-*.parquet     the generated samples (split ``train``)
    DIR/silver/silver-*.parquet  the silver sentences (split ``silver``): id, tokens, ner_tags, label_weights,
                                 text, spans

The split is the row's origin: ``datasets.load_dataset(DIR)`` gives both, ``hf-ecg evaluate ner --synthetic DIR``
trains on both, and the manifest's ``silver`` record says how many there are and what labelled them.

``label_weights`` is each token's weight on a tagger's loss: 1.0 a label taken as it is, 0.0 a token whose label is
unknown (out of the loss), a fraction a label trusted that much. The dictionary's labelling writes 1.0 on every token,
its ``O`` included (:func:`silver_weight_counts` counts a folder's); a labeller that marks unknown tokens writes 0.0
on them. ``hf-ecg evaluate ner`` honours the weights; with a plain ``Trainer``, set the labels of 0.0 tokens to -100
before aligning the labels to sub-words (``[t if w else -100 for t, w in zip(row["ner_tags"],
row["label_weights"])]``), or weigh the loss (:class:`~hf_ecg.taggers.weighted.WeightedLossTrainer`).
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import datasets

from ..runtime.tags import text_spans
from .corpus import Corpus
from .manifest import MANIFEST_NAME, read_manifest

__all__ = [
    "SILVER_DIR",
    "SILVER_PATTERN",
    "has_silver",
    "load_silver",
    "recorded_silver",
    "silver_record",
    "silver_weight_counts",
    "with_label_weights",
    "write_silver",
]

SILVER_DIR = "silver"
SILVER_PATTERN = "silver-{:05d}.parquet"
#: Rows per silver shard.
SILVER_ROWS_PER_SHARD = 4096


def silver_features(label_names: list[str]) -> datasets.Features:
    """The silver split's schema: its ``ner_tags`` share the generated samples' ``ClassLabel`` names."""
    return datasets.Features(
        {
            "id": datasets.Value("int64"),
            "tokens": datasets.Sequence(datasets.Value("string")),
            "ner_tags": datasets.Sequence(datasets.ClassLabel(names=label_names)),
            "label_weights": datasets.Sequence(datasets.Value("float32")),
            "text": datasets.Value("string"),
            "spans": datasets.List(
                {"start": datasets.Value("int32"), "end": datasets.Value("int32"), "label": datasets.Value("string")}
            ),
        }
    )


def silver_record(corpus: Corpus, labelled_by: str) -> dict[str, Any]:
    """The manifest's ``silver`` record: how many sentences and entities, what labelled them, and a digest of the
    sentences and their labels (a resumed run with other text or another dictionary is refused)."""
    labelled = [
        [list(s.tokens), s.tags, *([list(s.unknown)] if s.unknown else []), *([list(s.weights)] if s.weights else [])]
        for s in corpus
    ]
    content = json.dumps(labelled, ensure_ascii=False).encode("utf-8")
    record = {
        "sentences": len(corpus),
        "entities": sum(len(s.spans) for s in corpus),
        "labelled_by": labelled_by,
        "digest": hashlib.sha256(content).hexdigest()[:16],
    }
    if corpus.labeller_recall is not None:  # the labeller's recall on the gold sentences: how a tagger trains on it
        record["gold_recall"] = round(corpus.labeller_recall, 4)
    return record


def write_silver(output_dir: str | os.PathLike, corpus: Corpus, label_names: list[str]) -> Path:
    """Write ``corpus`` as the folder's silver split (replacing any there), its tags as ``label_names`` ids."""
    import pyarrow.parquet as pq

    folder = Path(output_dir) / SILVER_DIR
    folder.mkdir(parents=True, exist_ok=True)
    for old in folder.glob("*.parquet"):
        old.unlink()
    ids = {name: i for i, name in enumerate(label_names)}
    rows = [_silver_row(i, sentence, ids) for i, sentence in enumerate(corpus)]
    features = silver_features(label_names)
    for shard, start in enumerate(range(0, len(rows), SILVER_ROWS_PER_SHARD)):
        part = datasets.Dataset.from_list(rows[start : start + SILVER_ROWS_PER_SHARD], features=features)
        pq.write_table(part.data.table, folder / SILVER_PATTERN.format(shard))
    return folder


def _silver_row(index: int, sentence: Any, ids: dict[str, int]) -> dict[str, Any]:
    """One silver row: its ``label_weights`` the sentence's training weights (0.0 on its unknown tokens)."""
    return {
        "id": index,
        "tokens": list(sentence.tokens),
        "ner_tags": [ids[tag] for tag in sentence.tags],
        "label_weights": sentence.training_weights,
        "text": " ".join(sentence.tokens),
        "spans": text_spans(sentence.tokens, sentence.spans),
    }


def recorded_silver(folder: str | os.PathLike) -> dict[str, Any] | None:
    """The manifest's ``silver`` record of a generated folder (:func:`silver_record`); ``None`` without a manifest or
    a split."""
    return read_manifest(folder).silver if Path(folder, MANIFEST_NAME).is_file() else None


def has_silver(folder: str | os.PathLike) -> bool:
    """Whether a generated folder holds its silver split; ``ValueError`` when its manifest records one that is not
    there (deleted: the folder would train and publish a recipe it no longer holds)."""
    return _holds_silver(folder, recorded_silver(folder))


def _holds_silver(folder: str | os.PathLike, record: dict[str, Any] | None) -> bool:
    if any(Path(folder, SILVER_DIR).glob("*.parquet")):
        return True
    if record and record.get("sentences"):
        raise ValueError(
            f"{Path(folder, MANIFEST_NAME)} records a silver split of {record['sentences']} sentences that "
            f"{Path(folder, SILVER_DIR)}/ does not hold: restore it, or write the set again (hf-ecg push-dataset "
            "--no-silver publishes a set without it)"
        )
    return False


def silver_weight_counts(folder: str | os.PathLike) -> dict[str, int] | None:
    """The silver split's ``label_weights``: how many tokens, how many at 0.0 (unknown) and how many between 0 and 1;
    ``None`` when the folder has no split."""
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    shards = sorted(Path(folder, SILVER_DIR).glob("*.parquet"))
    if not shards:
        return None
    weights = pc.list_flatten(pq.ParquetDataset(shards).read(columns=["label_weights"]).column("label_weights"))
    unknown = pc.sum(pc.equal(weights, 0.0)).as_py() or 0
    below_one = pc.sum(pc.less(weights, 1.0)).as_py() or 0
    return {"tokens": len(weights), "unknown": unknown, "fractional": below_one - unknown}


def load_silver(folder: str | os.PathLike) -> Corpus | None:
    """A generated folder's silver split as a corpus named ``FOLDER (silver)``; ``None`` when it has none
    (``ValueError`` when its manifest records one it lacks: :func:`has_silver`)."""
    from .corpus import load_corpus

    record = recorded_silver(folder)  # read once: whether the split should be there, and its labeller's recall
    if not _holds_silver(folder, record):
        return None
    shards = sorted(str(shard) for shard in Path(folder, SILVER_DIR).glob("*.parquet"))
    rows = datasets.load_dataset("parquet", data_files=shards, split="train")
    weighted = "label_weights" in rows.column_names
    name = f"{Path(folder).name} (silver)"
    corpus = load_corpus(rows.remove_columns(["label_weights"]) if weighted else rows, name=name)
    corpus.weak = True  # the user's text labelled by their dictionary
    corpus.labeller_recall = (record or {}).get("gold_recall")
    if not weighted:  # a split written before the weights: every label known
        return corpus
    return with_label_weights(corpus, rows["label_weights"])


def with_label_weights(corpus: Corpus, weights: Sequence[Sequence[float]]) -> Corpus:
    """``corpus`` with each sentence's ``label_weights`` row read: its words of weight 0
    :attr:`~hf_ecg.data.corpus.Sentence.unknown`, and its weights kept when some are fractional."""
    sentences = [
        replace(
            sentence,
            unknown=tuple(k for k, weight in enumerate(row) if weight == 0),
            weights=tuple(row) if any(0 < weight < 1 for weight in row) else (),
        )
        for sentence, row in zip(corpus.sentences, weights, strict=True)
    ]
    return replace(corpus, sentences=sentences)
