"""Training the downstream tagger: the recipes' stages (:func:`training_stages`: gold and synthetic data joined,
gold oversampled, or a synthetic stage before gold), a token classifier fine-tuned with ``transformers.Trainer``
(:func:`train_tagger`), its epoch chosen on a dev split."""

from __future__ import annotations

import math
import tempfile
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from ..data.corpus import Corpus, Sentence
from .metrics import entity_scores
from .tagger import NERConfig, Tagger, encode_words

__all__ = [
    "OVERSAMPLE_RECALL",
    "default_synthetic_epochs",
    "new_mention_share",
    "resolved_recipe",
    "train_tagger",
    "training_stages",
]


def default_synthetic_epochs(epochs: float, num_gold: int, num_synthetic: int, *, recycled: bool = False) -> float:
    """The two-stage recipe's synthetic epochs when none are given: ``epochs × √(num_gold / num_synthetic)``,
    rounded to whole epochs, between 1 and ``epochs``: 20 at one times the gold data, 14 at two, 9 at five, 6
    at ten. With ``recycled`` (every synthetic mention is one of the gold sentences'), the updates of one times
    instead: ``epochs × num_gold / num_synthetic``, 2 at ten times.

    The synthetic stage's updates then grow with the square root of the data: ten times the data gets three
    times the updates of one times in a third of its passes; the measurements behind both rules are in
    docs/ablations.md.
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


#: The least recall on the gold sentences at which ``auto`` trusts a labeller's silver sentences in every batch.
OVERSAMPLE_RECALL = 0.5


def resolved_recipe(synthetic: Sequence[Corpus], config: NERConfig) -> str:
    """The recipe ``config.recipe`` names; ``auto``: ``oversample`` when a synthetic corpus holds weak labels whose
    labeller finds most of the gold sentences' names (:attr:`~hf_ecg.data.corpus.Corpus.labeller_recall` at least
    :data:`OVERSAMPLE_RECALL`), else ``two-stage``.

    Where the dictionary finds most names, a last stage on gold alone costs the tagger the precision its names gave
    it, and gold mixed into every batch keeps it (BC5CDR 45, MeSH, recall 0.57 on gold: 0.660 against 0.648); where
    it finds few, the silver teaches most names as ``O`` and only a last stage on gold undoes it (JNLPBA 186, recall
    0.21: 0.353 against 0.470). The measurements are in results/silver-recipes/."""
    if config.recipe != "auto":
        return config.recipe
    trusted = any(c.weak and (c.labeller_recall or 0.0) >= OVERSAMPLE_RECALL for c in synthetic)
    return "oversample" if trusted else "two-stage"


def training_stages(
    gold: Sequence[Corpus], synthetic: Sequence[Corpus], config: NERConfig
) -> list[tuple[list[Sentence], float]]:
    """The training sentences of each stage and its epochs, as ``config.recipe`` mixes gold and synthetic data
    (``auto``: :func:`resolved_recipe`).

    - ``concat``: one stage, gold and synthetic together;
    - ``oversample``: one stage in which gold is repeated the fewest whole times that make it at least
      ``gold_share`` of the sentences, so that every batch is mostly gold however much synthetic data there is;
    - ``two-stage``: the synthetic sentences for ``synthetic_epochs``, then gold alone for ``epochs`` (the usual
      "pre-train on silver, fine-tune on gold"). Unset, ``synthetic_epochs`` is
      :func:`default_synthetic_epochs`, ``recycled`` when no synthetic mention is new
      (:func:`new_mention_share` is 0: bank mentions, mention replacement with the gold mentions);
    - ``auto`` with weak labels: ``oversample`` for ``synthetic_epochs`` (default: :func:`default_synthetic_epochs`),
      so that the one stage makes about the updates of the two-stage recipe's synthetic stage.
    """
    gold_sentences = [s for corpus in gold for s in corpus]
    synthetic_sentences = [s for corpus in synthetic for s in corpus]
    recipe = resolved_recipe(synthetic, config)
    if recipe == "oversample" and config.recipe == "auto" and gold_sentences and synthetic_sentences:
        epochs = config.synthetic_epochs or default_synthetic_epochs(
            config.epochs, len(gold_sentences), len(synthetic_sentences)
        )
        config = replace(config, recipe="oversample", epochs=epochs)
    if recipe == "two-stage" and gold_sentences and synthetic_sentences:
        synthetic_epochs = config.synthetic_epochs or default_synthetic_epochs(
            config.epochs,
            len(gold_sentences),
            len(synthetic_sentences),
            recycled=new_mention_share(gold_sentences, synthetic_sentences) == 0,
        )
        return [(synthetic_sentences, synthetic_epochs), (gold_sentences, config.epochs)]
    if recipe == "oversample" and gold_sentences and synthetic_sentences:
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
    from transformers import AutoTokenizer, DataCollatorForTokenClassification, Trainer

    from ..data.dataset_format import bio_labels
    from ..modeling import model_load_error, resolve_model
    from .weighted import LabelWeightCollator, WeightedLossTrainer

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

    def encoded(sentences: Sequence[Sentence], weighted: bool) -> datasets.Dataset:
        rows = {"tokens": [list(s.tokens) for s in sentences], "tags": [s.training_tags for s in sentences]}
        if weighted:
            rows["weights"] = [s.training_weights for s in sentences]
        return datasets.Dataset.from_dict(rows).map(
            encode_words,
            batched=True,
            remove_columns=list(rows),
            fn_kwargs={"tokenizer": tokenizer, "label_ids": label_ids, "max_length": config.max_length},
        )

    model = _classifier(path, labels, label_ids, config, seed)
    tagger = Tagger(model, tokenizer, labels, config)
    for sentences, epochs in stages:
        selection = _dev_selection(tagger, dev, config.patience) if dev is not None and len(dev) else None
        with tempfile.TemporaryDirectory(prefix="hf-ecg-ner-") as output_dir:
            args = _stage_arguments(config, output_dir, epochs, seed, progress_bar)
            # Fractional weights (a noise-aware loss) need the weighted loss; -100 alone leaves unknown tokens out.
            weighted = any(s.weights for s in sentences)
            trainer = (WeightedLossTrainer if weighted else Trainer)(
                model=model,
                args=args,
                train_dataset=encoded(sentences, weighted),
                data_collator=(LabelWeightCollator if weighted else DataCollatorForTokenClassification)(tokenizer),
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


def _classifier(path: str, labels: list[str], label_ids: dict[str, int], config: NERConfig, seed: int) -> Any:
    """The token classifier to train, its head seeded with ``seed``."""
    import torch
    from transformers import AutoModelForTokenClassification

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
    return model


def _stage_arguments(config: NERConfig, output_dir: str, epochs: float, seed: int, progress_bar: bool) -> Any:
    """The ``TrainingArguments`` of one training stage: no saving, no evaluation, no logging."""
    import torch
    from transformers import TrainingArguments

    return TrainingArguments(
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
        # The fused AdamW step is far faster on CPU than the default foreach one (MiniLM's word embeddings get
        # a dense update every step; scripts/bench_tagger.py).
        optim="adamw_torch_fused",
        train_sampling_strategy="group_by_length" if config.group_by_length else "random",
        # Trainer's bf16 is autocast; on a machine without CUDA it must be told the CPU is meant.
        bf16=config.bf16,
        use_cpu=config.bf16 and not torch.cuda.is_available(),
    )
