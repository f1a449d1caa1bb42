"""The extended tables' mention-source curve: gold + ECG-QALM at each multiple of gold with the
mentions from the training bank, written by the generator in context, or from a gazetteer, each with and
without repair, and mention replacement given the same gazetteer at the same multiples.

All sources fill the templates of one generator, trained with mention samples, with one seed: the templates
are the same in every source's set, so a row differs from another of its multiple in the mentions alone. The
gazetteer is every distinct mention of the setting's whole training pool (BC5CDR's train split, JNLPBA's dev
pool): a stand-in for a user's list, which overlaps the test split's names as such a pool does.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable
from pathlib import Path
from typing import Any

from hf_ecg.data.manifest import read_manifest
from hf_ecg.runtime.mention_sources import MIXTURE_PARTS

from .config import ReproduceConfig, Row

__all__ = [
    "MENTION_SOURCES",
    "REPAIR_RULES",
    "gazetteer",
    "mention_curve_rows",
    "mention_curve_sets",
    "mention_curve_table",
    "plot_mention_curves",
    "repaired_sets",
]

#: The curve's mention sources (a :class:`~hf_ecg.runtime.mention_sources.MentionMixture`'s parts, each alone):
#: the training bank (the paper), written in context, a gazetteer.
MENTION_SOURCES = tuple(sorted(MIXTURE_PARTS))
#: What the gazetteer source is called in ``generate_dataset`` terms, per source.
_GENERATE_MENTIONS = {"bank": "random", "generated": "generated"}
#: The repair applied to a source's set: drop mentions the gold taggers read as another type, relabel
#: confident entities left as ``O``.
REPAIR_RULES = ("mention-type", "relabel")
_LABELS = {"bank": "bank mentions", "generated": "generated mentions", "lists": "gazetteer mentions"}


def parse_sources(text: str) -> list[str]:
    """``--mention-sources`` as a list; ``ValueError`` naming the known ones for another."""
    sources = [s.strip() for s in text.split(",") if s.strip()]
    unknown = sorted(set(sources) - set(MENTION_SOURCES))
    if unknown:
        raise ValueError(f"unknown mention source(s) {unknown}; known: {', '.join(MENTION_SOURCES)}")
    return sources


def mention_curve_rows(sources: list[str], scales: list[int], recipe: str) -> list[Row]:
    """Per source and multiple, the row without and with repair; mention replacement with the gazetteer at
    each multiple when ``lists`` is a source (under the same recipe: the fair baseline)."""
    rows = []
    for source in sources:
        for m in scales:
            label = f"gold + ECG-QALM {m}×, {_LABELS[source]} ({recipe})"
            rows.append(Row(f"gold+{source}-{m}x", label, True, f"curve-{source}", m, recipe=recipe))
            rows.append(
                Row(
                    f"gold+{source}-repaired-{m}x",
                    f"{label}, repaired",
                    True,
                    f"curve-{source}-repaired",
                    m,
                    recipe=recipe,
                )
            )
    if "lists" in sources:
        rows += [
            Row(
                f"gold+mr-lists-{m}x",
                f"gold + mention replacement {m}×, gazetteer mentions ({recipe})",
                True,
                "mr-lists",
                m,
                recipe=recipe,
            )
            for m in scales
        ]
    return rows


def gazetteer(pool: Path, work: Path) -> Path:
    """``work/gazetteer/TYPE.txt``: every distinct mention of the corpus at ``pool``, with its count."""
    from hf_ecg.data.corpus import load_corpus
    from hf_ecg.runtime.mentions import MentionBank

    folder = work / "gazetteer"
    if not folder.is_dir():
        MentionBank.from_sentences(load_corpus(pool)).save_list_files(folder)
    return folder


def mention_curve_sets(
    config: ReproduceConfig,
    gold: Any,
    generate: Callable[..., Path],
    generator: Path,
    lists: Path,
    work: Path,
    sources: list[str],
    largest: int,
) -> dict[str, Path]:
    """Each source's set of ``largest`` × gold samples from ``generator`` (one seed: the same templates;
    ``generate(config, model, folder, n, mentions)`` writes one), and mention replacement with the gazetteer at
    that size. Folders ``synthetic-curve-SOURCE``, ``synthetic-mr-lists``."""
    from hf_ecg.runtime.mention_sources import MentionLists
    from hf_ecg.synthetic.mention_replacement import (
        MentionReplacementSource,
        replacement_bank,
        write_mention_replacement,
    )

    n = len(gold)
    dirs = {}
    for source in sources:
        mentions = MentionLists(lists) if source == "lists" else _GENERATE_MENTIONS[source]
        dirs[f"curve-{source}"] = generate(config, generator, work / f"synthetic-curve-{source}", largest * n, mentions)
    if "lists" in sources:
        bank = replacement_bank(gold, lists)
        source = MentionReplacementSource(
            gold, largest * n, config.seed, bank=bank, settings={"mention_lists": str(lists)}
        )
        dirs["mr-lists"] = write_mention_replacement(source, work / "synthetic-mr-lists")  # resumed when written
    return dirs


def repaired_sets(
    dirs: dict[str, Path], gold: Any, work: Path, sources: list[str], selection_config: Any, taggers: list[Any] | None
) -> dict[str, Path]:
    """Each source's set through :data:`REPAIR_RULES` with the gold taggers (``taggers``: None when every
    repaired folder is already there)."""
    from hf_ecg.selection import filter_generated

    repaired = {}
    for source in sources:
        folder = work / f"synthetic-curve-{source}-repaired"
        repaired[f"curve-{source}-repaired"] = filter_generated(
            dirs[f"curve-{source}"], gold, folder, selection_config, taggers=taggers, progress_bar=False
        )
    return repaired


def _mean_std(runs: list[dict[str, Any]]) -> tuple[float, float] | None:
    values = [r["entity_f1"] for r in runs]
    if not values:
        return None
    return statistics.fmean(values), (statistics.stdev(values) if len(values) > 1 else 0.0)


def mention_curve_table(results: dict[str, list[dict[str, Any]]], sources: list[str], scales: list[int]) -> list[str]:
    """The curve as a table (a row per source and repair, a column per multiple, entity micro F1 mean ± std),
    with gold in the first column, and the share of each set's mentions not in the training bank."""
    gold = _mean_std(results.get("gold", []))
    header = "| mentions | gold | " + " | ".join(f"{m}×" for m in scales) + " |"
    lines = [header, "|---|---|" + "---|" * len(scales)]
    keys = [(f"{_LABELS[s]}{r}", f"gold+{s}{r.replace(', ', '-')}") for s in sources for r in ("", ", repaired")]
    if "lists" in sources:
        keys.append(("mention replacement, gazetteer mentions", "gold+mr-lists"))
    for label, stem in keys:
        cells = []
        for m in scales:
            stats = _mean_std(results.get(f"{stem}-{m}x", []))
            cells.append("not run" if stats is None else f"{stats[0]:.3f} ± {stats[1]:.3f}")
        gold_cell = "" if gold is None else f"{gold[0]:.3f} ± {gold[1]:.3f}"
        lines.append(f"| {label} | {gold_cell} | " + " | ".join(cells) + " |")
    return lines


def novelty_lines(dirs: dict[str, Path]) -> list[str]:
    """Per curve set, the share of its mentions not in the training bank and, for written mentions, the tries
    rejected (from the manifests)."""
    lines = []
    for name, folder in sorted(dirs.items()):
        if not name.startswith("curve-") or name.endswith("-repaired"):
            continue
        manifest = read_manifest(folder)
        novelty, writing = manifest.mention_novelty, manifest.mention_writing
        text = f"{name[6:]}: " + (
            f"{100 * novelty['share']:.0f}% of mentions not in the training bank"
            if novelty
            else "new-mention share not recorded"
        )
        if writing:
            text += f"; {100 * writing['rejected_share']:.0f}% of the writer's tries rejected ({writing['rejected']})"
        lines.append(text)
    return lines


def plot_mention_curves(
    path: Path, config: ReproduceConfig, results: dict[str, list[dict[str, Any]]], sources: list[str], scales: list[int]
) -> None:
    """Entity F1 against the multiple of gold, a line per source (solid) and repaired (dashed), mention
    replacement with the gazetteer dotted, gold at 0."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    gold = _mean_std(results.get("gold", []))
    fig, ax = plt.subplots(figsize=(6.5, 4.2))
    stems = [(s, f"gold+{s}", "-") for s in sources] + [(f"{s}, repaired", f"gold+{s}-repaired", "--") for s in sources]
    if "lists" in sources:
        stems.append(("mention replacement, gazetteer", "gold+mr-lists", ":"))
    for label, stem, style in stems:
        points = [(m, _mean_std(results.get(f"{stem}-{m}x", []))) for m in scales]
        points = [(0, gold)] * (gold is not None) + [(m, s) for m, s in points if s is not None]
        if len(points) > 1:
            ax.errorbar(
                [m for m, _ in points],
                [s[0] for _, s in points],
                yerr=[s[1] for _, s in points],
                linestyle=style,
                marker="o",
                capsize=3,
                label=label,
            )
    ax.set_xlabel("synthetic sentences (multiples of gold; 0: gold alone)")
    ax.set_ylabel("entity micro F1")
    ax.set_title(f"{config.dataset.upper()} {config.first_n}: mentions by source")
    ax.set_xticks([0, *scales])
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
