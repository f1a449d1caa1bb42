"""Which blocks are drawn again, and why: decode N gold-sampled sequences with a model, log every redraw."""
import json, random, sys, collections
import torch
from hf_ecg.modeling import load_ecg_model
from hf_ecg.data.statistics import CorpusStatistics
from hf_ecg.synthetic.entity_sequences import make_sampler
from hf_ecg.runtime.decoding import ChainedDecoder, DecodingConfig
from hf_ecg.runtime import decoding_cache as dc, decoding_base as db

model_dir, n, seed, keep = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4] == "keep"
model, tok, cfg = load_ecg_model(model_dir, dtype=torch.float32)
stats = CorpusStatistics.from_dict(cfg.corpus_statistics)
seqs = make_sampler("gold", stats).sample(n, random.Random(seed))
dec = ChainedDecoder(model, tok, cfg, DecodingConfig(seed=seed, rewind_run_on=keep))
log = []
orig_rewind = db.BlockDecoder._rewind_to_ending
def rewind(self, row):
    before = list(row.block_ids)
    r = orig_rewind(self, row)
    if r:
        log.append({"kind": "rewind", "last": False, "tokens": len(before) - len(row.block_ids) - 1, "context": " ".join(row.words[-8:]),
                    "block": " ".join(self._block_words(before)), "kept": " ".join(self._block_words(row.block_ids + [row.pending]))})
    return r
db.BlockDecoder._rewind_to_ending = rewind
orig_redraw = dc.TemplateRow.redraw
def redraw(row, *, tag_sampled):
    last = row.block == len(row.targets) - 1
    full = len(row.block_ids) + 1 >= dec.config.max_block_tokens
    kind = "ended-rejected" if tag_sampled else ("limit" if full else "in-progress")
    log.append({"kind": kind, "last": last, "tokens": len(row.block_ids), "context": " ".join(row.words[-8:]),
                "block": " ".join(dec._block_words(row.block_ids)), "target": tok.convert_ids_to_tokens(row.target)})
    return orig_redraw(row, tag_sampled=tag_sampled)
dc.TemplateRow.redraw = redraw

def _unused(self, row):
    before = list(row.block_ids)
    r = orig_cut(self, row)
    if r:
        log.append({"kind": "cut", "last": True, "tokens": len(before) - len(row.block_ids), "context": " ".join(row.words[-8:]),
                    "block": " ".join(self._block_words(before)), "kept": " ".join(self._block_words(row.block_ids))})
    return r

res = dec.decode(seqs)
kept = sum(r.model_tokens for r in res); red = sum(r.redrawn_tokens for r in res)
print(f"kept {kept} redrawn {red} share {red/(kept+red):.1%} complete {sum(r.complete for r in res)/len(res):.1%} "
      f"words/sent {sum(len([w for w in r.template.tokens]) for r in res)/len(res):.1f}")
agg = collections.Counter(); cnt = collections.Counter()
for e in log:
    key = (e["kind"], e["last"]); agg[key] += e["tokens"]; cnt[key] += 1
for key in sorted(agg): print(key, cnt[key], "blocks", agg[key], "tokens", f"{agg[key]/(kept+red):.1%}")
json.dump({"log": log, "templates": [" ".join(r.template.tokens) for r in res]}, open(sys.argv[5], "w"), indent=1)
