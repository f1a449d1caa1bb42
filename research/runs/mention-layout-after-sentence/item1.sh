#!/bin/bash
# Training twice's two-seed check with the after-sentence default: JNLPBA 186 (trained before: outputs/s16/jn186-as),
# JNLPBA 50, BC5CDR 45 and BC5CDR 50, each `hf-ecg train` defaults then `hf-ecg generate -n 256` at sampling seeds 1
# and 2.
D=/work/shared/data
export OUT=outputs/s16 RES=results/mention-layout-after-sentence
A=research/runs/training-twice/accept.sh
$A jn186-as $D/jnlpba/devel.tsv 186
$A jn50 $D/jnlpba/devel.tsv 50
$A bc45 $D/bc5cdr/train.tsv 45
$A bc50 $D/bc5cdr/train.tsv 50
