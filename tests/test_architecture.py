"""The house's floors: no import cycle between the package's modules, and no package importing one above it.

Every import counts, those inside functions too (a lazy import that closes a circle is still a circle). The floors,
lowest first, are :data:`FLOORS`, and they are the order in which the work depends on itself: the generation
engine (``runtime``, shipped on its own); the user's inputs read and the formats on disk (``data``); the base models
(``modeling``); the downstream tagger (``taggers``); what labels text without a person (``labelling``: dictionaries,
taggers' readings, mined names); the measures (``evaluation``); the cards and the training record (``hub``, which
generation and training both fill); writing datasets (``synthetic``) and judging samples (``selection``), siblings
that import nothing of each other; training generators (``training``, whose
second stage writes its own sentences with ``synthetic``); the public names, and the commands and the demo on top.
Data itself flows corpus → blocks → trainer → model → engine → dataset → Hub through them.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parent.parent / "src"

#: The packages (and top-level modules) of hf_ecg, lowest floor first; one floor's members may not import each
#: other. ``runtime`` is shipped as remote code and imports nothing of hf_ecg outside it.
FLOORS: tuple[tuple[str, ...], ...] = (
    ("runtime",),
    ("citation", "_registration"),
    ("data",),
    ("modeling",),
    ("taggers",),
    ("labelling",),
    ("evaluation",),
    ("hub",),
    ("synthetic", "selection"),
    ("training",),
    ("__init__",),
    ("demo", "cli"),
    ("__main__",),
)


def package_files(src: Path) -> list[Path]:
    """The package's modules, less the one file of remote code generated from them (``remote_code/``)."""
    return [path for path in (src / "hf_ecg").rglob("*.py") if "remote_code" not in path.parts]


def module_names(src: Path) -> dict[str, Path]:
    """``hf_ecg.x.y`` → its file, for every module under ``src/hf_ecg`` (a package by its ``__init__``)."""
    modules = {}
    for path in package_files(src):
        name = ".".join(path.relative_to(src).with_suffix("").parts)
        modules[name.removesuffix(".__init__")] = path
    return modules


def import_graph(src: Path) -> dict[str, set[str]]:
    """Each module's imports of other hf_ecg modules (``from .x import f`` counts as an import of ``x``, or of
    the module ``x.f`` where ``f`` is one), wherever in the file they stand."""
    modules = module_names(src)
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        found: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom):
                if node.level:
                    parts = package.split(".")
                    base = ".".join(parts[: len(parts) - node.level + 1] + ([node.module] if node.module else []))
                else:
                    base = node.module or ""
                for alias in node.names:
                    found.add(f"{base}.{alias.name}" if f"{base}.{alias.name}" in modules else base)
            elif isinstance(node, ast.Import):
                found.update(alias.name for alias in node.names)
        graph[name] = {target for target in found if target in modules and target != name}
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm, iteratively)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for root in graph:
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def floor_of(module: str) -> int:
    """The floor of a module's package (``hf_ecg`` itself: ``__init__``)."""
    parts = module.split(".")
    package = parts[1] if len(parts) > 1 else "__init__"
    for level, members in enumerate(FLOORS):
        if package in members:
            return level
    raise AssertionError(f"{module}: its package {package!r} has no floor in FLOORS")


def upward_imports(graph: dict[str, set[str]]) -> list[str]:
    """``a -> b`` for every import of a module on the same or a higher floor in another package."""
    wrong = []
    for module, targets in graph.items():
        for target in targets:
            same_package = module.split(".")[:2] == target.split(".")[:2]
            if not same_package and floor_of(target) >= floor_of(module):
                wrong.append(f"{module} -> {target}")
    return sorted(wrong)


def test_the_package_has_no_import_cycle():
    assert cycles(import_graph(SRC)) == []


def test_no_package_imports_one_on_its_floor_or_above():
    assert upward_imports(import_graph(SRC)) == []


def plant(root: Path, files: dict[str, str]) -> Path:
    """A copy-free stand-in package: ``files`` (paths under hf_ecg/) with the given sources."""
    for name, source in files.items():
        path = root / "hf_ecg" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(source, encoding="utf-8")
    return root


def test_a_planted_cycle_is_found_lazy_imports_included(tmp_path):
    src = plant(
        tmp_path,
        {
            "__init__.py": "",
            "synthetic/__init__.py": "",
            "synthetic/generate.py": "from ..training.advice import advice\n",
            "training/__init__.py": "",
            "training/advice.py": "def advice():\n    from .own import count\n",
            "training/own.py": "def count():\n    from ..synthetic.generate import run\n",
        },
    )
    assert cycles(import_graph(src)) == [["hf_ecg.synthetic.generate", "hf_ecg.training.advice", "hf_ecg.training.own"]]


@pytest.mark.parametrize(
    ("module", "source", "wrong"),
    [
        ("runtime/words.py", "from ..data.corpus import Corpus\n", "hf_ecg.runtime.words -> hf_ecg.data.corpus"),
        ("synthetic/run.py", "from ..training import train\n", "hf_ecg.synthetic.run -> hf_ecg.training.train"),
        ("cli/generate.py", "def f():\n    from ..demo import app\n", "hf_ecg.cli.generate -> hf_ecg.demo.app"),
        (
            "taggers/tagger.py",
            "from ..labelling.dictionary import D\n",
            "hf_ecg.taggers.tagger -> hf_ecg.labelling.dictionary",
        ),
        (
            "labelling/dictionary.py",
            "from ..evaluation.ner import f\n",
            "hf_ecg.labelling.dictionary -> hf_ecg.evaluation.ner",
        ),
        ("data/corpus.py", "from ..taggers.tagger import T\n", "hf_ecg.data.corpus -> hf_ecg.taggers.tagger"),
    ],
)
def test_a_planted_upward_import_is_found(tmp_path, module, source, wrong):
    files = {
        "__init__.py": "",
        **{
            f"{package}/__init__.py": ""
            for package in (
                "runtime",
                "data",
                "taggers",
                "labelling",
                "evaluation",
                "synthetic",
                "training",
                "cli",
                "demo",
            )
        },
        "data/corpus.py": "",
        "taggers/tagger.py": "",
        "labelling/dictionary.py": "",
        "evaluation/ner.py": "",
        "training/train.py": "",
        "demo/app.py": "",
        module: source,
    }
    assert upward_imports(import_graph(plant(tmp_path, files))) == [wrong]


#: Sizes a newcomer can read at once: lines per module, per function (docstring and decorators included), and per
#: class of the generation engine's decoders and writer.
MAX_MODULE_LINES = 400
MAX_FUNCTION_LINES = 80
MAX_ENGINE_CLASS_LINES = 250
ENGINE_CLASSES = ("BlockDecoder", "ChainedDecoder", "TemplateLMDecoder", "MentionWriter", "RowSampler", "SampleRun")


def oversized(src: Path) -> list[str]:
    """``path: what (lines)`` for every module, function and engine class over its limit."""
    found = []
    for path in sorted(package_files(src)):
        text = path.read_text(encoding="utf-8")
        where = path.relative_to(src).as_posix()
        if len(text.splitlines()) > MAX_MODULE_LINES:
            found.append(f"{where}: module ({len(text.splitlines())})")
        for node in ast.walk(ast.parse(text)):
            start = min([getattr(node, "lineno", 0)] + [d.lineno for d in getattr(node, "decorator_list", [])])
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                lines = node.end_lineno - start + 1
                if lines > MAX_FUNCTION_LINES:
                    found.append(f"{where}: {node.name} ({lines})")
            elif isinstance(node, ast.ClassDef) and node.name in ENGINE_CLASSES:
                lines = node.end_lineno - start + 1
                if lines > MAX_ENGINE_CLASS_LINES:
                    found.append(f"{where}: class {node.name} ({lines})")
    return found


def test_no_module_function_or_engine_class_is_over_its_size():
    assert oversized(SRC) == []


def test_an_oversized_module_function_and_class_are_found(tmp_path):
    long_function = "def f():\n" + "    x = 1\n" * MAX_FUNCTION_LINES
    long_class = "class MentionWriter:\n" + "    y = 2\n" * MAX_ENGINE_CLASS_LINES
    src = plant(
        tmp_path,
        {
            "__init__.py": "",
            "small.py": "def g():\n    return 1\n",
            "big.py": "z = 0\n" * (MAX_MODULE_LINES + 1),
            "function.py": long_function,
            "engine.py": long_class,
        },
    )
    assert oversized(src) == [
        f"hf_ecg/big.py: module ({MAX_MODULE_LINES + 1})",
        f"hf_ecg/engine.py: class MentionWriter ({MAX_ENGINE_CLASS_LINES + 1})",
        f"hf_ecg/function.py: f ({MAX_FUNCTION_LINES + 1})",
    ]


#: The modules outside ``evaluation`` that import it, and why: each asks for a measure, never for its inputs.
MEASURE_IMPORTERS = {
    "hf_ecg": "evaluate_ner, a public name",
    "hf_ecg.cli.evaluate": "the evaluate command",
    "hf_ecg.hub.dataset_card": "the surface-health measures the card reports",
    "hf_ecg.selection.rules": "the near-copy and fragment rules' measures",
    "hf_ecg.selection.shared_runs": "the ROUGE-L of the text sentence that holds a sample's longest shared run",
}


def test_inputs_are_read_on_the_ground_floor_not_through_evaluation():
    graph = import_graph(SRC)
    importers = {
        module
        for module, targets in graph.items()
        if not module.startswith("hf_ecg.evaluation") and any(t.startswith("hf_ecg.evaluation") for t in targets)
    }
    assert importers == set(MEASURE_IMPORTERS)
    assert not any("hf_ecg.evaluation" in targets for targets in graph.values())  # the package's face holds nothing
    loaders = ast.parse((SRC / "hf_ecg" / "data" / "sources.py").read_text(encoding="utf-8"))
    defined = {node.name for node in loaders.body if isinstance(node, ast.FunctionDef)}
    assert {"load_labelled", "load_source", "load_unlabelled_source", "source_path", "load_flags"} <= defined


ROOT = SRC.parent
SCRIPTS = sorted(
    path.relative_to(ROOT).as_posix()
    for folder in ("scripts", "dev", "research/paper_protocol")
    for path in (ROOT / folder).glob("*.py")
)


@pytest.mark.parametrize("script", SCRIPTS)
def test_every_script_imports_what_the_library_has(script, monkeypatch):
    """A script that names a moved or renamed part of the library fails here, not on the day it is next run."""
    import importlib
    import importlib.util

    path = ROOT / script
    if (path.parent / "__init__.py").is_file():  # a module of a package (research/paper_protocol): by its name
        monkeypatch.syspath_prepend(str(path.parent.parent))
        name = path.parent.name if path.stem == "__init__" else f"{path.parent.name}.{path.stem}"
        module = importlib.import_module(name)
    else:
        monkeypatch.syspath_prepend(str(path.parent))
        spec = importlib.util.spec_from_file_location(f"script_{path.stem}", path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)  # each runs its work under `if __name__ == "__main__"` only
    assert module.__doc__, f"{script}: no docstring to say what it does"


REFERENCE = re.compile(r":(?:func|class|meth|mod|data|attr):`(?:[^`<]*<)?~?(hf_ecg\.[A-Za-z0-9_.]+)>?`")


def _resolves(target: str) -> bool:
    """Whether ``hf_ecg.a.b.C.f`` names a module, or an attribute of one, that exists."""
    import importlib

    parts = target.split(".")
    for split in range(len(parts), 0, -1):
        try:
            found = importlib.import_module(".".join(parts[:split]))
        except ImportError:
            continue
        for name in parts[split:]:
            if not hasattr(found, name):
                return False
            found = getattr(found, name)
        return True
    return False


def test_every_cross_reference_in_a_docstring_names_what_exists():
    """A module moved or a name renamed leaves no reference behind that points nowhere."""
    dangling = sorted(
        f"{path.relative_to(SRC).as_posix()}: {match.group(1)}"
        for path in package_files(SRC)
        for match in REFERENCE.finditer(path.read_text(encoding="utf-8"))
        if not _resolves(match.group(1))
    )
    assert dangling == []


def test_the_recipes_take_at_most_twelve_parameters():
    """The library's two recipes stay readable: what groups (card fields, the text's templates, run settings) is an
    object, not more keywords."""
    import inspect

    from hf_ecg.synthetic.generate import generate_dataset
    from hf_ecg.training.train import train_ecg_model

    for recipe in (generate_dataset, train_ecg_model):
        assert len(inspect.signature(recipe).parameters) <= 12, recipe.__name__


#: The generator families, sibling rooms of ``synthetic`` (each its modules): each a sample source the one writer
#: drives (``synthetic.writer``), none importing another, so a new family (sketches, style transfer) is a new room.
FAMILIES = {
    "ECG-QALM": ("hf_ecg.synthetic.ecg_qalm", "hf_ecg.synthetic.generate", "hf_ecg.synthetic.entity_sequences"),
    "mention replacement": ("hf_ecg.synthetic.mention_replacement",),
    "GeniusAug": ("hf_ecg.synthetic.genius", "hf_ecg.synthetic.sketching"),
}
#: What every family shares and no family may be imported by: the writer and what it drives.
FAMILY_HOUSE = ("hf_ecg.synthetic.writer", "hf_ecg.synthetic.sample_source", "hf_ecg.synthetic.finishing")


def reachable(graph: dict[str, set[str]], start: str) -> set[str]:
    """The modules ``start`` imports, directly or through others."""
    seen: set[str] = set()
    todo = [start]
    while todo:
        for target in graph.get(todo.pop(), ()):
            if target not in seen:
                seen.add(target)
                todo.append(target)
    return seen


def in_room(module: str, room: str) -> bool:
    return module == room or module.startswith(room + ".")


def family_of(module: str, families: dict[str, tuple[str, ...]]) -> str | None:
    return next((name for name, rooms in families.items() if any(in_room(module, r) for r in rooms)), None)


def family_crossings(
    graph: dict[str, set[str]], families: dict[str, tuple[str, ...]], house: tuple[str, ...]
) -> list[str]:
    """``a -> b`` for a family's module reaching another family's, or the shared house reaching any family."""
    wrong = []
    for module in graph:
        own = family_of(module, families)
        if own is None and not any(in_room(module, part) for part in house):
            continue
        for target in sorted(reachable(graph, module)):
            if family_of(target, families) not in (None, own):
                wrong.append(f"{module} -> {target}")
    return sorted(wrong)


def test_the_generator_families_are_sibling_rooms_on_one_writer():
    graph = import_graph(SRC)
    rooms = [room for modules in FAMILIES.values() for room in modules]
    assert all(any(in_room(m, room) for m in graph) for room in (*rooms, *FAMILY_HOUSE))
    assert family_crossings(graph, FAMILIES, FAMILY_HOUSE) == []
    for name in FAMILIES:  # each family writes through the one writer
        assert any("hf_ecg.synthetic.writer" in graph[m] for m in graph if family_of(m, FAMILIES) == name), name


def test_a_family_reaching_another_is_found(tmp_path):
    src = plant(
        tmp_path,
        {
            "__init__.py": "",
            "synthetic/__init__.py": "",
            "synthetic/writer.py": "",
            "synthetic/ecg_qalm.py": "from .writer import w\n",
            "synthetic/shared.py": "from .ecg_qalm import E\n",
            "synthetic/mention_replacement.py": "from .writer import w\nfrom .shared import S\n",
        },
    )
    families = {"a": ("hf_ecg.synthetic.ecg_qalm",), "b": ("hf_ecg.synthetic.mention_replacement",)}
    assert family_crossings(import_graph(src), families, ("hf_ecg.synthetic.writer",)) == [
        "hf_ecg.synthetic.mention_replacement -> hf_ecg.synthetic.ecg_qalm"
    ]
