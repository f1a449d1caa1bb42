"""Register the ``entity-controlled-generation`` task without importing transformers eagerly.

Importing ``transformers.pipelines`` takes seconds; ``import hf_ecg`` should not. The task is
registered the moment ``transformers.pipelines`` is imported (by ``from transformers import
pipeline`` or anything else), or at once if it already is. Either way, ``pipeline(task=...)``
finds it: nobody can ask the registry before importing it.
"""

from __future__ import annotations

import importlib.abc
import importlib.util
import logging
import sys
from typing import Any

logger = logging.getLogger(__name__)

_TARGET = "transformers.pipelines"


def _register() -> None:
    try:
        from .pipeline import register_pipeline
    except ImportError:  # hf_ecg.pipeline is mid-import (it imported transformers); it registers itself
        return
    register_pipeline()


class _RegisterAfterImport(importlib.abc.MetaPathFinder):
    """Wraps the loader of ``transformers.pipelines`` so that registration runs right after it executes."""

    def find_spec(self, fullname: str, path: Any, target: Any = None) -> Any:
        if fullname != _TARGET:
            return None
        sys.meta_path.remove(self)  # one shot; also keeps find_spec below from recursing
        spec = importlib.util.find_spec(fullname)
        if spec is None or spec.loader is None:
            return spec
        loader = spec.loader
        exec_module = loader.exec_module

        def exec_then_register(module: Any) -> None:
            exec_module(module)
            try:
                _register()
            except Exception:  # never break transformers' own import
                logger.warning("could not register the entity-controlled-generation pipeline", exc_info=True)

        loader.exec_module = exec_then_register  # type: ignore[method-assign]
        return spec


def register_on_transformers_import() -> None:
    """Register now if ``transformers.pipelines`` is loaded, else as soon as it is."""
    if _TARGET in sys.modules:
        _register()
    elif not any(isinstance(finder, _RegisterAfterImport) for finder in sys.meta_path):
        sys.meta_path.insert(0, _RegisterAfterImport())
