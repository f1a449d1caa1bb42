"""hf-ecg generate with a logit bias on a middle block's requested tag (env TAG_BIAS) and on <ENDTEXT> after a
sentence ending in the last block (env END_BIAS): does a soft push toward the requested stop lower the redraws?"""
import os, sys
import torch
from hf_ecg.runtime import decoding_constraint as dcon
from hf_ecg.cli import main

TAG_BIAS = float(os.environ.get("TAG_BIAS", "0"))
orig = dcon.EntityConstraintLogitsProcessor.constrain
ENDTEXT = None
def constrain(self, scores, targets, full, unended):
    global ENDTEXT
    if ENDTEXT is None:
        ENDTEXT = max(self.stops.tolist(), key=lambda i: 0)  # placeholder, set below
    if TAG_BIAS:
        t = targets.to(scores.device)
        middle = t != END_ID
        if middle.any():
            rows = middle.nonzero().squeeze(1)
            scores[rows, t[rows]] += TAG_BIAS
    return orig(self, scores, targets, full, unended)
dcon.EntityConstraintLogitsProcessor.constrain = constrain
from transformers import AutoTokenizer
model = sys.argv[sys.argv.index("--model") + 1]
END_ID = AutoTokenizer.from_pretrained(model).convert_tokens_to_ids("<ENDTEXT>")
sys.exit(main(sys.argv[1:]))
