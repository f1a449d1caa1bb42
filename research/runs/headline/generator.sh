#!/bin/bash
# One default generator and its ten-times set, scored by the committed protocol of its corpus.
# usage: generator.sh bc45|jn186 SEED   (the generator's training seed; the set is sampled at seed 1)
# Writes outputs/headline/NAME-gSEED (model), …-10x (set), and results/headline/NAME-gSEED.{card,manifest,ner}.json.
set -e
source .venv/bin/activate
D=${DATA:-../shared/data}
R=results/headline
corpus=$1; seed=$2
case $corpus in
  bc45) train="$D/bc5cdr/train.tsv"; n=45; test=$D/bc5cdr/test.tsv; lr=1e-4; x=450 ;;
  jn186) train="$D/jnlpba/devel.tsv"; n=186; test=$D/jnlpba/test.tsv; lr=5e-5; x=1860 ;;
esac
M=outputs/headline/$corpus-g$seed
mkdir -p outputs/headline $R
# trained twice when its card records the own sentences; a run stopped midway resumes
if ! grep -q '"own_sentences": {' $M/ecg_card.json 2>/dev/null; then
  how=--overwrite; [ -f $M/ecg_training_run.json ] && how=--resume
  (time hf-ecg train --data $train --first-n $n --model smollm2-135m --seed $seed -o $M $how) >> $M.log 2>&1
fi
cp $M/ecg_card.json $R/$corpus-g$seed.card.json
[ -f $M-10x/ecg_generation.json ] || (time hf-ecg generate --model $M -n $x --seed 1 -o $M-10x --overwrite) \
  > $M-10x.log 2>&1
cp $M-10x/ecg_generation.json $R/$corpus-g$seed.manifest.json
[ -f $R/$corpus-g$seed.ner.json ] || hf-ecg evaluate ner --train $train:$n --synthetic $M-10x --test $test \
  --learning-rate $lr --seeds 1,2,3 -o $R/$corpus-g$seed.ner.json > $M-10x.ner.log 2>&1
