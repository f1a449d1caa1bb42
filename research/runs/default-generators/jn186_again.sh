#!/bin/bash
# The whole JNLPBA 186 ten-times run again, alone (same model, seed and code): how much the writer/templates ratio
# moves between two runs of the same work.
source .venv/bin/activate
M=outputs/s17/jn186
out=outputs/s17/jn186-10x-again
rm -rf $out
(time hf-ecg generate --model $M -n 1860 --seed 1 -o $out) > $out.log 2>&1
python dev/generation_log_times.py $out.log > results/default-generators/jn186-10x-again.times.txt
python - <<'PY' >> results/default-generators/jn186-10x-again.times.txt
from hf_ecg.data.dataset_format import load_data_folder
a, b = load_data_folder("outputs/s17/jn186-10x"), load_data_folder("outputs/s17/jn186-10x-again")
same = sum(x == y for x, y in zip(zip(a["tokens"], a["ner_tags"]), zip(b["tokens"], b["ner_tags"])))
print(f"rows equal to the first run's: {same} of {a.num_rows}")
PY
