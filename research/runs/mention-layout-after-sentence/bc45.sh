#!/bin/bash
# BC5CDR 45 ten times from the after-sentence default generator (item1.sh's bc45), `-n 450 --seed 1`, every default,
# then the committed BC5CDR protocol, tagger seeds 1-3.
source .venv/bin/activate
D=/work/shared/data
R=results/mention-layout-after-sentence
while pgrep -f "bash .ci/run|pytest" > /dev/null; do sleep 10; done
out=outputs/s16/bc45-10x
[ -d $out ] || (time hf-ecg generate --model outputs/s16/bc45 -n 450 --seed 1 -o $out) > $out.log 2>&1
python dev/generation_log_times.py $out.log > $R/bc45-10x.times.txt
cp $out/ecg_generation.json $R/bc45-10x.json
hf-ecg evaluate ner --train $D/bc5cdr/train.tsv:45 --synthetic $out --test $D/bc5cdr/test.tsv \
  --learning-rate 1e-4 --seeds 1,2,3 -o $R/bc5cdr-45-10x-bc45.ner.json > $out.ner.log 2>&1
