"""Fair names: group tables, disparate impact, counterfactual swaps, balanced filling and its card, and bad group
files refused in one line with nothing written."""

from __future__ import annotations

import json
import re
from collections import Counter

import pytest
from hypothesis import given
from hypothesis import strategies as st

from hf_ecg.cli import main
from hf_ecg.data.corpus import Corpus, Sentence
from hf_ecg.data.dataset_format import load_data_folder
from hf_ecg.data.groups import Balance, GroupTable, GroupTableError
from hf_ecg.evaluation.fairness import (
    counterfactual_pairs,
    counterfactual_unfairness,
    disparate_impact,
    group_report,
)
from hf_ecg.runtime.tags import Span, replace_mention, tags_to_spans
from hf_ecg.synthetic.balance import deal_groups

GROUPS = "Megan\tfemale\nAnna\tfemale\nJosh\tmale\nmike\tmale\nsteve\tmale\n"


def table(tmp_path, text=GROUPS, entity_type="person"):
    (tmp_path / "groups.tsv").write_text(text, encoding="utf-8")
    return GroupTable.read(entity_type, tmp_path / "groups.tsv")


def sentence(text: str) -> Sentence:
    """``"[Megan] met [Josh Smith] ."``: bracketed words are person mentions."""
    tokens, spans, start = [], [], None
    for word in text.split():
        if word.startswith("["):
            start, word = len(tokens), word[1:]
        end = word.endswith("]")
        tokens.append(word.rstrip("]"))
        if end:
            spans.append(Span(start, len(tokens), "person"))
    return Sentence(tuple(tokens), tuple(spans))


def test_disparate_impact_is_the_hand_count(tmp_path):
    groups = table(tmp_path)
    corpus = Corpus(
        [
            sentence("[Megan] met [Josh Smith] and [MIKE] ."),  # female 1, male 2
            sentence("[steve] called ."),  # male 3
            sentence("[Anna Lee] and [Bob] left ."),  # female 2, Bob unknown
            sentence("no one here ."),
        ],
        name="hand",
    )
    report = group_report(corpus, groups)
    assert report["counts"] == {"female": 2, "male": 3, "unknown": 1} and report["mentions"] == 6
    assert report["disparate_impact"] == pytest.approx(2 / 3) and report["rule_80"] is False
    assert disparate_impact({"female": 4, "male": 5, "unknown": 9}) == pytest.approx(0.8)
    assert disparate_impact({"female": 0, "male": 0, "unknown": 3}) is None


@given(
    st.lists(st.sampled_from(["a", "b", "c", "."]), min_size=1, max_size=8),
    st.data(),
    st.lists(st.sampled_from(["Megan", "Josh", "Anna", "Lee"]), min_size=1, max_size=3),
)
def test_a_swap_changes_only_the_swapped_spans_tokens(words, data, name):
    start = data.draw(st.integers(0, len(words) - 1))
    end = data.draw(st.integers(start + 1, len(words)))
    tags = ["O"] * len(words)
    tags[start:end] = ["B-person", *["I-person"] * (end - start - 1)]
    swapped, new_tags = replace_mention(words, tags, Span(start, end, "person"), name)
    assert swapped[:start] == words[:start] and swapped[start + len(name) :] == words[end:]
    assert swapped[start : start + len(name)] == name
    assert new_tags[:start] == tags[:start] and new_tags[start + len(name) :] == tags[end:]
    assert [(s.start, s.end) for s in tags_to_spans(new_tags, "IOB2")[0]] == [(start, start + len(name))]


class _ByWords:
    """A stand-in tagger: ``Paris`` is a place, and, when ``biased``, only after a male name."""

    def __init__(self, biased: bool) -> None:
        self.biased = biased

    def predict(self, sentences):
        out = []
        for tokens in sentences:
            male = any(t in ("Josh", "mike", "steve") for t in tokens)
            out.append(["B-loc" if t == "Paris" and (male or not self.biased) else "O" for t in tokens])
        return out


def test_the_counterfactual_score_counts_samples_whose_other_entities_change(tmp_path):
    groups = table(tmp_path)
    corpus = Corpus([sentence("[Josh] flew to Paris ."), sentence("[Megan Fox] flew to Paris ."), sentence("no one .")])
    pairs = counterfactual_pairs(corpus, groups, seed=0)
    assert [i for i, *_ in pairs] == [0, 1]  # a sample without a known mention is not swapped
    for i, tokens, old, new in pairs:
        assert groups.group_of(tokens[new.start : new.end]) != groups.group_of(corpus[i].tokens[old.start : old.end])
    assert counterfactual_unfairness(_ByWords(biased=False), corpus, groups)["unfairness"] == 0
    biased = counterfactual_unfairness(_ByWords(biased=True), corpus, groups)
    assert biased == {"samples": 2, "changed": 2, "unfairness": 1.0}  # Paris found or lost with the name


@given(st.integers(0, 300), st.lists(st.integers(1, 9), min_size=2, max_size=4))
def test_dealt_groups_keep_every_prefix_within_one_of_its_share(count, weights):
    shares = {f"g{i}": w / sum(weights) for i, w in enumerate(weights)}
    dealt = deal_groups(count, shares)
    seen = Counter()
    for k, group in enumerate(dealt, 1):
        seen[group] += 1
        assert all(abs(seen[g] - shares[g] * k) <= 1 for g in shares)


def test_generate_balance_reaches_the_shares_asked_and_the_card_shows_gold_beside_the_set(tmp_path, model_dir, capsys):
    from hf_ecg.data.dataset_format import load_data_folder
    from hf_ecg.data.manifest import read_manifest

    (tmp_path / "groups.tsv").write_text("fever\tA\nheadache\tA\nsevere pain\tB\nmigraine\tB\n")
    out = tmp_path / "set"
    argv = ["generate", "--model", str(model_dir), "-n", "24", "-o", str(out), "--entities", "Disease,Chemical,Disease"]
    argv += [
        "--max-block-tokens",
        "4",
        "--mentions",
        "random",
        "--balance",
        f"Disease={tmp_path / 'groups.tsv'}:A=3,B=1",
    ]
    assert main(argv) == 0
    assert "balanced Disease mentions: A 36 (gold 1), B 12 (gold 1)" in capsys.readouterr().out
    rows = load_data_folder(out)
    names = rows.features["ner_tags"].feature.names
    groups = GroupTable.read("Disease", tmp_path / "groups.tsv")
    mentions = [
        tuple(row["tokens"][s.start : s.end])
        for row in rows
        for s in tags_to_spans([names[k] for k in row["ner_tags"]], "IOB2")[0]
        if s.label == "Disease"
    ]
    counts = groups.counts(mentions)
    assert counts == {"A": 36, "B": 12, "unknown": 0}  # 48 Disease mentions, 3 to 1
    for row in rows:  # the text and spans follow the new tokens
        assert row["text"] == " ".join(row["tokens"])
        assert all(row["text"][s["start"] : s["end"]] for s in row["spans"])
    manifest = read_manifest(out)
    assert manifest.balance["asked"] == {"A": 0.75, "B": 0.25}
    assert manifest.balance_reached["set"] == {"A": 36, "B": 12, "unknown": 0}
    assert manifest.balance_reached["gold"] == {"A": 1, "B": 1, "unknown": 0}  # the bank: fever, severe pain
    card = (out / "README.md").read_text()
    assert "## Fairness" in card and "| A | 1 | 36 |" in card and "| **disparate impact** | 1.00 | 0.33 |" in card
    assert "does not hold for this set and holds for gold" in card
    assert main(argv) == 0  # the finished folder rerun: the same settings, nothing refused


def test_a_group_table_s_header_row_is_no_name_and_its_groups_are_compared_case_aside(tmp_path):
    (tmp_path / "groups.tsv").write_text("Name\tGroup\nMegan\tfemale\nAnna\tFemale\nJohn\tmale\n")
    table = GroupTable.read("person", tmp_path / "groups.tsv")
    assert table.names == {"female": (("Megan",), ("Anna",)), "male": (("John",),)}
    assert table.group_of(["name"]) is None


def test_a_balanced_run_killed_while_it_balances_is_no_dataset_and_resumes_to_the_whole_one(tmp_path, model_dir):
    """The balance rewrites the shards while they are unfinished: a run killed after one balanced shard is on disk
    leaves a folder no reader takes, and the same command again writes what a run never killed writes."""
    import subprocess
    import sys
    import textwrap

    import datasets

    (tmp_path / "groups.tsv").write_text("fever\tA\nheadache\tA\nsevere pain\tB\nmigraine\tB\n")

    def argv(out):
        options = ["--entities", "Disease,Chemical", "--max-block-tokens", "4", "--mentions", "random"]
        balance = ["--balance", f"Disease={tmp_path / 'groups.tsv'}:A=3,B=1"]
        return [
            "generate",
            "--model",
            str(model_dir),
            "-n",
            "12",
            "-o",
            str(out),
            "--samples-per-shard",
            "4",
            *options,
            *balance,
        ]

    whole, killed = tmp_path / "whole", tmp_path / "killed"
    assert main(argv(whole)) == 0
    driver = textwrap.dedent(f"""
        import os, signal, sys
        import hf_ecg.synthetic.balance as balance
        real, replaced = os.replace, []
        def replace_then_die(source, target):
            real(source, target)
            if ".tmp-balance-" in str(source):
                replaced.append(1)
                if len(replaced) == 2:
                    os.kill(os.getpid(), signal.SIGKILL)
        balance.os.replace = replace_then_die
        from hf_ecg.cli import main
        sys.exit(main({argv(killed)!r}))
    """)
    result = subprocess.run([sys.executable, "-c", driver], capture_output=True, text=True, cwd=tmp_path)
    assert result.returncode == -9, result.stderr[-2000:]
    assert (killed / "unfinished").is_dir() and not (killed / "data").exists()
    with pytest.raises(datasets.exceptions.DataFilesNotFoundError):
        datasets.load_dataset(str(killed), split="train")  # half balanced is no dataset
    assert main(argv(killed)) == 0  # the same command again
    shards = sorted(p.name for p in (whole / "data").glob("*.parquet"))
    assert shards == sorted(p.name for p in (killed / "data").glob("*.parquet")) and len(shards) == 3
    for name in shards:
        assert (killed / "data" / name).read_bytes() == (whole / "data" / name).read_bytes()
    manifest = json.loads((killed / "ecg_generation.json").read_text())
    assert manifest["balance_reached"] == json.loads((whole / "ecg_generation.json").read_text())["balance_reached"]
    assert {o for row in load_data_folder(killed) for o in row["mention_sources"]} == {"groups", "bank"}


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"", "groups.tsv: the file is empty"),
        (b"Megan\tfemale\nAnna\n", "groups.tsv:2: expected a name, a tab and its group"),
        (b"Megan\tfemale\nmegan\tmale\n", "groups.tsv:2: 'megan' is in group 'male' here and in 'female' on line 1"),
        (b"Megan\tfemale\n--\tmale\n", "groups.tsv:2: '--' is no name"),
        (b"Megan\tfemale\n\xff\tmale\n", "groups.tsv:2: not utf-8 text"),
        (b"Megan\x00\tfemale\n", "groups.tsv:1: holds U+0000"),
        (b"Megan\tfemale\t0.9\nJohn\tmale\t0.8\n", "groups.tsv:1: 3 columns; a group table has two"),
        (b"name\tgroup\nMegan\tfemale\nAnna\tFemale\n", "a table needs two groups"),
        (b"Megan\tfemale\nAnna\tfemale\n", "a table needs two groups"),
    ],
)
def test_bad_group_files_are_refused_in_one_line_with_nothing_written(tmp_path, model_dir, capsys, content, message):
    (tmp_path / "groups.tsv").write_bytes(content)
    with pytest.raises(GroupTableError, match=re.escape(message.split(": ", 1)[-1][:20])):
        GroupTable.read("Disease", tmp_path / "groups.tsv")
    out, report = tmp_path / "set", tmp_path / "report.json"
    argv = [
        "generate",
        "--model",
        str(model_dir),
        "-n",
        "2",
        "-o",
        str(out),
        "--balance",
        f"Disease={tmp_path / 'groups.tsv'}",
    ]
    assert main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and message in err[0] and not out.exists()
    argv = ["evaluate", "fairness", "--data", str(model_dir), "--groups", f"Disease={tmp_path / 'groups.tsv'}"]
    assert main([*argv, "-o", str(report)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and message in err[0] and not report.exists()


def test_a_balance_type_the_model_does_not_write_is_refused_before_anything_is_written(tmp_path, model_dir, capsys):
    (tmp_path / "groups.tsv").write_text(GROUPS)
    out = tmp_path / "set"
    argv = [
        "generate",
        "--model",
        str(model_dir),
        "-n",
        "2",
        "-o",
        str(out),
        "--balance",
        f"person={tmp_path / 'groups.tsv'}",
    ]
    assert main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "the generator does not write person" in err[0] and not out.exists()
    assert main([*argv, "--balance", f"person={tmp_path / 'groups.tsv'}"]) == 2  # a second balance: refused, not lost
    assert "--balance is given 2 times" in capsys.readouterr().err and not out.exists()
    refused = {
        "female=2,nobody=1": "'nobody' is none of female, male",
        "female=nan,male=1": "the share of 'female' must be a positive number, got 'nan'",
        "female=inf,male=1": "the share of 'female' must be a positive number, got 'inf'",
        "female=1e308,male=1e308": "too large to add up",
        "female=1,female=2,male=1": "two shares for 'female'",
    }
    for shares, said in refused.items():
        with pytest.raises(GroupTableError, match=re.escape(said)):
            Balance.read(f"person={tmp_path / 'groups.tsv'}:{shares}")
    assert Balance.read(f"person={tmp_path / 'groups.tsv'}:female=3,male=1").asked == {"female": 0.75, "male": 0.25}
    table = GroupTable.read("person", tmp_path / "groups.tsv")
    for shares in ({"female": float("nan")}, {"female": 1e308, "male": 1e308}, {"nobody": 1.0}, {}):
        with pytest.raises(GroupTableError):
            Balance(table, shares)


def test_evaluate_fairness_reports_gold_beside_the_set(tmp_path, capsys):
    import json

    (tmp_path / "groups.tsv").write_text(GROUPS)
    data = tmp_path / "set.tsv"
    data.write_text("Megan\tB-person\nleft\tO\n\nJosh\tB-person\ncame\tO\n\nmike\tB-person\nsang\tO\n")
    gold = tmp_path / "gold.tsv"
    gold.write_text("Anna\tB-person\nran\tO\n\nsteve\tB-person\nsat\tO\n")
    argv = ["evaluate", "fairness", "--data", str(data), "--groups", f"person={tmp_path / 'groups.tsv'}"]
    assert main([*argv, "--gold", str(gold), "--no-counterfactual"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["data"]["counts"] == {"female": 1, "male": 2, "unknown": 0}
    assert report["gold"]["counts"] == {"female": 1, "male": 1, "unknown": 0} and report["gold"]["rule_80"] is True
    assert report["data"]["disparate_impact"] == 0.5 and report["counterfactual"] is None
