"""What several ``hf-ecg`` commands share: the error type, corpus, subset and selection options."""

from __future__ import annotations

import argparse
import dataclasses
import typing
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ..data.selection_rules import DEFAULT_RULES


class CLIError(Exception):
    """An error to report in one line and exit non-zero, without a traceback."""


#: The options (``dest`` names) whose values name files or folders a command reads, and those it writes to. An
#: output is never one of the inputs, a hard link to one, or inside one: :func:`refuse_outputs_over_inputs`.
INPUT_OPTIONS = (
    "data", "validation", "test", "train", "synthetic", "dev", "gold", "corpus", "generated", "reference",
    "unlabelled", "dictionary", "mentions", "balance", "groups", "config", "quality", "ner_report",
    "model", "ref_model", "tagger_model",
)  # fmt: skip
OUTPUT_OPTIONS = ("output", "local_dir", "save_taggers")


def named_paths(value: str) -> list[Path]:
    """The existing files and folders a command-line value names: the value itself, the ``FILE`` of
    ``TYPE=FILE``, and either cut at a colon (``DATA:N``, ``DATA:START:STOP``, ``FILE:GROUP=SHARE,...``)."""
    whole = [value, value.split("=", 1)[1]] if "=" in value else [value]
    cut = [word[:i] for word in whole for i, ch in enumerate(word) if ch == ":"]
    return [Path(word) for word in dict.fromkeys([*whole, *cut]) if word and Path(word).exists()]


def refuse_outputs_over_inputs(args: argparse.Namespace) -> None:
    """:class:`CLIError` naming the option when an output option names an input of the command line (a model
    folder, a dictionary, a group table, a corpus), a hard link to one, or a path inside one; checked before
    anything is read or written."""
    from ..data.outputs import refuse_inputs

    inputs: list[tuple[str, Path]] = []
    for dest in INPUT_OPTIONS:
        values = getattr(args, dest, None)
        for value in values if isinstance(values, list) else [values]:
            if isinstance(value, (str, Path)):
                inputs += [(dest, path) for path in named_paths(str(value))]
    for dest in OUTPUT_OPTIONS:
        output = getattr(args, dest, None)
        if not isinstance(output, (str, Path)):
            continue
        for source_dest, source in inputs:
            try:
                refuse_inputs(Path(output), [source], holding=False)
            except ValueError as error:
                raise CLIError(f"{_flag(dest)} {error} ({_flag(source_dest)})") from None


def _flag(dest: str) -> str:
    return "--" + dest.replace("_", "-")


def corpus_file(path: str, flag: str = "") -> Path:
    """``path`` (given with ``flag``; none for a positional argument) as a corpus file, or
    :class:`CLIError` saying what it is instead (missing, a folder)."""
    file, given = Path(path), f"{flag} {path}".strip()
    if file.is_dir():
        raise CLIError(f"{given} is a folder: give a corpus file (CoNLL/TSV or JSONL)")
    if not file.is_file():
        raise CLIError(f"{given}: no such file")
    return file


def add_overwrite_option(parser: argparse.ArgumentParser, kind: str) -> None:
    """``--overwrite`` under the output rule (:mod:`hf_ecg.data.outputs`), said the same by every command."""
    parser.add_argument(
        "--overwrite",
        action="store_true",
        help=f"replace a {kind} hf_ecg wrote in the output folder (a folder with any file hf_ecg did not write is "
        "refused, --overwrite included, and left as it is)",
    )


def repair_note(num_repairs: int, scheme: str, first_at: str | None) -> str:
    """The note ``blocks`` and ``train`` print when tags that did not fit the scheme were repaired."""
    where = f", first at {first_at}" if first_at else ""
    return f"note: {num_repairs} tags did not fit {scheme} and were repaired{where} (use --strict to reject them)"


def add_corpus_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--format",
        choices=("conll", "jsonl"),
        default=None,
        help="input format; default: jsonl for .jsonl/.json files, conll otherwise",
    )
    parser.add_argument(
        "--scheme",
        default=None,
        metavar="IOB2|IOB1|BIOES",
        help="tag scheme of the input; default: detected from the tags",
    )
    parser.add_argument("--token-column", type=int, default=0, help="CoNLL column of the token (default: 0)")
    parser.add_argument("--tag-column", type=int, default=-1, help="CoNLL column of the tag (default: -1, the last)")
    parser.add_argument(
        "--encoding", default="utf-8", help="text encoding of the corpus files (default: utf-8; e.g. latin-1)"
    )
    parser.add_argument(
        "--strict",
        action="store_true",
        help="reject an I- tag that does not continue a span instead of repairing it to B-",
    )


def add_card_metadata_options(parser: Any, license: str | None = None, language: str | None = None) -> None:
    """A card's ``--license`` and ``--language`` (comma-separated codes), with their defaults."""
    parser.add_argument(
        "--license",
        default=license,
        metavar="ID",
        help=f"license id for the card's metadata (default: {license or 'none stated'}; a dataset card without "
        "one says that the training corpus's license applies)",
    )
    parser.add_argument(
        "--language",
        default=language_codes(language) if language else None,
        type=language_codes,
        metavar="CODES",
        help=f"comma-separated language codes for the card's metadata (default: {language or 'none stated'})",
    )


def add_dataset_card_options(parser: Any) -> None:
    """The options of the dataset card a command writes: :func:`add_card_metadata_options` (language ``en``)
    and ``--source-dataset``."""
    add_card_metadata_options(parser, language="en")
    parser.add_argument(
        "--source-dataset",
        default=None,
        metavar="NAME|ORG/NAME",
        help="the gold corpus the generator learned from, by name or Hub id, for the card's source_datasets "
        "(default: the generator's --dataset-id or --corpus-name, if it has one)",
    )


def dataset_card_fields(args: argparse.Namespace) -> Any:
    """The card fields of :func:`add_dataset_card_options` that were given, as a
    :class:`~hf_ecg.hub.dataset_card.DatasetCardFields`."""
    from ..hub.dataset_card import DatasetCardFields

    return DatasetCardFields(
        license=args.license,
        language=args.language,
        source_datasets=[args.source_dataset] if args.source_dataset else None,
    )


def language_codes(value: str) -> list[str]:
    return [code.strip() for code in value.split(",") if code.strip()]


def reader_options(args: argparse.Namespace) -> dict[str, Any]:
    """The corpus-reading options of :func:`add_corpus_options`, as ECGBlocksBuilder keywords."""
    return {
        "format": args.format,
        "scheme": args.scheme,
        "strict": args.strict,
        "token_column": args.token_column,
        "tag_column": args.tag_column,
        "encoding": args.encoding,
    }


def add_subset_options(parser: argparse.ArgumentParser) -> None:
    group = parser.add_mutually_exclusive_group()
    group.add_argument("--first-n", type=int, default=None, metavar="N", help="keep the first N training sentences")
    group.add_argument(
        "--fraction",
        type=float,
        default=None,
        metavar="F",
        help="keep the first F (0 < F <= 1) of the training sentences, e.g. 0.01 for the paper's 1%% setting",
    )


#: The SelectionConfig fields that are options of `filter` and `generate --filter` (``--tagger-seeds`` is parsed
#: from a comma-separated list, ``--rule`` by each command).
SELECTION_OPTIONS = (
    "near_copy_threshold",
    "max_shared_run",
    "extra_threshold",
    "tagger_model",
    "tagger_epochs",
    "tagger_learning_rate",
    "tagger_batch_size",
    "teacher",
    "teacher_folds",
)


def add_selection_options(parser: Any, *, target_size: bool = True) -> None:
    """SelectionConfig's options (:data:`SELECTION_OPTIONS`, ``--target-size`` where the command has no size of
    its own, ``--tagger-seeds``), defaults and help from the dataclass."""
    from ..selection import SelectionConfig

    add_config_options(parser, SelectionConfig, [*SELECTION_OPTIONS, *(["target_size"] if target_size else [])])
    parser.set_defaults(max_shared_run=None)  # None: not given (the option needs the text-copy rule); 8 is used
    add_seeds_option(
        parser, "--tagger-seeds", SelectionConfig().tagger_seeds, "one gold tagger per seed, averaged: an ensemble"
    )


def add_seeds_option(parser: Any, flag: str, default: Sequence[int], help: str) -> None:
    """A comma-separated list of seeds (a config's ``list[int]`` field, its default given), read by
    :func:`parse_seeds`."""
    shown = ",".join(map(str, default))
    parser.add_argument(flag, default=shown, metavar="S1,S2,...", help=f"{help} (default {shown})")


def parse_seeds(value: str, flag: str) -> list[int]:
    """The seeds of :func:`add_seeds_option`'s ``flag``; :class:`CLIError` for anything but integers."""
    try:
        return [int(s) for s in value.split(",") if s.strip()]
    except ValueError:
        raise CLIError(f"{flag} takes comma-separated integers, got {value!r}") from None


LABEL_NAMES_HELP = (
    "the ner_tags label order of the gold dataset the samples will be mixed with: comma-separated names, "
    "or a dataset that has them; default: the generator's training order, else O then B-/I- of each type, "
    "sorted"
)


def label_names_option(value: str | None) -> list[str] | None:
    """``--label-names``: comma-separated names, or a dataset whose ``ner_tags`` ClassLabel gives them."""
    if value is None:
        return None
    import datasets

    path = Path(value)
    if "," not in value and (path.exists() or "/" in value):
        if path.is_dir() and (path / "dataset_info.json").is_file():
            dataset: Any = datasets.load_from_disk(str(path))
            dataset = next(iter(dataset.values())) if isinstance(dataset, datasets.DatasetDict) else dataset
            features = dataset.features
        else:
            features = datasets.load_dataset(value, split="train", streaming=True).features
        feature = (features or {}).get("ner_tags")
        names = getattr(getattr(feature, "feature", None), "names", None)
        if not names:
            raise CLIError(f"--label-names {value}: its ner_tags column is not a sequence of ClassLabel")
        return list(names)
    return [name.strip() for name in value.split(",") if name.strip()]


def selection_config(args: argparse.Namespace, **overrides: Any) -> Any:
    from ..selection import SelectionConfig

    given = {name: value for name, value in config_values(args, SELECTION_OPTIONS).items() if value is not None}
    values = {
        "rules": list(args.rules or DEFAULT_RULES),
        "target_size": getattr(args, "target_size", None),
        "tagger_seeds": parse_seeds(args.tagger_seeds, "--tagger-seeds"),
        **given,
    }
    return SelectionConfig(**{**values, **overrides})


def report_selection(output: Path) -> None:
    from ..data.manifest import read_manifest

    selection = read_manifest(output).selection
    dropped = ", ".join(f"{rule} {count}" for rule, count in selection["dropped"].items()) or "none"
    print(f"kept {selection['kept']} of {selection['source_samples']} samples (dropped: {dropped})")
    print(
        f"wrote {output}/data/, {output}/ecg_generation.json and {output}/README.md (dataset card); "
        f"load with datasets.load_dataset({str(output)!r})"
    )


def _shown(value: Any) -> str:
    """A default as help shows it: small floats as powers of ten (``1e-4``, not ``0.0001``)."""
    if isinstance(value, float) and 0 < abs(value) < 0.01:
        mantissa, exponent = f"{value:.0e}".split("e")
        return f"{mantissa}e{int(exponent)}"
    return str(value)


def add_config_options(parser: Any, config_class: type, names: Sequence[str], *, unset: bool = False) -> None:
    """A ``--field-name`` option per named field of a config dataclass, its type, default, choices and help
    taken from the field, so that each default is defined once (``HfArgumentParser``'s rule, kept within a
    subcommand). A boolean field that is on by default gets ``--no-field-name``. ``unset``: an option not given
    is ``None``, so that the field keeps what another source (a YAML config) or its default says."""
    fields = {f.name: f for f in dataclasses.fields(config_class)}
    hints = typing.get_type_hints(config_class)
    defaults = None if unset else config_class()
    for name in names:
        field = fields[name]
        default = field.default if defaults is None else getattr(defaults, name)
        flag = name.replace("_", "-")
        text = field.metadata.get("help", "").replace("%", "%%")
        if isinstance(default, bool):
            action = {"action": "store_false" if default else "store_true"}
            if unset:
                action = {"action": "store_const", "const": not default, "default": None}
            if default:
                parser.add_argument(f"--no-{flag}", dest=name, **action, help=f"turn off (default on): {text}")
            else:
                parser.add_argument(f"--{flag}", dest=name, **action, help=text)
            continue
        kind = hints[name]
        optional = type(None) in typing.get_args(kind)
        kind = next((arg for arg in typing.get_args(kind) if arg is not type(None)), kind)  # X | None -> X
        if optional:  # X | None: "none" gives None
            kind = _or_none(kind)
        shown = "none" if default is None else _shown(default)
        parser.add_argument(
            f"--{flag}",
            dest=name,
            type=kind,
            default=None if unset else default,
            choices=field.metadata.get("choices"),
            help=text if "default" in text.lower() else f"{text} (default: {shown})",
        )


def _or_none(kind: type) -> Any:
    """An argparse type for an ``X | None`` field: ``none`` (any case) or a value of ``kind``."""

    def parse(text: str) -> Any:
        return None if text.lower() == "none" else kind(text)

    parse.__name__ = f"{kind.__name__} or none"  # argparse names it in its error
    return parse


def config_values(args: argparse.Namespace, names: Sequence[str]) -> dict[str, Any]:
    """The values of :func:`add_config_options`' fields, as keyword arguments of the config."""
    return {name: getattr(args, name) for name in names}
