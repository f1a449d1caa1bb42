"""The paper's experiments as a library: :class:`ReproduceConfig` says what to run, :func:`run_protocol` runs
every stage (generators, synthetic sets, selection, quality, downstream NER) in a folder it can resume, and
writes ``tables.md``. ``scripts/reproduce.py`` is a command line over it."""

from .config import ReproduceConfig
from .protocol import run_protocol

__all__ = ["ReproduceConfig", "run_protocol"]
