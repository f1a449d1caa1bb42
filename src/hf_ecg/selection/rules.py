"""The selection rules applied to generated samples: each a :class:`Rule` (its name, what it drops, whether it needs
the gold taggers or repairs labels, and its judge), registered in :data:`SELECTION_RULES` by name;
:func:`select_samples` runs ``config.rules`` in order, each over the samples the rules before it kept
(:class:`_RuleRun` holds what they share); :class:`Selection` is what it decided."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..data.corpus import Corpus
from ..data.selection_rules import REPAIR_RULES, RULE_DESCRIPTIONS, RULES, TAGGER_RULES
from ..labelling.dictionary import Dictionary
from ..labelling.ensemble import entity_words, relabel
from ..runtime.tag_pieces import TagPieceFinder, tag_piece_exceptions
from ..runtime.words import RARE_IN_TRAINING_SHARE
from ..taggers.tagger import Tagger
from .config import SelectionConfig
from .teacher import agrees, teacher_probabilities, teacher_taggers, unlabel

__all__ = ["SELECTION_RULES", "Rule", "Selection", "check_rule_inputs", "select_samples"]


@dataclass
class Selection:
    """What :func:`select_samples` decided: the kept sample indices, per sample the rule that dropped it, the new
    tags of the samples the ``relabel`` rule changed, and the words the ``unknown`` rule marked unknown."""

    kept: list[int]
    dropped_by: list[str | None]  # None: kept (or passed every rule and fell beyond target_size: "target-size")
    relabelled: dict[int, list[str]] = field(default_factory=dict)
    unknown: dict[int, list[int]] = field(default_factory=dict)
    #: the ``text-copy`` rule's record (:func:`~hf_ecg.selection.shared_runs.copy_record`): what every sample it
    #: judged shares with the user's text, and the most that a kept sample shares
    shared_runs: dict[str, Any] | None = None

    @property
    def dropped(self) -> dict[str, int]:
        """How many samples each rule dropped, in rule order (``target-size`` last)."""
        counts: dict[str, int] = {}
        for rule in self.dropped_by:
            if rule is not None:
                counts[rule] = counts.get(rule, 0) + 1
        return counts


def select_samples(
    tokens: Sequence[Sequence[str]],
    tags: Sequence[Sequence[str]],
    gold: Corpus,
    config: SelectionConfig | None = None,
    *,
    flags: Mapping[str, Sequence[Any]] | None = None,
    taggers: Sequence[Tagger] | None = None,
    tag_pieces: Mapping[str, Sequence[str]] | None = None,
    vocabulary: Iterable[str] = (),
    unlabelled: Sequence[Sequence[str]] = (),
    dictionary: Dictionary | None = None,
) -> Selection:
    """Apply ``config.rules`` to generated samples (``tokens`` and their IOB2 ``tags``), judged against ``gold``.

    ``flags`` holds the decoder's per-sample columns (``complete``, ``forced_tags``, ``cut_blocks``,
    ``tag_pieces``) where the samples have them; without ``complete``, a sample is complete when its last
    token ends gold sentences. ``taggers`` are trained on ``gold`` when a tagger rule needs them and none are
    given. ``tag_pieces``: the forms of each type's name the generator recorded (``ECGConfig.tag_pieces``;
    default: the type names), and ``vocabulary`` its tokenizer's whole words
    (:func:`~hf_ecg.runtime.tag_pieces.vocabulary_words`), for the ``tag-leak`` rule. ``unlabelled``: the
    user's own sentences, which the taggers are self-trained on as well
    (:func:`~hf_ecg.labelling.ensemble.train_gold_taggers`).
    """
    from ..runtime.words import sentence_break_shares, sentence_endings

    config = config or SelectionConfig()
    check_rule_inputs(config, dictionary, unlabelled)
    if len(tokens) != len(tags):
        raise ValueError(f"{len(tokens)} token sequences but {len(tags)} tag sequences")
    endings = set(sentence_endings(s.tokens for s in gold))
    gold_breaks = sentence_break_shares(((s.tokens, {sp.start for sp in s.spans}) for s in gold), endings)
    run = _RuleRun(
        tokens,
        tags,
        gold,
        config,
        flags or {},
        taggers,
        tag_pieces,
        vocabulary,
        unlabelled,
        dictionary,
        endings=endings,
        break_kinds={kind for kind, share in gold_breaks.items() if share < RARE_IN_TRAINING_SHARE},
        dropped_by=[None] * len(tokens),
    )
    for rule in config.rules:
        run.apply(rule)
    kept = run.alive()
    if config.target_size is not None:
        for i in kept[config.target_size :]:
            run.dropped_by[i] = "target-size"
        kept = kept[: config.target_size]
    kept_set = set(kept)
    relabelled = {i: t for i, t in run.relabelled.items() if i in kept_set}
    unknown = {i: words for i, words in run.unknown.items() if i in kept_set}
    shared_runs = None
    if "text-copy" in config.rules:
        from .shared_runs import copy_record

        shared_runs = copy_record(run.text_runs, kept, config, len(unlabelled))
    return Selection(
        kept=kept, dropped_by=run.dropped_by, relabelled=relabelled, unknown=unknown, shared_runs=shared_runs
    )


def check_rule_inputs(
    config: SelectionConfig, dictionary: Dictionary | None, unlabelled: Sequence[Sequence[str]]
) -> None:
    """Refuse the ``dictionary`` rule without a dictionary, and the ``text-copy`` rule without the user's text
    (``unlabelled``)."""
    if "dictionary" in config.rules and dictionary is None:
        raise ValueError("--rule dictionary needs --dictionary TYPE=FILE|DIR|JSON, the name dictionary it repairs by")
    if "text-copy" in config.rules and not len(unlabelled):
        raise ValueError("--rule text-copy needs --unlabelled TEXT, the text no sample may copy")


@dataclass
class _RuleRun:
    """One :func:`select_samples` call: its inputs, and what the rules so far dropped and relabelled."""

    tokens: Sequence[Sequence[str]]
    tags: Sequence[Sequence[str]]
    gold: Corpus
    config: SelectionConfig
    flags: Mapping[str, Sequence[Any]]
    taggers: Sequence[Tagger] | None
    tag_pieces: Mapping[str, Sequence[str]] | None
    vocabulary: Iterable[str]
    unlabelled: Sequence[Sequence[str]]
    dictionary: Dictionary | None
    endings: set[str]
    break_kinds: set[str]
    dropped_by: list[str | None]
    relabelled: dict[int, list[str]] = field(default_factory=dict)
    unknown: dict[int, list[int]] = field(default_factory=dict)  # per sample, its words the unknown rule marked
    probabilities: dict[int, Any] = field(default_factory=dict)
    text_runs: dict[int, Any] = field(default_factory=dict)  # per judged sample, what it shares with the text

    def alive(self) -> list[int]:
        """The samples no rule has dropped yet."""
        return [i for i, rule in enumerate(self.dropped_by) if rule is None]

    def apply(self, rule: str) -> None:
        """Run ``rule`` (by name, :data:`SELECTION_RULES`) over the samples still alive."""
        SELECTION_RULES[rule].judge(self, self.alive())

    def _flag(self, name: str, i: int) -> Any:
        return self.flags[name][i] if name in self.flags else 0

    def _duplicate(self, candidates: list[int]) -> None:
        seen = {tuple(s.tokens) for s in self.gold}
        for i in candidates:
            key = tuple(self.tokens[i])
            if key in seen:
                self.dropped_by[i] = "duplicate"
            seen.add(key)

    def _near_copy(self, candidates: list[int]) -> None:
        from ..evaluation.quality import nearest_rouge_l

        scores = nearest_rouge_l([list(self.tokens[i]) for i in candidates], [list(s.tokens) for s in self.gold])
        for i, score in zip(candidates, scores, strict=True):
            if score > self.config.near_copy_threshold:
                self.dropped_by[i] = "near-copy"

    def _text_copy(self, candidates: list[int]) -> None:
        from .shared_runs import SharedRunIndex, is_copy

        index = SharedRunIndex(self.unlabelled)
        for i in candidates:
            run = index.compare(self.tokens[i], [tag != "O" for tag in self.tags[i]])
            self.text_runs[i] = run
            if is_copy(run, self.config):
                self.dropped_by[i] = "text-copy"

    def _tag_leak(self, candidates: list[int]) -> None:
        gold = self.gold
        forms = self.tag_pieces or {label: [label] for label in gold.entity_types}
        exceptions = tag_piece_exceptions(forms, [s.tokens for s in gold], self.vocabulary, [s.tags for s in gold])
        finder = TagPieceFinder(forms, exceptions, words=self.vocabulary)
        for i in candidates:
            if self._flag("tag_pieces", i) or finder(self.tokens[i], self.tags[i]):
                self.dropped_by[i] = "tag-leak"

    def _whole(self, candidates: list[int]) -> None:
        from ..evaluation.quality import MIN_TOKENS
        from ..runtime.words import has_repetition, sentence_breaks

        for i in candidates:
            words = list(self.tokens[i])
            ends = bool(words) and words[-1] in self.endings
            complete = self.flags["complete"][i] if "complete" in self.flags else ends
            starts = {j for j, tag in enumerate(self.tags[i]) if tag.startswith("B-")}
            whole = (
                complete
                and not self._flag("forced_tags", i)
                and not self._flag("cut_blocks", i)
                and len(words) >= MIN_TOKENS
                and not has_repetition(words)
                and not sentence_breaks(words, self.endings, starts, self.break_kinds)
            )
            if not whole:
                self.dropped_by[i] = "whole"

    def _dictionary(self, candidates: list[int]) -> None:
        assert self.dictionary is not None  # check_rule_inputs
        for i in candidates:
            current = self.relabelled.get(i, list(self.tags[i]))
            repaired = self.dictionary.repaired(self.tokens[i], current, self.gold.entity_types)
            if repaired != current:
                self.relabelled[i] = repaired

    def _empty_slot(self, candidates: list[int]) -> None:
        from ..runtime.words import empty_slots, words_before_punctuation

        closing = words_before_punctuation(s.tokens for s in self.gold)
        for i in candidates:
            if empty_slots(self.tokens[i], closing=closing, endings=self.endings):
                self.dropped_by[i] = "empty-slot"

    def _tagger_rule(self, rule: str, candidates: list[int]) -> None:
        """``relabel``, ``unlabel`` and the rules that drop what the gold taggers disagree with."""
        config = self.config
        if self.taggers is None:
            self.taggers = teacher_taggers(self.tokens, self.tags, self.gold, config, self.unlabelled)
        missing = [i for i in candidates if i not in self.probabilities]
        if missing:
            self.probabilities.update(teacher_probabilities(self.taggers, self.tokens, missing, config))
        labels = self.taggers[0].labels
        for i in candidates:
            current = self.relabelled.get(i, list(self.tags[i]))
            probabilities = self.probabilities[i]
            if rule == "relabel":
                repaired = relabel(self.tokens[i], current, probabilities, labels, config.extra_threshold)
                if repaired is None:
                    self.dropped_by[i] = rule
                elif repaired != current:
                    self.relabelled[i] = repaired
            elif rule == "unlabel":
                repaired = unlabel(current, probabilities, labels, config.extra_threshold)
                if repaired != current:
                    self.relabelled[i] = repaired
            elif rule == "unknown":
                marked = set(entity_words(self.tokens[i], current, probabilities, labels, config.extra_threshold))
                if self.dictionary is not None:
                    names = self.dictionary.spans(self.tokens[i])
                    marked |= {j for span in names for j in range(span.start, span.end) if current[j] == "O"}
                if marked:
                    self.unknown[i] = sorted(marked)
            elif not agrees(rule, current, probabilities, labels, config.extra_threshold):
                self.dropped_by[i] = rule


@dataclass(frozen=True)
class Rule:
    """A selection rule: its ``name``, what it drops (``description``, the dataset card's words), whether it
    ``needs_taggers`` (the gold taggers judge) and whether it ``repairs`` labels rather than drop samples, and its
    ``judge``: given a rule run and the samples still kept, it marks those it drops or relabels."""

    name: str
    description: str
    needs_taggers: bool
    repairs: bool
    judge: Callable[[_RuleRun, list[int]], None]


def _tagger_judge(rule: str) -> Callable[[_RuleRun, list[int]], None]:
    """The judge of a tagger rule: the gold taggers' probabilities read as ``rule`` reads them."""

    def judge(run: _RuleRun, candidates: list[int]) -> None:
        run._tagger_rule(rule, candidates)

    return judge


_JUDGES: dict[str, Callable[[_RuleRun, list[int]], None]] = {
    "duplicate": _RuleRun._duplicate,
    "near-copy": _RuleRun._near_copy,
    "text-copy": _RuleRun._text_copy,
    "tag-leak": _RuleRun._tag_leak,
    "whole": _RuleRun._whole,
    "dictionary": _RuleRun._dictionary,
    "empty-slot": _RuleRun._empty_slot,
}
#: Every rule by name, in :data:`~hf_ecg.data.selection_rules.RULES` order (the tagger rules judge through the
#: taggers' probabilities).
SELECTION_RULES: dict[str, Rule] = {
    name: Rule(
        name,
        RULE_DESCRIPTIONS[name],
        needs_taggers=name in TAGGER_RULES,
        repairs=name in REPAIR_RULES,
        judge=_JUDGES.get(name) or _tagger_judge(name),
    )
    for name in RULES
}
