"""What one reproduction run is: the settings (:class:`ReproduceConfig`, one field per option of
``scripts/reproduce.py``, parsed by ``HfArgumentParser``), the corpora's splits and NER learning rates, and the
NER rows the tables hold."""

from __future__ import annotations

import fnmatch
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal

__all__ = [
    "METHODS",
    "SELECTION_VARIANTS",
    "SETTINGS",
    "ReproduceConfig",
    "Row",
    "Setting",
    "ner_rows",
    "parse_reproduce_config",
    "wanted",
]


@dataclass
class ReproduceConfig:
    """One reproduction run; each field is an option of ``scripts/reproduce.py``."""

    dataset: Literal["bc5cdr", "jnlpba"] = field(metadata={"help": "bc5cdr or jnlpba"})
    first_n: int = field(metadata={"help": "gold training sentences (45 / 186 for 1%%)"})
    tables: Literal["core", "extended"] = field(
        default="core",
        metadata={
            "help": "core (default): the five rows that answer 'does it help'; extended: also synthetic data "
            "alone, every recipe and the --scales curve"
        },
    )
    seeds: str = field(default="1,2,3", metadata={"help": "NER seeds (default 1,2,3)"})
    rows: str | None = field(
        default=None,
        metadata={
            "help": "only these NER rows, comma-separated keys or patterns (gold,gold+sel-*; default: every "
            "row of --tables)"
        },
    )
    scales: str = field(default="1,2,5,10", metadata={"help": "extended: synthetic size as multiples of gold"})
    mention_sources: str = field(
        default="bank,generated,lists",
        metadata={
            "help": "extended: the mention-source curve's sources, comma-separated: bank (the training mentions), "
            "generated (written in context by a generator trained with mention samples), lists (a gazetteer: every "
            "distinct mention of the setting's whole training pool); each at every --scales multiple, with and "
            "without repair, and mention replacement with the gazetteer beside them ('' for none)"
        },
    )
    # generators and generation
    generator_model: str = field(default="smollm2-135m", metadata={"help": "base model of the generators"})
    lora: bool = field(default=True, metadata={"help": "LoRA (default); --no-lora fine-tunes every weight"})
    generator_epochs: float = field(default=3.0, metadata={"help": "training epochs of each generator"})
    generator_learning_rate: float = field(default=1e-3, metadata={"help": "learning rate of each generator"})
    generator_max_steps: int = field(
        default=-1, metadata={"help": "train each generator for N updates instead of --generator-epochs"}
    )
    generator_own_sentences: int = field(
        default=0,
        metadata={
            "help": "own sentences of each generator's second training (ECGTrainingArguments.own_sentences); "
            "default 0: trained once, as the paper's generators and the committed tables were ('hf-ecg train' "
            "trains twice on corpora under 500 sentences)"
        },
    )
    generation_batch_size: int = field(default=64, metadata={"help": "rows decoded together"})
    max_block_tokens: int = field(default=64, metadata={"help": "tokens per block at most"})
    max_attempts: int = field(default=10, metadata={"help": "draws of a block at most"})
    seed: int = field(default=0, metadata={"help": "generation seed"})
    # selection and mixing
    over_generate: int = field(default=2, metadata={"help": "generate K × N ECG-QALM samples to select N from"})
    rule: list[str] | None = field(
        default=None, metadata={"help": "selection rules (default: hf_ecg.data.selection_rules.DEFAULT_RULES)"}
    )
    recipe: str = field(
        default="two-stage",
        metadata={
            "help": "how ECG-QALM data is mixed with gold (default two-stage, the best measured: docs/ablations.md)"
        },
    )
    # NER protocol
    ner_model: str = field(default="minilm-l6", metadata={"help": "token classifier (offline MiniLM-L6)"})
    ner_epochs: float = field(default=20.0, metadata={"help": "NER training epochs"})
    ner_learning_rate: float | None = field(
        default=None, metadata={"help": "NER learning rate (default: the reference's, 1e-4 BC5CDR, 5e-5 JNLPBA)"}
    )
    ner_bf16: bool = field(
        default=False,
        metadata={
            "help": "train and score the taggers under bfloat16 autocast: faster on a CPU with AVX-512 BF16 "
            "(scripts/bench_tagger.py), same F1 within the seeds' spread (docs/ablations.md); off by default, as "
            "the reference numbers are float32"
        },
    )
    dev_first_n: int = field(
        default=0,
        metadata={
            "help": "choose each tagger's epoch on this many dev sentences (default 0: no model selection, "
            "the reference protocol)"
        },
    )
    test_first_n: int = field(default=0, metadata={"help": "score the first N test sentences (0: all)"})
    workers: int = field(
        default=2,
        metadata={
            "help": "NER runs at a time, sharing the CPU threads (on 2 cores two 1-thread runs beat one 2-thread run)"
        },
    )
    data_dir: str | None = field(default=None, metadata={"help": "folder with bc5cdr/ and jnlpba/"})
    output: str | None = field(default=None, metadata={"help": "run folder (default outputs/reproduce/DATASET-N)"})
    reference: str | None = field(default=None, metadata={"help": "JSON of reference figures to compare with"})


@dataclass(frozen=True)
class Setting:
    """Where a corpus's splits are and how its NER protocol trains (the reference protocol)."""

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


def ner_rows(
    recipe: str,
    recipes: tuple[str, ...],
    scales: list[int],
    pool: int = 1,
    selection_variants: Mapping[str, tuple[tuple[str, ...], bool]] = SELECTION_VARIANTS,
) -> list[Row]:
    """The NER rows; ``pool``: the over-generation multiple, beyond which the curve has its own folder;
    ``selection_variants``: the extended tables' other selections."""
    rows = [
        Row("gold", "gold", True, core=True),
        Row("gold+mr", "gold + mention replacement (concat)", True, "mr", core=True),
        Row("gold+sel", f"gold + ECG-QALM, selected ({recipe})", True, "sel", recipe=recipe, core=True),
        Row("gold+qalm", f"gold + ECG-QALM, no selection ({recipe})", True, "qalm", recipe=recipe, core=True),
        Row("gold+lm", f"gold + ECG-LM ({recipe})", True, "lm", recipe=recipe, core=True),  # the ablation, mixed alike
    ]
    rows += [Row(f"{m}-only", f"{label} only", False, m) for m, label in METHODS.items()]
    rows += [
        Row(f"gold+sel-{r}", f"gold + ECG-QALM, selected ({r})", True, "sel", recipe=r) for r in recipes if r != recipe
    ]
    # The same recipes for mention replacement: a recipe's gain over concat is the recipe's, not the data's,
    # unless the baseline gets it too.
    rows += [
        Row(f"gold+mr-{r}", f"gold + mention replacement ({r})", True, "mr", recipe=r) for r in recipes if r != "concat"
    ]
    rows += [
        Row(
            f"gold+sel-{name}",
            f"gold + ECG-QALM, selected: {' '.join(rules)}{' (ensemble)' * ensemble}",
            True,
            f"sel-{name}",
            recipe=recipe,
        )
        for name, (rules, ensemble) in selection_variants.items()
    ]
    rows += [
        Row(
            f"gold+qalm-{m}x",
            f"gold + ECG-QALM {m}×, no selection ({recipe})",
            True,
            "qalm" if m <= pool else "qalm-curve",
            m,
            recipe=recipe,
        )
        for m in scales
        if m > 1
    ]
    return rows


def wanted(row: Row, patterns: str | None) -> bool:
    """Whether ``row`` is among the comma-separated ``--rows`` patterns (fnmatch; all rows without any)."""
    return patterns is None or any(fnmatch.fnmatchcase(row.key, p.strip()) for p in patterns.split(","))


def parse_reproduce_config(
    argv: list[str] | None = None, *, description: str | None = None, **defaults: str
) -> ReproduceConfig:
    """``argv`` as :class:`ReproduceConfig` through ``HfArgumentParser`` (``--first-n``/``--first_n``,
    ``--no-lora``, ``--rule R1 R2``); ``defaults`` fill the path fields that ``argv`` leaves unset;
    ``description`` heads ``--help``."""
    import argparse

    from transformers import HfArgumentParser

    class Formatter(argparse.ArgumentDefaultsHelpFormatter, argparse.RawDescriptionHelpFormatter):
        pass

    import __main__

    parser = HfArgumentParser(
        ReproduceConfig, description=getattr(__main__, "__doc__", None), formatter_class=Formatter
    )
    (config,) = parser.parse_args_into_dataclasses(argv)
    for name, value in defaults.items():
        if getattr(config, name) is None:
            setattr(config, name, value)
    return config
