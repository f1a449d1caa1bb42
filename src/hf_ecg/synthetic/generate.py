"""Whole synthetic datasets: ``generate_dataset`` writes Parquet shards that ``load_dataset`` reads.

The output folder::

    DIR/ecg_generation.json        the settings (a rerun must use the same ones)
    DIR/README.md                  the dataset card (its header points load_dataset at data/)
    DIR/data/train-00000.parquet   shard 0: sample ids 0 .. S-1
    DIR/data/train-00001.parquet   ...

While the run is under way its shards wait in ``DIR/unfinished/`` and ``data/`` does not exist, so
``load_dataset(DIR)`` finds no data and the readers (export, filter, evaluate) refuse the folder with
the command that resumes it; the last step moves the shards into ``data/`` and writes the card.

Shard ``s`` holds ids ``[s*S, (s+1)*S)``; its entity sequences, decoding and filling are seeded by
``(seed, s)`` alone. So a shard is the same whoever writes it and whenever: a run killed midway is
resumed by running the same command again (finished shards are kept, the rest written), and under
``accelerate launch`` each process writes the shards ``s % num_processes == process_index``. Each
shard is written to a temporary file and renamed, so a shard on disk is always complete.
"""

from __future__ import annotations

import logging
import os
import random
import shutil
from collections.abc import Mapping, Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

from ..data.dataset_format import (
    MANIFEST_NAME,
    SHARD_PATTERN,
    UNFINISHED_DIR,
    MentionsRecord,
    align_labels,
    bio_labels,
    columns_of_folder,
    dataset_features,
    finish_folder,
    generated_label_names,
    ner_label_names,
    read_generated,
    shard_rows,
    write_manifest,
    write_shard,
    write_unfinished_card,
)
from ..data.outputs import DATASET, check_output
from ..data.statistics import CorpusStatistics
from ..runtime.decoding import DecodingConfig, make_decoder
from ..runtime.files import read_json
from ..runtime.filling import MentionSource, TemplateFiller, training_bank
from ..runtime.mention_writer import WrittenMentions, writing_line
from ..runtime.mentions import MentionBank
from ..training.advice import undertrained_advice
from .entity_sequences import FixedSampler, make_sampler

__all__ = [
    "MANIFEST_NAME",
    "align_labels",
    "bio_labels",
    "dataset_features",
    "generate_dataset",
    "generated_label_names",
    "ner_label_names",
    "read_generated",
]

logger = logging.getLogger(__name__)


def _shard_seed(seed: int, shard: int, purpose: str) -> int:
    return random.Random(f"{purpose}:{seed}:{shard}").getrandbits(63)


def generate_dataset(
    model: str | os.PathLike,
    output_dir: str | os.PathLike,
    num_samples: int,
    *,
    sampler: str = "gold",
    entities: Sequence[Sequence[str]] | None = None,
    mentions: MentionSource | None = None,
    corpus: str | os.PathLike | None = None,
    seed: int = 0,
    samples_per_shard: int = 256,
    decoding: DecodingConfig | None = None,
    overwrite: bool = False,
    progress_bar: bool = True,
    trust_remote_code: bool = False,
    label_names: Sequence[str] | None = None,
    card_fields: Mapping[str, Any] | None = None,
    resume_command: str | None = None,
    dtype: str = "auto",
) -> Path:
    """Generate ``num_samples`` labelled sentences with a trained ECG model into ``output_dir``.

    Args:
        model: folder or Hub id of a model trained by hf_ecg.
        sampler: which entity sequences to ask for (``gold``, ``urg``, ``uniform``), from the training
            statistics saved with the model (or from ``corpus``). Ignored when ``entities`` is given.
        entities: explicit entity sequences, cycled over the sample ids.
        mentions: default (``None``): ``"generated"`` for a model trained with mention samples (the ``hf-ecg
            train`` default), else ``"random"``. ``"random"`` or ``"weighted"`` from the training mention bank;
            your own mention lists, plain text, one file per type (a ``{type: file}`` dict, a folder of ``TYPE.txt``, or
            :class:`~hf_ecg.runtime.filling.MentionLists` to draw by their counts): new mentions, tokenized the
            corpus's way, the bank filling the other types; ``"generated"``: the generator writes each slot's
            mention in its sentence (a model trained with ``mention_samples=True``; the manifest's
            ``mention_writing`` counts the slots written and the tries rejected, a slot whose every try was
            rejected filled from the bank); or your own ``{type: [mentions]}`` / JSON file.
        corpus: the training corpus, for mentions and statistics when the model does not carry them.
        seed: the same seed and settings give the same dataset, whatever the number of processes.
        samples_per_shard: rows per Parquet shard; the unit of resuming.
        decoding: sampling settings and limits (its ``seed`` is ignored: shards derive theirs).
        overwrite: delete a previous dataset with other settings in ``output_dir`` instead of refusing.
        label_names: the ``ner_tags`` ClassLabel names in the order of the gold dataset the samples are to
            be mixed with (:func:`ner_label_names`); default: the order the model's training corpus had
            when it was a ``ClassLabel`` dataset, else :func:`bio_labels`.
        card_fields: :class:`~hf_ecg.hub.dataset_card.ECGDatasetCardData` fields for the ``README.md`` card
            written when the run completes (``license``, ``language``, ``source_datasets``, ``pretty_name``).
        resume_command: how to resume this run, shown by the readers of an unfinished folder (the CLI gives
            its command line; default: "the same generate_dataset call").
        dtype: ``auto`` (default: bfloat16 where the hardware computes it natively,
            :func:`~hf_ecg.modeling.inference_dtype`, float32 elsewhere), ``float32`` or ``bfloat16``; the one
            used is recorded in the manifest. bfloat16 writes about 1.5x the samples per second on a CPU with
            AVX-512 BF16, at the same sentence health and, over three BC5CDR 45 sets, the same tagger F1 on
            average (docs/results.md).

    The progress bar shows the generator's tokens kept and drawn and the share redrawn (blocks drawn again:
    ``decoding.redraw_budget`` bounds it); when the run ends the manifest records what it cost
    (``generation_cost``, :func:`generation_cost`) and the log says it in one line, with a warning when most
    of it was redrawn (the model is undertrained).

    ``output_dir`` must be new, empty or a dataset hf_ecg wrote: a file, or a folder with other files, is
    refused (``FileExistsError``) before anything is loaded or written.

    Returns the output folder. ``datasets.load_dataset(str(output_dir), split="train")`` reads it.
    """
    import torch
    from tqdm.auto import tqdm

    from accelerate import PartialState

    from ..data.corpus import load_corpus
    from ..modeling import inference_dtype, load_ecg_model, model_fingerprint

    if num_samples < 1:
        raise ValueError(f"num_samples must be >= 1, got {num_samples}")
    if samples_per_shard < 1:
        raise ValueError(f"samples_per_shard must be >= 1, got {samples_per_shard}")
    decoding = decoding or DecodingConfig()
    state = PartialState()
    output_dir = Path(output_dir)
    check_output(output_dir, DATASET)  # new, empty or a dataset hf_ecg wrote: never beside a user's files
    data_dir, unfinished_dir = output_dir / "data", output_dir / UNFINISHED_DIR

    model_obj, tokenizer, ecg_config = load_ecg_model(model, trust_remote_code=trust_remote_code)
    dtype = inference_dtype(dtype, state.device)
    model_obj.to(state.device, getattr(torch, dtype))
    corpus_bank = stats = None
    if corpus is not None:
        gold = load_corpus(corpus)
        corpus_bank = MentionBank.from_sentences(gold)
        stats = CorpusStatistics.from_corpus(gold, corpus_bank)
    elif ecg_config.corpus_statistics:
        stats = CorpusStatistics.from_dict(ecg_config.corpus_statistics)
    if entities is not None:
        sequences = [tuple(s) for s in entities]
        FixedSampler(sequences, ecg_config.entity_types)  # validates the types
        draw = None
    else:
        if stats is None:
            raise ValueError("the model carries no corpus statistics: give the training corpus or explicit entities")
        draw = make_sampler(sampler, stats)
    filler = TemplateFiller(mentions, ecg_config, model_obj, tokenizer, corpus_bank=corpus_bank,
                            temperature=decoding.temperature, top_p=decoding.top_p)  # fmt: skip
    filler.check_types(ecg_config.entity_types if entities is None else sorted({t for s in entities for t in s}))
    writer = filler.writer

    manifest = {
        "model": str(model),
        "model_fingerprint": model_fingerprint(model),
        "num_samples": num_samples,
        "samples_per_shard": samples_per_shard,
        "seed": seed,
        "sampler": None if entities is not None else sampler,
        "entities": None if entities is None else [list(s) for s in entities],
        "mentions": MentionsRecord.from_mentions(filler.mentions, filler.bank, corpus is not None).to_dict(),
        "corpus": None if corpus is None else str(corpus),
        "decoding": {k: v for k, v in asdict(decoding).items() if k != "seed"},
        "dtype": dtype,
        "entity_types": list(ecg_config.entity_types),
        "label_names": ner_label_names(ecg_config.entity_types, label_names or ecg_config.label_names),
    }
    with state.main_process_first():
        fresh = _check_or_write_manifest(output_dir, manifest, overwrite and state.is_main_process)
        if state.is_main_process and (fresh or unfinished_dir.is_dir()):
            write_unfinished_card(output_dir, num_samples, resume_command or "the same generate_dataset call")
    num_shards = (num_samples + samples_per_shard - 1) // samples_per_shard
    mine = [s for s in range(num_shards) if s % state.num_processes == state.process_index]
    begun = unfinished_dir if any(unfinished_dir.glob("*.parquet")) else data_dir
    features = columns_of_folder(begun, dataset_features(ecg_config.entity_types, manifest["label_names"]))

    def shard_range(shard: int) -> range:
        return range(shard * samples_per_shard, min((shard + 1) * samples_per_shard, num_samples))

    def shard_done(shard: int) -> bool:  # shards of folders begun before unfinished/ may sit in data/
        name = SHARD_PATTERN.format(shard)
        return len(shard_range(shard)) in (shard_rows(unfinished_dir / name), shard_rows(data_dir / name))

    todo = [s for s in mine if not shard_done(s)]
    total = sum(len(shard_range(s)) for s in mine)
    done = total - sum(len(shard_range(s)) for s in todo)
    if done:
        logger.info("resuming: %d of this process's samples are already written", done)
    bar = tqdm(
        total=total, initial=done, unit="sample", desc="Generating",
        disable=not progress_bar or not state.is_local_main_process,
    )  # fmt: skip
    for tmp in unfinished_dir.glob(".tmp-*"):
        if tmp.name.startswith(f".tmp-{state.process_index}-"):
            tmp.unlink()
    spent = [0, 0]  # generator tokens kept, redrawn: the shards this run finished
    writing = WrittenMentions()  # the mentions this run's shards had written
    for shard in todo:
        ids = shard_range(shard)
        if draw is None:
            requested = [sequences[i % len(sequences)] for i in ids]
        else:
            requested = draw.sample(len(ids), random.Random(_shard_seed(seed, shard, "entities")))
        config = DecodingConfig(**{**asdict(decoding), "seed": _shard_seed(seed, shard, "decoding")})
        decoder = make_decoder(model_obj, tokenizer, ecg_config, config)

        def progress(n: int, decoder: Any = decoder) -> None:
            budget = decoder.budget  # the decode call's
            bar.set_postfix_str(_cost_postfix(spent[0] + budget.kept, spent[1] + budget.redrawn), refresh=False)
            bar.update(n)

        decoded = decoder.decode(requested, progress=progress)
        spent[0] += decoder.budget.kept
        spent[1] += decoder.budget.redrawn
        if writer is not None:  # the bar has counted the shard's templates; its mentions are written now
            bar.set_description_str(f"Writing mentions of shard {shard}")
        rng = random.Random(_shard_seed(seed, shard, "mentions"))
        filled, shard_written = filler.fill(decoded, rng, _shard_seed(seed, shard, "written mentions"))
        if shard_written is not None:
            bar.set_description_str("Generating")
            writing.add(shard_written)
        rows = [{"id": i, **row} for i, row in zip(ids, filled, strict=True)]
        write_shard(rows, features, unfinished_dir, shard, state.process_index)
    bar.close()
    state.wait_for_everyone()
    if state.is_main_process:
        if not all(shard_done(s) for s in range(num_shards)):
            raise RuntimeError(f"{output_dir} lacks shards after the run: run the same command again to write them")
        finish_folder(output_dir)
        cost = generation_cost(data_dir, decoding.redraw_budget)
        novelty = mention_novelty(data_dir, training_bank(ecg_config, corpus_bank))
        origins = mention_origins(data_dir)
        written_record = writing.to_dict(resumed=bool(done)) if writer is not None else None
        if written_record is not None:
            logger.info("%s", writing_line(written_record))
        results = {"generation_cost": cost, "mention_novelty": novelty, "mention_writing": written_record,
                   "mention_sources": origins}  # fmt: skip
        if any(v is not None for v in results.values()):
            write_manifest(output_dir, {**manifest, **{k: v for k, v in results.items() if v is not None}})
        if novelty is not None:
            logger.info("%s", novelty_line(novelty))
        if origins is not None and len(origins) > 1:
            logger.info("%s", origins_line(origins))
        if cost is not None:
            logger.info("%s", cost_line(cost))
            if cost["undertrained"]:
                logger.warning(
                    "%.0f%% of the generator's tokens were redrawn and %d of %d blocks kept as they were when the "
                    "redraw budget was spent, so the generator looks undertrained: %s", 100 * cost["redrawn_share"],
                    cost["refused_redraws"], cost["blocks"], undertrained_advice(model),
                )  # fmt: skip
        from ..hub.dataset_card import write_dataset_card

        write_dataset_card(output_dir, **(card_fields or {}))
        logger.info("wrote %d samples in %d shards to %s", num_samples, num_shards, data_dir)
    state.wait_for_everyone()
    return output_dir


#: Decoding options that changed the default output when they were added (older folders ran without them).
_ADDED_REDRAW_RULES = ("redraw_unended", "redraw_repetition", "redraw_run_on", "redraw_tag_pieces")
#: Settings added later, as folders written before them ran: every redraw allowed, float32.
_BEFORE_ADDED = {**dict.fromkeys(_ADDED_REDRAW_RULES, False), "redraw_budget": None}

#: A run says the generator looks undertrained when the redraw budget kept more than this share of its blocks
#: as they were (converged generators, which redraw 17-59% of their tokens, never reach the budget), or, with no
#: budget, when it redrew more tokens than it kept. The redrawn share alone is no sign of undertraining: on the first
#: 50 sentences of BC5CDR and JNLPBA it was 43-59% at every epoch from 1 to 10, overfitted ones included
#: (docs/results.md, the training curves).
UNDERTRAINED_REFUSED_SHARE = 0.05


def _cost_postfix(kept: int, redrawn: int) -> str:
    """The progress bar's ``kept 11.2k tok, drawn 14.0k, redrawn 20%``."""

    def short(n: int) -> str:
        return f"{n / 1000:.1f}k" if n >= 1000 else str(n)

    drawn = kept + redrawn
    return f"kept {short(kept)} tok, drawn {short(drawn)}, redrawn {redrawn / drawn if drawn else 0:.0%}"


def mention_novelty(data_dir: Path, training_bank: MentionBank | None) -> dict[str, Any] | None:
    """How many of a folder's mentions (its ``spans``) are not in ``training_bank``, the generator's training
    mentions: ``{"mentions": n, "new": k, "share": k / n}``, a diversity figure and, for private data, a
    privacy one (mentions that cannot have come from the corpus). ``None`` without a bank or ``spans``."""
    import pyarrow.parquet as pq

    if training_bank is None:
        return None
    total = new = 0
    for shard in sorted(data_dir.glob("*.parquet")):
        if "spans" not in pq.read_schema(shard).names:
            return None
        table = pq.read_table(shard, columns=["text", "spans"])
        for text, spans in zip(table.column("text").to_pylist(), table.column("spans").to_pylist(), strict=True):
            for span in spans:
                total += 1
                new += tuple(text[span["start"] : span["end"]].split(" ")) not in training_bank.counts(span["label"])
    return {"mentions": total, "new": new, "share": new / total if total else 0.0}


def mention_origins(data_dir: Path) -> dict[str, int] | None:
    """How many of a folder's mentions came from each source, from its ``mention_sources`` column
    (:data:`~hf_ecg.runtime.filling.MENTION_ORIGINS`: ``{"generated": n, "bank": m}``); ``None`` for a folder
    begun before the column existed."""
    import pyarrow.parquet as pq

    counts: dict[str, int] = {}
    for shard in sorted(data_dir.glob("*.parquet")):
        if "mention_sources" not in pq.read_schema(shard).names:
            return None
        for sources in pq.read_table(shard, columns=["mention_sources"]).column("mention_sources").to_pylist():
            for origin in sources:
                counts[origin] = counts.get(origin, 0) + 1
    return dict(sorted(counts.items(), key=lambda item: -item[1]))


def origins_line(origins: Mapping[str, int]) -> str:
    """One line for the log of a manifest's ``mention_sources`` record."""
    total = sum(origins.values()) or 1
    return "mentions: " + ", ".join(f"{n} {origin} ({100 * n / total:.0f}%)" for origin, n in origins.items())


def novelty_line(novelty: Mapping[str, Any]) -> str:
    """One line for the log of a manifest's ``mention_novelty`` record."""
    return f"{100 * novelty['share']:.0f}% of the {novelty['mentions']} mentions are not in the training mention bank"


def generation_cost(data_dir: Path, redraw_budget: float | None) -> dict[str, Any] | None:
    """What the generator spent on a folder's samples, from their ``model_tokens``, ``redrawn_tokens`` and
    ``refused_redraws`` columns (None for a folder begun before they existed): the token totals, the share
    redrawn, the blocks and how many the budget kept as they were, the budget, and whether the generator looks
    undertrained (:data:`UNDERTRAINED_REFUSED_SHARE`)."""
    import pyarrow.parquet as pq

    columns = ["model_tokens", "redrawn_tokens", "refused_redraws"]
    kept = redrawn = refused = blocks = 0
    for shard in sorted(data_dir.glob("*.parquet")):
        if not set(columns) <= set(pq.read_schema(shard).names):
            return None
        table = pq.read_table(shard, columns=[*columns, "entities"])
        kept += sum(table.column("model_tokens").to_pylist())
        redrawn += sum(table.column("redrawn_tokens").to_pylist())
        refused += sum(table.column("refused_redraws").to_pylist())
        blocks += sum(len(entities) + 1 for entities in table.column("entities").to_pylist())
    share = redrawn / (kept + redrawn) if kept + redrawn else 0.0
    return {
        "model_tokens": kept,
        "redrawn_tokens": redrawn,
        "redrawn_share": round(share, 4),
        "blocks": blocks,
        "refused_redraws": refused,
        "redraw_budget": redraw_budget,
        "undertrained": refused > UNDERTRAINED_REFUSED_SHARE * blocks or (redraw_budget is None and redrawn > kept),
    }


def cost_line(cost: Mapping[str, Any]) -> str:
    """One line on what a run cost (when the generator looks undertrained the run also logs a warning with
    :func:`~hf_ecg.training.advice.undertrained_advice`: what to change against how the model trained)."""
    kept, redrawn = cost["model_tokens"], cost["redrawn_tokens"]
    line = (
        f"the generator wrote {kept + redrawn} tokens: {kept} kept, {redrawn} ({cost['redrawn_share']:.0%}) in "
        "blocks drawn again"
    )
    if cost.get("redraw_budget") is not None:
        line += f" (redraw_budget {cost['redraw_budget']:g}: about {cost['redraw_budget']:g}x the kept tokens at most)"
    return line


def _check_or_write_manifest(output_dir: Path, manifest: dict[str, Any], overwrite: bool) -> bool:
    """Check a folder's manifest against this run's (same settings: resume), or write it; ``True`` when this
    run starts the folder (new, or overwritten)."""
    path = output_dir / MANIFEST_NAME
    if path.is_file():
        previous = read_json(path, "a generation manifest")
        # A decoding option added by a later version: the folder was written with the behaviour before it,
        # which is the option's default or, for the redraw rules, off.
        defaults = {k: v for k, v in asdict(DecodingConfig()).items() if k != "seed"}
        defaults.update(_BEFORE_ADDED)
        previous.pop("generation_cost", None)  # what the finished run spent, not a setting
        previous.pop("mention_novelty", None)  # what the finished run wrote, not a setting
        previous.pop("mention_writing", None)  # what the finished run's writer did, not a setting
        previous.pop("mention_sources", None)  # where the finished run's mentions came from, not a setting
        previous.setdefault("dtype", "float32")  # folders before it ran in float32
        previous.setdefault("label_names", bio_labels(previous.get("entity_types", [])))  # folders before it
        record = MentionsRecord.from_manifest(previous)  # folders before the record: a string or null
        previous["mentions"] = None if record is None else record.to_dict()
        if isinstance(previous.get("decoding"), dict):
            previous["decoding"] = {**{k: v for k, v in defaults.items() if k not in previous["decoding"]},
                                    **previous["decoding"]}  # fmt: skip
        previous.setdefault("model_fingerprint", manifest["model_fingerprint"])  # folders before it: unchecked
        if previous == manifest:
            return False
        if not overwrite and previous["model_fingerprint"] != manifest["model_fingerprint"]:
            raise ValueError(
                f"{output_dir} was begun with another model: {manifest['model']} changed since (fingerprint "
                f"{previous['model_fingerprint']}, now {manifest['model_fingerprint']}), and its samples would be "
                "mixed with the earlier model's; use another folder, or overwrite=True (--overwrite) to start again"
            )
        if not overwrite:
            changed = sorted(k for k in manifest.keys() | previous.keys() if manifest.get(k) != previous.get(k))
            raise ValueError(
                f"{output_dir} holds a dataset generated with other settings (differing: {', '.join(changed)}); "
                "use another folder, the same settings to resume, or overwrite=True (--overwrite)"
            )
        for folder in ("data", UNFINISHED_DIR):
            shutil.rmtree(output_dir / folder, ignore_errors=True)
    write_manifest(output_dir, manifest)
    return True
