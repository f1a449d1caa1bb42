"""The generated-dataset format, in one place: a folder with ``ecg_generation.json`` (the manifest:
entity types, ``ner_tags`` label names, sample count, how the data was made) and ``data/train-NNNNN.parquet``
shards in the :func:`dataset_features` schema. :func:`~hf_ecg.generate_dataset`, the baselines and
selection write it; the cards, the Hub folders, export and evaluation read it through here. Imports
neither torch nor transformers.
"""

from __future__ import annotations

import logging
import os
import shutil
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import datasets

from .manifest import (
    MANIFEST_NAME,
    GenerationManifest,
    MentionsRecord,
    bio_labels,
    read_manifest,
    write_manifest,
)

logger = logging.getLogger(__name__)

__all__ = [
    "ADDED_COLUMNS",
    "DECODER_COLUMNS",
    "FAMILY_COLUMNS",
    "GENERATION_COLUMNS",
    "MANIFEST_NAME",
    "SHARD_PATTERN",
    "STEP_COLUMNS",
    "TRANSFER_COLUMNS",
    "UNFINISHED_DIR",
    "GenerationManifest",
    "MentionsRecord",
    "ShardLayout",
    "align_labels",
    "bio_labels",
    "check_or_write_manifest",
    "columns_of_folder",
    "dataset_features",
    "finish_folder",
    "load_data_folder",
    "ner_label_names",
    "read_generated",
    "read_manifest",
    "shard_rows",
    "write_manifest",
    "write_shard",
    "write_unfinished_card",
]

SHARD_PATTERN = "train-{:05d}.parquet"
#: Where the shards of a run in progress wait: ``load_dataset`` reads ``data/`` only (the card's ``configs``), so
#: an interrupted run cannot pass for a whole dataset. :func:`finish_folder` moves them to ``data/``.
UNFINISHED_DIR = "unfinished"
#: The command that resumes an unfinished run, written beside its shards.
RESUME_FILE = "resume.txt"
#: The card's ``configs`` header: ``load_dataset(folder)`` reads ``data/`` and nothing else of the folder.
DATA_FILES_HEADER = """---
configs:
- config_name: default
  data_files:
  - split: train
    path: data/train-*.parquet
---
"""


def ner_label_names(entity_types: Sequence[str], label_names: Sequence[str] | None = None) -> list[str]:
    """The ``ClassLabel`` names of generated ``ner_tags``: ``label_names`` (a gold dataset's, in its order,
    so that the two concatenate) when given, else :func:`bio_labels`. ``label_names`` must hold ``O`` and
    the IOB2 ``B-``/``I-`` label of every type in ``entity_types``; it may hold more."""
    if label_names is None:
        return bio_labels(entity_types)
    names = list(label_names)
    if len(set(names)) != len(names):
        raise ValueError(f"label names must be unique, got {names}")
    missing = [name for name in bio_labels(entity_types) if name not in names]
    if missing:
        raise ValueError(
            f"the label names {names} lack {missing}: generated tags are IOB2 (O, B-TYPE, I-TYPE) over the "
            f"types {', '.join(entity_types)}"
        )
    return names


def align_labels(
    dataset: datasets.Dataset, label_names: Sequence[str] | datasets.Dataset, column: str = "ner_tags"
) -> datasets.Dataset:
    """``dataset`` with its ``column`` ids re-numbered to ``label_names`` (a list, or a dataset whose
    ``column`` is a sequence of ``ClassLabel``), so that it concatenates with a gold dataset::

        synthetic = hf_ecg.align_labels(synthetic, gold)
        datasets.concatenate_datasets([gold.select_columns(["tokens", "ner_tags"]),
                                       synthetic.select_columns(["tokens", "ner_tags"])])

    (``Dataset.align_labels_with_mapping`` does this for a ``ClassLabel`` column, not for a sequence of
    them.) Every label the dataset uses must be among ``label_names``; the ids keep their meaning.
    """
    from .corpus import _label_names_of

    if isinstance(label_names, datasets.Dataset):
        names = _label_names_of(label_names.features.get(column))
        if names is None:
            raise ValueError(f"the {column!r} column of {label_names} is not a sequence of ClassLabel")
    else:
        names = list(label_names)
    current = _label_names_of(dataset.features.get(column))
    if current is None:
        raise ValueError(f"the {column!r} column of {dataset} is not a sequence of ClassLabel")
    if current == names:
        return dataset
    used = sorted({current[k] for row in dataset.data.column(column).to_pylist() for k in row})
    unknown = [name for name in used if name not in names]
    if unknown:
        raise ValueError(f"labels {unknown} of the dataset are not among the label names {names}")
    new_id = [names.index(name) if name in names else -1 for name in current]
    features = dataset.features.copy()
    features[column] = datasets.Sequence(datasets.ClassLabel(names=names))
    return dataset.map(
        lambda row: {column: [new_id[k] for k in row[column]]}, features=features, desc="Aligning labels"
    )


def dataset_features(entity_types: Sequence[str], label_names: Sequence[str] | None = None) -> datasets.Features:
    """The schema of a generated dataset; ``ner_tags`` is a ``Sequence(ClassLabel)`` of
    :func:`ner_label_names` (``label_names`` in their order, or :func:`bio_labels`)."""
    return datasets.Features(
        {
            "id": datasets.Value("int64"),
            "tokens": datasets.Sequence(datasets.Value("string")),
            "ner_tags": datasets.Sequence(datasets.ClassLabel(names=ner_label_names(entity_types, label_names))),
            "entities": datasets.Sequence(datasets.Value("string")),
            "template": datasets.Value("string"),
            "text": datasets.Value("string"),
            # Each entity as character offsets into text and its type (tags.text_spans).
            "spans": datasets.List(
                {"start": datasets.Value("int32"), "end": datasets.Value("int32"), "label": datasets.Value("string")}
            ),
            "forced_tags": datasets.Value("int32"),
            "cut_blocks": datasets.Value("int32"),
            "complete": datasets.Value("bool"),
            # Words of the O text that spell a tag's name (Dise, ase: hf_ecg.runtime.tag_pieces).
            "tag_pieces": datasets.Value("int32"),
            # What the sample cost: the generator's tokens for its kept blocks, and for blocks drawn again.
            "model_tokens": datasets.Value("int32"),
            "redrawn_tokens": datasets.Value("int32"),
            # Blocks kept as they were (tries left) because the redraw budget was spent.
            "refused_redraws": datasets.Value("int32"),
            # Where each entity's mention came from (mention_sources.MentionOrigin: generated, bank, lists, user).
            "mention_sources": datasets.Sequence(datasets.Value("string")),
        }
    )


#: Columns added after the first release: a folder begun without one keeps its columns when it resumes.
ADDED_COLUMNS = ("spans", "tag_pieces", "model_tokens", "redrawn_tokens", "refused_redraws", "mention_sources")
#: The decoder's statistics of each sample: written by the families that decode (ECG-QALM), absent where no decoder
#: wrote the sample (a baseline's gold sentences, their mentions kept or swapped), never zero-filled.
DECODER_COLUMNS = (
    "forced_tags",
    "cut_blocks",
    "complete",
    "tag_pieces",
    "model_tokens",
    "redrawn_tokens",
    "refused_redraws",
)
#: Columns only generation writes: the baselines' folders lack them.
GENERATION_COLUMNS = (*DECODER_COLUMNS, "mention_sources")
#: Columns a step after generation adds, with their dtype: selection's ``relabel`` rule counts the words it
#: relabelled per sample.
STEP_COLUMNS = {"relabelled": "int32"}
#: Columns a family adds, with their dtype: a sketch sample's overlap with its source sentence (the longest run of
#: words outside the mentions they share, the share of its words the source lacks), whether it reads whole and whether
#: it keeps its sketch's words (``hf_ecg.synthetic.genius.candidate_score``), and the sketch it was written for.
FAMILY_COLUMNS = {
    "source_shared_run": "int32",
    "source_new_share": "float32",
    "whole": "bool",
    "keeps_sketch": "bool",
    "sketch": "string",
}

#: A style transfer's columns beside :data:`FAMILY_COLUMNS` (:mod:`hf_ecg.synthetic.transfer`): how target-like the
#: kept candidate reads and how close it is to its source sentence.
TRANSFER_COLUMNS = {"target_likeness": "float32", "adequacy": "float32"}


def columns_of_folder(data_dir: Path, features: datasets.Features) -> datasets.Features:
    """``features`` less the :data:`ADDED_COLUMNS` that the folder's first shard lacks, so that a folder
    an older hf_ecg began resumes with shards of one schema."""
    import pyarrow.parquet as pq

    for shard in sorted(data_dir.glob("train-*.parquet"))[:1]:
        try:
            present = set(pq.read_schema(shard).names)
        except Exception:  # unreadable: it is written again
            break
        return datasets.Features({k: v for k, v in features.items() if k in present or k not in ADDED_COLUMNS})
    return features


def shard_rows(path: Path) -> int | None:
    import pyarrow.parquet as pq

    try:
        return pq.read_metadata(path).num_rows
    except Exception:  # unreadable: treat as missing and write it again
        return None


@dataclass
class ShardLayout:
    """A folder's shards: shard ``s`` holds ids ``[s*S, (s+1)*S)``, in ``unfinished/`` until the run ends."""

    output_dir: Path
    num_samples: int
    per_shard: int

    @property
    def count(self) -> int:
        return (self.num_samples + self.per_shard - 1) // self.per_shard

    def ids(self, shard: int) -> range:
        return range(shard * self.per_shard, min((shard + 1) * self.per_shard, self.num_samples))

    def groups(self, together: int) -> list[list[int]]:
        """The shards in consecutive groups of ``together`` (the last may hold fewer): the unit a process writes,
        fixed by the shard indices alone."""
        return [list(range(g, min(g + together, self.count))) for g in range(0, self.count, together)]

    def stray(self) -> list[str]:
        """The shard files in ``data/`` or ``unfinished/`` that this layout has no place for (relative paths):
        another run's, or a user's copy; read with the rest, they would be counted as this dataset's samples."""
        expected = {SHARD_PATTERN.format(shard) for shard in range(self.count)}
        return [
            f"{folder}/{path.name}"
            for folder in ("data", UNFINISHED_DIR)
            for path in sorted((self.output_dir / folder).glob("train-*.parquet"))
            if path.name not in expected
        ]

    def done(self, shard: int) -> bool:  # shards of folders begun before unfinished/ may sit in data/
        name = SHARD_PATTERN.format(shard)
        places = (self.output_dir / UNFINISHED_DIR / name, self.output_dir / "data" / name)
        return len(self.ids(shard)) in tuple(shard_rows(path) for path in places)


def write_unfinished_card(output_dir: str | os.PathLike, num_samples: int, resume: str) -> None:
    """The folder's ``README.md`` while a run is under way: the ``configs`` header (so that ``load_dataset``
    reads ``data/``, empty until the run completes, and not the manifest) and how to resume; ``resume``
    (the command, or the call) is also kept beside the unfinished shards for the readers' errors."""
    path = Path(output_dir)
    (path / UNFINISHED_DIR).mkdir(parents=True, exist_ok=True)
    (path / UNFINISHED_DIR / RESUME_FILE).write_text(resume + "\n", encoding="utf-8")
    (path / "README.md").write_text(
        f"{DATA_FILES_HEADER}\n# Unfinished hf_ecg dataset\n\nA generation of {num_samples} samples is under way "
        f"or was interrupted: its shards wait in `{UNFINISHED_DIR}/`, and `data/` is filled when it completes. "
        f"Resume it with:\n\n```\n{resume}\n```\n",
        encoding="utf-8",
    )


def finish_folder(output_dir: str | os.PathLike) -> None:
    """Move a completed run's shards from :data:`UNFINISHED_DIR` into ``data/`` (one rename when ``data/``
    is new) and remove the unfinished folder."""
    path = Path(output_dir)
    unfinished, data_dir = path / UNFINISHED_DIR, path / "data"
    if not unfinished.is_dir():
        return
    (unfinished / RESUME_FILE).unlink(missing_ok=True)
    for tmp in unfinished.glob(".tmp-*"):
        tmp.unlink()
    if not data_dir.exists():
        os.replace(unfinished, data_dir)
        return
    for shard in sorted(unfinished.glob("*.parquet")):
        os.replace(shard, data_dir / shard.name)
    unfinished.rmdir()


def unfinished_message(output_dir: str | os.PathLike, written: int, num_samples: int) -> str:
    """What a reader says of a folder whose run has not completed, with the command that resumes it."""
    path = Path(output_dir)
    resume_file = path / UNFINISHED_DIR / RESUME_FILE
    resume = resume_file.read_text(encoding="utf-8").strip() if resume_file.is_file() else ""
    return f"{path} is an unfinished generation ({written} of {num_samples} samples written): " + (
        f"resume it with `{resume}`" if resume else "finish it first (run the same `hf-ecg generate` again)"
    )


def read_generated(
    output_dir: str | os.PathLike, columns: Sequence[str] | None = None
) -> tuple[GenerationManifest, Any]:
    """The manifest and the rows (a ``pyarrow.Table``, shards in order) of a finished generated folder.

    ``columns`` reads only those of them the shards have (default: all). Raises ``FileNotFoundError`` for a
    folder without a manifest and ``ValueError`` for an unfinished generation.
    """
    import pyarrow.parquet as pq

    output_dir = Path(output_dir)
    manifest = read_manifest(output_dir)
    shards = sorted((output_dir / "data").glob("*.parquet"))
    table = None
    if shards:
        present = pq.read_schema(shards[0]).names
        wanted = None if columns is None else [c for c in columns if c in present]
        table = pq.ParquetDataset(shards).read(columns=wanted)
    found = 0 if table is None else table.num_rows
    if found != manifest.num_samples or (output_dir / UNFINISHED_DIR).is_dir():
        waiting = sum(shard_rows(shard) or 0 for shard in (output_dir / UNFINISHED_DIR).glob("*.parquet"))
        raise ValueError(unfinished_message(output_dir, found + waiting, manifest.num_samples))
    return manifest, table


def load_data_folder(folder: str | os.PathLike) -> datasets.Dataset:
    """The ``data/*.parquet`` shards of a dataset folder as a :class:`datasets.Dataset` (features from the
    shards' own metadata).

    Not ``datasets.load_dataset(folder)``: datasets 5.2 keys the cache of a local folder whose card has a
    ``configs`` header by the folder's name and card alone, not its files, so a folder rewritten in place, or
    another folder of the same name, reads as the rows cached first. Named files are hashed with their mtimes.
    """
    shards = sorted(str(shard) for shard in Path(folder, "data").glob("*.parquet"))
    if not shards:
        raise FileNotFoundError(f"{folder} is a folder without data/*.parquet: not a dataset hf-ecg wrote")
    return datasets.load_dataset("parquet", data_files=shards, split="train")


def write_shard(rows: list[dict[str, Any]], features: datasets.Features, data_dir: Path, shard: int, rank: int) -> None:
    """Write ``rows`` as shard number ``shard`` of ``data_dir`` (atomically: a shard on disk is complete);
    ``rank`` names the temporary file of a process under ``accelerate``."""
    import pyarrow.parquet as pq

    data_dir.mkdir(parents=True, exist_ok=True)
    final = data_dir / SHARD_PATTERN.format(shard)
    tmp = data_dir / f".tmp-{rank}-{final.name}"
    rows = [{name: row[name] for name in features} for row in rows]
    table = datasets.Dataset.from_list(rows, features=features).data.table  # carries the features metadata
    pq.write_table(table, tmp)
    os.replace(tmp, final)  # atomic: a shard on disk is complete


def check_or_write_manifest(output_dir: Path, manifest: GenerationManifest, overwrite: bool) -> bool:
    """Check a folder's manifest against this run's (same settings: resume), or write it; ``True`` when this
    run starts the folder (new, or overwritten). ``overwrite`` starts again whatever the settings, never resumes:
    every entry of the folder (a dataset hf_ecg wrote, checked before) is removed, and the log says which."""
    if overwrite and (output_dir / MANIFEST_NAME).is_file():
        removed = sorted(entry.name for entry in output_dir.iterdir())
        for entry in output_dir.iterdir():
            shutil.rmtree(entry) if entry.is_dir() and not entry.is_symlink() else entry.unlink()
        logger.warning("overwrite: starting %s again; removed %s", output_dir, ", ".join(removed))
    elif (output_dir / MANIFEST_NAME).is_file():
        previous = read_manifest(output_dir)  # any version, read as this one
        if previous.model_fingerprint is None:  # folders begun before it was recorded: unchecked
            previous = replace(previous, model_fingerprint=manifest.model_fingerprint)
        before, now = previous.run_settings(), manifest.run_settings()
        if before == now:
            return False
        if previous.model_fingerprint != manifest.model_fingerprint:
            raise ValueError(
                f"{output_dir} was begun with another model: {manifest.model} changed since (fingerprint "
                f"{previous.model_fingerprint}, now {manifest.model_fingerprint}), and its samples would be "
                "mixed with the earlier model's; use another folder, or overwrite=True (--overwrite) to start again"
            )
        changed = sorted(k for k in now.keys() | before.keys() if now.get(k) != before.get(k))
        raise ValueError(
            f"{output_dir} holds a dataset generated with other settings (differing: {', '.join(changed)}); "
            "use another folder, the same settings to resume, or overwrite=True (--overwrite)"
        )
    write_manifest(output_dir, manifest)
    return True
