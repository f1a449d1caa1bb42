"""The mention-replacement family (Dai & Adel, 2020), a :class:`~hf_ecg.synthetic.sample_source.SampleSource` with no
model: a gold sentence whose mentions are swapped, each with probability ``probability``, for another gold mention of
the same type (:func:`mention_replacement`). Templates and labels are the gold ones by construction; only the mention
strings change. Given the user's mention lists (:func:`replacement_bank`), the swapped-in mentions come from them:
the fair baseline for ECG-QALM data filled from the same lists. :func:`write_mention_replacement` writes a folder
with the one writer, in the schema of every generated set less the decoder's columns.
"""

from __future__ import annotations

import os
import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..data.corpus import Corpus
from ..data.dataset_format import GENERATION_COLUMNS, dataset_features, ner_label_names
from ..data.groups import Balance
from ..data.manifest import GenerationManifest
from ..data.silver import silver_record
from ..runtime.blocks import decompose, recompose
from ..runtime.decoding_config import ShardSeeds
from ..runtime.mention_writer import WrittenMentions
from ..runtime.mentions import MentionBank, mention_list_files
from ..runtime.tags import spans_to_tags, text_spans
from ..runtime.words import WordSplitter, word_exceptions
from .balance import balance_setting
from .run_config import DatasetRunConfig
from .sample_source import Progress
from .writer import prepare_folder, write_samples

__all__ = [
    "MENTION_REPLACEMENT",
    "MentionReplacementSource",
    "mention_replacement",
    "replacement_bank",
    "write_mention_replacement",
]

#: The family's name in a manifest's ``method``.
MENTION_REPLACEMENT = "mention-replacement"
_MAX_REDRAWS = 20  # draws before accepting the original mention (a type with one distinct mention)


def mention_replacement(
    corpus: Corpus,
    num_samples: int | None = None,
    *,
    seed: int = 0,
    probability: float = 1.0,
    bank: MentionBank | None = None,
) -> list[dict[str, Any]]:
    """``num_samples`` rows (default: one per gold sentence), cycling over the gold sentences in order.

    Each mention is replaced with probability ``probability`` by a different mention of its type,
    drawn uniformly from the distinct mentions in ``bank`` (default: the corpus's own).
    """
    if not 0.0 <= probability <= 1.0:
        raise ValueError(f"probability must be in [0, 1], got {probability}")
    if not len(corpus):
        raise ValueError(f"{corpus.name} has no sentences")
    num_samples = len(corpus) if num_samples is None else num_samples
    if num_samples < 1:
        raise ValueError(f"num_samples must be >= 1, got {num_samples}")
    bank = bank or MentionBank.from_sentences(corpus)
    rng = random.Random(seed)
    rows = []
    for i in range(num_samples):
        sentence = corpus[i % len(corpus)]
        template, mentions = decompose(sentence.tokens, sentence.spans)
        swapped = []
        for mention, label in zip(mentions, template.entity_types, strict=True):
            new = mention
            if rng.random() < probability:
                for _ in range(_MAX_REDRAWS):
                    new = bank.sample(label, rng)
                    if new != mention:
                        break
            swapped.append(new)
        tokens, spans = recompose(template, swapped)
        rows.append(
            {
                "id": i,
                "tokens": tokens,
                "ner_tags": spans_to_tags(spans, len(tokens)),
                "entities": list(template.entity_types),
                "template": str(template),
                "text": " ".join(tokens),
                "spans": text_spans(tokens, spans),
            }
        )
    return rows


def replacement_bank(corpus: Corpus, lists: Any = None) -> MentionBank:
    """The mentions :func:`mention_replacement` draws from: the corpus's own, with the types of the user's
    mention ``lists`` (``{type: file}`` or a folder of ``TYPE.txt``: :func:`~hf_ecg.runtime.mentions.read_mention_list`)
    taken from the lists instead, each mention split into tokens the way the corpus writes them."""
    bank = MentionBank.from_sentences(corpus)
    if lists is None:
        return bank
    files = mention_list_files(lists)
    unknown = sorted(set(files) - set(corpus.entity_types))
    if unknown:
        raise ValueError(
            f"mention list(s) for type(s) {unknown} that {corpus.name} does not have; its types: "
            f"{', '.join(corpus.entity_types)}"
        )
    split = WordSplitter(word_exceptions(s.tokens for s in corpus))
    return bank.with_types_of(MentionBank.from_list_files(files, split))


@dataclass
class MentionReplacementSource:
    """Mention replacement as the writer drives it: the rows of :func:`mention_replacement` over ``corpus`` with
    ``seed``, drawn once for the whole run (one stream, so a set is the same however it is sharded) and served
    shard by shard. ``settings``: what the manifest records of the run beyond the counts (the data, the lists)."""

    corpus: Corpus
    num_samples: int
    seed: int = 0
    probability: float = 1.0
    bank: MentionBank | None = None
    settings: Mapping[str, Any] = field(default_factory=dict)
    method: str = MENTION_REPLACEMENT
    model: str | None = None  # no model
    training_bank: MentionBank | None = None  # nothing learned: no novelty figure
    redraw_budget: float | None = None  # no decoder
    writes_mentions: bool = False
    _rows: list[dict[str, Any]] | None = field(default=None, repr=False, compare=False)

    def __post_init__(self) -> None:  # refused before a folder is touched
        if not 0.0 <= self.probability <= 1.0:
            raise ValueError(f"probability must be in [0, 1], got {self.probability}")
        if not len(self.corpus):
            raise ValueError(f"{self.corpus.name} has no sentences")

    @property
    def entity_types(self) -> list[str]:
        return list(self.corpus.entity_types)

    def manifest(
        self, num_samples: int, run: DatasetRunConfig, seed: int, silver: Corpus | None, balance: Balance | None
    ) -> GenerationManifest:
        """The run's settings: the method, the types and labels, the count, and the settings given."""
        if (num_samples, seed) != (self.num_samples, self.seed):
            raise ValueError(
                f"the source draws {self.num_samples} samples with seed {self.seed}, not {num_samples}/{seed}"
            )
        return GenerationManifest(
            method=self.method,
            entity_types=sorted(self.entity_types),
            label_names=ner_label_names(self.entity_types, run.label_names),
            num_samples=num_samples,
            samples_per_shard=run.samples_per_shard,
            settings={
                "method": self.method,
                **self.settings,
                "num_samples": num_samples,
                "probability": self.probability,
                "seed": seed,
            },
            silver=None if silver is None else silver_record(silver, silver.name),
            balance=None if balance is None else balance_setting(balance, self.entity_types),
        )

    def features(self, label_names: Sequence[str]) -> Any:
        """Every column but the decoder's statistics and the mentions' origins: no decoder wrote these rows."""
        features = dataset_features(self.entity_types, label_names)
        for column in GENERATION_COLUMNS:
            del features[column]
        return features

    def shards_written_together(self, samples_per_shard: int) -> int:
        return 1

    def shard_rows(
        self, shards: Sequence[tuple[range, ShardSeeds]], progress: Progress
    ) -> tuple[list[list[dict[str, Any]]], WrittenMentions | None]:
        """The rows of each shard's ids, from the run's one stream."""
        if self._rows is None:
            self._rows = mention_replacement(
                self.corpus, self.num_samples, seed=self.seed, probability=self.probability, bank=self.bank
            )
        rows = []
        for ids, _ in shards:
            rows.append([{k: v for k, v in self._rows[i].items() if k != "id"} for i in ids])
            progress(len(ids), None)
        return rows, None


def write_mention_replacement(
    source: MentionReplacementSource,
    output_dir: str | os.PathLike,
    *,
    run: DatasetRunConfig | None = None,
    inputs: Sequence[str | os.PathLike] = (),
) -> Path:
    """Write ``source``'s rows into ``output_dir`` with the one writer (:func:`~hf_ecg.synthetic.writer.write_samples`:
    shards, manifest with ``method: mention-replacement`` and the settings, card); ``datasets.load_dataset(output_dir)``
    reads it. ``output_dir`` must be new, empty or a dataset hf_ecg wrote (the same settings resume it; other ones
    need ``run.overwrite``), and not inside one of ``inputs``."""
    run = run or DatasetRunConfig(progress_bar=False)
    shards = prepare_folder(Path(output_dir), source.num_samples, run, inputs=inputs)
    return write_samples(source, shards, seed=source.seed, run=run)
