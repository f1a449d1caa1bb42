"""The reproduction protocol, stage by stage, each stage's output kept in the run folder so that a rerun
resumes:

1. gold = the first N training sentences (JNLPBA: of its dev split, the offline training pool);
2. train ECG-QALM and the ECG-LM ablation (LoRA, the same epochs; 10% of the gold sentences held out, the
   checkpoint with the lowest held-out answer loss kept);
3. synthetic sets: ECG-QALM over-generated (``over_generate`` × N; the extended curve's largest multiple in a
   folder of its own; the extended tables' mention-source curve, :mod:`paper_protocol.mention_curve`, from
   a third generator trained with mention samples), the selected ECG-QALM samples
   (:mod:`hf_ecg.selection`; the extended tables also select with each of
   :data:`~paper_protocol.config.SELECTION_VARIANTS`), ECG-LM and mention replacement (N each);
4. generation quality against gold and sentence health;
5. downstream NER, a token classifier trained to convergence once per seed, each run cached in ``runs/``.

:func:`run_protocol` runs them and writes the tables (:mod:`paper_protocol.tables`).
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

from hf_ecg.synthetic.run_config import DatasetRunConfig
from hf_ecg.taggers.tagger import NERConfig

from .config import METHODS, SELECTION_VARIANTS, SETTINGS, ReproduceConfig, Row, ner_rows, wanted
from .mention_curve import (
    REPAIR_RULES,
    gazetteer,
    mention_curve_rows,
    mention_curve_sets,
    parse_sources,
    plot_mention_curves,
    repaired_sets,
)
from .ner_runs import log, run_ner, run_path
from .tables import plot_scaling, write_tables

__all__ = ["run_protocol"]


def train_generators(config: ReproduceConfig, gold_path: Path, outputs: dict[str, Path]) -> dict[str, float]:
    """Train a generator per name (``qa``: ECG-QALM, ``lm``: ECG-LM, ``qa-mentions``: ECG-QALM with mention
    samples, the mention-source curve's) into ``outputs[name]``, one at a time with every thread, so that each
    one's training time is its own; a trained one is kept. Minutes by name."""
    from hf_ecg.training.train import train_ecg_model
    from hf_ecg.training.training_args import ECGTrainingArguments

    minutes = {}
    for name, out in outputs.items():
        if (out / "ecg_config.json").is_file():
            continue
        layout, mention_samples = ("lm", False) if name == "lm" else ("qa", name == "qa-mentions")
        epochs, learning_rate = config.generator_epochs, config.generator_learning_rate
        log(f"training the {layout} generator ({epochs:g} epochs, lr {learning_rate:g})")
        length = (
            {"max_steps": config.generator_max_steps}
            if config.generator_max_steps > 0
            else {"num_train_epochs": config.generator_epochs}
        )
        training = ECGTrainingArguments(
            output_dir=str(out),
            learning_rate=config.generator_learning_rate,
            logging_steps=10,
            layout=layout,
            disable_tqdm=True,
            lora=config.lora,
            mention_samples=mention_samples,
            own_sentences=config.generator_own_sentences,
            **length,
        )
        started = time.perf_counter()
        train_ecg_model(
            gold_path,
            config.generator_model,
            training,
            first_n=config.first_n,
            corpus_name=config.dataset,
            overwrite=True,
        )  # an unfinished run of its own (no ecg_config.json yet) starts again
        minutes[name] = (time.perf_counter() - started) / 60
        record_training(out, minutes[name])
    return minutes


def record_training(model_dir: Path, minutes: float) -> None:
    """Write ``training.json`` beside the model: wall minutes of its training (model loading included),
    the held-out answer loss of each evaluation (from the model card data) and the checkpoint kept."""
    card = json.loads((model_dir / "ecg_card.json").read_text())
    evaluations = [(log["epoch"], log["eval_loss"]) for log in card.get("training_logs", []) if "eval_loss" in log]
    best = card.get("best_step")  # the checkpoint the trainer kept (ECGModelCardCallback)
    record = {
        "minutes": minutes,
        "eval_loss_by_epoch": evaluations,
        "best_checkpoint": None if best is None else f"checkpoint-{best}",
    }
    (model_dir / "training.json").write_text(json.dumps(record, indent=2) + "\n")


def generate(config: ReproduceConfig, model: Path, output: Path, num_samples: int, mentions: Any = None) -> Path:
    from hf_ecg.runtime.decoding import DecodingConfig
    from hf_ecg.synthetic.generate import generate_dataset

    log(f"{num_samples} samples with {model.name} in {output} (shards already written are kept)")
    decoding = DecodingConfig(
        batch_size=config.generation_batch_size,
        max_block_tokens=config.max_block_tokens,
        max_attempts=config.max_attempts,
    )
    return generate_dataset(
        model,
        output,
        num_samples,
        seed=config.seed,
        decoding=decoding,
        mentions=mentions,
        run=DatasetRunConfig(samples_per_shard=256, progress_bar=False),
    )


def synthetic_sets(
    config: ReproduceConfig, gold: Any, qalm: Path, lm: Path, work: Path, largest: int
) -> dict[str, Path]:
    """Stage 3 (before selection): the over-generated ECG-QALM pool that every selection draws from, ECG-LM and
    mention replacement (N each), and the curve's ECG-QALM folder when its ``largest`` multiple is beyond the
    pool (so that the core run's pool, and what was selected from it, stays as it was). Folders by method."""
    from hf_ecg.synthetic.mention_replacement import MentionReplacementSource, write_mention_replacement

    n = len(gold)
    dirs = {
        "qalm": generate(config, qalm, work / "synthetic-qalm", config.over_generate * n),
        "lm": generate(config, lm, work / "synthetic-lm", n),
    }
    if largest > config.over_generate:
        dirs["qalm-curve"] = generate(config, qalm, work / "synthetic-qalm-curve", largest * n)
    dirs["mr"] = write_mention_replacement(  # the same settings again resume it: nothing is redone
        MentionReplacementSource(gold, n, config.seed), work / "synthetic-mr"
    )
    return dirs


def select_sets(
    config: ReproduceConfig,
    *,
    gold: Any,
    test: Any,
    dev: Any,
    ner_config: NERConfig,
    dirs: dict[str, Path],
    rows: list[Row],
    work: Path,
    runs_dir: Path,
    selection_variants: Mapping[str, tuple[tuple[str, ...], bool]] = SELECTION_VARIANTS,
) -> tuple[dict[str, Path], list[Row]]:
    """Stage 3 (selection): ``sel``, the pool selected with ``--rule``, and the extended rows' other selections
    (``selection_variants``, default :data:`SELECTION_VARIANTS`). The gold tagger a rule needs is the gold
    row's first run (same data, same protocol: trained once, its score saved as that run). Returns the
    folders with the selected ones added, and ``rows`` less those whose selection kept nothing."""
    from hf_ecg.data.selection_rules import DEFAULT_RULES
    from hf_ecg.evaluation.ner import score_tagger
    from hf_ecg.selection import SelectionConfig, filter_generated
    from hf_ecg.taggers.training import train_tagger

    seeds = ner_config.seeds
    rules = config.rule or list(DEFAULT_RULES)
    selection_config = SelectionConfig(
        rules=rules,
        tagger_model=ner_config.model,
        tagger_epochs=ner_config.epochs,
        tagger_learning_rate=ner_config.learning_rate,
        tagger_batch_size=ner_config.batch_size,
        tagger_seeds=seeds[:1],
    )
    selected_dir = work / "synthetic-qalm-selected"
    gold_taggers: dict[int, Any] = {}

    def taggers_for(tagger_seeds: list[int]) -> list[Any]:
        for seed in tagger_seeds:
            if seed not in gold_taggers:
                log(f"gold tagger, seed {seed}, for the selection")
                gold_taggers[seed] = train_tagger([gold], ner_config, seed, entity_types=test.entity_types, dev=dev)
        return [gold_taggers[seed] for seed in tagger_seeds]

    dirs = dict(dirs)
    taggers = None
    if selection_config.needs_taggers and not (selected_dir / "ecg_generation.json").is_file():
        log(f"gold tagger, seed {seeds[0]}: the selection's tagger and the gold row's first run")
        taggers = taggers_for(seeds[:1])
        result = {"seed": seeds[0], **score_tagger(taggers[0], test)}
        run_path(runs_dir, "gold", seeds[0]).write_text(json.dumps(result, indent=2) + "\n")
    log(f"selection: {', '.join(rules)}")
    dirs["sel"] = filter_generated(
        dirs["qalm"], gold, selected_dir, selection_config, taggers=taggers, progress_bar=False
    )
    for name, (variant_rules, ensemble) in selection_variants.items():
        if not any(row.synthetic == f"sel-{name}" for row in rows):
            continue
        variant = replace(selection_config, rules=list(variant_rules), tagger_seeds=seeds if ensemble else seeds[:1])
        folder = work / f"synthetic-qalm-selected-{name}"
        given = None
        if variant.needs_taggers and not (folder / "ecg_generation.json").is_file():
            given = taggers_for(variant.tagger_seeds)
        log(f"selection {name}: {', '.join(variant.rules)}{' (ensemble)' * ensemble}")
        try:
            dirs[f"sel-{name}"] = filter_generated(
                dirs["qalm"], gold, folder, variant, taggers=given, progress_bar=False
            )
        except ValueError as error:  # every sample dropped: nothing to train on
            log(f"selection {name}: {error}; its rows are not run")
            rows = [row for row in rows if row.synthetic != f"sel-{name}"]
    sources = sorted({row.synthetic[6:-9] for row in rows if (row.synthetic or "").endswith("-repaired")})
    if sources:  # the mention-source curve's repair: the gold taggers of every seed, as an ensemble
        repair = replace(selection_config, rules=list(REPAIR_RULES), tagger_seeds=seeds)
        missing = any(not (work / f"synthetic-curve-{s}-repaired" / "ecg_generation.json").is_file() for s in sources)
        log(f"repair of the mention-source curve's sets: {', '.join(REPAIR_RULES)}")
        dirs.update(repaired_sets(dirs, gold, work, sources, repair, taggers_for(seeds) if missing else None))
    return dirs, rows


def measure_quality(
    path: Path, config: ReproduceConfig, gold: Any, sets: dict[str, Any], dirs: dict[str, Path]
) -> dict[str, dict[str, float]]:
    """Stage 4: each method's first N samples against gold (and all ECG-QALM generated, as ``qalm-all``), and
    ``gold`` itself, each sentence against the other gold sentences; kept in ``path``, read back on a rerun."""
    from hf_ecg.data.sources import load_flags
    from hf_ecg.evaluation.quality import gold_self_report, quality_reports

    gold_rows = [(s.tokens, s.tags) for s in gold]
    quality = json.loads(path.read_text()) if path.is_file() else {}
    if not quality:
        log("generation quality")
        n = len(gold)
        flags = {method: load_flags(folder) for method, folder in dirs.items()}
        quality = quality_reports(
            {method: [(s.tokens, s.tags) for s in list(sets[method])[:n]] for method in METHODS},
            gold_rows,
            ref_model=config.generator_model,
            flags={method: {k: v[:n] for k, v in columns.items()} for method, columns in flags.items() if columns},
        )
        whole = quality_reports(
            {"qalm-all": [(s.tokens, s.tags) for s in sets["qalm"]]},
            gold_rows,
            ref_model=None,
            flags={"qalm-all": flags["qalm"]},
        )
        quality["qalm-all"] = whole["qalm-all"]
    if "gold" not in quality:  # also for a folder measured before the gold row was computed
        quality["gold"] = gold_self_report(gold_rows)
        path.write_text(json.dumps(quality, indent=2) + "\n")
    return quality


def run_protocol(
    config: ReproduceConfig,
    *,
    selection_variants: Mapping[str, tuple[tuple[str, ...], bool]] = SELECTION_VARIANTS,
) -> Path:
    """Run every stage of ``config`` in its folder (resuming what an earlier run there did) and write its
    tables; returns the folder. ``selection_variants``: the extended tables' other selections."""
    seeds = [int(s) for s in config.seeds.split(",")]
    extended = config.tables == "extended"
    scales = sorted({int(s) for s in config.scales.split(",")} | {1}) if extended else [1]
    setting = SETTINGS[config.dataset]
    n = config.first_n
    data_dir = Path(config.data_dir)
    paths = {split: data_dir / getattr(setting, split) for split in ("train", "test")}
    for path in paths.values():
        if not path.is_file():
            raise FileNotFoundError(f"{path} not found: give the folder of the corpora with --data-dir")
    output = Path(config.output or Path("outputs") / "reproduce" / f"{config.dataset}-{n}")
    work, runs_dir = output / "work", output / "runs"
    runs_dir.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()

    from hf_ecg.data.sources import load_labelled, load_source
    from hf_ecg.taggers.tagger import RECIPES

    if config.recipe not in RECIPES:
        raise ValueError(f"unknown recipe {config.recipe!r}; known: {', '.join(RECIPES)}")
    gold = load_labelled(paths["train"], first_n=n)
    test = load_labelled(paths["test"], first_n=config.test_first_n or None)
    dev = None
    if config.dev_first_n:
        spec = setting.dev.format(dev_n=config.dev_first_n, n=n, n_plus_dev=n + config.dev_first_n)
        dev = load_source(data_dir / spec)
    log(
        f"{config.dataset}: {len(gold)} gold, {len(test)} test, {len(dev) if dev else 0} dev sentences; seeds {seeds}; "
        f"{config.tables} tables"
    )

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
    sources = parse_sources(config.mention_sources) if extended else []
    generators = {"qa": qalm, "lm": lm, **({"qa-mentions": work / "ecg-qalm-mentions"} if sources else {})}
    train_generators(config, paths["train"], generators)
    stage_done("generators")
    dirs = synthetic_sets(config, gold, qalm, lm, work, max(scales))
    if sources:  # the gazetteer: every mention of the setting's whole training pool
        lists = gazetteer(paths["train"], work)
        dirs.update(
            mention_curve_sets(config, gold, generate, generators["qa-mentions"], lists, work, sources, max(scales))
        )
    stage_done("synthetic sets")
    ner_learning_rate = config.ner_learning_rate or setting.learning_rate
    ner_config = NERConfig(
        model=config.ner_model,
        epochs=config.ner_epochs,
        learning_rate=ner_learning_rate,
        seeds=seeds,
        bf16=config.ner_bf16,
    )
    rows = [
        row
        for row in [
            # the concrete recipes: auto is two-stage for generated data
            *ner_rows(
                config.recipe,
                tuple(r for r in RECIPES if r != "auto"),
                scales,
                config.over_generate,
                selection_variants,
            ),
            *mention_curve_rows(sources, scales, config.recipe),
        ]
        if (row.core or extended) and wanted(row, config.rows)
    ]
    dirs, rows = select_sets(
        config,
        gold=gold,
        test=test,
        dev=dev,
        ner_config=ner_config,
        dirs=dirs,
        rows=rows,
        work=work,
        runs_dir=runs_dir,
        selection_variants=selection_variants,
    )
    sets = {method: load_labelled(folder) for method, folder in dirs.items()}
    if len(sets["sel"]) < n:
        log(f"warning: selection kept {len(sets['sel'])} samples, fewer than {n}: raise --over-generate")
    stage_done("selection")
    quality = measure_quality(output / "quality.json", config, gold, sets, dirs)
    stage_done("quality")

    results = run_ner(config, rows, sets, gold, dev, test, ner_config, seeds, runs_dir)
    (output / "ner.json").write_text(json.dumps(results, indent=2) + "\n")
    stage_done("NER")

    reference_path = Path(config.reference) if config.reference else None
    reference = (
        json.loads(reference_path.read_text()).get(f"{config.dataset}-{n}", {})
        if reference_path and reference_path.is_file()
        else {}
    )
    tables = write_tables(
        output,
        config,
        ner_config=ner_config,
        num_test=len(test),
        num_dev=len(dev) if dev else 0,
        quality=quality,
        rows=rows,
        results=results,
        scales=scales,
        reference=reference,
        timing=timing,
        dirs=dirs,
        sizes={method: len(data) for method, data in sets.items()},
        sources=sources,
    )
    curve = ["gold", "gold+mr", "gold+qalm", *(f"gold+qalm-{m}x" for m in scales if m > 1)]
    if extended and all(key in results for key in curve):
        plot_scaling(output / "scaling.png", config, results, scales)
    if sources:
        plot_mention_curves(output / "mention_sources.png", config, results, sources, scales)
    _, header, ner_section = tables.partition("## Downstream NER")
    print(header + ner_section)  # the NER table and its verdict lines
    resumed = (
        f"; this folder's stages over {timing['invocations']} invocations: {sum(stages.values()):.1f} min"
        if timing["invocations"] > 1
        else ""
    )
    log(f"done in {(time.perf_counter() - started) / 60:.1f} min{resumed}: {output}/tables.md")
    return output
