import sys, numpy as np
from transformers import AutoTokenizer
from hf_ecg.data.corpus import read_conll
from hf_ecg.runtime.blocks import decompose, tag_label
tok = AutoTokenizer.from_pretrained("outputs/jn186")
for path, n in [("../shared/data/jnlpba/devel.tsv", 186), ("../shared/data/bc5cdr/train.tsv", 45)]:
    corpus = read_conll(path)
    sents = list(corpus.sentences)[:n] if hasattr(corpus, "sentences") else list(corpus)[:n]
    by = {"only": [], "first": [], "middle": [], "last": []}
    for s in sents:
        t, _ = decompose(s.tokens, s.spans)
        blocks, cur = [], []
        for w in t.tokens:
            cur.append(w)
            if tag_label(w) is not None:
                blocks.append(cur); cur = []
        blocks.append(cur)
        for i, b in enumerate(blocks):
            kind = "only" if len(blocks) == 1 else "first" if i == 0 else "last" if i == len(blocks) - 1 else "middle"
            text = " ".join(w for w in b if tag_label(w) is None)
            by[kind].append(len(tok(text, add_special_tokens=False)["input_ids"]) + 1)
    for k, v in by.items():
        v = np.array(v); print(path.split("/")[-2], k, len(v), "p50", np.percentile(v, 50), "p95", np.percentile(v, 95), "p99", np.percentile(v, 99), "max", v.max())
