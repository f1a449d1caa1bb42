#!/bin/bash
# Training twice's two-seed check with one after-sentence row a slot on BC5CDR 50 (at the bound, 24.8%, in
# ../mention-layout-after-sentence/; BC5CDR 45: bc45.sh): `hf-ecg train` defaults, then `hf-ecg generate -n 256` at
# sampling seeds 1 and 2.
D=/work/shared/data
export OUT=outputs/s17 RES=results/default-generators
research/runs/training-twice/accept.sh bc50 $D/bc5cdr/train.tsv 50
