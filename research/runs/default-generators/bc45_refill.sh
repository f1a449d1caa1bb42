#!/bin/bash
# Writers compared on fixed templates: the after-sentence BC5CDR 45 set of ../mention-layout-after-sentence/
# (outputs/s16/bc45-10x) with its slots written again by this folder's generator (one row a slot), then the committed
# protocol; the same templates with the s16 writer scored 0.525 +- 0.011, with the in-sentence bc45d writer
# 0.549 +- 0.001.
source .venv/bin/activate
D=/work/shared/data
R=results/default-generators
out=outputs/s17/s16-bc45-10x-refill-bc45
[ -d $out ] || python dev/refill_mentions.py --model outputs/s17/bc45 --source outputs/s16/bc45-10x --output $out --seed 1 > $out.log 2>&1
cp $out/refill.json $R/s16-bc45-10x-refill-bc45.refill.json
hf-ecg evaluate ner --train $D/bc5cdr/train.tsv:45 --synthetic $out --test $D/bc5cdr/test.tsv \
  --learning-rate 1e-4 --seeds 1,2,3 -o $R/bc5cdr-45-10x-s16-bc45-refill-bc45.ner.json > $out.ner.log 2>&1
