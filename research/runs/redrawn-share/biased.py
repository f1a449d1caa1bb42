"""hf-ecg generate with a logit bias (env TAG_BIAS) on the requested tag of every block before the last: does a soft
push toward the requested stop lower the redraws?  usage: TAG_BIAS=1 python biased.py generate --model M ..."""

import os
import sys

from transformers import AutoTokenizer

from hf_ecg.cli import main
from hf_ecg.runtime import decoding_constraint as dcon

TAG_BIAS = float(os.environ.get("TAG_BIAS", "0"))
END_ID = AutoTokenizer.from_pretrained(sys.argv[sys.argv.index("--model") + 1]).convert_tokens_to_ids("<ENDTEXT>")
constrain = dcon.EntityConstraintLogitsProcessor.constrain


def biased(self, scores, targets, full, unended):
    if TAG_BIAS:
        t = targets.to(scores.device)
        rows = (t != END_ID).nonzero().squeeze(1)  # rows in a block before the last
        scores[rows, t[rows]] += TAG_BIAS
    return constrain(self, scores, targets, full, unended)


dcon.EntityConstraintLogitsProcessor.constrain = biased
sys.exit(main(sys.argv[1:]))
