#!/bin/bash
# Issue 48 item 1 for the 50-sentence subsets with one after-sentence row a slot (BC5CDR 45: bc45.sh; JNLPBA 186's
# ten-times run: jn186.sh): `hf-ecg train` defaults, then `hf-ecg generate -n 256` at sampling seeds 1 and 2.
D=/work/shared/data
export OUT=outputs/s17 RES=results/seventeenth-session
A=results/fourteenth-session/accept.sh
$A jn50 $D/jnlpba/devel.tsv 50
$A bc50 $D/bc5cdr/train.tsv 50
