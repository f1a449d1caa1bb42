"""Several label repairs of one synthetic set with the same gold taggers, trained once.

    python dev/label_repairs.py --generated SET --gold GOLD[:N] --output-dir DIR \\
        --variant relabel --variant unlabel,relabel --variant mention-type,unlabel,relabel [--tagger-seeds 1,2,3]

Each variant is ``hf-ecg filter --generated SET --gold GOLD --rule R1 --rule R2 ...`` written to
``DIR/<SET name>-<rules joined by +>``; the gold teacher's taggers are trained once and shared, which is what
``hf-ecg filter`` would train for each (same seeds, same settings), so the variants differ only in their rules.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from hf_ecg.data.sources import load_source
from hf_ecg.labelling.ensemble import train_gold_taggers
from hf_ecg.selection import SelectionConfig, filter_generated


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--generated", required=True, help="the synthetic set (a folder hf-ecg generate wrote)")
    parser.add_argument("--gold", required=True, help="the gold sentences (DATA[:N])")
    parser.add_argument("--output-dir", required=True, help="one folder per variant is written here")
    parser.add_argument("--variant", action="append", required=True, metavar="R1,R2", help="rules, in order")
    parser.add_argument("--tagger-seeds", default="1,2,3", help="the gold taggers' seeds (an ensemble)")
    parser.add_argument("--tagger-learning-rate", type=float, default=1e-4)
    args = parser.parse_args()

    gold = load_source(args.gold)
    seeds = [int(s) for s in args.tagger_seeds.split(",")]
    configs = [
        SelectionConfig(rules=v.split(","), tagger_seeds=seeds, tagger_learning_rate=args.tagger_learning_rate)
        for v in args.variant
    ]
    taggers = train_gold_taggers(gold, configs[0].ner_config(), configs[0].tagger_seeds, progress_bar=True)
    for config in configs:
        output = Path(args.output_dir) / f"{Path(args.generated).name}-{'+'.join(config.rules)}"
        filter_generated(args.generated, gold, output, config, taggers=taggers, progress_bar=True)
        print(f"wrote {output}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
