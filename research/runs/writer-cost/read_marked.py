"""Twenty sentences of a generated set with their entities marked (every len/20-th of the first 400).
usage: read_marked.py SET"""
import sys

from hf_ecg.data.dataset_format import load_data_folder

rows = load_data_folder(sys.argv[1])
names = rows.features["ner_tags"].feature.names
n = min(rows.num_rows, 400)
for i in range(0, n, max(1, n // 20)):
    out, current = [], None
    for word, tag in zip(rows[i]["tokens"], (names[t] for t in rows[i]["ner_tags"])):
        if tag.startswith("B-") or (tag.startswith("I-") and current != tag[2:]) or (tag == "O" and current):
            if current:
                out[-1] += "]"
            current = None
        if tag != "O" and current is None:
            out.append(f"[{tag[2:]}:")
            current = tag[2:]
        out.append(word)
    if current:
        out[-1] += "]"
    print(i, " ".join(out))
