"""The default row's pooled figure: every tagger run of every generator's report, as one summary report.

    python research/runs/headline/pool.py results/headline/bc45-g42.ner.json ... -o results/headline/bc45-defaults.json
"""

from __future__ import annotations

import argparse
import json
import statistics
from pathlib import Path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("reports", nargs="+", type=Path, help="evaluate ner reports, one a generator")
    parser.add_argument("-o", "--output", type=Path, required=True, help="the summary report to write")
    args = parser.parse_args()
    reports = {path.name: json.loads(path.read_text()) for path in args.reports}
    runs = [run["entity_f1"] for report in reports.values() for run in report["runs"]]
    means = [report["entity_f1_mean"] for report in reports.values()]
    summary = {
        "reports": list(reports),
        "generators": len(reports),
        "runs": len(runs),
        "entity_f1_mean": statistics.mean(runs),
        "entity_f1_std": statistics.stdev(runs),
        "generator_means": means,
        "generator_means_std": statistics.stdev(means),
    }
    args.output.write_text(json.dumps(summary, indent=2) + "\n")


if __name__ == "__main__":
    main()
