"""The templates a text-trained generator learned from, read against the pool's own labels.

The pools (BC5CDR's, JNLPBA's) are labelled, so the names the dictionary misses are known: this counts, among the
text's sentences `hf-ecg train --unlabelled --dictionary` judged, those that keep a gold name as template text (a name
left `O`), in the kept and in the dropped ones, and writes twenty kept ones with the dictionary's names marked
`[Type: ...]` and the names it missed marked `{Type: ...}`.
usage: python research/runs/text-trained/read_templates.py --seed 42 -o results/text-trained/bc45-templates-g42
  JNLPBA: --data ../shared/data/jnlpba/devel.tsv --first-n 186 --pool ../shared/data/jnlpba/devel.tsv:186:1739
  --dictionary protein=outputs/dict/jnlpba-mesh/protein.txt --dictionary results/dictionaries/names/jnlpba-186-mined
"""

import argparse
import json
import random

from hf_ecg.data.sources import load_source, load_unlabelled_source
from hf_ecg.labelling.dictionary import Dictionary
from hf_ecg.training.text_sentences import text_sentence_count, text_sentences


def gold_names(sentence) -> list[tuple[int, int, str]]:
    return [(span.start, span.end, span.label) for span in sentence.spans]


def missed(dictionary_spans, gold_spans) -> list[tuple[int, int, str]]:
    """The gold names none of whose tokens the dictionary labelled: they stay in the template as text."""
    covered = {i for start, end, _ in dictionary_spans for i in range(start, end)}
    return [g for g in gold_spans if not covered & set(range(g[0], g[1]))]


def marked(tokens, dictionary_spans, left_o) -> str:
    words = list(tokens)
    spans = [(*span, "[%s: %s]") for span in dictionary_spans] + [(*span, "{%s: %s}") for span in left_o]
    for start, end, label, form in sorted(spans, reverse=True):
        words[start:end] = [form % (label, " ".join(words[start:end]))]
    return " ".join(words)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", default="../shared/data/bc5cdr/train.tsv")
    parser.add_argument("--first-n", type=int, default=45)
    parser.add_argument("--pool", default="../shared/data/bc5cdr/train.tsv:45:4560")
    parser.add_argument(
        "--dictionary", action="append", help="TYPE=FILE or a folder, repeatable (default: outputs/dict/bc5cdr)"
    )
    parser.add_argument("--seed", type=int, default=42)
    parser.add_argument("-o", "--output", required=True, help="OUTPUT.json (counts) and OUTPUT.read-20.txt")
    args = parser.parse_args()
    args.dictionary = args.dictionary or ["outputs/dict/bc5cdr"]
    gold = load_source(f"{args.data}:{args.first_n}")
    pool = load_source(args.pool)
    text = load_unlabelled_source(args.pool)
    dictionary = Dictionary.read(args.dictionary)
    count = text_sentence_count(len(gold), None)
    added = text_sentences(gold, text, dictionary, count, seed=args.seed)
    reference = {tuple(s.tokens): s for s in pool}
    kept = {tuple(s.tokens): s for s in added.corpus}
    # the judged ones are redrawn as text_sentences draws them
    cleaned, _ = dictionary.without_common_words([(s.tokens, s.tags) for s in gold])
    labelled = cleaned.label(text)
    order = [i for i, s in enumerate(labelled) if s.spans]
    random.Random(args.seed).shuffle(order)
    judged = order[: added.record["judged"]]
    counts = {"kept": [0, 0], "dropped": [0, 0]}  # sentences, sentences with a gold name left O
    names = {"kept": [0, 0], "dropped": [0, 0]}  # gold names, gold names left O
    for i in judged:
        tokens = tuple(text[i])
        side = "kept" if tokens in kept else "dropped"
        spans = [(s.start, s.end, s.label) for s in labelled[i].spans]
        left_o = missed(spans, gold_names(reference[tokens]))
        counts[side][0] += 1
        counts[side][1] += bool(left_o)
        names[side][0] += len(reference[tokens].spans)
        names[side][1] += len(left_o)
    lines = []
    for sentence in list(added.corpus)[:20]:
        tokens = tuple(sentence.tokens)
        spans = [(s.start, s.end, s.label) for s in sentence.spans]
        left_o = missed(spans, gold_names(reference[tokens]))
        lines.append(f"{len(lines) + 1:2d}. {'LEFT-O ' if left_o else ''}{marked(tokens, spans, left_o)}")
    report = {
        "command": "python research/runs/text-trained/read_templates.py "
        + " ".join(
            f"--{k.replace('_', '-')} {v}"
            for k, values in vars(args).items()
            if k != "output"
            for v in (values if isinstance(values, list) else [values])
        )
        + f" -o {args.output}",
        "record": added.record,
        "sentences": {k: {"judged": v[0], "with_a_gold_name_left_O": v[1]} for k, v in counts.items()},
        "gold_names": {k: {"all": v[0], "left_O": v[1]} for k, v in names.items()},
    }
    with open(f"{args.output}.json", "w") as f:
        json.dump(report, f, indent=2)
    with open(f"{args.output}.read-20.txt", "w") as f:
        f.write(
            f"Twenty kept templates of the text (seed {args.seed}): [Type: name] the dictionary's names (the slots), "
            "{Type: name} the pool's gold names the dictionary missed (left as text).\n\n"
        )
        f.write("\n".join(lines) + "\n")
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
