"""The one current results table: rendered from the committed reports, the same in README.md and at the top of
docs/benchmarks.md (a test holds all three equal).

    python dev/results_table.py            # print the table
    python dev/results_table.py --write    # put it between the markers of README.md and docs/benchmarks.md

Every cell is entity micro F1, mean ± std over tagger seeds (and over the generator trainings a cell names: every
run of every generator pooled), of the one protocol: ``hf-ecg evaluate ner`` with its
defaults (MiniLM-L6, 20 epochs, two-stage, the synthetic stage's epochs by its √ rule, no model selection, the whole
test split), learning rate 1e-4 on BC5CDR and 5e-5 on JNLPBA. ``ROWS`` names each cell's report and the commit
that added it; docs/benchmarks.md says how each row is made.
"""

from __future__ import annotations

import argparse
import json
import statistics
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BEGIN, END = "<!-- results-table:begin -->", "<!-- results-table:end -->"
PAGES = ("README.md", "docs/benchmarks.md")
CORPORA = ("BC5CDR 45", "JNLPBA 186")

#: (row, {corpus: (reports, commit)}); a row of several reports pools their runs (one seed a report); a corpus a row
#: leaves out is shown as not measured.
ROWS: list[tuple[str, dict[str, tuple[list[str], str]]]] = [
    (
        "gold alone",
        {
            "BC5CDR 45": (["results/headline/bc45-gold.ner.json"], "11f81c3"),
            "JNLPBA 186": (["results/headline/jn186-gold.ner.json"], "11f81c3"),
        },
    ),
    (
        "gold + mention replacement, 10×",
        {
            "BC5CDR 45": (["results/generated-mentions/bc5cdr-45-mr-bank-10x.ner.json"], "d0d5e4c"),
            "JNLPBA 186": (["results/generated-mentions/jnlpba-186-mr-bank-10x.ner.json"], "825cdec"),
        },
    ),
    (
        "gold + self-training on the rest of the pool",
        {
            "BC5CDR 45": (
                [f"results/label-noise/bc5cdr-45-self-training-450-seed{s}.ner.json" for s in (1, 2, 3)],
                "d6fe450",
            ),
            "JNLPBA 186": (
                [f"results/label-noise/jnlpba-186-self-training-1553-seed{s}.ner.json" for s in (1, 2)],
                "9b6a967",
            ),
        },
    ),
    (
        "gold + your text labelled by your dictionary alone (distant supervision, the `auto` recipe; JNLPBA: protein "
        "and mined names)",
        {
            "BC5CDR 45": (
                [
                    "results/silver-recipes/bc45-distant-oversample.ner.json",
                    "results/silver-recipes/bc45-distant-oversample-s23.ner.json",
                ],
                "81d6d2b",
            ),
            "JNLPBA 186": (["results/dictionaries/jnlpba-186-distant-pool.ner.json"], "1c7b255"),
        },
    ),
    (
        "**gold + hf_ecg, defaults, 10×**",
        {
            "BC5CDR 45": ([f"results/headline/bc45-g{seed}.ner.json" for seed in (42, 43, 44)], "fb884ba"),
            "JNLPBA 186": ([f"results/headline/jn186-g{seed}.ner.json" for seed in (42, 43, 44)], "70d528e"),
        },
    ),
    (
        "gold + hf_ecg sketches (GeniusAug: `train --layout sketch --unlabelled --dictionary`, then `generate "
        "--sketches GOLD --mentions generated`), 10×",
        {
            "BC5CDR 45": (
                [f"results/sketches/bc5cdr-45/text-g{seed}-450-written.ner.json" for seed in (42, 43, 44)],
                "888133f",
            ),
            "JNLPBA 186": (["results/sketches/jnlpba-186/text-g42-1860-written.ner.json"], "fa18307"),
        },
    ),
    (
        "gold + hf_ecg defaults and sketches, 10× each",
        {
            "BC5CDR 45": (["results/sketches/bc5cdr-45/together-ecg-default-g42.ner.json"], "b0d93fa"),
            "JNLPBA 186": (["results/sketches/jnlpba-186/together-ecg-default-g42.ner.json"], "cd50a9f"),
        },
    ),
    (
        "gold + a neighbouring domain's labelled sentences, mixed (BC5CDR: CRAFT's chemicals, JNLPBA: BioNLP 2011 "
        "ID's proteins; as many as 10× the gold)",
        {
            "BC5CDR 45": (["results/transfer/craft-bc5cdr-45/raw-concat-450.ner.json"], "bc33053"),
            "JNLPBA 186": (["results/transfer/ggp-jnlpba-186/raw-concat-1860.ner.json"], "7aae9ee"),
        },
    ),
    (
        "… the same sentences first, then gold",
        {
            "BC5CDR 45": (["results/transfer/craft-bc5cdr-45/raw-two-stage-450.ner.json"], "bc33053"),
            "JNLPBA 186": (["results/transfer/ggp-jnlpba-186/raw-two-stage-1860.ner.json"], "2f1a3a2"),
        },
    ),
    (
        "… those sentences written into your domain by the sketch generator first (style transfer: `generate "
        "--sketches SOURCE --type-map --target-text --candidates 3`), then gold",
        {
            "BC5CDR 45": (["results/transfer/craft-bc5cdr-45/g42-450-k3.ner.json"], "bc33053"),
            "JNLPBA 186": (["results/transfer/ggp-jnlpba-186/g42-1860-k3.ner.json"], "6a59e21"),
        },
    ),
    (
        "gold + hf_ecg with your dictionary and text (`--dictionary --unlabelled`), 10×",
        {
            "BC5CDR 45": (["results/dictionaries/bc5cdr-45-text-names-10x.ner.json"], "2ba78b3"),
            "JNLPBA 186": (["results/dictionaries/jnlpba-186-text-names-10x.ner.json"], "2ba78b3"),
        },
    ),
    (
        "gold + hf_ecg trained on your text too (`train --unlabelled --dictionary`), its shareable set (`generate "
        "--shareable`: no silver split, copies dropped), 10×",
        {
            "BC5CDR 45": ([f"results/text-trained/bc45-once-g{seed}.ner.json" for seed in (42, 43, 44)], "63a6340"),
            "JNLPBA 186": (["results/text-trained/jn186-once-g42.ner.json"], "e5137e2"),
        },
    ),
    (
        "… and your text labelled by the dictionary (the silver split; JNLPBA: with names mined from it)",
        {
            "BC5CDR 45": (["results/dictionaries/bc5cdr-45-text-names-10x+distant-pool.ner.json"], "cfc4649"),
            "JNLPBA 186": (["results/dictionaries/jnlpba-186-mined-names-10x+distant-pool.ner.json"], "54805f1"),
        },
    ),
    (
        "… with the short forms your text defines and the gold taggers' weights on the silver split (`generate "
        "--dictionary --unlabelled --gold`; the sketch generator)",
        {
            "BC5CDR 45": (["results/abbreviations/bc5cdr-45/product-both.ner.json"], "1c4051f"),
            "JNLPBA 186": (["results/abbreviations/jnlpba-186/product-both.ner.json"], "27f5db0"),
        },
    ),
    (
        "gold + hf_ecg with your name lists (`--mentions`), 10×",
        {
            "BC5CDR 45": (["results/mention-lists/bc5cdr-45-lists-10x-se6.ner.json"], "7123584"),
            "JNLPBA 186": (["results/mention-lists/jnlpba-186-lists-10x-se6.ner.json"], "884d845"),
        },
    ),
]


def cell(reports: list[str]) -> tuple[float, float]:
    """Mean and standard deviation (over seeds) of the reports' entity F1."""
    first, _, key = reports[0].partition("#")
    if key:  # a summary table that holds mean and std only
        mean, std = json.loads((ROOT / first).read_text())[key]["gold"]
        return mean, std
    runs = [run["entity_f1"] for path in reports for run in json.loads((ROOT / path).read_text())["runs"]]
    return statistics.mean(runs), statistics.stdev(runs) if len(runs) > 1 else 0.0


def runs_note(reports: list[str]) -> str:
    """What a cell's ± is over, where it is not the protocol's three tagger seeds: several generator trainings
    (one report each, scored with the same tagger seeds), or another number of seeds."""
    if "#" in reports[0]:
        return ""
    per_report = [len(json.loads((ROOT / path).read_text())["runs"]) for path in reports]
    if len(reports) > 1 and min(per_report) > 1 and len(set(per_report)) == 1:
        return f" ({len(reports)} generators × {per_report[0]} seeds)"
    return f" ({sum(per_report)} seeds)" if sum(per_report) != 3 else ""


def render() -> str:
    """The table, in Markdown, from the reports."""
    lines = [
        "| training data (MiniLM-L6 tagger, entity F1, mean ± std over tagger seeds and the generator trainings a cell "
        "names) | BC5CDR 45 | JNLPBA 186 | commits |",
        "|---|---|---|---|",
    ]
    for row, cells in ROWS:
        shown = []
        for corpus in CORPORA:
            if corpus not in cells:  # a row measured on one corpus
                shown.append("not measured")
                continue
            reports, _ = cells[corpus]
            mean, std = cell(reports)
            shown.append(f"{mean:.3f} ± {std:.3f}{runs_note(reports)}")
        commits = ", ".join(f"`{cells[c][1]}`" for c in CORPORA if c in cells)
        lines.append(f"| {row} | {' | '.join(shown)} | {commits} |")
    return "\n".join(lines) + "\n"


def table_in(page: Path, begin: str = BEGIN, end: str = END) -> str:
    """The table between the markers of ``page``."""
    text = page.read_text(encoding="utf-8")
    return text.split(begin, 1)[1].split(end, 1)[0].strip("\n") + "\n"


def with_table(text: str, table: str, begin: str = BEGIN, end: str = END) -> str:
    """``text`` with ``table`` between its markers (added at the end when it has none)."""
    block = f"{begin}\n{table}{end}"
    if begin not in text:
        return f"{text.rstrip()}\n\n{block}\n"
    before, rest = text.split(begin, 1)
    return before + block + rest.split(end, 1)[1]


def print_or_write(description: str, table: str, page: Path, begin: str, end: str) -> None:
    """The command line of a table script rendered into one page: print ``table``, or with ``--write`` put it between
    ``page``'s markers."""
    parser = argparse.ArgumentParser(description=description, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--write", action="store_true", help=f"write the table into {page.relative_to(ROOT)}")
    if not parser.parse_args().write:
        print(table, end="")
        return
    page.write_text(with_table(page.read_text(encoding="utf-8"), table, begin, end), encoding="utf-8")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--write", action="store_true", help="write the table into README.md and the benchmarks page")
    args = parser.parse_args()
    table = render()
    if not args.write:
        print(table, end="")
        return
    for page in PAGES:
        path = ROOT / page
        path.write_text(with_table(path.read_text(encoding="utf-8"), table), encoding="utf-8")


if __name__ == "__main__":
    main()
