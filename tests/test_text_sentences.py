"""The user's text as templates: sentences whose names the dictionary knows, the others left out, counts on the card
and no word of the text in the model folder."""

from __future__ import annotations

import pytest

from hf_ecg.cli import main
from hf_ecg.data.corpus import read_conll
from hf_ecg.data.outputs import OWN_SENTENCES_DIR
from hf_ecg.hub.model_card import ECGModelCardData
from hf_ecg.labelling.dictionary import Dictionary
from hf_ecg.selection import rules as sample_rules
from hf_ecg.training import text_sentences as text_module
from hf_ecg.training.text_sentences import TextTemplates, text_sentence_count, text_sentences
from hf_ecg.training.train import train_ecg_model
from hf_ecg.training.training_args import ECGTrainingArguments
from tiny import save_tiny_model, toy_corpus

#: The dictionary knows the toy corpus's chemicals and two of its diseases, not "severe pain".
DICTIONARY = Dictionary({"Chemical": ["Aspirin", "Ibuprofen", "paracetamol"], "Disease": ["headache", "fever"]})
#: The user's text: a word no gold sentence and no tokenizer holds (Quarvelline) shows whether the text leaks.
TEXT = [
    "Aspirin cures fever .".split(),  # a template: two names, ordinary words
    "Aspirin relieves severe pain .".split(),  # a name the dictionary misses, which the gold tagger reads
    "No effect was seen .".split(),  # no name: no slot, no template
    "Patients with headache received Quarvelline paracetamol .".split(),
    "Aspirin cures headache .".split(),  # a gold sentence: a duplicate
    "Aspirin cures fever .".split(),  # the first one again
]


@pytest.fixture(scope="module")
def gold(tmp_path_factory):
    return read_conll(toy_corpus(tmp_path_factory.mktemp("gold") / "toy.tsv"))


@pytest.fixture(scope="module")
def tagger(toy_tagger):
    """A tiny BERT that has learnt the toy corpus by heart: it reads "severe pain" as a disease."""
    assert toy_tagger.predict([TEXT[1]]) == [["B-Chemical", "O", "B-Disease", "I-Disease", "O"]]
    return toy_tagger


def test_only_sentences_with_names_and_no_name_left_as_text_become_templates(gold, tagger):
    added = text_sentences(gold, TEXT, DICTIONARY, 10, seed=0, taggers=[tagger])
    kept = {" ".join(s.tokens): s.tags for s in added.corpus}
    assert kept == {
        "Aspirin cures fever .": ["B-Chemical", "O", "B-Disease", "O"],
        "Patients with headache received Quarvelline paracetamol .": [
            "O",
            "O",
            "B-Disease",
            "O",
            "O",
            "B-Chemical",
            "O",
        ],
    }
    record = added.record
    assert record["text"] == 6 and record["with_names"] == 5 and record["judged"] == 5 and record["kept"] == 2
    assert record["dropped"] == {"duplicate": 2, "no-extra": 1}  # the gold sentence and the repeat; severe pain
    assert sum(record["dropped"].values()) + record["kept"] == record["judged"]
    assert record["entities"] == 4 and record["extra_threshold"] == text_module.EXTRA_THRESHOLD
    assert not any(isinstance(v, str) and "Quarvelline" in v for v in record.values())  # counts, never the text


def test_the_count_caps_what_is_kept_and_judged_and_the_seed_orders_the_draw(gold, tagger):
    one = text_sentences(gold, TEXT, DICTIONARY, 1, seed=0, taggers=[tagger])
    assert one.record["kept"] == 1 and one.record["judged"] == text_module.JUDGED_PER_KEPT
    draws = {
        " ".join(text_sentences(gold, TEXT, DICTIONARY, 1, seed=s, taggers=[tagger]).corpus[0].tokens) for s in range(8)
    }
    assert len(draws) == 2  # either template, as the seed draws
    assert text_sentence_count(45, None) == 400 and text_sentence_count(300, None) == 600
    assert text_sentence_count(45, 7) == 7


def test_a_dictionary_of_another_type_or_text_without_names_is_refused(gold, tagger):
    with pytest.raises(ValueError, match="type\\(s\\) Gene that the corpus does not have"):
        text_sentences(gold, TEXT, Dictionary({"Gene": ["BRCA1"]}), 5, seed=0, taggers=[tagger])
    with pytest.raises(ValueError, match="hold none of the dictionary's names"):
        text_sentences(gold, [TEXT[2]], DICTIONARY, 5, seed=0, taggers=[tagger])


def test_training_on_the_text_adds_its_templates_once_and_keeps_the_text_out_of_the_folder(
    tmp_path, tagger, monkeypatch
):
    monkeypatch.setattr(sample_rules, "teacher_taggers", lambda *args, **kwargs: [tagger])
    data = toy_corpus(tmp_path / "toy.tsv", repeat=2)
    args = ECGTrainingArguments(
        output_dir=str(tmp_path / "m"), lora=False, max_steps=3, use_cpu=True, report_to=[], disable_tqdm=True
    )
    base = str(save_tiny_model(tmp_path / "base"))
    alone = train_ecg_model(data, base, args)
    trainer = train_ecg_model(data, base, args, overwrite=True, text=TextTemplates(TEXT, DICTIONARY))
    added = trainer.model_card_data.text_sentences
    assert added["kept"] == 2 and added["blocks"] > 0
    assert trainer.train_dataset.num_rows == alone.train_dataset.num_rows + added["blocks"]
    assert not (tmp_path / "m" / OWN_SENTENCES_DIR).exists()  # the text takes the own sentences' place
    card = ECGModelCardData.load(tmp_path / "m")
    assert card.text_sentences == added
    readme = (tmp_path / "m" / "README.md").read_text(encoding="utf-8")
    assert "of the text's 6 sentences, 5 hold a name" in readme and "the 2 that passed the rules" in readme
    for path in (tmp_path / "m").rglob("*"):
        if path.is_file():
            assert b"Quarvelline" not in path.read_bytes(), path


def test_train_refuses_text_without_a_dictionary_and_other_text_on_resume(tmp_path, tagger, monkeypatch, capsys):
    monkeypatch.setattr(sample_rules, "teacher_taggers", lambda *args, **kwargs: [tagger])
    data = toy_corpus(tmp_path / "toy.tsv", repeat=2)
    text = tmp_path / "text.txt"
    text.write_text("\n".join(" ".join(s) for s in TEXT) + "\n", encoding="utf-8")
    names = tmp_path / "names.json"
    names.write_text('{"Chemical": ["Aspirin", "paracetamol"], "Disease": ["fever", "headache"]}', encoding="utf-8")
    base = str(save_tiny_model(tmp_path / "base"))
    argv = ["train", "--data", str(data), "--model", base, "-o", str(tmp_path / "m"), "--max-steps", "3"]
    quick = ["--use_cpu", "true", "--report_to", "none"]
    assert main([*argv, "--unlabelled", str(text), *quick]) == 2
    assert "--unlabelled and --dictionary go together" in capsys.readouterr().err
    assert main([*argv, "--text-sentences", "5", *quick]) == 2
    assert "--text-sentences would do nothing" in capsys.readouterr().err
    assert not (tmp_path / "m").exists()
    assert main([*argv, "--unlabelled", str(text), "--dictionary", str(names), *quick]) == 0
    out = capsys.readouterr().out
    assert "added 2 of your text's 6 sentences as templates" in out
    judging = "first, 3 gold taggers (minilm-l6, 20 epochs of the 8 gold sentences each: 60 steps) learn to judge"
    assert out.index(judging) < out.index("training once on")  # said first, before the generator trains
    assert "on 20 gold blocks and mention samples of its 12 entities, 6 blocks of your text for 3 steps" in out
    other = tmp_path / "other.txt"
    other.write_text("Aspirin cures headache today .\n", encoding="utf-8")
    assert main([*argv, "--unlabelled", str(other), "--dictionary", str(names), "--resume", *quick]) == 2
    assert "was begun with other text" in capsys.readouterr().err
