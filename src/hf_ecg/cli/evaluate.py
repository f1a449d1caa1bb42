"""``hf-ecg evaluate quality|ner|labels``: generation quality, downstream NER, label noise."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from ..taggers.tagger import NERConfig
from .common import (
    CLIError,
    add_config_options,
    add_seeds_option,
    config_values,
    parse_seeds,
)
from .mention_options import add_dictionary_option, read_dictionary

#: The NERConfig fields ``evaluate ner``, ``evaluate fairness`` and ``mine-names`` take as options (--seeds is
#: parsed apart: a list).
NER_OPTIONS = (
    "recipe",
    "gold_share",
    "synthetic_epochs",
    "patience",
    "freeze_embeddings",
    "bf16",
    "model",
    "epochs",
    "batch_size",
    "learning_rate",
    "max_length",
    "max_steps",
    "group_by_length",
)


def ner_config(args: argparse.Namespace) -> NERConfig:
    """The tagger options (:data:`NER_OPTIONS`, ``--seeds``) as a :class:`NERConfig`; ``--bf16`` on a CPU that
    emulates bfloat16 is said on stderr."""
    seeds = parse_seeds(args.seeds, "--seeds")
    if not seeds:
        raise CLIError("--seeds needs at least one seed")
    config = NERConfig(seeds=seeds, **config_values(args, NER_OPTIONS))
    if config.bf16:
        import torch

        from ..modeling import inference_dtype

        if not torch.cuda.is_available() and inference_dtype("auto", "cpu") == "float32":
            print(
                "--bf16: this CPU has no native bfloat16 (AVX-512 BF16 or AMX) and emulates it, many times slower "
                "than float32; leave --bf16 out here",
                file=sys.stderr,
            )
    return config


def add_parser(sub: Any) -> None:
    """Register ``hf-ecg evaluate``."""
    evaluate = sub.add_parser(
        "evaluate",
        help="measure synthetic data: generation quality against gold, downstream NER, label noise, fairness",
        description="Evaluation commands; each prints its results as JSON (and writes them with --output).",
    )
    evaluate_sub = evaluate.add_subparsers(dest="evaluation", metavar="WHAT", required=True)
    _add_quality_parser(evaluate_sub)
    _add_ner_parser(evaluate_sub)
    _add_labels_parser(evaluate_sub)
    _add_fairness_parser(evaluate_sub)


def _add_quality_parser(evaluate_sub: Any) -> None:
    """Register ``hf-ecg evaluate quality``."""
    quality = evaluate_sub.add_parser(
        "quality",
        help="compare generated sentences with the gold training sentences",
        description=(
            "Perplexity under a reference LM, distinct-3, ROUGE-L to the nearest gold sentence, copied templates, "
            "the entity-type distance and sentence health, each beside gold. Prints JSON."
        ),
    )
    quality.add_argument("--generated", required=True, metavar="DIR", help="dataset folder written by hf-ecg generate")
    quality.add_argument("--reference", required=True, metavar="DATA", help="the gold training corpus (file or folder)")
    quality.add_argument(
        "--first-n", type=int, default=None, metavar="N", help="use the first N gold sentences (the training subset)"
    )
    quality.add_argument(
        "--ref-model",
        default="smollm2-135m",
        metavar="NAME",
        help="reference LM for perplexity: alias, Hub id or folder; 'none' skips perplexity (default: smollm2-135m, "
        "the offline base model)",
    )
    quality.add_argument("--batch-size", type=int, default=16, help="perplexity batch size (default 16)")
    _add_report_options(quality)
    quality.set_defaults(func=_run_evaluate_quality, prints_json=True)


def _add_ner_parser(evaluate_sub: Any) -> None:
    """Register ``hf-ecg evaluate ner``."""
    ner = evaluate_sub.add_parser(
        "ner",
        help="train a token classifier on gold and/or synthetic data and score it on a test split",
        description=(
            "Train a token classifier on the --train sources (gold files and generated folders) once per seed and "
            "score it on --test: entity micro F1 and token macro F1. Prints JSON with every run, mean and std."
        ),
    )
    ner.add_argument(
        "--train",
        action="append",
        required=True,
        metavar="DATA[:N]",
        help="training data: a corpus file or a generated dataset folder; ':N' keeps its first N sentences "
        "(repeat for a mix, e.g. --train gold.tsv:45 --train synthetic/)",
    )
    ner.add_argument(
        "--synthetic",
        action="append",
        default=[],
        metavar="DATA[:N]",
        help="synthetic training data (a generated folder, its silver split included, or any corpus), mixed with "
        "the --train data as --recipe says; repeat for several",
    )
    ner.add_argument(
        "--test", required=True, metavar="DATA[:N]", help="test corpus (all of it unless ':N' keeps the first N)"
    )
    ner.add_argument(
        "--dev",
        default=None,
        metavar="DATA[:N|:START:STOP]",
        help="dev split: each run is scored on it after every epoch and keeps its best epoch (entity F1). "
        "'devel.tsv:186:686' takes sentences 186 to 685 of a pool whose first 186 are the training sentences",
    )
    add_config_options(ner.add_argument_group("the tagger and its training (hf_ecg.NERConfig)"), NERConfig, NER_OPTIONS)
    add_seeds_option(ner, "--seeds", NERConfig().seeds, "one run per seed")
    ner.add_argument(
        "--unlabelled",
        default=None,
        metavar="TEXT[:N|:START:STOP]",
        help="self-training on your unlabelled text: a .txt file, one sentence a line, or a corpus whose labels "
        "are never read ('train.tsv:45:495': sentences 45 to 494); a tagger trained on --train labels it for "
        "the synthetic side",
    )
    add_dictionary_option(
        ner,
        "the report adds the lookup alone on --test, and --unlabelled text is labelled by it (distant "
        "supervision) instead of by a tagger",
    )
    ner.add_argument(
        "--save-taggers",
        default=None,
        metavar="DIR",
        help="save each seed's tagger to DIR/seed-N with its test scores (e.g. a reference tagger for hf-ecg "
        "evaluate labels, trained on a whole training split)",
    )
    _add_report_options(ner)
    ner.set_defaults(func=_run_evaluate_ner, prints_json=True)


def _add_labels_parser(evaluate_sub: Any) -> None:
    """Register ``hf-ecg evaluate labels``."""
    labels = evaluate_sub.add_parser(
        "labels",
        help="measure a labelled set's label noise against a reference tagger",
        description=(
            "Score a labelled set's labels against a reference tagger's predictions: entity precision, recall and "
            "F1 per type and each kind of disagreement (wrong type, boundary, not an entity, left O). Prints "
            "JSON."
        ),
    )
    labels.add_argument(
        "--data", required=True, metavar="DATA[:N]", help="the labelled set: a dataset folder or a corpus file"
    )
    labels.add_argument(
        "--reference",
        required=True,
        metavar="MODEL",
        help="a token classifier with IOB2 labels covering the set's types: a folder (e.g. DIR/seed-1 of hf-ecg "
        "evaluate ner --save-taggers on a whole training split) or a Hub id",
    )
    labels.add_argument(
        "--test", default=None, metavar="DATA[:N]", help="a gold test split: score the reference on it (the ceiling)"
    )
    labels.add_argument(
        "--gold",
        default=None,
        metavar="DATA[:N]",
        help="the gold sentences the set was made from: also report precision and recall apart for the mentions "
        "a gold sentence holds and the new ones, and the new-mention share (a reference knows its training "
        "names best, so recycled gold mentions raise agreement without better labels)",
    )
    labels.add_argument(
        "--examples",
        type=int,
        default=0,
        metavar="N",
        help="also print N sentences with a disagreement, marked as the set labels them and as the reference "
        "reads them (default 0)",
    )
    labels.add_argument("--batch-size", type=int, default=64, help="prediction batch size (default 64)")
    _add_report_options(labels)
    labels.set_defaults(func=_run_evaluate_labels, prints_json=True)


def _add_fairness_parser(evaluate_sub: Any) -> None:
    """Register ``hf-ecg evaluate fairness``."""
    fairness = evaluate_sub.add_parser(
        "fairness",
        help="test a labelled set's mentions for group and individual fairness",
        description=(
            "Count a type's mentions per group of your name<TAB>group file in the set (and gold): disparate impact "
            "and the 80% rule; with --gold, the counterfactual unfairness: the share of samples whose predicted "
            "entities change when a mention is swapped for a name of another group. Prints JSON."
        ),
    )
    fairness.add_argument("--data", required=True, metavar="DATA[:N]", help="the set: a dataset folder or a corpus")
    fairness.add_argument(
        "--groups", required=True, metavar="TYPE=FILE", help="the type and your name<TAB>group file, e.g. person=g.tsv"
    )
    fairness.add_argument(
        "--gold",
        default=None,
        metavar="DATA[:N]",
        help="the gold sentences: their group counts beside the set's, and the taggers of the counterfactual test",
    )
    fairness.add_argument(
        "--counterfactual",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="with --gold, train a tagger on gold and the set per seed and swap each sample's mention (default: on)",
    )
    add_config_options(
        fairness.add_argument_group("the tagger of the counterfactual test (hf_ecg.NERConfig)"),
        NERConfig,
        NER_OPTIONS,
    )
    add_seeds_option(fairness, "--seeds", (1, 2), "one tagger per seed")
    _add_report_options(fairness)
    fairness.set_defaults(func=_run_evaluate_fairness, prints_json=True)


def _run_evaluate_fairness(args: argparse.Namespace) -> int:
    from ..data.groups import GroupTable, split_group_spec
    from ..data.sources import load_source
    from ..evaluation.fairness import evaluate_fairness

    try:
        entity_type, path, shares = split_group_spec(args.groups)
    except ValueError as error:
        raise CLIError(f"--groups {error}") from None
    if shares is not None:
        raise CLIError(f"--groups takes TYPE=FILE (shares are generate --balance's), got {args.groups!r}")
    _check_report(args)
    if args.counterfactual is not None and not args.gold:
        flag = "--counterfactual" if args.counterfactual else "--no-counterfactual"
        raise CLIError(f"{flag} would do nothing: the counterfactual test trains its taggers on --gold")
    table = GroupTable.read(entity_type, path)
    config = ner_config(args)
    gold = load_source(args.gold) if args.gold else None
    report = evaluate_fairness(
        load_source(args.data),
        table,
        gold=gold,
        config=config,
        counterfactual=args.counterfactual is not False,
        progress_bar=True,
    )
    _print_json(report, args)
    return 0


def _add_report_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--output", "-o", default=None, metavar="FILE.json", help="also write the JSON here")
    parser.add_argument("--overwrite", action="store_true", help="replace an existing --output file")


def _check_report(args: argparse.Namespace, saved: str | None = None) -> None:
    """Refuse ``--output`` before any work (:func:`~hf_ecg.data.outputs.check_output_file`): an existing file
    without ``--overwrite``, a folder, a file inside a folder hf_ecg wrote, or a file inside the folder the command
    ``saved`` its taggers to. An output that is an input, or inside one, ``main`` has refused already
    (:func:`~hf_ecg.cli.common.refuse_outputs_over_inputs`)."""
    from ..data.outputs import check_output_file

    if args.output is None:
        return
    try:
        check_output_file(args.output, overwrite=args.overwrite)
    except (ValueError, FileExistsError) as error:
        raise CLIError(f"--output {error}") from None
    if saved and Path(saved).resolve() in Path(args.output).resolve().parents:
        raise CLIError(f"--output {args.output} is inside the --save-taggers folder {saved}: write it elsewhere")


def _run_evaluate_labels(args: argparse.Namespace) -> int:
    from ..data.sources import load_source
    from ..evaluation.labels import label_agreement
    from ..taggers.tagger import Tagger

    _check_report(args)
    if args.examples < 0:
        raise CLIError(f"--examples must be 0 or more, got {args.examples}")
    if args.batch_size < 1:
        raise CLIError(f"--batch-size must be at least 1, got {args.batch_size}")
    data = load_source(args.data)
    test = load_source(args.test) if args.test else None
    gold = load_source(args.gold) if args.gold else None
    try:
        reference = Tagger.from_pretrained(args.reference)
    except (OSError, ValueError) as error:
        raise CLIError(f"--reference: {error}") from None
    reference.config.eval_batch_size = args.batch_size
    report = label_agreement(data, reference, test=test, gold=gold, examples=args.examples)
    _print_json(report, args)
    return 0


def _run_evaluate_ner(args: argparse.Namespace) -> int:
    from ..data.sources import load_source, load_synthetic, load_unlabelled_source
    from ..evaluation.ner import evaluate_ner

    _check_report(args, saved=args.save_taggers)
    config = ner_config(args)
    train = [load_source(spec) for spec in args.train]
    synthetic = load_synthetic(args.synthetic)
    dev = load_source(args.dev) if args.dev else None
    try:
        unlabelled = load_unlabelled_source(args.unlabelled) if args.unlabelled else ()
    except ValueError as error:
        raise CLIError(f"--unlabelled {error}") from None
    test = load_source(args.test)
    types = {t for corpus in (*train, test) for t in corpus.entity_types}
    dictionary = read_dictionary(args.dictionary, labelled=train, types=types) if args.dictionary else None
    report = evaluate_ner(
        train,
        test,
        config,
        synthetic=synthetic,
        dev=dev,
        progress_bar=True,
        save_taggers=args.save_taggers,
        unlabelled=unlabelled,
        dictionary=dictionary,
    )
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
    from ..data.sources import load_flags, load_labelled
    from ..evaluation.quality import quality_report

    _check_report(args)
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
