"""Downstream NER evaluation: the metric code against seqeval/sklearn, and a real Trainer run."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest
from hypothesis import given
from hypothesis import strategies as st
from seqeval.metrics import f1_score, precision_score, recall_score
from sklearn.metrics import f1_score as sk_f1

from hf_ecg.cli import main
from hf_ecg.data.corpus import read_conll
from hf_ecg.evaluation.ner import evaluate_ner, train_and_test
from hf_ecg.synthetic.run_config import DatasetRunConfig
from hf_ecg.taggers.metrics import entity_scores, per_type_scores, token_macro_f1
from hf_ecg.taggers.tagger import NERConfig
from tiny import save_tiny_bert, save_tiny_ecg_model, toy_corpus

TAGS = ["O", "B-A", "I-A", "B-B", "I-B"]


@st.composite
def gold_and_predicted(draw):
    lengths = draw(st.lists(st.integers(1, 8), min_size=1, max_size=6))
    gold = [draw(st.lists(st.sampled_from(TAGS), min_size=n, max_size=n)) for n in lengths]
    predicted = [draw(st.lists(st.sampled_from(TAGS), min_size=n, max_size=n)) for n in lengths]
    return gold, predicted


@given(gold_and_predicted())
def test_entity_scores_equal_seqeval_default_mode(pair):
    """Random tag sequences, ill-formed ones included (I- after O, I-B after B-A)."""
    gold, predicted = pair
    scores = entity_scores(gold, predicted)
    assert scores["f1"] == pytest.approx(f1_score(gold, predicted, zero_division=0))
    assert scores["precision"] == pytest.approx(precision_score(gold, predicted, zero_division=0))
    assert scores["recall"] == pytest.approx(recall_score(gold, predicted, zero_division=0))


@given(gold_and_predicted())
def test_token_macro_f1_equals_sklearn_over_gold_b_i_labels(pair):
    gold, predicted = pair
    labels = sorted({t for seq in gold for t in seq} - {"O"})
    flat_gold = [t for seq in gold for t in seq]
    flat_pred = [t for seq in predicted for t in seq]
    expected = sk_f1(flat_gold, flat_pred, labels=labels, average="macro", zero_division=0) if labels else 0.0
    assert token_macro_f1(gold, predicted) == pytest.approx(expected)


def test_known_predictions():
    gold = [["B-A", "I-A", "O", "B-B"], ["O", "B-A"]]
    predicted = [["B-A", "I-A", "O", "B-A"], ["O", "I-A"]]  # second A: a stray I- still matches B-A's span
    assert entity_scores(gold, predicted) == {"precision": 2 / 3, "recall": 2 / 3, "f1": pytest.approx(2 / 3)}
    # labels in gold: B-A (1 of 2 predicted right, 1 of 2 found: 0.5), I-A (1 of 2 right, 1 of 1 found: 2/3), B-B (0)
    assert token_macro_f1(gold, predicted) == pytest.approx((0.5 + 2 / 3 + 0.0) / 3)
    # per type: A found twice of 2 gold (and once wrongly, at B's place), B never found
    assert per_type_scores(gold, predicted) == {
        "A": {"precision": 2 / 3, "recall": 1.0, "f1": pytest.approx(0.8), "support": 2},
        "B": {"precision": 0.0, "recall": 0.0, "f1": 0.0, "support": 1},
    }


def test_a_tagger_trained_with_trainer_learns_the_toy_corpus(tmp_path):
    corpus = read_conll(toy_corpus(tmp_path / "toy.tsv", repeat=8))
    test = read_conll(toy_corpus(tmp_path / "test.tsv"))
    encoder = save_tiny_bert(tmp_path / "bert")
    config = NERConfig(model=str(encoder), epochs=15, batch_size=4, learning_rate=5e-3, seeds=[1, 2])
    report = evaluate_ner([corpus], test, config)
    assert [run["seed"] for run in report["runs"]] == [1, 2]
    assert report["entity_f1_mean"] > 0.6, report  # memorised: a label-alignment bug would break this
    assert report["token_macro_f1_mean"] > 0.6, report
    assert report["train"] == [{"name": "toy.tsv", "sentences": 32}] and report["test"]["sentences"] == 4


@pytest.mark.parametrize("group_by_length", [True, False])
def test_predictions_stay_with_their_sentences(tmp_path, group_by_length):
    # Sentences of several lengths over several prediction batches: any reordering (length-sorted
    # prediction, Trainer's length-grouped sampler) that is not undone scores well below 1.0.
    corpus = read_conll(toy_corpus(tmp_path / "toy.tsv", repeat=8))
    encoder = save_tiny_bert(tmp_path / "bert")
    config = NERConfig(
        model=str(encoder),
        epochs=15,
        batch_size=4,
        learning_rate=5e-3,
        eval_batch_size=3,
        group_by_length=group_by_length,
    )
    scores = train_and_test([corpus], corpus, config, seed=1)
    assert scores["entity_f1"] == 1.0 and scores["token_macro_f1"] == 1.0, scores


def test_bf16_tagger_learns_and_predicts_under_autocast_with_float32_weights(tmp_path):
    import torch

    from hf_ecg.evaluation.ner import score_tagger
    from hf_ecg.taggers.training import train_tagger

    corpus = read_conll(toy_corpus(tmp_path / "toy.tsv", repeat=8))
    config = NERConfig(
        model=str(save_tiny_bert(tmp_path / "bert")),
        epochs=15,
        batch_size=4,
        learning_rate=5e-3,
        eval_batch_size=3,
        bf16=True,
    )
    tagger = train_tagger([corpus], config, seed=1)
    assert {p.dtype for p in tagger.model.parameters()} == {torch.float32}  # autocast, not a bfloat16 model
    seen = []
    tagger.model.classifier.register_forward_hook(lambda module, inputs, output: seen.append(output.dtype))
    scores = score_tagger(tagger, corpus)
    assert set(seen) == {torch.bfloat16}, seen  # prediction ran under autocast
    assert scores["entity_f1"] == 1.0, scores  # and training under it still memorises the toy corpus


def test_an_encoder_saved_in_bfloat16_is_trained_in_float32(tmp_path):
    # transformers 5 loads a checkpoint in its own dtype: a bfloat16 encoder (as many on the Hub are saved) would
    # take its AdamW steps in bfloat16 and lose the small updates.
    import torch

    from hf_ecg.evaluation.ner import score_tagger
    from hf_ecg.taggers.training import train_tagger

    corpus = read_conll(toy_corpus(tmp_path / "toy.tsv", repeat=8))
    encoder = save_tiny_bert(tmp_path / "bert", dtype=torch.bfloat16)
    config = NERConfig(model=str(encoder), epochs=15, batch_size=4, learning_rate=5e-3, eval_batch_size=3)
    tagger = train_tagger([corpus], config, seed=1)
    assert {p.dtype for p in tagger.model.parameters()} == {torch.float32}
    assert score_tagger(tagger, corpus)["entity_f1"] == 1.0


def test_cli_evaluate_ner_mixes_gold_and_generated(tmp_path, capsys):
    from hf_ecg.runtime.decoding import DecodingConfig
    from hf_ecg.synthetic.generate import generate_dataset

    generated = generate_dataset(
        save_tiny_ecg_model(tmp_path / "gen"),
        tmp_path / "synthetic",
        5,
        decoding=DecodingConfig(max_block_tokens=4),
        run=DatasetRunConfig(progress_bar=False),
    )
    gold = toy_corpus(tmp_path / "gold.tsv", repeat=2)
    out = tmp_path / "ner.json"
    code = main(
        [
            "evaluate",
            "ner",
            "--train",
            f"{gold}:3",
            "--train",
            str(generated),
            "--test",
            str(gold),
            "--model",
            str(save_tiny_bert(tmp_path / "bert")),
            "--epochs",
            "1",
            "--seeds",
            "4",
            "-o",
            str(out),
        ]
    )
    assert code == 0
    report = json.loads(out.read_text())
    printed = capsys.readouterr()
    assert json.loads(printed.out) == report  # stdout is the report alone: `> ner.json` gives JSON
    assert "train_runtime" in printed.err  # the Trainer's metrics line went to stderr
    assert [t["sentences"] for t in report["train"]] == [3, 5]
    assert set(report["per_type"]) == {"Chemical", "Disease"}  # per type, beside micro F1
    assert report["per_type"]["Chemical"]["support"] == 6 and set(report["runs"][0]["per_type"]) <= {
        "Chemical",
        "Disease",
    }
    assert report["runs"][0]["seed"] == 4 and report["entity_f1_std"] == 0.0
    assert 0.0 <= report["entity_f1_mean"] <= 1.0
    code = main(
        [
            "evaluate",
            "ner",
            "--train",
            f"{gold}:3",
            "--synthetic",
            f"{generated}:4",
            "--recipe",
            "two-stage",
            "--test",
            str(gold),
            "--model",
            str(save_tiny_bert(tmp_path / "bert")),
            "--epochs",
            "1",
            "--seeds",
            "4",
            "-o",
            str(out),
            "--overwrite",
        ]
    )
    assert code == 0
    report = json.loads(out.read_text())
    assert [t["sentences"] for t in report["train"]] == [3] and [t["sentences"] for t in report["synthetic"]] == [4]
    assert report["config"]["recipe"] == "two-stage"
    assert [stage["sentences"] for stage in report["stages"]] == [4, 3] and report["stages"][1]["epochs"] == 1
    code = main(
        [
            "evaluate",
            "ner",
            "--train",
            f"{gold}:3",
            "--dev",
            f"{gold}:3:6",
            "--patience",
            "1",
            "--test",
            f"{gold}:2",
            "--model",
            str(save_tiny_bert(tmp_path / "bert")),
            "--epochs",
            "2",
            "--seeds",
            "4",
            "-o",
            str(out),
            "--overwrite",
        ]
    )
    assert code == 0
    report = json.loads(out.read_text())
    assert report["dev"]["sentences"] == 3 and report["test"]["sentences"] == 2 and report["config"]["patience"] == 1
    history = report["runs"][0]["dev_selection"][0]["dev_f1_by_epoch"]
    assert [epoch for epoch, _ in history] == [1.0, 2.0]  # epoch 2 is the last, stopped or not
    assert main(["evaluate", "ner", "--train", str(gold), "--test", str(gold), "--seeds", "x"]) == 2
    assert "--seeds takes comma-separated integers" in capsys.readouterr().err


def _corpus(n, name):
    from hf_ecg.data.corpus import Corpus, Sentence

    return Corpus([Sentence(tokens=(f"{name}{i}",), spans=()) for i in range(n)], name=name)


@given(st.integers(1, 30), st.integers(1, 300), st.floats(0.05, 0.95))
def test_oversampling_repeats_gold_the_fewest_times_that_reach_its_share(num_gold, num_synthetic, share):
    from hf_ecg.taggers.training import training_stages

    config = NERConfig(recipe="oversample", gold_share=share)
    [(sentences, epochs)] = training_stages([_corpus(num_gold, "g")], [_corpus(num_synthetic, "s")], config)
    repeats = sum(s.tokens[0] == "g0" for s in sentences)
    assert len(sentences) == repeats * num_gold + num_synthetic and epochs == config.epochs
    assert repeats * num_gold >= share * len(sentences) - 1e-6
    fewer = (repeats - 1) * num_gold
    assert repeats == 1 or fewer < share * (fewer + num_synthetic) - 1e-6


@given(st.integers(1, 60), st.integers(1, 6000), st.booleans(), st.one_of(st.none(), st.floats(0, 1)))
def test_the_auto_recipe_oversamples_silver_whose_labeller_finds_most_gold_names_and_stages_the_rest(
    num_gold, num_synthetic, weak, recall
):
    from dataclasses import replace

    from hf_ecg.taggers.training import (
        OVERSAMPLE_RECALL,
        default_synthetic_epochs,
        resolved_recipe,
        training_stages,
    )

    gold = _corpus(num_gold, "g")
    synthetic = replace(_corpus(num_synthetic, "s"), weak=weak, labeller_recall=recall)
    config = NERConfig()
    trusted = weak and recall is not None and recall >= OVERSAMPLE_RECALL
    assert config.recipe == "auto" and resolved_recipe([synthetic], config) == (
        "oversample" if trusted else "two-stage"
    )
    stages = training_stages([gold], [synthetic], config)
    if trusted:  # one stage, gold at least half of it, the two-stage recipe's synthetic epochs
        [(sentences, epochs)] = stages
        assert epochs == default_synthetic_epochs(config.epochs, num_gold, num_synthetic)
        assert sum(s.tokens[0] == "g0" for s in sentences) * num_gold >= len(sentences) / 2
    else:
        assert stages == training_stages([gold], [synthetic], NERConfig(recipe="two-stage"))
    assert resolved_recipe([synthetic], NERConfig(recipe="concat")) == "concat"  # a recipe named is the recipe


def test_a_dictionary_s_recall_on_gold_travels_with_its_silver_sentences(tmp_path):
    from hf_ecg.data.corpus import Corpus, Sentence
    from hf_ecg.data.silver import load_silver, silver_record, write_silver
    from hf_ecg.labelling.dictionary import Dictionary
    from hf_ecg.runtime.tags import Span

    gold = Corpus(
        [
            Sentence(
                ("aspirin", "and", "ibuprofen", "for", "fever"),
                (Span(0, 1, "Chemical"), Span(2, 3, "Chemical"), Span(4, 5, "Disease")),
            )
        ]
    )
    dictionary = Dictionary({"Chemical": ["aspirin"]})  # finds one of the two Chemical names; Disease is not its type
    assert dictionary.recall_on([gold]) == 0.5
    silver = dictionary.label([["aspirin", "helps"]], gold=[gold])
    assert silver.weak and silver.labeller_recall == 0.5 and dictionary.label([["aspirin"]]).labeller_recall is None
    write_silver(tmp_path, silver, ["O", "B-Chemical", "I-Chemical"])
    (tmp_path / "ecg_generation.json").write_text(json.dumps({"silver": silver_record(silver, "dictionary")}))
    back = load_silver(tmp_path)
    assert back.weak and back.labeller_recall == 0.5


@given(st.integers(1, 200), st.integers(1, 5000), st.sampled_from([2.0, 5.0, 20.0]))
def test_default_synthetic_epochs_give_more_updates_in_fewer_passes_as_data_grows(num_gold, num_synthetic, epochs):
    from hf_ecg.taggers.training import default_synthetic_epochs

    passes = default_synthetic_epochs(epochs, num_gold, num_synthetic)
    assert passes == int(passes) and 1 <= passes <= epochs
    more = default_synthetic_epochs(epochs, num_gold, num_synthetic * 4)
    assert more <= passes  # never more passes over more data
    if num_synthetic >= num_gold and more >= 2:  # updates grow (rounding aside) once the stage is past one pass
        assert more * num_synthetic * 4 > passes * num_synthetic


def test_default_synthetic_epochs_at_the_measured_multiples():
    from hf_ecg.taggers.training import default_synthetic_epochs

    assert [default_synthetic_epochs(20, 45, 45 * m) for m in (1, 2, 5, 10)] == [20, 14, 9, 6]
    assert default_synthetic_epochs(20, 45, 10) == 20  # less synthetic than gold: never more than gold's epochs


def _mentions_corpus(mentions, name):
    """One sentence per ``(type, words)`` mention: ``the WORDS here``."""
    from hf_ecg.data.corpus import Corpus, Sentence
    from hf_ecg.runtime.tags import Span

    return Corpus(
        [
            Sentence(tokens=("the", *words, "here"), spans=(Span(1, 1 + len(words), label),))
            for label, words in mentions
        ],
        name=name,
    )


GOLD_MENTIONS = [("Chemical", ("aspirin",)), ("Disease", ("heart", "failure")), ("Chemical", ("dopa",))]


@given(
    st.lists(st.sampled_from(GOLD_MENTIONS), min_size=1, max_size=40),
    st.lists(
        st.sampled_from([("Chemical", ("heparin",)), ("Disease", ("aspirin",)), ("Disease", ("heart",))]), max_size=40
    ),
)
def test_new_mention_share_counts_the_mentions_no_gold_sentence_holds(recycled, new):
    from hf_ecg.taggers.training import new_mention_share

    gold = list(_mentions_corpus(GOLD_MENTIONS, "g"))
    share = new_mention_share(gold, list(_mentions_corpus(recycled + new, "s")))
    assert share == len(new) / (len(recycled) + len(new))  # type and words: a Disease "aspirin" is new
    assert new_mention_share(gold, list(_corpus(3, "s"))) is None  # no mentions at all


def test_two_stage_gives_recycled_mentions_the_updates_of_one_times():
    from hf_ecg.taggers.training import training_stages

    gold = [_mentions_corpus(GOLD_MENTIONS * 15, "g")]  # 45 sentences
    recycled = [_mentions_corpus(GOLD_MENTIONS * 150, "bank")]  # 10x, every mention the gold sentences'
    new = [_mentions_corpus(GOLD_MENTIONS * 149 + [("Chemical", ("heparin",))] * 3, "written")]
    config = NERConfig(epochs=20, recipe="two-stage")
    assert training_stages(gold, recycled, config)[0][1] == 2  # 20 × 45 / 450: no more passes over the same names
    assert training_stages(gold, new, config)[0][1] == 6  # one new mention is enough for the √ rule
    assert training_stages(gold, recycled, NERConfig(epochs=20, synthetic_epochs=4))[0][1] == 4  # as given


def test_recipes_stages():
    from hf_ecg.taggers.training import training_stages

    gold, synthetic = [_corpus(4, "g")], [_corpus(10, "s"), _corpus(2, "t")]
    names = lambda stage: [s.tokens[0][0] for s in stage[0]]  # noqa: E731
    [concat] = training_stages(gold, synthetic, NERConfig(epochs=3, recipe="concat"))
    assert names(concat) == ["g"] * 4 + ["s"] * 10 + ["t"] * 2 and concat[1] == 3
    first, second = training_stages(gold, synthetic, NERConfig(epochs=3, recipe="two-stage", synthetic_epochs=1))
    assert names(first) == ["s"] * 10 + ["t"] * 2 and first[1] == 1
    assert names(second) == ["g"] * 4 and second[1] == 3
    # Unset, the synthetic stage gets epochs × √(gold / synthetic), rounded: 3 × √(4 / 12) = 1.73 -> 2.
    first, second = training_stages(gold, synthetic, NERConfig(epochs=3, recipe="two-stage"))
    assert first[1] == 2.0 and second[1] == 3
    fewer = training_stages(gold, [_corpus(2, "s")], NERConfig(epochs=3, recipe="two-stage"))
    assert fewer[0][1] == 3  # never more epochs than gold's
    assert len(training_stages(gold, [], NERConfig(recipe="two-stage"))) == 1  # nothing synthetic: gold alone
    assert NERConfig().recipe == "auto"  # two-stage (the best measured, docs/ablations.md) but for trusted silver
    with pytest.raises(ValueError, match="unknown recipe 'mixed'; known: auto, concat, oversample, two-stage"):
        NERConfig(recipe="mixed")


def test_two_stage_ends_on_gold_and_knows_the_synthetic_types(tmp_path):
    """Stage one learns a made-up synthetic corpus; stage two must still leave a tagger that knows gold by heart."""
    from hf_ecg.data.corpus import Corpus, Sentence
    from hf_ecg.runtime.tags import Span

    gold = read_conll(toy_corpus(tmp_path / "toy.tsv", repeat=8))
    noise = Corpus(
        [Sentence(tokens=("Aspirin", "cures", "headache", "."), spans=(Span(0, 1, "Drug"),))] * 16, name="noise"
    )
    encoder = save_tiny_bert(tmp_path / "bert")
    config = NERConfig(
        model=str(encoder), epochs=15, batch_size=4, learning_rate=5e-3, recipe="two-stage", synthetic_epochs=2
    )
    from hf_ecg.taggers.training import train_tagger

    tagger = train_tagger([gold], config, seed=1, synthetic=[noise])
    assert "B-Drug" in tagger.labels
    assert tagger.predict([s.tokens for s in gold[:4]]) == [s.tags for s in gold[:4]]
    report = evaluate_ner(
        [gold], read_conll(toy_corpus(tmp_path / "test.tsv")), replace(config, seeds=[1]), synthetic=[noise]
    )
    assert report["synthetic"] == [{"name": "noise", "sentences": 16}] and report["entity_f1_mean"] == 1.0


def test_dev_selection_keeps_the_best_epoch_and_stops_after_patience(tmp_path):
    corpus = read_conll(toy_corpus(tmp_path / "toy.tsv", repeat=8))
    encoder = save_tiny_bert(tmp_path / "bert")
    config = NERConfig(model=str(encoder), epochs=15, batch_size=4, learning_rate=5e-3, patience=2)
    from hf_ecg.taggers.training import train_tagger

    tagger = train_tagger([corpus], config, seed=1, dev=corpus)
    [stage] = tagger.selection
    epochs = [epoch for epoch, _ in stage["dev_f1_by_epoch"]]
    scores = [f1 for _, f1 in stage["dev_f1_by_epoch"]]
    assert epochs == [float(e) for e in range(1, len(epochs) + 1)]
    assert stage["dev_f1"] == max(scores) and scores[epochs.index(stage["epoch_kept"])] == max(scores)
    assert scores.index(max(scores)) == epochs.index(stage["epoch_kept"])  # the first best epoch is kept
    assert len(epochs) == 15 or len(epochs) == epochs.index(stage["epoch_kept"]) + 1 + 2  # stopped by patience
    predicted = tagger.predict([s.tokens for s in corpus])
    assert entity_scores([s.tags for s in corpus], predicted)["f1"] == stage["dev_f1"]


def test_dev_selection_restores_the_best_weights(tmp_path):
    """The callback alone, on a real model and real Trainer state: a worse epoch after the best one is not kept."""
    import torch
    from transformers import AutoModelForTokenClassification, AutoTokenizer, TrainerControl, TrainerState

    from hf_ecg.taggers.tagger import Tagger
    from hf_ecg.taggers.training import _dev_selection

    corpus = read_conll(toy_corpus(tmp_path / "toy.tsv", repeat=8))
    encoder = save_tiny_bert(tmp_path / "bert")
    config = NERConfig(model=str(encoder), epochs=15, batch_size=4, learning_rate=5e-3)
    from hf_ecg.taggers.training import train_tagger

    trained = train_tagger([corpus], config, seed=1)
    labels = trained.labels
    assert trained.selection == []  # no dev split, nothing recorded
    fresh = AutoModelForTokenClassification.from_pretrained(
        encoder, num_labels=len(labels), id2label=dict(enumerate(labels)), label2id={k: i for i, k in enumerate(labels)}
    )
    tagger = Tagger(trained.model, AutoTokenizer.from_pretrained(encoder), labels, config)
    callback = _dev_selection(tagger, corpus, patience=1)
    state, control = TrainerState(), TrainerControl()
    state.epoch = 1.0
    callback.on_epoch_end(None, state, control)
    good = {k: v.clone() for k, v in trained.model.state_dict().items()}
    assert callback.best_f1 > 0.6 and not control.should_training_stop
    with torch.no_grad():
        trained.model.load_state_dict(fresh.state_dict())  # an untrained epoch 2: worse on dev
    state.epoch = 2.0
    callback.on_epoch_end(None, state, control)
    assert callback.history[1][1] < callback.best_f1 and callback.best_epoch == 1.0 and control.should_training_stop
    assert all(torch.equal(callback.best_state[k], good[k]) for k in good)


def test_load_source_slices(tmp_path):
    from hf_ecg.data.sources import load_source

    path = toy_corpus(tmp_path / "toy.tsv", repeat=3)
    whole = read_conll(path)
    assert [s.tokens for s in load_source(path)] == [s.tokens for s in whole]
    assert [s.tokens for s in load_source(f"{path}:5")] == [s.tokens for s in whole][:5]
    assert [s.tokens for s in load_source(f"{path}:5:9")] == [s.tokens for s in whole][5:9]
    with pytest.raises(ValueError, match="holds no sentences"):
        load_source(f"{path}:9:5")
    with pytest.raises(ValueError, match="has 12 sentences, not up to 50"):
        load_source(f"{path}:40:50")
    with pytest.raises(ValueError, match="has 12 sentences, not up to 13"):
        load_source(f"{path}:5:13")  # past the end: refused, as DATA:13 is, not clipped


def test_unlabelled_text_is_read_one_sentence_a_line_and_sliced(tmp_path):
    from hf_ecg.data.corpus import CorpusFormatError
    from hf_ecg.data.sources import load_unlabelled_source
    from hf_ecg.data.unlabelled import read_text_lines

    text = tmp_path / "abstracts.txt"
    text.write_bytes("\ufeffAspirin-induced headache (mild).\n\n  Cafe\u0301 patients recovered\n".encode())
    assert read_text_lines(text) == [
        ("Aspirin", "-", "induced", "headache", "(", "mild", ")", "."),  # no BOM, marks apart as the corpora split them
        ("Café", "patients", "recovered"),  # NFC: one character, as the corpus reader normalizes
    ]
    assert load_unlabelled_source(f"{text}:1:2") == [("Café", "patients", "recovered")]
    corpus = toy_corpus(tmp_path / "toy.tsv")
    assert load_unlabelled_source(f"{corpus}:1:3") == [s.tokens for s in read_conll(corpus)][1:3]  # labels unread
    (tmp_path / "blank.txt").write_text("\n \n", encoding="utf-8")
    with pytest.raises(CorpusFormatError, match=r"blank\.txt: the file holds no sentence; expected unlabelled text"):
        read_text_lines(tmp_path / "blank.txt")
    (tmp_path / "binary.txt").write_bytes(b"ok\n\xff\xfe\x00")
    with pytest.raises(CorpusFormatError, match=r"binary\.txt:2: a binary file"):
        read_text_lines(tmp_path / "binary.txt")


def test_self_training_labels_the_unlabelled_text_with_a_gold_tagger_per_seed(tmp_path, capsys):
    """The self-training baseline: the unlabelled sentences, labelled by a tagger trained on gold, are the
    synthetic stage of the run; the report says how many there were."""
    from hf_ecg.taggers.training import train_tagger

    corpus = read_conll(toy_corpus(tmp_path / "toy.tsv", repeat=8))
    config = NERConfig(
        model=str(save_tiny_bert(tmp_path / "bert")), epochs=15, batch_size=4, learning_rate=5e-3, seeds=[1]
    )
    teacher = train_tagger([corpus], config, seed=1)
    sentences = [("Ibuprofen", "cures", "fever", "."), ("Patients", "with", "headache", "received", "aspirin", ".")]
    labelled = teacher.label(sentences, name="mine")
    assert [s.tokens for s in labelled] == sentences and labelled.name == "mine"
    assert [s.tags for s in labelled] == teacher.predict(sentences)
    assert labelled[0].tags == ["B-Chemical", "O", "B-Disease", "O"]  # the memorised toy corpus' reading

    report = evaluate_ner([corpus.subset(first_n=4)], corpus.subset(first_n=4), config, unlabelled=sentences * 3)
    assert report["unlabelled"] == {"sentences": 6, "labelled_by": "self"}
    assert report["stages"][0]["sentences"] == 6 and report["stages"][1]["sentences"] == 4  # two-stage: theirs first

    text = tmp_path / "mine.txt"
    text.write_text("Ibuprofen cures fever .\nAspirin relieves pain .\n", encoding="utf-8")
    gold = toy_corpus(tmp_path / "gold.tsv")
    capsys.readouterr()
    assert (
        main(
            [
                "evaluate",
                "ner",
                "--train",
                str(gold),
                "--test",
                str(gold),
                "--unlabelled",
                str(text),
                "--model",
                config.model,
                "--epochs",
                "1",
                "--seeds",
                "1",
            ]
        )
        == 0
    )
    assert json.loads(capsys.readouterr().out)["unlabelled"] == {"sentences": 2, "labelled_by": "self"}
