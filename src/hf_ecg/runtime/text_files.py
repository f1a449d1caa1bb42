"""Reading a user's text file: one policy for every reader of what users give (labelled corpora, mention lists, name
dictionaries and their JSON files, group tables, unlabelled text).

- The bytes decode as ``encoding`` (UTF-8 unless the user says otherwise); a file that does not is refused, naming
  the file, the line and the byte.
- A byte-order mark at the start is dropped: spreadsheets and Windows editors write one.
- Lines end at a line feed (a carriage return before it is dropped), nowhere else.
- Each line is Unicode NFC, so that ``é`` written as one character or two is one spelling, and loses its invisible
  format characters (zero-width spaces and joiners, soft hyphens, byte-order marks: Unicode ``Cf``), which no reader
  can see and which would split or hide a name.
- A control character other than the tab, a surrogate, a private-use character, or a line or paragraph separator
  (U+2028, U+2029) inside a line is refused, naming the file and line: it would become part of a token.
"""

from __future__ import annotations

import json
import os
import unicodedata
from pathlib import Path
from typing import Any

__all__ = ["TextFileError", "clean_line", "read_lines", "read_user_json", "visible_text"]

#: Characters refused inside a line: control (but the tab), surrogate, private use, line and paragraph separators.
REFUSED_CATEGORIES = frozenset({"Cc", "Cs", "Co", "Zl", "Zp"})
BYTE_ORDER_MARK = b"\xef\xbb\xbf"


class TextFileError(ValueError):
    """A user's text file that cannot be read: the message starts with ``file:line`` where there is a line."""


def _decoded(path: Path, encoding: str, expected: str) -> str:
    try:
        data = path.read_bytes()
    except OSError as error:
        raise TextFileError(f"{path}: cannot read it: {error.strerror or error}") from None
    if data.startswith(BYTE_ORDER_MARK) and encoding.replace("-", "").replace("_", "").lower() in ("utf8", "utf8sig"):
        data = data[len(BYTE_ORDER_MARK) :]
    try:
        return data.decode(encoding)
    except UnicodeDecodeError as error:
        line = data[: error.start].count(b"\n") + 1
        column = error.start - (data.rfind(b"\n", 0, error.start) + 1) + 1
        kind = "a binary file" if b"\x00" in data[:8192] else f"not {encoding} text"
        raise TextFileError(
            f"{path}:{line}: {kind} (byte 0x{data[error.start]:02x} at column {column} does not decode as "
            f"{encoding}); expected {expected}"
        ) from None
    except LookupError:
        raise TextFileError(f"{path}: {encoding!r} is no text encoding Python knows") from None


def clean_line(line: str, where: str) -> str:
    """``line`` as the policy reads it (NFC, without invisible format characters); :class:`TextFileError` naming
    ``where`` (``file:line``) for a character the policy refuses."""
    bad = next((ch for ch in line if ch != "\t" and unicodedata.category(ch) in REFUSED_CATEGORIES), None)
    if bad is not None:
        name = unicodedata.name(bad, "a control character").lower()
        raise TextFileError(f"{where}: holds U+{ord(bad):04X} ({name}), which no text of a name holds; remove it")
    return visible_text(line)


def visible_text(text: str) -> str:
    """``text`` NFC-normalized and without invisible format characters (Unicode ``Cf``: zero-width spaces and
    joiners, soft hyphens, byte-order marks): what every reader of a user's text keeps of it."""
    if any(unicodedata.category(ch) == "Cf" for ch in text):
        text = "".join(ch for ch in text if unicodedata.category(ch) != "Cf")
    return unicodedata.normalize("NFC", text)


def read_lines(path: str | os.PathLike, *, expected: str, encoding: str = "utf-8") -> list[str]:
    """The lines of a user's text file, each as :func:`clean_line` reads it (see the module); ``expected`` says in
    a few words what the file should hold, for the message of one that does not decode."""
    path = Path(path)
    text = _decoded(path, encoding, expected)
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return [clean_line(line.removesuffix("\r"), f"{path}:{number}") for number, line in enumerate(lines, 1)]


def read_user_json(path: str | os.PathLike, *, expected: str, encoding: str = "utf-8") -> Any:
    """A user's JSON file read as their text files are (see the module), then parsed, each string in it as
    :func:`visible_text` keeps it (an escaped ``\\u200b`` is as invisible as a written one); :class:`TextFileError`
    naming the file, line and column when it is not JSON."""
    path = Path(path)
    text = "\n".join(read_lines(path, expected=expected, encoding=encoding))
    try:
        return _visible_strings(json.loads(text))
    except json.JSONDecodeError as error:
        raise TextFileError(
            f"{path}:{error.lineno}:{error.colno}: not valid JSON ({error.msg}); expected {expected}"
        ) from None


def _visible_strings(value: Any) -> Any:
    """``value`` (parsed JSON) with each string, keys included, as :func:`visible_text` keeps it."""
    if isinstance(value, str):
        return visible_text(value)
    if isinstance(value, list):
        return [_visible_strings(item) for item in value]
    if isinstance(value, dict):
        return {visible_text(key): _visible_strings(item) for key, item in value.items()}
    return value
