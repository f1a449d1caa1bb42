#!/bin/bash
# JNLPBA 186 with mention layout after-sentence: a whole default ten-times run (templates and writer timed from the
# progress bar), then the committed JNLPBA protocol, tagger seeds 1-3. Waits for the training to finish.
source .venv/bin/activate
D=/work/shared/data
R=results/mention-layout-after-sentence
M=${1:-outputs/s16/jn186-as}
while pgrep -f "hf-ecg train" > /dev/null; do sleep 10; done
out=$M-10x
[ -d $out ] || (time hf-ecg generate --model $M -n 1860 --seed 1 -o $out) > $out.log 2>&1
python dev/generation_log_times.py $out.log > $R/$(basename $out).times.txt
cp $out/ecg_generation.json $R/$(basename $out).json
hf-ecg evaluate ner --train $D/jnlpba/devel.tsv:186 --synthetic $out --test $D/jnlpba/test.tsv \
  --learning-rate 5e-5 --seeds 1,2,3 -o $R/jnlpba-186-10x-$(basename $M).ner.json > $out.ner.log 2>&1
