#!/bin/bash
# The dictionary-and-text recipe as a user runs it (generate --dictionary --unlabelled POOL --gold, then evaluate ner
# --synthetic SET, three tagger seeds), with and without the short forms the text defines and the gold taggers'
# weights on the silver split. The generator: the text-trained sketch generator g42 of research/runs/sketches.
# usage: product.sh bc45|jn186 ARM
#   ARM: plain (--no-abbreviations --no-silver-weights), abbreviations (--no-silver-weights), weights
#   (--no-abbreviations) or both (the defaults).
# Writes outputs/abbreviations/NAME-ARM (set, log) and results/abbreviations/CORPUS/product-ARM.{manifest,ner}.json.
set -e
source .venv/bin/activate
corpus=$1; arm=$2
source research/runs/text-trained/corpora.sh
case $corpus in bc45) R=results/abbreviations/bc5cdr-45 ;; jn186) R=results/abbreviations/jnlpba-186 ;; esac
case $arm in
  plain) flags=(--no-abbreviations --no-silver-weights) ;;
  abbreviations) flags=(--no-silver-weights) ;;
  weights) flags=(--no-abbreviations) ;;
  both) flags=() ;;
  *) echo "unknown arm: $arm (plain, abbreviations, weights or both)" >&2; exit 2 ;;
esac
M=outputs/sketches/$corpus-text-g42; S=outputs/abbreviations/$corpus-$arm
mkdir -p outputs/abbreviations $R
[ -f $S/ecg_generation.json ] || (time hf-ecg generate --model $M --sketches $train:$n -n $x --seed 1 \
  "${dict[@]}" --unlabelled $pool --gold $train:$n "${flags[@]}" -o $S --overwrite) > $S.log 2>&1
cp $S/ecg_generation.json $R/product-$arm.manifest.json
score $S $R/product-$arm.ner.json
