"""Would a fluency rule catch the samples read as broken? Each sample of the committed twenty-sample reads is scored by
the reference LM (SmolLM2-135M, the quality report's): its perplexity, and where it falls among the corpus's own
sentences' perplexities (the share of corpus sentences below it). The samples read as broken are listed per file.

    python research/runs/text-trained/fluency.py -o results/text-trained/fluency.json
"""

from __future__ import annotations

import argparse
import bisect
import json
import statistics
from pathlib import Path

from reads import MARK, READS, read_samples

from hf_ecg.data.sources import load_source
from hf_ecg.evaluation.quality import perplexity
from hf_ecg.modeling import load_causal_lm

DATA = Path("../shared/data")
CORPORA = {"bc5cdr": DATA / "bc5cdr/train.tsv:0:300", "jnlpba": DATA / "jnlpba/devel.tsv:0:300"}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("-o", "--output", type=Path, required=True)
    args = parser.parse_args()
    model, tokenizer = load_causal_lm("smollm2-135m")

    def score(text: str) -> float:
        return perplexity([text], model, tokenizer, batch_size=1)

    corpus_scores = {
        name: sorted(score(" ".join(s.tokens)) for s in load_source(str(path))) for name, path in CORPORA.items()
    }
    report: dict = {"corpus_sentences": {name: len(v) for name, v in corpus_scores.items()}, "reads": {}}
    for file, (corpus, broken) in READS.items():
        gold = corpus_scores[corpus]
        rows = []
        for index, text in read_samples(file):
            ppl = score(MARK.sub(r"\1", text))
            rows.append(
                {
                    "index": index,
                    "broken": index in broken,
                    "perplexity": round(ppl, 2),
                    "corpus_share_below": round(bisect.bisect_left(gold, ppl) / len(gold), 3),
                }
            )
        report["reads"][file] = rows
        for kind in (True, False):
            shares = sorted(r["corpus_share_below"] for r in rows if r["broken"] is kind)
            print(file, "broken" if kind else "fine", shares)
    rows = [row for read in report["reads"].values() for row in read]
    broken = [row["corpus_share_below"] for row in rows if row["broken"]]
    fine = [row["corpus_share_below"] for row in rows if not row["broken"]]
    pairs = [(b > f) + 0.5 * (b == f) for b in broken for f in fine]
    report["summary"] = {
        "broken": len(broken),
        "fine": len(fine),
        "median_share_below_broken": statistics.median(broken),
        "median_share_below_fine": statistics.median(fine),
        # the chance that a broken sample reads less fluent than a fine one (0.5: no better than a coin)
        "auc": round(sum(pairs) / len(pairs), 3),
        "above_corpus_90th": {"broken": sum(s >= 0.9 for s in broken), "fine": sum(s >= 0.9 for s in fine)},
    }
    print(report["summary"])
    args.output.write_text(json.dumps(report, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
