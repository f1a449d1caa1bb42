"""The short forms a text defines (labelling/abbreviations.py), the documents a text separates, and the silver
split's weights on generate's path."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from hf_ecg.cli import main
from hf_ecg.data.corpus import Corpus, Sentence
from hf_ecg.data.unlabelled import WORD_PATTERN
from hf_ecg.labelling.abbreviations import AbbreviationLabeller, o_words
from hf_ecg.labelling.dictionary import Dictionary
from hf_ecg.labelling.dictionary_names import DictionaryNames
from hf_ecg.labelling.labeller import label_sentences
from tiny import toy_corpus


def _words(line: str) -> tuple[str, ...]:
    return tuple(WORD_PATTERN.findall(line))


def _names(sentence: Sentence) -> list[tuple[str, str]]:
    return [(label, " ".join(words)) for label, words in sentence.mentions]


EDMD_TEXT = [
    _words("Emery-Dreifuss muscular dystrophy (EDMD) is an inherited disorder."),
    _words("Patients with EDMD were studied."),
    _words("In EDMD, the heart fails."),
]


def test_a_short_form_defined_after_a_dictionary_name_is_labelled_wherever_the_text_uses_it():
    dictionary = Dictionary({"Disease": [("Emery", "-", "Dreifuss", "muscular", "dystrophy")]})
    labeller = AbbreviationLabeller(dictionary)
    corpus = label_sentences(EDMD_TEXT, labeller)
    assert _names(corpus[0]) == [("Disease", "Emery - Dreifuss muscular dystrophy"), ("Disease", "EDMD")]
    assert _names(corpus[1]) == [("Disease", "EDMD")] and _names(corpus[2]) == [("Disease", "EDMD")]
    assert len(labeller.definitions) == 1 and labeller.added == 3
    # the dictionary alone finds the long form only
    assert [len(s.spans) for s in label_sentences(EDMD_TEXT, dictionary)] == [1, 0, 0]


def test_a_long_form_the_dictionary_marks_only_the_end_of_still_defines_its_short_form():
    dictionary = Dictionary({"Disease": [("muscular", "dystrophy")]})
    corpus = label_sentences(EDMD_TEXT, AbbreviationLabeller(dictionary))
    assert _names(corpus[1]) == [("Disease", "EDMD")]


def test_a_short_form_spelt_like_a_word_of_the_golds_o_text_is_never_labelled():
    gold = Corpus([Sentence.from_tags(_words("CT scans were normal ."), ["O"] * 5)])
    text = [_words("carbon tetrachloride (CT) was given."), _words("CT showed lesions.")]
    dictionary = Dictionary({"Chemical": [("carbon", "tetrachloride")]})
    common = o_words([gold])
    assert "CT" in common
    corpus = label_sentences(text, AbbreviationLabeller(dictionary, common_words=common))
    assert _names(corpus[0]) == [("Chemical", "carbon tetrachloride")] and not corpus[1].spans
    # without the gold's words, it would have been
    corpus = label_sentences(text, AbbreviationLabeller(dictionary))
    assert _names(corpus[1]) == [("Chemical", "CT")]


def test_a_short_form_is_read_in_its_own_document_only_or_within_the_window():
    dictionary = Dictionary({"Disease": [("Emery", "-", "Dreifuss", "muscular", "dystrophy")]})
    text = [*EDMD_TEXT, _words("EDMD is another thing here.")]
    by_document = label_sentences(text, AbbreviationLabeller(dictionary, documents=[0, 0, 0, 1]))
    assert [len(s.spans) for s in by_document] == [2, 1, 1, 0]
    near = label_sentences(text, AbbreviationLabeller(dictionary, window=1))
    assert [len(s.spans) for s in near] == [2, 1, 0, 0]


def test_a_short_form_defined_with_two_types_is_left_alone():
    dictionary = Dictionary({"Disease": [("muscular", "dystrophy")], "Chemical": [("methyl", "dopamine")]})
    text = [_words("muscular dystrophy (MD) is rare."), _words("methyl dopamine (MD) was given."), _words("MD.")]
    corpus = label_sentences(text, AbbreviationLabeller(dictionary))
    assert [len(s.spans) for s in corpus] == [1, 1, 0]


WORDS = st.sampled_from(["fever", "(", ")", "FV", "was", "seen", "acute", "AF", "in", "."])


@settings(max_examples=60, deadline=None)
@given(st.lists(st.lists(WORDS, min_size=1, max_size=12), min_size=1, max_size=6))
def test_the_wrapped_labellers_spans_stand_and_each_added_span_is_a_defined_short_form(sentences):
    dictionary = Dictionary({"Disease": [("acute", "fever")]})
    labeller = AbbreviationLabeller(dictionary)
    found = labeller.spans_many(sentences)
    defined = {d.short for d in labeller.definitions}
    for tokens, spans in zip(sentences, found, strict=True):
        own = dictionary.spans(tokens)
        assert set(own) <= set(spans)
        for span in set(spans) - set(own):
            assert tuple(tokens[span.start : span.end]) in defined and span.label == "Disease"
        covered = [i for span in spans for i in range(span.start, span.end)]
        assert len(covered) == len(set(covered))  # no two spans overlap


def test_the_documents_of_a_text_file_and_of_a_corpus_file(tmp_path):
    from hf_ecg.data.sources import load_text_documents, load_unlabelled_source

    text = tmp_path / "text.txt"
    text.write_text("first one .\nsecond one .\n\n\nthird one .\n")
    assert load_text_documents(str(text)) == [0, 0, 1]
    assert load_text_documents(f"{text}:1:3") == [0, 1]
    text.write_text("first one .\nsecond one .\n")
    assert load_text_documents(str(text)) is None
    corpus = tmp_path / "docs.tsv"
    corpus.write_text("-DOCSTART-\tO\n\nA\tO\n.\tO\n\nB\tO\n\n-DOCSTART-\tO\n\nC\tO\n")
    assert load_unlabelled_source(str(corpus)) == [("A", "."), ("B",), ("C",)]
    assert load_text_documents(str(corpus)) == [1, 1, 2]
    assert load_text_documents(str(toy_corpus(tmp_path / "toy.tsv"))) is None


def test_dictionary_names_count_the_short_forms_and_serve_them_as_names():
    dictionary = Dictionary({"Disease": [("Emery", "-", "Dreifuss", "muscular", "dystrophy")]})
    names = DictionaryNames(dictionary, EDMD_TEXT)
    assert names.abbreviations_found == {"definitions": 1, "labelled": 3}
    assert names.names_as_mentions().names.counts("Disease")[("EDMD",)] == 3
    plain = DictionaryNames(dictionary, EDMD_TEXT, abbreviations=False)
    assert plain.abbreviations_found is None and sum(len(s.spans) for s in plain.silver()) == 1


def test_generate_labels_the_short_forms_and_with_gold_writes_fractional_weights(
    tmp_path, model_dir, toy_tagger, monkeypatch, capsys
):
    """The product's path: --dictionary --unlabelled labels the short forms the text defines (said on stderr);
    with --gold, the gold taggers weigh the silver words outside the names, read back as weights; without --gold
    every weight is 1.0, and --no-abbreviations leaves the short forms out."""
    import datasets

    from hf_ecg.data.manifest import read_manifest
    from hf_ecg.data.silver import load_silver
    from hf_ecg.labelling import ensemble

    trained = []
    monkeypatch.setattr(
        ensemble, "train_gold_taggers", lambda gold, config, seeds, **_: trained.append(seeds) or [toy_tagger]
    )
    (tmp_path / "Disease.txt").write_text("Emery-Dreifuss muscular dystrophy\n")
    text = tmp_path / "text.txt"
    text.write_text("\n".join(" ".join(words) for words in EDMD_TEXT) + "\n")
    gold = toy_corpus(tmp_path / "toy.tsv")
    argv = ["generate", "--model", str(model_dir), "-n", "2", "--entities", "Disease", "--max-block-tokens", "4"]
    argv += ["--dictionary", f"Disease={tmp_path / 'Disease.txt'}", "--unlabelled", str(text)]

    assert main([*argv, "-o", str(tmp_path / "plain")]) == 0
    assert "3 more names labelled, uses of the 1 short forms" in capsys.readouterr().err
    plain = datasets.load_dataset(str(tmp_path / "plain"))["silver"]
    assert all(w == 1.0 for row in plain["label_weights"] for w in row) and not trained
    assert sum(len(s.spans) for s in load_silver(tmp_path / "plain")) == 4

    assert main([*argv, "-o", str(tmp_path / "weighted"), "--gold", str(gold)]) == 0
    assert trained == [[1, 2, 3]] and "silver words weigh under 1.0" in capsys.readouterr().err
    silver = load_silver(tmp_path / "weighted")
    assert any(s.weights for s in silver)
    for sentence in silver:
        named = {i for span in sentence.spans for i in range(span.start, span.end)}
        weights = sentence.training_weights
        assert all(weights[i] == 1.0 for i in named) and all(0 < w <= 1.0 for w in weights)
    assert "O weighted by 1 gold taggers" in read_manifest(tmp_path / "weighted").silver["labelled_by"]
    card = (tmp_path / "weighted" / "README.md").read_text()
    assert "a fraction" in card and "short forms the text defines" in card and "read it as `O`" in card

    assert main([*argv, "-o", str(tmp_path / "short"), "--no-abbreviations", "--no-silver-weights"]) == 0
    assert sum(len(s.spans) for s in load_silver(tmp_path / "short")) == 1
    assert "short forms" not in (tmp_path / "short" / "README.md").read_text()


def test_o_weighted_weighs_each_word_outside_the_names_by_the_taggers_o_probability(toy_tagger):
    from hf_ecg.labelling.ensemble import MIN_LABEL_WEIGHT, ensemble_proba, o_weighted

    corpus = Dictionary({"Disease": [("fever",)]}).label([_words("Aspirin cures fever ."), _words("no names .")])
    weighted = o_weighted(corpus, [toy_tagger])
    outside = toy_tagger.labels.index("O")
    for sentence, probabilities in zip(weighted, ensemble_proba([toy_tagger], [s.tokens for s in corpus]), strict=True):
        named = {i for span in sentence.spans for i in range(span.start, span.end)}
        for i, weight in enumerate(sentence.weights):
            expected = 1.0 if i in named else max(float(probabilities[i][outside]), MIN_LABEL_WEIGHT)
            assert weight == expected
    assert weighted[0].weights[2] == 1.0 and weighted[0].weights[0] < 0.5  # the tagger knows Aspirin is a name
    assert [s.spans for s in weighted] == [s.spans for s in corpus] and weighted.weak


def test_the_guides_own_trainer_recipe_trains_on_a_weighted_silver_split(tmp_path, model_dir, toy_tagger, monkeypatch):
    """docs/guides/standard-clients.md's snippet, run as written on a folder generate wrote with --gold (a tiny BERT
    for bert-base-cased): each weight reaches the loss on its word's first sub-word."""
    import re
    from pathlib import Path

    from hf_ecg.labelling import ensemble
    from tiny import save_tiny_bert

    monkeypatch.setattr(ensemble, "train_gold_taggers", lambda *_, **__: [toy_tagger])
    (tmp_path / "Disease.txt").write_text("fever\n")
    text = tmp_path / "text.txt"
    text.write_text("Patients with fever received aspirin .\nno fever was seen .\n")
    out = tmp_path / "set"
    argv = ["generate", "--model", str(model_dir), "-n", "2", "--entities", "Disease", "--max-block-tokens", "4"]
    argv += ["--dictionary", f"Disease={tmp_path / 'Disease.txt'}", "--unlabelled", str(text)]
    assert main([*argv, "-o", str(out), "--gold", str(toy_corpus(tmp_path / "toy.tsv"))]) == 0
    guide = (Path(__file__).parents[1] / "docs" / "guides" / "standard-clients.md").read_text()
    section = guide[guide.index("## The silver split's weights") :]
    code = re.search(r"```python\n(.*?)```", section, re.S).group(1)
    code = code.replace('"bert-base-cased"', repr(str(save_tiny_bert(tmp_path / "bert"))))
    code = code.replace('"outputs/set"', repr(str(out))).replace('"outputs/ner"', repr(str(tmp_path / "ner")))
    namespace: dict = {}
    exec(code, namespace)  # the guide's own code
    encoded = namespace["encoded"]
    assert any(0 < w < 1 for row in encoded["label_weights"] for w in row)  # the taggers' fractions reached it
    assert namespace["trainer"].state.global_step > 0
