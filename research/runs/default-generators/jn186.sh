#!/bin/bash
# JNLPBA 186 with after-sentence rows one a slot: `hf-ecg train` defaults, then a whole default ten-times run
# (`-n 1860 --seed 1`; templates and writer timed from the progress bar) and the committed JNLPBA protocol, tagger
# seeds 1-3. Waits for other torch jobs.
source .venv/bin/activate
D=/work/shared/data
R=results/default-generators
M=outputs/s17/jn186
while pgrep -f "hf-ecg (train|generate|evaluate)|pytest" > /dev/null; do sleep 10; done
[ -f $M/ecg_card.json ] && grep -q own_sentences\":\ { $M/ecg_card.json || \
  (time hf-ecg train --data $D/jnlpba/devel.tsv --first-n 186 --model smollm2-135m -o $M) > $M.log 2>&1
mkdir -p $R/runs && cp $M/ecg_card.json $R/runs/jn186.card.json
out=$M-10x
[ -d $out ] || (time hf-ecg generate --model $M -n 1860 --seed 1 -o $out) > $out.log 2>&1
python dev/generation_log_times.py $out.log > $R/jn186-10x.times.txt
cp $out/ecg_generation.json $R/jn186-10x.json
hf-ecg evaluate ner --train $D/jnlpba/devel.tsv:186 --synthetic $out --test $D/jnlpba/test.tsv \
  --learning-rate 5e-5 --seeds 1,2,3 -o $R/jnlpba-186-10x-jn186.ner.json > $out.ner.log 2>&1
