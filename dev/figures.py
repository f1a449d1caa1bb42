"""Every measured figure in the README, the docs and the example model cards has a committed report behind it.

A figure is a score written as ``0.ddd`` (0.010 and up: F1, precision, recall, shares). Each paragraph or table row
that holds one must cite its reports (``results/…json``, or a ``results/`` folder: every JSON under it), or sit in a
section (heading to next heading) that does; and every figure in it must be a number of those reports, rounded to
three decimals. Tables rendered from the reports (between ``<!-- NAME:begin -->`` and ``<!-- NAME:end -->``) are
checked by their own renderers and left out here; a model card cites the reports it was made from in
:data:`CARD_REPORTS`. ``python dev/figures.py`` prints each figure that fails, with its page and line.
"""

from __future__ import annotations

import itertools
import json
import re
import sys
from collections.abc import Iterator
from functools import cache
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

#: The pages whose figures are checked.
PAGES = ("README.md", "docs/**/*.md", "model_cards/**/*.md")

#: An example model card is rendered by ``push-model`` from card data and an ``evaluate ner`` report: those.
CARD_REPORTS = {
    "model_cards/bc5cdr-ecg-qalm/README.md": (
        "results/headline/bc45-g42.ner.json",
        "results/headline/bc45-g42.card.json",
    ),
}

FIGURE = re.compile(r"(?<![\d.,(=e-])0\.\d{3}(?![\d)])")
CITATION = re.compile(r"results/[\w./+*-]*[\w/*]")
RENDERED = re.compile(r"<!-- ([\w-]+):begin -->.*?<!-- \1:end -->", re.S)
HEADING = re.compile(r"^#{1,6} ", re.M)
ITEM = re.compile(r"^\s*(?:[-*]|\d+\.) ")


def _numbers(value: object) -> Iterator[float]:
    if isinstance(value, dict):
        for item in value.values():
            yield from _numbers(item)
    elif isinstance(value, list):
        for item in value:
            yield from _numbers(item)
    elif isinstance(value, (int, float)) and not isinstance(value, bool):
        yield float(value)


@cache
def report_figures(citation: str) -> frozenset[str]:
    """The numbers of the cited report: a JSON report, every JSON report under a cited folder (a folder's README
    stands for its folder: its tables are rendered from the reports beside it), or a text record (a benchmark's
    printout), as ``0.ddd``."""
    path = ROOT / citation
    if path.name == "README.md":
        path = path.parent
    if "*" in citation:
        files = sorted(ROOT.glob(citation))
    else:
        files = sorted(path.rglob("*.json")) if path.is_dir() else [path]
    found = set()
    for file in files:
        if not file.is_file():
            continue
        if file.suffix == ".json":
            found.update(f"{number:.3f}" for number in _numbers(json.loads(file.read_text(encoding="utf-8"))))
        else:
            found.update(f"{float(number):.3f}" for number in re.findall(r"\d+\.\d+", file.read_text(encoding="utf-8")))
    return frozenset(found)


def _units(section: str) -> Iterator[tuple[int, str]]:
    """``(line offset, text)`` of each paragraph, list item and table row of a section."""
    offset = 0
    for block in re.split(r"(\n\s*\n)", section):
        if block.strip() and not block.isspace():
            lines = block.splitlines()
            if block.lstrip().startswith("|"):
                yield from ((offset + k, line) for k, line in enumerate(lines))
            else:
                starts = [k for k, line in enumerate(lines) if k == 0 or ITEM.match(line)]
                for first, last in zip(starts, [*starts[1:], len(lines)], strict=True):
                    yield offset + first, "\n".join(lines[first:last])
        offset += block.count("\n")


def problems(page: Path, text: str | None = None) -> list[str]:
    """``page:line: figure: what is wrong`` for every figure of ``page`` (or of ``text`` as that page) without a
    report that holds it."""
    relative = page.relative_to(ROOT).as_posix()
    text = page.read_text(encoding="utf-8") if text is None else text
    # keep line numbers: code blocks and rendered tables become blank lines (a rendered table's citations stay
    # its section's)
    text = re.sub(r"```.*?```", lambda m: "\n" * m.group().count("\n"), text, flags=re.S)
    cited_by_tables = {m.start(): CITATION.findall(m.group()) for m in RENDERED.finditer(text)}
    text = RENDERED.sub(lambda m: "\n" * m.group().count("\n"), text)
    found = []
    starts = [0, *(m.start() for m in HEADING.finditer(text)), len(text)]
    for begin, end in itertools.pairwise(starts):
        section = text[begin:end]
        first_line = text[:begin].count("\n") + 1
        tables = [cite for at, cites in cited_by_tables.items() if begin <= at < end for cite in cites]
        section_cites = CITATION.findall(section) + tables + list(CARD_REPORTS.get(relative, ()))
        for offset, unit in _units(section):
            figures = [f for f in FIGURE.findall(unit) if float(f) >= 0.01]
            if not figures:
                continue
            cites = CITATION.findall(unit) or section_cites
            where = f"{relative}:{first_line + offset}"
            if not cites:
                found.append(f"{where}: {', '.join(figures)}: no report cited in the paragraph or its section")
                continue
            known = frozenset().union(*(report_figures(c.rstrip(".")) for c in cites))
            for figure in figures:
                if figure not in known:
                    found.append(f"{where}: {figure}: in none of {', '.join(sorted(set(cites)))}")
    return found


def pages() -> list[Path]:
    return sorted({path for pattern in PAGES for path in ROOT.glob(pattern)})


def main() -> int:
    found = [problem for page in pages() for problem in problems(page)]
    print("\n".join(found) or "every figure has a report behind it")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
