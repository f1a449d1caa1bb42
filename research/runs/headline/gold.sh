#!/bin/bash
# Gold alone, the committed protocol of each corpus, tagger seeds 1-3: the row every other row is read against.
# BC5CDR with the MeSH dictionaries (python scripts/mesh_dictionaries.py -o $DICT), for the lookup and the joins.
set -e
source .venv/bin/activate
D=${DATA:-../shared/data}
DICT=${DICT:-outputs/dict/bc5cdr}
R=results/headline
mkdir -p $R
[ -f $R/bc45-gold.ner.json ] || hf-ecg evaluate ner --train $D/bc5cdr/train.tsv:45 --test $D/bc5cdr/test.tsv \
  --dictionary $DICT --learning-rate 1e-4 --seeds 1,2,3 -o $R/bc45-gold.ner.json > outputs/headline/bc45-gold.log 2>&1
[ -f $R/jn186-gold.ner.json ] || hf-ecg evaluate ner --train $D/jnlpba/devel.tsv:186 --test $D/jnlpba/test.tsv \
  --learning-rate 5e-5 --seeds 1,2,3 -o $R/jn186-gold.ner.json > outputs/headline/jn186-gold.log 2>&1
