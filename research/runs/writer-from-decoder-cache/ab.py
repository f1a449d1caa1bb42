"""Same templates, the writer of one checkout: templates' and writer's seconds, per round (run with PYTHONPATH=<src>)."""
import sys, time, random, inspect, hashlib, torch
import hf_ecg
from hf_ecg.modeling import load_ecg_model
from hf_ecg.runtime.decoding import make_decoder
from hf_ecg.runtime.decoding_config import DecodingConfig
from hf_ecg.runtime.filling import training_bank
from hf_ecg.runtime.mention_writer import MentionWriter
from hf_ecg.data.statistics import CorpusStatistics
from hf_ecg.synthetic.entity_sequences import make_sampler
model_dir, rounds = sys.argv[1], int(sys.argv[2])
new = "keep_prefixes" in inspect.signature(make_decoder(*load_ecg_model(model_dir, dtype=torch.bfloat16)).decode).parameters
model, tok, cfg = load_ecg_model(model_dir, dtype=torch.bfloat16)
stats = CorpusStatistics.from_dict(cfg.corpus_statistics)
w = MentionWriter(model, tok, cfg, known=training_bank(cfg))
w.write([make_decoder(model, tok, cfg, DecodingConfig(seed=99)).decode([["protein"]] * 8)[0].template], seed=0)  # warm-up
T = W = 0.0; tries = rej = slots = 0
for r in range(rounds):
    seqs = make_sampler("gold", stats).sample(256, random.Random(r))
    dec = make_decoder(model, tok, cfg, DecodingConfig(seed=r))
    t = time.perf_counter(); out = dec.decode(seqs, keep_prefixes=True) if new else dec.decode(seqs); tt = time.perf_counter() - t
    t = time.perf_counter()
    res = w.write([d.template for d in out], seed=r, **({"prefixes": [d.prompt_prefix for d in out]} if new else {}))
    wt = time.perf_counter() - t
    T += tt; W += wt; tries += res.slots + res.redrawn; rej += sum(res.rejected.values()); slots += res.slots
    print(f"{'new' if new else 'old'} round {r}: templates {tt:.1f} s, writer {wt:.1f} s ({wt / tt:.3f}); {hashlib.md5(repr([d.template.tokens for d in out]).encode()).hexdigest()[:8]}", flush=True)
print(f"{'new' if new else 'old'} {model_dir}: templates {T:.1f} s, writer {W:.1f} s, writer/templates {W / T:.3f}, slots {slots}, tries {tries}, rejected {rej / tries:.3f}")
