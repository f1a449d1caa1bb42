"""Reproduce the paper's experiments on one low-resource setting, offline, in one command.

    python scripts/reproduce.py --dataset bc5cdr --first-n 45                    # core table, BC5CDR 1%
    python scripts/reproduce.py --dataset jnlpba --first-n 186                   # core table, JNLPBA 1%
    python scripts/reproduce.py --dataset bc5cdr --first-n 45 --tables extended  # every row, the curve

A run computes everything it reports, in its own folder (default outputs/reproduce/<dataset>-<N>/;
a rerun of the same command resumes there). The committed figures it is compared with live apart,
in results/reference.json (issue 19's converged-protocol measurements and the paper's).

Stages (DESIGN §4-5):

1. gold = the first N training sentences (JNLPBA: of its dev split, the offline training pool);
2. train ECG-QALM and the ECG-LM ablation (SmolLM2-135M + LoRA, the same epochs; 10% of the gold
   sentences held out, the checkpoint with the lowest held-out answer loss kept);
3. synthetic sets: ECG-QALM over-generated (--over-generate × N; the extended curve's largest
   --scales multiple in a folder of its own), the selected ECG-QALM samples (hf_ecg.synthetic.selection,
   --rule; the extended tables also select with each other rule set), ECG-LM and mention
   replacement (N each);
4. generation quality against gold and sentence health;
5. downstream NER, a MiniLM-L6 token classifier trained to convergence (20 epochs, the whole test
   split) once per seed. Core rows: gold; gold + mention replacement; gold + selected ECG-QALM (mixed
   as --recipe says); gold + ECG-QALM without selection; gold + ECG-LM. Extended rows add synthetic
   data alone, every mixing recipe, and gold + ECG-QALM as it grows (--scales × gold, scaling.png).

Writes under OUTPUT: quality.json, ner.json, runs/*.json (one per NER run), timing.json, tables.md
(and scaling.png for the extended tables); models and datasets under OUTPUT/work/.
"""

from __future__ import annotations

import argparse
import fnmatch
import json
import multiprocessing
import os
import statistics
import sys
import time
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
SHARED_DATA = ROOT.parent / "shared" / "data"
REFERENCE = ROOT / "results" / "reference.json"


@dataclass(frozen=True)
class Setting:
    """Where a corpus's splits are and how its NER protocol trains (the reference protocol of issue 19)."""

    train: str
    test: str
    #: the dev split, as an ``hf-ecg`` source: sentences that are neither gold nor test
    dev: str
    learning_rate: float


SETTINGS = {
    "bc5cdr": Setting("bc5cdr/train.tsv", "bc5cdr/test.tsv", "bc5cdr/devel.tsv:{dev_n}", 1e-4),
    # JNLPBA's train split is not offline: its dev split is the pool, gold its first N, dev what follows.
    "jnlpba": Setting("jnlpba/devel.tsv", "jnlpba/test.tsv", "jnlpba/devel.tsv:{n}:{n_plus_dev}", 5e-5),
}
METHODS = {"mr": "mention replacement", "lm": "ECG-LM", "qalm": "ECG-QALM", "sel": "ECG-QALM, selected"}
#: The extended tables' other selections (name: rules, and whether the taggers are an ensemble over the
#: seeds): the rules without a tagger, each tagger rule, the empty-slot rule, an ensemble.
CHEAP_RULES = ("duplicate", "near-copy", "tag-leak", "whole")
SELECTION_VARIANTS = {
    "no-tagger": (CHEAP_RULES, False),
    "empty-slot": ((*CHEAP_RULES, "empty-slot", "consistent"), False),
    "no-extra": ((*CHEAP_RULES, "consistent", "no-extra"), False),
    "exact": ((*CHEAP_RULES, "exact"), False),
    "ensemble": ((*CHEAP_RULES, "consistent"), True),
}
GENERATOR_EPOCHS = 3.0
GENERATOR_LEARNING_RATE = 1e-3


@dataclass(frozen=True)
class Row:
    """One NER row: the training data (``gold`` and/or a synthetic set and its size in multiples of N) and
    how they are mixed."""

    key: str
    label: str
    gold: bool
    synthetic: str | None = None
    multiple: int = 1
    recipe: str = "concat"
    core: bool = False


def ner_rows(recipe: str, recipes: tuple[str, ...], scales: list[int], pool: int = 1) -> list[Row]:
    """The NER rows; ``pool``: the over-generation multiple, beyond which the curve has its own folder."""
    rows = [
        Row("gold", "gold", True, core=True),
        Row("gold+mr", "gold + mention replacement (concat)", True, "mr", core=True),
        Row("gold+sel", f"gold + ECG-QALM, selected ({recipe})", True, "sel", recipe=recipe, core=True),
        Row("gold+qalm", f"gold + ECG-QALM, no selection ({recipe})", True, "qalm", recipe=recipe, core=True),
        Row("gold+lm", f"gold + ECG-LM ({recipe})", True, "lm", recipe=recipe, core=True),  # the ablation, mixed alike
    ]
    rows += [Row(f"{m}-only", f"{label} only", False, m) for m, label in METHODS.items()]
    rows += [Row(f"gold+sel-{r}", f"gold + ECG-QALM, selected ({r})", True, "sel", recipe=r)
             for r in recipes if r != recipe]  # fmt: skip
    # The same recipes for mention replacement: a recipe's gain over concat is the recipe's, not the data's,
    # unless the baseline gets it too.
    rows += [Row(f"gold+mr-{r}", f"gold + mention replacement ({r})", True, "mr", recipe=r)
             for r in recipes if r != "concat"]  # fmt: skip
    rows += [Row(f"gold+sel-{name}", f"gold + ECG-QALM, selected: {' '.join(rules)}{' (ensemble)' * ensemble}",
                 True, f"sel-{name}", recipe=recipe)
             for name, (rules, ensemble) in SELECTION_VARIANTS.items()]  # fmt: skip
    rows += [Row(f"gold+qalm-{m}x", f"gold + ECG-QALM {m}×, no selection ({recipe})", True,
                 "qalm" if m <= pool else "qalm-curve", m, recipe=recipe) for m in scales if m > 1]  # fmt: skip
    return rows


def wanted(row: Row, patterns: str | None) -> bool:
    """Whether ``row`` is among the comma-separated ``--rows`` patterns (fnmatch; all rows without any)."""
    return patterns is None or any(fnmatch.fnmatchcase(row.key, p.strip()) for p in patterns.split(","))


def log(message: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {message}", flush=True)


def thread_env(workers: int) -> dict[str, str]:
    """Environment giving a worker process its share of the CPU threads."""
    threads = str(max(1, (os.cpu_count() or 1) // workers))
    return {"OMP_NUM_THREADS": threads, "MKL_NUM_THREADS": threads}


def train_generators(args: argparse.Namespace, gold_path: Path, outputs: dict[str, Path]) -> dict[str, float]:
    """Train a generator per layout (``qa``: ECG-QALM, ``lm``: ECG-LM) into ``outputs[layout]``, one at a time
    with every thread, so that each one's training time is its own; a trained one is kept. Minutes by layout."""
    from hf_ecg.training.trainer import train_ecg_model
    from hf_ecg.training.training_args import ECGTrainingArguments

    minutes = {}
    for layout, out in outputs.items():
        if (out / "ecg_config.json").is_file():
            continue
        log(f"training the {layout} generator ({args.generator_epochs:g} epochs, lr {args.generator_learning_rate:g})")
        length = {"max_steps": args.generator_max_steps} if args.generator_max_steps > 0 else \
            {"num_train_epochs": args.generator_epochs}  # fmt: skip
        training = ECGTrainingArguments(
            output_dir=str(out), learning_rate=args.generator_learning_rate, logging_steps=10, layout=layout,
            disable_tqdm=True, lora=args.lora, **length,
        )  # fmt: skip
        started = time.perf_counter()
        train_ecg_model(gold_path, args.generator_model, training, first_n=args.first_n, corpus_name=args.dataset)
        minutes[layout] = (time.perf_counter() - started) / 60
        record_training(out, minutes[layout])
    return minutes


def record_training(model_dir: Path, minutes: float) -> None:
    """Write ``training.json`` beside the model: wall minutes of its training (model loading included),
    the held-out answer loss of each evaluation (from the model card data) and the checkpoint kept."""
    card = json.loads((model_dir / "ecg_card.json").read_text())
    evaluations = [(log["epoch"], log["eval_loss"]) for log in card.get("training_logs", []) if "eval_loss" in log]
    best = card.get("best_step")  # the checkpoint the trainer kept (ECGModelCardCallback)
    record = {"minutes": minutes, "eval_loss_by_epoch": evaluations,
              "best_checkpoint": None if best is None else f"checkpoint-{best}"}  # fmt: skip
    (model_dir / "training.json").write_text(json.dumps(record, indent=2) + "\n")


def generate(args: argparse.Namespace, model: Path, output: Path, num_samples: int) -> Path:
    from hf_ecg.runtime.decoding import DecodingConfig
    from hf_ecg.synthetic.generate import generate_dataset

    log(f"{num_samples} samples with {model.name} in {output} (shards already written are kept)")
    decoding = DecodingConfig(batch_size=args.generation_batch_size, max_block_tokens=args.max_block_tokens,
                              max_attempts=args.max_attempts)  # fmt: skip
    return generate_dataset(model, output, num_samples, seed=args.seed, decoding=decoding, samples_per_shard=256,
                            progress_bar=False)  # fmt: skip


def synthetic_sets(
    args: argparse.Namespace, gold: Any, qalm: Path, lm: Path, work: Path, largest: int
) -> dict[str, Path]:
    """Stage 3 (before selection): the over-generated ECG-QALM pool that every selection draws from, ECG-LM and
    mention replacement (N each), and the curve's ECG-QALM folder when its ``largest`` multiple is beyond the
    pool (so that the core run's pool, and what was selected from it, stays as it was). Folders by method."""
    from hf_ecg.synthetic.baselines import mention_replacement, write_dataset

    n = len(gold)
    dirs = {
        "qalm": generate(args, qalm, work / "synthetic-qalm", args.over_generate * n),
        "lm": generate(args, lm, work / "synthetic-lm", n),
    }
    if largest > args.over_generate:
        dirs["qalm-curve"] = generate(args, qalm, work / "synthetic-qalm-curve", largest * n)
    dirs["mr"] = work / "synthetic-mr"
    if not (dirs["mr"] / "baseline.json").is_file():
        rows = mention_replacement(gold, n, seed=args.seed)
        write_dataset(rows, gold.entity_types, dirs["mr"], {"method": "mention-replacement", "seed": args.seed})
    return dirs


def select_sets(args: argparse.Namespace, gold: Any, test: Any, dev: Any, config: Any, dirs: dict[str, Path],
                rows: list[Row], work: Path, runs_dir: Path) -> tuple[dict[str, Path], list[Row]]:  # fmt: skip
    """Stage 3 (selection): ``sel``, the pool selected with ``--rule``, and the extended rows' other selections
    (:data:`SELECTION_VARIANTS`). The gold tagger a rule needs is the gold row's first run (same data, same
    protocol: trained once, its score saved as that run). Returns the folders with the selected ones added,
    and ``rows`` less those whose selection kept nothing."""
    from hf_ecg.evaluation.ner import score_tagger, train_tagger
    from hf_ecg.synthetic.selection import DEFAULT_RULES, SelectionConfig, filter_generated

    seeds = config.seeds
    rules = args.rule or list(DEFAULT_RULES)
    selection_config = SelectionConfig(rules=rules, tagger_model=config.model, tagger_epochs=config.epochs,
                                       tagger_learning_rate=config.learning_rate,
                                       tagger_batch_size=config.batch_size, tagger_seeds=seeds[:1])  # fmt: skip
    selected_dir = work / "synthetic-qalm-selected"
    gold_taggers: dict[int, Any] = {}

    def taggers_for(tagger_seeds: list[int]) -> list[Any]:
        for seed in tagger_seeds:
            if seed not in gold_taggers:
                log(f"gold tagger, seed {seed}, for the selection")
                gold_taggers[seed] = train_tagger([gold], config, seed, entity_types=test.entity_types, dev=dev)
        return [gold_taggers[seed] for seed in tagger_seeds]

    dirs = dict(dirs)
    taggers = None
    if selection_config.needs_taggers and not (selected_dir / "ecg_generation.json").is_file():
        log(f"gold tagger, seed {seeds[0]}: the selection's tagger and the gold row's first run")
        taggers = taggers_for(seeds[:1])
        result = {"seed": seeds[0], **score_tagger(taggers[0], test)}
        run_path(runs_dir, "gold", seeds[0]).write_text(json.dumps(result, indent=2) + "\n")
    log(f"selection: {', '.join(rules)}")
    dirs["sel"] = filter_generated(dirs["qalm"], gold, selected_dir, selection_config, taggers=taggers,
                                   progress_bar=False)  # fmt: skip
    for name, (variant_rules, ensemble) in SELECTION_VARIANTS.items():
        if not any(row.synthetic == f"sel-{name}" for row in rows):
            continue
        variant = replace(selection_config, rules=list(variant_rules), tagger_seeds=seeds if ensemble else seeds[:1])
        folder = work / f"synthetic-qalm-selected-{name}"
        given = None
        if variant.needs_taggers and not (folder / "ecg_generation.json").is_file():
            given = taggers_for(variant.tagger_seeds)
        log(f"selection {name}: {', '.join(variant.rules)}{' (ensemble)' * ensemble}")
        try:
            dirs[f"sel-{name}"] = filter_generated(dirs["qalm"], gold, folder, variant, taggers=given,
                                                   progress_bar=False)  # fmt: skip
        except ValueError as error:  # every sample dropped: nothing to train on
            log(f"selection {name}: {error}; its rows are not run")
            rows = [row for row in rows if row.synthetic != f"sel-{name}"]
    return dirs, rows


def measure_quality(path: Path, args: argparse.Namespace, gold: Any, sets: dict[str, Any],
                    dirs: dict[str, Path]) -> dict[str, dict[str, float]]:  # fmt: skip
    """Stage 4: each method's first N samples against gold (and all ECG-QALM generated, as ``qalm-all``), and
    ``gold`` itself, each sentence against the other gold sentences; kept in ``path``, read back on a rerun."""
    from hf_ecg.evaluation import load_flags
    from hf_ecg.evaluation.quality import gold_self_report, quality_reports

    gold_rows = [(s.tokens, s.tags) for s in gold]
    quality = json.loads(path.read_text()) if path.is_file() else {}
    if not quality:
        log("generation quality")
        n = len(gold)
        flags = {method: load_flags(folder) for method, folder in dirs.items()}
        quality = quality_reports(
            {method: [(s.tokens, s.tags) for s in list(sets[method])[:n]] for method in METHODS}, gold_rows,
            ref_model=args.generator_model,
            flags={method: {k: v[:n] for k, v in columns.items()} for method, columns in flags.items() if columns},
        )  # fmt: skip
        whole = quality_reports({"qalm-all": [(s.tokens, s.tags) for s in sets["qalm"]]}, gold_rows, ref_model=None,
                                flags={"qalm-all": flags["qalm"]})  # fmt: skip
        quality["qalm-all"] = whole["qalm-all"]
    if "gold" not in quality:  # also for a folder measured before the gold row was computed
        quality["gold"] = gold_self_report(gold_rows)
        path.write_text(json.dumps(quality, indent=2) + "\n")
    return quality


def run_path(runs_dir: Path, key: str, seed: int) -> Path:
    """Where the NER run of row ``key`` at ``seed`` is kept."""
    return runs_dir / f"{key}-seed{seed}.json"


def ner_run(row: Row, sets: dict[str, Any], gold: Any, dev: Any, test: Any, config: Any, seed: int,
            threads: int) -> dict[str, Any]:  # fmt: skip
    """One NER run (in a worker process with ``threads`` torch threads when there are several workers)."""
    import torch

    from hf_ecg.evaluation.ner import train_and_test

    if threads:
        torch.set_num_threads(threads)
    synthetic = [sets[row.synthetic].subset(first_n=row.multiple * len(gold))] if row.synthetic else []
    train = [gold] if row.gold else []
    if not row.gold:  # synthetic data alone: it is the "gold" side of the recipe
        train, synthetic = synthetic, []
    return train_and_test(train, test, replace(config, recipe=row.recipe), seed, synthetic=synthetic, dev=dev)


def mean_std(values: list[float]) -> tuple[float, float]:
    return statistics.fmean(values), (statistics.stdev(values) if len(values) > 1 else 0.0)


def fmt(values: list[float]) -> str:
    if not values:
        return "not run"
    mean, std = mean_std(values)
    return f"{mean:.3f} ± {std:.3f}"


def pct(share: float | None) -> str:
    return "-" if share is None else f"{100 * share:.1f}%"


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--dataset", choices=sorted(SETTINGS), required=True, help="bc5cdr or jnlpba")
    parser.add_argument("--first-n", type=int, required=True, help="gold training sentences (45 / 186 for 1%%)")
    parser.add_argument("--tables", choices=("core", "extended"), default="core",
                        help="core (default): the five rows that answer 'does it help'; extended: also synthetic "
                        "data alone, every recipe and the --scales curve")  # fmt: skip
    parser.add_argument("--seeds", default="1,2,3", help="NER seeds (default 1,2,3)")
    parser.add_argument("--rows", default=None, metavar="KEYS",
                        help="only these NER rows, comma-separated keys or patterns (gold,gold+sel-*; default: every "
                        "row of --tables)")  # fmt: skip
    parser.add_argument("--scales", default="1,2,5,10",
                        help="extended: synthetic size as multiples of gold (default 1,2,5,10)")  # fmt: skip
    generation = parser.add_argument_group("generators and generation")
    generation.add_argument("--generator-model", default="smollm2-135m", help="base model (default smollm2-135m)")
    generation.add_argument("--no-lora", dest="lora", action="store_false", help="fine-tune every weight, no LoRA")
    generation.add_argument("--generator-epochs", type=float, default=GENERATOR_EPOCHS,
                            help=f"training epochs of each generator (default {GENERATOR_EPOCHS:g})")  # fmt: skip
    generation.add_argument("--generator-learning-rate", type=float, default=GENERATOR_LEARNING_RATE,
                            help=f"learning rate of each generator (default {GENERATOR_LEARNING_RATE:g})")  # fmt: skip
    generation.add_argument("--generator-max-steps", type=int, default=-1,
                            help="train each generator for N updates instead of --generator-epochs")  # fmt: skip
    generation.add_argument("--generation-batch-size", type=int, default=64, help="rows decoded together (default 64)")
    generation.add_argument("--max-block-tokens", type=int, default=64, help="tokens per block at most (default 64)")
    generation.add_argument("--max-attempts", type=int, default=10, help="draws of a block at most (default 10)")
    generation.add_argument("--seed", type=int, default=0, help="generation seed (default 0)")
    selection = parser.add_argument_group("selection and mixing")
    selection.add_argument("--over-generate", type=int, default=2, metavar="K",
                           help="generate K × N ECG-QALM samples to select N from (default 2)")  # fmt: skip
    selection.add_argument("--rule", action="append", default=None, metavar="RULE",
                           help="selection rule, repeat for several (default: selection.DEFAULT_RULES)")  # fmt: skip
    selection.add_argument("--recipe", default="two-stage",
                           help="how ECG-QALM data is mixed with gold (default two-stage, the best measured: "
                           "docs/results.md)")  # fmt: skip
    ner = parser.add_argument_group("NER protocol")
    ner.add_argument("--ner-model", default="minilm-l6", help="token classifier (default minilm-l6, offline)")
    ner.add_argument("--ner-epochs", type=float, default=20.0, help="NER training epochs (default 20)")
    ner.add_argument("--ner-learning-rate", type=float, default=None,
                     help="NER learning rate (default: the reference's, 1e-4 BC5CDR, 5e-5 JNLPBA)")  # fmt: skip
    ner.add_argument("--dev-first-n", type=int, default=0,
                     help="choose each tagger's epoch on this many dev sentences (default 0: no model selection, "
                     "the reference protocol)")  # fmt: skip
    ner.add_argument("--test-first-n", type=int, default=0, help="score the first N test sentences (0: all, default)")
    ner.add_argument("--workers", type=int, default=2,
                     help="NER runs at a time, sharing the CPU threads (default 2: on 2 cores two 1-thread runs beat "
                     "one 2-thread run)")  # fmt: skip
    parser.add_argument("--data-dir", type=Path, default=SHARED_DATA, help="folder with bc5cdr/ and jnlpba/")
    parser.add_argument("--output", type=Path, default=None, help="run folder (default outputs/reproduce/DATASET-N)")
    parser.add_argument("--reference", type=Path, default=REFERENCE, help="reference figures to compare with")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    seeds = [int(s) for s in args.seeds.split(",")]
    extended = args.tables == "extended"
    scales = sorted({int(s) for s in args.scales.split(",")} | {1}) if extended else [1]
    setting = SETTINGS[args.dataset]
    n = args.first_n
    paths = {split: args.data_dir / getattr(setting, split) for split in ("train", "test")}
    for path in paths.values():
        if not path.is_file():
            sys.exit(f"{path} not found: the corpora live in ../shared/data (see DESIGN §4), or pass --data-dir")
    output = args.output or ROOT / "outputs" / "reproduce" / f"{args.dataset}-{n}"
    work, runs_dir = output / "work", output / "runs"
    runs_dir.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()

    from hf_ecg.evaluation import load_labelled, load_source
    from hf_ecg.evaluation.ner import RECIPES, NERConfig

    if args.recipe not in RECIPES:
        sys.exit(f"unknown --recipe {args.recipe!r}; known: {', '.join(RECIPES)}")
    gold = load_labelled(paths["train"], first_n=n)
    test = load_labelled(paths["test"], first_n=args.test_first_n or None)
    dev = None
    if args.dev_first_n:
        spec = setting.dev.format(dev_n=args.dev_first_n, n=n, n_plus_dev=n + args.dev_first_n)
        dev = load_source(args.data_dir / spec)
    log(f"{args.dataset}: {len(gold)} gold, {len(test)} test, {len(dev) if dev else 0} dev sentences; seeds {seeds}; "
        f"{args.tables} tables")  # fmt: skip

    # Minutes per stage of this folder; a resumed run adds what it redid and says so.
    timing_path = output / "timing.json"
    timing: dict[str, Any] = json.loads(timing_path.read_text()) if timing_path.is_file() else {}
    timing["invocations"] = timing.get("invocations", 0) + 1
    stages: dict[str, float] = timing.setdefault("minutes", {})
    mark = started

    def stage_done(name: str) -> None:
        nonlocal mark
        stages[name] = stages.get(name, 0.0) + (time.perf_counter() - mark) / 60
        mark = time.perf_counter()
        timing_path.write_text(json.dumps(timing, indent=2) + "\n")

    qalm, lm = work / "ecg-qalm", work / "ecg-lm"
    train_generators(args, paths["train"], {"qa": qalm, "lm": lm})
    stage_done("generators")
    dirs = synthetic_sets(args, gold, qalm, lm, work, max(scales))
    stage_done("synthetic sets")
    ner_learning_rate = args.ner_learning_rate or setting.learning_rate
    config = NERConfig(model=args.ner_model, epochs=args.ner_epochs, learning_rate=ner_learning_rate, seeds=seeds)
    rows = [row for row in ner_rows(args.recipe, RECIPES, scales, args.over_generate)
            if (row.core or extended) and wanted(row, args.rows)]  # fmt: skip
    dirs, rows = select_sets(args, gold, test, dev, config, dirs, rows, work, runs_dir)
    sets = {method: load_labelled(folder) for method, folder in dirs.items()}
    if len(sets["sel"]) < n:
        log(f"warning: selection kept {len(sets['sel'])} samples, fewer than {n}: raise --over-generate")
    stage_done("selection")
    quality = measure_quality(output / "quality.json", args, gold, sets, dirs)
    stage_done("quality")

    results = run_ner(args, rows, sets, gold, dev, test, config, seeds, runs_dir)
    (output / "ner.json").write_text(json.dumps(results, indent=2) + "\n")
    stage_done("NER")

    reference = json.loads(args.reference.read_text()).get(f"{args.dataset}-{n}", {}) if args.reference.is_file() \
        else {}  # fmt: skip
    tables = write_tables(output, args, config, len(test), len(dev) if dev else 0, quality, rows, results, scales,
                          reference, timing, dirs, {method: len(data) for method, data in sets.items()})  # fmt: skip
    curve = ["gold", "gold+mr", "gold+qalm", *(f"gold+qalm-{m}x" for m in scales if m > 1)]
    if extended and all(key in results for key in curve):
        plot_scaling(output / "scaling.png", args, results, scales)
    _, header, ner_section = tables.partition("## Downstream NER")
    print(header + ner_section)  # the NER table and its verdict lines
    resumed = f"; this folder's stages over {timing['invocations']} invocations: {sum(stages.values()):.1f} min" \
        if timing["invocations"] > 1 else ""  # fmt: skip
    log(f"done in {(time.perf_counter() - started) / 60:.1f} min{resumed}: {output}/tables.md")
    return 0


def cached_run(runs_dir: Path, row: Row, seed: int) -> bool:
    """Whether ``row`` at ``seed`` has a result in ``runs_dir`` made with the row's recipe (a row that mixes
    nothing is the same under any recipe)."""
    path = run_path(runs_dir, row.key, seed)
    if not path.is_file():
        return False
    return not (row.gold and row.synthetic) or json.loads(path.read_text()).get("recipe", "concat") == row.recipe


def run_ner(args: argparse.Namespace, rows: list[Row], sets: dict[str, Any], gold: Any, dev: Any, test: Any,
            config: Any, seeds: list[int], runs_dir: Path) -> dict[str, list[dict[str, Any]]]:  # fmt: skip
    """Every row × seed, each cached in ``runs_dir``; ``args.workers`` at a time in spawned processes."""
    todo = [(row, seed) for row in rows for seed in seeds if not cached_run(runs_dir, row, seed)]
    if todo:
        log(f"NER: {len(todo)} runs, {args.workers} at a time")

    def save(row: Row, seed: int, result: dict[str, Any], done: int) -> None:
        result = {**result, "recipe": row.recipe}
        run_path(runs_dir, row.key, seed).write_text(json.dumps(result, indent=2) + "\n")
        log(f"NER {done}/{len(todo)}: {row.label}, seed {seed}: entity F1 {result['entity_f1']:.3f}")

    if args.workers > 1 and len(todo) > 1:
        threads = int(thread_env(args.workers)["OMP_NUM_THREADS"])
        # spawn, not fork: a forked child would inherit this process's OpenMP state
        with ProcessPoolExecutor(args.workers, mp_context=multiprocessing.get_context("spawn")) as pool:
            futures = {pool.submit(ner_run, row, sets, gold, dev, test, config, seed, threads): (row, seed)
                       for row, seed in todo}  # fmt: skip
            for done, future in enumerate(as_completed(futures), 1):
                save(*futures[future], future.result(), done)
    else:
        for done, (row, seed) in enumerate(todo, 1):
            save(row, seed, ner_run(row, sets, gold, dev, test, config, seed, 0), done)
    return {row.key: [json.loads(run_path(runs_dir, row.key, seed).read_text()) for seed in seeds]
            for row in rows}  # fmt: skip


def verdict(results: dict[str, list[dict[str, Any]]], reference: dict[str, list]) -> list[str]:
    """How this run's core rows answer the question: gold against the reference, selected ECG-QALM against
    gold and mention replacement (each recipe run) by more than the larger of their standard deviations."""
    scores = {key: mean_std([r["entity_f1"] for r in runs]) for key, runs in results.items()}
    lines: list[str] = []
    if not {"gold", "gold+mr", "gold+sel"} <= set(scores):
        return ["no verdict: the gold, gold + mention replacement and gold + selected ECG-QALM rows were not all run"]
    if "gold" in reference:
        ours, ref = scores["gold"][0], reference["gold"][0]
        lines.append(f"gold {ours:.3f} against the reference {ref:.3f}: "
                     + ("within 0.02" if abs(ours - ref) <= 0.02 else "NOT within 0.02"))  # fmt: skip
    mean, std = scores["gold+sel"]
    # Mention replacement under every recipe run: the data must beat the baseline's best way of mixing, not
    # only the baseline mixed the way that suits the generated data.
    for other in ("gold", *sorted(key for key in scores if key == "gold+mr" or key.startswith("gold+mr-"))):
        other_mean, other_std = scores[other]
        margin = max(std, other_std)
        above = mean - other_mean > margin
        lines.append(f"gold + selected ECG-QALM {mean:.3f} vs {other} {other_mean:.3f}: {mean - other_mean:+.3f}, "
                     f"{'above' if above else 'not above'} the larger std {margin:.3f}")  # fmt: skip
    if "gold+daga" in reference:
        lines.append(f"reference gold + DAGA: {reference['gold+daga'][0]:.3f} ± {reference['gold+daga'][1]:.3f}")
    return lines


#: The decoding settings a table states.
DECODING_SHOWN = ("block_end", "temperature", "top_k", "top_p", "max_block_tokens", "max_attempts", "redraw_unended",
                  "redraw_repetition", "redraw_run_on")  # fmt: skip


def trainings(dirs: dict[str, Path]) -> str:
    """``ECG-QALM trained in 12.9 min, held-out loss by epoch ...; ECG-LM ...`` from training.json."""
    parts = []
    for method in ("qalm", "lm"):
        model = json.loads((dirs[method] / "ecg_generation.json").read_text())["model"]
        path = Path(model) / "training.json"
        if path.is_file():
            t = json.loads(path.read_text())
            losses = " ".join(f"{loss:.3f}" for _, loss in t["eval_loss_by_epoch"])
            parts.append(f"{METHODS[method]} trained in {t['minutes']:.1f} min, held-out loss by epoch {losses}, "
                         f"kept {t['best_checkpoint']}")  # fmt: skip
    return "; ".join(parts) or "training times not recorded"


def write_tables(
    output: Path, args: argparse.Namespace, config: Any, num_test: int, num_dev: int, quality: dict, rows: list[Row],
    results: dict, scales: list[int], reference: dict, timing: dict, dirs: dict[str, Path], sizes: dict[str, int],
) -> str:  # fmt: skip
    n = args.first_n
    decoding = json.loads((dirs["qalm"] / "ecg_generation.json").read_text())["decoding"]
    selection = json.loads((dirs["sel"] / "ecg_generation.json").read_text())["selection"]
    stages = timing["minutes"]
    dropped = ", ".join(f"{rule} {count}" for rule, count in selection["dropped"].items()) or "none"
    lines = [
        f"# {args.dataset.upper()}, first {n} training sentences ({args.tables} tables)",
        "",
        f"Generators: {args.generator_model}{' + LoRA' if args.lora else ''}, {args.generator_epochs:g} epochs at lr "
        f"{args.generator_learning_rate:g} (the epoch with the lowest held-out answer loss kept; {trainings(dirs)}). "
        "Decoding: " + ", ".join(f"{k}={decoding.get(k)}" for k in DECODING_SHOWN) + ". "
        f"Selection: {', '.join(selection['config']['rules'])} over {selection['source_samples']} samples, kept "
        f"{selection['kept']} (dropped: {dropped}); the first {n} kept are used. "
        f"NER: {config.model}, batch {config.batch_size}, lr {config.learning_rate:g}, {config.epochs:g} epochs, "
        + (f"the epoch with the best F1 on {num_dev} dev sentences kept" if num_dev else "no model selection")
        + f", seeds {args.seeds}, {num_test} test sentences. Run time {sum(stages.values()):.1f} min over "
        f"{timing['invocations']} invocation(s) ("
        + ", ".join(f"{name} {minutes:.1f}" for name, minutes in stages.items())
        + ").",
        "",
        "## Generation quality",
        "",
        "| data | perplexity (ratio to gold) | distinct-3 (ratio to gold) | ROUGE-L to nearest gold (mean / max) "
        "| templates copied | entity-type TVD |",
        "|---|---|---|---|---|---|",
    ]
    first, own = quality["qalm"], quality["gold"]  # gold's copy measures: each sentence against the others
    lines.append(f"| gold (each sentence against the other gold sentences) | {first['perplexity_gold']:.1f} (1.00) "
                 f"| {own['distinct_3']:.3f} (1.00) | {own['rouge_l_mean']:.3f} / {own['rouge_l_max']:.3f} "
                 f"| {100 * own['template_copy_rate']:.0f}% | {own['entity_type_tvd']:.3f} |")  # fmt: skip
    for method, label in METHODS.items():
        q = quality[method]
        lines.append(
            f"| {label} | {q['perplexity_generated']:.1f} ({q['perplexity_ratio']:.2f}) "
            f"| {q['distinct_3_generated']:.3f} ({q['distinct_3_ratio']:.2f}) "
            f"| {q['rouge_l_mean']:.3f} / {q['rouge_l_max']:.3f} | {100 * q['template_copy_rate']:.0f}% "
            f"| {q['entity_type_tvd']:.3f} |"
        )
    lines += [
        "",
        "## Sentence health",
        "",
        "| data | samples | complete (ends like gold) | under 5 tokens | n-gram 3× in a row | second sentence "
        "| mean tokens | length KS to gold | blocks forced / cut |",
        "|---|---|---|---|---|---|---|---|---|",
        f"| gold | {n} | {pct(first['complete_gold'])} | {pct(first['short_gold'])} | {pct(first['repetition_gold'])} "
        f"| {pct(first.get('second_sentence_gold'))} | {first['length_mean_gold']:.1f} | 0.000 | - |",
    ]
    labels = {**METHODS, "qalm-all": f"ECG-QALM, all {selection['source_samples']} generated"}
    for method in (*METHODS, "qalm-all"):
        q = quality[method]
        blocks = (f"{q['blocks_forced']} / {q['blocks_cut']} of {q['blocks']} "
                  f"({pct(q['blocks_forced_or_cut_share'])})" if "blocks" in q else "-")  # fmt: skip
        lines.append(
            f"| {labels[method]} | {q['num_generated']} | {pct(q['complete_generated'])} | {pct(q['short_generated'])} "
            f"| {pct(q['repetition_generated'])} | {pct(q.get('second_sentence_generated'))} "
            f"| {q['length_mean_generated']:.1f} | {q['length_ks']:.3f} | {blocks} |"
        )
    lines += [
        "",
        "## Downstream NER, mean ± std over seeds",
        "",
        "| training data | sentences | entity micro F1 | token macro F1 (B-/I-) | reference entity F1 |",
        "|---|---|---|---|---|",
    ]
    for row in rows:
        runs = results.get(row.key, [])
        size = (n if row.gold else 0) + (min(row.multiple * n, sizes[row.synthetic]) if row.synthetic else 0)
        ref = reference.get(row.key)
        ref_text = f"{ref[0]:.3f} ± {ref[1]:.3f}" if ref else ""
        lines.append(f"| {row.label} | {size} | {fmt([r['entity_f1'] for r in runs])} "
                     f"| {fmt([r['token_macro_f1'] for r in runs])} | {ref_text} |")  # fmt: skip
    for key, label in (("gold+daga", "gold + DAGA (reference only)"), ("paper gold", "paper: gold (BERT-base)"),
                       ("paper gold+qalm", "paper: gold + ECG-QALM (BERT-base)")):  # fmt: skip
        if key in reference:
            mean, std = reference[key]
            lines.append(f"| *{label}* | | | | {mean:.3f}{f' ± {std:.3f}' if std is not None else ''} |")
    for method, folder in dirs.items():
        if method.startswith("sel-"):
            chosen = json.loads((folder / "ecg_generation.json").read_text())["selection"]
            lost = ", ".join(f"{rule} {count}" for rule, count in chosen["dropped"].items()) or "none"
            lines.append(f"| *selection {method[4:]}: kept {chosen['kept']} of {chosen['source_samples']} (dropped: "
                         f"{lost})* | | | | |")  # fmt: skip
    lines += ["", *[f"- {line}" for line in verdict(results, reference)]]
    text = "\n".join(lines) + "\n"
    (output / "tables.md").write_text(text)
    return text


def plot_scaling(path: Path, args: argparse.Namespace, results: dict, scales: list[int]) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    xs = [0, *scales]
    keys = ["gold" if m == 0 else ("gold+qalm" if m == 1 else f"gold+qalm-{m}x") for m in xs]
    fig, ax = plt.subplots(figsize=(6, 4))
    for measure, label in (("entity_f1", "entity micro F1"), ("token_macro_f1", "token macro F1")):
        stats = [mean_std([r[measure] for r in results[key]]) for key in keys]
        bars = ax.errorbar(xs, [m for m, _ in stats], yerr=[s for _, s in stats], marker="o", capsize=3, label=label)
        mr_mean, _ = mean_std([r[measure] for r in results["gold+mr"]])
        color = bars.lines[0].get_color()
        ax.axhline(mr_mean, linestyle=":", linewidth=1, color=color, label=f"{label}, gold + MR 1×")
    ax.set_xlabel("synthetic ECG-QALM sentences, no selection (multiples of gold)")
    ax.set_ylabel("F1")
    ax.set_title(f"{args.dataset.upper()} {args.first_n}: gold + ECG-QALM")
    ax.set_xticks(xs)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


if __name__ == "__main__":
    sys.exit(main())
