"""A :class:`datasets.GeneratorBasedBuilder` that turns NER corpora into Q&A block splits.

datasets 4+ runs no Hub loading scripts, so the builder is instantiated directly::

    from hf_ecg.data.builder import ECGBlocksBuilder
    builder = ECGBlocksBuilder(data_files={"train": "train.tsv", "validation": "dev.tsv"}, first_n=45)
    builder.download_and_prepare()
    blocks = builder.as_dataset()          # DatasetDict with train / validation

or from in-memory corpora: ``ECGBlocksBuilder(corpora={"train": dataset_or_corpus})``.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

import datasets
from datasets.builder import Key

from ..citation import CITATION
from ..runtime.blocks import RoundTripError, decompose, mention_samples, verify_roundtrip
from ..runtime.layout import layout_named
from .corpus import Corpus, load_corpus

if TYPE_CHECKING:
    from .statistics import CorpusStatistics

__all__ = ["BLOCK_FEATURES", "ECGBlocksBuilder", "ECGBlocksConfig", "load_split_corpus", "rows_code_hash"]

#: Columns of a Q&A block split.
BLOCK_FEATURES = datasets.Features(
    {
        "sentence_id": datasets.Value("int32"),
        "block_index": datasets.Value("int32"),
        "num_blocks": datasets.Value("int32"),
        "context": datasets.Value("string"),
        "question": datasets.Value("string"),
        "answer": datasets.Value("string"),
        "entities": datasets.List(datasets.Value("string")),
        "source": datasets.Value("string"),
    }
)


@dataclass
class ECGBlocksConfig(datasets.BuilderConfig):
    """How to read the corpora and which part of the training split to keep.

    ``first_n``/``fraction`` subset the ``train`` split only (the paper's 1% / 10% settings);
    other splits are kept whole. ``corpora`` holds in-memory inputs (``datasets.Dataset`` or
    :class:`~hf_ecg.data.corpus.Corpus`) per split, instead of ``data_files``.
    """

    format: str | None = None
    first_n: int | None = None
    fraction: float | None = None
    strict: bool = False
    scheme: str | None = None
    token_column: int = 0
    tag_column: int = -1
    encoding: str = "utf-8"  # of corpus files
    corpora: Mapping[str, Any] | None = None
    # "qa": one Q&A sample per block; "qa-plan": the same, each question also holding the tags still to come;
    # "lm": one sample per sentence (the ECG-LM ablation)
    layout: str = "qa"
    # Also samples that write the mentions of the sentence's slots (block_index -1): generated mentions.
    mention_samples: bool = False
    # How the mention samples show their slots (hf_ecg.runtime.blocks.MENTION_LAYOUTS); None: training's default,
    # "after-sentence" ("in-sentence" with layout "lm", which has no block row to continue).
    mention_layout: str | None = None

    def reader_kwargs(self, source: Any) -> dict[str, Any]:
        """Keyword arguments for :func:`~hf_ecg.data.corpus.load_corpus` on ``source``."""
        kwargs: dict[str, Any] = {"scheme": self.scheme, "strict": self.strict}
        if isinstance(source, Corpus):
            return {}
        if not isinstance(source, str):
            return kwargs
        fmt = self.format or ("jsonl" if source.lower().endswith((".jsonl", ".json")) else "conll")
        kwargs["encoding"] = self.encoding
        if fmt == "conll":
            kwargs.update(token_column=self.token_column, tag_column=self.tag_column)
        return {"format": fmt, **kwargs}


def load_split_corpus(config: ECGBlocksConfig, split: str, sources: list[Any]) -> Corpus:
    """Read and concatenate the sources of one split; subset it when it is ``train``."""
    corpora = [load_corpus(source, **config.reader_kwargs(source)) for source in sources]
    if not corpora:
        raise ValueError(f"split {split!r} has no data")
    corpus = corpora[0]
    if len(corpora) > 1:
        corpus = Corpus(
            [s for c in corpora for s in c.sentences],
            name="+".join(c.name for c in corpora),
            scheme=corpus.scheme,
            label_names=corpus.label_names,
        )
    if split == datasets.Split.TRAIN:
        corpus = corpus.subset(first_n=config.first_n, fraction=config.fraction)
    return corpus


def rows_code_hash() -> str:
    """A hash of the code that turns a corpus into rows (this module, the corpus reader, the tag scheme, block and
    layout functions): the builder's cache folder holds it (``datasets``' ``hash``), so an hf_ecg whose rows differ
    never reads the blocks another one cached for the same files and options (``datasets`` keys a builder's cache on
    its config alone otherwise)."""
    from ..runtime import blocks, layout, tags
    from . import corpus

    digest = hashlib.sha256()
    for source in (__file__, corpus.__file__, tags.__file__, blocks.__file__, layout.__file__):
        digest.update(Path(source).read_bytes())
    return digest.hexdigest()[:16]


class ECGBlocksBuilder(datasets.GeneratorBasedBuilder):
    """Q&A block splits of ECG-QALM (one row per block) from NER corpora.

    Keyword arguments beyond those of :class:`datasets.DatasetBuilder` set fields of
    :class:`ECGBlocksConfig` (``first_n``, ``fraction``, ``format``, ``strict``, ...).
    """

    BUILDER_CONFIG_CLASS = ECGBlocksConfig
    BUILDER_CONFIGS: ClassVar[list[datasets.BuilderConfig]] = [
        ECGBlocksConfig(name="default", version=datasets.Version("1.0.0"))
    ]
    DEFAULT_CONFIG_NAME = "default"
    config: ECGBlocksConfig

    def __init__(self, *args: Any, dataset_name: str | None = "ecg_blocks", **kwargs: Any) -> None:
        kwargs.setdefault("hash", rows_code_hash())
        super().__init__(*args, dataset_name=dataset_name, **kwargs)
        self._corpora: dict[str, Corpus] = {}  # each split is read once, whoever asks first

    def _info(self) -> datasets.DatasetInfo:
        return datasets.DatasetInfo(
            description="Contextual Q&A blocks for entity-controlled generation (ECG-QALM).",
            features=BLOCK_FEATURES,
            citation=CITATION,
        )

    def _split_sources(self) -> dict[str, list[Any]]:
        if self.config.corpora:
            if self.config.data_files:
                raise ValueError("give data_files or corpora, not both")
            return {split: [source] for split, source in self.config.corpora.items()}
        if not self.config.data_files:
            raise ValueError("ECGBlocksBuilder needs data_files={split: path} or corpora={split: dataset}")
        return {split: list(files) for split, files in self.config.data_files.items()}

    def corpus(self, split: str = "train") -> Corpus:
        """The corpus behind ``split`` exactly as the builder reads it (subset included)."""
        if split not in self._corpora:
            sources = self._split_sources()
            if split not in sources:
                raise ValueError(f"no split {split!r}; splits: {', '.join(sources)}")
            self._corpora[split] = load_split_corpus(self.config, split, sources[split])
        return self._corpora[split]

    def splits(self) -> list[str]:
        """The split names, in the order they were given."""
        return list(self._split_sources())

    def verify_roundtrips(self) -> dict[str, int]:
        """Check :func:`~hf_ecg.runtime.blocks.verify_roundtrip` (decompose → recompose gives the sentence back, and
        every other inverse) on every sentence of every split; :class:`~hf_ecg.runtime.blocks.RoundTripError` naming the
        first that fails (``file:line (split sentence i): what differs``). Returns the sentences checked per split.
        """
        checked = {}
        for split in self.splits():
            corpus = self.corpus(split)
            for index, sentence in enumerate(corpus):
                try:
                    verify_roundtrip(sentence.tokens, sentence.spans, reserved_types=corpus.entity_types)
                except ValueError as err:
                    raise RoundTripError(f"{sentence.source} ({split} sentence {index}): {err}") from None
            checked[split] = len(corpus)
        return checked

    def save_blocks(
        self, output_dir: str | os.PathLike, *, overwrite: bool = False
    ) -> tuple[datasets.DatasetDict, CorpusStatistics]:
        """Build the splits, ``save_to_disk`` them in ``output_dir`` (``datasets.load_from_disk`` reads it) and write
        the train split's statistics beside them as ``corpus_stats.json``. Returns both.

        ``output_dir`` follows :func:`hf_ecg.data.outputs.prepare_output`: new or empty, or blocks hf_ecg wrote
        when ``overwrite``; never a folder with other files, nor one inside an input."""
        from .outputs import BLOCKS, prepare_output
        from .statistics import CorpusStatistics

        self.download_and_prepare()
        dataset = self.as_dataset()
        output_dir = prepare_output(output_dir, BLOCKS, overwrite=overwrite, inputs=self.input_paths())
        dataset.save_to_disk(str(output_dir))
        stats = CorpusStatistics.from_corpus(self.corpus("train"))
        stats.save(output_dir / "corpus_stats.json")
        return dataset, stats

    def input_paths(self) -> list[Path]:
        """The files the builder reads (its ``data_files``), for the output rule."""
        return [Path(file) for files in (self.config.data_files or {}).values() for file in files]

    def _split_generators(self, dl_manager: datasets.DownloadManager) -> list[datasets.SplitGenerator]:
        # Read (and so validate) every split here: errors raised during generation reach the
        # user wrapped in a DatasetGenerationError, while these keep their file:line message.
        return [
            datasets.SplitGenerator(name=split, gen_kwargs={"corpus": self.corpus(split)})
            for split in self._split_sources()
        ]

    def _generate_examples(self, corpus: Corpus) -> Iterator[tuple[Key, dict[str, Any]]]:
        reserved = corpus.entity_types
        layout = layout_named(self.config.layout)
        mention_layout = self.config.mention_layout or layout.mention_layout
        row = 0
        for sentence_id, sentence in enumerate(corpus):
            try:
                template, _ = decompose(sentence.tokens, sentence.spans, reserved_types=reserved)
            except ValueError as err:
                raise ValueError(f"{sentence.source}: {err}") from None
            samples = layout.samples(template)
            blocks = len(samples)
            if self.config.mention_samples:
                samples += mention_samples(sentence.tokens, sentence.spans, layout=mention_layout)
            for sample in samples:
                yield (
                    Key(0, row),
                    {
                        "sentence_id": sentence_id,
                        "block_index": sample.block_index,
                        "num_blocks": blocks,
                        "context": sample.context,
                        "question": sample.question,
                        "answer": sample.answer,
                        "entities": list(sentence.entity_types),
                        "source": sentence.source,
                    },
                )
                row += 1
