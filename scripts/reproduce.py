"""Reproduce the paper's experiments on one low-resource setting, offline, in one command.

    python scripts/reproduce.py --dataset bc5cdr --first-n 45                    # core table, BC5CDR 1%
    python scripts/reproduce.py --dataset jnlpba --first-n 186                   # core table, JNLPBA 1%
    python scripts/reproduce.py --dataset bc5cdr --first-n 45 --tables extended  # every row, the curve

A run computes everything it reports, in its own folder (default outputs/reproduce/<dataset>-<N>/;
a rerun of the same command resumes there). The committed figures it is compared with live apart,
in results/reference.json (the converged-protocol measurements and the paper's).

Stages (paper_protocol.protocol): gold = the first N training sentences (JNLPBA: of its
dev split); the ECG-QALM and ECG-LM generators; synthetic sets (ECG-QALM over-generated, then selected;
ECG-LM; mention replacement); generation quality and sentence health; downstream NER, a MiniLM-L6 token
classifier trained to convergence once per seed. Core rows: gold; gold + mention replacement; gold +
selected ECG-QALM; gold + ECG-QALM without selection; gold + ECG-LM. Extended rows add synthetic data alone,
every mixing recipe, other selections and gold + ECG-QALM as it grows (--scales × gold, scaling.png).

Writes under OUTPUT: quality.json, ner.json, runs/*.json (one per NER run), timing.json, tables.md
(and scaling.png for the extended tables); models and datasets under OUTPUT/work/.
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "research"))  # the paper's protocol lives beside the library, not in it

from paper_protocol import run_protocol  # noqa: E402
from paper_protocol.config import parse_reproduce_config  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    config = parse_reproduce_config(
        argv,
        description=__doc__,
        data_dir=str(ROOT.parent / "shared" / "data"),
        reference=str(ROOT / "results" / "reference.json"),
    )
    config.output = config.output or str(ROOT / "outputs" / "reproduce" / f"{config.dataset}-{config.first_n}")
    try:
        run_protocol(config)
    except (FileNotFoundError, ValueError) as error:  # a missing corpus, an unknown recipe: one line
        sys.exit(str(error))
    return 0


if __name__ == "__main__":
    sys.exit(main())
