"""Filling: a written template's tags become mentions, and the sample gets its BIO labels.

Mention sources: ``random`` (uniform over the distinct mentions of the training mention bank, the
paper), ``weighted`` (by their frequency), a user dict ``{type: [mention, ...]}`` (or a JSON file
of one), so that no real mention of a private corpus needs to leave it, or the user's plain-text
mention lists, one file per type (:class:`MentionLists`: new mentions, tokenized the corpus's way), or
``generated``: the generator writes each slot's mention in its sentence
(:class:`~hf_ecg.runtime.mention_writer.MentionWriter`; a model trained with mention samples), the bank
filling a slot whose every try was rejected.
"""

from __future__ import annotations

import json
import os
import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Union

from .blocks import recompose
from .decoding import DecodedTemplate
from .ecg_config import ECGConfig
from .mentions import FILL_STRATEGIES, MentionBank, mention_list_files
from .tags import spans_to_tags, text_spans
from .words import WordSplitter

__all__ = ["GENERATED", "MentionFiller", "MentionLists", "MentionSource", "default_mentions", "training_bank"]

#: The mention source that has the generator write each slot's mention in context.
GENERATED = "generated"


def default_mentions(ecg_config: ECGConfig) -> str:
    """The mention source when none is given: ``generated`` for a model trained with mention samples (new
    mentions in context, measured better than the bank in docs/results.md), else ``random`` from the bank
    (the paper)."""
    return GENERATED if ecg_config.mention_token else "random"


@dataclass(frozen=True)
class MentionLists:
    """The user's mention lists, one plain-text file per entity type (a gazetteer: drug names, gene symbols,
    MeSH terms), one mention per line, optionally a tab and a count
    (:func:`~hf_ecg.runtime.mentions.read_mention_list`).

    ``files`` is ``{type: file}`` or a folder of ``TYPE.txt`` files. Each mention is split into tokens the way
    the generator's training corpus writes them. Types without a list are filled from the mention bank (a
    mixture); ``strategy`` draws from both: ``random`` uniformly over distinct mentions, ``weighted`` by the
    counts (a line without one counts 1).
    """

    files: Mapping[str, str | os.PathLike] | str | os.PathLike
    strategy: str = "random"

    def __post_init__(self) -> None:
        if self.strategy not in FILL_STRATEGIES:
            raise ValueError(f"unknown fill strategy {self.strategy!r}; known: {', '.join(FILL_STRATEGIES)}")

    @classmethod
    def from_source(cls, source: Any) -> MentionLists | None:
        """``source`` as mention lists when it is some: a :class:`MentionLists`, a ``{type: file}`` mapping (its
        values paths, not lists of mentions) or a folder; else ``None``."""
        if isinstance(source, MentionLists):
            return source
        if isinstance(source, Mapping) and source and all(isinstance(v, str | os.PathLike) for v in source.values()):
            return cls(dict(source))
        if isinstance(source, str | os.PathLike) and Path(source).is_dir():
            return cls(source)
        return None

    def list_files(self) -> dict[str, Path]:
        """``{type: file}``; ``ValueError`` for a folder without lists or a list that is not a file."""
        return mention_list_files(self.files)


#: ``"random"``, ``"weighted"``, a ``{type: [mentions]}`` dict, a path to a JSON file of one, a bank, or the
#: user's mention lists (:class:`MentionLists`, a ``{type: file}`` dict or a folder of ``TYPE.txt``).
MentionSource = Union[str, os.PathLike, Mapping[str, Sequence[str]], MentionBank, MentionLists]  # noqa: UP007 (a runtime alias)


def training_bank(ecg_config: ECGConfig, corpus_bank: MentionBank | None = None) -> MentionBank | None:
    """The generator's training mentions: ``corpus_bank`` (the training corpus, given at generation) when
    given, else the bank saved in the model's ``ecg_config.json``, else ``None``."""
    if corpus_bank is not None:
        return corpus_bank
    return MentionBank.from_dict(ecg_config.mention_bank) if ecg_config.mention_bank else None


class MentionFiller:
    """Fill templates from a :class:`~hf_ecg.MentionBank` with a strategy (``random`` or ``weighted``)."""

    def __init__(self, bank: MentionBank, strategy: str = "random") -> None:
        if strategy not in FILL_STRATEGIES:
            raise ValueError(f"unknown fill strategy {strategy!r}; known: {', '.join(FILL_STRATEGIES)}")
        self.bank = bank
        self.strategy = strategy

    @classmethod
    def from_source(
        cls, source: MentionSource | None, ecg_config: ECGConfig, *, corpus_bank: MentionBank | None = None
    ) -> MentionFiller:
        """Resolve a mention source for a model.

        ``None`` is the model's default (:func:`default_mentions`). ``random``/``weighted`` draw from
        ``corpus_bank`` when given (the training corpus), else from the bank saved in the model's
        ``ecg_config.json``; so does ``generated`` for the slots the writer leaves to the bank. Mention lists
        (:class:`MentionLists`) fill their types, that bank the others; a list for a type the model does not
        write is refused, naming the types it knows.
        """
        if source is None:
            source = default_mentions(ecg_config)
        if isinstance(source, MentionBank):
            return cls(source)
        lists = MentionLists.from_source(source)
        if lists is not None:
            files = lists.list_files()
            unknown = sorted(set(files) - set(ecg_config.entity_types))
            if unknown:
                raise ValueError(
                    f"mention list(s) for type(s) {unknown} this model does not write; its types: "
                    f"{', '.join(ecg_config.entity_types)}"
                )
            listed = MentionBank.from_list_files(files, WordSplitter(ecg_config.word_exceptions or ()))
            bank = training_bank(ecg_config, corpus_bank) or MentionBank()
            return cls(bank.with_types_of(listed), lists.strategy)
        if isinstance(source, Mapping):
            return cls(MentionBank.from_lists(source))
        if str(source) in (*FILL_STRATEGIES, GENERATED):
            if source == GENERATED and not ecg_config.mention_token:
                raise ValueError(
                    "mentions='generated' needs a model trained to write mentions: train it with "
                    "mention_samples=True (the `hf-ecg train` default)"
                )
            bank = training_bank(ecg_config, corpus_bank)
            if bank is not None:
                return cls(bank, "random" if source == GENERATED else str(source))
            raise ValueError(
                "this model has no mention bank (it was trained with save_mention_bank=False): give your own "
                "mentions as {type: [mentions]} or a JSON file of them, or the training corpus "
                "(`hf-ecg generate --corpus TRAIN_FILE`)"
            )
        path = Path(source)
        if not path.is_file():
            raise ValueError(
                f"mentions must be one of {(*FILL_STRATEGIES, GENERATED)}, a {{type: [mentions]}} dict, a JSON file "
                f"of one, or mention lists ({{type: file}}, a folder of TYPE.txt); {str(source)!r} is none of these"
            )
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except json.JSONDecodeError as error:
            raise ValueError(f"{path}:{error.lineno}: not valid JSON: {error.msg}") from None
        if not isinstance(data, dict) or not all(isinstance(v, list) for v in data.values()):
            raise ValueError(f"{path}: expected a JSON object {{type: [mention, ...]}}")
        return cls(MentionBank.from_lists(data))

    def check_types(self, entity_types: Sequence[str]) -> None:
        """Raise ``ValueError`` if a requested type has no mention to fill it with."""
        missing = sorted(set(entity_types) - set(self.bank.types))
        if missing:
            raise ValueError(
                f"no mentions of type(s) {missing} to fill tags with; the mentions cover: "
                f"{', '.join(self.bank.types) or 'nothing'}"
            )

    def fill(
        self, decoded: DecodedTemplate, rng: random.Random, written: Sequence[Sequence[str] | None] | None = None
    ) -> dict[str, Any]:
        """A labelled sample: ``tokens``, ``ner_tags`` (IOB2 strings), ``text``, ``spans`` (character offsets
        into ``text`` and types), ``template``, ``entities``, and the decoder's flags ``complete``,
        ``forced_tags``, ``cut_blocks`` and ``tag_pieces``, and its cost, ``model_tokens`` (the generator's
        tokens of the kept blocks), ``redrawn_tokens`` (of the blocks drawn again) and ``refused_redraws`` (blocks
        kept as they were because the redraw budget was spent).

        ``written``: the mentions the generator wrote for the slots (:class:`~hf_ecg.runtime.mention_writer.
        MentionWriter`); a ``None`` slot is drawn from the bank."""
        written = written if written is not None else [None] * len(decoded.entities)
        mentions = [
            tuple(mention) if mention is not None else self.bank.sample(label, rng, self.strategy)
            for label, mention in zip(decoded.entities, written, strict=True)
        ]
        tokens, spans = recompose(decoded.template, mentions)
        return {
            "tokens": tokens,
            "ner_tags": spans_to_tags(spans, len(tokens), "IOB2"),
            "text": " ".join(tokens),
            "spans": text_spans(tokens, spans),
            "template": str(decoded.template),
            "entities": list(decoded.entities),
            "forced_tags": decoded.forced_tags,
            "cut_blocks": decoded.cut_blocks,
            "complete": decoded.complete,
            "tag_pieces": decoded.tag_pieces,
            "model_tokens": decoded.num_tokens,
            "redrawn_tokens": decoded.discarded_tokens,
            "refused_redraws": decoded.refused_redraws,
        }
