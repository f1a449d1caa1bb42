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
the synthetic data enters training is a recipe (:data:`RECIPES`, :func:`training_stages`): joined with
gold, with gold oversampled, or in a first stage before gold.
"""

from __future__ import annotations

import logging
import math
import os
import statistics
import tempfile
from collections.abc import Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

from ..data.corpus import Corpus, Sentence
from ..data.dictionary import Dictionary
from .metrics import entity_scores, per_type_scores, token_macro_f1
from .tagger import RECIPES, NERConfig, Tagger, encode_words

__all__ = [
    "RECIPES",
    "NERConfig",
    "Tagger",
    "dictionary_labelled",
    "entity_scores",
    "evaluate_ner",
    "lookup_scores",
    "new_mention_share",
    "per_type_scores",
    "score_tagger",
    "self_labelled",
    "token_macro_f1",
    "train_and_test",
    "train_tagger",
    "training_stages",
]

logger = logging.getLogger(__name__)


def default_synthetic_epochs(epochs: float, num_gold: int, num_synthetic: int, *, recycled: bool = False) -> float:
    """The two-stage recipe's synthetic epochs when none are given: ``epochs × √(num_gold / num_synthetic)``,
    rounded to whole epochs, between 1 and ``epochs``: 20 at one times the gold data, 14 at two, 9 at five, 6
    at ten. With ``recycled`` (every synthetic mention is one of the gold sentences'), the updates of one times
    instead: ``epochs × num_gold / num_synthetic``, 2 at ten times.

    The synthetic stage's updates then grow with the square root of the data: ten times the data gets three
    times the updates of one times in a third of its passes. Measured at ten times (docs/ablations.md, generated
    mentions): 20 passes overfit (BC5CDR 45: 0.356 with bank mentions); the updates of one times
    (2 passes) undertrain once mentions are new (BC5CDR 45: 0.516, level with one times; JNLPBA 186: 0.446);
    6 passes: 0.549 and 0.459. With every mention recycled from the gold bank, 6 passes at ten times overfit
    those few names (BC5CDR 45: 0.397, below gold's 0.452; 2 passes: 0.461), hence ``recycled``.
    """
    if num_synthetic <= 0 or num_gold <= 0:
        return epochs
    ratio = num_gold / num_synthetic
    return float(min(epochs, max(1, round(epochs * (ratio if recycled else math.sqrt(ratio))))))


def new_mention_share(gold: Sequence[Sentence], synthetic: Sequence[Sentence]) -> float | None:
    """The share of the ``synthetic`` sentences' mentions (type and words) that no ``gold`` sentence holds;
    ``None`` when they hold no mentions."""
    known = {mention for sentence in gold for mention in sentence.mentions}
    mentions = [mention for sentence in synthetic for mention in sentence.mentions]
    if not mentions:
        return None
    return sum(mention not in known for mention in mentions) / len(mentions)


def training_stages(
    gold: Sequence[Corpus], synthetic: Sequence[Corpus], config: NERConfig
) -> list[tuple[list[Sentence], float]]:
    """The training sentences of each stage and its epochs, as ``config.recipe`` mixes gold and synthetic data.

    - ``concat``: one stage, gold and synthetic together;
    - ``oversample``: one stage in which gold is repeated the fewest whole times that make it at least
      ``gold_share`` of the sentences, so that every batch is mostly gold however much synthetic data there is;
    - ``two-stage``: the synthetic sentences for ``synthetic_epochs``, then gold alone for ``epochs`` (the usual
      "pre-train on silver, fine-tune on gold"). Unset, ``synthetic_epochs`` is
      :func:`default_synthetic_epochs`, ``recycled`` when no synthetic mention is new
      (:func:`new_mention_share` is 0: bank mentions, mention replacement with the gold mentions).
    """
    gold_sentences = [s for corpus in gold for s in corpus]
    synthetic_sentences = [s for corpus in synthetic for s in corpus]
    if config.recipe == "two-stage" and gold_sentences and synthetic_sentences:
        synthetic_epochs = config.synthetic_epochs or default_synthetic_epochs(
            config.epochs,
            len(gold_sentences),
            len(synthetic_sentences),
            recycled=new_mention_share(gold_sentences, synthetic_sentences) == 0,
        )
        return [(synthetic_sentences, synthetic_epochs), (gold_sentences, config.epochs)]
    if config.recipe == "oversample" and gold_sentences and synthetic_sentences:
        wanted = config.gold_share * len(synthetic_sentences) / (1.0 - config.gold_share)
        repeats = max(1, math.ceil(wanted / len(gold_sentences) - 1e-9))
        return [(gold_sentences * repeats + synthetic_sentences, config.epochs)]
    return [(gold_sentences + synthetic_sentences, config.epochs)]


def _dev_selection(tagger: Tagger, dev: Corpus, patience: int) -> Any:
    """A ``TrainerCallback`` that scores ``tagger`` on ``dev`` (entity micro F1) at every epoch end, keeps a copy
    of the best weights in ``.best_state`` and stops training after ``patience`` epochs without a gain."""
    from transformers import TrainerCallback

    gold = [sentence.tags for sentence in dev]
    tokens = [sentence.tokens for sentence in dev]

    class DevSelection(TrainerCallback):
        def __init__(self) -> None:
            self.history: list[tuple[float, float]] = []
            self.best_f1, self.best_epoch, self.best_state = -1.0, 0.0, None

        def on_epoch_end(self, args: Any, state: Any, control: Any, **kwargs: Any) -> Any:
            f1 = entity_scores(gold, tagger.predict(tokens))["f1"]  # predict() leaves eval mode; train() resets it
            epoch = round(state.epoch or 0.0, 2)
            self.history.append((epoch, f1))
            if f1 > self.best_f1:
                self.best_f1, self.best_epoch = f1, epoch
                self.best_state = {k: v.detach().clone() for k, v in tagger.model.state_dict().items()}
            elif patience and epoch - self.best_epoch >= patience:
                control.should_training_stop = True
            return control

    return DevSelection()


def train_tagger(
    train: Sequence[Corpus],
    config: NERConfig,
    seed: int,
    *,
    synthetic: Sequence[Corpus] = (),
    entity_types: Sequence[str] = (),
    dev: Corpus | None = None,
    progress_bar: bool = False,
) -> Tagger:
    """Fine-tune a token classifier with ``transformers.Trainer`` on ``train`` (gold) and ``synthetic`` data,
    mixed as ``config.recipe`` says (:func:`training_stages`; each stage has its own optimizer and schedule).

    Its labels are the IOB2 labels of the entity types of the training data and ``entity_types`` (the test
    split's too, so that every test label has an output). With a ``dev`` split, each stage is scored on it
    after every epoch, keeps its epoch with the best entity F1 and stops after ``config.patience`` epochs
    without a gain; the returned tagger's ``selection`` records, per stage, the dev F1 of each epoch and the
    epoch kept.
    """
    import datasets
    import torch
    from transformers import (
        AutoModelForTokenClassification,
        AutoTokenizer,
        DataCollatorForTokenClassification,
        Trainer,
        TrainingArguments,
    )

    from ..data.dataset_format import bio_labels
    from ..modeling import model_load_error, resolve_model

    stages = [(sentences, epochs) for sentences, epochs in training_stages(train, synthetic, config) if sentences]
    if not stages:
        raise ValueError("no training sentences")
    types = {label for corpus in (*train, *synthetic) for label in corpus.entity_types}
    labels = bio_labels(types | set(entity_types) | set(dev.entity_types if dev is not None else ()))
    label_ids = {label: i for i, label in enumerate(labels)}
    path = resolve_model(config.model)
    try:
        tokenizer = AutoTokenizer.from_pretrained(path)
    except (OSError, ValueError) as error:
        raise model_load_error(config.model, error) from None
    if not tokenizer.is_fast:
        raise ValueError(f"{config.model} has no fast tokenizer: word alignment needs one")

    def encoded(sentences: Sequence[Sentence]) -> datasets.Dataset:
        rows = {"tokens": [list(s.tokens) for s in sentences], "tags": [s.tags for s in sentences]}
        return datasets.Dataset.from_dict(rows).map(
            encode_words,
            batched=True,
            remove_columns=["tokens", "tags"],
            fn_kwargs={"tokenizer": tokenizer, "label_ids": label_ids, "max_length": config.max_length},
        )

    torch.manual_seed(seed)  # the classifier head's initialisation
    # float32 weights whatever the checkpoint's dtype: transformers 5 loads a float16/bfloat16 checkpoint in its
    # own dtype, and AdamW steps on half-precision weights lose the small updates (--bf16 is autocast instead).
    model = AutoModelForTokenClassification.from_pretrained(
        path, num_labels=len(labels), id2label=dict(enumerate(labels)), label2id=label_ids, dtype=torch.float32
    )
    if config.freeze_embeddings:
        # The word embeddings are half of MiniLM's weights; frozen, a step neither computes their dense
        # gradient nor updates them.
        model.get_input_embeddings().weight.requires_grad_(False)
    tagger = Tagger(model, tokenizer, labels, config)
    for sentences, epochs in stages:
        selection = _dev_selection(tagger, dev, config.patience) if dev is not None and len(dev) else None
        with tempfile.TemporaryDirectory(prefix="hf-ecg-ner-") as output_dir:
            args = TrainingArguments(
                output_dir=output_dir,
                num_train_epochs=epochs,
                per_device_train_batch_size=config.batch_size,
                per_device_eval_batch_size=config.eval_batch_size,
                learning_rate=config.learning_rate,
                seed=seed,
                save_strategy="no",
                eval_strategy="no",
                logging_strategy="no",
                report_to=[],
                disable_tqdm=not progress_bar,
                dataloader_pin_memory=torch.cuda.is_available(),
                max_steps=config.max_steps,
                # The fused AdamW step is ~4× faster on CPU than the default foreach one: 0.1 s of a 0.6 s
                # MiniLM update (the 11.7M-parameter word embeddings get a dense update every step).
                optim="adamw_torch_fused",
                train_sampling_strategy="group_by_length" if config.group_by_length else "random",
                # Trainer's bf16 is autocast; on a machine without CUDA it must be told the CPU is meant.
                bf16=config.bf16,
                use_cpu=config.bf16 and not torch.cuda.is_available(),
            )
            trainer = Trainer(
                model=model,
                args=args,
                train_dataset=encoded(sentences),
                data_collator=DataCollatorForTokenClassification(tokenizer),
                processing_class=tokenizer,
                callbacks=[selection] if selection is not None else None,
            )
            trainer.train()
            model = tagger.model = trainer.model
        if selection is not None:
            model.load_state_dict(selection.best_state)
            tagger.selection.append(
                {"dev_f1_by_epoch": selection.history, "epoch_kept": selection.best_epoch, "dev_f1": selection.best_f1}
            )
    return tagger


def self_labelled(
    train: Sequence[Corpus],
    unlabelled: Sequence[Sequence[str]],
    config: NERConfig,
    seed: int,
    entity_types: Sequence[str] = (),
    progress_bar: bool = False,
) -> Corpus:
    """Self-training's data: the ``unlabelled`` sentences labelled by a tagger trained on ``train`` alone
    (:meth:`Tagger.label`)."""
    teacher = train_tagger(train, config, seed, entity_types=entity_types, progress_bar=progress_bar)
    return teacher.label(unlabelled, name=f"unlabelled, self-labelled (seed {seed})")


def dictionary_labelled(dictionary: Dictionary, sentences: Sequence[Sequence[str]]) -> Corpus:
    """Distant supervision: ``sentences`` labelled by ``dictionary`` lookup (:meth:`Dictionary.spans`)."""
    labelled = [
        Sentence(tuple(tokens), tuple(dictionary.spans(tokens)), f"unlabelled[{i}]")
        for i, tokens in enumerate(sentences)
    ]
    return Corpus(labelled, name="unlabelled, labelled by the dictionary")


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
    synthetic: Sequence[Corpus] = (),
    dev: Corpus | None = None,
    progress_bar: bool = False,
    save_taggers: str | os.PathLike | None = None,
    unlabelled: Sequence[Sequence[str]] = (),
    dictionary: Dictionary | None = None,
) -> dict[str, Any]:
    """Train and test once per seed; every run's scores plus mean and std (sample, over seeds). With
    ``save_taggers``, each seed's tagger is saved to ``save_taggers/seed-N`` (checked before any training).
    With ``unlabelled`` sentences, self-training: per seed, a tagger trained on ``train`` alone labels them
    (:meth:`Tagger.label`) and they join the synthetic side (alone: the baseline a user with their own text
    but no generator would run; with ``synthetic``: both combined). With a ``dictionary``, the report's ``lookup``
    scores the dictionary alone on ``test`` (no model, no gold), and ``unlabelled`` sentences are labelled by the
    dictionary instead (distant supervision), the same for every seed.

    ``train`` is the gold side and ``synthetic`` the generated side of ``config.recipe``; with the default
    recipe (``concat``) both are simply joined. With ``dev``, each run keeps its epoch with the best dev F1."""
    config = config or NERConfig()
    stages = training_stages(train, synthetic, config)
    save_paths = {seed: Path(save_taggers) / f"seed-{seed}" for seed in config.seeds} if save_taggers else {}
    if save_taggers is not None and Path(save_taggers).exists() and not Path(save_taggers).is_dir():
        raise FileExistsError(f"{save_taggers} is a file: the taggers go to a folder (FOLDER/seed-N)")
    taken = [str(path) for path in save_paths.values() if path.exists()]
    if taken:
        raise FileExistsError(f"{', '.join(taken)} already exist: choose another folder to save the taggers in")
    unseen = sorted(set(test.entity_types) - {t for corpus in (*train, *synthetic) for t in corpus.entity_types})
    if unseen:  # scored all the same: F1 0 for each, folded into the micro average
        logger.warning(
            "the test data has type(s) %s that no training sentence has: the tagger cannot find them, "
            "and their F1 of 0 lowers the micro F1",
            ", ".join(unseen),
        )
    distant = dictionary_labelled(dictionary, unlabelled) if dictionary is not None and unlabelled else None
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
        # the stages every run trained, as training_stages made them (the synthetic stage's default epochs)
        "stages": [{"sentences": len(sentences), "epochs": epochs} for sentences, epochs in stages if sentences],
        "new_mention_share": new_mention_share([s for c in train for s in c], [s for c in synthetic for s in c]),
        "runs": runs,
    }
    for measure in ("entity_f1", "token_macro_f1"):
        values = [run[measure] for run in runs]
        report[f"{measure}_mean"] = statistics.fmean(values)
        report[f"{measure}_std"] = statistics.stdev(values) if len(values) > 1 else 0.0
    if dictionary is not None:  # the tagger's predictions joined with the dictionary's, over the seeds
        for joined in ("with_dictionary", "dictionary_first"):
            values = [run[joined]["entity_f1"] for run in runs]
            report[f"{joined}_entity_f1_mean"] = statistics.fmean(values)
            report[f"{joined}_entity_f1_std"] = statistics.stdev(values) if len(values) > 1 else 0.0
    types = sorted({label for run in runs for label in run["per_type"]})
    report["per_type"] = {}
    for label in types:
        scores = [run["per_type"].get(label, {"f1": 0.0, "precision": 0.0, "recall": 0.0}) for run in runs]
        report["per_type"][label] = {
            **{f"{m}_mean": statistics.fmean(s[m] for s in scores) for m in ("precision", "recall", "f1")},
            "f1_std": statistics.stdev(s["f1"] for s in scores) if len(scores) > 1 else 0.0,
            "support": max(s.get("support", 0) for s in scores),
        }
    return report
