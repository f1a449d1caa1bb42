#!/bin/bash
# The comparison row: a default generator (research/runs/headline/generator.sh NAME SEED), which never saw the pool,
# writing the same shareable set as the text-trained ones, scored by the same protocol.
# usage: default-shareable.sh bc45|jn186 SEED   Writes results/text-trained/NAME-default-gSEED.{manifest,ner}.json.
set -e
source .venv/bin/activate
D=${DATA:-../shared/data}
DICT=${DICT:-outputs/dict/bc5cdr}
JDICT=${JDICT:-outputs/dict/jnlpba-mesh}
R=results/text-trained
corpus=$1; seed=$2
case $corpus in
  bc45) train="$D/bc5cdr/train.tsv"; n=45; pool="$D/bc5cdr/train.tsv:45:4560"; test=$D/bc5cdr/test.tsv; lr=1e-4; x=450
    dict=(--dictionary $DICT) ;;
  jn186) train="$D/jnlpba/devel.tsv"; n=186; pool="$D/jnlpba/devel.tsv:186:1739"; test=$D/jnlpba/test.tsv; lr=5e-5
    x=1860; dict=(--dictionary protein=$JDICT/protein.txt --dictionary results/dictionaries/names/jnlpba-186-mined) ;;
esac
M=outputs/headline/$corpus-g$seed
S=outputs/text-trained/$corpus-default-g$seed-10x
[ -f $S/ecg_generation.json ] || hf-ecg generate --model $M -n $x --seed 1 --shareable --unlabelled $pool \
  "${dict[@]}" --gold $train:$n -o $S --overwrite > $S.log 2>&1
cp $S/ecg_generation.json $R/$corpus-default-g$seed.manifest.json
[ -f $R/$corpus-default-g$seed.ner.json ] || hf-ecg evaluate ner --train $train:$n --synthetic $S --test $test \
  "${dict[@]}" --learning-rate $lr --seeds 1,2,3 -o $R/$corpus-default-g$seed.ner.json > $S.ner.log 2>&1
