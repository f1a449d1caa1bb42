"""One policy for every reader of a user's text file (hf_ecg.runtime.text_files): a byte-order mark dropped, NFC,
invisible format characters taken out, a control, private-use or line-separator character and bytes that do not
decode refused in one message naming the file and line, whichever reader reads the file."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from hf_ecg.data.corpus import read_conll, read_jsonl
from hf_ecg.data.groups import GroupTable
from hf_ecg.data.unlabelled import read_text_lines
from hf_ecg.labelling.dictionary import Dictionary
from hf_ecg.runtime.mentions import read_mention_list
from hf_ecg.runtime.text_files import TextFileError, clean_line, read_lines

# Each reader: how a file of two names is written (the second name's line, the first is on line 1 or 2), and the
# names it reads back.


def _lines(first: bytes, second: bytes, template: bytes) -> bytes:
    return template.replace(b"FIRST", first).replace(b"SECOND", second)


READERS = {
    "corpus (CoNLL)": (b"FIRST\tB-Disease\n\nSECOND\tB-Disease\n", 3, lambda p: [s.tokens[0] for s in read_conll(p)]),
    "corpus (JSONL)": (
        b'{"tokens": ["FIRST"], "ner_tags": ["B-Disease"]}\n{"tokens": ["SECOND"], "ner_tags": ["B-Disease"]}\n',
        2,
        lambda p: [s.tokens[0] for s in read_jsonl(p)],
    ),
    "unlabelled text": (b"FIRST\nSECOND\n", 2, lambda p: [words[0] for words in read_text_lines(p)]),
    "mention list": (b"FIRST\nSECOND\t2\n", 2, lambda p: [name[0] for name in read_mention_list(p)]),
    "dictionary list": (
        b"FIRST\nSECOND\n",
        2,
        lambda p: sorted(name[0] for name in Dictionary.read([f"Disease={p}"]).names["Disease"]),
    ),
    "dictionary JSON": (
        b'{"Disease": [\n"FIRST",\n"SECOND"]}\n',
        3,
        lambda p: sorted(name[0] for name in Dictionary.read([str(p.with_suffix(".json"))]).names["Disease"]),
    ),
    "group table": (
        b"FIRST\tA\nSECOND\tB\n",
        2,
        lambda p: [names[0][0] for names in GroupTable.read("Disease", p).names.values()],
    ),
}


def _write(tmp_path: Path, reader: str, first: bytes, second: bytes, prefix: bytes = b"") -> tuple[Path, int]:
    template, line, _ = READERS[reader]
    path = tmp_path / ("names.json" if "JSON" in reader and "corpus" not in reader else "names.txt")
    path.write_bytes(prefix + _lines(first, second, template))
    return path, line


def _read(reader: str, path: Path) -> list[str]:
    return READERS[reader][2](path)


@pytest.mark.parametrize("reader", list(READERS))
def test_every_reader_drops_a_byte_order_mark_and_invisible_format_characters_and_reads_nfc(tmp_path, reader):
    plain, _ = _write(tmp_path, reader, b"fever", "caf\u00e9".encode())
    expected = sorted(_read(reader, plain))
    assert expected == sorted(["fever", "caf\u00e9"])
    # a byte-order mark, a zero-width space inside a name, the same accent written as two characters
    odd, _ = _write(tmp_path, reader, "fe\u200bver".encode(), "cafe\u0301".encode(), prefix=b"\xef\xbb\xbf")
    assert sorted(_read(reader, odd)) == expected


@pytest.mark.parametrize("reader", list(READERS))
@pytest.mark.parametrize(
    ("second", "said"),
    [
        (b"fe\x00ver", "U+0000"),
        ("fe\u2028ver".encode(), "U+2028"),
        ("fe\ue000ver".encode(), "U+E000"),
        (b"fe\x0cver", "U+000C"),
        (b"caf\xe9", "not utf-8 text (byte 0xe9"),
    ],
)
def test_every_reader_refuses_what_the_policy_refuses_naming_the_file_and_line(tmp_path, reader, second, said):
    path, line = _write(tmp_path, reader, b"fever", second)
    with pytest.raises(ValueError) as refused:
        _read(reader, path)
    message = str(refused.value)
    assert message.startswith(f"{path}:{line}: ") and said in message and "\n" not in message, message


@given(st.text(alphabet=st.characters(blacklist_categories=("Cc", "Cs", "Co", "Zl", "Zp")), max_size=30))
def test_a_clean_line_is_nfc_and_has_no_format_character_and_cleaning_it_again_changes_nothing(text):
    import unicodedata

    cleaned = clean_line(text, "f:1")
    assert unicodedata.is_normalized("NFC", cleaned)
    assert not any(unicodedata.category(ch) == "Cf" for ch in cleaned)
    assert clean_line(cleaned, "f:1") == cleaned


def test_lines_end_at_line_feeds_only_and_a_carriage_return_before_one_is_dropped(tmp_path):
    path = tmp_path / "t.txt"
    path.write_bytes(b"a\r\nb\n\nc")
    assert read_lines(path, expected="text") == ["a", "b", "", "c"]
    path.write_bytes(b"a\rb\n")
    with pytest.raises(TextFileError, match=r"t\.txt:1: holds U\+000D"):
        read_lines(path, expected="text")


def test_a_user_json_file_that_is_not_json_names_its_line_and_column(tmp_path):
    from hf_ecg.runtime.text_files import read_user_json

    path = tmp_path / "m.json"
    path.write_text('{"Disease": [\n"fever",\n]}\n')
    with pytest.raises(TextFileError, match=r"m\.json:3:1: not valid JSON"):
        read_user_json(path, expected="a JSON object")
    path.write_text(json.dumps({"Disease": ["fe\u200bver"]}))
    assert read_user_json(path, expected="a JSON object") == {"Disease": ["fever"]}
