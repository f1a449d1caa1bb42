#!/bin/bash
cd /work/main
export HF_HUB_OFFLINE=1 HF_DATASETS_OFFLINE=1 TOKENIZERS_PARALLELISM=false OMP_NUM_THREADS=1 MKL_NUM_THREADS=1
G=/work/shared/data/bc5cdr/train.tsv:45
T=/work/shared/data/bc5cdr/test.tsv
ner() { name=$1; shift; .venv/bin/hf-ecg evaluate ner "$@" --test $T --epochs 20 --learning-rate 1e-4 --seeds 1,2,3 -o /tmp/meas/$name.json > /tmp/meas/$name.log 2>&1; }
( ner bc5-gold+qalm --train $G --train results/bc5cdr-45/work/synthetic-qalm:45 ; ner bc5-gold --train $G ) &
( ner bc5-gold+qalm-filtered --train $G --train /tmp/meas/bc5cdr-filtered:45 ) &
wait
touch /tmp/meas/done
