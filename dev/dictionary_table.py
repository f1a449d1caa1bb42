"""The BC5CDR 45 and JNLPBA 186 tables of what a user with a name dictionary and unlabelled text could do
(docs/benchmarks.md, "With a name dictionary"), from the reports in results/dictionaries/ and beside them. Prints
Markdown.

    python dev/dictionary_table.py            # print them
    python dev/dictionary_table.py --write    # put them between the markers of docs/benchmarks.md
"""

from __future__ import annotations

import json
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from results_table import cell as pooled_cell
from results_table import print_or_write

ROOT = Path(__file__).resolve().parents[1]
R = ROOT / "results" / "dictionaries"
BEGIN, END = "<!-- dictionary-table:begin -->", "<!-- dictionary-table:end -->"

#: (row, report, what the row is), BC5CDR 45
ROWS = [
    ("gold alone", ROOT / "results" / "headline" / "bc45-gold.ner.json", "runs"),
    ("dictionary lookup alone (no gold, no model)", R / "bc5cdr-45-distant-450.ner.json", "lookup"),
    ("gold + distant supervision, 450 sentences", R / "bc5cdr-45-distant-450.ner.json", "runs"),
    ("gold + distant supervision, the whole pool (4,515)", R / "bc5cdr-45-distant-pool.ner.json", "runs"),
    ("gold + mention replacement with the dictionary's names, 10×", R / "bc5cdr-45-mr-dict-10x.ner.json", "runs"),
    (
        "gold + hf_ecg, defaults, 10×",
        [ROOT / "results" / "headline" / f"bc45-g{seed}.ner.json" for seed in (42, 43, 44)],
        "runs",
    ),
    ("gold + hf_ecg templates, every dictionary name alike, 10×", R / "bc5cdr-45-gen-dict-10x.ner.json", "runs"),
    ("… and repaired by the dictionary", R / "bc5cdr-45-gen-dict-repaired-10x.ner.json", "runs"),
    (
        "… and the whole pool by distant supervision",
        R / "bc5cdr-45-gen-dict-repaired-10x+distant-pool.ner.json",
        "runs",
    ),
    (
        "gold + hf_ecg templates, the dictionary names your text holds (`--unlabelled`), 10×",
        R / "bc5cdr-45-text-names-10x.ner.json",
        "runs",
    ),
    (
        "… and the whole pool by distant supervision",
        R / "bc5cdr-45-text-names-10x+distant-pool.ner.json",
        "runs",
    ),
    (
        "gold + hf_ecg templates, names mined from your text (and the dictionary's), 10×",
        R / "bc5cdr-45-mined-names-10x.ner.json",
        "runs",
    ),
    (
        "`generate --dictionary D --unlabelled` 450 of your sentences: their names and the 450 as silver split",
        R / "bc5cdr-45-recipe-text-450.ner.json",
        "runs",
    ),
    (
        "`generate --dictionary D --unlabelled` the whole pool: its names and the pool as silver split",
        R / "bc5cdr-45-recipe-text-pool.ner.json",
        "runs",
    ),
]
#: JNLPBA 186 (dictionary: MeSH protein names only; unlabelled text: devel.tsv beyond the 186 gold sentences)
JNLPBA_ROWS = [
    ("gold alone", ROOT / "results" / "headline" / "jn186-gold.ner.json", "runs"),
    ("protein lookup alone", R / "jnlpba-186-text-names-10x.ner.json", "lookup"),
    (
        "gold + mention replacement, 10×",
        ROOT / "results" / "generated-mentions" / "jnlpba-186-mr-bank-10x.ner.json",
        "runs",
    ),
    (
        "gold + hf_ecg, defaults, 10×",
        [ROOT / "results" / "headline" / f"jn186-g{seed}.ner.json" for seed in (42, 43, 44)],
        "runs",
    ),
    (
        "gold + hf_ecg, protein slots filled with the protein names your text holds, 10×",
        R / "jnlpba-186-text-names-10x.ner.json",
        "runs",
    ),
    (
        "gold + distant supervision, the whole pool (1,553), protein and mined names",
        R / "jnlpba-186-distant-pool.ner.json",
        "runs",
    ),
    (
        "gold + hf_ecg, slots filled with names mined from your text (and the protein names), 10×",
        R / "jnlpba-186-mined-names-10x.ner.json",
        "runs",
    ),
    (
        "… and repaired by those names",
        R / "jnlpba-186-mined-names-repaired-10x.ner.json",
        "runs",
    ),
    (
        "… (not repaired) and the whole pool by distant supervision",
        R / "jnlpba-186-mined-names-10x+distant-pool.ner.json",
        "runs",
    ),
]
NOT_MEASURED = "not measured"


def _mean_std(values: list[float]) -> str:
    std = statistics.stdev(values) if len(values) > 1 else 0.0
    return f"{statistics.fmean(values):.3f} ± {std:.3f}"


def cells(path: Path | list[Path], kind: str) -> tuple[str, str, str]:
    """The tagger's entity F1, the tagger's predictions repaired by the dictionary (its names the tagger left
    ``O``), and the lookup first (the tagger's entities where the lookup finds none). Several reports (generator
    trainings scored alike) pool their runs."""
    if isinstance(path, list):
        mean, std = pooled_cell([str(each.relative_to(ROOT)) for each in path])
        return f"{mean:.3f} ± {std:.3f} ({len(path)} generators)", NOT_MEASURED, NOT_MEASURED
    if not path.is_file():
        return NOT_MEASURED, NOT_MEASURED, NOT_MEASURED
    report = json.loads(path.read_text())
    if kind == "lookup":
        lookup = report["lookup"]
        return (
            f"{lookup['entity_f1']:.3f} (P {lookup['entity_precision']:.3f}, R {lookup['entity_recall']:.3f})",
            "–",
            "–",
        )
    runs = report["runs"]
    joined = [
        _mean_std(values) if (values := [run[key]["entity_f1"] for run in runs if key in run]) else NOT_MEASURED
        for key in ("with_dictionary", "dictionary_first")
    ]
    return _mean_std([run["entity_f1"] for run in runs]), joined[0], joined[1]


def table(rows: list[tuple[str, Path | list[Path], str]], corpus: str) -> str:
    columns = "tagger | tagger, then lookup | lookup, then tagger | report"
    lines = [f"| training data ({corpus}, MiniLM-L6 tagger) | {columns} |", "|---|---|---|---|---|"]
    for row, path, kind in rows:
        tagger, repaired, lookup_first = cells(path, kind)
        shown = ", ".join(f"`{each.relative_to(ROOT)}`" for each in (path if isinstance(path, list) else [path]))
        lines.append(f"| {row} | {tagger} | {repaired} | {lookup_first} | {shown} |")
    return "\n".join(lines) + "\n"


def render() -> str:
    """Both tables, as docs/benchmarks.md holds them between its dictionary-table markers."""
    return table(ROWS, "BC5CDR 45") + "\n" + table(JNLPBA_ROWS, "JNLPBA 186")


def main() -> None:
    print_or_write(__doc__, render(), ROOT / "docs" / "benchmarks.md", BEGIN, END)


if __name__ == "__main__":
    main()
