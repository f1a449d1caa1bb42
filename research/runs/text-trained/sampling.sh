#!/bin/bash
# One text-trained generator's shareable set written at another sampling temperature (generator.sh's model, the same
# command with --temperature T), scored by the same protocol, and twenty of its samples drawn to be read.
# usage: sampling.sh bc45|bc45-450|jn186 SEED ARM T [N]   N: samples (default: the corpus's ten-times set); with N
#   below it, only the set and its twenty samples (no score).
#   Writes outputs/text-trained/NAME-ARM-gSEED-tT[-N] and results/text-trained/NAME-ARM-gSEED-tT.{manifest,ner}.json,
#   …-tT[-N].read-20.txt.
set -e
source .venv/bin/activate
R=results/text-trained
corpus=$1; seed=$2; arm=$3; t=$4
source research/runs/text-trained/corpora.sh
n_samples=${5:-$x}
M=outputs/text-trained/$corpus-$arm-g$seed
name=$corpus-$arm-g$seed-t$t; [ "$n_samples" = "$x" ] || name=$name-$n_samples
S=outputs/text-trained/$name
[ -f $S/ecg_generation.json ] || hf-ecg generate --model $M -n $n_samples --seed 1 --temperature $t --shareable \
  --gold $train:$n --unlabelled $pool "${dict[@]}" -o $S --overwrite > $S.log 2>&1
python dev/read_twenty.py $S --title "Twenty samples of $name's shareable set (seed 46), entities marked as the set \
labels them" > $R/$name.read-20.txt
[ "$n_samples" = "$x" ] || exit 0
cp $S/ecg_generation.json $R/$name.manifest.json
score $S $R/$name.ner.json
