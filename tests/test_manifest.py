"""The generation manifest: one type, one migration from every older version (fixtures written by earlier
hf_ecg versions, or as they wrote them), the key order of each kind, and refusal of a newer version."""

from __future__ import annotations

import json
from dataclasses import asdict
from pathlib import Path

import pytest

from hf_ecg.data.manifest import (
    MANIFEST_VERSION,
    GenerationManifest,
    MentionsRecord,
    bio_labels,
    read_manifest,
    write_manifest,
)
from hf_ecg.runtime.decoding_config import DecodingConfig

FIXTURES = Path(__file__).parent / "fixtures" / "manifests"
DECODING_DEFAULTS = {k: v for k, v in asdict(DecodingConfig()).items() if k != "seed"}


def fixture(name: str) -> dict:
    return json.loads((FIXTURES / f"{name}.json").read_text())


def test_a_folder_from_before_the_records_reads_as_its_run_behaved():
    manifest = GenerationManifest.migrate(fixture("v1-before-records"))
    assert manifest.mentions == MentionsRecord("bank", strategy="random", bank="generator")
    assert manifest.dtype == "float32"  # every run was float32 before dtype was recorded
    assert manifest.label_names == bio_labels(["Chemical", "Disease"])
    assert manifest.model_fingerprint is None  # unchecked when resumed
    # options added later read as the behaviour before them: the redraw rules off, no budget, the rest default
    assert manifest.decoding == {
        **DECODING_DEFAULTS,
        "redraw_unended": False,
        "redraw_repetition": False,
        "redraw_run_on": False,
        "redraw_tag_pieces": False,
        "redraw_budget": None,
    }
    assert manifest.format_version == MANIFEST_VERSION


@pytest.mark.parametrize(
    ("name", "record"),
    [
        ("v1-user-mentions", MentionsRecord("user", digest="0123456789abcdef")),
        ("v1-file-mentions", MentionsRecord("bank", strategy="weighted", bank="corpus")),
        ("v1-written-mentions", MentionsRecord("generated", strategy="random", bank="generator")),
    ],
)
def test_each_older_mentions_entry_becomes_its_record(name, record):
    assert GenerationManifest.migrate(fixture(name)).mentions == record


def test_recorded_values_are_kept_and_nothing_is_lost():
    data = fixture("v1-file-mentions")
    manifest = GenerationManifest.migrate(data)
    assert (manifest.dtype, manifest.model_fingerprint, manifest.label_names) == (
        "bfloat16",
        "abc",
        data["label_names"],
    )
    for name in ("v1-written-mentions", "v1-filtered"):
        data = fixture(name)
        again = GenerationManifest.migrate(data).to_dict()
        assert again.pop("format_version") == MANIFEST_VERSION
        assert again == data  # a version-1 folder hf_ecg wrote lately: the same JSON, version added
        assert list(again) == list(data)  # in the same order


def test_a_baseline_folder_has_no_mentions_record_and_keeps_its_key_order():
    data = fixture("v1-baseline")
    manifest = GenerationManifest.migrate(data)
    assert manifest.method == "mention-replacement" and manifest.mentions is None and manifest.dtype is None
    written = manifest.to_dict()
    assert written.pop("format_version") == MANIFEST_VERSION and list(written) == list(data) and written == data


def test_unknown_keys_are_kept_and_a_newer_version_is_refused(tmp_path):
    manifest = GenerationManifest.migrate({**fixture("v1-before-records"), "from_a_plugin": [1, 2]})
    assert manifest.extra == {"from_a_plugin": [1, 2]} and manifest.to_dict()["from_a_plugin"] == [1, 2]
    write_manifest(tmp_path, manifest)
    assert read_manifest(tmp_path) == manifest  # the written version reads back as it was
    (tmp_path / "ecg_generation.json").write_text(json.dumps({**fixture("v1-baseline"), "format_version": 99}))
    with pytest.raises(ValueError, match=f"format version 99; this hf_ecg reads up to {MANIFEST_VERSION}"):
        read_manifest(tmp_path)


def test_run_settings_leave_out_the_results_only():
    manifest = GenerationManifest.migrate(fixture("v1-written-mentions"))
    settings = manifest.run_settings()
    assert "generation_cost" not in settings and "mention_writing" not in settings and "format_version" not in settings
    assert settings["selection"] == fixture("v1-written-mentions")["selection"]  # a filtered folder is no resume
    assert manifest.with_results(mention_sources={"generated": 3}, mention_novelty=None).mention_sources == {
        "generated": 3
    }
