#!/bin/bash
# The item-1 runs one after another (each alone on the machine).
D=/work/shared/data
bash results/fourteenth-session/accept.sh jn50 $D/jnlpba/devel.tsv 50
bash results/fourteenth-session/accept.sh bc50 $D/bc5cdr/train.tsv 50
bash results/fourteenth-session/accept.sh jn186 $D/jnlpba/devel.tsv 186
