"""The files a name dictionary is read from: plain-text name lists (:func:`read_name_list`), ontologies through
``pronto`` (:func:`ontology_source`, :func:`read_ontology`) and JSON files ``{type: [names]}``
(:func:`read_json_names`), and what a dictionary's sources name (:func:`read_sources`); each refusal a
:class:`DictionaryError` naming the file and, where there is one, the line."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path

from ..data.specs import split_type_spec
from ..runtime.mentions import mention_list_files, mention_problem, read_mention_entries
from ..runtime.text_files import read_user_json

__all__ = [
    "ONTOLOGY_SUFFIXES",
    "DictionaryError",
    "ontology_source",
    "read_json_names",
    "read_name_list",
    "read_ontology",
    "read_sources",
]


class DictionaryError(ValueError):
    """A dictionary that cannot be read: the message names the file and, where there is one, the line."""


def read_name_list(path: Path, encoding: str) -> dict[tuple[str, ...], int]:
    """The names of a plain-text list (the mention-list format) with the line each is first on."""
    try:
        entries = read_mention_entries(path, encoding=encoding, noun="name")
    except ValueError as error:
        raise DictionaryError(str(error)) from None
    return {name: line for name, (_, line) in entries.items()}


#: Ontology files ``TYPE=FILE`` reads through ``pronto`` rather than as a name list.
ONTOLOGY_SUFFIXES = (".obo", ".owl")


def ontology_source(source: str) -> tuple[Path, str | None] | None:
    """An ontology file and the term to take the names under (``FILE.obo#ID``), or ``None`` for a source that is
    no ontology."""
    file, _, root = source.partition("#")
    return (Path(file), root or None) if Path(file).suffix.lower() in ONTOLOGY_SUFFIXES else None


def read_ontology(path: Path, root: str | None) -> list[tuple[str, ...]]:
    """The names and exact synonyms of an ontology's terms (those under ``root``, itself included, when given)."""
    try:
        import pronto
    except ImportError:
        raise DictionaryError(f"{path}: reading an ontology needs pronto: pip install 'hf-ecg[ontology]'") from None
    if not path.is_file():
        raise DictionaryError(f"{path}: no such file")
    try:
        ontology = pronto.Ontology(str(path))
    except Exception as error:  # pronto raises its parser's own errors
        raise DictionaryError(f"{path}: not an ontology pronto reads ({str(error).splitlines()[0][:120]})") from None
    if root is not None:
        if root not in ontology:
            raise DictionaryError(f"{path}: no term {root!r} to take the names under")
        terms = list(ontology[root].subclasses())
    else:
        terms = list(ontology.terms())
    names: list[tuple[str, ...]] = []
    for term in terms:
        for text in (term.name, *(s.description for s in term.synonyms if s.scope == "EXACT")):
            tokens = tuple((text or "").split())
            if tokens and not mention_problem(tokens):
                names.append(tokens)
    if not names:
        raise DictionaryError(f"{path}: no term with a name{f' under {root}' if root else ''}")
    return names


def read_json_names(path: Path, encoding: str) -> dict[str, list[tuple[str, ...]]]:
    """The names of a JSON file ``{type: [names]}``, read as every user's text file is."""
    try:
        loaded = read_user_json(path, expected="a JSON object {type: [names]}", encoding=encoding)
    except ValueError as error:
        raise DictionaryError(str(error)) from None
    if not isinstance(loaded, dict) or not loaded:
        raise DictionaryError(f"{path}: expected a JSON object {{type: [names]}} with at least one type")
    names: dict[str, list[tuple[str, ...]]] = {}
    for label, entries in loaded.items():
        if not isinstance(entries, list) or not entries or not all(isinstance(e, str) for e in entries):
            raise DictionaryError(f"{path}: {label!r} must hold a non-empty list of names (strings)")
        for entry in entries:
            tokens = tuple(entry.split())
            problem = mention_problem(tokens) if tokens else "empty"
            if problem:
                raise DictionaryError(f"{path}: {entry[:60]!r} under {label!r} is no name: {problem}")
            names.setdefault(label, []).append(tokens)
    return names


Names = dict[str, set[tuple[str, ...]]]
Origins = dict[tuple[str, tuple[str, ...]], str]


def read_sources(
    sources: Sequence[str | os.PathLike] | Mapping[str, str | os.PathLike], encoding: str
) -> tuple[Names, Origins]:
    """The names of each type that ``sources`` hold (``TYPE=FILE`` strings, folders of ``TYPE.txt`` lists, JSON files,
    ontologies, or a ``{type: file}`` mapping: :meth:`~hf_ecg.labelling.dictionary.Dictionary.read`), and where each
    was read (``file:line``, or the file)."""
    files: dict[str, list[Path]] = {}
    inline: dict[str, list[tuple[str, ...]]] = {}
    origins: dict[tuple[str, tuple[str, ...]], str] = {}
    items = list(sources.items()) if isinstance(sources, Mapping) else [(None, s) for s in sources]
    if not items:
        raise DictionaryError("no dictionary given")
    for label, source in items:
        if label is None and isinstance(source, str):
            try:
                label, source = split_type_spec(source)
            except ValueError as error:
                raise DictionaryError(str(error)) from None
        path = Path(source)
        ontology = ontology_source(str(source))
        if label is not None and ontology is not None:
            found = read_ontology(*ontology)
            inline.setdefault(label, []).extend(found)
            origins.update({(label, n): str(ontology[0]) for n in found})
        elif label is not None:
            if path.is_dir():
                raise DictionaryError(f"{label}={path} is a folder: give the file of the {label} names")
            files.setdefault(label, []).append(path)
        elif path.is_dir():
            stray = sorted(p.name for p in path.iterdir() if not p.name.endswith(".txt") and p.is_file())
            if stray:
                raise DictionaryError(f"{path}/{stray[0]}: not a TYPE.txt name list; move it out of the folder")
            try:
                for found, file in mention_list_files(path).items():
                    files.setdefault(found, []).append(file)
            except ValueError as error:
                raise DictionaryError(str(error)) from None
        elif path.suffix == ".json":
            for found, names in read_json_names(path, encoding).items():
                inline.setdefault(found, []).extend(names)
                origins.update({(found, n): str(path) for n in names})
        else:
            raise DictionaryError(f"{path}: give TYPE={path}, a folder of TYPE.txt lists, or a JSON file")
    names: dict[str, set[tuple[str, ...]]] = {label: set(found) for label, found in inline.items()}
    for label, paths in files.items():
        for path in paths:
            for name, line in read_name_list(path, encoding).items():
                names.setdefault(label, set()).add(name)
                origins[(label, name)] = f"{path}:{line}"
    return names, origins
