"""The tables of a reproduction run (``tables.md``), the verdict lines that answer "does it help", and the
scaling plot."""

from __future__ import annotations

import json
import statistics
from pathlib import Path
from typing import Any

from hf_ecg.data.manifest import read_manifest
from hf_ecg.taggers.tagger import NERConfig

from .config import METHODS, ReproduceConfig, Row

__all__ = ["plot_scaling", "verdict", "write_tables"]


def mean_std(values: list[float]) -> tuple[float, float]:
    return statistics.fmean(values), (statistics.stdev(values) if len(values) > 1 else 0.0)


def fmt(values: list[float]) -> str:
    if not values:
        return "not run"
    mean, std = mean_std(values)
    return f"{mean:.3f} ± {std:.3f}"


def pct(share: float | None) -> str:
    return "-" if share is None else f"{100 * share:.1f}%"


def verdict(results: dict[str, list[dict[str, Any]]], reference: dict[str, list]) -> list[str]:
    """How this run's core rows answer the question: gold against the reference, selected ECG-QALM against
    gold and mention replacement (each recipe run) by more than the larger of their standard deviations."""
    scores = {key: mean_std([r["entity_f1"] for r in runs]) for key, runs in results.items()}
    lines: list[str] = []
    if not {"gold", "gold+mr", "gold+sel"} <= set(scores):
        return ["no verdict: the gold, gold + mention replacement and gold + selected ECG-QALM rows were not all run"]
    if "gold" in reference:
        ours, ref = scores["gold"][0], reference["gold"][0]
        lines.append(
            f"gold {ours:.3f} against the reference {ref:.3f}: "
            + ("within 0.02" if abs(ours - ref) <= 0.02 else "NOT within 0.02")
        )
    mean, std = scores["gold+sel"]
    # Mention replacement under every recipe run: the data must beat the baseline's best way of mixing, not
    # only the baseline mixed the way that suits the generated data.
    for other in ("gold", *sorted(key for key in scores if key == "gold+mr" or key.startswith("gold+mr-"))):
        other_mean, other_std = scores[other]
        margin = max(std, other_std)
        above = mean - other_mean > margin
        lines.append(
            f"gold + selected ECG-QALM {mean:.3f} vs {other} {other_mean:.3f}: {mean - other_mean:+.3f}, "
            f"{'above' if above else 'not above'} the larger std {margin:.3f}"
        )
    if "gold+daga" in reference:
        lines.append(f"reference gold + DAGA: {reference['gold+daga'][0]:.3f} ± {reference['gold+daga'][1]:.3f}")
    return lines


#: The decoding settings a table states.
DECODING_SHOWN = (
    "block_end",
    "temperature",
    "top_k",
    "top_p",
    "max_block_tokens",
    "max_attempts",
    "redraw_unended",
    "redraw_repetition",
    "redraw_run_on",
)


def trainings(dirs: dict[str, Path]) -> str:
    """``ECG-QALM trained in 12.9 min, held-out loss by epoch ...; ECG-LM ...`` from training.json."""
    parts = []
    for method in ("qalm", "lm"):
        model = read_manifest(dirs[method]).model
        path = Path(model) / "training.json"
        if path.is_file():
            t = json.loads(path.read_text())
            losses = " ".join(f"{loss:.3f}" for _, loss in t["eval_loss_by_epoch"])
            parts.append(
                f"{METHODS[method]} trained in {t['minutes']:.1f} min, held-out loss by epoch {losses}, "
                f"kept {t['best_checkpoint']}"
            )
    return "; ".join(parts) or "training times not recorded"


def write_tables(
    output: Path,
    config: ReproduceConfig,
    *,
    ner_config: NERConfig,
    num_test: int,
    num_dev: int,
    quality: dict,
    rows: list[Row],
    results: dict,
    scales: list[int],
    reference: dict,
    timing: dict,
    dirs: dict[str, Path],
    sizes: dict[str, int],
    sources: list[str] | None = None,
) -> str:
    n = config.first_n
    decoding = read_manifest(dirs["qalm"]).decoding or {}
    selection = read_manifest(dirs["sel"]).selection
    stages = timing["minutes"]
    dropped = ", ".join(f"{rule} {count}" for rule, count in selection["dropped"].items()) or "none"
    lines = [
        f"# {config.dataset.upper()}, first {n} training sentences ({config.tables} tables)",
        "",
        f"Generators: {config.generator_model}{' + LoRA' if config.lora else ''}, {config.generator_epochs:g} "
        "epochs at lr "
        f"{config.generator_learning_rate:g} (the epoch with the lowest held-out answer loss kept; {trainings(dirs)}). "
        "Decoding: " + ", ".join(f"{k}={decoding.get(k)}" for k in DECODING_SHOWN) + ". "
        f"Selection: {', '.join(selection['config']['rules'])} over {selection['source_samples']} samples, kept "
        f"{selection['kept']} (dropped: {dropped}); the first {n} kept are used. "
        f"NER: {ner_config.model}, batch {ner_config.batch_size}, lr {ner_config.learning_rate:g}, "
        f"{ner_config.epochs:g} epochs, "
        + (f"the epoch with the best F1 on {num_dev} dev sentences kept" if num_dev else "no model selection")
        + f", seeds {config.seeds}, {num_test} test sentences. Run time {sum(stages.values()):.1f} min over "
        f"{timing['invocations']} invocation(s) ("
        + ", ".join(f"{name} {minutes:.1f}" for name, minutes in stages.items())
        + ").",
        "",
        "## Generation quality",
        "",
        "| data | perplexity (ratio to gold) | distinct-3 (ratio to gold) | ROUGE-L to nearest gold (mean / max) "
        "| templates copied | entity-type TVD |",
        "|---|---|---|---|---|---|",
    ]
    first, own = quality["qalm"], quality["gold"]  # gold's copy measures: each sentence against the others
    lines.append(
        f"| gold (each sentence against the other gold sentences) | {first['perplexity_gold']:.1f} (1.00) "
        f"| {own['distinct_3']:.3f} (1.00) | {own['rouge_l_mean']:.3f} / {own['rouge_l_max']:.3f} "
        f"| {100 * own['template_copy_rate']:.0f}% | {own['entity_type_tvd']:.3f} |"
    )
    for method, label in METHODS.items():
        q = quality[method]
        lines.append(
            f"| {label} | {q['perplexity_generated']:.1f} ({q['perplexity_ratio']:.2f}) "
            f"| {q['distinct_3_generated']:.3f} ({q['distinct_3_ratio']:.2f}) "
            f"| {q['rouge_l_mean']:.3f} / {q['rouge_l_max']:.3f} | {100 * q['template_copy_rate']:.0f}% "
            f"| {q['entity_type_tvd']:.3f} |"
        )
    lines += [
        "",
        "## Sentence health",
        "",
        "| data | samples | complete (ends like gold) | under 5 tokens | n-gram 3× in a row | second sentence "
        "| mean tokens | length KS to gold | blocks forced / cut |",
        "|---|---|---|---|---|---|---|---|---|",
        f"| gold | {n} | {pct(first['complete_gold'])} | {pct(first['short_gold'])} | {pct(first['repetition_gold'])} "
        f"| {pct(first.get('second_sentence_gold'))} | {first['length_mean_gold']:.1f} | 0.000 | - |",
    ]
    labels = {**METHODS, "qalm-all": f"ECG-QALM, all {selection['source_samples']} generated"}
    for method in (*METHODS, "qalm-all"):
        q = quality[method]
        blocks = (
            f"{q['blocks_forced']} / {q['blocks_cut']} of {q['blocks']} ({pct(q['blocks_forced_or_cut_share'])})"
            if "blocks" in q
            else "-"
        )
        lines.append(
            f"| {labels[method]} | {q['num_generated']} | {pct(q['complete_generated'])} | {pct(q['short_generated'])} "
            f"| {pct(q['repetition_generated'])} | {pct(q.get('second_sentence_generated'))} "
            f"| {q['length_mean_generated']:.1f} | {q['length_ks']:.3f} | {blocks} |"
        )
    lines += [
        "",
        "## Downstream NER, mean ± std over seeds",
        "",
        "| training data | sentences | entity micro F1 | token macro F1 (B-/I-) | reference entity F1 |",
        "|---|---|---|---|---|",
    ]
    for row in rows:
        runs = results.get(row.key, [])
        size = (n if row.gold else 0) + (min(row.multiple * n, sizes[row.synthetic]) if row.synthetic else 0)
        ref = reference.get(row.key)
        ref_text = f"{ref[0]:.3f} ± {ref[1]:.3f}" if ref else ""
        lines.append(
            f"| {row.label} | {size} | {fmt([r['entity_f1'] for r in runs])} "
            f"| {fmt([r['token_macro_f1'] for r in runs])} | {ref_text} |"
        )
    for key, label in (
        ("gold+daga", "gold + DAGA (reference only)"),
        ("paper gold", "paper: gold (BERT-base)"),
        ("paper gold+qalm", "paper: gold + ECG-QALM (BERT-base)"),
    ):
        if key in reference:
            mean, std = reference[key]
            lines.append(f"| *{label}* | | | | {mean:.3f}{f' ± {std:.3f}' if std is not None else ''} |")
    for method, folder in dirs.items():
        if method.startswith("sel-"):
            chosen = json.loads((folder / "ecg_generation.json").read_text())["selection"]
            lost = ", ".join(f"{rule} {count}" for rule, count in chosen["dropped"].items()) or "none"
            lines.append(
                f"| *selection {method[4:]}: kept {chosen['kept']} of {chosen['source_samples']} (dropped: "
                f"{lost})* | | | | |"
            )
    lines += ["", *[f"- {line}" for line in verdict(results, reference)]]
    if sources:
        from .mention_curve import REPAIR_RULES, mention_curve_table, novelty_lines

        lines += [
            "",
            "## Mentions by source (entity micro F1, mean ± std over seeds; `mention_sources.png`)",
            "",
            "The same generator's templates (trained with mention samples, one seed) filled from the training bank, "
            "written in context, or from the gazetteer (every distinct mention of the whole training pool: a stand-in "
            f"for a user's list); repaired: `hf-ecg filter --rule {' '.join(REPAIR_RULES)}` with the gold taggers of "
            "every seed as an ensemble.",
            "",
            *mention_curve_table(results, sources, scales),
            "",
            *[f"- {line}" for line in novelty_lines(dirs)],
        ]
    text = "\n".join(lines) + "\n"
    (output / "tables.md").write_text(text)
    return text


def plot_scaling(path: Path, config: ReproduceConfig, results: dict, scales: list[int]) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    xs = [0, *scales]
    keys = ["gold" if m == 0 else ("gold+qalm" if m == 1 else f"gold+qalm-{m}x") for m in xs]
    fig, ax = plt.subplots(figsize=(6, 4))
    for measure, label in (("entity_f1", "entity micro F1"), ("token_macro_f1", "token macro F1")):
        stats = [mean_std([r[measure] for r in results[key]]) for key in keys]
        bars = ax.errorbar(xs, [m for m, _ in stats], yerr=[s for _, s in stats], marker="o", capsize=3, label=label)
        mr_mean, _ = mean_std([r[measure] for r in results["gold+mr"]])
        color = bars.lines[0].get_color()
        ax.axhline(mr_mean, linestyle=":", linewidth=1, color=color, label=f"{label}, gold + MR 1×")
    ax.set_xlabel("synthetic ECG-QALM sentences, no selection (multiples of gold)")
    ax.set_ylabel("F1")
    ax.set_title(f"{config.dataset.upper()} {config.first_n}: gold + ECG-QALM")
    ax.set_xticks(xs)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
