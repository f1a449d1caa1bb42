"""Label noise of every committed synthetic set: each set read by a reference tagger.

    python dev/label_noise_table.py bc5cdr outputs/references/bc5cdr/seed-1
    python dev/label_noise_table.py jnlpba outputs/references/jnlpba/seed-1

For each set of the setting, ``hf_ecg.evaluation.labels.label_agreement`` against the reference (a tagger
trained on the whole training split, ``hf-ecg evaluate ner --save-taggers``; the commands are in
results/label-noise/README.md) and the set's new-mention share against the gold sentences. Writes
``results/label-noise/<setting>/<set>.labels.json`` and prints a Markdown table beside the downstream F1 of
the same set at ten times (its committed ``evaluate ner`` report). ``--only NAME`` measures one row.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from hf_ecg.data.sources import load_source
from hf_ecg.evaluation.labels import ERROR_KINDS, label_agreement
from hf_ecg.taggers.tagger import Tagger

RESULTS = Path(__file__).resolve().parent.parent / "results"
SHARED = Path(__file__).resolve().parent.parent.parent / "shared" / "data"

G, L = "generated-mentions/", "mention-lists/"
#: Per setting: the gold sentences, and each row's set and its downstream report (ten times, default recipe).
SETTINGS = {
    "bc5cdr": {
        "gold": f"{SHARED}/bc5cdr/train.tsv:45",
        "rows": [
            ("gold (the 45 sentences)", None, None),
            ("bank mentions", G + "bc5cdr-45-msbank-10x", G + "bc5cdr-45-msbank-10x-se2"),
            ("bank + relabel", G + "bc5cdr-45-msbank-10x-relabel", G + "bc5cdr-45-msbank-relabel-10x-se2"),
            ("written (the default)", G + "bc5cdr-45-gen3-10x", G + "bc5cdr-45-gen3-10x-se6"),
            ("written + relabel", G + "bc5cdr-45-gen3-10x-relabel", G + "bc5cdr-45-gen3-10x-relabel-se6"),
            ("lists", L + "bc5cdr-45-lists-10x", L + "bc5cdr-45-lists-10x-se6"),
            ("lists + relabel", L + "bc5cdr-45-lists-10x-relabel", L + "bc5cdr-45-lists-10x-relabel-se6"),
            ("mixture (written 50%, lists 50%)", G + "bc5cdr-45-mix-10x", G + "bc5cdr-45-mix-10x-se6"),
            ("mention replacement, gold mentions", G + "bc5cdr-45-mr-bank-10x", G + "bc5cdr-45-mr-bank-10x"),
            ("mention replacement, lists", L + "bc5cdr-45-mr-lists-10x", L + "bc5cdr-45-mr-lists-10x"),
        ],
    },
    "jnlpba": {
        "gold": f"{SHARED}/jnlpba/devel.tsv:186",
        "rows": [
            ("gold (the 186 sentences)", None, None),
            ("bank mentions", G + "jnlpba-186-msbank-10x", G + "jnlpba-186-msbank-10x-se2"),
            ("bank + relabel", G + "jnlpba-186-msbank-10x-relabel", G + "jnlpba-186-msbank-relabel-10x-se2"),
            ("written (the default)", G + "jnlpba-186-gen-10x", G + "jnlpba-186-gen-10x-se6"),
            ("written + relabel", G + "jnlpba-186-gen-10x-relabel", G + "jnlpba-186-gen-10x-relabel-se6"),
            ("lists", L + "jnlpba-186-lists-10x", L + "jnlpba-186-lists-10x-se6"),
            ("lists + relabel", L + "jnlpba-186-lists-10x-relabel", L + "jnlpba-186-lists-10x-relabel-se6"),
            ("mention replacement, gold mentions", G + "jnlpba-186-mr-bank-10x", G + "jnlpba-186-mr-bank-10x-se6"),
            ("mention replacement, lists", L + "jnlpba-186-mr-lists-10x", L + "jnlpba-186-mr-lists-10x-se6"),
        ],
    },
}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("setting", choices=sorted(SETTINGS))
    parser.add_argument("reference", help="the reference tagger's folder")
    parser.add_argument(
        "--only", default=None, metavar="NAME", help="only the table's row whose set is NAME ('none': --extra only)"
    )
    parser.add_argument(
        "--extra",
        action="append",
        default=[],
        metavar="LABEL=SET[=NER.json]",
        help="also measure a set not in the table (a path), e.g. a repaired one",
    )
    parser.add_argument("--examples", type=int, default=20, help="disagreeing sentences kept per set")
    args = parser.parse_args()

    setting = SETTINGS[args.setting]
    rows = list(setting["rows"])
    if args.only:
        rows = [row for row in rows if row[1] and Path(row[1]).name == args.only]
    for extra in args.extra:
        label, path, *ner = extra.split("=")
        rows.append((label, path, ner[0] if ner else None))
    reference = Tagger.from_pretrained(args.reference)
    gold = load_source(setting["gold"])
    out_dir = RESULTS / "label-noise" / args.setting
    out_dir.mkdir(parents=True, exist_ok=True)
    print(
        f"| {args.setting}: source | sentences | label P | label R | label F1 | "
        f"{' | '.join(ERROR_KINDS)} | new mentions | downstream F1 (10x) |"
    )
    print("|---" * (7 + len(ERROR_KINDS)) + "|")
    by_origin = []
    for label, set_path, ner_path in rows:
        data = gold if set_path is None else load_source(_resolve(set_path))
        report = label_agreement(data, reference, gold=None if set_path is None else gold, examples=args.examples)
        name = "gold" if set_path is None else Path(set_path).name
        (out_dir / f"{name}.labels.json").write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
        downstream = "–"
        if ner_path is not None:
            ner = json.loads(Path(_resolve(ner_path, ".ner.json")).read_text())
            downstream = f"{ner['entity_f1_mean']:.3f} ± {ner['entity_f1_std']:.3f}"
        share = report.get("new_mention_share")
        if report.get("by_origin"):
            by_origin.append((label, report["by_origin"]))
        print(
            f"| {label} | {report['sentences']} | {report['precision']:.3f} | {report['recall']:.3f} | "
            f"{report['f1']:.3f} | {' | '.join(str(report['errors'][k]) for k in ERROR_KINDS)} | "
            f"{'–' if share is None else f'{share:.0%}'} | {downstream} |"
        )
    if by_origin:  # a reference knows the gold names best: the same scores apart for gold and new mentions
        print("\n| source | gold mentions | P | R (reference's gold names) | new mentions | P | R (its other names) |")
        print("|---" * 7 + "|")
        for label, origin in by_origin:
            gold_part, new_part = origin["gold"], origin["new"]
            print(
                f"| {label} | {gold_part['entities']} | {_score(gold_part['precision'])} | "
                f"{_score(gold_part['recall'])} | {new_part['entities']} | {_score(new_part['precision'])} | "
                f"{_score(new_part['recall'])} |"
            )
    ceiling = reference.record.get("test", {})
    if ceiling:
        print(
            f"\nceiling: the reference's entity F1 on {ceiling['name']} ({ceiling['sentences']} sentences): "
            f"{ceiling['entity_f1']:.3f}"
        )
    return 0


def _score(value: float | None) -> str:
    return "–" if value is None else f"{value:.3f}"


def _resolve(path: str, suffix: str = "") -> str:
    """A path relative to results/ (the table's), or as given (``--extra``)."""
    candidate = RESULTS / f"{path}{suffix}"
    return str(candidate) if candidate.exists() else f"{path}{suffix}"


if __name__ == "__main__":
    raise SystemExit(main())
