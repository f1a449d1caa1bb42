#!/bin/bash
source .venv/bin/activate
D=/work/shared/data
bash research/runs/redrawn-share/rft.sh outputs/after/jn186-is rft186 186 372
(time hf-ecg generate --model outputs/s13/rft186/model -n 1860 --seed 1 -o outputs/s13/rft186-10x) > outputs/s13/rft186-10x.log 2>&1
hf-ecg evaluate labels --data outputs/s13/rft186-10x --reference outputs/references/jnlpba/seed-1 --gold $D/jnlpba/devel.tsv:186 -o outputs/s13/rft186-10x.labels.json > /dev/null 2>&1
for s in 1 2 3; do
  (time hf-ecg evaluate ner --train $D/jnlpba/devel.tsv:186 --synthetic outputs/s13/rft186-10x --test $D/jnlpba/test.tsv --learning-rate 5e-5 --seeds $s -o outputs/s13/rft186-10x-seed$s.ner.json) > outputs/s13/rft186-ner-$s.log 2>&1
done
