#!/bin/bash
# The comparison row: a default generator (research/runs/headline/generator.sh NAME SEED), which never saw the pool,
# writing the same shareable set as the text-trained ones, scored by the same protocol.
# usage: default-shareable.sh bc45|jn186 SEED   Writes results/text-trained/NAME-default-gSEED.{manifest,ner}.json.
set -e
source .venv/bin/activate
R=results/text-trained
corpus=$1; seed=$2
source research/runs/text-trained/corpora.sh
M=outputs/headline/$corpus-g$seed
S=outputs/text-trained/$corpus-default-g$seed-10x
[ -f $S/ecg_generation.json ] || hf-ecg generate --model $M -n $x --seed 1 --shareable --unlabelled $pool \
  "${dict[@]}" --gold $train:$n -o $S --overwrite > $S.log 2>&1
cp $S/ecg_generation.json $R/$corpus-default-g$seed.manifest.json
score $S $R/$corpus-default-g$seed.ner.json
