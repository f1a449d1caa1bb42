"""Benchmark: the NER tagger's training and prediction under bfloat16 autocast vs float32.

Both runs train the same tagger (``hf_ecg.taggers.training.train_tagger``, MiniLM-L6 by default) on the same
sentences for the same number of updates with the same seed, then predict the same test sentences, in this one
process; a short warm-up run comes first. For each the script prints the seconds of training and of
prediction and the test entity F1 (a check that the short run learnt the same thing, not a converged score).
The last lines are::

    speedup_train_bf16: <float32 training seconds ÷ bfloat16 training seconds>
    speedup_predict_bf16: <float32 prediction seconds ÷ bfloat16 prediction seconds>

Example (JNLPBA 186, the setting whose runs are longest; run it alone on the machine)::

    python scripts/bench_tagger.py --train ../shared/data/jnlpba/devel.tsv:186 \\
        --test ../shared/data/jnlpba/test.tsv:1000 --steps 200
"""

from __future__ import annotations

import argparse
import platform
import time
from dataclasses import replace

import torch

from hf_ecg.data.sources import load_source
from hf_ecg.evaluation.ner import score_tagger
from hf_ecg.taggers.tagger import NERConfig
from hf_ecg.taggers.training import train_tagger


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--train", required=True, metavar="DATA[:N]", help="training corpus (':N': its first N)")
    parser.add_argument("--test", required=True, metavar="DATA[:N]", help="test corpus (':N': its first N)")
    parser.add_argument("--model", default="minilm-l6", help="encoder (default: the offline MiniLM-L6)")
    parser.add_argument("--steps", type=int, default=200, help="training updates per run (default 200)")
    parser.add_argument("--learning-rate", type=float, default=5e-5)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()

    train, test = load_source(args.train), load_source(args.test)
    config = NERConfig(model=args.model, max_steps=args.steps, learning_rate=args.learning_rate, seeds=[args.seed])
    print(
        f"device: {platform.processor() or platform.machine()}, torch {torch.__version__}, "
        f"{torch.get_num_threads()} threads; {len(train)} training sentences, {args.steps} updates of "
        f"{config.batch_size}; {len(test)} test sentences"
    )

    def run(bf16: bool, steps: int) -> tuple[float, float, float]:
        run_config = replace(config, bf16=bf16, max_steps=steps)
        start = time.perf_counter()
        tagger = train_tagger([train], run_config, args.seed, entity_types=test.entity_types)
        trained = time.perf_counter()
        scores = score_tagger(tagger, test)
        return trained - start, time.perf_counter() - trained, scores["entity_f1"]

    run(True, 5)  # warm-up: model files read, kernels chosen
    measured = {}
    for bf16 in (False, True):
        measured[bf16] = run(bf16, args.steps)
        name = "bfloat16 autocast" if bf16 else "float32"
        train_s, predict_s, f1 = measured[bf16]
        print(f"{name:>17}: training {train_s:7.1f} s, prediction {predict_s:6.1f} s, test entity F1 {f1:.3f}")
    print(f"speedup_train_bf16: {measured[False][0] / measured[True][0]:.2f}")
    print(f"speedup_predict_bf16: {measured[False][1] / measured[True][1]:.2f}")


if __name__ == "__main__":
    main()
