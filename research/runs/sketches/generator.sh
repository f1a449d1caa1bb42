#!/bin/bash
# A sketch generator (GeniusAug) and its ten-times set, scored by the committed protocol of its corpus.
# usage: [K=candidates] [MIX=share] [KEPT=share] [TRAIN_KEPT=share] [VARIANTS=n] generator.sh bc45|jn186 SEED [ARM] [MENTIONS]
#   ARM: text (default: the gold and 400 of the pool's sentences, labelled by the dictionary, --max-steps 450) or gold
#   (the gold sentences alone, three epochs). MENTIONS: generated (default: the generator writes each mention, the
#   ECG-QALM default's source) or own (each tag keeps its source's mention). K: --candidates (default 1).
#   MIX: --mixup (default 0). KEPT: --kept-share at generation (default: the share the generator learned with).
#   TRAIN_KEPT: train --sketch-kept-share (default 0.2). VARIANTS: train --sketch-variants (default 3; 1 is static
#   masking, each sentence tied to one sketch); either names the model and its set NAME-ARM[-keptS][-vN]-gSEED.
#   Writes outputs/sketches/NAME-ARM-gSEED (model), …-10x-MENTIONS[-kK][-mixMIX][-keptKEPT] (set) and, in results/sketches/CORPUS/,
#   ARM-gSEED.card.json and ARM-gSEED-SIZE[-written][-kK][-mixMIX][-keptKEPT].{manifest,ner}.json and .read-20.txt.
set -e
source .venv/bin/activate
corpus=$1; seed=$2; arm=${3:-text}; mentions=${4:-generated}; k=${K:-1}; mix=${MIX:-0}
train_kept=${TRAIN_KEPT:-0.2}; variants=${VARIANTS:-3}; kept=${KEPT:-$train_kept}
source research/runs/text-trained/corpora.sh
case $corpus in bc45) R=results/sketches/bc5cdr-45 ;; jn186) R=results/sketches/jnlpba-186 ;; esac
case $arm in
  text) learn=(--unlabelled $pool "${dict[@]}" --max-steps 450) ;;
  gold) learn=() ;;
  *) echo "unknown arm: $arm (text or gold)" >&2; exit 2 ;;
esac
case $mentions in
  generated) fill=(--mentions generated); tail=-written ;;
  own) fill=(); tail= ;;
  *) echo "unknown mentions: $mentions (generated or own)" >&2; exit 2 ;;
esac
[ $k = 1 ] && ktail= || ktail=-k$k
[ $mix = 0 ] || ktail=$ktail-mix$mix
[ $kept = $train_kept ] || ktail=$ktail-kept$kept
name=$arm; [ $train_kept = 0.2 ] || name=$name-kept$train_kept; [ $variants = 3 ] || name=$name-v$variants
M=outputs/sketches/$corpus-$name-g$seed
mkdir -p outputs/sketches $R
if ! grep -q '"finished": true' $M/ecg_training_run.json 2>/dev/null; then
  how=--overwrite; [ -f $M/ecg_training_run.json ] && how=--resume
  (time hf-ecg train --data $train --first-n $n --layout sketch --model smollm2-135m --seed $seed "${learn[@]}" \
    --sketch-kept-share $train_kept --sketch-variants $variants -o $M $how) >> $M.log 2>&1
fi
cp $M/ecg_card.json $R/$name-g$seed.card.json
S=$M-10x-$mentions$ktail; out=$R/$name-g$seed-$x$tail$ktail
[ -f $S/ecg_generation.json ] || (time hf-ecg generate --model $M --sketches $train:$n -n $x --seed 1 "${fill[@]}" \
  --candidates $k --mixup $mix --kept-share $kept -o $S --overwrite) > $S.log 2>&1
cp $S/ecg_generation.json $out.manifest.json
score $S $out.ner.json
python dev/read_sketch_samples.py $S $train:$n > $out.read-20.txt
