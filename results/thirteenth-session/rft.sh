#!/bin/bash
# Does a generator trained again on its own accepted sentences (plus the gold ones) redraw less?
# usage: rft.sh BASE_MODEL NAME FIRST_N SYNTH_N
source .venv/bin/activate
M=$1; name=$2; N=$3; S=$4
D=/work/shared/data/jnlpba/devel.tsv
W=outputs/s13/$name
mkdir -p $W
[ -d $W/synth ] || hf-ecg generate --model $M -n $S --seed 7 --mentions random -o $W/synth > $W/synth.log 2>&1
hf-ecg export --data $W/synth -o $W/synth.tsv --overwrite
python - "$D" "$N" "$W/synth.tsv" "$W/train.tsv" <<'PY'
import sys
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
g = list(sentences(gold))[:n]; s = list(sentences(synth))
with open(out, "w") as f:
    for b in g + s: f.write("\n".join(b) + "\n\n")
print(len(g), "gold +", len(s), "synthetic sentences ->", out)
PY
(time hf-ecg train --data $W/train.tsv --model smollm2-135m -o $W/model) > $W/train.log 2>&1
NOLABELS=1 bash results/thirteenth-session/gen2.sh $W/model $name-gen
