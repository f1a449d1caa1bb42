#!/bin/bash
# One model for both families: a sketch generator asked for entity sequences (ECG-QALM's requests, each asked as the
# gap sketch of its tags: hf-ecg generate without --sketches), its ten-times set with written mentions, scored by the
# committed protocol of its corpus.
# usage: joint.sh bc45|jn186 SEED   (the sketch generator outputs/sketches/NAME-text-gSEED of generator.sh)
set -e
source .venv/bin/activate
corpus=$1; seed=$2
source research/runs/text-trained/corpora.sh
case $corpus in bc45) R=results/sketches/bc5cdr-45 ;; jn186) R=results/sketches/jnlpba-186 ;; esac
M=outputs/sketches/$corpus-text-g$seed; S=$M-10x-entity-sequences; out=$R/text-g$seed-$x-entity-sequences
[ -f $S/ecg_generation.json ] || (time hf-ecg generate --model $M -n $x --seed 1 --mentions generated -o $S \
  --overwrite) > $S.log 2>&1
cp $S/ecg_generation.json $out.manifest.json
score $S $out.ner.json
