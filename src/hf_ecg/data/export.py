"""Export a generated dataset folder to the files a tagger's own tooling reads.

- ``conll``: one ``token<TAB>tag`` line per token, a blank line between sentences, in the tag scheme of
  the generator's training corpus (IOB2, IOB1 or BIOES, recorded in its ``ecg_config.json``): the format
  the user trained from, read back by :func:`~hf_ecg.data.corpus.read_conll`;
- ``jsonl``: one ``{"id", "tokens", "ner_tags", "text", "spans"}`` object per line, tags as strings,
  ``spans`` as character offsets into ``text`` (Argilla, span-based taggers), read back by
  :func:`~hf_ecg.data.corpus.read_jsonl`.
"""

from __future__ import annotations

import json
import logging
import os
from pathlib import Path

from ..runtime.tags import normalize_scheme, spans_to_tags, tags_to_spans, text_spans

__all__ = ["EXPORT_FORMATS", "export_generated"]

logger = logging.getLogger(__name__)

EXPORT_FORMATS = ("conll", "jsonl")


def _training_scheme(model: str) -> str:
    """The tag scheme of the generator's training corpus, IOB2 when the generator cannot be read."""
    from ..runtime.ecg_config import ECGConfig

    try:
        return ECGConfig.from_pretrained(model).tag_scheme
    except Exception:  # a moved model folder, or a Hub repo while offline
        logger.warning("cannot read the generator %s: writing IOB2 tags", model)
        return "IOB2"


def export_generated(
    data_dir: str | os.PathLike,
    output: str | os.PathLike,
    format: str = "conll",
    *,
    scheme: str | None = None,
    overwrite: bool = False,
) -> Path:
    """Write the samples of ``data_dir`` (a finished folder ``hf-ecg generate``, ``filter`` or a baseline
    wrote) to the file ``output``, in id order, as ``format`` (:data:`EXPORT_FORMATS`). ``scheme`` (CoNLL
    only) is the tag scheme to write; default: that of the generator's training corpus. An existing
    ``output`` is refused (``FileExistsError``) unless ``overwrite``, and one inside ``data_dir`` always
    (``ValueError``); an unfinished folder is refused
    (``ValueError``, with the command that resumes it). Returns ``output``."""
    from .dataset_format import read_generated

    if format not in EXPORT_FORMATS:
        raise ValueError(f"unknown export format {format!r}; known: {', '.join(EXPORT_FORMATS)}")
    output = Path(output)
    if output.is_dir():
        raise FileExistsError(f"{output} is a folder: the output is a file")
    if output.exists() and not overwrite:
        raise FileExistsError(f"{output} exists: give a new file name, or overwrite=True (--overwrite) to replace it")
    if scheme is not None:
        scheme = normalize_scheme(scheme)  # a bad scheme is refused before anything is read
    manifest, table = read_generated(data_dir, ["id", "tokens", "ner_tags"])
    if Path(data_dir).resolve() in output.resolve().parents:  # --overwrite would replace the input's own files
        raise ValueError(f"{output} is inside the input {data_dir}: write the export somewhere else")
    names = manifest.label_names
    if scheme is None:
        model = manifest.model
        scheme = normalize_scheme(_training_scheme(str(model)) if model else "IOB2")
    rows = sorted(zip(*(table.column(c).to_pylist() for c in ("id", "tokens", "ner_tags")), strict=True))
    output.parent.mkdir(parents=True, exist_ok=True)
    with output.open("w", encoding="utf-8") as handle:
        for sample_id, tokens, ids in rows:
            spans, _ = tags_to_spans([names[k] for k in ids], "IOB2", strict=True)
            if format == "conll":
                tags = spans_to_tags(spans, len(tokens), scheme)
                handle.write("".join(f"{token}\t{tag}\n" for token, tag in zip(tokens, tags, strict=True)) + "\n")
            else:
                record = {
                    "id": sample_id,
                    "tokens": tokens,
                    "ner_tags": spans_to_tags(spans, len(tokens)),
                    "text": " ".join(tokens),
                    "spans": text_spans(tokens, spans),
                }
                handle.write(json.dumps(record, ensure_ascii=False) + "\n")
    return output
