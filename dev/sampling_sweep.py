"""Choose sampling settings by measurement: generate with each setting, score each set against gold.

    python dev/sampling_sweep.py --model results/jnlpba-186/work/ecg-qalm \
        --gold ../shared/data/jnlpba/devel.tsv --first-n 186 --num-samples 192

For every setting (``temperature,top_k,top_p,block_end[,no-redraw]``; ``--setting`` repeats, default
a small grid; ``no-redraw`` turns the decoder's redraw rules off) it writes ``--num-samples``
samples with the same seed and entity sequences, then prints one table row: complete sentences,
sentences under 5 tokens, degenerate repetition, blocks forced or cut, distinct-3 as a ratio to
gold, ROUGE-L to the nearest gold sentence (mean / max) and the share of drawn tokens redrawn.
Completeness must not be bought with copying: a setting that raises completeness by copying gold
shows it in the ROUGE-L columns.
Writes the table to ``--output``/sweep.md and the reports to sweep.json.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from hf_ecg.synthetic.run_config import DatasetRunConfig

DEFAULT_GRID = [
    "1.0,50,1.0,any-stop,no-redraw",
    "1.0,50,1.0,target,no-redraw",
    "1.0,50,1.0,target",
    "0.9,50,1.0,target",
    "0.8,50,1.0,target",
    "0.7,50,1.0,target",
    "1.0,0,0.9,target",
    "0.8,0,0.95,target",
]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", type=Path, required=True, help="a generator folder written by hf-ecg train")
    parser.add_argument("--gold", type=Path, required=True, help="its training corpus (CoNLL/TSV)")
    parser.add_argument("--first-n", type=int, default=None, help="the first N gold sentences it was trained on")
    parser.add_argument("--num-samples", type=int, default=192, help="samples per setting (default 192)")
    parser.add_argument(
        "--setting",
        action="append",
        default=None,
        metavar="T,K,P,END",
        help="temperature,top_k,top_p,block_end[,no-redraw] (repeat; default: a grid of 7)",
    )
    parser.add_argument("--seed", type=int, default=0, help="generation seed (default 0)")
    parser.add_argument(
        "--end-at-sentence-end", action="store_true", help="every setting with end_at_sentence_end=True"
    )
    parser.add_argument(
        "--mentions",
        default=None,
        help="where the slots' mentions come from (hf-ecg generate's --mentions; default: the model's default). "
        "'random' (the bank) measures the templates alone, faster",
    )
    parser.add_argument("--output", type=Path, default=Path("outputs/sampling-sweep"), help="folder for the sets")
    args = parser.parse_args()

    from hf_ecg.data.manifest import read_manifest
    from hf_ecg.data.sources import load_flags, load_labelled
    from hf_ecg.evaluation.quality import quality_reports
    from hf_ecg.runtime.decoding import DecodingConfig
    from hf_ecg.synthetic.generate import generate_dataset

    gold = load_labelled(args.gold, first_n=args.first_n)
    sets, flags, seconds, redrawn = {}, {}, {}, {}
    for setting in args.setting or DEFAULT_GRID:
        temperature, top_k, top_p, block_end, *rest = setting.split(",")
        redraw = rest != ["no-redraw"]
        decoding = DecodingConfig(
            temperature=float(temperature),
            top_k=int(top_k),
            top_p=float(top_p),
            block_end=block_end,
            batch_size=64,
            end_at_sentence_end=args.end_at_sentence_end,
            redraw_unended=redraw,
            redraw_repetition=redraw,
            redraw_run_on=redraw,
        )
        folder = args.output / setting.replace(",", "_")
        started = time.perf_counter()
        generate_dataset(
            args.model,
            folder,
            args.num_samples,
            seed=args.seed,
            decoding=decoding,
            mentions=args.mentions,
            run=DatasetRunConfig(progress_bar=False),
        )
        seconds[setting] = time.perf_counter() - started
        redrawn[setting] = read_manifest(folder).generation_cost["redrawn_share"]
        sets[setting] = [(s.tokens, s.tags) for s in load_labelled(folder)]
        flags[setting] = load_flags(folder)
        print(f"{setting}: {seconds[setting]:.0f} s", flush=True)
    reports = quality_reports(sets, [(s.tokens, s.tags) for s in gold], ref_model=None, flags=flags)
    lines = [
        f"Sampling sweep: {args.model}, {args.num_samples} samples per setting, seed {args.seed}, gold: "
        f"{len(gold)} sentences of {args.gold.name}.",
        "",
        "| temperature, top-k, top-p, block end, redraw | complete | under 5 tokens | repetition | forced + cut blocks "
        "| mean tokens | distinct-3 ratio | ROUGE-L mean / max | redrawn | seconds |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    first = next(iter(reports.values()))
    lines.append(
        f"| gold | {first['complete_gold']:.1%} | {first['short_gold']:.1%} | {first['repetition_gold']:.1%} | - "
        f"| {first['length_mean_gold']:.1f} | 1.00 | 1.000 / 1.000 | - | - |"
    )
    for setting, r in reports.items():
        lines.append(
            f"| {setting.replace(',', ', ')} | {r['complete_generated']:.1%} | {r['short_generated']:.1%} "
            f"| {r['repetition_generated']:.1%} | {r['blocks_forced']} + {r['blocks_cut']} of {r['blocks']} "
            f"| {r['length_mean_generated']:.1f} | {r['distinct_3_ratio']:.2f} "
            f"| {r['rouge_l_mean']:.3f} / {r['rouge_l_max']:.3f} | {redrawn[setting]:.1%} | {seconds[setting]:.0f} |"
        )
    table = "\n".join(lines) + "\n"
    args.output.mkdir(parents=True, exist_ok=True)
    (args.output / "sweep.md").write_text(table)
    (args.output / "sweep.json").write_text(json.dumps(reports, indent=2) + "\n")
    print(table)
    return 0


if __name__ == "__main__":
    sys.exit(main())
