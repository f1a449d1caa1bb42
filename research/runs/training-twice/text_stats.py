"""Per generated set: redrawn share, sentences with a sentence ending before the last word (a second sentence or a
run-on), sentences holding a word that begins with `ict` (the quirk the first second training amplified), words a
sentence, complete, mention novelty. usage: text_stats.py GOLD.tsv FIRST_N SET [SET ...]"""

import json
import sys
from pathlib import Path

from hf_ecg.data.corpus import load_corpus
from hf_ecg.data.dataset_format import load_data_folder


def line(name, tokens, extra=""):
    n = len(tokens)
    mid = sum("." in t[:-1] for t in tokens) / n
    ict = sum(any(w.lower().startswith("ict") for w in t) for t in tokens) / n
    words = sum(map(len, tokens)) / n
    print(f"{name:34s} n={n:4d} second-sentence {mid:5.1%} ict {ict:5.1%} words {words:5.1f} {extra}")


gold = load_corpus(sys.argv[1]).subset(first_n=int(sys.argv[2]))
line("gold", [s.tokens for s in gold])
for folder in sys.argv[3:]:
    rows = load_data_folder(folder)
    m = json.loads((Path(folder) / "ecg_generation.json").read_text())
    cost, novelty = m.get("generation_cost") or {}, m.get("mention_novelty") or {}
    extra = f"redrawn {cost.get('redrawn_share')} complete {sum(rows['complete']) / rows.num_rows:.1%}"
    extra += f" new mentions {novelty.get('share', 0):.1%}"
    line(Path(folder).name, rows["tokens"], extra)
