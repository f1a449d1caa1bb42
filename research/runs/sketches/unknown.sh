#!/bin/bash
# A sketch set through the unknown rule (words the gold taggers or the dictionary read as names, left O, out of the
# tagger's loss), scored by the committed protocol of its corpus.
# usage: unknown.sh bc45|jn186 SET REPORT
set -e
source .venv/bin/activate
corpus=$1
source research/runs/text-trained/corpora.sh
hf-ecg filter --generated $2 --gold $train:$n --rule unknown "${dict[@]}" -o $2-unknown --overwrite > $2-unknown.log 2>&1
cp $2-unknown/ecg_generation.json ${3%.ner.json}.manifest.json
score $2-unknown $3
