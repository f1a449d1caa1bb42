"""The labellers: one ``spans(tokens)`` contract (dictionary, tagger, ensemble), their join, the dictionary as a
mention source of ``generate_dataset``, and a generated folder's silver split wherever it is read as synthetic data."""

from __future__ import annotations

import json
from collections import Counter

from hf_ecg.data.corpus import read_conll
from hf_ecg.data.dataset_format import load_data_folder
from hf_ecg.data.manifest import read_manifest
from hf_ecg.labelling.dictionary import Dictionary
from hf_ecg.labelling.dictionary_names import DictionaryNames
from hf_ecg.labelling.ensemble import TaggerEnsemble
from hf_ecg.labelling.labeller import Labeller, joined_spans, label_sentences
from hf_ecg.runtime.decoding import DecodingConfig
from hf_ecg.runtime.tags import Span, tags_to_spans
from hf_ecg.synthetic.generate import generate_dataset
from tiny import save_tiny_bert, toy_corpus

DECODING = DecodingConfig(max_block_tokens=4, batch_size=4)


class Fixed:
    """A labeller that answers the same spans for every sentence."""

    def __init__(self, *spans: Span) -> None:
        self.found = list(spans)

    def spans(self, tokens):
        return [span for span in self.found if span.end <= len(tokens)]


def test_the_earlier_labeller_s_spans_stand_and_a_later_one_fills_only_words_none_covers():
    first = Fixed(Span(1, 3, "Disease"))
    later = Fixed(Span(0, 1, "Chemical"), Span(2, 4, "Chemical"), Span(4, 5, "Gene"))
    assert joined_spans(first.spans("abcde"), later.spans("abcde")) == [
        Span(0, 1, "Chemical"),
        Span(1, 3, "Disease"),
        Span(4, 5, "Gene"),
    ]
    corpus = label_sentences([list("abcde")], [first, later], name="joined")
    assert corpus.name == "joined" and corpus.sentences[0].source == "unlabelled[0]"
    assert [s.label for s in corpus.sentences[0].spans] == ["Chemical", "Disease", "Gene"]
    assert label_sentences([list("abcde")], later).sentences[0].spans == tuple(later.spans("abcde"))


def test_a_dictionary_a_tagger_and_an_ensemble_are_labellers(tmp_path):
    from hf_ecg.taggers.tagger import NERConfig
    from hf_ecg.taggers.training import train_tagger

    corpus = read_conll(toy_corpus(tmp_path / "toy.tsv"))
    config = NERConfig(model=str(save_tiny_bert(tmp_path / "bert")), epochs=1, batch_size=4)
    tagger = train_tagger([corpus], config, seed=1)
    dictionary = Dictionary({"Disease": ["fever"]})
    for labeller in (dictionary, tagger, TaggerEnsemble([tagger])):
        assert isinstance(labeller, Labeller)
    # a teacher that completes weak labels keeps only the spans it is sure of: none above certainty
    assert TaggerEnsemble([tagger], min_probability=1.01).spans_many([s.tokens for s in corpus]) == [[]] * len(corpus)
    sentences = [sentence.tokens for sentence in corpus]
    # a tagger's spans are its predictions as seqeval reads them, one sentence or many at once
    predicted = [list(s.spans) for s in tagger.label(sentences)]
    assert tagger.spans_many(sentences) == predicted and tagger.spans(sentences[0]) == predicted[0]
    # the dictionary's label() is distant supervision: its spans, each sentence pointing back at its place
    labelled = dictionary.label([("a", "Fever", "b"), ("none",)])
    assert [list(s.spans) for s in labelled] == [[Span(1, 2, "Disease")], []]
    assert labelled.name == "unlabelled, labelled by the dictionary"


def test_generate_dataset_takes_a_dictionary_and_records_it_as_one(model_dir, tmp_path):
    dictionary = Dictionary({"Disease": ["myocardial infarction", "hepatitis"]})
    out = generate_dataset(
        model_dir,
        tmp_path / "set",
        6,
        entities=[["Disease", "Chemical"]],
        mentions=dictionary,
        decoding=DECODING,
        seed=1,
    )
    rows = load_data_folder(out)
    labels = rows.features["ner_tags"].feature.names
    for row in rows:
        tags = [labels[k] for k in row["ner_tags"]]
        disease = [w for w, t in zip(row["tokens"], tags, strict=True) if t.endswith("Disease")]
        assert " ".join(disease) in {"myocardial infarction", "hepatitis"}
        assert row["mention_sources"] == ["dictionary", "bank"]  # Chemical: the dictionary has none, the bank fills
    record = read_manifest(out).mentions
    assert (record.source, record.strategy, record.names, record.bank) == (
        "dictionary",
        "random",
        {"Disease": 2},
        "generator",
    )
    card = (out / "README.md").read_text()
    assert "drawn uniformly from the user's name dictionary (2 Disease names; digest" in card
    assert "hepatitis" not in json.dumps(json.loads((out / "ecg_generation.json").read_text()))  # counts only


def test_the_names_a_user_s_text_holds_are_drawn_as_often_as_it_uses_them_and_recorded_as_counts(model_dir, tmp_path):
    dictionary = Dictionary({"Disease": ["myocardial infarction", "hepatitis", "fever"]})
    text = [("acute", "hepatitis", ".")] * 9 + [("Fever", "again", ".")]
    out = generate_dataset(
        model_dir,
        tmp_path / "set",
        40,
        entities=[["Disease"]],
        mentions=DictionaryNames(dictionary, text),
        decoding=DECODING,
        seed=1,
    )
    rows = load_data_folder(out)
    labels = rows.features["ner_tags"].feature.names
    drawn = Counter(
        " ".join(w for w, k in zip(r["tokens"], r["ner_tags"], strict=True) if labels[k] != "O") for r in rows
    )
    assert set(drawn) == {"hepatitis", "Fever"} and drawn["hepatitis"] > 2 * drawn["Fever"]
    record = read_manifest(out).mentions
    assert (record.source, record.strategy, record.names, record.text_sentences) == (
        "dictionary",
        "weighted",
        {"Disease": 2},
        10,
    )
    assert "names that the user's 10 sentences of text hold (2 Disease)" in (out / "README.md").read_text()


def test_evaluate_ner_on_a_generated_folder_trains_on_its_silver_split_too(model_dir, tmp_path):
    from hf_ecg.evaluation.ner import evaluate_ner
    from hf_ecg.taggers.tagger import NERConfig

    dictionary = Dictionary({"Disease": ["fever", "severe pain"]})
    text = [("severe", "pain", "and", "fever", "."), ("no", "names", ".")]
    out = generate_dataset(
        model_dir,
        tmp_path / "set",
        4,
        entities=[["Disease"]],
        mentions=dictionary,
        silver=dictionary.label(text),
        decoding=DECODING,
        seed=1,
    )
    corpus = read_conll(toy_corpus(tmp_path / "toy.tsv"))
    config = NERConfig(model=str(save_tiny_bert(tmp_path / "bert")), epochs=1, batch_size=4, seeds=[1])
    report = evaluate_ner([corpus], corpus, config, synthetic=[out])
    assert report["synthetic"] == [{"name": "set", "sentences": 4}, {"name": "set (silver)", "sentences": 2}]


def test_a_token_no_labeller_vouches_for_is_left_out_of_the_loss(tmp_path):
    from transformers import AutoTokenizer

    from hf_ecg.data.corpus import Sentence
    from hf_ecg.taggers.tagger import encode_words

    sentence = Sentence(("aspirin", "cures", "fever"), (Span(0, 1, "Chemical"),), unknown=(2,))
    assert sentence.tags == ["B-Chemical", "O", "O"] and sentence.training_tags == ["B-Chemical", "O", None]
    tokenizer = AutoTokenizer.from_pretrained(str(save_tiny_bert(tmp_path / "bert")))
    label_ids = {"O": 0, "B-Chemical": 1, "I-Chemical": 2}
    batch = {"tokens": [list(sentence.tokens)], "tags": [sentence.training_tags]}
    encoded = encode_words(batch, tokenizer, label_ids, max_length=32)
    words = encoded.word_ids(0)
    labels = encoded["labels"][0]
    first = {word: labels[k] for k, word in enumerate(words) if word is not None and (k == 0 or words[k - 1] != word)}
    assert first == {0: 1, 1: 0, 2: -100}  # the unknown word: no label, so no loss


def test_the_silver_split_keeps_which_labels_are_known_for_load_dataset_and_the_tagger(tmp_path):
    import datasets

    from hf_ecg.data.corpus import Corpus, Sentence
    from hf_ecg.data.silver import load_silver, silver_record, write_silver

    sentences = [
        Sentence(("aspirin", "cures", "lumbago"), (Span(0, 1, "Chemical"),), unknown=(2,)),
        Sentence(("no", "names"), ()),
    ]
    labels = ["O", "B-Chemical", "I-Chemical"]
    write_silver(tmp_path, Corpus(sentences, name="text"), labels)
    rows = datasets.load_dataset("parquet", data_files=str(tmp_path / "silver" / "*.parquet"), split="train")
    assert rows["label_weights"] == [[1.0, 1.0, 0.0], [1.0, 1.0]]
    back = load_silver(tmp_path)
    assert [s.unknown for s in back] == [(2,), ()] and [s.spans for s in back] == [s.spans for s in sentences]
    # another rule for the unknown tokens is another recipe: a resume with it is refused by the digest
    known = Corpus([Sentence(s.tokens, s.spans) for s in sentences], name="text")
    assert silver_record(known, "dictionary")["digest"] != silver_record(Corpus(sentences, name="t"), "d")["digest"]


def test_a_set_written_from_a_raw_dictionary_labels_no_common_word_and_no_short_name(tmp_path, model_dir, capsys):
    from hf_ecg.cli import main
    from hf_ecg.data.silver import load_silver

    (tmp_path / "Disease.txt").write_text("fever\nheadache\nwith\nparents\nI\na\nsevere pain\n")
    gold = tmp_path / "gold.tsv"  # the gold sentences hold `with` and `parents` as ordinary words
    gold.write_text("Patients\tO\nwith\tO\nfever\tB-Disease\n.\tO\n\nparents\tO\nwith\tO\nheadache\tB-Disease\n.\tO\n")
    text = tmp_path / "text.txt"
    text.write_text("I saw parents with fever .\nA headache with severe pain .\nparents of a child with fever .\n")
    out = tmp_path / "set"
    argv = ["generate", "--model", str(model_dir), "-n", "30", "-o", str(out), "--entities", "Disease,Disease"]
    argv += ["--dictionary", f"Disease={tmp_path / 'Disease.txt'}", "--unlabelled", str(text), "--gold", str(gold)]
    assert main([*argv, "--max-block-tokens", "4"]) == 0
    err = capsys.readouterr().err  # `with` is a function word, never looked up; `parents` an ordinary word here
    assert "1 names are English function words, never looked up (with)" in err
    assert "1 names your sentences use as ordinary words left out (parents)" in err
    rows = load_data_folder(out)
    labels = rows.features["ner_tags"].feature.names
    mentions = {
        " ".join(row["tokens"][s.start : s.end])
        for row in rows
        for s in tags_to_spans([labels[k] for k in row["ner_tags"]], "IOB2")[0]
    }
    assert mentions <= {"fever", "headache", "severe pain"}  # no `with`, `parents`, `I`, `a` in a slot
    silver = {" ".join(s.tokens[span.start : span.end]) for s in load_silver(out) for span in s.spans}
    assert silver == {"fever", "headache", "severe pain"}
    assert load_silver(out).labeller_recall == 1.0  # the dictionary finds both gold names: auto oversamples it
