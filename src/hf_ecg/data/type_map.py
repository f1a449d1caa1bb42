"""Another domain's labels in your types: a type map renames a source corpus's entity types to the target's.

A labelled corpus of a neighbouring domain rarely spells its types as yours (CRAFT's ``CHEBI`` for BC5CDR's
``Chemical``). :class:`TypeMap` reads ``SRC=TGT[,SRC=TGT...]``; :func:`map_types` renames each mapped type's spans and
drops the spans of every type the map leaves out, their words marked unknown (out of a tagger's loss, never ``O``:
the source says they are names, of a type the target does not mark).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace

from .corpus import Corpus, Sentence

__all__ = ["TypeMap", "map_types"]


@dataclass(frozen=True)
class TypeMap:
    """Source type -> target type; two source types may share a target. ``ValueError`` for an empty map or a type
    that is not one word free of ``=`` and ``,``."""

    mapping: Mapping[str, str]

    def __post_init__(self) -> None:
        if not self.mapping:
            raise ValueError("a type map names at least one SRC=TGT pair")
        for source, target in self.mapping.items():
            if any(len(name.split()) != 1 or "=" in name or "," in name for name in (source, target)):
                raise ValueError(f"a type map's types are words without spaces, '=' or ',', got {source!r}={target!r}")

    @classmethod
    def parse(cls, text: str) -> TypeMap:
        """The map of ``SRC=TGT[,SRC=TGT...]`` (``CHEBI=Chemical``); ``ValueError`` for a pair without ``=`` or a
        source type mapped twice."""
        mapping: dict[str, str] = {}
        for pair in filter(None, (part.strip() for part in text.split(","))):
            source, equals, target = (side.strip() for side in pair.partition("="))
            if not equals or not source or not target:
                raise ValueError(f"{pair!r} is not SRC=TGT")
            if source in mapping:
                raise ValueError(f"the source type {source!r} is mapped twice")
            mapping[source] = target
        return cls(mapping)

    def __str__(self) -> str:
        return ",".join(f"{source}={target}" for source, target in self.mapping.items())

    @property
    def target_types(self) -> list[str]:
        """The target types, sorted."""
        return sorted(set(self.mapping.values()))


def _mapped(sentence: Sentence, mapping: Mapping[str, str]) -> Sentence:
    kept = tuple(replace(span, label=mapping[span.label]) for span in sentence.spans if span.label in mapping)
    dropped = {i for span in sentence.spans if span.label not in mapping for i in range(span.start, span.end)}
    if not dropped and kept == sentence.spans:
        return sentence
    return replace(sentence, spans=kept, unknown=tuple(sorted(dropped | set(sentence.unknown))))


def map_types(corpus: Corpus, type_map: TypeMap) -> Corpus:
    """``corpus`` with each span of a mapped type renamed and each span of another type dropped, its words unknown.
    ``ValueError`` naming the corpus when it holds no entity or the map names a type it lacks."""
    if not corpus.entity_types:
        raise ValueError(f"{corpus.name} holds no entity to map")
    missing = sorted(set(type_map.mapping) - set(corpus.entity_types))
    if missing:
        raise ValueError(
            f"{corpus.name} has no entity of type {', '.join(missing)} (its types: {', '.join(corpus.entity_types)})"
        )
    sentences = [_mapped(sentence, type_map.mapping) for sentence in corpus]
    return replace(corpus, sentences=sentences, name=f"{corpus.name} ({type_map})", label_names=None)
