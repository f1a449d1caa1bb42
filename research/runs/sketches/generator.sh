#!/bin/bash
# A sketch generator (GeniusAug) and its ten-times set, scored by the committed protocol of its corpus.
# usage: generator.sh bc45|jn186 SEED [ARM] [MENTIONS]
#   ARM: text (default: the gold and 400 of the pool's sentences, labelled by the dictionary, --max-steps 450) or gold
#   (the gold sentences alone, three epochs). MENTIONS: generated (default: the generator writes each mention, the
#   ECG-QALM default's source) or own (each tag keeps its source's mention).
#   Writes outputs/sketches/NAME-ARM-gSEED (model), …-10x-MENTIONS (set) and
#   results/sketches/NAME-ARM-gSEED[-own].{card,manifest,ner}.json.
set -e
source .venv/bin/activate
R=results/sketches
corpus=$1; seed=$2; arm=${3:-text}; mentions=${4:-generated}
source research/runs/text-trained/corpora.sh
case $arm in
  text) learn=(--unlabelled $pool "${dict[@]}" --max-steps 450) ;;
  gold) learn=() ;;
  *) echo "unknown arm: $arm (text or gold)" >&2; exit 2 ;;
esac
case $mentions in
  generated) fill=(--mentions generated); tail= ;;
  own) fill=(); tail=-own ;;
  *) echo "unknown mentions: $mentions (generated or own)" >&2; exit 2 ;;
esac
M=outputs/sketches/$corpus-$arm-g$seed
mkdir -p outputs/sketches $R
if ! grep -q '"finished": true' $M/ecg_training_run.json 2>/dev/null; then
  how=--overwrite; [ -f $M/ecg_training_run.json ] && how=--resume
  (time hf-ecg train --data $train --first-n $n --layout sketch --model smollm2-135m --seed $seed "${learn[@]}" \
    -o $M $how) >> $M.log 2>&1
fi
cp $M/ecg_card.json $R/$corpus-$arm-g$seed.card.json
S=$M-10x-$mentions; out=$R/$corpus-$arm-g$seed$tail
[ -f $S/ecg_generation.json ] || (time hf-ecg generate --model $M --sketches $train:$n -n $x --seed 1 "${fill[@]}" \
  -o $S --overwrite) > $S.log 2>&1
cp $S/ecg_generation.json $out.manifest.json
score $S $out.ner.json
python dev/read_sketch_samples.py $S $train:$n > $out.read-20.txt
