"""Write a training file: the first N gold sentences, then a generated set's sentences (all, or with `passing` only
those that pass every rule: complete, no redraw refused, no tag forced, no tag piece, no `.` before the last token).
usage: add_own_sentences.py GOLD.tsv N SET_DIR OUT.tsv all|passing"""

import sys

import datasets

gold, n, synth, out, keep = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4], sys.argv[5]


def sentences(path):
    block = []
    for line in open(path):
        line = line.rstrip("\n")
        if not line:
            if block:
                yield block
            block = []
        elif not line.startswith("-DOCSTART-"):
            block.append(line)
    if block:
        yield block


def passes(row) -> bool:
    return bool(
        row["complete"]
        and not (row["refused_redraws"] or row["forced_tags"] or row["tag_pieces"])
        and "." not in row["tokens"][:-1]
    )


g = list(sentences(gold))[:n]
ds = datasets.load_dataset(synth, split="train")
names = ds.features["ner_tags"].feature.names
kept = [
    [f"{t}\t{names[i]}" for t, i in zip(r["tokens"], r["ner_tags"], strict=True)]
    for r in ds
    if keep == "all" or passes(r)
]
with open(out, "w") as f:
    for b in g + kept:
        f.write("\n".join(b) + "\n\n")
print(len(g), "gold +", len(kept), "of", len(ds), "synthetic sentences ->", out)
