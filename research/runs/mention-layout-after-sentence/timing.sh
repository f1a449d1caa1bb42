#!/bin/bash
# After item1.sh: the writer's batch settings A/B on fixed templates, `make quickstart`, the bench with the
# after-sentence JNLPBA 186 generator, and the whole ten-times run again on this commit (its set compared with the
# one generated at dd3014b). Each alone.
source .venv/bin/activate
R=results/mention-layout-after-sentence
while pgrep -f "item1.sh|hf-ecg" > /dev/null; do sleep 10; done
python $R/writer_batch_ab.py outputs/s16/jn186-as outputs/s16/jn186-as-10x > $R/writer-batch-ab.txt 2>/dev/null
rm -rf outputs/quickstart-s15 && mv outputs/quickstart outputs/quickstart-s15
(time make quickstart) > outputs/s16/quickstart.log 2>&1
python scripts/bench_generation.py --compare outputs/s16/jn186-as > $R/bench-generation.txt 2> outputs/s16/bench.log
out=outputs/s16/jn186-as-10x-again
rm -rf $out
(time hf-ecg generate --model outputs/s16/jn186-as -n 1860 --seed 1 -o $out) > $out.log 2>&1
python dev/generation_log_times.py $out.log > $R/jn186-as-10x-again.times.txt
python - <<'PY' >> $R/jn186-as-10x-again.times.txt
from hf_ecg.data.dataset_format import load_data_folder
a = load_data_folder("outputs/s16/jn186-as-10x"); b = load_data_folder("outputs/s16/jn186-as-10x-again")
same = sum(x["tokens"] == y["tokens"] and x["ner_tags"] == y["ner_tags"] for x, y in zip(a, b))
print(f"same sentences and labels as the dd3014b set: {same} of {len(a)}")
PY
