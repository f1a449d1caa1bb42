"""The templates' and the mention writer's seconds per shard, read from an ``hf-ecg generate`` log.

``hf-ecg generate`` shows one progress bar: it reads ``Generating`` while a shard's templates are decoded and
``Writing mentions of shard K`` while their slots are written, and redraws itself with its elapsed time at each
switch. So one run, in one process, gives both costs of every shard, as a user's run spends them::

    hf-ecg generate --model GENERATOR -n 1860 -o OUT 2> generate.log
    python scripts/generation_log_times.py generate.log

Prints a line per shard (templates s, writer s, their ratio) and the totals; the resolution is a second.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

BAR = re.compile(
    r"^(?P<desc>Generating|Writing mentions of shard \d+):\s+\d+%\|[^|]*\|\s*\d+/\d+ "
    r"\[(?:(?P<h>\d+):)?(?P<m>\d+):(?P<s>\d+)"
)


def shard_seconds(log: str) -> list[tuple[int, int | None]]:
    """``(templates seconds, writer seconds)`` per shard, in order; the writer's is ``None`` for a shard whose
    writing had not finished when the log ends."""
    marks = []  # (writing?, elapsed seconds) of every redraw of the bar
    for line in log.replace("\r", "\n").split("\n"):
        match = BAR.match(line)
        if match:
            elapsed = int(match["h"] or 0) * 3600 + int(match["m"]) * 60 + int(match["s"])
            marks.append((match["desc"].startswith("Writing"), elapsed))
    shards, shard_start, i = [], 0, 0
    while i < len(marks):
        if not marks[i][0]:
            i += 1
            continue
        writing_start = marks[i][1]
        while i < len(marks) and marks[i][0]:
            i += 1
        writing_end = marks[i][1] if i < len(marks) else None  # the bar reads "Generating" again
        shards.append((writing_start - shard_start, None if writing_end is None else writing_end - writing_start))
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
    for k, (templates, writer) in enumerate(shards):
        ratio = f", writer/templates {writer / templates:.3f}" if writer is not None and templates else ""
        print(f"shard {k}: templates {templates} s, writer {writer} s{ratio}")
    done = [(t, w) for t, w in shards if w is not None]
    templates, writer = sum(t for t, _ in done), sum(w for _, w in done)
    print(f"{len(done)} shards: templates {templates} s, writer {writer} s, writer/templates {writer / templates:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
