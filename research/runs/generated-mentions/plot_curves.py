"""Plot the generated-mention curves of docs/results.md from the NER reports beside this file.

    python research/runs/generated-mentions/plot_curves.py   # writes results/generated-mentions/curves.png

One curve per mention source and repair, at 1x, 2x, 5x and 10x the gold sentences, under the recipe
docs/results.md recommends for it (the √ rule; the updates of 1x for bank mentions); a missing point was not
measured. Each point is a ``hf-ecg evaluate ner`` report (``*.ner.json`` here or, for the gazetteer rows, in
``results/mention-lists/``: mean and std of entity micro F1 over seeds 1-3); the gold lines are the gold-only rows
of docs/results.md under the same protocol (BC5CDR 45: its "gold" row; JNLPBA 186: ``results/reference.json``).
"""

from __future__ import annotations

import json
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt

HERE = Path(__file__).parent
GOLD = {"bc5cdr-45": (0.452, 0.005), "jnlpba-186": (0.409, 0.004)}
# the default generator's written-mention set per setting (BC5CDR: gen3, regenerated with the tag-name fix)
GENERATED = {"bc5cdr-45": "gen3", "jnlpba-186": "gen"}
SQRT_RULE = {1: "{s}-1x", 2: "{s}-2x-se14", 5: "{s}-5x-se9", 10: "{s}-10x-se6"}  # the default recipe's epochs
RELABEL = {1: "{s}-relabel-1x", 2: "{s}-relabel-2x-se14", 5: "{s}-relabel-5x-se9", 10: "{s}-10x-relabel-se6"}
BANK_RECIPE = {1: "{s}-1x", 2: "{s}-2x-se10", 5: "{s}-5x-se4", 10: "{s}-10x-se2"}  # the updates of 1x
# one curve per source × repair: (set name, its reports, label, style, colour)
CURVES = [
    ("{g}", SQRT_RULE, "written mentions (the default)", "-o", "tab:blue"),
    ("{g}", RELABEL, "written mentions + relabel", "--D", "tab:purple"),
    ("lists", SQRT_RULE, "gazetteer mentions", "-*", "black"),
    ("lists", RELABEL, "gazetteer mentions + relabel", "--h", "tab:grey"),
    ("mr-lists", SQRT_RULE, "mention replacement, the same gazetteer", "-P", "tab:pink"),
    ("msbank", BANK_RECIPE, "bank mentions (updates of 1x)", "-x", "tab:brown"),
    (
        "msbank",
        {1: "{s}-relabel-1x", 2: "{s}-relabel-2x-se10", 5: "{s}-relabel-5x-se4", 10: "{s}-relabel-10x-se2"},
        "bank mentions + relabel (updates of 1x)",
        "--x",
        "tab:orange",
    ),
]
# other sets at 10x, drawn beside the curves (x nudged so the bars do not overlap)
TEN_TIMES = [
    (10.6, "mr-bank-10x-se6", "mention replacement, gold mentions, √ rule", "^", "tab:green"),
    (10.6, "mr-bank-10x", "mention replacement, gold mentions, updates of 1x", "v", "tab:red"),
    (9.4, "msbank-10x-se6", "bank mentions, √ rule", "1", "tab:brown"),
    (11.0, "mr-lists-10x", "mention replacement, the same gazetteer, updates of 1x", "X", "tab:cyan"),
]
LISTS = HERE.parent / "mention-lists"  # the gazetteer rows' reports


def score(name: str) -> tuple[float, float] | None:
    for folder in (HERE, LISTS):
        path = folder / f"{name}.ner.json"
        if path.is_file():
            report = json.loads(path.read_text())
            return report["entity_f1_mean"], report["entity_f1_std"]
    return None


def curve(setting: str, source: str, reports: dict[int, str]) -> tuple[list[int], list[float], list[float]]:
    name = source.format(g=GENERATED[setting])
    points = [(m, score(f"{setting}-" + r.format(s=name))) for m, r in reports.items()]
    points = [(m, s) for m, s in points if s is not None]
    return [m for m, _ in points], [s[0] for _, s in points], [s[1] for _, s in points]


def main() -> None:
    figure, axes = plt.subplots(1, 2, figsize=(11, 5.2))
    for ax, setting in zip(axes, GOLD, strict=True):
        gold, spread = GOLD[setting]
        ax.axhline(gold, color="grey", linestyle=":", label="gold alone")
        ax.axhspan(gold - spread, gold + spread, color="grey", alpha=0.15)
        for source, reports, label, style, color in CURVES:
            x, y, e = curve(setting, source, reports)
            if x:
                ax.errorbar(x, y, yerr=e, fmt=style, color=color, capsize=3, label=label)
        for x, name, label, marker, color in TEN_TIMES:
            point = score(f"{setting}-{name}")
            if point is not None:
                ax.errorbar([x], [point[0]], yerr=[point[1]], fmt=marker, color=color, capsize=3, label=label)
        ax.set_xscale("log")
        ax.set_xticks([1, 2, 5, 10], ["1x", "2x", "5x", "10x"])
        ax.set_xlabel("synthetic data, multiple of the gold sentences")
        ax.set_ylabel("entity micro F1 (test, seeds 1-3)")
        ax.set_title(setting.upper().replace("-", " "))
        ax.grid(alpha=0.3)
    handles = {label: handle for ax in axes for handle, label in zip(*ax.get_legend_handles_labels(), strict=True)}
    figure.legend(handles.values(), handles.keys(), fontsize=8, loc="lower center", ncol=3)
    figure.tight_layout(rect=(0, 0.16, 1, 1))
    out = HERE / "curves.png"
    figure.savefig(out, dpi=120)
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
