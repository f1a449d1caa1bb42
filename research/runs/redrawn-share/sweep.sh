#!/bin/bash
# decoding levers against the redrawn share, JNLPBA 186 default generator, bank mentions
source .venv/bin/activate
M=outputs/after/jn186-is
for seed in 1 2; do
 for name in default ease anystop; do
  case $name in default) opt="";; ease) opt="--end-at-sentence-end";; anystop) opt="--block-end any-stop";; esac
  out=outputs/s13/$name-s$seed
  [ -d $out ] || hf-ecg generate --model $M -n 256 --seed $seed --mentions random $opt -o $out > $out.log 2>&1
  hf-ecg evaluate labels --data $out --reference outputs/references/jnlpba/seed-1 -o $out.labels.json > /dev/null 2>&1
  python - <<PY
import json
m=json.load(open("$out/ecg_generation.json"))
l=json.load(open("$out.labels.json"))
print("$name s$seed", {k:v for k,v in m.items() if 'redraw' in k or 'complete' in k}, "F1", l.get("f1", l.get("overall")), l.get("disagreements"))
PY
 done
done
