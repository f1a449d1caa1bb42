"""A saved tagger on a test split beside a name dictionary: the tagger's entity-like spans with a confidence floor
(every word's entity probability at least T), the lookup first and the tagger where it finds nothing, and the
tagger's false positives by kind (no gold entity there, a boundary, a type), each a dictionary name or not.

    python dev/join_floor.py TAGGER TEST DICTIONARY... > OUT.txt
"""

from __future__ import annotations

import argparse
from collections import Counter

from hf_ecg.data.sources import load_source
from hf_ecg.labelling.dictionary import Dictionary
from hf_ecg.labelling.ensemble import TaggerEnsemble
from hf_ecg.labelling.labeller import joined_spans
from hf_ecg.runtime.tags import spans_to_tags
from hf_ecg.taggers.metrics import entity_scores
from hf_ecg.taggers.tagger import Tagger

FLOORS = (0.0, 0.5, 0.7, 0.8, 0.9, 0.95, 0.98)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("tagger")
    parser.add_argument("test")
    parser.add_argument("dictionary", nargs="+")
    args = parser.parse_args()
    test, dictionary = load_source(args.test), Dictionary.read(args.dictionary)
    tagger = Tagger.from_pretrained(args.tagger)
    probabilities = tagger.predict_proba([s.tokens for s in test])
    tagger.predict_proba = lambda sentences: probabilities  # read once, every floor from the same reading
    tokens, gold = [s.tokens for s in test], [s.tags for s in test]
    lookup = [dictionary.spans(t) for t in tokens]

    def scores(spans: list) -> dict[str, float]:
        return entity_scores(gold, [spans_to_tags(s, len(t)) for s, t in zip(spans, tokens, strict=True)])

    raw = entity_scores(gold, tagger.predict(tokens))
    print(f"lookup: {scores(lookup)}\ntagger, every predicted span (as evaluate ner scores it): {raw}")
    for floor in FLOORS:
        found = TaggerEnsemble([tagger], floor).spans_many(tokens)
        alone = scores(found)
        first = scores([joined_spans(d, f) for d, f in zip(lookup, found, strict=True)])
        print(
            f"floor {floor}: entity-like spans P {alone['precision']:.3f} R {alone['recall']:.3f} F1 {alone['f1']:.3f}"
            f" | lookup first F1 {first['f1']:.3f} (P {first['precision']:.3f}, R {first['recall']:.3f})"
        )
    kinds: Counter = Counter()
    missed: Counter = Counter()
    for sentence, found, words in zip(test, TaggerEnsemble([tagger]).spans_many(tokens), tokens, strict=True):
        true = {(s.start, s.end, s.label) for s in sentence.spans}
        for span in found:
            if (span.start, span.end, span.label) in true:
                continue
            overlap = [s for s in sentence.spans if s.start < span.end and span.start < s.end]
            same = any((s.start, s.end) == (span.start, span.end) for s in overlap)
            kind = "no gold entity" if not overlap else ("type" if same else "boundary")
            name = dictionary.type_of(words[span.start : span.end]) is not None
            kinds[(kind, "a dictionary name" if name else "not a dictionary name")] += 1
            if not overlap:
                missed[(span.label, " ".join(words[span.start : span.end]).lower())] += 1
    print("false positives:", dict(kinds))
    print("most frequent with no gold entity:", missed.most_common(40))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
