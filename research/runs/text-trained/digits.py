"""Would a number rule catch the samples read as broken? Each sample of the committed twenty-sample reads is counted
for its words outside the entities that hold a digit; a rule dropping samples with K or more of them is scored against
the person's judgments: broken and fine samples dropped, and per read the broken share of what it keeps, as of twenty.

    python research/runs/text-trained/digits.py -o results/text-trained/digits.json
"""

from __future__ import annotations

import argparse
import json
import re
from pathlib import Path

from reads import MARK, READS, read_samples

DIGIT = re.compile(r"\d")
LINES = (2, 3, 4, 5)


def digit_words(marked: str) -> int:
    """The words outside the marked entities that hold a digit."""
    return sum(bool(DIGIT.search(word)) for word in MARK.sub(" ", marked).split())


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("-o", "--output", type=Path, required=True)
    args = parser.parse_args()
    samples = {
        file: [(index, index in broken, digit_words(text)) for index, text in read_samples(file)]
        for file, (_, broken) in READS.items()
    }
    report: dict = {
        "samples": {
            file: [{"index": i, "broken": b, "digit_words": d} for i, b, d in rows] for file, rows in samples.items()
        }
    }
    report["rules"] = {}
    rows = [s for v in samples.values() for s in v]
    for k in LINES:
        per_read = {}
        for file, v in samples.items():
            kept = [s for s in v if s[2] < k]
            broken = sum(s[1] for s in kept)
            per_read[file] = {
                "broken_read": sum(s[1] for s in v),
                "kept": len(kept),
                "broken_kept": broken,
                "broken_of_20_after": round(20 * broken / len(kept), 1),
            }
        report["rules"][f"digit_words>={k}"] = {
            "broken_dropped": sum(s[1] and s[2] >= k for s in rows),
            "broken": sum(s[1] for s in rows),
            "fine_dropped": sum(not s[1] and s[2] >= k for s in rows),
            "fine": sum(not s[1] for s in rows),
            "reads": per_read,
        }
        print(k, report["rules"][f"digit_words>={k}"])
    args.output.write_text(json.dumps(report, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
