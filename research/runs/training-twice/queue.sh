#!/bin/bash
# The item-1 runs one after another (each alone on the machine): `hf-ecg train` with every default, then the two
# 256-sample sets of `hf-ecg generate` with every default (accept.sh).
D=/work/shared/data
bash research/runs/training-twice/accept.sh jn186 $D/jnlpba/devel.tsv 186
bash research/runs/training-twice/accept.sh jn50 $D/jnlpba/devel.tsv 50
bash research/runs/training-twice/accept.sh bc50 $D/bc5cdr/train.tsv 50
