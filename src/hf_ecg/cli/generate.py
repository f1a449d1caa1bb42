"""``hf-ecg generate``: a synthetic labelled dataset from a trained model."""

from __future__ import annotations

import argparse
import dataclasses
import sys
from pathlib import Path
from typing import Any

from ..data.selection_rules import DEFAULT_RULES
from ..data.selection_rules import RULES as RULE_CHOICES
from ..modeling import INFERENCE_DTYPES
from ..runtime.decoding_config import DecodingConfig
from ..runtime.mentions import FILL_STRATEGIES
from ..synthetic.entity_sequences import STATISTICS_SAMPLERS
from ..synthetic.run_config import DatasetRunConfig
from .common import (
    LABEL_NAMES_HELP,
    CLIError,
    add_config_options,
    add_dataset_card_options,
    add_overwrite_option,
    add_selection_options,
    config_values,
    dataset_card_fields,
    label_names_option,
    report_selection,
    selection_config,
)
from .mention_options import add_dictionary_option, mention_mixture, mention_source, read_dictionary
from .sketch_options import add_sketch_options, refuse_sketch_options, write_from_sketches
from .text_options import add_text_options, labelled_text

#: The DecodingConfig fields ``hf-ecg generate`` takes as options, from the dataclass: all but ``seed`` (its
#: --seed is the generation's, each shard's derived from it) and ``max_entities`` (a limit on requests, not a choice).
DECODING_OPTIONS = tuple(f.name for f in dataclasses.fields(DecodingConfig) if f.name not in ("seed", "max_entities"))


def add_parser(sub: Any) -> None:
    """Register ``hf-ecg generate``."""
    generate = sub.add_parser(
        "generate",
        help="write a synthetic labelled dataset with a trained model (Parquet shards, resumable)",
        description=(
            "Ask a model trained by hf-ecg train for NUM labelled sentences, written to OUTPUT/data/ shard by "
            "shard; the same command resumes after a crash, and accelerate launch splits the shards. Load it with "
            "datasets.load_dataset(OUTPUT)."
        ),
    )
    generate.add_argument("--model", required=True, metavar="DIR", help="model folder or Hub id trained by hf_ecg")
    generate.add_argument("--num-samples", "-n", required=True, type=int, metavar="N", help="samples to write")
    generate.add_argument("--output", "-o", required=True, metavar="DIR", help="dataset folder")
    generate.add_argument(
        "--sampler",
        choices=STATISTICS_SAMPLERS,
        default=STATISTICS_SAMPLERS[0],
        help="entity sequences: gold (as in the training data, the paper), urg (favour rare types, paper A.1), "
        "uniform (gold lengths, uniform types); default: gold",
    )
    generate.add_argument(
        "--entities",
        action="append",
        default=None,
        metavar="T1,T2,...",
        help="ask for this entity sequence instead of sampling (repeat for several; '' for no entity)",
    )
    add_sketch_options(generate)
    _add_mention_options(generate)
    generate.add_argument("--seed", type=int, default=0, help="seed: same seed and settings, same dataset (default 0)")
    generate.add_argument(
        "--samples-per-shard",
        type=int,
        default=256,
        help="rows per Parquet shard, the unit of resuming (default 256)",
    )
    generate.add_argument(
        "--dtype",
        choices=INFERENCE_DTYPES,
        default="auto",
        help="the generator's dtype: auto (default) is bfloat16 where the CPU or GPU supports it, float32 elsewhere",
    )
    add_config_options(
        generate.add_argument_group("decoding (hf_ecg.DecodingConfig)"), DecodingConfig, DECODING_OPTIONS
    )
    _add_selection_group(generate)
    generate.add_argument("--label-names", default=None, metavar="NAMES|DATASET", help=LABEL_NAMES_HELP)
    add_dataset_card_options(generate.add_argument_group("dataset card (OUTPUT/README.md)"))
    add_overwrite_option(generate, "dataset with other settings")
    generate.add_argument(
        "--trust-remote-code", action="store_true", help="allow custom model code from the Hub (off by default)"
    )
    generate.set_defaults(func=_run_generate)


def _add_mention_options(generate: argparse.ArgumentParser) -> None:
    """Where the mentions come from: ``--mentions``, ``--mention-shares``, ``--dictionary``, ``--unlabelled``,
    ``--corpus``."""
    generate.add_argument(
        "--mentions",
        action="append",
        default=None,
        metavar="|".join([*FILL_STRATEGIES, "generated", "TYPE=FILE", "DIR", "JSON"]),
        help="where mentions come from: generated (written by the generator; the default for a model trained with "
        "mention samples), random or weighted (the training bank), or your lists: TYPE=FILE, a folder of "
        "TYPE.txt, or a {type: [mentions]} JSON file",
    )
    generate.add_argument(
        "--mention-shares",
        default=None,
        metavar="PART=SHARE,...",
        help="mix mention sources with these shares, one drawn per slot: generated, lists (from --mentions) and "
        "bank, e.g. generated=0.7,lists=0.3; each sample's mention_sources column records them",
    )
    add_dictionary_option(
        generate,
        "the tags are filled with its names (as --mentions lists); hf-ecg filter --rule dictionary repairs the "
        "labels with it",
    )
    generate.add_argument(
        "--balance",
        action="append",
        default=None,
        metavar="TYPE=FILE[:GROUP=SHARE,...]",
        help="refill the finished set's TYPE mentions so that each group of your name<TAB>group file gets its share "
        "(equal unless given); the card shows each group's count beside gold's",
    )
    add_text_options(generate)
    generate.add_argument(
        "--shareable",
        action="store_true",
        help="a set that can leave where --unlabelled stays: no silver split, and the text-copy rule drops every "
        "sample sharing --max-shared-run tokens with the text (needs --gold)",
    )
    generate.add_argument(
        "--corpus",
        default=None,
        metavar="DATA",
        help="training corpus, for mentions and statistics when the model was saved without a mention bank",
    )


def _add_selection_group(generate: argparse.ArgumentParser) -> None:
    """Over-generation and the selection rules."""
    selection = generate.add_argument_group(
        "selection", "over-generate, then keep the samples the selection rules pass (see `hf-ecg filter`)"
    )
    selection.add_argument(
        "--over-generate",
        type=int,
        default=1,
        metavar="K",
        help="write K × NUM samples to OUTPUT-unfiltered, then keep the first NUM that pass the rules in OUTPUT "
        "(default 1: no selection unless --filter is given); needs --gold",
    )
    selection.add_argument(
        "--filter",
        dest="rules",
        action="append",
        choices=RULE_CHOICES,
        default=None,
        metavar="RULE",
        help="a selection rule (repeat for several, in order; default with --over-generate: "
        f"{' '.join(DEFAULT_RULES)})",
    )
    selection.add_argument(
        "--gold",
        default=None,
        metavar="DATA[:N]",
        help="the gold sentences the generator was trained on, to judge copies and train the taggers of the "
        "selection and of --silver-weights",
    )
    add_selection_options(selection, target_size=False)


def _shareable(args: argparse.Namespace) -> None:
    """``--shareable`` as the options it stands for: ``--no-silver`` and the ``text-copy`` rule first among the
    rules (the text never leaves in the set, nor a sample that copies it)."""
    if not args.unlabelled:
        raise CLIError("--shareable checks every sample against your text: give it with --unlabelled TEXT")
    if args.silver:
        raise CLIError("--shareable leaves your text out of the set: --silver would put it in")
    args.silver = False
    rules = list(args.rules or ())
    args.rules = rules if "text-copy" in rules else ["text-copy", *rules]


def _mentions(args: argparse.Namespace, inputs: dict[str, Any]) -> tuple[Any, Any]:
    """What ``generate_dataset`` takes as ``mentions`` from ``--mentions``, ``--mention-shares``, ``--dictionary``
    and ``--unlabelled`` (``None``: the model's default), and its ``silver`` sentences (the text labelled by the
    dictionary, unless ``--no-silver``: the same lookup the names come from); a dictionary is read, and refused,
    before anything is written. ``inputs`` keeps the text and gold read here (``text``, ``gold``) for the selection,
    which reads neither again."""
    if args.unlabelled and not args.dictionary:
        if not (args.sketches and args.shareable):
            raise CLIError("--unlabelled gives the names of --dictionary that your text holds: give --dictionary too")
        from ..data.sources import load_unlabelled_source

        # a shareable sketch set's tags hold the sketches' mentions: the text is only what no sample may copy
        inputs["text"] = load_unlabelled_source(args.unlabelled)
    if args.silver is not None and not args.unlabelled:
        flag = "--silver" if args.silver else "--no-silver"
        raise CLIError(f"{flag} would do nothing: the silver split is your --unlabelled text, labelled by --dictionary")
    dictionary = silver = None
    if args.dictionary:
        from ..data.sources import load_source, load_unlabelled_source

        if args.mentions and args.mention_shares is None:
            raise CLIError(
                "--dictionary fills the tags with its names: give --mention-shares to mix it with --mentions"
            )
        text = inputs["text"] = load_unlabelled_source(args.unlabelled) if args.unlabelled else ()
        gold = [load_source(spec) for spec in (args.gold, args.corpus) if spec]  # the sentences it learned from
        if args.gold:
            inputs["gold"] = gold[0]
        dictionary = read_dictionary(args.dictionary, labelled=gold)
        if args.unlabelled:
            dictionary, silver = labelled_text(args, dictionary, text, gold)
    if args.mention_shares is not None:
        return mention_mixture(args.mention_shares, args.mentions, lists=dictionary), silver
    if dictionary is not None:
        return dictionary, silver
    return (mention_source(args.mentions) if args.mentions else None), silver  # None: the model's default


def _decoding(args: argparse.Namespace) -> DecodingConfig:
    """The decoding options; a sampling setting given with ``--no-do-sample`` is refused (it would do nothing)."""
    decoding = DecodingConfig(**config_values(args, DECODING_OPTIONS))
    if not decoding.do_sample:  # greedy decoding draws nothing: a sampling setting would be recorded, unused
        default = DecodingConfig()
        unused = [
            f"--{name.replace('_', '-')}"
            for name in ("temperature", "top_k", "top_p")
            if getattr(decoding, name) != getattr(default, name)
        ]
        if unused:
            raise CLIError(f"--no-do-sample decodes greedily: {', '.join(unused)} would do nothing; leave it out")
    return decoding


def _selection(args: argparse.Namespace) -> Any:
    """The selection options, checked before any work: the ``SelectionConfig`` the run's selection uses (``None``:
    no selection), or :class:`CLIError` for a value, a missing option or one that would do nothing."""
    if args.shareable:
        _shareable(args)
    if args.over_generate < 1:
        raise CLIError(f"--over-generate must be >= 1, got {args.over_generate}")
    rules = args.rules or ()
    if args.max_shared_run is not None and "text-copy" not in rules:
        raise CLIError("--max-shared-run would do nothing: only the text-copy rule reads it (--shareable)")
    select = args.over_generate > 1 or args.rules is not None
    if select and args.gold is None:
        given = "--shareable needs" if args.shareable else "--over-generate and --filter need"
        raise CLIError(f"{given} --gold, the sentences the generator was trained on")
    if "text-copy" in rules and not args.unlabelled:
        raise CLIError("--filter text-copy needs --unlabelled TEXT, the text no sample may copy")
    return selection_config(args, target_size=args.num_samples) if select else None


def _run_generate(args: argparse.Namespace) -> int:
    from ..data.groups import Balance

    selection = _selection(args)
    entities = None
    if args.entities is not None:
        entities = [[t.strip() for t in spec.split(",") if t.strip()] for spec in args.entities]
    inputs: dict[str, Any] = {}  # the text and gold, read once
    mentions, silver = _mentions(args, inputs)
    if args.balance and len(args.balance) > 1:  # one type is balanced; a second would silently replace the first
        raise CLIError(f"--balance is given {len(args.balance)} times: one run balances one type's mentions")
    balance = Balance.read(args.balance[0]) if args.balance else None  # refused in one line, nothing written
    if args.corpus is not None and not Path(args.corpus).is_file():
        raise CLIError(f"no such file: {args.corpus}")
    decoding = _decoding(args)
    raw = Path(f"{Path(args.output)}-unfiltered") if selection else Path(args.output)
    if args.sketches is not None:
        output = write_from_sketches(args, raw, mentions, decoding, silver, _run_settings(args))
    else:
        refuse_sketch_options(args)
        output = _write_generated(args, raw, entities, mentions, decoding, silver, balance)
    from accelerate import PartialState

    from ..data.manifest import read_manifest
    from ..synthetic.generation_report import result_lines

    if not PartialState().is_main_process:
        return 0
    written = args.num_samples * args.over_generate
    print(
        f"wrote {written} samples to {output}/data/ (Parquet shards), {output}/ecg_generation.json (settings) "
        f"and {output}/README.md (dataset card)"
    )
    for line in result_lines(read_manifest(output)):
        print(line)
    if selection is None:
        print(f"load them with: datasets.load_dataset({str(output)!r}, split='train')")
        return 0
    _select(args, raw, selection, inputs)
    return 0


def _run_settings(args: argparse.Namespace) -> DatasetRunConfig:
    return DatasetRunConfig(
        samples_per_shard=args.samples_per_shard,
        overwrite=args.overwrite,
        trust_remote_code=args.trust_remote_code,
        label_names=label_names_option(args.label_names),
        card_fields=dataset_card_fields(args),
        resume_command=args.command_line,
        dtype=args.dtype,
    )


def _write_generated(
    args: argparse.Namespace,
    raw: Path,
    entities: Any,
    mentions: Any,
    decoding: DecodingConfig,
    silver: Any,
    balance: Any,
) -> Path:
    """ECG-QALM's samples (``generate_dataset``)."""
    from ..synthetic.generate import generate_dataset

    return generate_dataset(
        args.model,
        raw,
        args.num_samples * args.over_generate,
        sampler=args.sampler,
        entities=entities,
        mentions=mentions,
        corpus=args.corpus,
        seed=args.seed,
        decoding=decoding,
        silver=silver,
        balance=balance,
        run=_run_settings(args),
    )


def _select(args: argparse.Namespace, raw: Path, config: Any, inputs: dict[str, Any]) -> None:
    """Keep the samples of ``raw`` that the selection rules pass, in ``--output``; with the ``text-copy`` rule, mark
    ``raw`` unchecked first (push-dataset refuses it) and say that it still holds every sample before the check."""
    from ..data.manifest import mark_unchecked
    from ..data.sources import load_source
    from ..selection import filter_generated

    copy_checked = "text-copy" in config.rules  # the text no sample may copy (_selection: --unlabelled given)
    if copy_checked:
        mark_unchecked(raw)
    selected = filter_generated(
        raw,
        inputs["gold"] if "gold" in inputs else load_source(args.gold),
        args.output,
        config,
        overwrite=args.overwrite,
        card_fields=dataset_card_fields(args),
        unlabelled=inputs["text"] if copy_checked else (),  # _mentions read it
    )
    report_selection(Path(selected))
    if copy_checked:
        print(
            f"{raw} holds every sample before the text-copy check: keep it private (push-dataset refuses it), or "
            f"delete it; publish {selected}",
            file=sys.stderr,
        )
