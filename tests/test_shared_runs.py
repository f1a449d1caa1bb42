"""The longest run of tokens a sample shares with the user's text, outside its entity mentions."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from hf_ecg.synthetic.shared_runs import SharedRun, SharedRunIndex, run_distribution

WORDS = st.sampled_from(["the", "The", "patients", "with", "fever", "were", "given", "aspirin", ".", "of", "a"])


def brute_force(tokens, masked, sentences) -> int:
    """The longest run of ``tokens`` outside ``masked`` that a sentence holds, case aside, by trying every one."""
    best = 0
    folded = [[t.casefold() for t in s] for s in sentences]
    for i in range(len(tokens)):
        for j in range(i + 1, len(tokens) + 1):
            if any(masked[i:j]):
                break
            run = [t.casefold() for t in tokens[i:j]]
            if any(run == s[a : a + len(run)] for s in folded for a in range(len(s) - len(run) + 1)):
                best = max(best, j - i)
    return best


@given(
    sentences=st.lists(st.lists(WORDS, min_size=1, max_size=12), min_size=1, max_size=6),
    tokens=st.lists(WORDS, min_size=1, max_size=14),
    data=st.data(),
    k=st.integers(1, 5),
)
def test_the_longest_run_is_what_trying_every_run_finds(sentences, tokens, data, k):
    masked = data.draw(st.lists(st.booleans(), min_size=len(tokens), max_size=len(tokens)))
    run = SharedRunIndex(sentences, k=k).longest_run(tokens, masked)
    expected = brute_force(tokens, masked, sentences)
    assert run.length == (expected if expected >= k else 0)
    if run.length:
        held = [t.casefold() for t in sentences[run.sentence]]
        assert any(
            [t.casefold() for t in tokens[i : i + run.length]] == held[a : a + run.length]
            for i in range(len(tokens))
            for a in range(len(held))
        )
        assert 0.0 < run.rouge_l <= 1.0
    else:
        assert run == SharedRun(0, None, 0.0)


def test_a_planted_copy_is_found_and_its_names_break_the_run():
    private = [
        "The patient was admitted with severe chest pain after three days of fever and cough .".split(),
        "No effect was seen .".split(),
    ]
    index = SharedRunIndex(private * 500)  # the index's size does not change the answer
    copied = "After lunch the patient was admitted with severe chest pain after three days of rest .".split()
    run = index.longest_run(copied)
    assert run.length == 12 and run.sentence % 2 == 0 and run.rouge_l > 0.7
    # the same words with a slot name in the middle: the run stops at the name
    masked = [token == "chest" for token in copied]
    assert index.longest_run(copied, masked).length == 6  # "the patient was admitted with severe"
    assert index.longest_run("Nothing here resembles it at all .".split()).length == 0


def test_the_distribution_counts_each_length_and_those_under_k():
    runs = [SharedRun(0, None, 0.0), SharedRun(5, 1, 0.5), SharedRun(5, 2, 0.4), SharedRun(9, 0, 0.9)]
    assert run_distribution(runs, 4) == {"<4": 1, "5": 2, "9": 1}


def test_filter_text_copy_drops_a_planted_copy_and_reports_every_sample_s_run(tmp_path, capsys):
    import json

    import datasets

    from hf_ecg.cli import main
    from tiny import save_tiny_ecg_model, toy_corpus

    gold = toy_corpus(tmp_path / "gold.tsv", repeat=2)
    generated = tmp_path / "set"
    model = save_tiny_ecg_model(tmp_path / "ecg")
    assert main(["generate", "--model", str(model), "-n", "8", "-o", str(generated), "--max-block-tokens", "6"]) == 0
    rows = datasets.load_dataset(str(generated), split="train")
    names = rows.features["ner_tags"].feature.names

    # the sample with the longest stretch of words outside its entities, copied into the "private" text
    def stretch(row):
        best = run = 0
        for tag in row["ner_tags"]:
            run = run + 1 if names[tag] == "O" else 0
            best = max(best, run)
        return best

    planted = max(rows, key=stretch)
    assert stretch(planted) >= 3
    private = tmp_path / "private.txt"
    private.write_text("No effect was seen .\n" + " ".join(planted["tokens"]) + "\n", encoding="utf-8")
    kept_dir = tmp_path / "shareable"
    argv = ["filter", "--generated", str(generated), "--gold", str(gold), "--rule", "text-copy"]
    assert main([*argv, "--max-shared-run", "3", "-o", str(kept_dir)]) == 2  # the text is needed
    assert "--rule text-copy needs --unlabelled TEXT" in capsys.readouterr().err
    assert not kept_dir.exists()
    assert main([*argv, "--unlabelled", str(private), "--max-shared-run", "3", "-o", str(kept_dir)]) == 0
    kept_ids = datasets.load_dataset(str(kept_dir), split="train")["id"]
    assert planted["id"] not in kept_ids
    record = json.loads((kept_dir / "ecg_generation.json").read_text())["selection"]
    runs = record["shared_runs"]
    assert runs["max_shared_run"] == 3 and runs["text_sentences"] == 2
    assert sum(runs["longest_run"].values()) == 8 and record["dropped"]["text-copy"] == 8 - len(kept_ids)
    assert all(key == "<3" or int(key) >= 3 for key in runs["longest_run"])
    assert "Copies of your text (`text-copy`)" in (kept_dir / "README.md").read_text()


def test_generate_refuses_text_copy_without_the_text_before_writing(tmp_path, capsys):
    from hf_ecg.cli import main
    from tiny import save_tiny_ecg_model, toy_corpus

    model, out = save_tiny_ecg_model(tmp_path / "ecg"), tmp_path / "set"
    argv = ["generate", "--model", str(model), "-n", "4", "-o", str(out), "--gold", str(toy_corpus(tmp_path / "g.tsv"))]
    assert main([*argv, "--filter", "text-copy"]) == 2
    assert "--filter text-copy needs --unlabelled TEXT" in capsys.readouterr().err
    assert not out.exists() and not (tmp_path / "set-unfiltered").exists()


def test_generate_shareable_leaves_the_text_out_and_checks_every_sample(tmp_path, capsys):
    import json

    from hf_ecg.cli import main
    from tiny import save_tiny_ecg_model, toy_corpus

    gold = toy_corpus(tmp_path / "gold.tsv", repeat=2)
    (tmp_path / "dictionary").mkdir()
    (tmp_path / "dictionary" / "Chemical.txt").write_text("Aspirin\nparacetamol\n", encoding="utf-8")
    (tmp_path / "dictionary" / "Disease.txt").write_text("fever\nheadache\n", encoding="utf-8")
    text = tmp_path / "private.txt"
    text.write_text("Patients with fever took paracetamol .\nAspirin cures headache .\n", encoding="utf-8")
    out = tmp_path / "shareable"
    argv = [
        "generate", "--model", str(save_tiny_ecg_model(tmp_path / "ecg")), "-n", "6", "-o", str(out),
        "--max-block-tokens", "6", "--dictionary", str(tmp_path / "dictionary"), "--gold", str(gold), "--shareable",
    ]  # fmt: skip
    for extra, says in (
        ([], "--shareable checks every sample against your text"),
        (["--unlabelled", str(text), "--silver"], "--shareable leaves your text out of the set"),
    ):
        assert main([*argv, *extra]) == 2
        assert says in capsys.readouterr().err
        assert not out.exists() and not (tmp_path / "shareable-unfiltered").exists()
    assert main([*argv, "--unlabelled", str(text), "--max-shared-run", "4"]) == 0
    assert "holds every sample before the text-copy check: keep it private" in capsys.readouterr().err
    assert not (out / "silver").exists() and not (tmp_path / "shareable-unfiltered" / "silver").exists()
    manifest = json.loads((out / "ecg_generation.json").read_text())
    assert manifest.get("silver") is None
    selection = manifest["selection"]
    assert selection["config"]["rules"] == ["text-copy"] and selection["shared_runs"]["text_sentences"] == 2
    assert sum(selection["shared_runs"]["longest_run"].values()) == 6
    # the samples before the check name their checked set: push-dataset refuses them, publishes the checked one
    raw = tmp_path / "shareable-unfiltered"
    assert json.loads((raw / "ecg_generation.json").read_text())["checked_set"] == str(out)
    assert "checked_set" not in manifest
    refused = tmp_path / "refused"
    assert main(["push-dataset", "--data", str(raw), "--repo-id", "me/set", "--local-dir", str(refused)]) == 2
    assert f"publish {out}, the checked set" in capsys.readouterr().err
    assert not refused.exists()
    assert main(["push-dataset", "--data", str(out), "--repo-id", "me/set", "--local-dir", str(tmp_path / "hub")]) == 0
    # a rerun that finds the checked set done still marks a source that lost its mark (regenerated, say)
    unmarked = json.loads((raw / "ecg_generation.json").read_text())
    del unmarked["checked_set"]
    (raw / "ecg_generation.json").write_text(json.dumps(unmarked), encoding="utf-8")
    assert main([*argv, "--unlabelled", str(text), "--max-shared-run", "4"]) == 0
    assert json.loads((raw / "ecg_generation.json").read_text())["checked_set"] == str(out)
