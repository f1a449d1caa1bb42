#!/bin/bash
# usage: gen2.sh MODEL NAME [extra generate options]
source .venv/bin/activate
M=$1; name=$2; shift 2
for seed in 1 2; do
  out=outputs/s13/$name-s$seed
  [ -d $out ] || hf-ecg generate --model $M -n 256 --seed $seed --mentions random "$@" -o $out > $out.log 2>&1
  [ -n "$NOLABELS" ] || hf-ecg evaluate labels --data $out --reference outputs/references/jnlpba/seed-1 -o $out.labels.json > /dev/null 2>&1
done
