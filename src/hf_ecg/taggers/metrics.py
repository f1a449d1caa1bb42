"""The NER measures: entity-level micro F1 (seqeval's default, conlleval chunking), per entity type
(seqeval's ``classification_report``), and token-level macro F1 over the B-/I- labels (the paper's
Table 3 measure)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from ..runtime.tags import tags_to_spans

__all__ = ["Tags", "entity_scores", "per_type_scores", "token_macro_f1"]

Tags = Sequence[str]


def entity_scores(gold: Sequence[Tags], predicted: Sequence[Tags]) -> dict[str, float]:
    """Entity-level micro precision, recall and F1 over IOB2 sequences (seqeval's default mode)."""
    if len(gold) != len(predicted):
        raise ValueError(f"{len(gold)} gold sequences but {len(predicted)} predicted")
    true_spans: set[tuple[int, int, int, str]] = set()
    pred_spans: set[tuple[int, int, int, str]] = set()
    for i, (g, p) in enumerate(zip(gold, predicted, strict=True)):
        if len(g) != len(p):
            raise ValueError(f"sentence {i}: {len(g)} gold tags but {len(p)} predicted")
        true_spans.update((i, s.start, s.end, s.label) for s in tags_to_spans(list(g), "IOB2")[0])
        pred_spans.update((i, s.start, s.end, s.label) for s in tags_to_spans(list(p), "IOB2")[0])
    correct = len(true_spans & pred_spans)
    precision = correct / len(pred_spans) if pred_spans else 0.0
    recall = correct / len(true_spans) if true_spans else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return {"precision": precision, "recall": recall, "f1": f1}


def per_type_scores(gold: Sequence[Tags], predicted: Sequence[Tags]) -> dict[str, dict[str, float]]:
    """Per entity type of ``gold`` or ``predicted``: ``precision``, ``recall``, ``f1`` and ``support`` (gold
    entities), seqeval's ``classification_report`` in its default (conlleval) mode."""
    try:
        from seqeval.metrics import classification_report
    except ImportError:
        raise ImportError("per-type scores need seqeval: pip install 'hf-ecg[eval]' (or seqeval)") from None
    report = classification_report(
        [list(g) for g in gold], [list(p) for p in predicted], output_dict=True, zero_division=0
    )
    measures = {"precision": "precision", "recall": "recall", "f1": "f1-score"}
    return {
        label: {**{name: float(row[key]) for name, key in measures.items()}, "support": int(row["support"])}
        for label, row in report.items()
        if not label.endswith(" avg")
    }


def token_macro_f1(gold: Sequence[Tags], predicted: Sequence[Tags]) -> float:
    """Mean over the B-/I- labels occurring in ``gold`` of each label's token-level F1."""
    true_positive: Counter[str] = Counter()
    gold_count: Counter[str] = Counter()
    pred_count: Counter[str] = Counter()
    for g_seq, p_seq in zip(gold, predicted, strict=True):
        for g, p in zip(g_seq, p_seq, strict=True):
            gold_count[g] += 1
            pred_count[p] += 1
            true_positive[g] += g == p
    labels = sorted(label for label in gold_count if label != "O")
    if not labels:
        return 0.0
    scores = []
    for label in labels:
        precision = true_positive[label] / pred_count[label] if pred_count[label] else 0.0
        recall = true_positive[label] / gold_count[label]
        scores.append(2 * precision * recall / (precision + recall) if precision + recall else 0.0)
    return sum(scores) / len(scores)
