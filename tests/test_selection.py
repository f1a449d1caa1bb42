"""Selection: each rule on hand-made samples, a real tiny tagger for the tagger rules, and `hf-ecg filter`."""

from __future__ import annotations

import json
import shutil
from dataclasses import replace

import datasets
import numpy as np
import pytest
from huggingface_hub import DatasetCard
from hypothesis import given
from hypothesis import strategies as st

from hf_ecg.cli import main
from hf_ecg.data.corpus import Corpus, Sentence, read_conll
from hf_ecg.hub.dataset_card import ECGDatasetCardData
from hf_ecg.labelling.ensemble import ensemble_proba, entity_like, relabel
from hf_ecg.runtime.decoding import DecodingConfig
from hf_ecg.runtime.tags import Span, tags_to_spans, text_spans
from hf_ecg.selection import SelectionConfig, filter_generated, select_samples
from hf_ecg.selection.teacher import teacher_probabilities, teacher_taggers
from hf_ecg.synthetic.generate import generate_dataset
from hf_ecg.synthetic.run_config import DatasetRunConfig
from hf_ecg.taggers.tagger import NERConfig
from hf_ecg.taggers.training import train_tagger
from tiny import save_tiny_ecg_model, toy_corpus

# The toy corpus (tests/tiny.py):
#   Aspirin/B-Chemical cures headache/B-Disease .
#   Ibuprofen/B-Chemical relieves severe/B-Disease pain/I-Disease .
#   Patients with fever/B-Disease received paracetamol/B-Chemical .
#   No effect was seen .
IBUPROFEN = "Ibuprofen relieves severe pain .".split()


@pytest.fixture(scope="module")
def gold(tmp_path_factory):
    return read_conll(toy_corpus(tmp_path_factory.mktemp("gold") / "toy.tsv"))


@pytest.fixture(scope="module")
def tagger(toy_tagger):
    """A tiny BERT that has learnt the toy corpus by heart (entity F1 1.0 on it)."""
    assert toy_tagger.predict([IBUPROFEN]) == [["B-Chemical", "O", "B-Disease", "I-Disease", "O"]]
    return toy_tagger


def kept(tokens, tags, gold, rule, taggers=None, flags=None, tag_pieces=None, **settings):
    selection = select_samples(
        tokens,
        tags,
        gold,
        SelectionConfig(rules=[rule], **settings),
        flags=flags,
        taggers=taggers,
        tag_pieces=tag_pieces,
    )
    assert len(selection.kept) + sum(selection.dropped.values()) == len(tokens)
    assert set(selection.dropped) <= {rule}
    return selection.kept


def test_duplicate_drops_gold_sentences_and_repeats(gold):
    tokens = [
        "Aspirin cures headache .".split(),  # a gold sentence
        "Aspirin cures fever .".split(),
        "Aspirin cures fever .".split(),  # a repeat of the sample before
        "Aspirin cures a fever .".split(),
    ]
    tags = [["O"] * len(t) for t in tokens]
    assert kept(tokens, tags, gold, "duplicate") == [1, 3]


def test_near_copy_drops_above_the_threshold(gold):
    tokens = ["Aspirin cures fever .".split(), "Paracetamol was given today to the patients .".split()]
    tags = [["O"] * len(t) for t in tokens]
    # ROUGE-L of the first to "Aspirin cures headache .": 2 * 3 / 8 = 0.75
    assert kept(tokens, tags, gold, "near-copy", near_copy_threshold=0.7) == [1]
    assert kept(tokens, tags, gold, "near-copy", near_copy_threshold=0.75) == [0, 1]


def test_tag_leak_drops_type_names_written_as_words(gold):
    tokens = [
        "Patients with Disease received paracetamol .".split(),
        "Patients with ChemicalHLA received paracetamol .".split(),
        "Patients with fever received Chemical .".split(),  # the type name as the mention itself: not a leak
        "Patients with disease received paracetamol .".split(),  # lower case: an ordinary word
        "Patients with Dise received paracetamol .".split(),  # a piece of the tag's name, as the generator spells it
        "Patients with Chemicals received paracetamol .".split(),  # an English word
    ]
    tags = [["O", "O", "O", "O", "B-Chemical", "O"]] * 2 + [["O", "O", "B-Disease", "O", "B-Chemical", "O"]]
    tags += [["O", "O", "O", "O", "B-Chemical", "O"]] * 3
    assert kept(tokens, tags, gold, "tag-leak") == [2, 3, 5]  # the type names alone: Dise begins Disease
    tokens[4][2] = "ase"  # the other piece of <Disease>, as the generator's tokenizer splits it
    assert kept(tokens, tags, gold, "tag-leak") == [2, 3, 4, 5]
    pieces = {"Chemical": ["Chemical"], "Disease": ["Dise", "Disease", "ase"]}
    assert kept(tokens, tags, gold, "tag-leak", tag_pieces=pieces) == [2, 3, 5]


def test_tag_leak_drops_what_the_decoder_flagged(gold):
    tokens = ["Patients with fever received paracetamol .".split()] * 2
    tags = [["O", "O", "B-Disease", "O", "B-Chemical", "O"]] * 2
    assert kept(tokens, tags, gold, "tag-leak", flags={"tag_pieces": [0, 2]}) == [0]


def test_whole_keeps_only_whole_single_sentences(gold):
    tokens = [
        "Patients with fever received paracetamol .".split(),
        "Patients with fever received".split(),  # ends mid-phrase
        "Fever .".split(),  # under 5 tokens
        "Patients with fever fever fever received .".split(),  # a loop
        "Patients with fever received paracetamol . No effect was seen .".split(),  # two sentences
        "Patients with fever received paracetamol .".split(),  # flagged forced below
    ]
    tags = [["O"] * len(t) for t in tokens]
    assert kept(tokens, tags, gold, "whole") == [0, 5]
    flags = {"forced_tags": [0, 0, 0, 0, 0, 1], "cut_blocks": [0] * 6, "complete": [True] * 6}
    assert kept(tokens, tags, gold, "whole", flags=flags) == [0]  # the decoder's flags win over the last token


def test_empty_slot_drops_phrases_left_open_before_punctuation(gold):
    tokens = [
        "Patients with fever received paracetamol .".split(),
        "Patients with , but not with fever , received paracetamol .".split(),  # 'with ,': a mention missing
        "Aspirin cures headache and .".split(),  # ends on 'and'
        "- induced fever was seen .".split(),  # opens with punctuation: the mention before '-' is missing
        "No effect was seen in .".split(),
        "Aspirin cures headache ( fever ) .".split(),  # brackets are not slots
        "Patients at - risk in group A ( a ) received paracetamol .".split(),  # a hyphen, a name, a list label
        "Fever and , at rest , headache were seen .".split(),  # a conjunction opens a parenthesis
    ]
    tags = [["O"] * len(t) for t in tokens]
    assert kept(tokens, tags, gold, "empty-slot") == [0, 5, 6, 7]


def test_empty_slot_allows_what_gold_puts_before_punctuation(tmp_path):
    corpus = tmp_path / "closing.tsv"
    corpus.write_text("".join(f"{word}\tO\n" for word in "Fever was seen in .".split()) + "\n")
    closing_gold = read_conll(corpus)
    tokens = ["No effect was seen in .".split()]
    assert kept(tokens, [["O"] * 6], closing_gold, "empty-slot") == [0]


def test_mention_type_drops_a_mention_read_as_another_type_only(gold, tagger):
    tokens = [IBUPROFEN] * 4
    tags = [
        ["B-Chemical", "O", "B-Disease", "I-Disease", "O"],  # as the tagger reads them
        ["B-Chemical", "O", "O", "O", "O"],  # an entity left out: not this rule's concern
        ["B-Disease", "O", "B-Disease", "I-Disease", "O"],  # the drug in a Disease slot
        ["B-Chemical", "O", "O", "B-Disease", "O"],  # a shorter span of the right type
    ]
    assert kept(tokens, tags, gold, "mention-type", taggers=[tagger]) == [0, 1, 3]


def test_consistent_needs_every_generated_entity_predicted(gold, tagger):
    tokens = [IBUPROFEN] * 4
    tags = [
        ["B-Chemical", "O", "B-Disease", "I-Disease", "O"],  # as the tagger predicts
        ["B-Chemical", "O", "O", "O", "O"],  # an entity left out: still consistent
        ["B-Disease", "O", "B-Disease", "I-Disease", "O"],  # wrong type
        ["B-Chemical", "O", "O", "B-Disease", "O"],  # wrong span
    ]
    assert kept(tokens, tags, gold, "consistent", taggers=[tagger]) == [0, 1]


def test_no_extra_drops_confident_entities_labelled_o(gold, tagger):
    tokens = [IBUPROFEN] * 3
    tags = [
        ["B-Chemical", "O", "B-Disease", "I-Disease", "O"],
        ["B-Chemical", "O", "O", "O", "O"],  # the tagger sees a disease in the O words
        ["B-Disease", "O", "B-Disease", "I-Disease", "O"],  # wrong type, but no O word is an entity
    ]
    assert kept(tokens, tags, gold, "no-extra", taggers=[tagger]) == [0, 2]
    assert kept(tokens, tags, gold, "no-extra", taggers=[tagger], extra_threshold=1.0) == [0, 1, 2]


def test_relabel_labels_what_the_taggers_read_and_never_touches_a_requested_entity(gold, tagger):
    """Label repair: the O words the gold tagger confidently reads as an entity get that label; the requested
    entities stay; a sample whose confident word cannot be labelled apart from a requested entity is dropped."""
    tokens = [IBUPROFEN] * 4
    tags = [
        ["B-Chemical", "O", "B-Disease", "I-Disease", "O"],  # nothing to repair
        ["B-Chemical", "O", "O", "O", "O"],  # "severe pain" left O: relabelled as the tagger reads it
        ["O", "O", "B-Disease", "I-Disease", "O"],  # "Ibuprofen" left O: relabelled Chemical
        ["B-Chemical", "O", "O", "B-Disease", "O"],  # "severe" is part of a predicted span that holds a requested word
    ]
    selection = select_samples(tokens, tags, gold, SelectionConfig(rules=["relabel"]), taggers=[tagger])
    assert selection.kept == [0, 1, 2] and selection.dropped == {"relabel": 1}
    assert selection.relabelled == {
        1: ["B-Chemical", "O", "B-Disease", "I-Disease", "O"],
        2: ["B-Chemical", "O", "B-Disease", "I-Disease", "O"],
    }
    for i, new in selection.relabelled.items():  # the requested entities are all still there
        assert all(new[j] == tag for j, tag in enumerate(tags[i]) if tag != "O")
    unsure = select_samples(
        tokens, tags, gold, SelectionConfig(rules=["relabel"], extra_threshold=1.0), taggers=[tagger]
    )
    assert unsure.kept == [0, 1, 2, 3] and unsure.relabelled == {}  # nothing is that sure: nothing changes


def test_unlabel_makes_a_mention_the_taggers_read_as_o_text_and_relabel_then_repairs(gold, tagger):
    tokens = [IBUPROFEN] * 3
    tags = [
        ["B-Chemical", "O", "B-Disease", "I-Disease", "O"],  # as the tagger reads it: unchanged
        ["B-Chemical", "B-Disease", "B-Disease", "I-Disease", "O"],  # "relieves" names nothing
        ["O", "B-Chemical", "O", "O", "O"],  # "relieves" as a chemical, the real names left O
    ]
    unlabelled = select_samples(tokens, tags, gold, SelectionConfig(rules=["unlabel"]), taggers=[tagger])
    assert unlabelled.kept == [0, 1, 2]
    assert unlabelled.relabelled == {1: tags[0], 2: ["O"] * 5}
    both = select_samples(tokens, tags, gold, SelectionConfig(rules=["unlabel", "relabel"]), taggers=[tagger])
    assert both.kept == [0, 1, 2] and both.relabelled == {1: tags[0], 2: tags[0]}
    sure = select_samples(tokens, tags, gold, SelectionConfig(rules=["unlabel"], extra_threshold=1.0), taggers=[tagger])
    assert sure.relabelled == {}  # no word is O with probability 1: nothing changes


LABELS = ["O", "B-A", "I-A"]


def _probabilities(predicted, confidence):
    """Word-by-label probabilities whose argmax is ``predicted``, that label at ``confidence`` each."""
    rows = np.full((len(predicted), len(LABELS)), (1.0 - confidence) / (len(LABELS) - 1))
    for j, label in enumerate(predicted):
        rows[j, LABELS.index(label)] = confidence
    return rows


@pytest.mark.parametrize(
    ("words", "predicted", "repaired"),
    [
        # a mark alone is never a name: it stays O, and the sample is kept
        ("in ( the cells", "O B-A O O", "O O O O"),
        ("p50 ( NFKB1 )", "B-A I-A I-A I-A", "B-A I-A I-A I-A"),  # a span may close the bracket it opens
        ("( IL-2 )", "B-A I-A I-A", "O O O"),  # but not start with a mark
        ("IL-2 ) cells", "B-A I-A O", "O O O"),  # but not one it does not open
        ("24 h products .", "O O I-A O", "O O O O"),  # a fragment: it starts with I-, its start unsure
        ("the IL-2 gene .", "O B-A I-A O", "O B-A I-A O"),
    ],
)
def test_relabel_never_labels_punctuation_or_fragments(words, predicted, repaired):

    words, predicted = words.split(), predicted.split()
    assert relabel(words, ["O"] * len(words), _probabilities(predicted, 0.9), LABELS, 0.5) == repaired.split()


@given(st.lists(st.sampled_from(["cells", "IL-2", "(", ")", ",", "-", "of"]), min_size=1, max_size=8), st.data())
def test_relabel_keeps_requested_entities_and_labels_no_mark(words, data):
    tags = data.draw(st.lists(st.sampled_from(["O", "O", "B-A", "I-A"]), min_size=len(words), max_size=len(words)))
    tags = [tag if tag != "I-A" or (j and tags[j - 1] != "O") else "B-A" for j, tag in enumerate(tags)]
    predicted = data.draw(st.lists(st.sampled_from(LABELS), min_size=len(words), max_size=len(words)))
    repaired = relabel(words, tags, _probabilities(predicted, 0.9), LABELS, 0.5)
    if repaired is None:
        return
    assert all(repaired[j] == tag for j, tag in enumerate(tags) if tag != "O")  # requested entities stay
    old = {(s.start, s.end) for s in tags_to_spans(tags, "IOB2")[0]}
    for span in tags_to_spans(repaired, "IOB2")[0]:
        if (span.start, span.end) not in old:  # a relabelled span: a name, as the taggers predict it
            assert entity_like(words[span.start : span.end], predicted[span.start])
            assert any(c.isalnum() for c in words[span.start])


def test_the_self_teacher_judges_each_fold_with_taggers_that_never_saw_it(gold, tagger, tmp_path):
    """Self-training's teacher: one tagger per fold and seed, trained on gold and the other folds' samples; a
    sample's probabilities are the ensemble of its own fold's taggers."""
    tokens = [IBUPROFEN, "Aspirin cures fever .".split(), "Patients with headache received aspirin .".split()]
    tags = [
        ["B-Chemical", "O", "B-Disease", "I-Disease", "O"],
        ["B-Chemical", "O", "B-Disease", "O"],
        ["O", "O", "B-Disease", "O", "O", "O"],
    ]
    config = SelectionConfig(
        rules=["relabel"],
        teacher="self",
        tagger_model=tagger.config.model,
        tagger_epochs=1,
        tagger_batch_size=4,
        tagger_seeds=[1, 2],
    )
    taggers = teacher_taggers(tokens, tags, gold, config)
    assert len(taggers) == 4 and all(t.labels == tagger.labels for t in taggers)  # fold-major: fold 0 seeds 1, 2
    probabilities = teacher_probabilities(taggers, tokens, [0, 1, 2], config)
    for i in range(3):
        fold = taggers[2 * (i % 2) : 2 * (i % 2) + 2]
        expected = (fold[0].predict_proba([tokens[i]])[0] + fold[1].predict_proba([tokens[i]])[0]) / 2
        np.testing.assert_allclose(probabilities[i], expected, rtol=1e-5)
    assert not np.allclose(taggers[0].predict_proba([tokens[0]])[0], taggers[2].predict_proba([tokens[0]])[0])
    with pytest.raises(ValueError, match="needs 4 taggers"):
        teacher_probabilities([tagger], tokens, [0], config)
    with pytest.raises(ValueError, match="at least 2 folds"):
        SelectionConfig(teacher="self", teacher_folds=1)
    with pytest.raises(ValueError, match="unknown teacher 'reference'; known: gold, self"):
        SelectionConfig(teacher="reference")


def test_exact_needs_every_tag(gold, tagger):
    tokens = [IBUPROFEN] * 3
    tags = [
        ["B-Chemical", "O", "B-Disease", "I-Disease", "O"],
        ["B-Chemical", "O", "O", "O", "O"],
        ["B-Chemical", "O", "B-Disease", "I-Disease", "B-Chemical"],
    ]
    assert kept(tokens, tags, gold, "exact", taggers=[tagger]) == [0]


def test_unknown_types_and_rules(gold, tagger):
    tags = [["B-Gene", "O", "O", "O", "O"]]
    assert kept([IBUPROFEN], tags, gold, "consistent", taggers=[tagger]) == []  # no gold tagger knows Gene
    with pytest.raises(ValueError, match=r"unknown selection rule\(s\) fluent; known: duplicate, near-copy"):
        SelectionConfig(rules=["fluent"])


def test_an_ensemble_averages_the_taggers(tmp_path, gold, tagger):

    other = train_tagger([gold], NERConfig(model=tagger.config.model, epochs=1, batch_size=4), seed=2)
    sentences = [IBUPROFEN, "No effect was seen .".split()]
    mean = ensemble_proba([tagger, other], sentences)
    for a, b, m in zip(tagger.predict_proba(sentences), other.predict_proba(sentences), mean, strict=True):
        np.testing.assert_allclose(m, (a + b) / 2)
        np.testing.assert_allclose(m.sum(-1), 1.0, rtol=1e-5)


def test_rules_run_in_order_and_target_size_keeps_the_first(gold):
    tokens = [
        "Aspirin cures headache .".split(),  # duplicate (and whole): counted under the first rule
        "Patients with fever".split(),
        "Patients with fever received paracetamol today .".split(),
        "Patients with fever received aspirin today .".split(),
        "Patients with fever received nothing today .".split(),
    ]
    tags = [["O"] * len(t) for t in tokens]
    config = SelectionConfig(rules=["duplicate", "whole"], target_size=2)
    selection = select_samples(tokens, tags, gold, config)
    assert selection.kept == [2, 3]
    assert selection.dropped_by == ["duplicate", "whole", None, None, "target-size"]
    assert selection.dropped == {"duplicate": 1, "whole": 1, "target-size": 1}


# What a generator might write: copies, whole sentences, fragments, a leak, two sentences in one.
SAMPLES = [
    ("Aspirin cures headache .", "B-Chemical O B-Disease O"),
    ("Patients with fever received aspirin today .", "O O B-Disease O B-Chemical O O"),
    ("Patients with fever", "O O B-Disease"),
    ("Ibuprofen relieves severe pain today .", "B-Chemical O B-Disease I-Disease O O"),
    ("Ibuprofen relieves severe pain today .", "B-Chemical O B-Disease I-Disease O O"),
    ("No effect was seen today .", "O O O O O O"),
    ("Fever .", "B-Disease O"),
    ("Patients with Disease received paracetamol .", "O O O O B-Chemical O"),
    ("Aspirin cures pain in patients .", "B-Chemical O B-Disease O O O"),
    ("Aspirin cures pain . No effect was seen .", "B-Chemical O B-Disease O O O O O O"),
    ("Patients with headache received ibuprofen .", "O O B-Disease O B-Chemical O"),
    ("Paracetamol cures fever .", "B-Chemical O B-Disease O"),
]


@pytest.fixture(scope="module")
def generated(tmp_path_factory):
    """A folder `generate_dataset` wrote (12 samples, shards of 5) whose rows are then replaced by SAMPLES,
    in the same schema: a random tiny generator writes nothing a selection would keep."""
    from hf_ecg.data.dataset_format import dataset_features, write_shard
    from hf_ecg.runtime.tags import tags_to_spans, text_spans

    directory = tmp_path_factory.mktemp("generated")
    model = save_tiny_ecg_model(directory / "model")
    output = generate_dataset(
        model,
        directory / "synthetic",
        12,
        seed=3,
        decoding=DecodingConfig(max_block_tokens=6, max_attempts=2),
        run=DatasetRunConfig(samples_per_shard=5, progress_bar=False),
    )
    features = dataset_features(["Chemical", "Disease"])
    names = features["ner_tags"].feature.names
    rows = []
    for i, (text, tags) in enumerate(SAMPLES):
        tokens, tags = text.split(), tags.split()
        entities = [t[2:] for t in tags if t.startswith("B-")]
        rows.append(
            {
                "id": i,
                "tokens": tokens,
                "ner_tags": [names.index(t) for t in tags],
                "entities": entities,
                "template": text,
                "text": text,
                "spans": text_spans(tokens, tags_to_spans(tags)[0]),
                "forced_tags": 0,
                "cut_blocks": 0,
                "complete": tokens[-1] == ".",
                "tag_pieces": 0,
                "model_tokens": 0,
                "redrawn_tokens": 0,
                "refused_redraws": 0,
                "mention_sources": ["bank"] * len(entities),
            }
        )
    for shard, start in enumerate(range(0, 12, 5)):
        write_shard(rows[start : start + 5], features, output / "data", shard, 0)
    return output


def test_filter_writes_a_loadable_dataset_with_the_kept_rows(generated, gold, tmp_path):
    source = datasets.load_dataset(str(generated), split="train")
    config = SelectionConfig(rules=["duplicate", "tag-leak", "whole"])
    output = filter_generated(generated, gold, tmp_path / "kept", config, progress_bar=False)
    rows = datasets.load_dataset(str(output), split="train")
    manifest = json.loads((output / "ecg_generation.json").read_text())
    selection = manifest["selection"]
    assert manifest["num_samples"] == rows.num_rows == selection["kept"]
    assert selection["source_samples"] == 12 and selection["kept"] + sum(selection["dropped"].values()) == 12
    assert selection["config"]["rules"] == ["duplicate", "tag-leak", "whole"]
    assert selection["dropped"] == {"duplicate": 2, "tag-leak": 1, "whole": 4}
    assert [row["id"] for row in rows] == [1, 3, 5, 8, 10]
    assert rows.features == source.features
    by_id = {row["id"]: row for row in source}
    assert all(by_id[row["id"]] == row for row in rows)  # kept rows are the source rows, unchanged
    assert sorted(p.name for p in (output / "data").iterdir()) == ["train-00000.parquet"]  # 5 a shard, as before

    card = str(ECGDatasetCardData.from_generated(output).to_dataset_card())
    assert "12 samples were generated and 5 kept" in card
    assert "| `whole` | incomplete, forced, cut, short, looping or two-sentence samples | 4 |" in card
    assert "the sample's id in the 12 samples generated before selection" in card

    # A rerun with the same settings finds the folder done; other settings need --overwrite.
    stamp = (output / "ecg_generation.json").stat().st_mtime_ns
    assert filter_generated(generated, gold, output, config, progress_bar=False) == output
    assert (output / "ecg_generation.json").stat().st_mtime_ns == stamp
    with pytest.raises(ValueError, match="holds another dataset"):
        filter_generated(generated, gold, output, SelectionConfig(rules=["whole"]), progress_bar=False)
    with pytest.raises(ValueError, match="passed the rules"):
        filter_generated(
            generated, gold, tmp_path / "none", SelectionConfig(rules=["near-copy"], near_copy_threshold=0)
        )
    filter_generated(generated, gold, output, SelectionConfig(rules=["duplicate"]), overwrite=True)
    assert json.loads((output / "ecg_generation.json").read_text())["selection"]["config"]["rules"] == ["duplicate"]


def test_filter_refuses_an_unfinished_generation(generated, gold, tmp_path):
    partial = tmp_path / "partial"
    (partial / "data").mkdir(parents=True)
    (partial / "ecg_generation.json").write_text((generated / "ecg_generation.json").read_text())
    shard = sorted((generated / "data").glob("*.parquet"))[0]
    (partial / "data" / shard.name).write_bytes(shard.read_bytes())
    with pytest.raises(ValueError, match=r"unfinished generation \(5 of 12 samples written\)"):
        filter_generated(partial, gold, tmp_path / "out", SelectionConfig(rules=["whole"]))


def test_cli_filter_and_generate_with_over_generation(generated, tmp_path, capsys):
    gold = toy_corpus(tmp_path / "toy.tsv")
    out = tmp_path / "kept"
    code = main(
        [
            "filter",
            "--generated",
            str(generated),
            "--gold",
            f"{gold}:4",
            "--output",
            str(out),
            "--rule",
            "duplicate",
            "--rule",
            "whole",
            "--target-size",
            "3",
        ]
    )
    assert code == 0
    printed = capsys.readouterr().out
    selection = json.loads((out / "ecg_generation.json").read_text())["selection"]
    assert "kept 3 of 12 samples (dropped: duplicate 2, whole 4, target-size 3)" in printed
    assert selection["dropped"] == {"duplicate": 2, "whole": 4, "target-size": 3}
    assert (
        main(
            [
                "filter",
                "--generated",
                str(generated),
                "--gold",
                str(gold),
                "--output",
                str(tmp_path / "x"),
                "--tagger-seeds",
                "a",
            ]
        )
        == 2
    )
    assert "--tagger-seeds takes comma-separated integers" in capsys.readouterr().err

    model = generated.parent / "model"
    target = tmp_path / "over"
    code = main(
        [
            "generate",
            "--model",
            str(model),
            "-n",
            "4",
            "-o",
            str(target),
            "--over-generate",
            "3",
            "--gold",
            str(gold),
            "--filter",
            "duplicate",
            "--max-block-tokens",
            "6",
            "--max-attempts",
            "2",
        ]
    )
    assert code == 0
    assert datasets.load_dataset(str(tmp_path / "over-unfiltered"), split="train").num_rows == 12
    manifest = json.loads((target / "ecg_generation.json").read_text())
    assert manifest["num_samples"] <= 4 and manifest["selection"]["config"]["target_size"] == 4
    assert main(["generate", "--model", str(model), "-n", "4", "-o", str(tmp_path / "y"), "--over-generate", "2"]) == 2
    assert "need --gold" in capsys.readouterr().err


def test_filter_with_relabel_writes_the_repaired_labels_and_counts_them(generated, gold, tagger, tmp_path):
    """Repaired rows carry their new ner_tags and spans and a relabelled count; the others are unchanged; the
    folder loads with its card's features and the card and manifest say how much was relabelled."""
    from hf_ecg.data.dataset_format import SHARD_PATTERN, write_shard

    # "Ibuprofen" left O in sample 3: a name the tagger knows by heart, so relabel has one to repair
    unlabelled_name = tmp_path / "generated"
    shutil.copytree(generated, unlabelled_name)
    shard = datasets.Dataset.from_parquet(str(unlabelled_name / "data" / SHARD_PATTERN.format(0)))
    names = shard.features["ner_tags"].feature.names
    rows = shard.to_list()
    assert rows[3]["tokens"][0] == "Ibuprofen" and names[rows[3]["ner_tags"][0]] == "B-Chemical"
    rows[3].update(
        ner_tags=[0, *rows[3]["ner_tags"][1:]],
        entities=["Disease"],
        mention_sources=["bank"],
        spans=text_spans(rows[3]["tokens"], [Span(2, 4, "Disease")]),
    )
    write_shard(rows, shard.features, unlabelled_name / "data", 0, 0)
    config = SelectionConfig(rules=["relabel"], extra_threshold=0.3)
    output = filter_generated(
        unlabelled_name, gold, tmp_path / "repaired", config, taggers=[tagger], progress_bar=False
    )
    source = {row["id"]: row for row in datasets.load_dataset(str(unlabelled_name), split="train")}
    rows = datasets.load_dataset(str(output), split="train")
    names = rows.features["ner_tags"].feature.names
    record = json.loads((output / "ecg_generation.json").read_text())["selection"]["relabelled"]
    assert record["words"] == sum(rows["relabelled"]) and record["samples"] == sum(n > 0 for n in rows["relabelled"])
    for row in rows:
        before = source[row["id"]]
        changed = [i for i, (a, b) in enumerate(zip(before["ner_tags"], row["ner_tags"], strict=True)) if a != b]
        assert len(changed) == row["relabelled"]
        assert all(names[before["ner_tags"][i]] == "O" for i in changed)  # only O words were relabelled
        assert row["entities"] == before["entities"] and row["tokens"] == before["tokens"]
        assert [row["text"][s["start"] : s["end"]] for s in row["spans"]] == [
            " ".join(row["tokens"][span.start : span.end])
            for span in tags_to_spans([names[k] for k in row["ner_tags"]], "IOB2")[0]
        ]
    card = DatasetCard.load(output / "README.md")
    assert "relabelled" in [f["name"] for f in card.data.dataset_info["features"]]
    assert f"Label repair (`relabel`): {record['words']} words in {record['samples']} kept samples" in card.text
    repaired = next(row for row in rows if row["id"] == 3)
    assert [names[k] for k in repaired["ner_tags"]][:4] == ["B-Chemical", "O", "B-Disease", "I-Disease"]
    assert repaired["relabelled"] == 1


def test_filter_repairs_with_the_self_teacher(generated, gold, tagger, tmp_path):
    config = SelectionConfig(
        rules=["unlabel", "relabel"],
        teacher="self",
        tagger_model=tagger.config.model,
        tagger_epochs=1,
        tagger_batch_size=4,
    )
    mine = [("Aspirin", "relieves", "fever", "."), ("Patients", "with", "pain", "recovered", ".")]
    output = filter_generated(generated, gold, tmp_path / "self", config, progress_bar=False, unlabelled=mine)
    manifest = json.loads((output / "ecg_generation.json").read_text())
    assert manifest["selection"]["config"]["teacher"] == "self" and "relabelled" in manifest["selection"]
    assert manifest["selection"]["unlabelled_sentences"] == 2
    card = (output / "README.md").read_text()
    assert "Label repair (`unlabel`, `relabel`)" in card or manifest["selection"]["relabelled"]["samples"] == 0


def test_cli_filter_self_trains_the_gold_taggers_on_unlabelled_text(generated, tagger, tmp_path, capsys):
    gold = toy_corpus(tmp_path / "toy.tsv")
    text = tmp_path / "mine.txt"
    text.write_text("Aspirin relieves fever .\nPatients with pain recovered .\n", encoding="utf-8")
    out = tmp_path / "kept"
    assert (
        main(
            [
                "filter",
                "--generated",
                str(generated),
                "--gold",
                str(gold),
                "--output",
                str(out),
                "--rule",
                "unlabel",
                "--unlabelled",
                str(text),
                "--tagger-model",
                tagger.config.model,
                "--tagger-epochs",
                "1",
            ]
        )
        == 0
    )
    assert json.loads((out / "ecg_generation.json").read_text())["selection"]["unlabelled_sentences"] == 2


def test_filter_uses_the_taggers_it_is_given(generated, gold, tagger, tmp_path):
    """A gold NER run's tagger serves the tagger rules; none is trained (the configured encoder does not exist)."""
    config = SelectionConfig(rules=["consistent"], tagger_model=str(tmp_path / "no-such-encoder"))
    output = filter_generated(generated, gold, tmp_path / "kept", config, taggers=[tagger], progress_bar=False)
    source = datasets.load_dataset(str(generated), split="train")
    names = source.features["ner_tags"].feature.names
    expected = select_samples(
        source["tokens"], [[names[k] for k in row] for row in source["ner_tags"]], gold, config, taggers=[tagger]
    )
    rows = datasets.load_dataset(str(output), split="train")
    assert [row["id"] for row in rows] == [source[i]["id"] for i in expected.kept] and expected.dropped


def test_every_rule_is_an_object_whose_judge_select_samples_runs(monkeypatch):
    """Each rule by name: what the card says it drops, whether it needs the taggers or repairs, and the judge that
    select_samples calls for it (a judge put in its place is what runs)."""
    from hf_ecg.data.selection_rules import REPAIR_RULES, RULE_DESCRIPTIONS, RULES, TAGGER_RULES
    from hf_ecg.selection import rules

    assert list(rules.SELECTION_RULES) == list(RULES)
    for name, rule in rules.SELECTION_RULES.items():
        assert rule.name == name and rule.description == RULE_DESCRIPTIONS[name]
        assert (rule.needs_taggers, rule.repairs) == (name in TAGGER_RULES, name in REPAIR_RULES)
    judged = []

    def drop_the_first(run, candidates):
        judged.append(list(candidates))
        run.dropped_by[candidates[0]] = "duplicate"

    monkeypatch.setitem(
        rules.SELECTION_RULES, "duplicate", replace(rules.SELECTION_RULES["duplicate"], judge=drop_the_first)
    )
    spans = (Span(0, 1, "Chemical"), Span(2, 3, "Disease"))
    gold = Corpus([Sentence(("Aspirin", "cures", "fever", "."), spans)], name="g", scheme="IOB2")
    tokens = [["No", "effect", "was", "seen", "."], ["Aspirin", "helps", "."]]
    tags = [["O"] * 5, ["B-Chemical", "O", "O"]]
    selection = select_samples(tokens, tags, gold, SelectionConfig(rules=["duplicate"]))
    assert judged == [[0, 1]] and selection.kept == [1] and selection.dropped == {"duplicate": 1}


def test_unknown_marks_what_the_taggers_or_the_dictionary_read_as_names_and_never_changes_a_label(gold, tagger):
    """The ``unknown`` rule: O words the gold tagger confidently reads as an entity, and the dictionary's names left
    O, are marked unknown; the labels stay, no sample is dropped, and nothing is marked that the sample labels."""
    from hf_ecg.labelling.dictionary import Dictionary

    tokens = [IBUPROFEN] * 3
    tags = [
        ["B-Chemical", "O", "B-Disease", "I-Disease", "O"],  # nothing to mark
        ["B-Chemical", "O", "O", "O", "O"],  # "severe pain" left O: unknown, not O
        ["O", "O", "B-Disease", "I-Disease", "O"],  # "Ibuprofen" left O: unknown
    ]
    selection = select_samples(tokens, tags, gold, SelectionConfig(rules=["unknown"]), taggers=[tagger])
    assert selection.kept == [0, 1, 2] and selection.relabelled == {}
    assert selection.unknown == {1: [2, 3], 2: [0]}
    sure = select_samples(tokens, tags, gold, SelectionConfig(rules=["unknown"], extra_threshold=1.0), taggers=[tagger])
    assert sure.unknown == {}  # nothing is that sure to the tagger
    names = Dictionary({"Disease": ["severe pain"]})
    by_names = select_samples(
        tokens, tags, gold, SelectionConfig(rules=["unknown"], extra_threshold=1.0), taggers=[tagger], dictionary=names
    )
    assert by_names.unknown == {1: [2, 3]}  # the dictionary's name; the labelled one in sample 0 stays known


def test_filter_with_unknown_writes_label_weights_that_a_tagger_reads(generated, gold, tagger, tmp_path):
    """The kept rows carry ``label_weights`` (0.0 on the marked words, 1.0 elsewhere); the folder read as a corpus
    has those words unknown (out of the loss), the manifest counts them."""
    from hf_ecg.data.dataset_format import SHARD_PATTERN, write_shard
    from hf_ecg.data.sources import load_synthetic

    source = tmp_path / "generated"
    shutil.copytree(generated, source)
    shard = datasets.Dataset.from_parquet(str(source / "data" / SHARD_PATTERN.format(0)))
    rows = shard.to_list()
    assert rows[3]["tokens"][0] == "Ibuprofen"
    rows[3].update(ner_tags=[0, *rows[3]["ner_tags"][1:]], entities=["Disease"], mention_sources=["bank"])
    rows[3]["spans"] = [s for s in rows[3]["spans"] if s["label"] == "Disease"]
    write_shard(rows, shard.features, source / "data", 0, 0)
    config = SelectionConfig(rules=["unknown"], extra_threshold=0.3)
    output = filter_generated(source, gold, tmp_path / "marked", config, taggers=[tagger], progress_bar=False)
    kept = datasets.load_dataset(str(output), split="train")
    record = json.loads((output / "ecg_generation.json").read_text())["selection"]["unknown"]
    zeros = [[j for j, w in enumerate(row) if w == 0.0] for row in kept["label_weights"]]
    assert record["words"] == sum(map(len, zeros)) > 0 and record["samples"] == sum(map(bool, zeros))
    assert all(set(row) <= {0.0, 1.0} for row in kept["label_weights"])
    card = " ".join((output / "README.md").read_text(encoding="utf-8").split())
    assert f"Unknown words (`unknown`): {record['words']} words in {record['samples']} kept samples" in card
    names = kept.features["ner_tags"].feature.names
    marked = next(row for row in kept if row["id"] == 3)
    assert marked["label_weights"][0] == 0.0 and names[marked["ner_tags"][0]] == "O"
    (corpus,) = load_synthetic([output])
    sentence = corpus.sentences[list(kept["id"]).index(3)]  # the folder's rows in their order
    assert sentence.tokens == tuple(marked["tokens"]) and 0 in sentence.unknown and sentence.training_tags[0] is None
