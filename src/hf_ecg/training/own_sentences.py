"""The generator's own sentences as more training data: after a first training, the generator writes sentences, the
whole ones are kept, and it is trained again on the gold sentences and them.

On small corpora a generator converged on its gold sentences still has many of its blocks drawn again (38% on
JNLPBA's first 186 sentences, 53% on its first 50); more gold sentences are what lowers that (24% with 744). Its own
whole sentences serve as more sentences: trained again on JNLPBA 186 and 372 of its own, 18-22% were drawn again,
with the same downstream tagger F1 (docs/results.md). Only the sentence templates are taken from them: the mention
samples, the held-out split, the decoding rules' statistics and the mention bank stay the gold sentences', so
the writer learns mentions from real ones, and a run-on the first generator wrote cannot teach the rules that
run-ons are how the corpus writes.
"""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import datasets

from ..data.corpus import Corpus, Sentence
from ..data.outputs import OWN_SENTENCES_DIR

__all__ = [
    "OWN_SENTENCES_MAX_CORPUS",
    "OWN_SENTENCES_MIN",
    "OWN_SENTENCES_PER_GOLD",
    "OWN_SENTENCE_RULES",
    "OwnSentences",
    "own_sentence_blocks",
    "own_sentence_count",
    "own_sentences_written",
    "write_own_sentences",
]

logger = logging.getLogger(__name__)

#: With the default (``own_sentences`` unset), corpora of this many training sentences or more train once: JNLPBA's
#: first 744 sentences alone had 24% of the drawn tokens drawn again.
OWN_SENTENCES_MAX_CORPUS = 500
#: The default number of own sentences: this many per training sentence, and at least :data:`OWN_SENTENCES_MIN`
#: (the measured runs: 372 for JNLPBA 186, 200 for JNLPBA 50).
OWN_SENTENCES_PER_GOLD = 2
OWN_SENTENCES_MIN = 200
#: The selection rules a sentence must pass (:func:`~hf_ecg.synthetic.selection.select_samples`): not a gold
#: sentence or an earlier one, no tag spelled as text, a whole sentence (complete, nothing forced or cut, no
#: repetition, no second sentence).
OWN_SENTENCE_RULES = ("duplicate", "tag-leak", "whole")


def own_sentence_count(num_sentences: int, requested: int | None) -> int:
    """How many sentences the first generator writes: ``requested`` when given (0: train once), else
    :data:`OWN_SENTENCES_PER_GOLD` per training sentence and at least :data:`OWN_SENTENCES_MIN`, for corpora of
    fewer than :data:`OWN_SENTENCES_MAX_CORPUS` sentences (0 for larger ones)."""
    if requested is not None:
        return requested
    if num_sentences >= OWN_SENTENCES_MAX_CORPUS:
        return 0
    return max(OWN_SENTENCES_PER_GOLD * num_sentences, OWN_SENTENCES_MIN)


@dataclass
class OwnSentences:
    """The first generator's sentences that passed :data:`OWN_SENTENCE_RULES`, and what the card records of them."""

    corpus: Corpus
    written: int
    dropped: dict[str, int]
    folder: str
    redrawn_share: float | None = None

    def record(self) -> dict[str, Any]:
        """For the model card (:attr:`~hf_ecg.hub.model_card.ECGModelCardData.own_sentences`)."""
        return {
            "written": self.written,
            "kept": len(self.corpus),
            "dropped": self.dropped,
            "rules": list(OWN_SENTENCE_RULES),
            "first_redrawn_share": self.redrawn_share,
            "folder": self.folder,
        }


def write_own_sentences(
    model_dir: str | os.PathLike,
    gold: Corpus,
    num_samples: int,
    *,
    seed: int,
    progress_bar: bool = True,
    trust_remote_code: bool = False,
) -> OwnSentences:
    """Have the generator in ``model_dir`` write ``num_samples`` sentences into ``model_dir/own-sentences`` (the
    gold entity sequences, bank mentions: only the templates are used) and keep those that pass
    :data:`OWN_SENTENCE_RULES` against ``gold``; a run stopped midway is resumed by the same call."""
    from transformers import AutoTokenizer

    from ..runtime.ecg_config import ECGConfig
    from ..runtime.tag_pieces import vocabulary_words
    from ..synthetic.generate import generate_dataset, read_generated
    from ..synthetic.selection import SelectionConfig, select_samples

    folder = Path(model_dir) / OWN_SENTENCES_DIR
    if not own_sentences_written(model_dir):  # once written, the model in model_dir may be the second one
        # Its own warning that the generator looks undertrained would advise training longer in the middle of the
        # training that does what helps.
        generation_log = logging.getLogger("hf_ecg.synthetic.generate")
        level = generation_log.level
        generation_log.setLevel(logging.ERROR)
        try:
            generate_dataset(
                model_dir,
                folder,
                num_samples,
                mentions="random",
                seed=seed,
                progress_bar=progress_bar,
                trust_remote_code=trust_remote_code,
                resume_command="the same training with --resume",
            )
        finally:
            generation_log.setLevel(level)
    manifest, table = read_generated(folder)
    rows = datasets.Dataset(table)
    names = rows.features["ner_tags"].feature.names
    tags = [[names[k] for k in row] for row in rows["ner_tags"]]
    flags = {column: rows[column] for column in ("complete", "forced_tags", "cut_blocks", "tag_pieces")}
    selection = select_samples(
        rows["tokens"],
        tags,
        gold,
        SelectionConfig(rules=list(OWN_SENTENCE_RULES)),
        flags=flags,
        tag_pieces=ECGConfig.load(model_dir).tag_pieces,
        vocabulary=vocabulary_words(AutoTokenizer.from_pretrained(str(model_dir)).get_vocab()),
    )
    # A block that broke a decoding rule and was kept because the redraw budget was spent is no model either.
    refused = rows["refused_redraws"]
    kept = [i for i in selection.kept if not refused[i]]
    dropped = {**selection.dropped, **({"refused-redraw": len(selection.kept) - len(kept)} if refused else {})}
    sentences = [Sentence.from_tags(rows[i]["tokens"], tags[i], source=f"{folder.name}[{rows[i]['id']}]") for i in kept]
    cost = manifest.generation_cost or {}
    logger.info("kept %d of the %d sentences the first generator wrote (dropped: %s)", len(kept), len(rows), dropped)
    return OwnSentences(
        corpus=Corpus(sentences, name=f"{gold.name} {OWN_SENTENCES_DIR}", scheme="IOB2"),
        written=len(rows),
        dropped={rule: count for rule, count in dropped.items() if count},
        folder=OWN_SENTENCES_DIR,
        redrawn_share=cost.get("redrawn_share"),
    )


def own_sentences_written(model_dir: str | os.PathLike) -> bool:
    """Whether ``model_dir`` holds the first generator's sentences, all written (``data/`` appears when the last
    shard is): the second training begins right after."""
    return (Path(model_dir) / OWN_SENTENCES_DIR / "data").is_dir()


def own_sentence_blocks(own: Corpus, layout: str, first_sentence_id: int) -> datasets.Dataset:
    """The Q&A blocks of ``own``'s templates (no mention samples), their ``sentence_id`` from ``first_sentence_id``
    on, so that they follow the gold sentences' without sharing an id."""
    from ..data.builder import ECGBlocksBuilder

    builder = ECGBlocksBuilder(corpora={"train": own}, layout=layout, mention_samples=False)
    builder.download_and_prepare()
    blocks = builder.as_dataset()["train"]
    return blocks.map(
        lambda ids: {"sentence_id": [i + first_sentence_id for i in ids]},
        input_columns="sentence_id",
        batched=True,
        desc="numbering own sentences",
    )
