"""Weak labels a tagger can trust: the user's text labelled by their dictionary, with the tokens no labeller vouches
for left out of the loss (``Sentence.unknown``) by one of several rules, then a tagger trained on it and gold
(two-stage) and scored on the test split, beside the silver labels' precision and recall against the pool's own gold
labels (a measure only: nothing in the silver uses them).

Rules for the tokens the dictionary leaves unmatched:

- ``distant``: every one is ``O`` (distant supervision as it is);
- ``negatives:P``: each is ``O`` with probability P (seeded), else unknown (negative sampling, Li et al. 2021);
- ``frequent:N``: a word the text uses at least N times outside the dictionary's names is ``O``, another unknown
  (names are rare words; the words a text repeats are its ordinary ones);
- ``taggers:T``: a word that taggers trained on the gold sentences read as ``O`` with probability T or more is
  ``O``, another unknown (confident ``O`` only);
- ``complete:T``: a teacher trained on gold and the text as the dictionary labels it (two-stage) reads the text; its
  entities whose every word it reads as an entity with probability T or more join the dictionary's where they
  overlap none (completion, NEEDLE's step 2, with a teacher that has seen the silver sentences);
- ``weighted``: each unmatched word weighs on the loss as much as taggers trained on the gold sentences read it as
  ``O`` (its mean ``O`` probability; a noise-aware loss), the dictionary's names 1.0;
- ``selftrain:T``: a teacher trained on gold and the text as the dictionary labels it, with the run's recipe, reads
  the text (BOND's self-training, one round): its entities confident at T join the dictionary's, and the unmatched
  words it does not read as ``O`` at T are unknown.

Usage::

    python dev/silver_recipes.py --gold bc5cdr/train.tsv:45 --unlabelled bc5cdr/train.tsv:45:4560 \\
        --test bc5cdr/test.tsv --dictionary DICT --rule negatives:0.3 -o report.json
"""

from __future__ import annotations

import argparse
import json
import random
from collections import Counter
from dataclasses import replace
from pathlib import Path

from hf_ecg.data.corpus import Corpus, Sentence
from hf_ecg.data.sources import load_source
from hf_ecg.evaluation.ner import evaluate_ner
from hf_ecg.labelling.dictionary import Dictionary
from hf_ecg.taggers.tagger import NERConfig

#: Where the self-training rule saves its teacher (beside the report).
TEACHER_DIR: Path | None = None


def unknown_tokens(corpus: Corpus, rule: str, seed: int, gold: Corpus, config: NERConfig) -> Corpus:
    """``corpus`` (the text labelled by the dictionary) with each sentence's ``unknown`` tokens as ``rule`` says."""
    kind, _, value = rule.partition(":")
    if kind == "distant":
        return corpus
    outside = [
        [i for i in range(len(s.tokens)) if not any(span.start <= i < span.end for span in s.spans)] for s in corpus
    ]
    if kind == "negatives":
        rng = random.Random(f"negatives:{seed}")
        keep = float(value)
        unknown = [[i for i in free if rng.random() >= keep] for free in outside]
    elif kind == "frequent":
        counts = Counter(s.tokens[i].lower() for s, free in zip(corpus, outside, strict=True) for i in free)
        least = int(value)
        unknown = [
            [i for i in free if counts[s.tokens[i].lower()] < least] for s, free in zip(corpus, outside, strict=True)
        ]
    elif kind == "taggers":
        from hf_ecg.labelling.ensemble import ensemble_proba, train_gold_taggers

        taggers = train_gold_taggers(gold, replace(config, epochs=20.0), [1, 2, 3])  # the protocol's gold taggers
        threshold = float(value)
        outside_label = taggers[0].labels.index("O")
        probabilities = ensemble_proba(taggers, [s.tokens for s in corpus])
        unknown = [
            [i for i in free if p[i][outside_label] < threshold] for free, p in zip(outside, probabilities, strict=True)
        ]
    elif kind == "complete":
        return completed(corpus, float(value), gold, config)
    elif kind == "weighted":
        return o_weighted(corpus, gold, config)
    elif kind == "selftrain":
        return self_trained(corpus, float(value), gold, config)
    else:
        raise SystemExit(f"unknown rule {rule!r}")
    sentences = [Sentence(s.tokens, s.spans, s.source, unknown=tuple(u)) for s, u in zip(corpus, unknown, strict=True)]
    return Corpus(sentences, name=f"{corpus.name}, unknown by {rule}", weak=True)


def completed(corpus: Corpus, threshold: float, gold: Corpus, config: NERConfig) -> Corpus:
    """``corpus`` (the dictionary's labels) completed by a teacher trained on gold and it (see ``complete:T``): its
    confident entities join the dictionary's where they overlap none."""
    from hf_ecg.labelling.ensemble import TaggerEnsemble
    from hf_ecg.labelling.labeller import joined_spans
    from hf_ecg.taggers.training import train_tagger

    teacher = TaggerEnsemble(
        [train_tagger([gold], config, 1, synthetic=[corpus], entity_types=gold.entity_types)], threshold
    )
    found = teacher.spans_many([s.tokens for s in corpus])
    sentences = [
        Sentence(s.tokens, tuple(joined_spans(s.spans, spans)), s.source)
        for s, spans in zip(corpus, found, strict=True)
    ]
    return Corpus(sentences, name=f"{corpus.name}, completed at {threshold}", weak=True)


def o_weighted(corpus: Corpus, gold: Corpus, config: NERConfig) -> Corpus:
    """``corpus`` with each unmatched word weighted by the gold taggers' mean ``O`` probability (see ``weighted``;
    ``hf_ecg.labelling.ensemble.o_weighted``, what ``generate --gold`` writes)."""
    from hf_ecg.labelling.ensemble import o_weighted as weighted
    from hf_ecg.labelling.ensemble import train_gold_taggers

    taggers = train_gold_taggers(gold, replace(config, epochs=20.0, recipe="two-stage"), [1, 2, 3])
    return weighted(corpus, taggers)


def self_trained(corpus: Corpus, threshold: float, gold: Corpus, config: NERConfig) -> Corpus:
    """``corpus`` relabelled by one round of self-training (see ``selftrain:T``)."""
    from hf_ecg.labelling.ensemble import TaggerEnsemble, ensemble_proba
    from hf_ecg.labelling.labeller import joined_spans
    from hf_ecg.taggers.training import train_tagger

    teacher = train_tagger([gold], config, 1, synthetic=[corpus], entity_types=gold.entity_types)
    if TEACHER_DIR is not None:  # kept for reading its errors on the test split
        teacher.save_pretrained(TEACHER_DIR)
    tokens = [s.tokens for s in corpus]
    found = TaggerEnsemble([teacher], threshold).spans_many(tokens)
    outside_label = teacher.labels.index("O")
    sentences = []
    for s, spans, p in zip(corpus, found, ensemble_proba([teacher], tokens), strict=True):
        joined = tuple(joined_spans(s.spans, spans))
        covered = {i for span in joined for i in range(span.start, span.end)}
        unknown = tuple(i for i in range(len(s.tokens)) if i not in covered and p[i][outside_label] < threshold)
        sentences.append(Sentence(s.tokens, joined, s.source, unknown=unknown))
    return Corpus(sentences, name=f"{corpus.name}, self-trained at {threshold}", weak=True)


def read_twenty(labelled: Corpus, silver: Corpus, truth: Corpus, rule: str, quality: dict) -> str:
    """Twenty silver sentences (seed 46) marked: ``[Type: name]`` the dictionary's, ``+[Type: name]`` added by the
    rule, ``?word`` unknown (out of the loss), ``word~0.42`` weighted under 0.9; the pool's gold labels below each."""
    lines = [
        f"# Twenty silver sentences labelled by the dictionary under the rule {rule}: [Type: name] a dictionary name,",
        "# +[Type: name] a name the rule added, ?word a token left out of the loss, word~w a token of weight w < 0.9.",
        "# Below each, the pool's own gold labels (a measure only; no rule reads them).",
        f"# silver vs the pool's gold: {json.dumps(quality)}",
        "",
    ]
    for k in sorted(random.Random(46).sample(range(len(silver)), min(20, len(silver)))):
        sentence, before = silver[k], {(s.start, s.end, s.label) for s in labelled[k].spans}
        words = list(sentence.tokens)
        for i in sentence.unknown:
            words[i] = f"?{words[i]}"
        for i, weight in enumerate(sentence.weights):
            if 0 < weight < 0.9 and i not in sentence.unknown:
                words[i] = f"{words[i]}~{weight:.2f}"
        for span in sorted(sentence.spans, key=lambda s: -s.start):
            mark = "" if (span.start, span.end, span.label) in before else "+"
            words[span.start : span.end] = [f"{mark}[{span.label}: {' '.join(words[span.start : span.end])}]"]
        gold = list(truth[k].tokens)
        for span in sorted(truth[k].spans, key=lambda s: -s.start):
            gold[span.start : span.end] = [f"[{span.label}: {' '.join(gold[span.start : span.end])}]"]
        lines += [f"{k}: {' '.join(words)}", f"   gold: {' '.join(gold)}", ""]
    return "\n".join(lines)


def silver_quality(silver: Corpus, truth: Corpus) -> dict[str, float]:
    """The silver labels against the pool's gold labels: entity precision and recall, and the share of the gold
    entity tokens the silver teaches as ``O`` (neither labelled nor unknown)."""
    found = {(k, s.start, s.end, s.label) for k, sentence in enumerate(silver) for s in sentence.spans}
    gold = {(k, s.start, s.end, s.label) for k, sentence in enumerate(truth) for s in sentence.spans}
    taught_o = total = 0
    for labelled, true in zip(silver, truth, strict=True):
        covered = {i for s in labelled.spans for i in range(s.start, s.end)} | set(labelled.unknown)
        for span in true.spans:
            for i in range(span.start, span.end):
                total += 1
                taught_o += i not in covered
    unknown = sum(len(s.unknown) for s in silver)
    tokens = sum(len(s.tokens) for s in silver)
    return {
        "precision": len(found & gold) / len(found) if found else 0.0,
        "recall": len(found & gold) / len(gold) if gold else 0.0,
        "entity_tokens_taught_o": taught_o / total if total else 0.0,
        "unknown_share": unknown / tokens if tokens else 0.0,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--gold", required=True, help="the gold sentences, DATA:N")
    parser.add_argument("--unlabelled", required=True, help="the text, DATA:START:STOP of a labelled pool")
    parser.add_argument("--test", required=True)
    parser.add_argument("--dictionary", action="append", required=True)
    parser.add_argument("--rule", default="distant", help="the rule (see above)")
    parser.add_argument("--seeds", default="1,2,3")
    parser.add_argument("--learning-rate", type=float, default=1e-4)
    parser.add_argument("--synthetic-epochs", type=float, default=None, help="the silver stage's epochs")
    parser.add_argument("--recipe", default="two-stage", help="how silver and gold are mixed (default two-stage)")
    parser.add_argument("--epochs", type=float, default=20.0, help="the gold (or the one) stage's epochs (20)")
    parser.add_argument("-o", "--output", type=Path, required=True)
    args = parser.parse_args()
    if args.output.exists():
        parser.error(f"{args.output} exists")
    global TEACHER_DIR
    TEACHER_DIR = args.output.with_suffix(".teacher")
    gold, pool, test = load_source(args.gold), load_source(args.unlabelled), load_source(args.test)
    dictionary = Dictionary.read(args.dictionary)
    config = NERConfig(
        seeds=[int(s) for s in args.seeds.split(",")],
        learning_rate=args.learning_rate,
        recipe=args.recipe,
        synthetic_epochs=args.synthetic_epochs,
        epochs=args.epochs,
    )
    labelled = dictionary.label([s.tokens for s in pool])
    silver = unknown_tokens(labelled, args.rule, 1, gold, config)
    quality = silver_quality(silver, pool)
    print(json.dumps(quality))
    args.output.with_suffix(".read-20.txt").write_text(read_twenty(labelled, silver, pool, args.rule, quality))
    report = evaluate_ner([gold], test, config, synthetic=[silver], dictionary=dictionary)
    report["silver"] = {"rule": args.rule, **quality}
    args.output.write_text(json.dumps(report, indent=1))
    print(
        f"{args.rule}: F1 {report['entity_f1_mean']:.3f} ± {report['entity_f1_std']:.3f}, "
        f"P {sum(r['entity_precision'] for r in report['runs']) / len(report['runs']):.3f}, "
        f"R {sum(r['entity_recall'] for r in report['runs']) / len(report['runs']):.3f}"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
