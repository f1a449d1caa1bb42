#!/bin/bash
# A second BC5CDR 45 generator of the same defaults, training seed 43 (bc45 is seed 42): are the shorter templates
# of bc45 this layout's or one training's? Ten times (`-n 450 --seed 1`), then the committed BC5CDR protocol.
source .venv/bin/activate
D=/work/shared/data
R=results/default-generators
M=outputs/s17/bc45-t43
while pgrep -f "jn186.sh|hf-ecg (train|generate|evaluate)|pytest" > /dev/null; do sleep 10; done
[ -f $M/ecg_card.json ] && grep -q own_sentences\":\ { $M/ecg_card.json || \
  (time hf-ecg train --data $D/bc5cdr/train.tsv --first-n 45 --model smollm2-135m --seed 43 -o $M) > $M.log 2>&1
mkdir -p $R/runs && cp $M/ecg_card.json $R/runs/bc45-t43.card.json
out=$M-10x
[ -d $out ] || (time hf-ecg generate --model $M -n 450 --seed 1 -o $out) > $out.log 2>&1
python dev/generation_log_times.py $out.log > $R/bc45-t43-10x.times.txt
cp $out/ecg_generation.json $R/bc45-t43-10x.json
hf-ecg evaluate ner --train $D/bc5cdr/train.tsv:45 --synthetic $out --test $D/bc5cdr/test.tsv \
  --learning-rate 1e-4 --seeds 1,2,3 -o $R/bc5cdr-45-10x-bc45-t43.ner.json > $out.ner.log 2>&1
