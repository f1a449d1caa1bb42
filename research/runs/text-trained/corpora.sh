# The corpora of the text-trained runs, sourced by generator.sh and default-shareable.sh: sets train, n (gold
# sentences), pool (the text), test, lr (the tagger's), x (the set's size) and dict (the --dictionary arguments).
# BC5CDR's dictionary: python scripts/mesh_dictionaries.py -o $DICT; JNLPBA's: MeSH's proteins (the same script,
# -o $JDICT --protein protein) and the names mined from the pool (results/dictionaries/names/jnlpba-186-mined).
D=${DATA:-../shared/data}
DICT=${DICT:-outputs/dict/bc5cdr}
JDICT=${JDICT:-outputs/dict/jnlpba-mesh}
case $corpus in
  bc45) train="$D/bc5cdr/train.tsv"; n=45; pool="$D/bc5cdr/train.tsv:45:4560"; test=$D/bc5cdr/test.tsv; lr=1e-4; x=450
    dict=(--dictionary $DICT) ;;
  bc45-450) train="$D/bc5cdr/train.tsv"; n=45; pool="$D/bc5cdr/train.tsv:45:495"; test=$D/bc5cdr/test.tsv; lr=1e-4
    x=450; dict=(--dictionary $DICT) ;;
  jn186) train="$D/jnlpba/devel.tsv"; n=186; pool="$D/jnlpba/devel.tsv:186:1739"; test=$D/jnlpba/test.tsv; lr=5e-5
    x=1860; dict=(--dictionary protein=$JDICT/protein.txt --dictionary results/dictionaries/names/jnlpba-186-mined) ;;
  *) echo "unknown corpus: $corpus (bc45, bc45-450 or jn186)" >&2; exit 2 ;;
esac
# score SET REPORT [OPTION...]: the corpus's committed tagger protocol on gold + SET (three seeds), with any further
# `evaluate ner` options, into REPORT, unless REPORT is there already; its log beside SET (SET.ner.log, or $LOG).
score() {
  [ -f $2 ] || hf-ecg evaluate ner --train $train:$n --synthetic $1 --test $test "${dict[@]}" --learning-rate $lr \
    --seeds 1,2,3 -o $2 "${@:3}" > ${LOG:-$1.ner.log} 2>&1
}
