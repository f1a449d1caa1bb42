"""Measure the tag-piece rules: the same generator, entity sequences and seed under each rule set.

    python dev/tag_pieces_sweep.py --model GENERATOR --num-samples 200 \
        --output results/tag-pieces/bc-lora.sweep.json

Rule sets (``--rules``, repeat; default all four): ``mask`` (neither rule: the mask alone, as before),
``tag-pieces`` (``redraw_tag_pieces``, the default), ``unrequested-tag`` (``redraw_unrequested_tag``) and
``both``. For each it decodes ``--num-samples`` templates of entity sequences drawn from the generator's
training statistics and prints one JSON line: the share of samples with tag pieces in their O text
(``hf_ecg.runtime.tag_pieces``) and their count, the health shares (complete, under 5 tokens, repetition,
second sentence, mean length), forced blocks, block draws per block and tokens thrown away per kept
token (what the redraws cost), and the seconds it took (alone on the machine to compare them).

``--dtype`` (repeat) runs each rule set in each dtype (default float32, as the results in
``results/tag-pieces/`` were measured): ``--rules tag-pieces --dtype float32 --dtype bfloat16`` compares the
faster path's health with float32's on the same sequences and seed (keys ``RULES@DTYPE``).
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from pathlib import Path

RULE_SETS = {
    "mask": {"redraw_unrequested_tag": False, "redraw_tag_pieces": False},
    "tag-pieces": {"redraw_unrequested_tag": False, "redraw_tag_pieces": True},
    "unrequested-tag": {"redraw_unrequested_tag": True, "redraw_tag_pieces": False},
    "both": {"redraw_unrequested_tag": True, "redraw_tag_pieces": True},
}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", required=True, help="a generator folder written by hf-ecg train")
    parser.add_argument("--num-samples", type=int, default=200, help="templates per rule set (default 200)")
    parser.add_argument("--rules", action="append", choices=sorted(RULE_SETS), help="rule set (repeat; default all)")
    parser.add_argument("--seed", type=int, default=1, help="entity sequences and decoding seed (default 1)")
    parser.add_argument("--output", type=Path, default=None, help="also write the results as JSON here")
    parser.add_argument(
        "--dtype", action="append", choices=("float32", "bfloat16"), help="dtype (repeat; default float32)"
    )
    args = parser.parse_args()

    import torch

    from hf_ecg.data.statistics import CorpusStatistics
    from hf_ecg.evaluation.quality import surface_health
    from hf_ecg.modeling import load_ecg_model
    from hf_ecg.runtime.blocks import tag_label
    from hf_ecg.runtime.decoding import ChainedDecoder, DecodingConfig
    from hf_ecg.runtime.words import DEFAULT_SENTENCE_ENDINGS
    from hf_ecg.synthetic.entity_sequences import make_sampler

    model, tokenizer, ecg_config = load_ecg_model(args.model)
    statistics = CorpusStatistics.from_dict(ecg_config.corpus_statistics)
    sequences = make_sampler("gold", statistics).sample(args.num_samples, random.Random(args.seed))
    endings = ecg_config.sentence_endings or DEFAULT_SENTENCE_ENDINGS
    results = {}
    dtypes = args.dtype or ["float32"]
    runs = [(rules, dtype) for dtype in dtypes for rules in args.rules or list(RULE_SETS)]
    for rules, dtype in runs:
        name = rules if len(dtypes) == 1 else f"{rules}@{dtype}"
        model.to(getattr(torch, dtype))
        settings = DecodingConfig(seed=args.seed, **RULE_SETS[rules])
        ChainedDecoder(model, tokenizer, ecg_config, settings).decode(sequences[: settings.batch_size])  # warm-up
        decoder = ChainedDecoder(model, tokenizer, ecg_config, settings)
        started = time.perf_counter()
        decoded = decoder.decode(sequences)
        seconds = time.perf_counter() - started
        words = [list(r.template.tokens) for r in decoded]
        starts = [["B-" if tag_label(w) else "O" for w in row] for row in words]  # tags begin entities
        blocks = sum(len(r.entities) + 1 for r in decoded)
        kept = sum(r.model_tokens for r in decoded) or 1
        results[name] = {
            "tag_piece_share": sum(r.tag_pieces > 0 for r in decoded) / len(decoded),
            "tag_piece_words": sum(r.tag_pieces for r in decoded),
            **{k: round(v, 4) for k, v in surface_health(words, endings, tags=starts).items()},
            "forced": sum(r.forced_tags for r in decoded),
            "blocks": blocks,
            "attempts_per_block": round(sum(r.attempts for r in decoded) / blocks, 3),
            "discarded_per_kept_token": round(sum(r.redrawn_tokens for r in decoded) / kept, 3),
            "seconds": round(seconds, 1),
        }
        print(name, json.dumps(results[name]), flush=True)
        leaking = next((r for r in decoded if r.tag_pieces), None)
        if leaking is not None:
            print("  for example:", " ".join(leaking.template.tokens))
    if args.output is not None:
        args.output.parent.mkdir(parents=True, exist_ok=True)
        args.output.write_text(json.dumps(results, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
