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
    ("… and repaired by the dictionary", R / "bc5cdr-45-gen-dict-repaired-10x.ner.json", "runs"),
    (
        "… and the whole pool by distant supervision",
        R / "bc5cdr-45-gen-dict-repaired-10x+distant-pool.ner.json",
        "runs",
    ),
]
NOT_MEASURED = "not measured"


def _mean_std(values: list[float]) -> str:
    std = statistics.stdev(values) if len(values) > 1 else 0.0
    return f"{statistics.fmean(values):.3f} ± {std:.3f}"


def cells(path: Path, kind: str) -> tuple[str, str]:
    """The tagger's entity F1 and the tagger + lookup one (its predictions repaired by the dictionary)."""
    if not path.is_file():
        return NOT_MEASURED, NOT_MEASURED
    report = json.loads(path.read_text())
    if kind == "reference protocol":
        mean, std = report["bc5cdr-45"]["gold"]
        return f"{mean:.3f} ± {std:.3f}", NOT_MEASURED
    if kind == "lookup":
        lookup = report["lookup"]
        return f"{lookup['entity_f1']:.3f} (P {lookup['entity_precision']:.3f}, R {lookup['entity_recall']:.3f})", "–"
    runs = report["runs"]
    joined = [run["with_dictionary"]["entity_f1"] for run in runs if "with_dictionary" in run]
    return _mean_std([run["entity_f1"] for run in runs]), _mean_std(joined) if joined else NOT_MEASURED


def main() -> None:
    print("| training data (BC5CDR 45, MiniLM-L6 tagger) | tagger | tagger + lookup | report |")
    print("|---|---|---|---|")
    for row, path, kind in ROWS:
        tagger, joined = cells(path, kind)
        print(f"| {row} | {tagger} | {joined} | `{path.relative_to(ROOT)}` |")


if __name__ == "__main__":
    main()
