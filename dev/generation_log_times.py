"""The templates' and the mention writer's seconds per writer call, read from an ``hf-ecg generate`` log.

``hf-ecg generate`` shows one progress bar: it reads ``Generating`` while shards' templates are decoded and
``Writing mentions of shard K`` (or ``of shards K, L, ...``: up to 1,024 samples' mentions are written in one call)
while their slots are written, and redraws itself with its elapsed time at each switch. So one run, in one process,
gives both costs of every group of shards, as a user's run spends them::

    hf-ecg generate --model GENERATOR -n 1860 -o OUT 2> generate.log
    python dev/generation_log_times.py generate.log

Prints a line per writer call (its shards, templates s, writer s, their ratio) and the totals; the resolution is a
second.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

BAR = re.compile(
    r"^(?P<desc>Generating|Writing mentions of shards? (?P<shards>\d+(?:, \d+)*)):\s+\d+%\|[^|]*\|\s*\d+/\d+ "
    r"\[(?:(?P<h>\d+):)?(?P<m>\d+):(?P<s>\d+)"
)


def shard_seconds(log: str) -> list[tuple[str, int, int | None]]:
    """``(shards, templates seconds, writer seconds)`` per writer call, in order; the writer's is ``None`` for a call
    whose writing had not finished when the log ends."""
    marks = []  # (the shards being written or None, elapsed seconds) of every redraw of the bar
    for line in log.replace("\r", "\n").split("\n"):
        match = BAR.match(line)
        if match:
            elapsed = int(match["h"] or 0) * 3600 + int(match["m"]) * 60 + int(match["s"])
            marks.append((match["shards"], elapsed))
    shards, shard_start, i = [], 0, 0
    while i < len(marks):
        if not marks[i][0]:
            i += 1
            continue
        named, writing_start = marks[i]
        while i < len(marks) and marks[i][0]:
            i += 1
        writing_end = marks[i][1] if i < len(marks) else None  # the bar reads "Generating" again
        writer = None if writing_end is None else writing_end - writing_start
        shards.append((named, writing_start - shard_start, writer))
        if writing_end is None:
            break
        shard_start = writing_end
    return shards


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("log", type=Path, help="what hf-ecg generate wrote to stderr")
    args = parser.parse_args()
    shards = shard_seconds(args.log.read_text())
    if not shards:
        sys.exit(f"{args.log}: no 'Writing mentions' in the progress bar (bank mentions, or no bar in this log)")
    for named, templates, writer in shards:
        ratio = f", writer/templates {writer / templates:.3f}" if writer is not None and templates else ""
        print(f"shards {named}: templates {templates} s, writer {writer} s{ratio}")
    done = [(t, w) for _, t, w in shards if w is not None]
    templates, writer = sum(t for t, _ in done), sum(w for _, w in done)
    print(f"{len(done)} calls: templates {templates} s, writer {writer} s, writer/templates {writer / templates:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
