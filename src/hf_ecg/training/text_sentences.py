"""The user's own text as training sentences: their unlabelled sentences labelled by their name dictionary, added to
the gold sentences as templates (:func:`text_sentences`), so that the generator learns how the domain writes.

A sentence of the text becomes a template only where every entity slot in it is a name the dictionary knows: it must
hold at least one name, and taggers trained on the gold sentences must read each of its other words as an ordinary
word (the ``no-extra`` selection rule at :data:`EXTRA_THRESHOLD`). A name the dictionary misses would otherwise stay
in the template as text, and the generator would learn to write names as ordinary words. Only templates are taken
(no mention samples): the writer, the held-out split, the decoding rules and the mention bank stay the gold
sentences'. Nothing of the text is written into the model folder; its card records counts only.
"""

from __future__ import annotations

import hashlib
import json
import logging
import math
import random
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import datasets

from ..data.corpus import Corpus
from ..labelling.dictionary import Dictionary
from ..labelling.ensemble import GOLD_TAGGER_SEEDS
from ..runtime.layout import layout_named

__all__ = [
    "EXTRA_THRESHOLD",
    "TEXT_SENTENCE_RULES",
    "TextSentences",
    "TextTemplates",
    "add_text_templates",
    "text_fingerprint",
    "text_sentence_count",
    "text_sentences",
]

if TYPE_CHECKING:
    from .training_args import ECGTrainingArguments

logger = logging.getLogger(__name__)

#: The selection rules a labelled sentence of the text must pass (:func:`~hf_ecg.selection.select_samples`):
#: not a gold sentence or an earlier one; no word outside the dictionary's names that the gold taggers read as a name.
TEXT_SENTENCE_RULES = ("duplicate", "no-extra")
#: ``no-extra``'s line: a word outside the names whose entity probability under the gold taggers reaches this leaves
#: its sentence out (every other word is ``O`` with probability 0.9 or more).
EXTRA_THRESHOLD = 0.1
#: The gold taggers that judge the sentences.
TAGGER_SEEDS = GOLD_TAGGER_SEEDS
#: Sentences judged per sentence wanted: the text is sampled, not read whole, so that 100,000 sentences of text cost
#: what a few thousand do.
JUDGED_PER_KEPT = 3


def text_sentence_count(num_gold: int, requested: int | None) -> int:
    """How many sentences of the text become templates: ``requested``, else as many as a small corpus's own sentences
    (:func:`~hf_ecg.hub.training_record.own_sentence_count`'s rule, whatever the corpus's size)."""
    from ..hub.training_record import OWN_SENTENCES_MIN, OWN_SENTENCES_PER_GOLD

    return requested if requested is not None else max(OWN_SENTENCES_PER_GOLD * num_gold, OWN_SENTENCES_MIN)


@dataclass(frozen=True)
class TextTemplates:
    """The user's text as a source of templates (``train_ecg_model(text=...)``): its tokenized ``sentences`` and the
    ``dictionary`` whose names make their slots."""

    sentences: Sequence[Sequence[str]]
    dictionary: Dictionary


def text_fingerprint(text: TextTemplates | None, requested: int | None) -> dict[str, str]:
    """The training record's ``text`` entry: a digest of what the templates are drawn from (the text, the dictionary's
    names, how many were asked for), so that a resumed training with other text is refused; empty without text."""
    if text is None:
        return {}
    content = json.dumps([[list(s) for s in text.sentences], text.dictionary.to_dict(), requested], ensure_ascii=False)
    return {"text": hashlib.sha256(content.encode("utf-8")).hexdigest()[:16]}


def add_text_templates(
    blocks: datasets.DatasetDict,
    gold: Corpus,
    text: TextTemplates | None,
    args: ECGTrainingArguments,
    *,
    plan: logging.Logger | None = None,
) -> tuple[datasets.DatasetDict, dict[str, Any] | None]:
    """``blocks`` with the template blocks of :func:`text_sentences` added to its ``train`` split
    (``args.text_sentences`` of them: :func:`text_sentence_count`), and the card's record of them (with the blocks
    added); ``blocks`` as they are and ``None`` without text. ``plan`` is told first what judging the text costs
    (:func:`judging_plan`): minutes of tagger training before the generator's."""
    from .own_sentences import with_templates

    if text is None:
        return blocks, None
    if layout_named(args.layout).sketch:  # every chosen sentence, sketched: no judging, no template choice
        from .sketch_rows import text_sketch_blocks

        count = min(len(text.sentences), text_sentence_count(len(gold), args.text_sentences))
        chosen = sorted(random.Random(args.seed).sample(range(len(text.sentences)), count))
        first = max(blocks["train"]["sentence_id"], default=-1) + 1
        rows, record = text_sketch_blocks([list(text.sentences[i]) for i in chosen], text.dictionary, first, args)
        record["text"] = len(text.sentences)
        return datasets.DatasetDict({**blocks, "train": datasets.concatenate_datasets([blocks["train"], rows])}), record
    if plan is not None:
        plan.info("%s", judging_plan(len(gold)))
    count = text_sentence_count(len(gold), args.text_sentences)
    added = text_sentences(gold, text.sentences, text.dictionary, count, seed=args.seed)
    train = with_templates(blocks["train"], added.corpus, args.layout)
    record = {**added.record, "blocks": train.num_rows - blocks["train"].num_rows}
    return datasets.DatasetDict({**blocks, "train": train}), record


#: A MiniLM tagger's training steps a second on two CPU cores (batch 8), for the plan's estimate.
CPU_TAGGER_STEPS_PER_SECOND = 3.0


def judging_plan(gold_sentences: int) -> str:
    """What judging the text's sentences costs before the generator trains: the gold taggers' training steps and,
    on a machine without a GPU, about how long they take."""
    import torch

    from ..selection import SelectionConfig

    config = SelectionConfig(tagger_seeds=list(TAGGER_SEEDS))
    steps = len(TAGGER_SEEDS) * math.ceil(config.tagger_epochs * math.ceil(gold_sentences / config.tagger_batch_size))
    line = (
        f"first, {len(TAGGER_SEEDS)} gold taggers ({config.tagger_model}, {config.tagger_epochs:g} epochs of the "
        f"{gold_sentences} gold sentences each: {steps} steps) learn to judge your text's sentences"
    )
    if torch.cuda.is_available():
        return line
    minutes = round(steps / CPU_TAGGER_STEPS_PER_SECOND / 60)
    return f"{line}; " + (f"about {minutes} min on 2 CPU cores" if minutes else "under a minute on 2 CPU cores")


@dataclass
class TextSentences:
    """The text's sentences kept as templates, and what the card records of them (counts, never the text)."""

    corpus: Corpus
    record: dict[str, Any]


def text_sentences(
    gold: Corpus,
    text: Sequence[Sequence[str]],
    dictionary: Dictionary,
    count: int,
    *,
    seed: int,
    taggers: Sequence[Any] | None = None,
) -> TextSentences:
    """Up to ``count`` sentences of ``text`` (the user's tokenized sentences), labelled by ``dictionary`` (without the
    names ``gold`` uses more often as ordinary words), that hold at least one of its names and pass
    :data:`TEXT_SENTENCE_RULES` against ``gold``; drawn in a ``seed``-ed order.

    At most ``JUDGED_PER_KEPT * count`` sentences with a name are judged. The record says how many sentences the text
    has, how many hold a name, how many were judged, dropped (by rule) and kept, the rules and the threshold.
    ``taggers``: the gold taggers that judge (default: trained here, one per :data:`TAGGER_SEEDS`)."""
    from ..selection import SelectionConfig, select_samples

    if count < 1:
        raise ValueError(f"text_sentences must be at least 1, got {count}")
    try:
        dictionary.check_types(gold.entity_types, "the corpus")
    except ValueError as error:
        raise ValueError(f"the dictionary {error}") from None
    # a name the gold sentences use more often as an ordinary word (``lead``) would make a slot of one
    dictionary, ordinary = dictionary.without_common_words([(s.tokens, s.tags) for s in gold])
    labelled = dictionary.label(text)
    with_names = [i for i, sentence in enumerate(labelled) if sentence.spans]
    if not with_names:
        raise ValueError(f"the {len(text):,} sentences of text hold none of the dictionary's names")
    order = with_names[:]
    random.Random(seed).shuffle(order)
    judged = order[: JUDGED_PER_KEPT * count]
    sentences = [labelled[i] for i in judged]
    config = SelectionConfig(
        rules=list(TEXT_SENTENCE_RULES), extra_threshold=EXTRA_THRESHOLD, tagger_seeds=list(TAGGER_SEEDS)
    )
    logger.info("judging %d of the text's %d sentences with names as templates", len(judged), len(with_names))
    selection = select_samples(
        [s.tokens for s in sentences], [s.tags for s in sentences], gold, config, taggers=taggers
    )
    kept = [sentences[i] for i in selection.kept[:count]]
    corpus = Corpus(kept, name=f"{gold.name} (your text)", scheme="IOB2")
    record = {
        "text": len(text),
        "with_names": len(with_names),
        "judged": len(judged),
        "dropped": {rule: n for rule, n in selection.dropped.items() if n},
        "kept": len(kept),
        "entities": sum(len(s.spans) for s in kept),
        "rules": list(TEXT_SENTENCE_RULES),
        "extra_threshold": EXTRA_THRESHOLD,
        "tagger_seeds": list(TAGGER_SEEDS),
        "dictionary_names": len(dictionary),
        "ordinary_words_left_out": len(ordinary),
    }
    logger.info("kept %d of your text's sentences as templates (dropped: %s)", len(kept), record["dropped"])
    return TextSentences(corpus=corpus, record=record)
