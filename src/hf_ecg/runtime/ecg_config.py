"""``ecg_config.json``: what a trained ECG model needs beside its weights to generate."""

from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from .blocks import ANSWER_TOKEN, CONTEXT_TOKEN, ENDTEXT, QUESTION_TOKEN, tag_token
from .files import read_json
from .layout import Layout, layout_named

__all__ = ["ECG_CONFIG_NAME", "FORMAT_VERSION", "ECGConfig"]

ECG_CONFIG_NAME = "ecg_config.json"
#: The model card's fields beside the weights (written by training, read by the card and push-model).
CARD_DATA_NAME = "ecg_card.json"
FORMAT_VERSION = 1


@dataclass
class ECGConfig:
    """Entity types, the tokens that spell them, and how the model was trained.

    ``corpus_statistics`` (types, counts, entity-sequence distribution) holds no mention text;
    ``mention_bank`` does, so it is written only when asked for.
    """

    entity_types: list[str]
    base_model: str = ""
    loss_on: str = "answer"
    max_length: int = 256
    lora: bool = False
    tag_tokens: dict[str, str] = field(default_factory=dict)
    endtext_token: str = ENDTEXT
    segment_tokens: dict[str, str] = field(
        default_factory=lambda: {"context": CONTEXT_TOKEN, "question": QUESTION_TOKEN, "answer": ANSWER_TOKEN}
    )
    corpus_statistics: dict[str, Any] | None = None
    mention_bank: dict[str, Any] | None = None
    # the name of a registered prompt layout (hf_ecg.runtime.layout: qa, qa-plan, lm); prompt_layout is the object
    layout: str = "qa"
    # How the training corpus writes tokens, so generated text is split and judged alike (hf_ecg.runtime.words):
    word_exceptions: list[str] = field(default_factory=list)  # corpus tokens the punctuation split must keep whole
    sentence_endings: list[str] = field(default_factory=list)  # the tokens its sentences end with (empty: . ! ?)
    # Per kind of opening word, the share of its sentences that hold a second one (words.sentence_break_shares);
    # None: not recorded (models trained before it was).
    sentence_breaks: dict[str, float] | None = None
    # The share of its sentences that end without one of sentence_endings (words.unended_share): the decoder's
    # redraw_unended applies only where it is small. None: not recorded (the rule applies).
    unended_share: float | None = None
    # The training corpus's ClassLabel names in their order, when it was a ClassLabel dataset: generated
    # ner_tags use them, so generated data concatenates with it (None: sorted IOB2 names, generate.bio_labels).
    label_names: list[str] | None = None
    # The forms of each type's name that a model writes where it wants a tag it may not write (Dise, ase:
    # hf_ecg.runtime.tag_pieces), and the corpus's own words among them (disease), which are not pieces. None: a model
    # trained before they were recorded (the decoder then derives the forms from its tokenizer, no exceptions).
    tag_pieces: dict[str, list[str]] | None = None
    tag_piece_exceptions: list[str] | None = None
    # Models trained with mention samples (ECGTrainingArguments.mention_samples) write mentions in context: the
    # slot marker, and per type the longest training mention in words and overall in tokens (the writer's limits).
    mention_token: str | None = None
    mention_max_words: dict[str, int] | None = None
    mention_max_tokens: int | None = None
    # How the mention samples showed their slot (hf_ecg.runtime.blocks.MENTION_LAYOUTS); models trained before it
    # was recorded used "in-sentence".
    mention_layout: str = "in-sentence"
    tag_scheme: str = "IOB2"  # the training corpus's tag scheme: what `hf-ecg export --format conll` writes
    format_version: int = FORMAT_VERSION

    def __post_init__(self) -> None:
        self.entity_types = sorted(self.entity_types)
        if not self.tag_tokens:
            self.tag_tokens = {label: tag_token(label) for label in self.entity_types}

    @property
    def prompt_layout(self) -> Layout:
        """The :class:`~hf_ecg.runtime.layout.Layout` the model was trained with (its ``layout`` name)."""
        return layout_named(self.layout)

    def check_entity_types(self, requested: list[str] | tuple[str, ...]) -> None:
        """Raise ``ValueError`` naming the known types if ``requested`` has an unknown one."""
        unknown = sorted(set(requested) - set(self.entity_types))
        if unknown:
            raise ValueError(f"unknown entity type(s) {unknown}; this model knows: {', '.join(self.entity_types)}")

    def save(self, directory: str | os.PathLike) -> Path:
        """Write ``ecg_config.json`` into ``directory``."""
        path = Path(directory) / ECG_CONFIG_NAME
        path.write_text(json.dumps(asdict(self), indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
        return path

    @classmethod
    def from_corpus(
        cls,
        corpus: Any,
        tokenizer: Any,
        base_model: str,
        *,
        mention_samples: bool,
        save_mention_bank: bool,
        **settings: Any,
    ) -> ECGConfig:
        """The config of a model trained on ``corpus`` (a :class:`~hf_ecg.data.corpus.Corpus`) with ``tokenizer``:
        how the corpus writes words and ends sentences, the forms of the types' names a model may spell, its
        statistics, the mention writer's limits (``mention_samples``) and the bank (``save_mention_bank``);
        ``settings`` are the other fields (``loss_on``, ``max_length``, ``lora``, ``layout``, ``mention_layout``,
        ``label_names``, ``corpus_statistics``)."""
        from .blocks import MENTION_TOKEN
        from .mentions import MentionBank
        from .tag_pieces import tag_piece_exceptions, tag_piece_forms, vocabulary_words
        from .words import sentence_break_shares, sentence_endings, unended_share, word_exceptions

        tokens = [s.tokens for s in corpus]
        endings = sentence_endings(tokens)
        piece_forms = tag_piece_forms(tokenizer, corpus.entity_types)
        mentions: dict[str, Any] = {}
        if mention_samples:  # the longest training mention per type in words, and overall in tokens
            words: dict[str, int] = {}
            longest = 1
            for sentence in corpus:
                for span in sentence.spans:
                    mention = sentence.tokens[span.start : span.end]
                    words[span.label] = max(words.get(span.label, 0), len(mention))
                    longest = max(longest, len(tokenizer(" ".join(mention), add_special_tokens=False)["input_ids"]))
            mentions = {
                "mention_token": MENTION_TOKEN,
                "mention_max_words": dict(sorted(words.items())),
                "mention_max_tokens": longest,
            }
        return cls(
            entity_types=corpus.entity_types,
            base_model=str(base_model),
            word_exceptions=word_exceptions(tokens),
            sentence_endings=endings,
            sentence_breaks=sentence_break_shares(((s.tokens, {sp.start for sp in s.spans}) for s in corpus), endings),
            unended_share=unended_share(tokens, endings),
            tag_pieces=piece_forms,
            tag_piece_exceptions=tag_piece_exceptions(
                piece_forms, tokens, vocabulary_words(tokenizer.get_vocab()), [s.tags for s in corpus]
            ),
            tag_scheme=corpus.scheme,
            **mentions,
            mention_bank=MentionBank.from_sentences(corpus).to_dict() if save_mention_bank else None,
            **settings,
        )

    @classmethod
    def from_pretrained(cls, name_or_path: str | os.PathLike) -> ECGConfig:
        """Read ``ecg_config.json`` of a model folder or Hub repo (downloaded through the HF cache)."""
        from transformers.utils import cached_file

        try:
            path = cached_file(str(name_or_path), ECG_CONFIG_NAME, _raise_exceptions_for_missing_entries=False)
        except OSError:  # not a folder, and not a valid Hub id either (``outputs/model`` before it was trained)
            path = None
        if path is None and not Path(name_or_path).exists():
            raise ValueError(
                f"{name_or_path}: no such model folder, and no Hub model of that id with an {ECG_CONFIG_NAME} "
                "could be reached"
            )
        if path is None:
            raise ValueError(
                f"{name_or_path} has no {ECG_CONFIG_NAME}: it is not a model trained with hf_ecg (`hf-ecg train`)"
            )
        return cls.load(Path(path).parent)

    @classmethod
    def load(cls, directory: str | os.PathLike) -> ECGConfig:
        """Read ``ecg_config.json`` from a model folder."""
        path = Path(directory) / ECG_CONFIG_NAME
        if not path.is_file():
            raise FileNotFoundError(f"{path} not found: is {directory} a model trained with hf_ecg?")
        data = read_json(path, "an hf_ecg model config")
        if data.get("format_version", 0) > FORMAT_VERSION:
            raise ValueError(
                f"{path} has format version {data['format_version']}; this hf_ecg reads up to {FORMAT_VERSION}"
            )
        return cls(**data)
