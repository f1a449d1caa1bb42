"""Export a generated dataset folder to the files a tagger's own tooling reads.

- ``conll``: one ``token<TAB>tag`` line per token, a blank line between sentences, in the tag scheme of
  the generator's training corpus (IOB2, IOB1 or BIOES, recorded in its ``ecg_config.json``): the format
  the user trained from, read back by :func:`~hf_ecg.corpus.read_conll`;
- ``jsonl``: one ``{"id", "tokens", "ner_tags", "text", "spans"}`` object per line, tags as strings,
  ``spans`` as character offsets into ``text`` (Argilla, span-based taggers), read back by
  :func:`~hf_ecg.corpus.read_jsonl`.
"""

from __future__ import annotations

import json
import logging
import os
from pathlib import Path

from .tags import normalize_scheme, spans_to_tags, tags_to_spans, text_spans

__all__ = ["EXPORT_FORMATS", "export_generated"]

logger = logging.getLogger(__name__)

EXPORT_FORMATS = ("conll", "jsonl")


def _training_scheme(model: str) -> str:
    """The tag scheme of the generator's training corpus, IOB2 when the generator cannot be read."""
    from .config import ECGConfig

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
) -> Path:
    """Write the samples of ``data_dir`` (a folder ``hf-ecg generate``, ``filter`` or a baseline wrote) to
    the file ``output``, in id order, as ``format`` (:data:`EXPORT_FORMATS`). ``scheme`` (CoNLL only) is
    the tag scheme to write; default: that of the generator's training corpus. Returns ``output``."""
    import datasets
    import pyarrow as pa
    import pyarrow.parquet as pq

    from .dataset_format import MANIFEST_NAME

    if format not in EXPORT_FORMATS:
        raise ValueError(f"unknown export format {format!r}; known: {', '.join(EXPORT_FORMATS)}")
    data_dir = Path(data_dir)
    shards = sorted(data_dir.glob("data/*.parquet"))
    if not shards:
        raise FileNotFoundError(
            f"{data_dir} has no data/*.parquet: not a folder hf-ecg generate, filter or baseline wrote"
        )
    table = pa.concat_tables(pq.read_table(shard, columns=["id", "tokens", "ner_tags"]) for shard in shards)
    names = datasets.Features.from_arrow_schema(pq.read_schema(shards[0]))["ner_tags"].feature.names
    if scheme is None:
        manifest_path = data_dir / MANIFEST_NAME
        model = json.loads(manifest_path.read_text(encoding="utf-8")).get("model") if manifest_path.is_file() else None
        scheme = _training_scheme(str(model)) if model else "IOB2"
    scheme = normalize_scheme(scheme)
    rows = sorted(zip(*(table.column(c).to_pylist() for c in ("id", "tokens", "ner_tags")), strict=True))
    output = Path(output)
    output.parent.mkdir(parents=True, exist_ok=True)
    with output.open("w", encoding="utf-8") as handle:
        for sample_id, tokens, ids in rows:
            spans, _ = tags_to_spans([names[k] for k in ids], "IOB2", strict=True)
            if format == "conll":
                tags = spans_to_tags(spans, len(tokens), scheme)
                handle.write("".join(f"{token}\t{tag}\n" for token, tag in zip(tokens, tags, strict=True)) + "\n")
            else:
                record = {"id": sample_id, "tokens": tokens, "ner_tags": spans_to_tags(spans, len(tokens)),
                          "text": " ".join(tokens), "spans": text_spans(tokens, spans)}  # fmt: skip
                handle.write(json.dumps(record, ensure_ascii=False) + "\n")
    return output
