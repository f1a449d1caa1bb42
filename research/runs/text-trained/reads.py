"""The committed twenty-sample reads and the samples a person judged broken in them (fragments, number soups, invented
words), as results/text-trained/README.md says; shared by the scripts that ask whether a rule would find them."""

import re
from pathlib import Path

R = Path("results/text-trained")
#: read file -> (corpus, the indices of the samples read as broken)
READS = {
    "bc45-once-g42.read-20.txt": ("bc5cdr", {16, 35, 39, 77, 204, 275}),
    "bc45-twice-g42.read-20.txt": ("bc5cdr", {15, 16, 39, 77, 275, 422}),
    "bc45-450-once-g44.read-20.txt": ("bc5cdr", {16, 35, 39, 117, 204, 264, 298, 301, 323, 324, 400, 422, 440}),
    "jn186-once-g42.read-20.txt": ("jnlpba", {62, 141, 156, 311, 1760}),
}
#: an entity as a read marks it, ``[Type: words]``
MARK = re.compile(r"\[[^\]:]+: ([^\]]*)\]")


def read_samples(file: str) -> list[tuple[int, str]]:
    """The (index, marked text) of each sample in a committed read."""
    rows = []
    for line in (R / file).read_text().splitlines():
        if line.startswith("#") or not line.strip():
            continue
        index, text = line.split(" ", 1)
        rows.append((int(index), text))
    return rows
