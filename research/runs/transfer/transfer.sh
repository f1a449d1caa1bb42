#!/bin/bash
# Style transfer: another domain's labelled sentences written by the target's sketch generator (the text-trained
# outputs/sketches/CORPUS-text-gSEED of ../sketches/generator.sh), scored by the committed protocol of the target
# corpus beside the untransferred sentences.
# usage: [K=candidates] [VOCAB=1] [MENTIONS=own|generated] [RECIPE=concat] transfer.sh craft-bc45|ggp-jn186 SEED [ARM]
#   ARM: transferred (default: --candidates K, chosen for the target text, the whole training file with its labels
#   unread), raw-concat (the same source sentences untransferred, mixed with the gold) or raw-two-stage (those
#   sentences first, then the gold). K: candidates a sketch (default 3). VOCAB=1: --target-vocabulary.
#   MENTIONS: own (default: each tag keeps its source's name), generated (the generator writes each name) or
#   dictionary (the target corpus's dictionary names, research/runs/text-trained/corpora.sh). RECIPE=concat scores a
#   transferred set mixed with the gold (report …-concat) instead of first, then the gold.
#   Writes outputs/transfer/PAIR-… (sets) and results/transfer/PAIR/*.{ner,manifest}.json and *.read-20.txt.
set -e
source .venv/bin/activate
pair=$1; seed=$2; arm=${3:-transferred}; k=${K:-3}; mentions=${MENTIONS:-own}
D=${DATA:-../shared/data}
case $pair in
  craft-bc45) corpus=bc45; src=$D/craft-chem/train.tsv; map=CHEBI=Chemical; R=results/transfer/craft-bc5cdr-45 ;;
  ggp-jn186) corpus=jn186; src=$D/bionlp11id-ggp/train.tsv; map=Protein=protein; R=results/transfer/ggp-jnlpba-186 ;;
  *) echo "unknown pair: $pair (craft-bc45 or ggp-jn186)" >&2; exit 2 ;;
esac
source research/runs/text-trained/corpora.sh
O=outputs/transfer; mkdir -p $O $R
case $arm in
  raw-concat|raw-two-stage)
    raw=$O/$pair-raw-$x.tsv
    [ -f $raw ] || python dev/source_sentences.py $src $map $x $raw
    LOG=$raw.$arm.ner.log score $raw $R/$arm-$x.ner.json --recipe ${arm#raw-}
    exit 0 ;;
  transferred) ;;
  *) echo "unknown arm: $arm (transferred, raw-concat or raw-two-stage)" >&2; exit 2 ;;
esac
case $mentions in
  own) fill=(); tail= ;;
  generated) fill=(--mentions generated); tail=-written ;;
  dictionary) fill=("${dict[@]}"); tail=-dictnames ;;
  *) echo "unknown mentions: $mentions (own, generated or dictionary)" >&2; exit 2 ;;
esac
vocab=(); [ "${VOCAB:-0}" = 1 ] && vocab=(--target-vocabulary) && tail=$tail-vocab
M=outputs/sketches/$corpus-text-g$seed; name=g$seed-$x-k$k$tail; S=$O/$pair-$name
[ -f $S/ecg_generation.json ] || (time hf-ecg generate --model $M --sketches $src --type-map $map -n $x --seed 1 \
  --candidates $k --target-text $train "${vocab[@]}" "${fill[@]}" -o $S --overwrite) > $S.log 2>&1
cp $S/ecg_generation.json $R/$name.manifest.json
if [ -n "${RECIPE:-}" ]; then
  LOG=$S.$RECIPE.ner.log score $S $R/$name-$RECIPE.ner.json --recipe $RECIPE
  exit 0
fi
score $S $R/$name.ner.json
python dev/read_sketch_samples.py $S $src --type-map $map > $R/$name.read-20.txt
