"""The product speaks of itself: help in a sentence or two, no history words, a current generated reference,
one results table in the README and on the benchmarks page, links that resolve."""

from __future__ import annotations

import argparse
import re
import statistics
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from hf_ecg.cli import build_parser

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "dev"))

import figures  # noqa: E402
import make_reference  # noqa: E402
import results_table  # noqa: E402

#: What a help text may not hold: a measured figure, or the team's history.
HELP_FIGURE = re.compile(r"\b0\.\d{3}|session|issue \d", re.IGNORECASE)
HELP_LIMIT = 300


def help_entries(parser: argparse.ArgumentParser, path: tuple[str, ...] = ()) -> Iterator[tuple[str, str]]:
    """``(where, text)`` of every help text a user reads: each command's description and summary, each option's."""
    yield " ".join(("hf-ecg", *path, "(description)")), parser.description or ""
    formatter = parser._get_formatter()
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for choice in action._choices_actions:
                yield " ".join(("hf-ecg", *path, choice.dest, "(summary)")), choice.help or ""
            for name, sub in action.choices.items():
                yield from help_entries(sub, (*path, name))
        elif action.help and action.help != argparse.SUPPRESS:
            yield " ".join(("hf-ecg", *path, *(action.option_strings or [action.dest]))), formatter._expand_help(action)


def help_problems(entries: Iterator[tuple[str, str]]) -> list[str]:
    return [
        f"{where}: {'too long' if len(text) > HELP_LIMIT else 'figure or history'}: {text[:80]}"
        for where, text in entries
        if len(text) > HELP_LIMIT or HELP_FIGURE.search(text)
    ]


def test_every_help_text_is_short_and_holds_no_figure_or_history():
    entries = list(help_entries(build_parser()))
    assert len(entries) > 150  # every command and option was walked
    assert help_problems(iter(entries)) == []


@pytest.mark.parametrize(
    "text", ["x" * (HELP_LIMIT + 1), "tagger F1 0.465 on JNLPBA", "as measured in the ninth session", "see issue 48"]
)
def test_the_help_check_catches_a_long_or_measured_help(text):
    assert help_problems(iter([("hf-ecg train --x", text)])) != []


#: History words: the team's diary has no place in the product (it lives in git and CHANGELOG.md).
ORDINALS = (
    "first|second|third|fourth|fifth|sixth|seventh|eighth|ninth|tenth|eleventh|twelfth|thirteenth|fourteenth|"
    "fifteenth|sixteenth|seventeenth|eighteenth|nineteenth|twentieth"
)
HISTORY = [
    re.compile(r"\bsession", re.IGNORECASE),
    re.compile(r"\bissues? #?\d+", re.IGNORECASE),
    re.compile(rf"\b({ORDINALS})[- ]session", re.IGNORECASE),
    re.compile(r"previous version|an earlier version|\bthe \w+ of before\b", re.IGNORECASE),
]
#: A commit hash in prose (a table's commit column may name the commit a figure was made at).
COMMIT_IN_PROSE = re.compile(r"`[0-9a-f]{7,12}`")  # not a 16-digit fingerprint
#: pytest's fixture scope is no history word.
ALLOWED = re.compile(r"scope=\"session\"|session_start|pytest_session")
PRODUCT = ["README.md", "docs", "src", "scripts", "model_cards", "spaces"]


def history_problems(path: Path, text: str) -> list[str]:
    problems = []
    for number, line in enumerate(text.splitlines(), 1):
        checked = ALLOWED.sub("", line)
        if any(pattern.search(checked) for pattern in HISTORY):
            problems.append(f"{path}:{number}: {line.strip()[:100]}")
        elif COMMIT_IN_PROSE.search(checked) and not checked.lstrip().startswith("|"):
            problems.append(f"{path}:{number}: a commit hash in prose: {line.strip()[:100]}")
    return problems


def product_files() -> Iterator[Path]:
    for name in PRODUCT:
        path = ROOT / name
        files = [path] if path.is_file() else sorted(path.rglob("*"))
        for file in files:
            if file.is_file() and file.suffix in {".md", ".py", ".txt", ".jinja", ".yaml", ".yml", ".toml", ""}:
                if not any(part.endswith(".egg-info") or part == "__pycache__" for part in file.parts):
                    yield file


def test_the_product_has_no_history_words():
    problems = [p for file in product_files() for p in history_problems(file, file.read_text(encoding="utf-8"))]
    assert problems == []


def test_the_results_say_what_they_hold_not_when_it_was_made():
    """results/ READMEs name the commit behind each figure (provenance), never the work diary."""
    problems = [
        f"{path}:{number}: {line.strip()[:100]}"
        for path in sorted((ROOT / "results").rglob("*.md"))
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if any(pattern.search(line) for pattern in HISTORY)
    ]
    assert problems == []


def test_no_text_of_the_product_names_its_history_or_an_outside_document():
    """What `grep -rniE 'session|issue [0-9]|of before|DESIGN §'` over the product's folders finds: nothing, in any
    text file (reports and records under results/ included)."""
    pattern = re.compile(r"session|issue [0-9]|of before|DESIGN §", re.IGNORECASE)
    found = []
    for top in ("README.md", "docs", "src", "scripts", "model_cards", "spaces", "results"):
        paths = [ROOT / top] if (ROOT / top).is_file() else sorted((ROOT / top).rglob("*"))
        for path in paths:
            if not path.is_file() or path.suffix in {".parquet", ".png", ".arrow", ".safetensors", ".pyc", ".bin"}:
                continue
            try:
                text = path.read_text(encoding="utf-8")
            except UnicodeDecodeError:
                continue
            found += [f"{path.relative_to(ROOT)}: {m.group()}" for m in pattern.finditer(text)]
    assert found == []


@pytest.mark.parametrize(
    "line",
    [
        "Measured in the nineteenth session.",
        "This closes issue 48.",
        "as the previous version did",
        "the writer of before",
        "fixed in `6ab5496`, the writer",
        "Session notes",
    ],
)
def test_the_history_check_catches_each_kind(line):
    assert history_problems(Path("README.md"), line) != []


def test_the_history_check_allows_fixtures_and_a_table_s_commit_column():
    assert history_problems(Path("tests/conftest.py"), '@pytest.fixture(scope="session")') == []
    assert history_problems(Path("docs/benchmarks.md"), "| gold | 0.450 ± 0.008 | `e254569` |") == []


def test_the_cli_and_python_references_are_current():
    for path, text in make_reference.pages().items():
        assert (ROOT / path).read_text(encoding="utf-8") == text, f"{path} is stale: run python dev/make_reference.py"


def test_the_readme_results_table_is_the_benchmarks_page_s_and_the_reports():
    table = results_table.render()
    for page in ("README.md", "docs/benchmarks.md"):
        assert results_table.table_in(ROOT / page) == table, f"{page}: run python dev/results_table.py --write"


def test_the_benchmarks_dictionary_tables_are_the_reports():
    import dictionary_table

    page = ROOT / "docs" / "benchmarks.md"
    shown = results_table.table_in(page, dictionary_table.BEGIN, dictionary_table.END)
    assert shown == dictionary_table.render(), "docs/benchmarks.md: run python dev/dictionary_table.py --write"


def test_the_silver_recipes_tables_are_the_reports():
    import silver_table

    page = silver_table.S / "README.md"
    shown = results_table.table_in(page, silver_table.BEGIN, silver_table.END)
    assert shown == silver_table.render(), "results/silver-recipes/README.md: run python dev/silver_table.py --write"


def test_the_fairness_guide_table_is_the_reports():
    import fairness_table

    shown = results_table.table_in(fairness_table.PAGE, fairness_table.BEGIN, fairness_table.END)
    assert shown == fairness_table.render(), "docs/guides/fairness.md: run python dev/fairness_table.py --write"


def test_the_results_table_check_fails_on_a_changed_cell(tmp_path):
    page = tmp_path / "page.md"
    page.write_text(results_table.with_table("intro\n", results_table.render()).replace("0.452 ±", "0.425 ±"))
    assert results_table.table_in(page) != results_table.render()


def test_the_readme_is_a_landing_page_whose_links_resolve():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(readme.splitlines()) <= 250
    first_screen = "\n".join(readme.splitlines()[:70])  # install, quick start and the table come first
    for part in ("pip install", "hf-ecg train", "pipeline(", "| BC5CDR 45"):
        assert part in first_screen, part
    broken = link_problems(ROOT / "README.md") + [
        p for page in (ROOT / "docs").rglob("*.md") for p in link_problems(page)
    ]
    assert broken == []


def link_problems(page: Path) -> list[str]:
    """Relative links of ``page`` that name no file, or no heading of the file they name."""
    problems = []
    for target in re.findall(r"\]\(([^)\s]+)\)", page.read_text(encoding="utf-8")):
        if re.match(r"[a-z]+:", target):
            continue
        file, _, anchor = target.partition("#")
        linked = (page.parent / file).resolve() if file else page
        if not linked.exists():
            problems.append(f"{page.name}: {target}: no such file")
        elif anchor and linked.suffix == ".md" and anchor not in anchors(linked):
            problems.append(f"{page.name}: {target}: no such heading")
    return problems


def anchors(page: Path) -> set[str]:
    """GitHub's anchors of a Markdown page's headings."""
    found = set()
    for line in page.read_text(encoding="utf-8").splitlines():
        if line.startswith("#"):
            title = line.lstrip("#").strip().lower()
            found.add(re.sub(r"[^\w\- ]", "", title).replace(" ", "-"))
    return found


def test_the_reference_script_runs_as_a_user_runs_it():
    done = subprocess.run([sys.executable, str(ROOT / "dev" / "make_reference.py"), "--check"], cwd=ROOT)
    assert done.returncode == 0


def test_every_figure_in_the_readme_docs_and_cards_has_a_report_behind_it():
    assert len(figures.pages()) > 15
    assert [problem for page in figures.pages() for problem in figures.problems(page)] == []


def test_the_figure_check_fails_on_a_changed_figure_and_an_uncited_one():
    page = ROOT / "docs" / "guides" / "dictionaries.md"
    text = page.read_text(encoding="utf-8")
    cited = "0.470\n(`results/dictionaries/jnlpba-186-distant-pool.ner.json`)"
    assert cited in text and figures.problems(page, text) == []
    changed = figures.problems(page, text.replace(cited, cited.replace("0.470", "0.987")))
    assert len(changed) == 1 and "0.987: in none of " in changed[0]
    uncited = figures.problems(page, text + "\n## More\n\nThe tagger then scores 0.912 on BC5CDR 45.\n")
    assert len(uncited) == 1 and "0.912: no report cited" in uncited[0]


def sentence_lengths(markdown: str) -> list[int]:
    """Words per sentence of a page's prose: code blocks, tables, headings and rendered tables left out, inline code
    one word, a link its text, a list item a unit of its own."""
    text = re.sub(r"```.*?```|<!-- ([\w-]+):begin -->.*?<!-- \1:end -->", "", markdown, flags=re.S)
    units: list[list[str]] = []
    for line in text.splitlines():
        if not line.strip() or line.lstrip().startswith(("|", "#", "<!--")):
            units.append([])
        elif re.match(r"^\s*(?:[-*]|\d+\.) ", line) or not units:
            units.append([line.strip()])
        else:
            units[-1].append(line.strip())
    lengths = []
    for unit in filter(None, units):
        prose = re.sub(r"^(?:[-*]|\d+\.) ", "", " ".join(unit))
        prose = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", re.sub(r"`[^`]*`", "X", prose))
        lengths += [len(s.split()) for s in re.split(r"(?<=[.!?])\s+(?=[A-Z(\[X*])", prose) if len(s.split()) > 1]
    return lengths


@pytest.mark.parametrize("page", sorted((ROOT / "docs" / "guides").glob("*.md")), ids=lambda p: p.name)
def test_the_guides_speak_in_plain_sentences(page):
    """A user guide's median sentence is 25 words or fewer; evidence and profiles live on the benchmarks,
    ablations and performance pages."""
    lengths = sentence_lengths(page.read_text(encoding="utf-8"))
    if len(lengths) >= 5:
        assert statistics.median(lengths) <= 25, f"{page.name}: median sentence {statistics.median(lengths)} words"


def test_the_sentence_measure_counts_words_per_sentence():
    assert sentence_lengths("One two three. Four `five six` seven.\n\n| a | b |\n\n- An item here.\n") == [3, 3, 3]
    assert sentence_lengths("```\ncode here now\n```\nSee [the page](x.md) now.") == [4]


def test_every_results_folder_says_what_it_holds_and_the_index_names_it():
    index = (ROOT / "results" / "README.md").read_text(encoding="utf-8")
    folders = sorted(path for path in (ROOT / "results").iterdir() if path.is_dir())
    assert len(folders) > 20
    assert [f.name for f in folders if not (f / "README.md").is_file()] == []
    assert [f.name for f in folders if f"`{f.name}/`" not in index] == []


def test_the_contributing_layout_names_every_module():
    """CONTRIBUTING.md's source layout stays true: every module of the package is named there."""
    layout = (ROOT / "CONTRIBUTING.md").read_text(encoding="utf-8")
    layout = layout[layout.index("## Source layout") :]
    package = ROOT / "src" / "hf_ecg"
    modules = [
        path for path in sorted(package.rglob("*.py")) if path.name != "__init__.py" and "remote_code" not in path.parts
    ]
    assert [str(p.relative_to(package)) for p in modules if p.name not in layout] == []
