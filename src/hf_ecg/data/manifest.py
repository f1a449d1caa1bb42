"""The generation manifest, ``ecg_generation.json``: what a generated folder holds and how it was made
(:class:`GenerationManifest`, with a schema version and one :meth:`~GenerationManifest.migrate` that reads every
older version), and where its mentions came from (:class:`MentionsRecord`). Written by
:func:`~hf_ecg.generate_dataset`, the baselines and ``hf-ecg filter``; read by the cards, export, evaluation
and a resumed run. Imports neither torch nor transformers.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field, fields, replace
from pathlib import Path
from typing import Any

from ..runtime.decoding_config import DecodingConfig
from ..runtime.files import read_json
from ..runtime.mention_sources import MentionSource, resolve_mentions
from ..runtime.mentions import FILL_STRATEGIES, MentionBank

__all__ = [
    "MANIFEST_NAME",
    "MANIFEST_VERSION",
    "GenerationManifest",
    "MentionsRecord",
    "mark_unchecked",
    "read_manifest",
    "write_manifest",
]

MANIFEST_NAME = "ecg_generation.json"
#: 2: the version is recorded, ``mentions`` is a record; 1 (no ``format_version``): the folders before, whose
#: later fields :meth:`GenerationManifest.migrate` fills as those runs behaved.
MANIFEST_VERSION = 2

#: Decoding options that changed the default output when they were added (version-1 folders ran without them).
_ADDED_REDRAW_RULES = ("redraw_unended", "redraw_repetition", "redraw_run_on", "redraw_tag_pieces")
#: Settings added within version 1, as folders written before them ran: every redraw allowed, no budget.
_BEFORE_ADDED = {**dict.fromkeys(_ADDED_REDRAW_RULES, False), "redraw_budget": None}


def bio_labels(entity_types: list[str] | tuple[str, ...]) -> list[str]:
    """``["O", "B-A", "I-A", "B-B", ...]`` for the sorted entity types: the ClassLabel names."""
    return ["O", *(f"{prefix}-{label}" for label in sorted(entity_types) for prefix in ("B", "I"))]


@dataclass(frozen=True)
class MentionsRecord:
    """Where the mentions of a generated folder came from, as its manifest's ``mentions`` entry records it.

    ``source`` is ``"bank"`` (real mentions of a corpus drawn with ``strategy`` ``random`` or ``weighted``;
    ``bank`` says whose: the ``generator``'s saved bank or the ``corpus`` given at generation), ``"file"``
    (the user's JSON file at ``path``), ``"user"`` (a dict or bank passed in code, recorded only as a
    ``digest``: the manifest must not repeat private mentions) or ``"lists"`` (the user's plain-text mention
    lists, ``{type: file}`` in ``lists``, their mentions' ``digest``, so that a resumed run with a changed
    list is refused; the other types from ``bank`` when it is set) or ``"dictionary"`` (the user's name dictionary:
    how many ``names`` per type, their ``digest``, and ``text_sentences`` when they are the names the user's text
    holds, drawn by how often; the other types from ``bank`` when it is set) or ``"generated"`` (written by the
    generator in context; ``bank`` fills the slots whose every try was rejected) or ``"mixture"`` (a
    :class:`~hf_ecg.runtime.mention_sources.MentionMixture`: ``shares`` per part, normalized; its lists as ``lists``
    and ``digest``, or ``path`` for a JSON file; ``bank`` when some mentions are drawn from a bank).
    """

    source: str
    strategy: str | None = None
    bank: str | None = None
    path: str | None = None
    digest: str | None = None
    lists: dict[str, str] | None = None
    shares: dict[str, float] | None = None
    names: dict[str, int] | None = None
    text_sentences: int | None = None

    def __post_init__(self) -> None:
        known = [source.value for source in MentionSource]
        if self.source not in known:
            raise ValueError(f"unknown mention source {self.source!r}; known: {', '.join(known)}")

    @classmethod
    def from_mentions(cls, mentions: Any, bank: Any, from_corpus: bool) -> MentionsRecord:
        """The record of a ``mentions=`` value (:data:`~hf_ecg.runtime.mention_sources.Mentions`, or ``None``);
        ``bank`` is the resolved :class:`~hf_ecg.MentionBank`, digested for ``user`` sources."""
        whose = "corpus" if from_corpus else "generator"
        resolved = resolve_mentions(mentions or FILL_STRATEGIES[0])
        if resolved.kind is MentionSource.MIXTURE:
            shares = {part: round(share, 6) for part, share in mentions.normalized().items()}
            part = cls.from_mentions(mentions.source("lists"), bank, from_corpus) if "lists" in shares else None
            uses_bank = "bank" in shares or "generated" in shares or (part is not None and part.real)
            return cls(
                "mixture",
                strategy=mentions.strategy,
                bank=whose if uses_bank else None,
                path=part.path if part else None,
                digest=part.digest if part else None,
                lists=part.lists if part else None,
                shares=shares,
                names=part.names if part else None,
                text_sentences=part.text_sentences if part else None,
            )
        if resolved.kind in (MentionSource.GENERATED, MentionSource.BANK):
            return cls(resolved.kind.value, strategy=resolved.strategy, bank=whose)
        if resolved.kind is MentionSource.LISTS:
            files = resolved.lists.list_files()
            listed = MentionBank({label: bank.counts(label) for label in files})
            others = set(bank.types) - set(files)
            return cls(
                "lists",
                strategy=resolved.strategy,
                bank=whose if others else None,
                digest=_digest(listed),
                lists={label: str(file) for label, file in sorted(files.items())},
            )
        if resolved.kind is MentionSource.DICTIONARY:
            names = resolved.names.names
            return cls(
                "dictionary",
                strategy=resolved.strategy,
                bank=whose if set(bank.types) - set(names.types) else None,
                digest=_digest(names),
                names={label: len(names.counts(label)) for label in names.types},
                text_sentences=resolved.names.text_sentences,
            )
        if resolved.kind is MentionSource.FILE:
            return cls("file", path=str(mentions))
        return cls("user", digest=_digest(bank))

    @classmethod
    def from_version_1(cls, value: str | None, corpus: str | None) -> MentionsRecord:
        """The record of a generator's folder written before it existed: a strategy name or ``None`` (random),
        ``user mentions DIGEST``, or a file's path."""
        if value is None or value in FILL_STRATEGIES:
            return cls("bank", strategy=value or FILL_STRATEGIES[0], bank="corpus" if corpus else "generator")
        if value.startswith("user mentions "):
            return cls("user", digest=value.split()[-1])
        return cls("file", path=value)

    def to_dict(self) -> dict[str, Any]:
        return {key: value for key, value in asdict(self).items() if value is not None}

    @property
    def real(self) -> bool:
        """Whether some mentions are the real ones of a corpus (a mention bank, alone or beside lists)."""
        return self.source in ("bank", "generated") or (
            self.source in ("lists", "dictionary", "mixture") and self.bank is not None
        )


def _digest(bank: MentionBank) -> str:
    """A short fingerprint of a bank's mentions and counts (what a manifest records of private mentions)."""
    return hashlib.sha256(json.dumps(bank.to_dict(), sort_keys=True).encode()).hexdigest()[:16]


#: What a finished run adds to its manifest; not settings, so a resumed run does not compare them.
RESULT_FIELDS = (
    "generation_cost",
    "mention_novelty",
    "mention_writing",
    "mention_sources",
    "balance_reached",
    "source_overlap",
)
#: Written even when ``None`` in a generator's manifest (the settings a resumed run compares), and a baseline's,
#: whose keys come in this order.
_GENERATOR_FIELDS = (
    "model",
    "num_samples",
    "samples_per_shard",
    "seed",
    "sampler",
    "entities",
    "mentions",
    "corpus",
    "decoding",
    "dtype",
    "entity_types",
    "label_names",
)
_BASELINE_FIELDS = ("method", "model", "entity_types", "label_names", "num_samples", "settings")


@dataclass
class GenerationManifest:
    """A generated folder's ``ecg_generation.json``: its settings (a resumed run must give the same), what the
    finished run measured (:data:`RESULT_FIELDS`), and, for a baseline's folder, its ``method`` and
    ``settings``; ``hf-ecg filter`` adds its ``selection``. Read it with :func:`read_manifest` (any version)."""

    method: str | None = None  # a baseline's method; None: written by a generator
    model: str | None = None
    model_fingerprint: str | None = None  # None: a version-1 folder begun before it was recorded (unchecked)
    num_samples: int = 0
    samples_per_shard: int | None = None
    seed: int | None = None
    sampler: str | None = None  # None: explicit entity sequences
    entities: list[list[Any]] | None = None  # explicit requests: type names, {"phrase": words}
    mentions: MentionsRecord | None = None  # None: a baseline (it keeps or swaps gold mentions)
    corpus: str | None = None
    decoding: dict[str, Any] | None = None  # DecodingConfig but its seed
    dtype: str | None = None
    entity_types: list[str] = field(default_factory=list)
    label_names: list[str] = field(default_factory=list)
    settings: dict[str, Any] | None = None  # a baseline's
    silver: dict[str, Any] | None = None  # the silver split's record (data.silver.silver_record); None: none
    balance: dict[str, Any] | None = None  # the balance asked (synthetic.balance); None: none
    generation_cost: dict[str, Any] | None = None
    mention_novelty: dict[str, Any] | None = None
    mention_writing: dict[str, Any] | None = None
    mention_sources: dict[str, int] | None = None
    # a sketch set's samples against their source sentences (synthetic.generation_report.source_overlap)
    source_overlap: dict[str, Any] | None = None
    balance_reached: dict[str, Any] | None = None  # per group, the gold and the set's mentions of the type
    selection: dict[str, Any] | None = None  # hf-ecg filter's record
    # the samples before a text-copy check (generate --shareable's OUT-unfiltered): the folder of the checked set;
    # such a folder may copy the private text, and push-dataset refuses it
    checked_set: str | None = None
    # whether the samples were checked against the user's text (the text-copy rule): False for a set that may copy
    # it (generate --shareable's OUT-unfiltered, and every set derived from one without the check), True for a set
    # the check kept (and any set derived from one), None where no text was involved
    copy_checked: bool | None = None
    extra: dict[str, Any] = field(default_factory=dict)  # keys this version does not know, kept as they were
    format_version: int = MANIFEST_VERSION

    @classmethod
    def migrate(cls, data: Mapping[str, Any], where: str = "the manifest") -> GenerationManifest:
        """The manifest of any version, read as this version: a version-1 generator's folder gets the settings
        its run had (float32, IOB2 label names, the mention record of its string, the decoding options added
        since at their behaviour before them); ``ValueError`` for a newer version."""
        values = dict(data)
        version = values.pop("format_version", 1)
        if not isinstance(version, int) or version > MANIFEST_VERSION:
            raise ValueError(f"{where} has format version {version}; this hf_ecg reads up to {MANIFEST_VERSION}")
        values.setdefault("label_names", bio_labels(values.get("entity_types", [])))
        if version == 1 and "method" not in values:
            values.setdefault("dtype", "float32")
            if not isinstance(values.get("mentions"), Mapping):
                values["mentions"] = MentionsRecord.from_version_1(
                    values.get("mentions"), values.get("corpus")
                ).to_dict()
            if isinstance(values.get("decoding"), dict):
                defaults = DecodingConfig().recorded() | _BEFORE_ADDED
                values["decoding"] = {
                    **{k: v for k, v in defaults.items() if k not in values["decoding"]},
                    **values["decoding"],
                }
        if isinstance(values.get("mentions"), Mapping):
            values["mentions"] = MentionsRecord(**values["mentions"])
        known = {f.name for f in fields(cls)} - {"extra", "format_version"}
        extra = {k: v for k, v in values.items() if k not in known}
        return cls(**{k: v for k, v in values.items() if k in known}, extra=extra)

    def to_dict(self) -> dict[str, Any]:
        """The JSON object, in the order of its kind's fields; ``None`` fields left out but the settings."""
        values = {f.name: getattr(self, f.name) for f in fields(self) if f.name not in ("extra", "format_version")}
        values["mentions"] = None if self.mentions is None else self.mentions.to_dict()
        always = _BASELINE_FIELDS if self.method is not None else _GENERATOR_FIELDS
        if self.method is not None:  # a baseline's keys first, in their order
            values = {**{k: values[k] for k in always}, **values}
        return {
            **{k: v for k, v in values.items() if v is not None or k in always},
            **self.extra,
            "format_version": self.format_version,
        }

    def run_settings(self) -> dict[str, Any]:
        """What a resumed run must repeat: everything but the results and the version."""
        values = self.to_dict()
        for key in (*RESULT_FIELDS, "checked_set", "copy_checked", "format_version"):
            values.pop(key, None)
        return values

    @property
    def unchecked(self) -> bool:
        """Whether the samples may copy the user's text, not yet checked: push-dataset refuses them."""
        return self.checked_set is not None or self.copy_checked is False

    def derived_copy_check(self, checked: bool) -> bool | None:
        """What a set made from this one's samples records as ``copy_checked``: True when the text-copy rule
        ``checked`` it, else this set's own state (a set derived from an unchecked one is unchecked)."""
        if checked:
            return True
        return False if self.unchecked else self.copy_checked

    def with_results(self, **results: Any) -> GenerationManifest:
        """This manifest with a finished run's :data:`RESULT_FIELDS` (``None`` ones not recorded)."""
        return replace(self, **{k: v for k, v in results.items() if v is not None})


def read_manifest(output_dir: str | os.PathLike) -> GenerationManifest:
    """The manifest of a generated folder, of any version (:meth:`GenerationManifest.migrate`);
    ``FileNotFoundError`` naming the folder when it has none."""
    output_dir = Path(output_dir)
    manifest_path = output_dir / MANIFEST_NAME
    if not output_dir.exists():
        raise FileNotFoundError(f"no such folder: {output_dir}")
    if not manifest_path.is_file():
        raise FileNotFoundError(f"{manifest_path} not found: {output_dir} is not a dataset `hf-ecg generate` wrote")
    data = read_json(manifest_path, "a generation manifest")
    if not isinstance(data, dict):
        raise ValueError(f"{manifest_path}: expected a JSON object (a generation manifest)")
    return GenerationManifest.migrate(data, str(manifest_path))


def mark_unchecked(output_dir: str | os.PathLike) -> None:
    """Record that a generated folder's samples may copy the user's text, unchecked (push-dataset refuses it)."""
    manifest = read_manifest(output_dir)
    if manifest.copy_checked is not False:
        write_manifest(output_dir, replace(manifest, copy_checked=False))


def write_manifest(output_dir: str | os.PathLike, manifest: GenerationManifest) -> Path:
    """Write ``manifest`` as the folder's ``ecg_generation.json``."""
    path = Path(output_dir) / MANIFEST_NAME
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(manifest.to_dict(), indent=2) + "\n", encoding="utf-8")
    return path
