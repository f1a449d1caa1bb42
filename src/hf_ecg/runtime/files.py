"""Reading the JSON files hf_ecg writes (manifests, ``ecg_config.json``, card data, reports) and the ones users
give (mentions, quality reports): a file that is not JSON is one error naming the file and line."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

__all__ = ["read_json"]


def read_json(path: str | os.PathLike, what: str = "JSON") -> Any:
    """The content of the JSON file ``path``; ``ValueError`` naming the file, line and column (and ``what`` the
    file should be) when it is not JSON, or not UTF-8 text."""
    path = Path(path)
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as error:
        raise ValueError(
            f"{path}:{error.lineno}:{error.colno}: not valid JSON ({error.msg}); expected {what}"
        ) from None
    except UnicodeDecodeError:
        raise ValueError(f"{path}: not UTF-8 text; expected {what}") from None
