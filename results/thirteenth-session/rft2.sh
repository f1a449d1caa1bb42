#!/bin/bash
# A generator trained again on gold + its own sentences that pass every rule (complete, no redraw refused, no tag
# forced, no tag piece, no sentence ending before the last token), the decoding rules kept as gold's.
# usage: rft2.sh BASE_MODEL NAME FIRST_N SYNTH_N
source .venv/bin/activate
M=$1; name=$2; N=$3; S=$4
D=/work/shared/data/jnlpba/devel.tsv
W=outputs/s13/$name
mkdir -p $W
[ -d $W/synth ] || hf-ecg generate --model $M -n $S --seed 7 --mentions random -o $W/synth > $W/synth.log 2>&1
python - "$D" "$N" "$W/synth" "$W/train.tsv" <<'PY'
import sys, glob, datasets
gold, n, synth, out = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
def sentences(path):
    block = []
    for line in open(path):
        line = line.rstrip("\n")
        if not line:
            if block: yield block
            block = []
        elif not line.startswith("-DOCSTART-"):
            block.append(line)
    if block: yield block
g = list(sentences(gold))[:n]
ds = datasets.load_dataset(synth, split="train")
names = ds.features["ner_tags"].feature.names
kept = []
for r in ds:
    toks = r["tokens"]
    if not r["complete"] or r["refused_redraws"] or r["forced_tags"] or r["tag_pieces"] or "." in toks[:-1]:
        continue
    kept.append([f"{t}\t{names[i]}" for t, i in zip(toks, r["ner_tags"])])
with open(out, "w") as f:
    for b in g + kept: f.write("\n".join(b) + "\n\n")
print(len(g), "gold +", len(kept), "of", len(ds), "synthetic sentences ->", out)
PY
(time hf-ecg train --data $W/train.tsv --model smollm2-135m -o $W/model) > $W/train.log 2>&1
python - "$M/ecg_config.json" "$W/model/ecg_config.json" <<'PY'
import json, sys
base, new = (json.load(open(p)) for p in sys.argv[1:])
for key in ("sentence_breaks", "unended_share", "sentence_endings"):
    print(key, "trained:", new.get(key), "-> gold's:", base.get(key)); new[key] = base.get(key)
json.dump(new, open(sys.argv[2], "w"), indent=2)
PY
NOLABELS=1 bash results/thirteenth-session/gen2.sh $W/model $name-gen
