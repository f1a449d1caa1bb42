"""Silver sentences: the user's own text labelled by their name dictionary (distant supervision), kept beside the
generated samples as the folder's ``silver`` split, so that the folder holds a recipe's whole synthetic side.

::

    DIR/data/train-*.parquet     the generated samples (split ``train``)
    DIR/silver/silver-*.parquet  the silver sentences (split ``silver``): id, tokens, ner_tags, text, spans

The split is the row's origin: ``datasets.load_dataset(DIR)`` gives both, ``hf-ecg evaluate ner --synthetic DIR``
trains on both, and the manifest's ``silver`` record says how many there are and what labelled them.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any

import datasets

from ..runtime.tags import text_spans
from .corpus import Corpus

__all__ = ["SILVER_DIR", "SILVER_PATTERN", "load_silver", "silver_record", "write_silver"]

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
            "text": datasets.Value("string"),
            "spans": datasets.List(
                {"start": datasets.Value("int32"), "end": datasets.Value("int32"), "label": datasets.Value("string")}
            ),
        }
    )


def silver_record(corpus: Corpus, labelled_by: str) -> dict[str, Any]:
    """The manifest's ``silver`` record: how many sentences and entities, what labelled them, and a digest of the
    sentences and their labels (a resumed run with other text or another dictionary is refused)."""
    content = json.dumps([[list(s.tokens), s.tags] for s in corpus], ensure_ascii=False).encode("utf-8")
    return {
        "sentences": len(corpus),
        "entities": sum(len(s.spans) for s in corpus),
        "labelled_by": labelled_by,
        "digest": hashlib.sha256(content).hexdigest()[:16],
    }


def write_silver(output_dir: str | os.PathLike, corpus: Corpus, label_names: list[str]) -> Path:
    """Write ``corpus`` as the folder's silver split (replacing any there), its tags as ``label_names`` ids."""
    import pyarrow.parquet as pq

    folder = Path(output_dir) / SILVER_DIR
    folder.mkdir(parents=True, exist_ok=True)
    for old in folder.glob("*.parquet"):
        old.unlink()
    ids = {name: i for i, name in enumerate(label_names)}
    rows = [
        {
            "id": i,
            "tokens": list(s.tokens),
            "ner_tags": [ids[tag] for tag in s.tags],
            "text": " ".join(s.tokens),
            "spans": text_spans(s.tokens, s.spans),
        }
        for i, s in enumerate(corpus)
    ]
    features = silver_features(label_names)
    for shard, start in enumerate(range(0, len(rows), SILVER_ROWS_PER_SHARD)):
        part = datasets.Dataset.from_list(rows[start : start + SILVER_ROWS_PER_SHARD], features=features)
        pq.write_table(part.data.table, folder / SILVER_PATTERN.format(shard))
    return folder


def load_silver(folder: str | os.PathLike) -> Corpus | None:
    """A generated folder's silver split as a corpus named ``FOLDER (silver)``; ``None`` when it has none."""
    from .corpus import load_corpus

    shards = sorted(str(shard) for shard in Path(folder, SILVER_DIR).glob("*.parquet"))
    if not shards:
        return None
    rows = datasets.load_dataset("parquet", data_files=shards, split="train")
    return load_corpus(rows, name=f"{Path(folder).name} (silver)")
