"""The BC5CDR 45 table of what a user with a name dictionary could do (docs/benchmarks.md, "With a name dictionary"),
from the reports in results/dictionaries/ and beside them. Prints Markdown.

    python dev/dictionary_table.py
"""

from __future__ import annotations

import json
import statistics
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
R = ROOT / "results" / "dictionaries"

#: (row, report, what the row is)
ROWS = [
    ("gold alone", ROOT / "results" / "reference.json", "reference protocol"),
    ("dictionary lookup alone (no gold, no model)", R / "bc5cdr-45-distant-450.ner.json", "lookup"),
    ("gold + distant supervision, 450 sentences", R / "bc5cdr-45-distant-450.ner.json", "runs"),
    ("gold + distant supervision, the whole pool (4,515)", R / "bc5cdr-45-distant-pool.ner.json", "runs"),
    ("gold + mention replacement with the dictionary's names, 10×", R / "bc5cdr-45-mr-dict-10x.ner.json", "runs"),
    ("gold + hf_ecg, defaults, 10×", ROOT / "results" / "reference-cards" / "bc5cdr-45-10x.ner.json", "runs"),
    ("gold + hf_ecg templates filled with the dictionary's names, 10×", R / "bc5cdr-45-gen-dict-10x.ner.json", "runs"),
    (
        "… and repaired by the dictionary (`filter --rule dictionary`)",
        R / "bc5cdr-45-gen-dict-repaired-10x.ner.json",
        "runs",
    ),
    (
        "… and the whole pool by distant supervision",
        R / "bc5cdr-45-gen-dict-repaired-10x+distant-pool.ner.json",
        "runs",
    ),
]


def cell(path: Path, kind: str) -> str:
    if not path.is_file():
        return "not measured"
    report = json.loads(path.read_text())
    if kind == "reference protocol":
        mean, std = report["bc5cdr-45"]["gold"]
        return f"{mean:.3f} ± {std:.3f}"
    if kind == "lookup":
        lookup = report["lookup"]
        return f"{lookup['entity_f1']:.3f} (P {lookup['entity_precision']:.3f}, R {lookup['entity_recall']:.3f})"
    runs = [run["entity_f1"] for run in report["runs"]]
    std = statistics.stdev(runs) if len(runs) > 1 else 0.0
    return f"{statistics.fmean(runs):.3f} ± {std:.3f}"


def main() -> None:
    print("| training data (BC5CDR 45, MiniLM-L6, entity F1) | score | report |")
    print("|---|---|---|")
    for row, path, kind in ROWS:
        print(f"| {row} | {cell(path, kind)} | `{path.relative_to(ROOT)}` |")


if __name__ == "__main__":
    main()
