"""``hf-ecg baseline``: the baselines' data (mention replacement)."""

from __future__ import annotations

import argparse
from typing import Any

from .common import add_overwrite_option


def add_parser(sub: Any) -> None:
    """Register ``hf-ecg baseline``."""
    baseline = sub.add_parser(
        "baseline",
        help="write a baseline synthetic dataset (same schema as hf-ecg generate) for comparisons",
        description="Baselines for the experiment tables; each writes OUTPUT/data/*.parquet, "
        "OUTPUT/ecg_generation.json (the generated-dataset manifest, its settings included) and the card.",
    )
    baseline_sub = baseline.add_subparsers(dest="baseline", metavar="METHOD", required=True)
    replacement = baseline_sub.add_parser(
        "mention-replacement",
        help="gold sentences with each mention swapped for another gold mention of its type (Dai & Adel 2020)",
        description=(
            "Cycle over the gold sentences in order; replace each mention, with probability --probability, by a "
            "different mention of the same type drawn uniformly from the gold mentions. Labels stay aligned."
        ),
    )
    replacement.add_argument("--data", required=True, metavar="DATA[:N]", help="gold corpus; ':N' keeps the first N")
    replacement.add_argument(
        "--num-samples", "-n", type=int, default=None, metavar="N", help="rows to write (default: as many as gold)"
    )
    replacement.add_argument(
        "--output",
        "-o",
        required=True,
        metavar="DIR",
        help="dataset folder: new or empty (or one hf_ecg wrote, with --overwrite)",
    )
    add_overwrite_option(replacement, "dataset")
    replacement.add_argument("--probability", type=float, default=1.0, help="replacement probability (default 1)")
    replacement.add_argument("--seed", type=int, default=0, help="seed (default 0)")
    replacement.add_argument(
        "--mentions",
        action="append",
        default=None,
        metavar="TYPE=FILE|DIR",
        help="swap in mentions from your own lists instead of the gold ones (plain text, one mention per line, one "
        "file per type: TYPE=FILE, repeat for each type, or a folder of TYPE.txt); types without a list keep "
        "drawing gold mentions",
    )
    replacement.set_defaults(func=_run_mention_replacement)


def _run_mention_replacement(args: argparse.Namespace) -> int:
    from ..data.sources import load_source, source_path
    from ..runtime.mentions import mention_list_files
    from ..synthetic.mention_replacement import MentionReplacementSource, replacement_bank, write_mention_replacement
    from ..synthetic.run_config import DatasetRunConfig

    gold = load_source(args.data)
    lists = None
    if args.mentions:
        from ..runtime.mention_sources import MentionSource, resolve_mentions
        from .common import CLIError
        from .mention_options import mention_source

        resolved = resolve_mentions(mention_source(args.mentions))
        if resolved.kind is not MentionSource.LISTS or resolved.strategy != "random":
            raise CLIError("--mentions: mention replacement takes mention lists only (TYPE=FILE pairs or a folder)")
        lists = resolved.lists.files
    bank = replacement_bank(gold, lists)
    settings: dict[str, Any] = {"data": args.data}
    if lists is not None:
        settings["mention_lists"] = {label: str(file) for label, file in sorted(mention_list_files(lists).items())}
    num_samples = len(gold) if args.num_samples is None else args.num_samples
    source = MentionReplacementSource(gold, num_samples, args.seed, args.probability, bank, settings)
    run = DatasetRunConfig(overwrite=args.overwrite, progress_bar=False)
    output = write_mention_replacement(source, args.output, run=run, inputs=[source_path(args.data)])
    print(f"wrote {num_samples} mention-replacement samples to {output}/data/ (datasets.load_dataset({str(output)!r}))")
    return 0
