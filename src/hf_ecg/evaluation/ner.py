"""Downstream NER: does the synthetic data help a tagger? Train a token classifier, test it, report F1.

The measures are the paper's and the field's:

- **entity-level micro F1** as seqeval computes it by default (conlleval chunking: an ``I-X``
  that does not continue a span starts one), :func:`entity_scores`;
- **token-level macro F1 over the B-/I- labels** that occur in the gold test tags (the paper's
  Table 3 measure), :func:`token_macro_f1`;
- **per entity type** precision, recall, F1 and support, seqeval's ``classification_report``
  (:func:`per_type_scores`; the ``eval`` extra), since the ``urg`` sampler targets rare types.

:func:`evaluate_ner` trains one model per seed with ``transformers.Trainer`` on any mix of gold
corpora and generated datasets, predicts the test split, and reports every run and mean ± std. How
the synthetic data enters training is a recipe (:data:`~hf_ecg.taggers.tagger.RECIPES`,
:func:`~hf_ecg.taggers.training.training_stages`): joined with
gold, with gold oversampled, or in a first stage before gold.
"""

from __future__ import annotations

import logging
import os
import statistics
from collections.abc import Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

from ..data.corpus import Corpus
from ..data.sources import load_synthetic
from ..labelling.dictionary import Dictionary
from ..labelling.self_labelling import self_labelled
from ..taggers.metrics import entity_scores, per_type_scores, token_macro_f1
from ..taggers.tagger import NERConfig, Tagger
from ..taggers.training import new_mention_share, resolved_recipe, train_tagger, training_stages

__all__ = ["evaluate_ner", "lookup_scores", "score_tagger", "train_and_test"]

logger = logging.getLogger(__name__)


def lookup_scores(dictionary: Dictionary, test: Corpus) -> dict[str, Any]:
    """Entity precision, recall and F1 (overall and per type) of the dictionary lookup alone on ``test``."""
    gold = [sentence.tags for sentence in test]
    predicted = [dictionary.tags(sentence.tokens) for sentence in test]
    return {
        **_entity_fields(gold, predicted),
        "per_type": per_type_scores(gold, predicted),
        "names": {label: len(dictionary.names[label]) for label in dictionary.types},
    }


def _entity_fields(gold: Sequence[Sequence[str]], predicted: Sequence[Sequence[str]]) -> dict[str, float]:
    """Entity micro F1, precision and recall as a report names them (``entity_f1``, ...)."""
    entity = entity_scores(gold, predicted)
    return {f"entity_{measure}": entity[measure] for measure in ("f1", "precision", "recall")}


def train_and_test(
    train: Sequence[Corpus],
    test: Corpus,
    config: NERConfig,
    seed: int,
    *,
    synthetic: Sequence[Corpus] = (),
    dev: Corpus | None = None,
    progress_bar: bool = False,
    save_to: str | os.PathLike | None = None,
    dictionary: Dictionary | None = None,
) -> dict[str, Any]:
    """Train one token classifier on ``train`` and ``synthetic`` (:func:`train_tagger`, its epoch chosen on
    ``dev`` when given) and score it on ``test``; with ``save_to``, save it there (:meth:`Tagger.save_pretrained`,
    its test scores in the record: a reference tagger for ``hf-ecg evaluate labels``)."""
    tagger = train_tagger(
        train, config, seed, synthetic=synthetic, entity_types=test.entity_types, dev=dev, progress_bar=progress_bar
    )
    scores = {"seed": seed, **score_tagger(tagger, test, dictionary)}
    if save_to is not None:
        tagger.record = {
            "train": [{"name": corpus.name, "sentences": len(corpus)} for corpus in (*train, *synthetic)],
            # the types it saw an entity of: a reference cannot vouch for the others (evaluate labels warns)
            "trained_types": sorted({label for corpus in (*train, *synthetic) for label in corpus.entity_types}),
            "config": {**asdict(config), "seeds": [seed]},
            "test": {"name": test.name, "sentences": len(test), **scores},
        }
        tagger.save_pretrained(save_to)
    return scores


def score_tagger(tagger: Tagger, test: Corpus, dictionary: Dictionary | None = None) -> dict[str, Any]:
    """Entity micro precision, recall and F1 and token macro F1 of ``tagger`` on ``test`` (and the dev
    selection record of its training, if any). With a ``dictionary``, also ``with_dictionary``: the tagger's
    predictions repaired by the dictionary (:meth:`Dictionary.repaired`: its names the tagger left ``O`` get their
    type), what a user who holds the names would run."""
    gold = [sentence.tags for sentence in test]
    predicted = tagger.predict([sentence.tokens for sentence in test])  # scored as predicted, as seqeval reads it
    extra = {}
    if dictionary is not None:
        types = test.entity_types
        joined = [dictionary.repaired(s.tokens, tags, types) for s, tags in zip(test, predicted, strict=True)]
        extra["with_dictionary"] = _entity_fields(gold, joined)
        merged = [dictionary.merged(s.tokens, tags, types) for s, tags in zip(test, predicted, strict=True)]
        extra["dictionary_first"] = _entity_fields(gold, merged)
    return {
        **extra,
        **_entity_fields(gold, predicted),
        "token_macro_f1": token_macro_f1(gold, predicted),
        "per_type": per_type_scores(gold, predicted),
        **({"dev_selection": tagger.selection} if tagger.selection else {}),
    }


def evaluate_ner(
    train: Sequence[Corpus],
    test: Corpus,
    config: NERConfig | None = None,
    *,
    synthetic: Sequence[Corpus | str | os.PathLike] = (),
    dev: Corpus | None = None,
    progress_bar: bool = False,
    save_taggers: str | os.PathLike | None = None,
    unlabelled: Sequence[Sequence[str]] = (),
    dictionary: Dictionary | None = None,
) -> dict[str, Any]:
    """Train and test once per seed; every run's scores plus mean and std (sample, over seeds). With
    ``save_taggers``, each seed's tagger is saved to ``save_taggers/seed-N`` (checked before any training).
    With ``unlabelled`` sentences, self-training: per seed, a tagger trained on ``train`` alone labels them
    (:func:`~hf_ecg.labelling.self_labelling.self_labelled`) and they join the synthetic side (alone: the baseline
    a user with their own text but no generator would run; with ``synthetic``: both combined). With a
    ``dictionary``, the report's ``lookup`` scores the dictionary alone on ``test`` (no model, no gold), and
    ``unlabelled`` sentences are labelled by the dictionary instead (distant supervision), the same for every seed.

    ``train`` is the gold side and ``synthetic`` the generated side of ``config.recipe``: corpora, or sources
    :func:`~hf_ecg.data.sources.load_synthetic` reads (a generated folder with its silver split, ``FOLDER:N``),
    mixed as :func:`~hf_ecg.taggers.training.resolved_recipe` says. With ``dev``, each run keeps its best epoch."""
    config = config or NERConfig()
    synthetic = load_synthetic(synthetic)  # a generated folder brings its silver split along
    stages = training_stages(train, synthetic, config)
    save_paths = _tagger_folders(save_taggers, config.seeds)
    unseen = sorted(set(test.entity_types) - {t for corpus in (*train, *synthetic) for t in corpus.entity_types})
    if unseen:  # scored all the same: F1 0 for each, folded into the micro average
        logger.warning(
            "the test data has type(s) %s that no training sentence has: the tagger cannot find them, "
            "and their F1 of 0 lowers the micro F1",
            ", ".join(unseen),
        )
    distant = dictionary.label(unlabelled, gold=train) if dictionary is not None and unlabelled else None
    runs = []
    for seed in config.seeds:
        logger.info("NER run with seed %d", seed)
        seed_synthetic = list(synthetic)
        if distant is not None:
            seed_synthetic.append(distant)
        elif unlabelled:
            seed_synthetic.append(self_labelled(train, unlabelled, config, seed, test.entity_types, progress_bar))
        if unlabelled:
            stages = training_stages(train, seed_synthetic, config)
        runs.append(
            train_and_test(
                train,
                test,
                config,
                seed,
                synthetic=seed_synthetic,
                dev=dev,
                progress_bar=progress_bar,
                save_to=save_paths.get(seed),
                dictionary=dictionary,
            )
        )
    report: dict[str, Any] = {
        "train": [{"name": corpus.name, "sentences": len(corpus)} for corpus in train],
        "synthetic": [{"name": corpus.name, "sentences": len(corpus)} for corpus in synthetic],
        # self-training: sentences a tagger trained on the gold side labelled, one labelling per seed
        "unlabelled": (
            {"sentences": len(unlabelled), "labelled_by": "dictionary" if distant is not None else "self"}
            if unlabelled
            else None
        ),
        # the dictionary alone on the test split: what a user with the names and no data gets
        "lookup": lookup_scores(dictionary, test) if dictionary is not None else None,
        "dev": {"name": dev.name, "sentences": len(dev)} if dev is not None else None,
        "test": {"name": test.name, "sentences": len(test)},
        "config": asdict(config),
        "recipe": resolved_recipe([*synthetic, *([distant] if distant is not None else [])], config),
        # the stages every run trained, as training_stages made them (the synthetic stage's default epochs)
        "stages": [{"sentences": len(sentences), "epochs": epochs} for sentences, epochs in stages if sentences],
        "new_mention_share": new_mention_share([s for c in train for s in c], [s for c in synthetic for s in c]),
        "runs": runs,
    }
    report.update(_over_seeds(runs, joined=dictionary is not None))
    return report


def _tagger_folders(save_taggers: str | os.PathLike | None, seeds: Sequence[int]) -> dict[int, Path]:
    """Each seed's tagger folder (``save_taggers/seed-N``), refused before any training when taken."""
    save_paths = {seed: Path(save_taggers) / f"seed-{seed}" for seed in seeds} if save_taggers else {}
    if save_taggers is not None and Path(save_taggers).exists() and not Path(save_taggers).is_dir():
        raise FileExistsError(f"{save_taggers} is a file: the taggers go to a folder (FOLDER/seed-N)")
    taken = [str(path) for path in save_paths.values() if path.exists()]
    if taken:
        raise FileExistsError(f"{', '.join(taken)} already exist: choose another folder to save the taggers in")
    return save_paths


def _over_seeds(runs: list[dict[str, Any]], *, joined: bool) -> dict[str, Any]:
    """The runs' mean and sample std per measure and per type (``joined``: the dictionary-joined F1s too)."""
    summary: dict[str, Any] = {}
    for measure in ("entity_f1", "token_macro_f1"):
        values = [run[measure] for run in runs]
        summary[f"{measure}_mean"] = statistics.fmean(values)
        summary[f"{measure}_std"] = statistics.stdev(values) if len(values) > 1 else 0.0
    if joined:  # the tagger's predictions joined with the dictionary's, over the seeds
        for name in ("with_dictionary", "dictionary_first"):
            values = [run[name]["entity_f1"] for run in runs]
            summary[f"{name}_entity_f1_mean"] = statistics.fmean(values)
            summary[f"{name}_entity_f1_std"] = statistics.stdev(values) if len(values) > 1 else 0.0
    types = sorted({label for run in runs for label in run["per_type"]})
    summary["per_type"] = {}
    for label in types:
        scores = [run["per_type"].get(label, {"f1": 0.0, "precision": 0.0, "recall": 0.0}) for run in runs]
        summary["per_type"][label] = {
            **{f"{m}_mean": statistics.fmean(s[m] for s in scores) for m in ("precision", "recall", "f1")},
            "f1_std": statistics.stdev(s["f1"] for s in scores) if len(scores) > 1 else 0.0,
            "support": max(s.get("support", 0) for s in scores),
        }
    return summary
