"""Baselines: mention replacement keeps labels aligned and writes the generate schema."""

from __future__ import annotations

from pathlib import Path

import datasets
from hypothesis import given
from hypothesis import strategies as st

from conftest import labelled_sentences
from hf_ecg.cli import main
from hf_ecg.data.corpus import Corpus, Sentence, read_conll
from hf_ecg.data.dataset_format import (
    DATA_FILES_HEADER,
    DECODER_COLUMNS,
    bio_labels,
    load_data_folder,
    read_generated,
)
from hf_ecg.data.sources import load_labelled
from hf_ecg.hub.dataset_card import ECGDatasetCardData
from hf_ecg.runtime.blocks import decompose
from hf_ecg.runtime.mentions import MentionBank
from hf_ecg.runtime.tags import tags_to_spans
from hf_ecg.synthetic.mention_replacement import mention_replacement
from hf_ecg.synthetic.run_config import DatasetRunConfig
from tiny import toy_corpus


def as_corpus(items):
    return Corpus([Sentence(tuple(tokens), tuple(spans)) for tokens, spans in items], name="gen")


@given(
    st.lists(labelled_sentences(), min_size=1, max_size=5),
    st.integers(1, 12),
    st.integers(0, 99),
    st.sampled_from([0.0, 0.5, 1.0]),
)
def test_mention_replacement_keeps_labels_aligned(items, num_samples, seed, probability):
    corpus = as_corpus(items)
    bank = MentionBank.from_sentences(corpus)
    rows = mention_replacement(corpus, num_samples, seed=seed, probability=probability)
    assert [row["id"] for row in rows] == list(range(num_samples))
    for row in rows:
        source = corpus[row["id"] % len(corpus)]
        template, _ = decompose(source.tokens, source.spans)
        spans, repairs = tags_to_spans(row["ner_tags"], "IOB2")
        assert not repairs and len(row["ner_tags"]) == len(row["tokens"])
        assert tuple(s.label for s in spans) == template.entity_types == tuple(row["entities"])
        assert row["template"] == str(template)
        for span in spans:  # every new mention is a gold mention of its type
            assert tuple(row["tokens"][span.start : span.end]) in bank.counts(span.label)
        if probability == 0.0:
            assert row["tokens"] == list(source.tokens)


def test_mentions_are_swapped_for_other_mentions(tmp_path):
    corpus = read_conll(toy_corpus(tmp_path / "toy.tsv"))
    rows = mention_replacement(corpus, seed=0)
    assert len(rows) == len(corpus)
    for row, sentence in zip(rows, corpus, strict=True):
        old = [sentence.tokens[s.start : s.end] for s in sentence.spans]
        new = [tuple(row["tokens"][s.start : s.end]) for s in tags_to_spans(row["ner_tags"])[0]]
        assert all(a != b for a, b in zip(old, new, strict=True))  # each type has several distinct mentions


def test_cli_writes_a_dataset_in_the_generate_schema(tmp_path, capsys):
    gold = toy_corpus(tmp_path / "gold.tsv", repeat=2)
    out = tmp_path / "mr"
    assert main(["baseline", "mention-replacement", "--data", f"{gold}:3", "-n", "7", "-o", str(out)]) == 0
    data = datasets.load_dataset(str(out), split="train")
    assert data.num_rows == 7 and data.features["ner_tags"].feature.names == bio_labels(["Chemical", "Disease"])
    assert "wrote 7 mention-replacement samples" in capsys.readouterr().out
    # the generated-dataset format: its manifest, so the readers of generated folders take it too
    manifest, table = read_generated(out)
    assert manifest.method == "mention-replacement" and manifest.num_samples == table.num_rows == 7
    card = ECGDatasetCardData.from_generated(out)
    assert card.num_samples == 7 and sum(card.entity_counts.values()) > 0
    text = str(card.to_dataset_card())  # says what the baseline did, not that a generator wrote it
    assert "# Augmented NER data: the mention replacement baseline" in text
    made = f"Each row is a gold sentence of `{gold}:3` (in order, cycled) with each mention replaced"
    assert made in text
    assert "Generator:" not in text and "ECG-QALM" not in text and "mention-replacement" in text
    # no decoder wrote its rows: none of the decoder's columns, rather than columns of zeros
    assert not set(DECODER_COLUMNS) & set(data.column_names) and card.forced_tags is None
    assert "`forced_tags`" not in text and "unforced sentences" not in text


def test_a_baseline_folder_an_earlier_release_wrote_still_reads(tmp_path):
    """A committed mention-replacement set written while the decoder's columns were zero-filled: load_dataset,
    the readers of generated folders, its card and selection still take it."""
    folder = Path(__file__).resolve().parents[1] / "results" / "dictionaries" / "sets" / "bc45-mr-dict-10x"
    data = datasets.load_dataset(str(folder), split="train")
    assert data.num_rows == 450 and set(DECODER_COLUMNS) <= set(data.column_names)
    manifest, table = read_generated(folder)
    assert manifest.method == "mention-replacement" and table.num_rows == 450
    card = ECGDatasetCardData.from_generated(folder)
    assert card.forced_tags == 0 and "`forced_tags`" in str(card.to_dataset_card())


def test_folders_of_one_name_read_as_their_own_rows(tmp_path):
    """datasets 5.2 caches a local folder whose card has a ``configs`` header by its name and card, not its
    files: ``load_dataset`` on a second folder named like the first gives the first's rows. The readers of
    hf-ecg's folders (evaluate, filter) must read each folder's own shards."""
    gold = toy_corpus(tmp_path / "gold.tsv", repeat=2)
    folders = [tmp_path / "first" / "synthetic", tmp_path / "second" / "synthetic"]
    for seed, out in enumerate(folders):
        assert (
            main(
                [
                    "baseline",
                    "mention-replacement",
                    "--data",
                    f"{gold}:3",
                    "-n",
                    "6",
                    "--seed",
                    str(seed),
                    "-o",
                    str(out),
                ]
            )
            == 0
        )
        (out / "README.md").write_text(DATA_FILES_HEADER)  # the header of the cards generate and filter write
    for out in folders:
        _, table = read_generated(out)
        corpus = load_labelled(out)
        assert [list(s.tokens) for s in corpus] == table.column("tokens").to_pylist()
        assert len(load_data_folder(out)) == table.num_rows
    first, second = (load_labelled(out) for out in folders)
    assert [s.tokens for s in first] != [s.tokens for s in second]  # two seeds: other mentions


def test_lm_sample_is_the_whole_template_after_its_tags():
    from hf_ecg.runtime.blocks import ENDTEXT, Template, lm_sample

    sample = lm_sample(Template(("<Chemical>", "cures", "<Disease>", ".")))
    assert (sample.context, sample.question) == ("", "<Chemical> <Disease>")
    assert sample.answer == f"<Chemical> cures <Disease> . {ENDTEXT}"
    assert lm_sample(Template(("no", "entity"))).question == ""


def test_ecg_lm_trains_and_generates_exactly_the_requested_entities(tmp_path):
    """`hf-ecg train --layout lm` (the ECG-LM ablation) -> generate_dataset dispatches to TemplateLMDecoder."""
    import json

    from hf_ecg.runtime.decoding import DecodingConfig
    from hf_ecg.synthetic.generate import generate_dataset
    from tiny import save_tiny_model

    data = toy_corpus(tmp_path / "toy.tsv", repeat=3)
    out = tmp_path / "lm"
    base = save_tiny_model(tmp_path / "base")
    code = main(
        [
            "train",
            "--data",
            str(data),
            "--model",
            str(base),
            "--output",
            str(out),
            "--max-steps",
            "2",
            "--layout",
            "lm",
            "--save_strategy",
            "no",
            "--use_cpu",
            "true",
        ]
    )
    assert code == 0
    saved = json.loads((out / "ecg_config.json").read_text())
    assert saved["layout"] == "lm"
    assert saved["mention_layout"] == "in-sentence"  # the default after-sentence continues a block row: ECG-LM has none
    requested = [["Disease", "Chemical", "Disease"], [], ["Chemical"]] * 3
    decoding = DecodingConfig(batch_size=4, max_block_tokens=5)
    generated = generate_dataset(
        out,
        tmp_path / "synthetic",
        len(requested),
        entities=requested,
        seed=1,
        decoding=decoding,
        run=DatasetRunConfig(progress_bar=False),
    )
    rows = datasets.load_dataset(str(generated), split="train")
    names = rows.features["ner_tags"].feature.names
    for row, sequence in zip(rows, requested, strict=True):
        spans, _ = tags_to_spans([names[i] for i in row["ner_tags"]], "IOB2")
        assert [s.label for s in spans] == sequence == row["entities"]
        assert row["tokens"]  # never an empty sentence
    card = ECGDatasetCardData.from_generated(generated)
    text = str(card.to_dataset_card())
    assert card.method == "ECG-LM" and "ecg-lm" in card.card_data().to_dict()["tags"]
    assert "# Synthetic NER data written by an ECG-LM generator" in text and "ECG-QALM)" not in text


def test_ecg_lm_decoding_does_not_depend_on_batching():
    """Greedy: left padding, cache and finished rows must not change any row's template."""
    from hf_ecg.runtime.decoding import DecodingConfig, TemplateLMDecoder
    from tiny import tiny_ecg_model

    model, tokenizer, config = tiny_ecg_model()
    config.layout = "lm"
    requested = [["Disease", "Chemical", "Disease"], [], ["Chemical"], ["Chemical", "Chemical"]]

    def decode(batch_size):
        settings = DecodingConfig(batch_size=batch_size, do_sample=False, max_block_tokens=6)
        return [d.template for d in TemplateLMDecoder(model, tokenizer, config, settings).decode(requested)]

    assert decode(4) == decode(1)


def test_mention_replacement_and_generate_write_through_the_one_writer(tmp_path, monkeypatch):
    """Both families are sample sources the one writer drives: its shards, manifest (``method`` names the family)
    and card; mention replacement writes no decoder column, ECG-QALM writes them all."""
    import hf_ecg.synthetic.writer as writer
    from hf_ecg.runtime.decoding import DecodingConfig
    from hf_ecg.synthetic.generate import generate_dataset
    from tiny import save_tiny_ecg_model

    real, driven = writer._write_shards, []

    def recording(source, *args):
        driven.append(source.method)
        return real(source, *args)

    monkeypatch.setattr(writer, "_write_shards", recording)
    gold = toy_corpus(tmp_path / "gold.tsv", repeat=2)
    out = tmp_path / "mr"
    assert main(["baseline", "mention-replacement", "--data", str(gold), "-n", "5", "-o", str(out)]) == 0
    generated = generate_dataset(
        save_tiny_ecg_model(tmp_path / "model"),
        tmp_path / "ecg",
        3,
        decoding=DecodingConfig(max_block_tokens=3, batch_size=4),
        run=DatasetRunConfig(progress_bar=False),
    )
    assert driven == ["mention-replacement", None]
    for folder in (out, generated):
        assert (folder / "README.md").is_file() and (folder / "data" / "train-00000.parquet").is_file()
    mr, ecg = (datasets.load_dataset(str(f), split="train") for f in (out, generated))
    assert not set(DECODER_COLUMNS) & set(mr.column_names) and set(DECODER_COLUMNS) <= set(ecg.column_names)


def test_mention_replacement_sharded_or_resumed_is_the_same_set(tmp_path):
    """The run's one stream is served shard by shard: any shard size gives the rows of one, and a shard lost from an
    unfinished run is written again byte for byte."""
    import shutil

    from hf_ecg.data.dataset_format import UNFINISHED_DIR
    from hf_ecg.synthetic.mention_replacement import MentionReplacementSource, write_mention_replacement

    gold = read_conll(toy_corpus(tmp_path / "gold.tsv", repeat=2))
    expected = [row["tokens"] for row in mention_replacement(gold, 9, seed=4)]
    folders = {}
    for size in (9, 2):
        run = DatasetRunConfig(samples_per_shard=size, progress_bar=False)
        folders[size] = write_mention_replacement(
            MentionReplacementSource(gold, 9, seed=4), tmp_path / str(size), run=run
        )
        _, table = read_generated(folders[size])
        assert table.sort_by("id").column("tokens").to_pylist() == expected
    whole = {p.name: p.read_bytes() for p in (folders[2] / "data").glob("*.parquet")}
    # an unfinished run that had saved shards 0-2: shards 3 and 4 are written, the saved ones kept
    shutil.move(folders[2] / "data", folders[2] / UNFINISHED_DIR)
    for name in ("train-00003.parquet", "train-00004.parquet"):
        (folders[2] / UNFINISHED_DIR / name).unlink()
    run = DatasetRunConfig(samples_per_shard=2, progress_bar=False)
    write_mention_replacement(MentionReplacementSource(gold, 9, seed=4), folders[2], run=run)
    assert {p.name: p.read_bytes() for p in (folders[2] / "data").glob("*.parquet")} == whole
