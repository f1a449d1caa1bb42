#!/bin/bash
# A generator trained again on gold + S of its own sentences. KEEP=all: every sentence, the trained generator's
# decoding-rule statistics as its training file gives them (runs rft50, rft186). KEEP=passing: only sentences that
# pass every rule, and the rule statistics (sentence_breaks, unended_share, sentence_endings) set back to the gold
# generator's (run rft50f).
# usage: rft.sh BASE_MODEL NAME FIRST_N SYNTH_N [all|passing]
source .venv/bin/activate
M=$1; name=$2; N=$3; S=$4; KEEP=${5:-all}
D=/work/shared/data/jnlpba/devel.tsv
W=outputs/s13/$name
mkdir -p $W
[ -d $W/synth ] || hf-ecg generate --model $M -n $S --seed 7 --mentions random -o $W/synth > $W/synth.log 2>&1
python research/runs/redrawn-share/add_own_sentences.py "$D" "$N" "$W/synth" "$W/train.tsv" "$KEEP"
(time hf-ecg train --data $W/train.tsv --model smollm2-135m -o $W/model) > $W/train.log 2>&1
if [ "$KEEP" = passing ]; then
python - "$M/ecg_config.json" "$W/model/ecg_config.json" <<'PY'
import json, sys
base, new = (json.load(open(p)) for p in sys.argv[1:])
for key in ("sentence_breaks", "unended_share", "sentence_endings"):
    print(key, "trained:", new.get(key), "-> gold's:", base.get(key)); new[key] = base.get(key)
json.dump(new, open(sys.argv[2], "w"), indent=2)
PY
fi
NOLABELS=1 bash research/runs/redrawn-share/gen2.sh $W/model $name-gen
