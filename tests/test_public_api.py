"""The top level exports what users call, and nothing else; the names it used to export still work, warning."""

from __future__ import annotations

import subprocess
import sys
import warnings

import pytest

import hf_ecg
from hf_ecg.runtime import blocks, tags
from hf_ecg.synthetic import entity_sequences

#: The cap on top-level names. 27, not 25: ``evaluate_ner(config=...)`` takes a :class:`NERConfig` and
#: ``generate_dataset(balance=...)`` a :class:`Balance`, and a user should not reach into a module for either.
MAX_PUBLIC_NAMES = 27


def test_the_public_api_is_at_most_its_cap_of_names_each_resolving_without_a_warning():
    assert len(hf_ecg.__all__) <= MAX_PUBLIC_NAMES and len(set(hf_ecg.__all__)) == len(hf_ecg.__all__)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for name in hf_ecg.__all__:
            assert getattr(hf_ecg, name) is not None, name
    for name in ("load_corpus", "generate_dataset", "train_ecg_model", "filter_generated", "evaluate_ner"):
        assert callable(getattr(hf_ecg, name))


@pytest.mark.parametrize(
    ("name", "module"),
    [("decompose", blocks), ("Template", blocks), ("tags_to_spans", tags), ("make_sampler", entity_sequences)],
)
def test_a_former_top_level_name_warns_naming_its_module_and_is_the_same_object(name, module):
    with pytest.warns(FutureWarning, match=rf"hf_ecg\.{name} is deprecated.*import it from {module.__name__}"):
        value = getattr(hf_ecg, name)
    assert value is getattr(module, name)


def test_every_former_name_still_resolves():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        for name, module in hf_ecg._MOVED.items():
            assert getattr(hf_ecg, name) is getattr(__import__(f"hf_ecg.{module}", fromlist=[name]), name)
    assert not set(hf_ecg._MOVED) & set(hf_ecg.__all__)
    with pytest.raises(AttributeError, match="no attribute 'nothing_here'"):
        hf_ecg.nothing_here  # noqa: B018


def test_importing_hf_ecg_loads_neither_torch_nor_transformers():
    code = "import sys, hf_ecg; print('torch' in sys.modules, 'transformers' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["False", "False"]
