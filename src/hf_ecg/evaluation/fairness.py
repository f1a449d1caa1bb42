"""Fair names: the two tests of the Fair Data Generation seed for the mentions a labelled set carries.

- **Group fairness**: per group of a protected attribute (:class:`~hf_ecg.data.groups.GroupTable`), how many of the
  set's mentions of the type belong to it, and the **disparate impact**: the smallest group's count over the
  largest's. At 0.8 or more the 80% rule holds. Mentions of no listed group are counted apart (``unknown``).
- **Individual fairness**: each sample's first mention of a known group is swapped for a name of another group
  (:func:`~hf_ecg.runtime.tags.replace_mention`), a tagger trained on gold and the set predicts both sentences, and
  the **counterfactual unfairness** is the share of samples whose predicted entities outside the swapped mention
  change (under 10% counts as fair).
"""

from __future__ import annotations

import random
import statistics
from collections.abc import Sequence
from dataclasses import asdict
from typing import Any

from ..data.corpus import Corpus
from ..data.groups import RULE_80, GroupTable, disparate_impact
from ..runtime.tags import Span, replace_mention, tags_to_spans

__all__ = [
    "RULE_80",
    "UNFAIR_SHARE",
    "counterfactual_unfairness",
    "disparate_impact",
    "evaluate_fairness",
    "group_report",
]

#: A counterfactual unfairness under this counts as fair.
UNFAIR_SHARE = 0.1


def group_report(corpus: Corpus, table: GroupTable) -> dict[str, Any]:
    """The mentions of ``table``'s type per group in ``corpus``, the disparate impact and whether the 80% rule holds."""
    mentions = [words for sentence in corpus for label, words in sentence.mentions if label == table.entity_type]
    counts = table.counts(mentions)
    impact = disparate_impact(counts)
    return {
        "name": corpus.name,
        "sentences": len(corpus),
        "mentions": len(mentions),
        "counts": counts,
        "disparate_impact": impact,
        "rule_80": impact is not None and impact >= RULE_80,
    }


def _outside(spans: Sequence[Span], start: int, end: int, shift: int) -> set[tuple[int, int, str]]:
    """The spans that do not overlap ``[start, end)``, those after it moved back by ``shift``."""
    kept = set()
    for span in spans:
        if span.end <= start:
            kept.add((span.start, span.end, span.label))
        elif span.start >= end:
            kept.add((span.start - shift, span.end - shift, span.label))
    return kept


def counterfactual_pairs(corpus: Corpus, table: GroupTable, seed: int) -> list[tuple[int, list[str], Span, Span]]:
    """Per sample with a mention of a known group: its index, the swapped tokens, the original span and the new one."""
    rng = random.Random(seed)
    pairs = []
    for i, sentence in enumerate(corpus):
        for span in sentence.spans:
            words = sentence.tokens[span.start : span.end]
            group = table.group_of(words) if span.label == table.entity_type else None
            if group is None:
                continue
            other = rng.choice([g for g in table.groups if g != group])
            name = table.draw(other, rng)
            tokens, _ = replace_mention(sentence.tokens, sentence.tags, span, name)
            pairs.append((i, tokens, span, Span(span.start, span.start + len(name), span.label)))
            break
    return pairs


def counterfactual_unfairness(tagger: Any, corpus: Corpus, table: GroupTable, seed: int = 0) -> dict[str, Any]:
    """The share of ``corpus``'s samples whose entities, as ``tagger`` predicts them, change outside the mention
    swapped for a name of another group (:func:`counterfactual_pairs`)."""
    pairs = counterfactual_pairs(corpus, table, seed)
    if not pairs:
        return {"samples": 0, "changed": 0, "unfairness": None}
    originals = tagger.predict([corpus[i].tokens for i, _, _, _ in pairs])
    swapped = tagger.predict([tokens for _, tokens, _, _ in pairs])
    changed = 0
    for (_, _, old, new), before, after in zip(pairs, originals, swapped, strict=True):
        shift = (new.end - new.start) - (old.end - old.start)
        kept_before = _outside(tags_to_spans(before, "IOB2")[0], old.start, old.end, 0)
        kept_after = _outside(tags_to_spans(after, "IOB2")[0], new.start, new.end, shift)
        changed += kept_before != kept_after
    return {"samples": len(pairs), "changed": changed, "unfairness": changed / len(pairs)}


def evaluate_fairness(
    data: Corpus,
    table: GroupTable,
    *,
    gold: Corpus | None = None,
    config: Any = None,
    counterfactual: bool = True,
    progress_bar: bool = False,
) -> dict[str, Any]:
    """Group fairness of ``data`` (and of ``gold`` beside it), and, with ``gold`` and ``counterfactual``, the
    counterfactual unfairness under taggers trained on gold and the set, one per seed of ``config``
    (:class:`~hf_ecg.taggers.tagger.NERConfig`)."""
    from ..taggers.tagger import NERConfig
    from ..taggers.training import train_tagger

    if table.entity_type not in data.entity_types:
        raise ValueError(
            f"{data.name} has no {table.entity_type} mention (its types: {', '.join(data.entity_types) or 'none'})"
        )
    report: dict[str, Any] = {
        "type": table.entity_type,
        "groups": table.groups,
        "group_file": table.source,
        "gold": group_report(gold, table) if gold is not None else None,
        "data": group_report(data, table),
        "counterfactual": None,
    }
    if gold is None or not counterfactual:
        return report
    config = config or NERConfig()
    runs = []
    for seed in config.seeds:
        tagger = train_tagger([gold], config, seed, synthetic=[data], progress_bar=progress_bar)
        runs.append({"seed": seed, **counterfactual_unfairness(tagger, data, table, seed)})
    scores = [run["unfairness"] for run in runs if run["unfairness"] is not None]
    mean = statistics.fmean(scores) if scores else None
    report["counterfactual"] = {
        "runs": runs,
        "unfairness_mean": mean,
        "unfairness_std": statistics.stdev(scores) if len(scores) > 1 else 0.0,
        "fair": mean is not None and mean < UNFAIR_SHARE,
        "tagger": asdict(config),
    }
    return report
