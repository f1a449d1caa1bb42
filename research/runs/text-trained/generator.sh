#!/bin/bash
# A generator that learned from the text as well: trained on the gold sentences and the text's sentences whose names the
# dictionary knows (`hf-ecg train --unlabelled POOL --dictionary DICT`), its shareable ten-times set (`--shareable`:
# no silver split, every sample checked against the text), scored by the committed protocol of its corpus.
# usage: [SET=silver] generator.sh bc45|bc45-450|jn186 SEED [ARM]   bc45-450: 450 sentences of BC5CDR's pool as the
#   text. ARM: once (default: the text in the own sentences' place) or twice (--own-sentences 400 as well).
#   SET=silver: the set with the silver split (the text labelled; private) instead of the shareable set.
#   Writes outputs/text-trained/NAME-ARM-gSEED (model), …-10x[-silver] (set), and
#   results/text-trained/NAME-ARM-gSEED[-silver].{card,manifest,ner}.json.
# BC5CDR's dictionary: python scripts/mesh_dictionaries.py -o $DICT; JNLPBA's: MeSH's proteins (the same script, -o
# $JDICT) and the names mined from the pool (results/dictionaries/names/jnlpba-186-mined).
set -e
source .venv/bin/activate
D=${DATA:-../shared/data}
DICT=${DICT:-outputs/dict/bc5cdr}
JDICT=${JDICT:-outputs/dict/jnlpba-mesh}
R=results/text-trained
corpus=$1; seed=$2; arm=${3:-once}
case $corpus in
  bc45) train="$D/bc5cdr/train.tsv"; n=45; pool="$D/bc5cdr/train.tsv:45:4560"; test=$D/bc5cdr/test.tsv; lr=1e-4; x=450
    dict=(--dictionary $DICT) ;;
  bc45-450) train="$D/bc5cdr/train.tsv"; n=45; pool="$D/bc5cdr/train.tsv:45:495"; test=$D/bc5cdr/test.tsv; lr=1e-4
    x=450; dict=(--dictionary $DICT) ;;
  jn186) train="$D/jnlpba/devel.tsv"; n=186; pool="$D/jnlpba/devel.tsv:186:1739"; test=$D/jnlpba/test.tsv; lr=5e-5
    x=1860; dict=(--dictionary protein=$JDICT/protein.txt --dictionary results/dictionaries/names/jnlpba-186-mined) ;;
esac
case $arm in
  once) own=() ;;
  twice) own=(--own-sentences 400) ;;
esac
case ${SET:-shareable} in
  shareable) share=(--shareable --gold $train:$n); tail= ;;
  silver) share=(); tail=-silver ;;
esac
M=outputs/text-trained/$corpus-$arm-g$seed
mkdir -p outputs/text-trained $R
if ! grep -q '"finished": true' $M/ecg_training_run.json 2>/dev/null; then
  how=--overwrite; [ -f $M/ecg_training_run.json ] && how=--resume
  (time hf-ecg train --data $train --first-n $n --model smollm2-135m --seed $seed --unlabelled $pool \
    "${dict[@]}" "${own[@]}" -o $M $how) >> $M.log 2>&1
fi
cp $M/ecg_card.json $R/$corpus-$arm-g$seed.card.json
S=$M-10x$tail; out=$R/$corpus-$arm-g$seed$tail
[ -f $S/ecg_generation.json ] || (time hf-ecg generate --model $M -n $x --seed 1 "${share[@]}" --unlabelled $pool \
  "${dict[@]}" -o $S --overwrite) > $S.log 2>&1
cp $S/ecg_generation.json $out.manifest.json
[ -f $out.ner.json ] || hf-ecg evaluate ner --train $train:$n --synthetic $S --test $test \
  "${dict[@]}" --learning-rate $lr --seeds 1,2,3 -o $out.ner.json > $S.ner.log 2>&1
