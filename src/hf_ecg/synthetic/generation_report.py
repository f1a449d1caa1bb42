"""What a finished generation run measured, from its shards: what the generator spent
(:func:`generation_cost`), how many mentions are new (:func:`mention_novelty`) and where they came from
(:func:`mention_origins`), each with the one line the log and ``hf-ecg generate`` print of it."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ..data.dataset_format import TRANSFER_COLUMNS
from ..data.manifest import GenerationManifest
from ..runtime.mentions import MentionBank

__all__ = [
    "UNDERTRAINED_REFUSED_SHARE",
    "cost_line",
    "cost_postfix",
    "generation_cost",
    "mention_novelty",
    "mention_origins",
    "novelty_line",
    "origins_line",
    "result_lines",
    "writing_line",
]

#: A run says the generator looks undertrained when the redraw budget kept more than this share of its blocks
#: as they were (converged generators never reach the budget), or, with no budget, when it redrew more tokens than
#: it kept. The redrawn share alone is no sign of undertraining: it stays high at every epoch on small corpora,
#: overfitted generators included (docs/ablations.md, the training curves).
UNDERTRAINED_REFUSED_SHARE = 0.05


def cost_postfix(kept: int, redrawn: int) -> str:
    """The progress bar's ``kept 11.2k tok, drawn 14.0k, redrawn 20%``."""

    def short(n: int) -> str:
        return f"{n / 1000:.1f}k" if n >= 1000 else str(n)

    drawn = kept + redrawn
    return f"kept {short(kept)} tok, drawn {short(drawn)}, redrawn {redrawn / drawn if drawn else 0:.0%}"


def mention_novelty(data_dir: Path, training_bank: MentionBank | None) -> dict[str, Any] | None:
    """How many of a folder's mentions (its ``spans``) are not in ``training_bank``, the generator's training
    mentions: ``{"mentions": n, "new": k, "share": k / n}``, a diversity figure and, for private data, a
    privacy one (mentions that cannot have come from the corpus). ``None`` without a bank or ``spans``."""
    import pyarrow.parquet as pq

    if training_bank is None:
        return None
    total = new = 0
    for shard in sorted(data_dir.glob("*.parquet")):
        if "spans" not in pq.read_schema(shard).names:
            return None
        table = pq.read_table(shard, columns=["text", "spans"])
        for text, spans in zip(table.column("text").to_pylist(), table.column("spans").to_pylist(), strict=True):
            for span in spans:
                total += 1
                new += tuple(text[span["start"] : span["end"]].split(" ")) not in training_bank.counts(span["label"])
    return {"mentions": total, "new": new, "share": new / total if total else 0.0}


def mention_origins(data_dir: Path) -> dict[str, int] | None:
    """How many of a folder's mentions came from each source, from its ``mention_sources`` column
    (:class:`~hf_ecg.runtime.mention_sources.MentionOrigin`: ``{"generated": n, "bank": m}``); ``None`` for a folder
    begun before the column existed."""
    import pyarrow.parquet as pq

    counts: dict[str, int] = {}
    for shard in sorted(data_dir.glob("*.parquet")):
        if "mention_sources" not in pq.read_schema(shard).names:
            return None
        for sources in pq.read_table(shard, columns=["mention_sources"]).column("mention_sources").to_pylist():
            for origin in sources:
                counts[origin] = counts.get(origin, 0) + 1
    return dict(sorted(counts.items(), key=lambda item: -item[1]))


def origins_line(origins: Mapping[str, int]) -> str:
    """One line for the log of a manifest's ``mention_sources`` record."""
    total = sum(origins.values()) or 1
    return "mentions: " + ", ".join(f"{n} {origin} ({100 * n / total:.0f}%)" for origin, n in origins.items())


def novelty_line(novelty: Mapping[str, Any]) -> str:
    """One line for the log of a manifest's ``mention_novelty`` record."""
    return f"{100 * novelty['share']:.0f}% of the {novelty['mentions']} mentions are not in the training mention bank"


def generation_cost(data_dir: Path, redraw_budget: float | None) -> dict[str, Any] | None:
    """What the generator spent on a folder's samples, from their ``model_tokens``, ``redrawn_tokens`` and
    ``refused_redraws`` columns (None for a folder begun before they existed): the token totals, the share
    redrawn, the blocks and how many the budget kept as they were, the budget, and whether the generator looks
    undertrained (:data:`UNDERTRAINED_REFUSED_SHARE`)."""
    import pyarrow.parquet as pq

    columns = ["model_tokens", "redrawn_tokens", "refused_redraws"]
    kept = redrawn = refused = blocks = 0
    for shard in sorted(data_dir.glob("*.parquet")):
        if not set(columns) <= set(pq.read_schema(shard).names):
            return None
        table = pq.read_table(shard, columns=[*columns, "entities"])
        kept += sum(table.column("model_tokens").to_pylist())
        redrawn += sum(table.column("redrawn_tokens").to_pylist())
        refused += sum(table.column("refused_redraws").to_pylist())
        blocks += sum(len(entities) + 1 for entities in table.column("entities").to_pylist())
    share = redrawn / (kept + redrawn) if kept + redrawn else 0.0
    return {
        "model_tokens": kept,
        "redrawn_tokens": redrawn,
        "redrawn_share": round(share, 4),
        "blocks": blocks,
        "refused_redraws": refused,
        "redraw_budget": redraw_budget,
        "undertrained": refused > UNDERTRAINED_REFUSED_SHARE * blocks or (redraw_budget is None and redrawn > kept),
    }


def cost_line(cost: Mapping[str, Any]) -> str:
    """One line on what a run cost (when the generator looks undertrained the run also logs a warning with
    :func:`~hf_ecg.hub.training_record.undertrained_advice`: what to change against how the model trained)."""
    kept, redrawn = cost["model_tokens"], cost["redrawn_tokens"]
    line = (
        f"the generator wrote {kept + redrawn} tokens: {kept} kept, {redrawn} ({cost['redrawn_share']:.0%}) in "
        "blocks drawn again"
    )
    if cost.get("redraw_budget") is not None:
        line += f" (redraw_budget {cost['redraw_budget']:g}: about {cost['redraw_budget']:g}x the kept tokens at most)"
    return line


def writing_line(record: Mapping[str, Any]) -> str:
    """One line for the log of a manifest's ``mention_writing`` record: slots written, tries rejected and why,
    slots left to the bank."""
    reasons = ", ".join(f"{n} {reason}" for reason, n in record["rejected"].items()) or "none"
    return (
        f"the generator wrote {record['written']} of {record['slots']} mentions "
        f"({100 * record['written_share']:.0f}%); {100 * record['rejected_share']:.0f}% of {record['tries']} tries "
        f"rejected ({reasons}); {record['slots'] - record['written']} filled from the bank"
    )


#: The sketch columns a set's ``source_overlap`` record counts the true values of.
OVERLAP_COUNTS = ("whole", "keeps_sketch")

#: A sample sharing a run of this many words outside its mentions with its source sentence is near a copy of it.
SHARED_RUN_NEAR_COPY = 8


def source_overlap(data_dir: Path) -> dict[str, Any] | None:
    """How much a sketch set's samples repeat their source sentences, from their ``source_shared_run`` and
    ``source_new_share`` columns: the samples, the longest shared run, how many share a run of
    :data:`SHARED_RUN_NEAR_COPY` words or more (and their share), and the median share of new words; with the
    ``whole`` and ``keeps_sketch`` columns, how many samples read whole and keep their sketch's words; with a style
    transfer's columns (:data:`~hf_ecg.data.dataset_format.TRANSFER_COLUMNS`), their tenth, fiftieth and ninetieth
    percentiles; ``None`` for a set without the columns."""
    import statistics

    import numpy
    import pyarrow.parquet as pq

    columns: dict[str, list[Any]] = {}
    for shard in sorted(data_dir.glob("*.parquet")):
        names = pq.read_schema(shard).names
        if "source_shared_run" not in names:
            return None
        read = ("source_shared_run", "source_new_share", *OVERLAP_COUNTS, *TRANSFER_COLUMNS)
        wanted = [c for c in read if c in names]
        for name, values in pq.read_table(shard, columns=wanted).to_pydict().items():
            columns.setdefault(name, []).extend(values)
    runs = columns.get("source_shared_run", [])
    if not runs:
        return None
    near = sum(run >= SHARED_RUN_NEAR_COPY for run in runs)
    record = {
        "samples": len(runs),
        "longest_shared_run": max(runs),
        "near_copies": near,
        "near_copy_share": round(near / len(runs), 4),
        "median_new_share": round(statistics.median(columns["source_new_share"]), 4),
    }
    for name in OVERLAP_COUNTS:
        if len(columns.get(name, [])) == len(runs):
            record[name] = sum(columns[name])
    for name in TRANSFER_COLUMNS:
        if len(columns.get(name, [])) == len(runs):
            tenth, median, ninetieth = numpy.percentile(columns[name], [10, 50, 90]).tolist()
            record[name] = {"p10": round(tenth, 4), "median": round(median, 4), "p90": round(ninetieth, 4)}
    return record


def overlap_line(overlap: Mapping[str, Any]) -> str:
    """One line for the log of a manifest's ``source_overlap`` record."""
    return (
        f"against their source sentences: {overlap['near_copies']} of {overlap['samples']} samples share a run of "
        f"{SHARED_RUN_NEAR_COPY}+ words (longest {overlap['longest_shared_run']}); median share of new words "
        f"{100 * overlap['median_new_share']:.0f}%"
        + (
            f"; {overlap['whole']} read whole, {overlap['keeps_sketch']} keep their sketch's words"
            if "whole" in overlap
            else ""
        )
        + (
            f"; target-likeness median {overlap['target_likeness']['median']:.2f}, adequacy median "
            f"{overlap['adequacy']['median']:.2f}"
            if "target_likeness" in overlap
            else ""
        )
    )


def result_lines(manifest: GenerationManifest) -> list[str]:
    """What a finished run measured, a line each (the run logs them and ``hf-ecg generate`` prints them): its
    cost, the written mentions, the share of new mentions, their origins when there are several, the silver split and
    the balance reached."""
    lines = [cost_line(manifest.generation_cost)] if manifest.generation_cost else []
    if manifest.mention_writing:
        lines.append(writing_line(manifest.mention_writing))
    if manifest.mention_novelty:
        lines.append(novelty_line(manifest.mention_novelty))
    if len(manifest.mention_sources or {}) > 1:
        lines.append(origins_line(manifest.mention_sources))
    if manifest.source_overlap:
        lines.append(overlap_line(manifest.source_overlap))
    if manifest.silver:
        silver = manifest.silver
        lines.append(
            f"silver split: {silver['sentences']} of your sentences with {silver['entities']} entities, labelled by "
            "the dictionary (silver/)"
        )
    if manifest.balance and manifest.balance_reached:
        reached, gold = manifest.balance_reached["set"], manifest.balance_reached["gold"]
        groups = ", ".join(f"{g} {reached.get(g, 0)} (gold {gold.get(g, 0)})" for g in manifest.balance["asked"])
        lines.append(f"balanced {manifest.balance['type']} mentions: {groups}")
    return lines
