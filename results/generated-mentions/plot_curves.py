"""Plot the generated-mention curves of docs/results.md from the NER reports beside this file.

    python results/generated-mentions/plot_curves.py   # writes results/generated-mentions/curves.png

Each point is a ``hf-ecg evaluate ner`` report (``*.ner.json`` here or, for the gazetteer rows, in
``results/mention-lists/``: mean and std of entity micro F1 over seeds 1-3); the gold lines are the gold-only
rows of docs/results.md under the same protocol (BC5CDR 45: its "gold" row; JNLPBA 186:
``results/reference.json``).
"""

from __future__ import annotations

import json
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt

HERE = Path(__file__).parent
GOLD = {"bc5cdr-45": (0.452, 0.005), "jnlpba-186": (0.409, 0.004)}
GENERATED = {"bc5cdr-45": "gen2", "jnlpba-186": "gen"}
# the report of each multiple under the default recipe (synthetic stage epochs × √(gold / synthetic))
DEFAULT_RECIPE = {1: "{g}-1x", 2: "{g}-2x-se14", 5: "{g}-5x-se9", 10: "{g}-10x-se6"}
UPDATES_OF_1X = {1: "{g}-1x", 10: "{g}-10x"}  # the previous default: the synthetic stage at the updates of 1x
# other sets at 10x, drawn beside it (x nudged so the bars do not overlap)
TEN_TIMES = [
    (10.6, "mr-bank-10x-se6", "mention replacement 10x, √ rule", "^", "tab:green"),
    (10.6, "mr-bank-10x", "mention replacement 10x, updates of 1x", "v", "tab:red"),
    (10.6, "mr-bank-10x-concat", "mention replacement 10x, concat", "<", "tab:olive"),
    (9.4, "{g}-10x-relabel-se6", "generated 10x, relabel, √ rule", "D", "tab:purple"),
    (9.0, "msbank-10x-se6", "the same generator, bank mentions, √ rule", "x", "tab:brown"),
    (10.3, "lists-10x-se6", "gazetteer mentions 10x, √ rule", "*", "black"),
    (9.7, "lists-10x-relabel-se6", "gazetteer mentions 10x, relabel, √ rule", "h", "tab:grey"),
    (11.0, "mr-lists-10x-se6", "mention replacement with the gazetteer 10x, √ rule", "P", "tab:pink"),
    (11.0, "mr-lists-10x", "mention replacement with the gazetteer 10x, updates of 1x", "X", "tab:cyan"),
]
LISTS = HERE.parent / "mention-lists"  # the gazetteer rows' reports


def score(name: str) -> tuple[float, float] | None:
    for folder in (HERE, LISTS):
        path = folder / f"{name}.ner.json"
        if path.is_file():
            report = json.loads(path.read_text())
            return report["entity_f1_mean"], report["entity_f1_std"]
    return None


def curve(setting: str, reports: dict[int, str]) -> tuple[list[int], list[float], list[float]]:
    points = [(m, score(f"{setting}-" + r.format(g=GENERATED[setting]))) for m, r in reports.items()]
    points = [(m, s) for m, s in points if s is not None]
    return [m for m, _ in points], [s[0] for _, s in points], [s[1] for _, s in points]


def main() -> None:
    figure, axes = plt.subplots(1, 2, figsize=(11, 5.2))
    for ax, setting in zip(axes, GOLD, strict=True):
        gold, spread = GOLD[setting]
        ax.axhline(gold, color="grey", linestyle=":", label="gold alone")
        ax.axhspan(gold - spread, gold + spread, color="grey", alpha=0.15)
        for reports, label, style in [
            (DEFAULT_RECIPE, "generated mentions, default recipe (√ rule)", "-o"),
            (UPDATES_OF_1X, "generated mentions, synthetic stage at the updates of 1x", "--s"),
        ]:
            x, y, e = curve(setting, reports)
            ax.errorbar(x, y, yerr=e, fmt=style, capsize=3, label=label)
        for x, name, label, marker, color in TEN_TIMES:
            point = score(f"{setting}-{name.format(g=GENERATED[setting])}")
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
