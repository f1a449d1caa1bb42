#!/bin/bash
# The comparison row: a default generator (research/runs/headline/generator.sh bc45 SEED), which never saw the pool,
# writing the same shareable set as the text-trained ones, scored by the same protocol.
# usage: default-shareable.sh SEED   Writes results/text-trained/bc45-default-gSEED.{manifest,ner}.json.
set -e
source .venv/bin/activate
D=${DATA:-../shared/data}
DICT=${DICT:-outputs/dict/bc5cdr}
R=results/text-trained
seed=$1
train="$D/bc5cdr/train.tsv"; pool="$D/bc5cdr/train.tsv:45:4560"
M=outputs/headline/bc45-g$seed
S=outputs/text-trained/bc45-default-g$seed-10x
[ -f $S/ecg_generation.json ] || hf-ecg generate --model $M -n 450 --seed 1 --shareable --unlabelled $pool \
  --dictionary $DICT --gold $train:45 -o $S --overwrite > $S.log 2>&1
cp $S/ecg_generation.json $R/bc45-default-g$seed.manifest.json
[ -f $R/bc45-default-g$seed.ner.json ] || hf-ecg evaluate ner --train $train:45 --synthetic $S --test \
  $D/bc5cdr/test.tsv --dictionary $DICT --learning-rate 1e-4 --seeds 1,2,3 -o $R/bc45-default-g$seed.ner.json \
  > $S.ner.log 2>&1
