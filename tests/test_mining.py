"""Names mined from the user's text: what taggers agree on and see often becomes a typed name list, in the format
``--dictionary`` reads; ``hf-ecg mine-names`` refuses what it cannot use before training."""

from __future__ import annotations

import numpy as np

from hf_ecg.cli import main
from hf_ecg.labelling.dictionary import Dictionary
from hf_ecg.labelling.mining import mine_names, write_name_lists
from tiny import toy_corpus

LABELS = ["O", "B-protein", "I-protein", "B-cell_type", "I-cell_type"]


class _Reads:
    """A stand-in tagger that reads fixed spans: ``{(word, ...): (type, length)}``, the first ``length`` words of
    each place the words stand (a context after the name makes it read only there)."""

    labels = LABELS

    def __init__(self, names: dict[tuple[str, ...], tuple[str, int]]) -> None:
        self.names = names

    def predict_proba(self, sentences):
        out = []
        for tokens in sentences:
            tags = ["O"] * len(tokens)
            for pattern, (label, length) in self.names.items():
                for i in range(len(tokens) - len(pattern) + 1):
                    if tuple(tokens[i : i + len(pattern)]) == pattern:
                        tags[i : i + length] = [f"B-{label}", *[f"I-{label}"] * (length - 1)]
            probabilities = np.zeros((len(tokens), len(LABELS)))
            probabilities[np.arange(len(tokens)), [LABELS.index(t) for t in tags]] = 1.0
            out.append(probabilities)
        return out


TEXT = [
    *[("NF-kappa", "B", "binds", "DNA", ".")] * 4,  # seen four times as a protein
    *[("T", "cells", "express", "IL-2", ".")] * 3,
    ("IL-2", "was", "low", "."),  # IL-2 read as a protein in 3 of its 4 places
    ("lead", "rose", "."),
]


def test_names_the_taggers_agree_on_and_see_often_are_mined_with_their_counts(tmp_path):
    names = {
        ("NF-kappa", "B"): ("protein", 2),
        ("T", "cells"): ("cell_type", 2),
        ("IL-2", "."): ("protein", 1),  # read in 3 of IL-2's 4 places
        ("DNA", "."): ("protein", 2),  # a span that ends on a mark is no name
    }
    tagger = _Reads(names)
    mined = mine_names([tagger, tagger], TEXT, min_count=3, min_share=0.7, min_names=1)
    assert mined == {"cell_type": {("T", "cells"): 3}, "protein": {("NF-kappa", "B"): 4, ("IL-2",): 3}}
    assert ("IL-2",) not in mine_names([tagger], TEXT, min_count=3, min_share=0.8, min_names=1)["protein"]
    # the dictionary holds T cells as another type: not mined; a type under min_names gets no list
    other = Dictionary({"protein": ["T cells"]})
    assert "cell_type" not in mine_names([tagger], TEXT, dictionary=other, min_count=3, min_names=1)
    assert mine_names([tagger], TEXT, min_count=3, min_names=3) == {}
    written = write_name_lists(tmp_path / "mined", mined)
    assert sorted(p.name for p in written) == ["cell_type.txt", "protein.txt"]
    assert (tmp_path / "mined" / "protein.txt").read_text() == "NF-kappa B\t4\nIL-2\t3\n"
    assert Dictionary.read([str(tmp_path / "mined")]).type_of(("nf-kappa", "b")) == "protein"  # --dictionary reads it


def test_mine_names_refuses_a_used_output_and_bad_text_before_training(tmp_path, capsys):
    gold = toy_corpus(tmp_path / "gold.tsv")
    (tmp_path / "used").mkdir()
    (tmp_path / "used" / "notes.txt").write_text("mine\n")
    (tmp_path / "text.txt").write_bytes(b"\xff\xfe not text\n")
    argv = ["mine-names", "--gold", str(gold), "--unlabelled", str(tmp_path / "text.txt")]
    assert main([*argv, "-o", str(tmp_path / "used")]) == 2
    assert "is not an empty folder" in capsys.readouterr().err
    assert (tmp_path / "used" / "notes.txt").read_text() == "mine\n"
    assert main([*argv, "-o", str(tmp_path / "new")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "text.txt:1" in err[0] and not (tmp_path / "new").exists()
