"""What the text-copy rule drops of a real set and of copies planted into it. The set is the BC5CDR 45 dictionary-and-
text set (its slots filled with the names the pool holds), the text the pool it was written with (4,515 sentences);
the planted copies are pool sentences holding a name, labelled by the dictionary (the set's own silver split), in
five forms: word for word, word for word with the names left O, with other names of the same type, with one ordinary
word changed, with one ordinary word left out. Each sample is judged as `hf-ecg filter --rule text-copy` judges it.

    python research/runs/text-copy/planted.py -o results/text-copy/bc45-recipe-pool.json
"""

from __future__ import annotations

import argparse
import json
import random
import time
from collections import Counter
from pathlib import Path

from hf_ecg.data.dataset_format import read_generated
from hf_ecg.data.silver import load_silver
from hf_ecg.data.sources import load_unlabelled_source
from hf_ecg.selection.config import SelectionConfig
from hf_ecg.selection.shared_runs import SharedRunIndex, copy_record, is_copy

SET = Path("results/dictionaries/sets/bc45-recipe-pool")
TEXT = "../shared/data/bc5cdr/train.tsv:45:4560"
FORMS = ("word for word", "names left O", "other names", "one word changed", "one word left out")


def planted(sentence, names_by_type, rng):
    """The five forms of a labelled pool sentence, as (tokens, tags)."""
    tokens, tags = list(sentence.tokens), list(sentence.tags)
    ordinary = [i for i, tag in enumerate(tags) if tag == "O" and tokens[i].isalpha()]
    swapped_tokens, swapped_tags, at = [], [], 0
    for span in sentence.spans:
        swapped_tokens += tokens[at : span.start]
        swapped_tags += tags[at : span.start]
        other = rng.choice([n for n in names_by_type[span.label] if n != tuple(tokens[span.start : span.end])])
        swapped_tokens += list(other)
        swapped_tags += [f"B-{span.label}"] + [f"I-{span.label}"] * (len(other) - 1)
        at = span.end
    swapped_tokens += tokens[at:]
    swapped_tags += tags[at:]
    changed = rng.choice(ordinary)
    left_out = rng.choice(ordinary)
    return {
        "word for word": (tokens, tags),
        "names left O": (tokens, ["O"] * len(tokens)),
        "other names": (swapped_tokens, swapped_tags),
        "one word changed": ([*tokens[:changed], "several", *tokens[changed + 1 :]], tags),
        "one word left out": (tokens[:left_out] + tokens[left_out + 1 :], tags[:left_out] + tags[left_out + 1 :]),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("-o", "--output", type=Path, required=True)
    parser.add_argument("--planted", type=int, default=200, help="pool sentences planted, in each form")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    config = SelectionConfig(rules=["text-copy"])
    manifest, table = read_generated(SET)
    names = manifest.label_names
    samples = [
        (tokens, [names[k] for k in tags])
        for tokens, tags in zip(table.column("tokens").to_pylist(), table.column("ner_tags").to_pylist(), strict=True)
    ]
    text = load_unlabelled_source(TEXT)
    silver = load_silver(SET)
    started = time.perf_counter()
    index = SharedRunIndex(text)
    indexed = time.perf_counter()
    runs = {i: index.compare(tokens, [tag != "O" for tag in tags]) for i, (tokens, tags) in enumerate(samples)}
    judged = time.perf_counter()
    kept = [i for i, run in runs.items() if not is_copy(run, config)]

    rng = random.Random(args.seed)
    names_by_type: dict[str, set[tuple[str, ...]]] = {}
    for sentence in silver:
        for span in sentence.spans:
            names_by_type.setdefault(span.label, set()).add(tuple(sentence.tokens[span.start : span.end]))
    names_by_type = {label: sorted(found) for label, found in names_by_type.items()}
    with_names = [
        s for s in silver if s.spans and any(t == "O" and w.isalpha() for w, t in zip(s.tokens, s.tags, strict=True))
    ]
    chosen = rng.sample(with_names, args.planted)
    forms: dict[str, Counter[str]] = {form: Counter() for form in FORMS}
    for sentence in chosen:
        for form, (tokens, tags) in planted(sentence, names_by_type, rng).items():
            run = index.compare(tokens, [tag != "O" for tag in tags])
            why = "run" if run.length >= config.max_shared_run else "whole" if run.whole else "rouge_l"
            forms[form]["dropped" if is_copy(run, config) else "kept"] += 1
            if is_copy(run, config):
                forms[form][f"by {why}"] += 1
    report = {
        "set": str(SET),
        "text": TEXT,
        "text_sentences": len(text),
        "samples": len(samples),
        "record": copy_record(runs, kept, config, len(text)),
        "dropped": [" ".join(samples[i][0]) for i in runs if i not in set(kept)],
        "seconds": {"index": round(indexed - started, 2), "judge_samples": round(judged - indexed, 2)},
        "planted": {"sentences": args.planted, "seed": args.seed, "forms": {f: dict(c) for f, c in forms.items()}},
    }
    args.output.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    print(json.dumps(report["planted"], indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
