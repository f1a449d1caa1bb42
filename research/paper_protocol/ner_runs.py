"""Downstream NER of the reproduction protocol (its stage 5): a token classifier trained to convergence once per
row and seed, each run cached in ``runs/`` so that a rerun resumes, ``workers`` at a time in spawned processes."""

from __future__ import annotations

import json
import multiprocessing
import os
import time
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import replace
from pathlib import Path
from typing import Any

from hf_ecg.taggers.tagger import NERConfig

from .config import ReproduceConfig, Row

__all__ = ["cached_run", "log", "ner_run", "run_ner", "run_path", "thread_env"]


def log(message: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {message}", flush=True)


def thread_env(workers: int) -> dict[str, str]:
    """Environment giving a worker process its share of the CPU threads."""
    threads = str(max(1, (os.cpu_count() or 1) // workers))
    return {"OMP_NUM_THREADS": threads, "MKL_NUM_THREADS": threads}


def run_path(runs_dir: Path, key: str, seed: int) -> Path:
    """Where the NER run of row ``key`` at ``seed`` is kept."""
    return runs_dir / f"{key}-seed{seed}.json"


def ner_run(
    row: Row, sets: dict[str, Any], gold: Any, dev: Any, test: Any, ner_config: NERConfig, seed: int, threads: int
) -> dict[str, Any]:
    """One NER run (in a worker process with ``threads`` torch threads when there are several workers)."""
    import torch

    from hf_ecg.evaluation.ner import train_and_test

    if threads:
        torch.set_num_threads(threads)
    synthetic = []
    if row.synthetic:  # a repaired or selected set may hold fewer: all of it
        data = sets[row.synthetic]
        synthetic = [data.subset(first_n=min(row.multiple * len(gold), len(data)))]
    train = [gold] if row.gold else []
    if not row.gold:  # synthetic data alone: it is the "gold" side of the recipe
        train, synthetic = synthetic, []
    return train_and_test(train, test, replace(ner_config, recipe=row.recipe), seed, synthetic=synthetic, dev=dev)


def cached_run(runs_dir: Path, row: Row, seed: int) -> bool:
    """Whether ``row`` at ``seed`` has a result in ``runs_dir`` made with the row's recipe (a row that mixes
    nothing is the same under any recipe)."""
    path = run_path(runs_dir, row.key, seed)
    if not path.is_file():
        return False
    return not (row.gold and row.synthetic) or json.loads(path.read_text()).get("recipe", "concat") == row.recipe


def run_ner(
    config: ReproduceConfig,
    rows: list[Row],
    sets: dict[str, Any],
    gold: Any,
    dev: Any,
    test: Any,
    ner_config: NERConfig,
    seeds: list[int],
    runs_dir: Path,
) -> dict[str, list[dict[str, Any]]]:
    """Every row × seed, each cached in ``runs_dir``; ``config.workers`` at a time in spawned processes."""
    todo = [(row, seed) for row in rows for seed in seeds if not cached_run(runs_dir, row, seed)]
    if todo:
        log(f"NER: {len(todo)} runs, {config.workers} at a time")

    def save(row: Row, seed: int, result: dict[str, Any], done: int) -> None:
        result = {**result, "recipe": row.recipe}
        run_path(runs_dir, row.key, seed).write_text(json.dumps(result, indent=2) + "\n")
        log(f"NER {done}/{len(todo)}: {row.label}, seed {seed}: entity F1 {result['entity_f1']:.3f}")

    if config.workers > 1 and len(todo) > 1:
        threads = int(thread_env(config.workers)["OMP_NUM_THREADS"])
        # spawn, not fork: a forked child would inherit this process's OpenMP state
        with ProcessPoolExecutor(config.workers, mp_context=multiprocessing.get_context("spawn")) as pool:
            futures = {
                pool.submit(ner_run, row, sets, gold, dev, test, ner_config, seed, threads): (row, seed)
                for row, seed in todo
            }
            for done, future in enumerate(as_completed(futures), 1):
                save(*futures[future], future.result(), done)
    else:
        for done, (row, seed) in enumerate(todo, 1):
            save(row, seed, ner_run(row, sets, gold, dev, test, ner_config, seed, 0), done)
    return {row.key: [json.loads(run_path(runs_dir, row.key, seed).read_text()) for seed in seeds] for row in rows}
