#!/bin/bash
# BC5CDR 45 with after-sentence rows one a slot: training twice's two-seed check (`accept.sh`: train defaults, generate
# -n 256 at seeds 1 and 2), then ten times (`-n 450 --seed 1`, every default) and the committed BC5CDR protocol,
# tagger seeds 1-3.
source .venv/bin/activate
D=/work/shared/data
export OUT=outputs/s17 RES=results/default-generators
research/runs/training-twice/accept.sh bc45 $D/bc5cdr/train.tsv 45
out=$OUT/bc45-10x
[ -d $out ] || (time hf-ecg generate --model $OUT/bc45 -n 450 --seed 1 -o $out) > $out.log 2>&1
python dev/generation_log_times.py $out.log > $RES/bc45-10x.times.txt
cp $out/ecg_generation.json $RES/bc45-10x.json
hf-ecg evaluate ner --train $D/bc5cdr/train.tsv:45 --synthetic $out --test $D/bc5cdr/test.tsv \
  --learning-rate 1e-4 --seeds 1,2,3 -o $RES/bc5cdr-45-10x-bc45.ner.json > $out.ner.log 2>&1
