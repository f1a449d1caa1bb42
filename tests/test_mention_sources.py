"""The one resolver of ``mentions=``: every form a user may give resolves to one kind, with the parts that kind
needs, and the manifest's record and the filler agree with it."""

from __future__ import annotations

import pytest

from hf_ecg.data.manifest import MentionsRecord
from hf_ecg.runtime.mention_sources import (
    MENTION_ORIGINS,
    MIXTURE_PARTS,
    MentionLists,
    MentionMixture,
    MentionOrigin,
    MentionSource,
    resolve_mentions,
)
from hf_ecg.runtime.mentions import MentionBank


def test_each_form_resolves_to_its_kind(tmp_path):
    listed = tmp_path / "lists"
    listed.mkdir()
    (listed / "Disease.txt").write_text("fever\n")
    json_file = tmp_path / "mine.json"
    json_file.write_text('{"Disease": ["fever"]}')
    bank = MentionBank.from_lists({"Disease": ["fever"]})
    cases = {
        "random": (MentionSource.BANK, "random"),
        "weighted": (MentionSource.BANK, "weighted"),
        "generated": (MentionSource.GENERATED, "random"),
        str(listed): (MentionSource.LISTS, "random"),
        str(json_file): (MentionSource.FILE, None),
    }
    for mentions, (kind, strategy) in cases.items():
        resolved = resolve_mentions(mentions)
        assert (resolved.kind, resolved.strategy) == (kind, strategy), mentions
    assert resolve_mentions(json_file).path == json_file  # a Path as well as a string
    assert resolve_mentions({"Disease": str(listed / "Disease.txt")}).lists.files == {
        "Disease": str(listed / "Disease.txt")
    }
    assert resolve_mentions(MentionLists(listed, "weighted")).strategy == "weighted"
    user = resolve_mentions({"Disease": ["fever"]})
    assert user.kind is MentionSource.USER and user.given == {"Disease": ["fever"]} and user.bank is None
    assert resolve_mentions(bank).bank is bank
    mixture = MentionMixture({"generated": 1, "bank": 1})
    assert resolve_mentions(mixture).mixture is mixture
    with pytest.raises(ValueError, match="is none of these"):
        resolve_mentions(str(tmp_path / "missing.json"))


def test_the_record_names_the_resolved_kind_and_the_enums_are_their_strings(tmp_path):
    bank = MentionBank.from_lists({"Disease": ["fever"]})
    for mentions in ("random", "weighted", "generated", {"Disease": ["fever"]}, bank):
        record = MentionsRecord.from_mentions(mentions, bank, from_corpus=False)
        assert record.source == resolve_mentions(mentions).kind.value
    origins = ("generated", "bank", "lists", "user", "dictionary", "groups", "sketch")
    assert MENTION_ORIGINS == origins == tuple(o.value for o in MentionOrigin)
    assert set(MIXTURE_PARTS) <= set(MENTION_ORIGINS) and str(MentionSource.LISTS) == "lists"


@pytest.mark.parametrize(
    ("mentions", "says"),
    [
        ({"Disease": [["fever", ""]]}, "an empty word"),
        ({"Disease": [1]}, "give a string, or a list of its words"),
        ({"Disease": [True]}, "give a string, or a list of its words"),
        ({"Disease": [["fever", 2]]}, "a word that is not text"),
    ],
)
def test_a_user_mention_that_is_no_text_or_has_an_empty_word_is_refused_naming_it(mentions, says):
    from hf_ecg.runtime.mentions import MentionBank

    with pytest.raises(ValueError, match=f"of 'Disease' is no mention: .*{says}"):
        MentionBank.from_lists(mentions)
