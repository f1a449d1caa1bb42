"""Names mined from the user's unlabelled text, where their dictionary is weak or missing (genes, proteins, cell
types): the spans that taggers trained on the gold sentences read with confidence, agreed over the seeds' ensemble
and seen more than once, as typed name lists (:func:`mine_names`), written in the mention-list format that
``--dictionary DIR`` and ``--mentions DIR`` read (:func:`write_name_lists`).

A predicted entity becomes a name when it is entity-like (:func:`~hf_ecg.labelling.ensemble.entity_like`), predicted
at least ``min_count`` times, under one type at least 90% of those times, labelled in at least ``min_share`` of the
places its words stand in the text, at least :data:`~hf_ecg.labelling.dictionary.MIN_NAME_LENGTH` characters long with a
letter, spelt alike under no other type, and not a name the user's dictionary holds under another type; a type with
fewer than ``min_names`` such names gets no list.
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

from ..taggers.tagger import Tagger
from .dictionary import MIN_NAME_LENGTH, Dictionary, name_key
from .ensemble import TaggerEnsemble

__all__ = ["mine_names", "write_name_lists"]

#: A candidate's share of its predictions under its most frequent type.
ONE_TYPE_SHARE = 0.9


def _predicted(taggers: Sequence[Tagger], text: Sequence[Sequence[str]]) -> dict[tuple[str, ...], Counter[str]]:
    """Every entity-like span the ensemble predicts in ``text``, with its types' counts."""
    predicted: dict[tuple[str, ...], Counter[str]] = {}
    for tokens, spans in zip(text, TaggerEnsemble(taggers).spans_many(text), strict=True):
        for span in spans:
            predicted.setdefault(tuple(tokens[span.start : span.end]), Counter())[span.label] += 1
    return predicted


def mine_names(
    taggers: Sequence[Tagger],
    text: Sequence[Sequence[str]],
    *,
    dictionary: Dictionary | None = None,
    min_count: int = 3,
    min_share: float = 0.7,
    min_names: int = 10,
) -> dict[str, Counter[tuple[str, ...]]]:
    """The names mined from ``text`` with ``taggers`` (see the module), per type, with how often each was predicted."""
    if not taggers:
        raise ValueError("mining needs at least one tagger")
    predicted = _predicted(taggers, text)
    places: Counter[tuple[str, ...]] = Counter()  # every place a candidate's words stand, labelled or not
    lookup = Dictionary({"name": list(predicted)}) if predicted else None
    for tokens in text if lookup is not None else ():
        for span in lookup.spans(tokens):
            places[tuple(tokens[span.start : span.end])] += 1
    types_of_key: dict[str, set[str]] = {}
    for words, by_type in predicted.items():
        types_of_key.setdefault(name_key(words), set()).add(by_type.most_common(1)[0][0])
    mined: dict[str, Counter[tuple[str, ...]]] = {}
    for words, by_type in predicted.items():
        label, count = by_type.most_common(1)[0]
        known = dictionary.type_of(words) if dictionary is not None else None
        if (
            count >= min_count
            and count >= ONE_TYPE_SHARE * sum(by_type.values())
            and count >= min_share * places[words]
            and known in (None, label)
            and len(types_of_key[name_key(words)]) == 1  # spelt alike under two types: a lookup could not tell
            and len(name_key(words)) >= MIN_NAME_LENGTH  # what a lookup matches at all
            and any(ch.isalpha() for word in words for ch in word)  # "25" is no name
        ):
            mined.setdefault(label, Counter())[words] = count
    return {label: counts for label, counts in sorted(mined.items()) if len(counts) >= min_names}


def write_name_lists(folder: str | os.PathLike, mined: dict[str, Counter[tuple[str, ...]]]) -> list[Path]:
    """Write each type's names as ``FOLDER/TYPE.txt``, ``name<TAB>count`` a line, the most frequent first."""
    out = Path(folder)
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for label, counts in mined.items():
        path = out / f"{label}.txt"
        path.write_text("".join(f"{' '.join(name)}\t{n}\n" for name, n in counts.most_common()), encoding="utf-8")
        written.append(path)
    return written
