#!/bin/bash
# A generator that learned from the text as well: trained on the gold sentences and the text's sentences whose names the
# dictionary knows (`hf-ecg train --unlabelled POOL --dictionary DICT`), its shareable ten-times set (`--shareable`:
# no silver split, every sample checked against the text), scored by the committed protocol of its corpus.
# usage: [SET=silver] generator.sh bc45|bc45-450|jn186 SEED [ARM]   bc45-450: 450 sentences of BC5CDR's pool as the
#   text. ARM: once (default: the text in the own sentences' place), twice (--own-sentences 400 as well) or tN (once,
#   with N of the text's sentences asked for as templates: --text-sentences N).
#   SET=silver: the set with the silver split (the text labelled; private) instead of the shareable set.
#   Writes outputs/text-trained/NAME-ARM-gSEED (model), …-10x[-silver] (set), and
#   results/text-trained/NAME-ARM-gSEED[-silver].{card,manifest,ner}.json.
set -e
source .venv/bin/activate
R=results/text-trained
corpus=$1; seed=$2; arm=${3:-once}
source research/runs/text-trained/corpora.sh
case $arm in
  once) own=() ;;
  twice) own=(--own-sentences 400) ;;
  t[0-9]*) own=(--text-sentences ${arm#t}) ;;
  *) echo "unknown arm: $arm (once, twice or tN)" >&2; exit 2 ;;
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
score $S $out.ner.json
