#!/bin/bash
# JNLPBA 186, the default generator (trained twice): a whole default run of ten times the gold (`-n 1860 --seed 1`,
# every default), timed, then the downstream protocol with tagger seed 1 (`jnlpba-186-10x-seed1.ner.json`).
source .venv/bin/activate
D=/work/shared/data
while pgrep -f "accept.sh jn50" > /dev/null; do sleep 10; done
out=outputs/s14/jn186-10x
[ -d $out ] || (time hf-ecg generate --model outputs/s14/jn186 -n 1860 --seed 1 -o $out) > $out.log 2>&1
cp $out/ecg_generation.json results/training-twice/runs/jn186-10x.json
hf-ecg evaluate ner --train $D/jnlpba/devel.tsv:186 --synthetic $out --test $D/jnlpba/test.tsv --learning-rate 5e-5 \
  --seeds 1 -o results/training-twice/jnlpba-186-10x-seed1.ner.json > $out.ner.log 2>&1
