"""Benchmark: the batched chained decoder vs the paper's procedure vs raw ``model.generate``.

All three run in this one process on the same model, with the same sampling settings:

- **batched**: :class:`hf_ecg.runtime.decoding.ChainedDecoder` (constrained, refilled batches) on N entity
  sequences drawn from the model's training statistics (gold sampler);
- **paper**: the same decoder in ``sequential`` mode (one sample at a time, ``model.generate`` each
  block, regenerate until it ends with its tag) on the first ``--paper-samples`` of the same sequences;
- **raw generate**: ``model.generate`` on the first-block prompts of the same sequences at the same
  batch size, ``min_new_tokens == max_new_tokens`` (no stopping), the tokens/s any decoder built on
  this model could at best reach.

Samples/s compare the batched decoder with the paper; tokens/s (tokens the model emitted for the
kept blocks, tags included) compare it with raw generation. Blocks drawn again (a block at its
limit, one that leaves the sentence unended or loops) cost tokens that are not kept: the
``sampled`` figure counts them too, and so measures the decoder's machinery alone. The last lines are::

    decoder_efficiency_sampled: <batched sampled tokens/s (kept + drawn again) ÷ raw generate tokens/s>
    position_rate_vs_raw: <positions the model computes per second, batched ÷ raw generate>
    speedup_vs_paper: <batched samples/s ÷ paper samples/s>
    decoder_efficiency: <batched kept tokens/s ÷ raw generate tokens/s>

A position is one input id of a forward pass (padding included). On a CPU a batch of 32 is
compute-bound, so a forward costs about its positions: ``position_rate_vs_raw`` near 1 says the
decoder's machinery runs the model as fast as ``generate`` does, and the line before it says how many
positions each kept token costs (each block is encoded again in the next prompt, as in training).

All three run in ``--dtype`` (default ``auto``, as ``hf-ecg generate``: bfloat16 where the CPU or GPU
computes it natively). Before the last lines a second table runs the batched decoder alone on the
first ``--compare-samples`` sequences of each model (this one and every ``--compare DIR``: a barely
trained model, a converged one) in float32 and in the faster dtype: samples/s, kept tokens/s, the share
of drawn tokens that were redrawn, positions per kept token, complete sentences, and the faster path's
samples/s as a multiple of float32's; then the **default path**, what ``hf-ecg generate`` does with its
defaults: the same templates with their slots filled (``mentions``: ``generated``, written by the generator,
for a model trained with mention samples, the ``hf-ecg train`` default; ``bank`` otherwise), its samples/s
(``path/s``) and the filling's share of its time. The first line names the device.
"""

from __future__ import annotations

import argparse
import platform
import random
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import torch

from hf_ecg.data.statistics import CorpusStatistics
from hf_ecg.modeling import INFERENCE_DTYPES, inference_dtype, load_ecg_model
from hf_ecg.runtime.decoding import ChainedDecoder, DecodingConfig
from hf_ecg.runtime.engine import SampleEngine
from hf_ecg.synthetic.entity_sequences import make_sampler


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument(
        "--model",
        default="outputs/quickstart/model",
        help="model trained by hf_ecg (default: the quickstart's, outputs/quickstart/model)",
    )
    parser.add_argument(
        "--num-samples",
        type=int,
        default=256,
        help="samples for the batched decoder (default 256, one shard of generate_dataset)",
    )
    parser.add_argument(
        "--paper-samples",
        type=int,
        default=32,
        help="of those, samples for the paper's procedure, which is slow (default 32)",
    )
    batch = DecodingConfig().batch_size
    parser.add_argument(
        "--batch-size",
        type=int,
        default=batch,
        help=f"batch size of the decoder and of raw generate (default {batch}, the decoder's)",
    )
    parser.add_argument("--raw-batches", type=int, default=4, help="raw generate calls to time (default 4)")
    parser.add_argument("--max-block-tokens", type=int, default=64, help="block limit (default 64)")
    parser.add_argument("--seed", type=int, default=0, help="seed (default 0)")
    parser.add_argument(
        "--dtype",
        choices=INFERENCE_DTYPES,
        default="auto",
        help="dtype of the three "
        "procedures (default auto, as hf-ecg generate: bfloat16 where the hardware computes it "
        "natively)",
    )
    parser.add_argument(
        "--compare",
        nargs="*",
        default=[],
        metavar="DIR",
        help="more models for the float32 vs faster-dtype table (e.g. a barely trained one and a converged one)",
    )
    parser.add_argument(
        "--compare-samples",
        type=int,
        default=128,
        help="samples per model and dtype in that table (default 128; 0 skips it)",
    )
    args = parser.parse_args()
    for folder in [args.model, *args.compare]:
        if not Path(folder).is_dir():
            raise SystemExit(f"{folder} not found: run `make quickstart` first, or pass --model DIR")

    dtype = inference_dtype(args.dtype)
    print(f"device: {device_description()}; dtype {dtype}", flush=True)
    model, tokenizer, ecg_config = load_ecg_model(args.model, dtype=getattr(torch, dtype))
    model.eval()
    stats = CorpusStatistics.from_dict(ecg_config.corpus_statistics)
    sequences = make_sampler("gold", stats).sample(args.num_samples, random.Random(args.seed))
    settings = {"max_block_tokens": args.max_block_tokens, "seed": args.seed}
    mean_entities = sum(map(len, sequences)) / len(sequences)
    print(
        f"model {args.model}; {args.num_samples} gold-sampled entity sequences (mean {mean_entities:.2f} "
        f"entities); torch threads {torch.get_num_threads()}",
        flush=True,
    )

    # Warm-up (allocator, kernels: oneDNN builds them per shape, bfloat16 ones especially) outside every timing,
    # for each procedure at its own batch size; the warm-up sequences come from beyond the timed ones.
    warm_up = make_sampler("gold", stats).sample(args.batch_size, random.Random(args.seed + 1))
    ChainedDecoder(model, tokenizer, ecg_config, DecodingConfig(batch_size=args.batch_size, **settings)).decode(warm_up)
    ChainedDecoder(model, tokenizer, ecg_config, DecodingConfig(mode="sequential", **settings)).decode(warm_up[:2])

    def timed(decoder: ChainedDecoder, requested: list) -> tuple[list, float, int]:
        """The decoder's results, wall seconds, and tokens it emitted for the kept blocks."""
        start = time.perf_counter()
        results = decoder.decode(requested)
        return results, time.perf_counter() - start, sum(r.model_tokens for r in results)

    batched = ChainedDecoder(model, tokenizer, ecg_config, DecodingConfig(batch_size=args.batch_size, **settings))
    with counted_positions(model) as positions:
        results, batched_s, batched_tokens = timed(batched, sequences)
    forced = sum(r.forced_tags for r in results)
    blocks = sum(len(r.entities) + 1 for r in results)
    discarded = sum(r.redrawn_tokens for r in results)

    paper = ChainedDecoder(model, tokenizer, ecg_config, DecodingConfig(mode="sequential", **settings))
    paper_results, paper_s, paper_tokens = timed(paper, sequences[: args.paper_samples])
    attempts = sum(r.attempts for r in paper_results)
    paper_blocks = sum(len(r.entities) + 1 for r in paper_results)

    new_tokens = max(1, round(batched_tokens / len(results)))  # as long as an average sample
    prompts = [batched.block_prompt([], s[0] if s else None) for s in sequences[: args.batch_size]]  # first blocks
    width = max(map(len, prompts))
    pad = tokenizer.pad_token_id
    input_ids = torch.tensor([[pad] * (width - len(p)) + p for p in prompts], device=model.device)
    attention_mask = (torch.arange(width) >= torch.tensor([width - len(p) for p in prompts])[:, None]).long()
    raw_tokens, raw_s, raw_positions = 0, 0.0, 0
    torch.manual_seed(args.seed)
    with torch.inference_mode():
        for batch in range(args.raw_batches + 1):  # the first one warms up
            start = time.perf_counter()
            out = model.generate(
                input_ids,
                attention_mask=attention_mask.to(model.device),
                do_sample=True,
                top_k=50,
                top_p=1.0,
                temperature=1.0,
                max_new_tokens=new_tokens,
                min_new_tokens=new_tokens,
                pad_token_id=pad,
            )
            if not batch:
                continue
            raw_s += time.perf_counter() - start
            raw_tokens += (out.shape[1] - width) * out.shape[0]
            raw_positions += out.shape[0] * (out.shape[1] - 1)  # the prompt once, then one position per step

    rows = [
        ("batched decoder", len(results), batched_s, batched_tokens),
        ("paper (sequential)", len(paper_results), paper_s, paper_tokens),
        ("raw model.generate", None, raw_s, raw_tokens),
    ]
    print(f"{'procedure':<20} {'samples':>8} {'seconds':>9} {'samples/s':>10} {'tokens/s':>9}")
    for name, n, seconds, tokens in rows:
        per_sample = f"{n / seconds:10.3f}" if n else f"{'-':>10}"
        print(f"{name:<20} {n or '-':>8} {seconds:9.1f} {per_sample} {tokens / seconds:9.1f}")
    print(
        f"batched: {sum(r.attempts for r in results)} block draws for {blocks} blocks, {forced} tags forced at "
        f"the block limit, {discarded} tokens of blocks drawn again ({discarded / (discarded + batched_tokens):.0%} "
        f"of those drawn; redraw budget {batched.config.redraw_budget}); batch size {args.batch_size}"
    )
    computed = positions["prefill"] + positions["step"]
    print(
        f"batched: the model computed {computed} positions ({positions['step']} in decode steps, "
        f"{positions['prefill']} in prompt prefills, padding included) for {batched_tokens} kept tokens: "
        f"{computed / batched_tokens:.2f} per kept token; raw generate {raw_positions / raw_tokens:.2f} "
        "per token"
    )
    print(
        f"paper: {attempts} block generations for {paper_blocks} blocks "
        f"({sum(r.forced_tags for r in paper_results)} forced after {paper.config.max_attempts} tries)"
    )
    print(f"raw generate: batch {args.batch_size}, {new_tokens} new tokens per row (the decoder's mean per sample)")
    if args.compare_samples:
        del model
        compare_dtypes([args.model, *args.compare], dtype, args.compare_samples, settings, args.batch_size, args.seed)
    print(f"decoder_efficiency_sampled: {((batched_tokens + discarded) / batched_s) / (raw_tokens / raw_s):.3f}")
    print(f"position_rate_vs_raw: {(computed / batched_s) / (raw_positions / raw_s):.3f}")
    print(f"speedup_vs_paper: {(len(results) / batched_s) / (len(paper_results) / paper_s):.2f}")
    print(f"decoder_efficiency: {(batched_tokens / batched_s) / (raw_tokens / raw_s):.3f}")


@contextmanager
def counted_positions(model: torch.nn.Module) -> Iterator[dict[str, int]]:
    """Count the positions the model computes (input ids, padding included) per forward kind, ``prefill`` and
    ``step``, while the block runs: on a CPU a forward costs about its positions, so these say where the
    decoder's time goes beyond what it keeps."""
    positions = {"prefill": 0, "step": 0}

    def count(module: torch.nn.Module, args_: tuple, kwargs: dict) -> None:
        ids = kwargs.get("input_ids", args_[0] if args_ else None)
        positions["step" if ids.shape[1] == 1 else "prefill"] += ids.numel()

    hook = model.register_forward_pre_hook(count, with_kwargs=True)
    try:
        yield positions
    finally:
        hook.remove()


def device_description() -> str:
    """The CPU (model, threads, bfloat16 instructions) or GPU the benchmark runs on."""
    if torch.cuda.is_available():
        return f"cuda {torch.cuda.get_device_name()}"
    name = platform.processor() or platform.machine()
    try:
        name = next(line.split(":", 1)[1].strip() for line in open("/proc/cpuinfo") if line.startswith("model name"))
    except (OSError, StopIteration):
        pass
    native = getattr(torch.cpu, "_is_avx512_bf16_supported", lambda: False)()
    return f"cpu {name}, {torch.get_num_threads()} threads, {'with' if native else 'no'} AVX-512 BF16"


def decoder_run(model: Any, tokenizer: Any, ecg_config: Any, sequences: list, settings: dict, batch_size: int) -> dict:
    """The batched decoder on ``sequences``: seconds, samples, kept and redrawn tokens, positions computed; then
    the default path's second step, the templates' slots filled as ``hf-ecg generate`` fills them by default
    (written by the generator when it was trained with mention samples, else drawn from its bank): its seconds."""
    decoder = ChainedDecoder(model, tokenizer, ecg_config, DecodingConfig(batch_size=batch_size, **settings))
    filler = SampleEngine(model, tokenizer, ecg_config).run()
    with counted_positions(model) as positions:
        start = time.perf_counter()
        # as `hf-ecg generate`: the writer starts from the sentences the decoder encoded
        results = decoder.decode(sequences, keep_prefixes=filler.writer is not None)
        seconds = time.perf_counter() - start
    start = time.perf_counter()
    filler.fill(results, random.Random(settings["seed"]), settings["seed"])
    return {
        "seconds": seconds,
        "samples": len(results),
        "kept": decoder.budget.kept,
        "redrawn": decoder.budget.redrawn,
        "positions": sum(positions.values()),
        "complete": sum(r.complete for r in results),
        "fill_seconds": time.perf_counter() - start,
        "mentions": filler.mentions,
    }


def compare_dtypes(models: list[str], fast: str, num_samples: int, settings: dict, batch_size: int, seed: int) -> None:
    """The batched decoder alone per model, float32 then ``fast``, on the model's first gold-sampled sequences, and
    the default path (templates, then their slots filled as ``hf-ecg generate`` fills them by default)."""
    dtypes = ["float32"] + ([fast] if fast != "float32" else [])
    print(
        f"\nbatched decoder alone, {num_samples} samples per model and dtype, batch {batch_size}; then the default "
        "path: the templates' slots filled as `hf-ecg generate` does by default (mentions):"
    )
    print(
        f"{'model':<40} {'dtype':<9} {'samples/s':>9} {'kept tok/s':>10} {'redrawn':>8} {'pos/kept':>8} "
        f"{'complete':>8} {'vs f32':>7} {'mentions':>9} {'path/s':>7} {'filling':>7}"
    )
    for folder in models:
        base = None
        for dtype in dtypes:
            model, tokenizer, ecg_config = load_ecg_model(folder, dtype=getattr(torch, dtype))
            stats = CorpusStatistics.from_dict(ecg_config.corpus_statistics)
            sequences = make_sampler("gold", stats).sample(num_samples, random.Random(seed))
            warm_up = make_sampler("gold", stats).sample(batch_size, random.Random(seed + 1))
            decoder_run(model, tokenizer, ecg_config, warm_up, settings, batch_size)  # kernels per shape: warm up
            run = decoder_run(model, tokenizer, ecg_config, sequences, settings, batch_size)
            rate = run["samples"] / run["seconds"]
            base = base or rate
            drawn = run["kept"] + run["redrawn"]
            path = run["seconds"] + run["fill_seconds"]
            print(
                f"{folder[-40:]:<40} {dtype:<9} {rate:9.3f} {run['kept'] / run['seconds']:10.1f} "
                f"{run['redrawn'] / drawn:8.1%} {run['positions'] / run['kept']:8.2f} "
                f"{run['complete'] / run['samples']:8.1%} {rate / base:6.2f}x {run['mentions']:>9} "
                f"{run['samples'] / path:7.3f} {run['fill_seconds'] / path:7.1%}",
                flush=True,
            )
            del model
    print()


if __name__ == "__main__":
    main()
