#!/bin/bash
# The ECG-QALM default's ten-times set and a GeniusAug ten-times set together, scored by the committed protocol of
# their corpus: gold + both sets (each 10x the gold).
# usage: together.sh bc45|jn186 ECG_SET GENIUS_SET REPORT
set -e
source .venv/bin/activate
corpus=$1
source research/runs/text-trained/corpora.sh
hf-ecg evaluate ner --train $train:$n --synthetic $2 --synthetic $3 --test $test --learning-rate $lr --seeds 1,2,3 \
  -o $4 > $4.log 2>&1
