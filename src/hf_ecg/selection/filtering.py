"""Selection: over-generate, then keep the samples that read like training data and that taggers trained
on the gold data agree with.

A generated dataset folder goes in, a generated dataset folder comes out (:func:`filter_generated`): the
same schema, shards and manifest, plus a ``selection`` entry in the manifest that says which rules ran,
with which settings, and how many samples each dropped. Rules run in the order given; a sample is
counted under the first rule that drops it, and the tagger rules only see what the cheap rules kept.

- ``duplicate``: the same tokens as a gold sentence or as an earlier sample;
- ``near-copy``: ROUGE-L F1 to the nearest gold sentence above ``near_copy_threshold``;
- ``text-copy``: a run of ``max_shared_run`` tokens or more, outside the entity mentions, that a sentence of the
  user's text (``unlabelled``) holds (:mod:`hf_ecg.selection.shared_runs`); the selection record gets the
  distribution of every judged sample's longest run and the ROUGE-L of the sentence holding it;
- ``tag-leak``: a word outside the entities that spells an entity tag's name (``Dise``, ``ase``,
  ``DiseHLA``, ``Chemical``: :mod:`hf_ecg.runtime.tag_pieces`, with the forms the generator recorded, else the type
  names), or that the decoder flagged so (its ``tag_pieces`` column); words the gold sentences write are
  never leaks (JNLPBA's ``protein``, BC5CDR's ``disease``);
- ``whole``: a whole sentence: it ends like the gold sentences end (the decoder's ``complete`` flag),
  no block was forced or cut, at least :data:`~hf_ecg.evaluation.quality.MIN_TOKENS` tokens, no
  degenerate repetition and no second sentence (of the kinds under 1% of gold sentences, as the
  decoder's ``redraw_run_on`` rule reads them);
- ``empty-slot``: a word that leaves a phrase open (``of``, ``with``, ``and``) right before punctuation,
  or an opening punctuation mark (``is associated with , but not , .``): the text was written around a
  mention that is not there, and a tagger learns that the slot is ``O``. Words the gold sentences do put
  before punctuation are allowed (:func:`~hf_ecg.runtime.words.empty_slots`);
- ``mention-type``: no entity whose words the gold taggers read as another type (more probability mass on
  another type's labels than on its own): a mention written for the wrong slot (a drug in a disease slot),
  the type check of mentions the generator writes (``mentions="generated"``); a mention the taggers read
  as ``O`` passes (a name they do not know);
- ``consistent``: every generated entity is predicted by the gold taggers, same span and type;
- ``no-extra``: no word labelled ``O`` gets an entity label with probability ``extra_threshold`` or
  more (a mention the generator wrote into the text without a tag);
- ``unlabel`` (label repair; it keeps samples): a requested entity whose words the taggers read as ``O``
  (mean ``O`` probability ``extra_threshold`` or more) becomes ``O`` text: a written mention that names
  nothing (``in rats``, ``cerebral``). Run before ``relabel``;
- ``relabel`` (label repair; it keeps samples rather than drops them): the words labelled ``O`` that the
  gold taggers read as an entity with probability ``extra_threshold`` or more, as whole predicted spans,
  get the predicted label; the requested entities never change (``entities`` still lists what was asked),
  and a sample where a confident word cannot be labelled without touching one is dropped. The output gets
  a ``relabelled`` column (words relabelled per sample) and the manifest the count;
- ``dictionary`` (label repair, no tagger): the user's name dictionary
  (:class:`~hf_ecg.labelling.dictionary.Dictionary`) labels its names left in ``O`` text and gives an entity that
  is one of its names of another type that type;
- ``exact``: the predicted tags equal the generated tags, word for word.

The taggers are :func:`~hf_ecg.taggers.training.train_tagger` models trained on the gold sentences, one
per seed in ``tagger_seeds``; with several, their label probabilities are averaged (an ensemble). A
tagger-only rule set is known to favour fragments (they are easy to agree with), so the default puts
``whole`` first.
"""

from __future__ import annotations

import logging
import os
import shutil
from collections.abc import Sequence
from dataclasses import asdict, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..data.corpus import Corpus
from ..data.selection_rules import DEFAULT_RULES, REPAIR_RULES, RULES, TAGGER_RULES, WEIGHT_RULES
from ..data.silver import SILVER_DIR
from ..data.sources import FLAG_COLUMNS
from ..hub.dataset_card import DatasetCardFields
from ..labelling.dictionary import Dictionary
from ..labelling.ensemble import train_gold_taggers
from ..runtime.ecg_config import ECGConfig
from ..runtime.tag_pieces import vocabulary_words
from ..runtime.tags import tags_to_spans, text_spans
from ..taggers.tagger import Tagger
from .config import TEACHERS, SelectionConfig
from .rules import Selection, check_rule_inputs, select_samples

if TYPE_CHECKING:
    from ..data.manifest import GenerationManifest

__all__ = [
    "DEFAULT_RULES",
    "RULES",
    "TAGGER_RULES",
    "TEACHERS",
    "Selection",
    "SelectionConfig",
    "filter_generated",
    "select_samples",
    "selection_inputs",
]

logger = logging.getLogger(__name__)


def filter_generated(
    generated_dir: str | os.PathLike,
    gold: Corpus,
    output_dir: str | os.PathLike,
    config: SelectionConfig | None = None,
    *,
    taggers: Sequence[Tagger] | None = None,
    overwrite: bool = False,
    progress_bar: bool = True,
    label_names: Sequence[str] | None = None,
    card_fields: DatasetCardFields | None = None,
    unlabelled: Sequence[Sequence[str]] = (),
    dictionary: Dictionary | None = None,
) -> Path:
    """Write the samples of ``generated_dir`` that ``config`` keeps to ``output_dir``, a generated dataset
    folder like any other (``datasets.load_dataset(output_dir, split="train")``, ``hf-ecg push-dataset``).
    ``taggers`` are gold taggers already trained (a gold NER run's, say); by default the tagger rules train
    their own (:func:`~hf_ecg.labelling.ensemble.train_gold_taggers`, self-trained on the user's ``unlabelled``
    sentences when given).
    ``label_names`` re-numbers the kept ``ner_tags`` to a gold dataset's ClassLabel order
    (:func:`~hf_ecg.data.dataset_format.align_labels`). The folder gets its dataset card (``README.md``;
    ``card_fields`` say its license, language, source: :class:`~hf_ecg.hub.dataset_card.DatasetCardFields`).

    Kept rows keep their columns and ``id`` (their id in the unfiltered set). The manifest is the source's,
    with ``num_samples`` the kept count and a ``selection`` entry: the source folder and size, the settings,
    and the samples each rule dropped. With the ``text-copy`` rule the source's manifest records ``output`` as its
    ``checked_set``: its samples may copy the private text, and :func:`~hf_ecg.hub.push.push_dataset` refuses it. A
    rerun with the same source and settings finds the folder done and
    returns it; the manifest is written last, so a folder without one is an unfinished run and is redone.
    """
    import datasets

    from ..data.dataset_format import align_labels, read_generated
    from ..hub.dataset_card import write_dataset_card

    config = config or SelectionConfig()
    check_rule_inputs(config, dictionary, unlabelled)  # before any tagger trains
    source, output = Path(generated_dir), Path(output_dir)
    manifest, table = read_generated(source)
    rows = datasets.Dataset(table)
    settings = _settings(
        source, rows.num_rows, gold, config, label_names or manifest.label_names, unlabelled, dictionary
    )
    if _selection_done(output, source, settings, manifest.label_names, overwrite):
        _mark_copy_checked(source, manifest, output, config)  # a regenerated source may have lost its mark
        return output

    rows, tags, flags = selection_inputs(rows)
    if taggers is None and config.needs_taggers and config.teacher == "gold":  # the self teacher needs the samples
        taggers = train_gold_taggers(
            gold, config.ner_config(), config.tagger_seeds, progress_bar=progress_bar, unlabelled=unlabelled
        )
    tag_pieces, vocabulary = _tag_leak_inputs(config, manifest.model)
    selection = select_samples(
        rows.data.column("tokens").to_pylist(),
        tags,
        gold,
        config,
        flags=flags,
        taggers=taggers,
        tag_pieces=tag_pieces,
        vocabulary=vocabulary,
        unlabelled=unlabelled,
        dictionary=dictionary,
    )
    if not selection.kept:
        raise ValueError(f"no sample of {source} passed the rules (dropped: {selection.dropped}); nothing written")
    kept = rows.select(selection.kept).flatten_indices()
    kept = align_labels(_repaired(kept, selection, config), settings["label_names"])

    record = _write_kept(kept, output, int(manifest.samples_per_shard or 256), settings, selection, config)
    if (source / SILVER_DIR).is_dir():  # the recipe's silver sentences are not selected: they go along whole
        shutil.copytree(source / SILVER_DIR, output / SILVER_DIR, dirs_exist_ok=True)
    _write_kept_manifest(output, manifest, kept.num_rows, record, "text-copy" in config.rules)
    _mark_copy_checked(source, manifest, output, config)
    write_dataset_card(output, card_fields)
    logger.info("kept %d of %d samples (%s) in %s", kept.num_rows, rows.num_rows, selection.dropped, output)
    return output


def _write_kept_manifest(
    output: Path, manifest: GenerationManifest, kept: int, record: dict[str, Any], copy_checked: bool
) -> None:
    """The kept folder's manifest: the source's, with the kept count and the selection record; checked against the
    text when the text-copy rule ran, else as checked as its source (one kept from an unchecked set is unchecked)."""
    from ..data.manifest import write_manifest

    write_manifest(
        output,
        replace(
            manifest,
            num_samples=kept,
            label_names=record["label_names"],
            selection=record,
            checked_set=None,
            copy_checked=manifest.derived_copy_check(copy_checked),
        ),
    )


def _mark_copy_checked(source: Path, manifest: GenerationManifest, output: Path, config: SelectionConfig) -> None:
    """After a text-copy check, the source's manifest names the kept folder as its ``checked_set``: its samples may
    copy the private text, and push-dataset refuses it."""
    from ..data.manifest import write_manifest

    if "text-copy" in config.rules and (manifest.checked_set != str(output) or manifest.copy_checked is not False):
        write_manifest(source, replace(manifest, checked_set=str(output), copy_checked=False))


def _settings(
    source: Path,
    source_samples: int,
    gold: Corpus,
    config: SelectionConfig,
    label_names: Sequence[str],
    unlabelled: Sequence[Sequence[str]],
    dictionary: Dictionary | None,
) -> dict[str, Any]:
    """What a selection is made from and with: a rerun with the same finds its folder done."""
    return {
        "source": str(source),
        "source_samples": source_samples,
        "gold": gold.name,
        "gold_sentences": len(gold),
        "config": asdict(config),
        "label_names": list(label_names),
        **({"unlabelled_sentences": len(unlabelled)} if unlabelled else {}),
        **({"dictionary": {label: len(dictionary.names[label]) for label in dictionary.types}} if dictionary else {}),
    }


def _selection_done(
    output: Path, source: Path, settings: dict[str, Any], label_names: list[str], overwrite: bool
) -> bool:
    """Whether ``output`` already holds this selection; otherwise the folder is made ready to write (an unfinished
    run's shards removed; another dataset replaced with ``overwrite``, refused otherwise)."""
    from ..data.outputs import DATASET, prepare_output

    done = _finished_selection(output)
    if done is not None:
        done.setdefault("label_names", label_names)  # selections written before the option
    if done is not None and {k: done.get(k) for k in settings} == settings:
        logger.info("%s already holds this selection", output)
        return True
    # stopped midway: shards in data/ and nothing else, not even a manifest
    unfinished = output.is_dir() and done is None and {p.name for p in output.iterdir()} == {"data"}
    if unfinished and not DATASET.foreign(output):
        shutil.rmtree(output / "data")
    else:  # a file, files hf_ecg did not write (refused, overwrite or not), or another dataset
        prepare_output(output, DATASET, overwrite=overwrite, inputs=[source])
    return False


def _tag_leak_inputs(config: SelectionConfig, model: str | None) -> tuple[Any, frozenset[str]]:
    """The ``tag-leak`` rule's forms of each type's name and the tokenizer's words, from the generator when it is
    reachable (``None`` and nothing: the type names alone)."""
    tag_pieces, vocabulary = None, frozenset()
    if "tag-leak" in config.rules and model:
        try:
            from transformers import AutoTokenizer

            tag_pieces = ECGConfig.from_pretrained(model).tag_pieces
            vocabulary = vocabulary_words(AutoTokenizer.from_pretrained(model).get_vocab())
        except Exception:  # a model folder that moved, or a Hub repo while offline: the type names alone
            pass
    return tag_pieces, vocabulary


def _write_kept(
    kept: Any, output: Path, per_shard: int, settings: dict[str, Any], selection: Selection, config: SelectionConfig
) -> dict[str, Any]:
    """Write the kept rows as shards of ``per_shard``; the manifest's ``selection`` record."""
    import pyarrow.parquet as pq

    from ..data.dataset_format import SHARD_PATTERN

    data_dir = output / "data"
    data_dir.mkdir(parents=True, exist_ok=True)
    table = kept.data.table
    for shard, start in enumerate(range(0, kept.num_rows, per_shard)):
        pq.write_table(table.slice(start, per_shard), data_dir / SHARD_PATTERN.format(shard))
    record = {**settings, "kept": kept.num_rows, "dropped": selection.dropped}
    if selection.shared_runs is not None:
        record["shared_runs"] = selection.shared_runs
    if WEIGHT_RULES & set(config.rules):
        record["unknown"] = {"samples": len(selection.unknown), "words": sum(map(len, selection.unknown.values()))}
    if REPAIR_RULES & set(config.rules):
        record["relabelled"] = {
            "samples": len(selection.relabelled),
            "words": sum(kept.data.column("relabelled").to_pylist()),
        }
    return record


def selection_inputs(rows: Any) -> tuple[Any, list[list[str]], dict[str, list[Any]]]:
    """A generated folder's rows (a ``datasets.Dataset``) as :func:`select_samples` reads them: the rows in id order,
    their IOB2 tags, and the decoder's flag columns they have."""
    ids = rows.data.column("id").to_pylist()
    rows = rows.select(sorted(range(rows.num_rows), key=ids.__getitem__)).flatten_indices()
    column = rows.data.column
    names = rows.features["ner_tags"].feature.names
    tags = [[names[k] for k in row] for row in column("ner_tags").to_pylist()]
    flags = {c: column(c).to_pylist() for c in FLAG_COLUMNS if c in rows.column_names and c != "entities"}
    return rows, tags, flags


def _with_relabelled(rows: Any, new_tags: Sequence[list[str] | None]) -> Any:
    """``rows`` with the ``relabel`` rule's tags in ``ner_tags`` (and ``spans``), and a ``relabelled`` column:
    the words each sample had relabelled (0 where it had none)."""
    import datasets

    names = rows.features["ner_tags"].feature.names
    features = datasets.Features({**rows.features, "relabelled": datasets.Value("int32")})

    def repair(row: dict[str, Any], index: int) -> dict[str, Any]:
        new = new_tags[index]
        if new is None or any(tag not in names for tag in new):  # none, or a label this dataset cannot hold
            return {**row, "relabelled": 0}
        changed = sum(names[old] != tag for old, tag in zip(row["ner_tags"], new, strict=True))
        row = {**row, "ner_tags": [names.index(tag) for tag in new], "relabelled": changed}
        if "spans" in row:
            row["spans"] = text_spans(row["tokens"], tags_to_spans(new, "IOB2")[0])
        return row

    return rows.map(repair, with_indices=True, features=features, desc="relabelling")


def _repaired(kept: Any, selection: Selection, config: SelectionConfig) -> Any:
    """The kept rows with the repair rules' new labels (``relabelled``) and the unknown rule's ``label_weights``."""
    if REPAIR_RULES & set(config.rules):
        kept = _with_relabelled(kept, [selection.relabelled.get(i) for i in selection.kept])
    if WEIGHT_RULES & set(config.rules):
        kept = _with_unknown(kept, [selection.unknown.get(i, []) for i in selection.kept])
    return kept


def _with_unknown(rows: Any, unknown: Sequence[Sequence[int]]) -> Any:
    """``rows`` with a ``label_weights`` column: 0.0 on the words the ``unknown`` rule marked (out of a tagger's
    loss, as a silver split's unknown words), 1.0 elsewhere."""
    import datasets

    features = datasets.Features({**rows.features, "label_weights": datasets.Sequence(datasets.Value("float32"))})

    def weigh(row: dict[str, Any], index: int) -> dict[str, Any]:
        weights = [1.0] * len(row["tokens"])
        for j in unknown[index]:
            weights[j] = 0.0
        return {**row, "label_weights": weights}

    return rows.map(weigh, with_indices=True, features=features, desc="marking unknown words")


def _finished_selection(output: Path) -> dict[str, Any] | None:
    from ..data.manifest import MANIFEST_NAME, read_manifest

    if not (output / MANIFEST_NAME).is_file():
        return None
    selection = read_manifest(output).selection
    return selection if isinstance(selection, dict) else {}
