"""Register the ``entity-controlled-generation`` task without importing transformers eagerly.

Importing ``transformers.pipelines`` takes seconds and loads torch; ``import hf_ecg`` should not
(the cards, the data format and the CLI's start stay torch-free). So ``import hf_ecg`` registers the
task at once if ``transformers.pipelines`` is already imported, and otherwise the moment it is (by
``from transformers import pipeline`` or anything else). Either way, ``pipeline(task=...)`` finds it:
nobody can ask the registry before importing it. transformers has no plugin entry point for
pipeline tasks, so "the moment it is imported" is a finder on ``sys.meta_path`` that hands the
import system ``transformers.pipelines``' own spec with a loader *wrapping* its own (nothing of
transformers' is modified); it removes itself after that one import.
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
        from .runtime.pipeline import register_pipeline
    except ImportError:  # hf_ecg.runtime.pipeline is mid-import (it imported transformers); it registers itself
        return
    register_pipeline()


class _RegisteringLoader(importlib.abc.Loader):
    """``transformers.pipelines``' own loader, then the registration: a wrapper around it, so that nothing of
    transformers' (its loader, its module) is modified. Everything else is the wrapped loader's."""

    def __init__(self, loader: Any) -> None:
        self._loader = loader

    def create_module(self, spec: Any) -> Any:
        return self._loader.create_module(spec)

    def exec_module(self, module: Any) -> None:
        self._loader.exec_module(module)
        try:
            _register()
        except Exception:  # never break transformers' own import
            logger.warning("could not register the entity-controlled-generation pipeline", exc_info=True)

    def __getattr__(self, name: str) -> Any:  # get_source, get_resource_reader, ...: the wrapped loader's
        return getattr(self._loader, name)


class _RegisterAfterImport(importlib.abc.MetaPathFinder):
    """Finds ``transformers.pipelines`` as the import system would, and hands its spec back with
    :class:`_RegisteringLoader` around the loader: registration runs right after the module executes."""

    def find_spec(self, fullname: str, path: Any, target: Any = None) -> Any:
        if fullname != _TARGET:
            return None
        sys.meta_path.remove(self)  # one shot; also keeps find_spec below from recursing
        spec = importlib.util.find_spec(fullname)
        if spec is None or spec.loader is None:
            return spec
        spec.loader = _RegisteringLoader(spec.loader)
        return spec


def register_on_transformers_import() -> None:
    """Register now if ``transformers.pipelines`` is loaded, else as soon as it is."""
    if _TARGET in sys.modules:
        _register()
    elif not any(isinstance(finder, _RegisterAfterImport) for finder in sys.meta_path):
        sys.meta_path.insert(0, _RegisterAfterImport())
