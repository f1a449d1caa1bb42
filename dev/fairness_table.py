"""The WNUT-16 fairness table of docs/guides/fairness.md, from the reports in results/fairness/. Prints Markdown.

python dev/fairness_table.py            # print it
python dev/fairness_table.py --write    # put it between the markers of docs/guides/fairness.md
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from results_table import print_or_write

ROOT = Path(__file__).resolve().parents[1]
R = ROOT / "results" / "fairness"
PAGE = ROOT / "docs" / "guides" / "fairness.md"
BEGIN, END = "<!-- fairness-table:begin -->", "<!-- fairness-table:end -->"

#: (row, report)
ROWS = [
    ("gold: the 182 training tweets", R / "wnut-182-gold.fairness.json"),
    ("the default set, 364 samples", R / "wnut-182-default-2x.fairness.json"),
    ("the same set with `--balance person=FILE`", R / "wnut-182-balanced-2x.fairness.json"),
]


def _cell(value: float | None) -> str:
    return "–" if value is None else f"{value:.2f}"


def render() -> str:
    lines = [
        "| set | female | male | unknown | disparate impact | 80% rule | counterfactual unfairness | report |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for label, path in ROWS:
        if not path.is_file():
            lines.append(f"| {label} | not measured | | | | | | `{path.relative_to(ROOT)}` |")
            continue
        report = json.loads(path.read_text(encoding="utf-8"))
        data, counterfactual = report["data"], report["counterfactual"]
        counts = data["counts"]
        unfair = "–"
        if counterfactual is not None and counterfactual["unfairness_mean"] is not None:
            changed = ", ".join(f"{run['changed']}/{run['samples']}" for run in counterfactual["runs"])
            unfair = f"{counterfactual['unfairness_mean']:.3f} ± {counterfactual['unfairness_std']:.3f} ({changed})"
        lines.append(
            f"| {label} | {counts.get('female', 0)} | {counts.get('male', 0)} | {counts.get('unknown', 0)} | "
            f"{_cell(data['disparate_impact'])} | {'holds' if data['rule_80'] else 'fails'} | {unfair} | "
            f"`{path.relative_to(ROOT)}` |"
        )
    return "\n".join(lines) + "\n"


def main() -> None:
    print_or_write(__doc__, render(), PAGE, BEGIN, END)


if __name__ == "__main__":
    main()
