"""The command line's mention and dictionary options: ``--dictionary`` read for a command
(:func:`read_dictionary`, :func:`add_dictionary_option`), ``--mentions`` as a mention source (:func:`mention_source`)
and ``--mention-shares`` as a mixture (:func:`mention_mixture`)."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ..runtime.mentions import FILL_STRATEGIES
from .common import CLIError

__all__ = ["add_dictionary_option", "mention_mixture", "mention_source", "read_dictionary"]


def read_dictionary(specs: Sequence[str], *, labelled: Any = (), types: Sequence[str] | None = None) -> Any:
    """``--dictionary`` read, without the names the user's gold sentences (``labelled``: corpora) hold more often as
    ordinary ``O`` words than as names (:meth:`~hf_ecg.labelling.dictionary.Dictionary.without_common_words`; said
    on stderr): a dictionary's ``lead`` or ``was`` would label ordinary words as names. (Its frequency rule over
    unlabelled text is left out: in domain text names are frequent words, and it lowered BC5CDR's lookup.) With
    ``types`` (the entity types of the data it labels), a dictionary type outside them is refused: its names would
    be scored or written under a type the data does not have
    (:meth:`~hf_ecg.labelling.dictionary.Dictionary.check_types`)."""
    from ..labelling.dictionary import Dictionary

    dictionary = Dictionary.read(specs)  # refused in one line, before anything is written
    function_words = dictionary.function_words()
    if function_words:
        shown = ", ".join(function_words[:8]) + (", ..." if len(function_words) > 8 else "")
        print(
            f"--dictionary: {len(function_words)} names are English function words, never looked up ({shown})",
            file=sys.stderr,
        )
    if types is not None:
        try:
            dictionary.check_types(types)
        except ValueError as error:
            raise CLIError(f"--dictionary {error} (name each list TYPE=FILE, or its file TYPE.txt)") from None
    pairs = [(sentence.tokens, sentence.tags) for corpus in labelled for sentence in corpus]
    if not pairs:
        return dictionary
    dictionary, stopped = dictionary.without_common_words(pairs)
    if stopped:
        shown = ", ".join(stopped[:8]) + (", ..." if len(stopped) > 8 else "")
        print(
            f"--dictionary: {len(stopped)} names your sentences use as ordinary words left out ({shown})",
            file=sys.stderr,
        )
    return dictionary


def add_dictionary_option(parser: Any, does: str) -> None:
    """``--dictionary`` (repeatable), the user's name dictionary in the forms
    :meth:`Dictionary.read <hf_ecg.labelling.dictionary.Dictionary.read>` takes; ``does`` says in a few words what
    the command does with it."""
    parser.add_argument(
        "--dictionary",
        action="append",
        default=None,
        metavar="TYPE=FILE|DIR|JSON",
        help=f"your name dictionary (repeatable): {does}",
    )


def mention_source(values: list[str]) -> Any:
    """The ``--mentions`` values as a mention source: a strategy name, ``generated``, a JSON file, or mention
    lists (``TYPE=FILE`` pairs or one folder, with at most one strategy for them)."""
    from ..runtime.mention_sources import GENERATED, MentionLists

    if GENERATED in values:
        if len(values) > 1:
            raise CLIError(f"--mentions {GENERATED} takes no other --mentions value")
        return GENERATED
    from ..data.specs import split_type_spec

    strategies = [v for v in values if v in FILL_STRATEGIES]
    pairs = [v for v in values if v not in FILL_STRATEGIES and "=" in v and not Path(v).exists()]
    paths = [v for v in values if v not in strategies and v not in pairs]
    if len(strategies) > 1:
        raise CLIError(f"--mentions takes one of {' or '.join(FILL_STRATEGIES)}, not {' and '.join(strategies)}")
    strategy = strategies[0] if strategies else FILL_STRATEGIES[0]
    folders = [v for v in paths if Path(v).is_dir()]
    files = [v for v in paths if v not in folders]
    if pairs or folders:
        if files or (pairs and folders) or len(folders) > 1:
            raise CLIError(
                "--mentions: give mention lists as TYPE=FILE pairs or as one folder of TYPE.txt, not both "
                "and not with a JSON file"
            )
        lists: dict[str, str] = {}
        for pair in pairs:
            try:
                label, file = split_type_spec(pair)
            except ValueError:
                raise CLIError(f"--mentions {pair!r}: expected TYPE=FILE") from None
            if label in lists:
                raise CLIError(f"--mentions: two lists for {label!r} ({lists[label]}, {file})")
            if Path(file).is_dir():
                raise CLIError(f"--mentions {pair}: {file} is a folder: give the file of the {label} mentions")
            if not Path(file).is_file():
                raise CLIError(f"--mentions {pair}: no such file: {file}")
            lists[label] = file
        return MentionLists(lists or folders[0], strategy)
    if files:
        if len(files) > 1 or strategies:
            raise CLIError("--mentions: one JSON file of {type: [mentions]}, alone")
        if not Path(files[0]).is_file():
            raise CLIError(
                f"--mentions must be {' or '.join(FILL_STRATEGIES)}, TYPE=FILE, a folder of TYPE.txt or a JSON "
                f"file; no such file: {files[0]}"
            )
        return files[0]
    return strategy


def mention_mixture(shares: str, values: list[str] | None, lists: Any = None) -> Any:
    """``--mention-shares PART=SHARE,...`` with the ``--mentions`` values (the lists of the ``lists`` share, and
    the strategy of the lists and the bank) as a :class:`~hf_ecg.runtime.mention_sources.MentionMixture`;
    ``lists``, when given, are the ``lists`` share's mentions instead (the user's name dictionary)."""
    from ..data.specs import parse_shares
    from ..runtime.mention_sources import GENERATED, MIXTURE_PARTS, MentionMixture, MentionSource, resolve_mentions

    try:
        parsed = parse_shares(shares, what="--mention-shares", known=MIXTURE_PARTS)
    except ValueError as error:
        raise CLIError(str(error)) from None
    values = [v for v in values or () if v != GENERATED]  # generated is a share here, not a --mentions value
    source = mention_source(values) if values else None
    strategy = FILL_STRATEGIES[0]
    resolved = None if source is None else resolve_mentions(source)
    if lists is not None and resolved is not None and resolved.kind is not MentionSource.BANK:
        raise CLIError(
            "--mention-shares: the lists share takes the --dictionary names: give --mentions only a strategy "
            f"({' or '.join(FILL_STRATEGIES)}) or leave it out"
        )
    if resolved is not None and resolved.kind is MentionSource.LISTS:
        lists, strategy = resolved.lists.files, resolved.strategy
    elif resolved is not None and resolved.kind is MentionSource.BANK:
        strategy = resolved.strategy
    elif resolved is not None:
        lists = source  # a JSON file of {type: [mentions]}
    if "lists" in parsed and lists is None:  # said in the CLI's words, not MentionMixture's
        raise CLIError("--mention-shares: a 'lists' share needs the lists: add --mentions TYPE=FILE or a folder")
    if lists is not None and "lists" not in parsed:
        raise CLIError("--mention-shares: --mentions gives lists but no share takes them: add lists=SHARE")
    try:
        return MentionMixture(parsed, lists=lists, strategy=strategy)
    except ValueError as error:
        raise CLIError(f"--mention-shares: {error}") from None
