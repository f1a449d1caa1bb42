"""Build the project's reference artifacts and write their cards to ``model_cards/``.

A real run, offline on the CPU: train an ECG-QALM generator on the first N BC5CDR training
sentences (SmolLM2-135M with LoRA), generate a synthetic dataset of the same size, then write both
Hub repositories as ``hf-ecg push-model --local-dir`` and ``hf-ecg push-dataset --local-dir`` do, and
copy their ``README.md`` cards to ``model_cards/<name>/README.md``. Nothing is uploaded; upload the
folders under ``OUTPUT/hub/`` with ``hf-ecg push-*`` (without ``--local-dir``) to publish them.

    python dev/reference_cards.py                      # BC5CDR 45 with hf-ecg train's defaults, ~15 min on 2 cores
    python dev/reference_cards.py --ner-report REPORT  # again, the card with downstream scores (training kept)
    python dev/reference_cards.py --max-steps 20 --num-samples 45 --output /tmp/ref   # a quick check
"""

from __future__ import annotations

import argparse
import shutil
import sys
from pathlib import Path

from hf_ecg.hub.push import push_dataset, push_model
from hf_ecg.synthetic.generate import generate_dataset
from hf_ecg.synthetic.run_config import DatasetRunConfig
from hf_ecg.training.train import train_ecg_model
from hf_ecg.training.training_args import ECGTrainingArguments

ROOT = Path(__file__).resolve().parents[1]
SHARED_DATA = ROOT.parent / "shared" / "data"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, default=SHARED_DATA / "bc5cdr" / "train.tsv", help="training corpus")
    parser.add_argument("--name", default="bc5cdr", help="short corpus name for the repo ids (default bc5cdr)")
    parser.add_argument("--org", default="hf-ecg", help="Hub organisation of the repo ids (default hf-ecg)")
    parser.add_argument("--first-n", type=int, default=45, help="training sentences (default 45, the 1%% split)")
    parser.add_argument("--max-steps", type=int, default=None, help="training steps (default: hf-ecg train's epochs)")
    parser.add_argument("--num-samples", type=int, default=450, help="synthetic samples (default 450, ten times gold)")
    parser.add_argument("--ner-report", type=Path, default=None, help="hf-ecg evaluate ner JSON for the model card")
    parser.add_argument("--output", type=Path, default=ROOT / "outputs" / "reference", help="work folder")
    parser.add_argument("--cards", type=Path, default=ROOT / "model_cards", help="where the cards go")
    parser.add_argument(
        "--license",
        default="cc-by-4.0",
        help="license of the cards' metadata (default cc-by-4.0, the default corpus's: BC5CDR as "
        "distributed by cambridgeltl/MTL-Bioinformatics-2016)",
    )
    args = parser.parse_args()
    if not args.data.is_file():
        sys.exit(f"{args.data} not found: give --data (a CoNLL/TSV or JSONL corpus)")

    model_id, dataset_id = f"{args.org}/{args.name}-ecg-qalm", f"{args.org}/{args.name}-ecg-synth"
    model_dir, data_dir, hub = args.output / "model", args.output / "synthetic", args.output / "hub"
    if (model_dir / "ecg_config.json").is_file():
        print(f"{model_dir} exists: training skipped (delete it to train again)")
    else:
        steps = {"max_steps": args.max_steps} if args.max_steps else {}
        training = ECGTrainingArguments(output_dir=str(model_dir), **steps)  # hf-ecg train's defaults
        train_ecg_model(args.data, "smollm2-135m", training, first_n=args.first_n, corpus_name=args.name)
    generate_dataset(model_dir, data_dir, args.num_samples, seed=1, run=DatasetRunConfig(overwrite=True))
    push_model(
        model_dir, model_id, local_dir=hub / "model", overwrite=True, license=args.license, ner_report=args.ner_report
    )
    push_dataset(
        data_dir,
        dataset_id,
        local_dir=hub / "dataset",
        overwrite=True,
        generator=model_id,
        pretty_name=f"{args.name.upper()} synthetic NER data (ECG-QALM)",
        license=args.license,
    )
    for repo_id, folder in ((model_id, hub / "model"), (dataset_id, hub / "dataset")):
        target = args.cards / repo_id.split("/")[1] / "README.md"
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(folder / "README.md", target)
        print(f"card of {repo_id}: {target.relative_to(ROOT) if target.is_relative_to(ROOT) else target}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
