from __future__ import annotations

import json
import re

import datasets
import pytest

from hf_ecg.data.corpus import CorpusFormatError, from_hf_dataset, load_corpus, read_conll, read_jsonl
from hf_ecg.runtime.tags import Span


def write(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def test_conll_reads_sentences_skipping_docstart(tmp_path):
    path = write(
        tmp_path,
        "a.tsv",
        "-DOCSTART-\tO\n\nAspirin\tB-Chemical\ncures\tO\nheadache\tB-Disease\n\n-DOCSTART-\tO\nok\tO\n",
    )
    corpus = read_conll(path)
    assert len(corpus) == 2
    assert corpus[0].tokens == ("Aspirin", "cures", "headache")
    assert corpus[0].spans == (Span(0, 1, "Chemical"), Span(2, 3, "Disease"))
    assert corpus[0].source == f"{path}:3"
    assert corpus[1].tokens == ("ok",)
    assert corpus.entity_types == ["Chemical", "Disease"]


def test_conll_space_separated_multi_column_with_selected_columns(tmp_path):
    path = write(tmp_path, "a.conll", "EU NNP B-ORG x\nrejects VBZ O x\nGerman JJ B-MISC x\n")
    corpus = read_conll(path, token_column=0, tag_column=2)
    assert corpus[0].tags == ["B-ORG", "O", "B-MISC"]


def test_conll_iob1_and_bioes_are_detected(tmp_path):
    iob1 = read_conll(write(tmp_path, "iob1.tsv", "a\tI-X\nb\tI-X\nc\tB-X\nd\tO\n"))
    assert iob1.scheme == "IOB1"
    assert iob1[0].spans == (Span(0, 2, "X"), Span(2, 3, "X"))
    bioes = read_conll(write(tmp_path, "bioes.tsv", "a\tB-X\nb\tE-X\nc\tS-Y\n"))
    assert bioes.scheme == "BIOES"
    assert bioes[0].spans == (Span(0, 2, "X"), Span(2, 3, "Y"))


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("a\tO\nb\tO\n\nlonely\n", "4: expected at least 2 columns"),
        ("a\tO\n\tO\n", "2: empty token"),
        ("a\tO\n\nnew york\tB-LOC\n", "3: token 'new york' contains whitespace"),
        ("a\tO\nb\tB_\n", "2: malformed tag 'B_'"),
    ],
    ids=["too-few-columns", "empty-token", "token-with-whitespace", "malformed-tag"],
)
def test_bad_line_names_file_and_line(tmp_path, text, message):
    path = write(tmp_path, "bad.tsv", text)
    with pytest.raises(CorpusFormatError, match=re.escape(f"{path}:{message}")):
        read_conll(path)


def test_stray_inside_tag_is_repaired_and_counted_with_its_place(tmp_path):
    path = write(tmp_path, "rep.tsv", "a\tO\nb\tI-X\n\nc\tB-X\nd\tI-X\n")
    corpus = read_conll(path)
    assert corpus[0].spans == (Span(1, 2, "X"),)
    assert corpus.repairs == 1
    assert corpus.repair_locations == [f"{path}:2"]
    assert corpus.subset(first_n=1).repairs == 1


def test_strict_rejects_a_stray_inside_tag_naming_file_and_line(tmp_path):
    path = write(tmp_path, "rep.tsv", "a\tB-X\n\nb\tO\nc\tI-X\n")
    with pytest.raises(CorpusFormatError, match=re.escape(f"{path}:4: token 2: 'I-X' does not continue a span")):
        read_conll(path, strict=True)


@pytest.mark.parametrize("reader", [read_conll, read_jsonl], ids=["conll", "jsonl"])
@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"", r"{path}: the file is empty; expected "),
        (b"\n\n-DOCSTART-\tO\n\n", r"{path}: the file holds no sentence; expected "),
        (b"\x9b\x00\xff\x00binary", r"{path}:1: a binary file \(byte 0x9b at column 1 "),
        (b"Aspirin\tB-X\n\ncures\tO\n\xe9t\xe9\tO\n", r"{path}:4: not utf-8 text \(byte 0xe9 at column 1 "),
    ],
    ids=["empty", "blank-lines-only", "binary", "latin-1"],
)
def test_empty_and_undecodable_files_name_the_file_and_what_was_expected(tmp_path, reader, content, message):
    path = tmp_path / "bad.data"
    path.write_bytes(content)
    if reader is read_jsonl and b"-DOCSTART-" in content:
        path.write_bytes(b"\n\n\n")
    with pytest.raises(CorpusFormatError, match=message.format(path=re.escape(str(path)))):
        reader(path)


def test_cli_names_an_empty_corpus_file(tmp_path, capsys):
    from hf_ecg.cli import main

    path = write(tmp_path, "empty.tsv", "")
    assert main(["blocks", str(path), "-o", str(tmp_path / "blocks")]) == 2
    assert f"{path}: the file is empty; expected one token and its tag per line" in capsys.readouterr().err


def test_missing_file_is_a_clear_error(tmp_path):
    with pytest.raises(FileNotFoundError, match="no such corpus file"):
        read_conll(tmp_path / "nope.tsv")


def test_jsonl_with_string_and_id_tags(tmp_path):
    path = write(
        tmp_path,
        "a.jsonl",
        json.dumps({"tokens": ["Aspirin", "works"], "ner_tags": ["B-Chemical", "O"]})
        + "\n\n"
        + json.dumps({"tokens": ["x"], "ner_tags": [1]})
        + "\n",
    )
    corpus = read_jsonl(path, label_names=["O", "B-Chemical", "I-Chemical"])
    assert [s.tags for s in corpus] == [["B-Chemical", "O"], ["B-Chemical"]]
    assert load_corpus(path, label_names=["O", "B-Chemical"])[1].spans == (Span(0, 1, "Chemical"),)


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("{not json", r":2: invalid JSON"),
        ('{"tokens": ["a"]}', r":2: expected an object with keys 'tokens' and 'ner_tags'"),
        ('{"tokens": ["a", "b"], "ner_tags": ["O"]}', r":2: 2 tokens but 1 tags"),
        ('{"tokens": ["a b"], "ner_tags": ["O"]}', r":2 \(token 1\): token 'a b' contains whitespace"),
        ('{"tokens": ["a"], "ner_tags": [0]}', r":2: tags are ids"),
    ],
)
def test_jsonl_errors_name_file_and_line(tmp_path, line, message):
    path = write(tmp_path, "bad.jsonl", '{"tokens": ["ok"], "ner_tags": ["O"]}\n' + line + "\n")
    with pytest.raises(CorpusFormatError, match=re.escape(str(path)) + message):
        read_jsonl(path)


def test_hf_dataset_with_classlabel_tags():
    names = ["O", "B-Chemical", "I-Chemical", "B-Disease", "I-Disease"]
    features = datasets.Features(
        {"tokens": datasets.List(datasets.Value("string")), "ner_tags": datasets.List(datasets.ClassLabel(names=names))}
    )
    ds = datasets.Dataset.from_dict(
        {"tokens": [["Aspirin", "cures", "bad", "headache"], []], "ner_tags": [[1, 0, 3, 4], []]}, features=features
    )
    corpus = from_hf_dataset(ds, name="toy")
    assert len(corpus) == 1  # empty rows are not sentences
    assert corpus[0].spans == (Span(0, 1, "Chemical"), Span(2, 4, "Disease"))
    assert corpus[0].source == "toy[0] (token 1)"


def test_hf_dataset_with_string_tags_and_errors():
    ds = datasets.Dataset.from_dict({"words": [["a", "b"]], "labels": [["B-X", "I-Y"]]})
    corpus = load_corpus(ds, tokens_column="words", tags_column="labels")
    assert corpus[0].spans == (Span(0, 1, "X"), Span(1, 2, "Y"))
    with pytest.raises(CorpusFormatError, match=r"\[0\] \(token 2\): token 2: 'I-Y' does not continue"):
        load_corpus(ds, tokens_column="words", tags_column="labels", strict=True)
    with pytest.raises(CorpusFormatError, match="no column"):
        load_corpus(ds)


def test_subset_first_n_and_fraction(tmp_path):
    path = write(tmp_path, "a.tsv", "".join(f"w{i}\tO\n\n" for i in range(200)))
    corpus = read_conll(path)
    assert len(corpus.subset(first_n=45)) == 45
    assert len(corpus.subset(fraction=0.01)) == 2
    assert len(corpus.subset(fraction=0.001)) == 1
    assert corpus.subset(first_n=3)[2].tokens == ("w2",)
    with pytest.raises(ValueError, match="only 200 sentences"):
        corpus.subset(first_n=201)
    with pytest.raises(ValueError, match="fraction"):
        corpus.subset(fraction=1.5)


def test_shared_corpora_read(shared_data):
    bc5 = read_conll(shared_data / "bc5cdr" / "train.tsv")
    assert len(bc5) == 4560
    assert bc5.entity_types == ["Chemical", "Disease"]
    jnlpba = read_conll(shared_data / "jnlpba" / "devel.tsv")
    assert len(jnlpba) == 1739  # -DOCSTART- lines are separators, not sentences
    assert all(s.tokens[0] != "-DOCSTART-" for s in jnlpba)


def test_the_reader_drops_invisible_format_characters_and_refuses_control_characters(tmp_path):
    path = tmp_path / "gold.tsv"
    path.write_text("cu\u200bres\tO\nAspi\u00adrin\tB-Chemical\n.\tO\n", encoding="utf-8")
    (sentence,) = read_conll(path).sentences
    assert sentence.tokens == ("cures", "Aspirin", ".")  # as a reader sees them, and as a name list writes them
    path.write_text("Asp\x00irin\tB-Chemical\n.\tO\n", encoding="utf-8")
    with pytest.raises(CorpusFormatError, match=r"gold.tsv:1: holds U\+0000"):
        read_conll(path)
    path.write_text("\u200b\tO\n.\tO\n", encoding="utf-8")
    with pytest.raises(CorpusFormatError, match=r"gold\.tsv:1: empty token"):
        read_conll(path)
