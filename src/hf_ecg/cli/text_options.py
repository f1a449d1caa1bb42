"""``hf-ecg generate --unlabelled``: the user's text, what labels it (the dictionary, the short forms it defines)
and how surely (the gold taggers' weights on the silver split)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import Any

from .common import CLIError

__all__ = ["add_text_options", "labelled_text"]


def add_text_options(generate: argparse.ArgumentParser) -> None:
    """``--unlabelled``, ``--silver``, ``--abbreviations`` and ``--silver-weights``."""
    generate.add_argument(
        "--unlabelled",
        default=None,
        metavar="TEXT[:N]",
        help="your unlabelled text (a .txt file, one sentence a line, or a corpus whose labels are never read): "
        "with --dictionary, the tags are filled with the names it holds, as often as it uses them, and the text "
        "labelled by the dictionary is written as the silver split",
    )
    generate.add_argument(
        "--silver",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="with --dictionary and --unlabelled, write your text labelled by the dictionary as the folder's silver "
        "split, which evaluate ner --synthetic trains on too (default: on)",
    )
    generate.add_argument(
        "--abbreviations",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="with --dictionary and --unlabelled, also label the short forms your text defines after a dictionary "
        "name, as in 'muscular dystrophy (MD)', wherever its document uses them (default: on)",
    )
    generate.add_argument(
        "--silver-weights",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="with --gold, weight each silver word outside the names by how surely taggers trained on the gold "
        "sentences read it as O (default: on)",
    )


def labelled_text(args: argparse.Namespace, dictionary: Any, text: Sequence[Sequence[str]], gold: Sequence[Any]):
    """The names ``text`` holds (a :class:`~hf_ecg.labelling.dictionary_names.DictionaryNames`) and the silver split
    (``None`` with ``--no-silver``): the text labelled by ``dictionary`` and, unless ``--no-abbreviations``, the
    short forms it defines; with ``--gold`` and unless ``--no-silver-weights``, its words outside the names weighted
    by the gold taggers. Each step is said on stderr with its count; :class:`CLIError` when the text holds no name."""
    from ..data.sources import load_text_documents
    from ..labelling.abbreviations import o_words
    from ..labelling.dictionary_names import DictionaryNames

    names = DictionaryNames(
        dictionary,
        text,
        abbreviations=args.abbreviations,
        documents=load_text_documents(args.unlabelled) if args.abbreviations else None,
        common_words=o_words(gold),
    )
    try:
        names.names_as_mentions()  # the one lookup of the text: the names and the silver split
    except ValueError:
        raise CLIError(f"--unlabelled {args.unlabelled}: holds none of the --dictionary names") from None
    found = names.abbreviations_found
    if found is not None:
        print(
            f"--abbreviations: {found['labelled']:,} more names labelled, uses of the {found['definitions']:,} short "
            "forms your text defines after a dictionary name",
            file=sys.stderr,
        )
    # with gold, the lookup's recall on it: how a tagger's auto recipe trains on the silver
    silver = names.silver(gold) if args.silver is not False else None
    if silver is not None and args.gold and args.silver_weights:
        silver = _weighted(silver, gold[0])
    return names, silver


def _weighted(silver: Any, gold: Any) -> Any:
    """``silver`` with its words outside the names weighted by taggers trained on ``gold`` (one per
    :data:`~hf_ecg.labelling.ensemble.GOLD_TAGGER_SEEDS`; :func:`~hf_ecg.labelling.ensemble.o_weighted`)."""
    from ..labelling.ensemble import GOLD_TAGGER_SEEDS, o_weighted, train_gold_taggers
    from ..selection import SelectionConfig

    seeds = list(GOLD_TAGGER_SEEDS)
    config = SelectionConfig(tagger_seeds=seeds).ner_config()
    print(
        f"--silver-weights: training {len(seeds)} taggers on the {len(gold):,} --gold sentences to weigh the silver "
        "split's words outside the names",
        file=sys.stderr,
    )
    weighted = o_weighted(silver, train_gold_taggers(gold, config, seeds, progress_bar=True))
    fractional = sum(1 for s in weighted for w in s.weights if w < 1.0)
    print(f"--silver-weights: {fractional:,} silver words weigh under 1.0", file=sys.stderr)
    return weighted
