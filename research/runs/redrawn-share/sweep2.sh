#!/bin/bash
source .venv/bin/activate
M=outputs/after/jn186-is
for b in 1 2 3; do for seed in 1 2; do
  out=outputs/s13/tagbias$b-s$seed
  [ -d $out ] || TAG_BIAS=$b python research/runs/redrawn-share/biased.py generate --model $M -n 256 --seed $seed --mentions random -o $out > $out.log 2>&1
  hf-ecg evaluate labels --data $out --reference outputs/references/jnlpba/seed-1 -o $out.labels.json > /dev/null 2>&1
done; done
