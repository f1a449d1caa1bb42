#!/bin/bash
# Training twice's two-seed check run again at this folder's code on BC5CDR 50 (the corpus at the bound in
# ../mention-layout-after-sentence/): `hf-ecg train` defaults, then `hf-ecg generate -n 256` at sampling seeds 1 and 2
# (written mentions). Run alone.
export OUT=outputs/s19 RES=results/writer-in-batch
research/runs/training-twice/accept.sh bc50 /work/shared/data/bc5cdr/train.tsv 50
