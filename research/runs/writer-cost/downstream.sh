#!/bin/bash
# Does training twice cost the tagger anything? JNLPBA 186 ten times (the set of ../training-twice/), tagger seed 3;
# BC5CDR 45 ten times from the twice-trained default generator (bc45d) and from the once-trained one (bc45-r1, the
# same first training), `-n 450 --seed 1`, every default, then the committed BC5CDR protocol, tagger seeds 1-3.
source .venv/bin/activate
D=/work/shared/data
R=results/writer-cost
while pgrep -f "bench_generation" > /dev/null; do sleep 10; done
hf-ecg evaluate ner --train $D/jnlpba/devel.tsv:186 --synthetic outputs/s14/jn186-10x --test $D/jnlpba/test.tsv \
  --learning-rate 5e-5 --seeds 3 -o $R/jnlpba-186-10x-twice-seed3.ner.json > outputs/s14/jn186-10x.ner3.log 2>&1
for name in bc45d bc45-r1; do
  out=outputs/s15/$name-10x
  mkdir -p outputs/s15
  [ -d $out ] || (time hf-ecg generate --model outputs/s14/$name -n 450 --seed 1 -o $out) > $out.log 2>&1
  hf-ecg evaluate ner --train $D/bc5cdr/train.tsv:45 --synthetic $out --test $D/bc5cdr/test.tsv \
    --learning-rate 1e-4 --seeds 1,2,3 -o $R/bc5cdr-45-10x-$name.ner.json > $out.ner.log 2>&1
done
