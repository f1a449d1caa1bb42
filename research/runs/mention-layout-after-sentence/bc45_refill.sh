#!/bin/bash
# Templates or mentions? The after-sentence BC5CDR 45 set's templates (outputs/s16/bc45-10x) with their slots written
# again by the in-sentence generator bc45d of ../writer-cost/ (outputs/s14/bc45d), then the committed protocol.
source .venv/bin/activate
D=/work/shared/data
R=results/mention-layout-after-sentence
while pgrep -f "bash .ci/run|pytest" > /dev/null; do sleep 10; done
out=outputs/s16/bc45-10x-refill-bc45d
[ -d $out ] || python dev/refill_mentions.py --model outputs/s14/bc45d --source outputs/s16/bc45-10x --output $out --seed 1 > $out.log 2>&1
cp $out/refill.json $R/bc45-10x-refill-bc45d.refill.json
hf-ecg evaluate ner --train $D/bc5cdr/train.tsv:45 --synthetic $out --test $D/bc5cdr/test.tsv \
  --learning-rate 1e-4 --seeds 1,2,3 -o $R/bc5cdr-45-10x-bc45-refill-bc45d.ner.json > $out.ner.log 2>&1
