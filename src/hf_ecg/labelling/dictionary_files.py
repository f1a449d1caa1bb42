"""The files a name dictionary is read from: plain-text name lists (:func:`read_name_list`), ontologies through
``pronto`` (:func:`ontology_source`, :func:`read_ontology`) and JSON files ``{type: [names]}``
(:func:`read_json_names`); each refusal a :class:`DictionaryError` naming the file and, where there is one, the line."""

from __future__ import annotations

from pathlib import Path

from ..runtime.mentions import mention_problem, read_mention_entries
from ..runtime.text_files import read_user_json

__all__ = [
    "ONTOLOGY_SUFFIXES",
    "DictionaryError",
    "ontology_source",
    "read_json_names",
    "read_name_list",
    "read_ontology",
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
