#!/bin/bash
# Training twice's two-seed check: `hf-ecg train` with its defaults, then `hf-ecg generate` with its
# defaults (written mentions), 256 samples at sampling seeds 1 and 2; the manifests and the warnings kept.
# usage: accept.sh NAME DATA FIRST_N      (writes $OUT/NAME, NAME-s1, NAME-s2 and their logs, OUT=outputs/s14 unless
#        set, and the manifests and card data into $RES/runs, RES=results/training-twice unless set)
source .venv/bin/activate
name=$1; data=$2; n=$3
OUT=${OUT:-outputs/s14}; RES=${RES:-results/training-twice}
M=$OUT/$name
[ -f $M/ecg_card.json ] && grep -q own_sentences\":\ { $M/ecg_card.json || \
  (time hf-ecg train --data $data --first-n $n --model smollm2-135m -o $M) > $M.log 2>&1
for seed in 1 2; do
  out=$OUT/$name-s$seed
  [ -d $out ] || (time hf-ecg generate --model $M -n 256 --seed $seed -o $out) > $out.log 2>&1
  mkdir -p $RES/runs
  cp $out/ecg_generation.json $RES/runs/$name-s$seed.json
  grep -c "undertrained" $out.log | sed "s/^/$name-s$seed undertrained warnings: /"
done
cp $M/ecg_card.json $RES/runs/$name.card.json
cp $M/own-sentences/ecg_generation.json $RES/runs/$name.own-sentences.json 2>/dev/null
