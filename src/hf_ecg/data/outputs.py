"""The one rule for every folder hf_ecg writes: nothing of the user's is ever written over or deleted.

An output folder is accepted when it is new, empty, or hf_ecg's own output of the same kind (it holds the
kind's marker file, and nothing but what hf_ecg writes for that kind, at every depth). A folder holding
anything else is refused, ``--overwrite`` included, naming what is in the way; ``--overwrite`` removes only
hf_ecg's own entries. An output inside one of the command's inputs, or holding one, is refused too. A report
file (:func:`check_output_file`) is refused when it exists, unless ``--overwrite``, and always when it is one of
the command's inputs or inside one.

Kinds (:data:`OUTPUT_KINDS`): ``dataset`` (``generate``, ``filter``, ``baseline``, ``push-dataset
--local-dir``), ``model`` (``train``, ``push-model --local-dir``), ``blocks`` (``blocks``).
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from fnmatch import fnmatch
from pathlib import Path

from ..runtime.ecg_config import ECG_CONFIG_NAME

__all__ = [
    "BLOCKS",
    "DATASET",
    "MODEL",
    "OUTPUT_KINDS",
    "OWN_SENTENCES_DIR",
    "TRAINING_RECORD",
    "OutputKind",
    "check_output",
    "check_output_file",
    "prepare_output",
    "refuse_inputs",
]


@dataclass(frozen=True)
class OutputKind:
    """What hf_ecg writes in a folder of one kind.

    ``markers``: names (glob patterns) of which one says hf_ecg wrote the folder; ``entries``: the names it
    writes at the top; ``nested``: for a folder among them, the names it writes inside it (a folder missing
    here holds only what hf_ecg wrote, e.g. a Trainer checkpoint).
    """

    name: str
    markers: tuple[str, ...]
    entries: tuple[str, ...]
    nested: Mapping[str, tuple[str, ...]] = field(default_factory=dict)

    def is_own(self, folder: Path) -> bool:
        """Whether ``folder`` holds one of the kind's markers."""
        return any(_matches(entry.name, self.markers) for entry in folder.iterdir())

    def foreign(self, folder: Path) -> list[str]:
        """The entries of ``folder`` (relative paths) that hf_ecg does not write for this kind."""
        found = []
        for entry in sorted(folder.iterdir()):
            if not _matches(entry.name, self.entries):
                found.append(entry.name)
                continue
            inside = next((names for pattern, names in self.nested.items() if fnmatch(entry.name, pattern)), None)
            if inside is not None and entry.is_dir():
                found += [f"{entry.name}/{e.name}" for e in sorted(entry.iterdir()) if not _matches(e.name, inside)]
        return found


def _matches(name: str, patterns: Iterable[str]) -> bool:
    return any(fnmatch(name, pattern) for pattern in patterns)


_SHARDS = ("train-*.parquet", ".tmp-*")
#: A dataset folder: shards, manifest, card (hf_ecg.data.dataset_format).
DATASET = OutputKind(
    "dataset",
    markers=("ecg_generation.json",),
    entries=("ecg_generation.json", "README.md", "data", "unfinished", "silver", "baseline.json", ".gitattributes"),
    nested={"data": _SHARDS, "unfinished": (*_SHARDS, "resume.txt"), "silver": ("silver-*.parquet",)},
)
#: Inside a model's folder, the sentences the first of its two trainings wrote (hf_ecg.training.own_sentences).
OWN_SENTENCES_DIR = "own-sentences"
#: In a model's folder, the record of its training: what shaped the weights, and whether it finished
#: (hf_ecg.training.train compares it on resume).
TRAINING_RECORD = "ecg_training_run.json"
#: A trained generator: what ``save_pretrained`` and the Trainer write, plus the ECG files and the card.
MODEL = OutputKind(
    "model",
    # the training record is written before the first step: a run killed then has left only it
    markers=(ECG_CONFIG_NAME, "checkpoint-*", TRAINING_RECORD),
    entries=(
        ECG_CONFIG_NAME,
        "ecg_card.json",
        TRAINING_RECORD,
        "README.md",
        "config.json",
        "generation_config.json",
        "*.safetensors",
        "*.safetensors.index.json",
        "*.bin",
        "tokenizer*",
        "special_tokens_map.json",
        "vocab.json",
        "merges.txt",
        "added_tokens.json",
        "chat_template.jinja",
        "*.py",  # the pipeline's code, which push-model writes beside the weights
        "adapter_config.json",
        "checkpoint-*",
        "runs",
        "all_results.json",
        "train_results.json",
        "eval_results.json",
        "trainer_state.json",
        ".gitattributes",
        OWN_SENTENCES_DIR,
    ),
    nested={OWN_SENTENCES_DIR: DATASET.entries},
)
_SPLITS = ("train", "validation", "test")
#: Q&A blocks: a ``DatasetDict.save_to_disk`` and the corpus statistics.
BLOCKS = OutputKind(
    "blocks",
    markers=("corpus_stats.json",),
    entries=("corpus_stats.json", "dataset_dict.json", *_SPLITS),
    nested={split: ("data-*.arrow", "dataset_info.json", "state.json", "cache-*") for split in _SPLITS},
)
OUTPUT_KINDS = {kind.name: kind for kind in (DATASET, MODEL, BLOCKS)}


def check_output(output: str | os.PathLike, kind: OutputKind, *, inputs: Iterable[str | os.PathLike] = ()) -> bool:
    """Refuse an ``output`` folder that is a file, inside one of ``inputs`` or holding one (``ValueError``),
    or not new, empty or hf_ecg's own ``kind`` of output (``FileExistsError`` naming what is in the way).
    Returns whether it holds an earlier output of the kind."""
    path = Path(output)
    refuse_inputs(path, inputs, holding=True)
    if path.exists() and not path.is_dir():
        raise FileExistsError(f"{path} exists and is a file: the output is a folder; give a new or empty folder")
    if not path.is_dir() or not any(path.iterdir()):
        return False
    other = next((o for o in OUTPUT_KINDS.values() if o is not kind and not kind.is_own(path) and o.is_own(path)), None)
    if other is not None:
        raise FileExistsError(
            f"{path} holds a {other.name} hf_ecg wrote: the output is a {kind.name}; give a new or empty folder"
        )
    foreign = kind.foreign(path) if kind.is_own(path) else sorted(e.name for e in path.iterdir())
    if foreign:
        raise FileExistsError(
            f"{path} holds files hf_ecg did not write ({_shown(foreign)}): give a new or empty "
            f"folder (--overwrite replaces only a {kind.name} hf_ecg wrote)"
        )
    return True


def prepare_output(
    output: str | os.PathLike,
    kind: OutputKind,
    *,
    overwrite: bool = False,
    inputs: Iterable[str | os.PathLike] = (),
    dry_run: bool = False,
) -> Path:
    """Make ``output`` ready for a new ``kind`` of output under :func:`check_output`'s rule: an earlier output
    of the kind is refused (``ValueError``) unless ``overwrite``, which removes hf_ecg's entries only.
    ``dry_run`` checks and changes nothing (a command checks before its long work, and prepares after)."""
    path = Path(output)
    if check_output(path, kind, inputs=inputs):
        if not overwrite:
            raise ValueError(
                f"{path} holds another {kind.name} hf_ecg wrote: use another folder, or "
                "overwrite=True (--overwrite) to replace it"
            )
        if not dry_run:
            for entry in path.iterdir():
                shutil.rmtree(entry) if entry.is_dir() and not entry.is_symlink() else entry.unlink()
    if not dry_run:
        path.mkdir(parents=True, exist_ok=True)
    return path


def check_output_file(
    output: str | os.PathLike, *, overwrite: bool = False, inputs: Iterable[str | os.PathLike] = ()
) -> Path:
    """Refuse an output file (a report) that is one of ``inputs`` or inside one, or inside a folder hf_ecg wrote,
    whatever ``overwrite`` says (``ValueError``), that is a folder, or that exists unless ``overwrite``
    (``FileExistsError``). Checked before a command's work, so that nothing is lost and no run is wasted."""
    path = Path(output)
    resolved = refuse_inputs(path, inputs, holding=False)
    if path.is_dir():
        raise FileExistsError(f"{path} is a folder: the output is a file, e.g. {path / 'report.json'}")
    for folder in resolved.parents:
        try:
            kind = next((kind for kind in OUTPUT_KINDS.values() if folder.is_dir() and kind.is_own(folder)), None)
        except OSError:  # a folder we may not list holds nothing hf_ecg wrote for this user
            kind = None
        if kind is not None:
            raise ValueError(f"{path} is inside the {kind.name} folder {folder} hf_ecg wrote: write it elsewhere")
    if path.exists() and not overwrite:
        raise FileExistsError(f"{path} exists: give a new file, or --overwrite to replace it")
    return path


def refuse_inputs(path: Path, inputs: Iterable[str | os.PathLike], *, holding: bool) -> Path:
    """``ValueError`` when ``path`` is one of ``inputs`` (a hard link to one too) or inside one (or, with
    ``holding``, a folder that holds one); its resolved path otherwise."""
    resolved = path.resolve()
    for source in inputs:
        source_path = Path(source).resolve()
        inside = resolved == source_path or source_path in resolved.parents or _same_file(resolved, source_path)
        if inside or (holding and resolved in source_path.parents):
            what = "is, holds or is inside" if holding else "is or is inside"
            raise ValueError(f"{path} {what} the input {source}: write the output somewhere else")
    return resolved


def _same_file(path: Path, other: Path) -> bool:
    """Whether two existing paths are one file under two names (a hard link)."""
    try:
        return path.is_file() and other.is_file() and os.path.samefile(path, other)
    except OSError:
        return False


def _shown(names: list[str]) -> str:
    return ", ".join(names[:5]) + (f" and {len(names) - 5} more" if len(names) > 5 else "")
