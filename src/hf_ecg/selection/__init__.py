"""Selection: the judges of generated samples and of the user's sentences, apart from what writes them.

- :mod:`~hf_ecg.selection.config`: :class:`SelectionConfig`, which rules, their thresholds, the judging taggers;
- :mod:`~hf_ecg.selection.rules`: :func:`select_samples`, each rule run over the samples still kept;
- :mod:`~hf_ecg.selection.teacher`: the judging taggers (gold or self teacher) and their agreement checks;
- :mod:`~hf_ecg.selection.shared_runs`: the ``text-copy`` rule's measure of what a sample shares with the text;
- :mod:`~hf_ecg.selection.filtering`: :func:`filter_generated`, a generated folder in, the selected folder out.

The rules' names and what each drops are in :mod:`hf_ecg.data.selection_rules`, so that cards and commands name
them without importing the taggers. ``hf-ecg filter``, ``generate --filter`` and the choice of the user's sentences
as templates (``train --unlabelled``) all judge here.
"""

from .config import TEACHERS, SelectionConfig
from .filtering import filter_generated, selection_inputs
from .rules import Selection, check_rule_inputs, select_samples

__all__ = [
    "TEACHERS",
    "Selection",
    "SelectionConfig",
    "check_rule_inputs",
    "filter_generated",
    "select_samples",
    "selection_inputs",
]
