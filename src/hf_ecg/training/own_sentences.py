"""The generator's own sentences as more training data: after a first training, the generator writes sentences, the
whole ones are kept, and it is trained again on the gold sentences and them (:func:`train_on_own_sentences`).

A generator converged on a small corpus draws many of its blocks again; its own whole sentences serve as more
sentences (the measurements: docs/ablations.md). Only the sentence templates are taken from them: the mention
samples, the held-out split, the decoding rules' statistics and the mention bank stay the gold sentences', so
the writer learns mentions from real ones, and a run-on the first generator wrote cannot teach the rules that
run-ons are how the corpus writes.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import datasets

from ..data.corpus import Corpus, Sentence
from ..data.outputs import OWN_SENTENCES_DIR
from ..runtime.words import DEFAULT_SENTENCE_ENDINGS
from ..synthetic.run_config import DatasetRunConfig

if TYPE_CHECKING:
    from .trainer import ECGTrainer
    from .training_args import ECGTrainingArguments

__all__ = [
    "OWN_SENTENCE_CHECKS",
    "OWN_SENTENCE_RULES",
    "OwnSentences",
    "bare_space_words",
    "failed_check",
    "full_stops",
    "own_sentences_written",
    "template_blocks",
    "train_on_own_sentences",
    "with_templates",
    "write_own_sentences",
]

logger = logging.getLogger(__name__)

#: The selection rules a sentence must pass (:func:`~hf_ecg.selection.select_samples`): not a gold
#: sentence or an earlier one, no tag spelled as text, a whole sentence (complete, nothing forced or cut, no
#: repetition, no second sentence of a kind rare in gold); then :data:`OWN_SENTENCE_CHECKS`.
OWN_SENTENCE_RULES = ("duplicate", "tag-leak", "whole")
#: And checks of :func:`write_own_sentences`'s own (:func:`failed_check`): no redraw refused, no sentence ending
#: before the last word, no word spelt from a bare space the way no gold word is.
OWN_SENTENCE_CHECKS = ("refused-redraw", "second-sentence", "odd-word")


@dataclass
class OwnSentences:
    """The first generator's sentences that passed :data:`OWN_SENTENCE_RULES` and :data:`OWN_SENTENCE_CHECKS`, and
    what the card records of them."""

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
            "rules": [*OWN_SENTENCE_RULES, *OWN_SENTENCE_CHECKS],
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
    :data:`OWN_SENTENCE_RULES` against ``gold`` and :data:`OWN_SENTENCE_CHECKS`; a run stopped midway is resumed by
    the same call."""
    from transformers import AutoTokenizer

    from ..data.dataset_format import read_generated
    from ..runtime.ecg_config import ECGConfig
    from ..runtime.tag_pieces import vocabulary_words
    from ..selection import SelectionConfig, select_samples, selection_inputs
    from ..synthetic.generate import generate_dataset

    folder = Path(model_dir) / OWN_SENTENCES_DIR
    if not own_sentences_written(model_dir):  # once written, the model in model_dir may be the second one
        # Its own warning that the generator looks undertrained would advise training longer in the middle of the
        # training that does what helps.
        generation_log = logging.getLogger("hf_ecg.synthetic.writer")
        level = generation_log.level
        generation_log.setLevel(logging.ERROR)
        try:
            generate_dataset(
                model_dir,
                folder,
                num_samples,
                mentions="random",
                seed=seed,
                run=DatasetRunConfig(
                    progress_bar=progress_bar,
                    trust_remote_code=trust_remote_code,
                    resume_command="the same training with --resume",
                ),
            )
        finally:
            generation_log.setLevel(level)
    manifest, table = read_generated(folder)
    config = ECGConfig.load(model_dir)
    tokenizer = AutoTokenizer.from_pretrained(str(model_dir))
    endings = full_stops(config.sentence_endings)
    rows, tags, flags = selection_inputs(datasets.Dataset(table))
    tokens, refused = rows["tokens"], rows["refused_redraws"]
    selection = select_samples(
        tokens,
        tags,
        gold,
        SelectionConfig(rules=list(OWN_SENTENCE_RULES)),
        flags=flags,
        tag_pieces=config.tag_pieces,
        vocabulary=vocabulary_words(tokenizer.get_vocab()),
    )
    dropped = dict(selection.dropped)
    odd = bare_space_words((w for i in selection.kept for w in tokens[i]), (s.tokens for s in gold), tokenizer)
    failed = {i: failed_check(tokens[i], refused[i], endings, odd) for i in selection.kept}
    kept = [i for i in selection.kept if failed[i] is None]
    for check in OWN_SENTENCE_CHECKS:
        dropped[check] = sum(rule == check for rule in failed.values())
    ids = rows["id"]
    sentences = [Sentence.from_tags(tokens[i], tags[i], source=f"{folder.name}[{ids[i]}]") for i in kept]
    cost = manifest.generation_cost or {}
    logger.info("kept %d of the %d sentences the first generator wrote (dropped: %s)", len(kept), len(rows), dropped)
    return OwnSentences(
        corpus=Corpus(sentences, name=f"{gold.name} {OWN_SENTENCES_DIR}", scheme="IOB2"),
        written=len(rows),
        dropped={rule: count for rule, count in dropped.items() if count},
        folder=OWN_SENTENCES_DIR,
        redrawn_share=cost.get("redrawn_share"),
    )


def failed_check(
    tokens: Sequence[str], refused_redraws: int, endings: Collection[str], odd_words: Collection[str] = ()
) -> str | None:
    """The first of :data:`OWN_SENTENCE_CHECKS` a generated sentence fails, or None.

    ``refused-redraw``: a block broke a decoding rule and was kept because the redraw budget was spent.
    ``second-sentence``: one of ``endings`` before the last word, of any kind. The decoder's run-on rule and the
    ``whole`` selection rule leave alone the kinds gold sentences have (BC5CDR's ``i . p .``); a generator trained
    again on sentences that went on in lower case after a ``.`` wrote such run-ons in a fifth of its sentences.
    ``odd-word``: one of ``odd_words`` (:func:`bare_space_words`)."""
    if refused_redraws:
        return "refused-redraw"
    if any(word in endings for word in tokens[:-1]):
        return "second-sentence"
    if any(word in odd_words for word in tokens):
        return "odd-word"
    return None


def full_stops(endings: Sequence[str]) -> set[str]:
    """The full stops among a corpus's sentence ``endings`` (``.``, ``!``, ``?``; all of them where it has none of
    those): JNLPBA's endings hold a ``)`` that closes a sentence now and then and a clause often, and a check that read
    every ``)`` as a second sentence kept only the sentences without brackets, half gold's length."""
    stops = set(endings) & set(DEFAULT_SENTENCE_ENDINGS)
    return stops or set(endings) or set(DEFAULT_SENTENCE_ENDINGS)


def bare_space_words(words: Iterable[str], gold: Iterable[Sequence[str]], tokenizer: Any) -> set[str]:
    """The ``words`` the tokenizer spells as a bare space token and pieces, where the piece after the bare space is
    one that never follows one in the ``gold`` sentences (other than digits).

    SmolLM2's tokenizer writes a digit after a bare space (`` 5`` is ``Ġ``, ``5``), and gold text puts nothing else
    there; a generator that puts a letter piece there writes a word of no language (``ictal``, ``ictidine``,
    ``iline``), and trained again on its own sentences a generator would learn them."""
    spaces = tokenizer.tokenize(" ")
    if len(spaces) != 1:  # no bare space token to spell words from
        return set()
    (bare,) = spaces

    def after_bare(text: str) -> set[str]:
        pieces = tokenizer.tokenize(text)
        return {pieces[i + 1] for i in range(len(pieces) - 1) if pieces[i] == bare}

    allowed = set().union(*(after_bare(" " + " ".join(sentence)) for sentence in gold))
    # numbers are an open class: a few gold digits stand for all ten
    return {word for word in set(words) if any(not p.isdigit() for p in after_bare(" " + word) - allowed)}


def own_sentences_written(model_dir: str | os.PathLike) -> bool:
    """Whether ``model_dir`` holds the first generator's sentences, all written (``data/`` appears when the last
    shard is): the second training begins right after."""
    return (Path(model_dir) / OWN_SENTENCES_DIR / "data").is_dir()


def template_blocks(sentences: Corpus, layout: str, first_sentence_id: int) -> datasets.Dataset:
    """The Q&A blocks of ``sentences``' templates (no mention samples), their ``sentence_id`` from
    ``first_sentence_id`` on, so that they follow the gold sentences' without sharing an id."""
    from ..data.builder import ECGBlocksBuilder

    builder = ECGBlocksBuilder(corpora={"train": sentences}, layout=layout, mention_samples=False)
    builder.download_and_prepare()
    blocks = builder.as_dataset()["train"]
    return blocks.map(
        lambda ids: {"sentence_id": [i + first_sentence_id for i in ids]},
        input_columns="sentence_id",
        batched=True,
        desc="numbering added sentences",
    )


def with_templates(train_blocks: datasets.Dataset, sentences: Corpus, layout: str) -> datasets.Dataset:
    """``train_blocks`` and, after them, the template blocks of ``sentences`` (:func:`template_blocks`)."""
    first_ids = max(train_blocks["sentence_id"], default=-1) + 1
    return datasets.concatenate_datasets([train_blocks, template_blocks(sentences, layout, first_ids)])


def train_on_own_sentences(
    first: list[ECGTrainer],
    trainer_for: Any,
    blocks: datasets.DatasetDict,
    corpus: Any,
    own_count: int,
    args: ECGTrainingArguments,
    resume: bool,
    trust_remote_code: bool,
) -> ECGTrainer:
    """The second training: ``own_count`` sentences written by the first generator (saved in the output folder),
    those that pass the rules added to the training blocks as templates, and a generator trained again from the
    base model. ``first`` holds the first training's trainer when it ran in this call (emptied here, so that its
    model and optimizer are freed before the second's are made). The first generator stays when none passes."""
    import gc

    from ..hub.model_card import ECGModelCardData
    from .resume import train_and_save

    first_card = ECGModelCardData.load(args.output_dir)
    own = write_own_sentences(
        args.output_dir,
        corpus,
        own_count,
        seed=args.seed,
        progress_bar=not args.disable_tqdm,
        trust_remote_code=trust_remote_code,
    )
    if not own.corpus:
        logger.warning(
            "none of the %d sentences the generator wrote passed the rules (%s): it is not trained again",
            own.written,
            own.dropped,
        )
        # trained in an earlier call when not in memory: the saved generator, never a new untrained one
        return first.pop() if first else trainer_for(blocks["train"], saved=True)
    resume_second = resume and not first  # the first training was done before: the second may have begun
    first.clear()
    gc.collect()
    train_blocks = with_templates(blocks["train"], own.corpus, args.layout)
    logger.info("training again with %d of its own sentences (%d blocks in all)", len(own.corpus), len(train_blocks))
    trainer = trainer_for(train_blocks)
    trainer.model_card_data.own_sentences = {
        **own.record(),
        "blocks": len(train_blocks) - len(blocks["train"]),
        "first_best_eval_loss": first_card.best_eval_loss if first_card else None,
        "first_steps": first_card.total_steps if first_card else None,
    }
    train_and_save(trainer, resume_second)
    return trainer
