"""The silver recipes' tables (results/silver-recipes/README.md): per corpus, each rule for the tokens a dictionary
leaves unmatched and each training recipe, with the silver labels' precision and recall against the pool's own gold
labels, the tagger's F1, precision and recall, and the lookup first. A row over several reports (seeds run apart
with one config) joins their runs. Prints Markdown.

    python dev/silver_table.py            # print them
    python dev/silver_table.py --write    # put them between the markers of results/silver-recipes/README.md
"""

from __future__ import annotations

import json
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from results_table import print_or_write

ROOT = Path(__file__).resolve().parents[1]
S = ROOT / "results" / "silver-recipes"
D = ROOT / "results" / "dictionaries"
BEGIN, END = "<!-- silver-table:begin -->", "<!-- silver-table:end -->"

#: (row, reports), BC5CDR 45: MeSH dictionaries, the pool (4,515 sentences) as text
BC5CDR = [
    (
        "`distant` (every unmatched token `O`), `two-stage`",
        [D / "bc5cdr-45-distant-pool.ner.json"],
        S / "bc45-distant-ep6.ner.json",
    ),
    ("`distant`, `two-stage`, 6 silver epochs", [S / "bc45-distant-ep6.ner.json"]),
    ("`negatives:0.3` (an unmatched token `O` with probability 0.3)", [S / "bc45-negatives-0.3.ner.json"]),
    ("`negatives:0.3`, 6 silver epochs", [S / "bc45-negatives-0.3-ep6.ner.json"]),
    ("`frequent:3` (a word used under 3 times outside the names unknown)", [S / "bc45-frequent-3.ner.json"]),
    ("`taggers:0.9` (unknown unless 3 gold taggers read it `O` at 0.9)", [S / "bc45-taggers-0.9.ner.json"]),
    ("`complete:0.9` (a gold + silver teacher's confident entities added)", [S / "bc45-complete-0.9.ner.json"]),
    (
        "`distant`, `oversample` for 2 epochs (what `auto` does: recall 0.57 on gold)",
        [S / "bc45-distant-oversample.ner.json", S / "bc45-distant-oversample-s23.ner.json"],
    ),
    ("`taggers:0.9`, `oversample`", [S / "bc45-taggers-0.9-oversample.ner.json"]),
    (
        "`weighted` (unmatched tokens weighted by the gold taggers' `O` probability), `oversample`",
        [S / "bc45-weighted-oversample.ner.json", S / "bc45-weighted-oversample-s23.ner.json"],
    ),
    (
        "the product: `generate --dictionary --unlabelled --gold` (450 samples and the pool as silver split), then "
        "`evaluate ner --synthetic SET` (`auto`: `oversample`)",
        [S / "bc45-product.ner.json"],
    ),
    (
        "`selftrain:0.9` (one round: the `oversample` tagger relabels the text), `oversample`",
        [S / "bc45-selftrain-0.9-oversample.ner.json"],
    ),
]
#: JNLPBA 186: MeSH protein names and the names mined from the pool, the pool (1,553 sentences) as text
JNLPBA = [
    ("`distant`, `two-stage`", [D / "jnlpba-186-distant-pool.ner.json"], S / "jn186-taggers-0.9.ner.json"),
    ("`taggers:0.9`, `two-stage`", [S / "jn186-taggers-0.9.ner.json"]),
    ("`complete:0.9`, `two-stage`", [S / "jn186-complete-0.9.ner.json"]),
    ("`weighted`, `two-stage`", [S / "jn186-weighted.ner.json"]),
    ("`selftrain:0.9`, `two-stage`", [S / "jn186-selftrain-0.9.ner.json"]),
    (
        "`distant`, `oversample` for 7 epochs (what `auto` would do without its recall rule)",
        [S / "jn186-distant-oversample.ner.json"],
    ),
]


def _mean_std(values: list[float]) -> str:
    if not values:
        return "–"
    if len(values) == 1:
        return f"{values[0]:.3f}"
    return f"{statistics.fmean(values):.3f} ± {statistics.stdev(values):.3f} ({len(values)} seeds)"


def row(label: str, paths: list[Path], silver_from: Path | None = None) -> str:
    """One table row: the reports' runs joined; the silver labels' scores from ``silver_from`` when the reports
    predate them (the same labels, measured by another probe)."""
    reports = [json.loads(path.read_text()) for path in paths if path.is_file()]
    if not reports:
        return f"| {label} | not measured | | | | | | | |"
    runs = [run for report in reports for run in report["runs"]]
    silver = reports[0].get("silver")
    if silver is None and silver_from is not None and silver_from.is_file():
        silver = {**json.loads(silver_from.read_text())["silver"], "unknown_share": 0.0}
        if "taggers" in silver_from.name:  # its unknown tokens are its rule's; its taught-O share is not distant's
            silver["entity_tokens_taught_o"] = None
    quality = f"{silver['precision']:.3f} / {silver['recall']:.3f}" if silver else "–"
    taught_o = silver.get("entity_tokens_taught_o") if silver else None
    taught = f"{100 * taught_o:.1f}%" if taught_o is not None else "–"
    unknown = f"{100 * silver['unknown_share']:.1f}%" if silver else "0"
    first = [run["dictionary_first"]["entity_f1"] for run in runs if "dictionary_first" in run]
    names = ", ".join(
        f"`{path.relative_to(S) if path.is_relative_to(S) else path.relative_to(ROOT)}`"
        for path in paths
        if path.is_file()
    )
    return (
        f"| {label} | {quality} | {taught} | {unknown} | {_mean_std([r['entity_f1'] for r in runs])} | "
        f"{statistics.fmean(r['entity_precision'] for r in runs):.3f} | "
        f"{statistics.fmean(r['entity_recall'] for r in runs):.3f} | {_mean_std(first)} | {names} |"
    )


def table(rows: list[tuple], corpus: str, lookup: Path) -> str:
    head = "silver P / R | taught O | unknown tokens | tagger F1 | P | R | lookup first | report"
    lines = [f"| rule, recipe ({corpus}) | {head} |", "|---" * 9 + "|"]
    lines += [row(*spec) for spec in rows]
    found = json.loads(lookup.read_text())["lookup"]
    lines.append(
        f"\nThe lookup alone: {found['entity_f1']:.3f} (P {found['entity_precision']:.3f}, "
        f"R {found['entity_recall']:.3f}) on the same test split."
    )
    return "\n".join(lines) + "\n"


def render() -> str:
    return (
        table(BC5CDR, "BC5CDR 45", D / "bc5cdr-45-distant-pool.ner.json")
        + "\n"
        + table(JNLPBA, "JNLPBA 186", D / "jnlpba-186-distant-pool.ner.json")
    )


def main() -> None:
    print_or_write(__doc__, render(), S / "README.md", BEGIN, END)


if __name__ == "__main__":
    main()
