"""The sentences a dataset card says of how its data was made: the entity sequences' sampler, where the mentions came
from (bank, lists, dictionary, written by the generator, a mixture), a baseline's recipe. Plain text from the
manifest's records; :class:`~hf_ecg.hub.dataset_card.ECGDatasetCardData` reads them."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..data.groups import disparate_impact

if TYPE_CHECKING:
    from ..data.manifest import MentionsRecord

__all__ = [
    "BASELINES",
    "SAMPLERS",
    "baseline_text",
    "fairness_rows",
    "mention_sources_text",
    "mentions_text",
    "sampler_text",
    "sketches_text",
]

#: How each entity-sequence sampler draws, as a card says it.
SAMPLERS = {
    "gold": "drawn from the generator's training corpus: each is the entity sequence of a random gold "
    "sentence, so the synthetic distribution mimics the gold one",
    "urg": "drawn from the gold sentences weighted towards under-represented entity types (paper, Appendix A.1)",
    "uniform": "of gold lengths, each position's type uniform over the entity types",
}


#: The baselines of :mod:`hf_ecg.synthetic.mention_replacement` a card can describe: name, and how the rows were made.
BASELINES = {
    "mention-replacement": (
        "mention replacement",
        "a gold sentence of `{data}` (in order, cycled) with each mention replaced, with probability {probability}, "
        "by another gold mention of the same type drawn uniformly "
        "([Dai & Adel, 2020](https://aclanthology.org/2020.coling-main.343/)); "
        "templates and labels are the gold ones, only the mention strings change; seed {seed}",
    ),
}


def baseline_text(baseline: dict[str, Any] | None) -> str:
    """How a baseline folder's rows were made (its manifest's settings; empty for generated data)."""
    if not baseline:
        return ""
    method = baseline.get("method", "baseline")
    if method not in BASELINES:
        return f"the `{method}` baseline, settings: " + ", ".join(f"{k}={v}" for k, v in baseline.items())
    text = BASELINES[method][1].format_map({"data": "?", "probability": 1.0, "seed": 0, **baseline})
    lists = baseline.get("mention_lists")
    if lists:  # the swapped-in mentions of these types came from the user's lists, not from gold
        named = ", ".join(f"{label}: `{Path(file).name}`" for label, file in lists.items())
        text += f"; the replacing mentions of {', '.join(lists)} drawn from the user's mention lists ({named})"
    return text


def sketches_text(settings: dict[str, Any], overlap: dict[str, Any] | None) -> str:
    """Whose sketches a sketch set was written around (its manifest's settings), the target text its candidates
    were judged for (a style transfer), and how much its samples repeat their sources (its ``source_overlap``
    record)."""
    text = (
        f"written around the sketches of `{settings.get('sketches')}`'s {settings.get('sketched_sentences', 0):,} "
        f"sentences with an entity (their mentions and {100 * settings.get('kept_share', 0):.0f}% of their other "
        "words kept as key phrases, a gap for each run left out), cycled over the sample ids"
    )
    target = settings.get("target")
    if target:
        text += (
            f"; each sketch's {settings.get('candidates_per_sketch', 1)} candidates were judged for the target text "
            f"`{target['target_text']}` (how much they read like it, a classifier on MiniLM embeddings of "
            f"{target['target_sentences']:,} of its sentences against {target['source_sentences']:,} of the "
            "source's), and the best kept"
        )
    if overlap:
        text += (
            f"; {overlap['near_copies']} of {overlap['samples']} samples share a run of 8 or more words outside the "
            f"mentions with their source sentence, and half hold at least {100 * overlap['median_new_share']:.0f}% "
            "words their source lacks"
        )
    return text


def sampler_text(sampler: str | None) -> str:
    """How a card's entity sequences were drawn (``None``: given by the user)."""
    if sampler is None:
        return "given explicitly by the user, cycled over the sample ids"
    return SAMPLERS.get(sampler, f"drawn by the `{sampler}` sampler")


def mentions_text(record: MentionsRecord | None, writing: dict[str, Any] | None) -> str:
    """Where a card's mentions came from (its manifest's mentions ``record``; ``None``: the bank, drawn
    uniformly), and how they were drawn or written (``writing``: the writer's record)."""
    if record is None or record.source == "bank":
        whose = (
            "the training corpus given at generation"
            if record and record.bank == "corpus"
            else ("the generator's mention bank, the real mentions of its training corpus")
        )
        if record is not None and record.strategy == "weighted":
            return f"drawn from {whose}, in proportion to their frequency there"
        return f"drawn uniformly from {whose}"
    if record.source == "generated":
        whose = _bank_name(record)
        text = "written by the generator for each slot in its sentence (a model trained with mention samples)"
        if writing:
            text += (
                f": {writing['written']} of {writing['slots']} slots ({100 * writing['written_share']:.0f}%), "
                f"{100 * writing['rejected_share']:.0f}% of {writing['tries']} tries rejected (unended, empty, "
                "longer than the training mentions or holding structure) and drawn again"
            )
        return f"{text}; a slot whose every try was rejected drawn uniformly from {whose}"
    if record.source == "mixture":
        return _mixture_text(record)
    if record.source == "user":
        return f"supplied by the user in code (recorded only as a digest: `{record.digest}`)"
    if record.source == "dictionary":
        text = _dictionary_text(record)
        if record.bank:
            text += f"; the other types from {_bank_name(record)}, the real mentions of its training corpus"
        return text
    if record.source == "lists":
        text = _lists_text(record)
        if record.bank:
            text += f"; the other types from {_bank_name(record)}, the real mentions of its training corpus"
        return text
    return f"supplied by the user in the file `{Path(record.path or '').name}`"


def _dictionary_text(record: Any) -> str:
    """Which names of the user's dictionary filled the slots and how they were drawn (counts, never names)."""
    names = ", ".join(f"{n:,} {label}" for label, n in (record.names or {}).items())
    if record.text_sentences is not None:
        return (
            f"drawn from the user's name dictionary, its names that the user's {record.text_sentences:,} sentences "
            f"of text hold ({names}), in proportion to how often the text holds them (recorded only as counts "
            f"and a digest: `{record.digest}`)"
        )
    return f"drawn uniformly from the user's name dictionary ({names} names; digest `{record.digest}`)"


def _mixture_text(record: Any) -> str:
    """A :class:`~hf_ecg.runtime.mention_sources.MentionMixture`'s parts with their shares of the slots."""
    parts = []
    for part, share in (record.shares or {}).items():
        if part == "generated":
            text = "written by the generator for the slot in its sentence"
        elif part == "bank":
            text = f"drawn {_how(record)} from {_bank_name(record)}, the real mentions of its training corpus"
        elif record.names:
            text = _dictionary_text(record)
        elif record.lists:
            text = _lists_text(record)
        elif record.path:
            text = f"drawn from the user's file `{Path(record.path).name}`"
        else:
            text = f"drawn from mentions supplied by the user (digest `{record.digest}`)"
        parts.append(f"{100 * share:.0f}% of the slots {text}")
    return "a mixture of sources, one drawn for each slot: " + "; ".join(parts)


def mention_sources_text(counts: dict[str, int] | None) -> str:
    """``1,234 written by the generator (83%), 250 from the bank (17%)``: where the mentions came from."""
    names = {
        "generated": "written by the generator",
        "bank": "from the training mention bank",
        "lists": "from the user's mention lists",
        "user": "from mentions the user supplied",
        "dictionary": "from the user's name dictionary",
        "groups": "from the user's group table (balanced)",
    }
    counts = counts or {}
    total = sum(counts.values()) or 1
    return ", ".join(f"{n:,} {names.get(origin, origin)} ({100 * n / total:.0f}%)" for origin, n in counts.items())


def _bank_name(record: Any) -> str:
    """Whose mention bank a :class:`~hf_ecg.data.manifest.MentionsRecord` drew from."""
    return "the training corpus given at generation" if record.bank == "corpus" else "the generator's mention bank"


def _how(record: Any) -> str:
    """How a record's bank or lists were drawn."""
    return "in proportion to their counts" if record.strategy == "weighted" else "uniformly"


def _lists_text(record: Any) -> str:
    """``drawn uniformly from the user's mention lists (Disease: `d.txt`; digest `...`)``."""
    lists = ", ".join(f"{label}: `{Path(file).name}`" for label, file in (record.lists or {}).items())
    return f"drawn {_how(record)} from the user's mention lists ({lists}; digest `{record.digest}`)"


def fairness_rows(balance: dict[str, Any]) -> list[dict[str, Any]]:
    """The card's fairness table from a manifest's balance record: per group, gold's and the set's mentions, then the
    disparate impact of each (:func:`~hf_ecg.data.groups.disparate_impact`; ``None`` with no known group)."""
    rows = []
    gold, dataset = balance.get("gold") or {}, balance.get("set") or {}
    for group in [*balance.get("asked", {}), "unknown"]:
        rows.append({"group": group, "gold": gold.get(group, 0), "set": dataset.get(group, 0)})

    rows.append({"group": "disparate impact", "gold": disparate_impact(gold), "set": disparate_impact(dataset)})
    return rows
