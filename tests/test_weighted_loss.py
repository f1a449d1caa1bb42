"""The noise-aware loss: label weights aligned to sub-words, padded by the collator, and a Trainer whose loss is
the weighted mean of the token losses."""

from __future__ import annotations

import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

from hf_ecg.data.corpus import Corpus, Sentence
from hf_ecg.runtime.tags import Span
from hf_ecg.taggers.weighted import LabelWeightCollator, WeightedLossTrainer, align_label_weights
from tiny import save_tiny_bert


@given(st.lists(st.integers(1, 3), min_size=1, max_size=8), st.data())
def test_a_word_weighs_on_its_first_sub_word_only(pieces, data):
    word_ids = [None] + [word for word, n in enumerate(pieces) for _ in range(n)] + [None]
    weights = data.draw(st.lists(st.floats(0, 1), min_size=len(pieces), max_size=len(pieces)))
    aligned = align_label_weights(word_ids, weights)
    assert len(aligned) == len(word_ids)
    firsts = [k for k, w in enumerate(word_ids) if w is not None and (k == 0 or word_ids[k - 1] != w)]
    assert [aligned[k] for k in firsts] == weights
    assert all(aligned[k] == 0.0 for k in range(len(aligned)) if k not in firsts)


def test_training_weights_are_zero_on_unknown_tokens_and_one_when_none_are_given():
    plain = Sentence(("a", "b", "c"), (Span(0, 1, "X"),), unknown=(2,))
    assert plain.training_weights == [1.0, 1.0, 0.0]
    weighted = Sentence(("a", "b", "c"), (Span(0, 1, "X"),), unknown=(1,), weights=(0.9, 0.5, 0.25))
    assert weighted.training_weights == [0.9, 0.0, 0.25]


@pytest.fixture(scope="module")
def bert(tmp_path_factory):
    from transformers import AutoModelForTokenClassification, AutoTokenizer

    path = save_tiny_bert(tmp_path_factory.mktemp("bert"))
    torch.manual_seed(0)
    model = AutoModelForTokenClassification.from_pretrained(str(path), num_labels=3)
    return model.eval(), AutoTokenizer.from_pretrained(str(path))


def _loss(bert, tmp_path, rows):
    from transformers import TrainingArguments

    model, tokenizer = bert
    trainer = WeightedLossTrainer(
        model=model, args=TrainingArguments(str(tmp_path), report_to=[]), data_collator=LabelWeightCollator(tokenizer)
    )
    batch = trainer.data_collator([dict(row) for row in rows])
    with torch.no_grad():
        return float(trainer.compute_loss(model, dict(batch))), batch


def _rows(tokenizer, weights=None):
    encoded = tokenizer([["the", "patient", "had", "fever"], ["aspirin"]], is_split_into_words=True)
    rows = []
    for k in range(2):
        words = encoded.word_ids(k)
        first = [w is not None and (j == 0 or words[j - 1] != w) for j, w in enumerate(words)]
        labels = [(1 if k == 1 else 0) if f else -100 for f in first]
        row = {"input_ids": encoded["input_ids"][k], "labels": labels}
        if weights is not None:
            row["label_weights"] = align_label_weights(words, weights[k])
        rows.append(row)
    return rows


def test_weights_of_one_give_the_models_own_loss(bert, tmp_path):
    model, tokenizer = bert
    loss, batch = _loss(bert, tmp_path, _rows(tokenizer))
    assert batch["label_weights"].shape == batch["labels"].shape  # padded with the labels
    with torch.no_grad():
        own = float(
            model(input_ids=batch["input_ids"], attention_mask=batch["attention_mask"], labels=batch["labels"]).loss
        )
    assert loss == pytest.approx(own, rel=1e-5)
    weighted, _ = _loss(bert, tmp_path, _rows(tokenizer, [[1.0] * 4, [1.0]]))
    assert weighted == pytest.approx(own, rel=1e-5)


def test_a_weight_of_zero_is_a_label_left_out_and_a_half_weight_counts_half(bert, tmp_path):
    model, tokenizer = bert
    rows = _rows(tokenizer, [[1.0, 1.0, 1.0, 0.0], [1.0]])
    loss, _ = _loss(bert, tmp_path, rows)
    left_out = _rows(tokenizer)
    words = tokenizer([["the", "patient", "had", "fever"]], is_split_into_words=True).word_ids(0)
    left_out[0]["labels"] = [-100 if w == 3 else label for w, label in zip(words, left_out[0]["labels"], strict=True)]
    assert loss == pytest.approx(_loss(bert, tmp_path, left_out)[0], rel=1e-5)
    half, batch = _loss(bert, tmp_path, _rows(tokenizer, [[1.0, 1.0, 1.0, 0.5], [1.0]]))
    assert loss != pytest.approx(half)  # the half-weighted word still counts
    logits = model(input_ids=batch["input_ids"], attention_mask=batch["attention_mask"]).logits.detach()
    token = torch.nn.functional.cross_entropy(logits.reshape(-1, 3), batch["labels"].reshape(-1), reduction="none")
    weights = batch["label_weights"].reshape(-1) * (batch["labels"].reshape(-1) != -100)
    assert half == pytest.approx(float((token * weights).sum() / weights.sum()), rel=1e-5)


def test_a_tagger_trains_on_fractional_weights_and_the_silver_split_keeps_them(tmp_path):
    from hf_ecg.data.silver import load_silver, write_silver
    from hf_ecg.taggers.tagger import NERConfig
    from hf_ecg.taggers.training import train_tagger

    sentences = [
        Sentence(("aspirin", "cures", "fever"), (Span(0, 1, "Chemical"),), unknown=(2,), weights=(0.8, 0.6, 1.0)),
        Sentence(("no", "names"), ()),
    ]
    write_silver(tmp_path, Corpus(sentences, name="text"), ["O", "B-Chemical", "I-Chemical"])
    back = load_silver(tmp_path)
    assert [s.training_weights for s in back] == [pytest.approx([0.8, 0.6, 0.0]), [1.0, 1.0]]
    assert back[0].unknown == (2,) and back[1].weights == ()
    config = NERConfig(model=str(save_tiny_bert(tmp_path / "bert")), epochs=1, batch_size=2, seeds=[1])
    tagger = train_tagger([back], config, 1)
    assert len(tagger.predict([["aspirin", "cures"]])[0]) == 2
