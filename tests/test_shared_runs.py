"""What a sample shares with the user's text: the longest run across its mentions, whole sentences, ROUGE-L."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from hf_ecg.selection.shared_runs import SharedRun, SharedRunIndex, run_distribution

WORDS = st.sampled_from(["the", "The", "patients", "with", "fever", "were", "given", "aspirin", ".", "of", "a"])


def elements(tokens, masked, width):
    """The sample as words and slots (a run of masked tokens is one slot of at least ``width`` words)."""
    out, i = [], 0
    while i < len(tokens):
        if not masked[i]:
            out.append(tokens[i].casefold())
            i += 1
            continue
        j = i
        while j < len(tokens) and masked[j]:
            j += 1
        out.append(max(width, j - i))
        i = j
    return out


def matches(parts, sentence, at, whole):
    """Whether ``parts`` (words and slot widths) match ``sentence`` from ``at`` on (to its end when ``whole``)."""
    if not parts:
        return not whole or at == len(sentence)
    first = parts[0]
    if isinstance(first, str):
        return at < len(sentence) and sentence[at] == first and matches(parts[1:], sentence, at + 1, whole)
    return any(matches(parts[1:], sentence, at + w, whole) for w in range(first + 1) if at + w <= len(sentence))


def brute_force(tokens, masked, sentences, width=6):
    """The longest run (words counted, each slot standing for 0 to its width words), whether the sample is a whole
    sentence (its words at least half of it), and the highest ROUGE-L, case aside, by trying everything."""
    from hf_ecg.evaluation.quality import rouge_l

    parts = elements(tokens, masked, width)
    folded = [[t.casefold() for t in s] for s in sentences]
    best = 0
    for a in range(len(parts)):
        for b in range(a + 1, len(parts) + 1):
            words = sum(isinstance(p, str) for p in parts[a:b])
            if words > best and any(matches(parts[a:b], s, i, False) for s in folded for i in range(len(s) + 1)):
                best = words
    words = sum(isinstance(p, str) for p in parts)
    whole = words >= 2 and any(len(s) <= 2 * words and matches(parts, s, 0, True) for s in folded)
    rouge = max(rouge_l([t.casefold() for t in tokens], s) for s in folded)
    return best, whole, rouge


@given(
    sentences=st.lists(st.lists(WORDS, min_size=1, max_size=10), min_size=1, max_size=5),
    tokens=st.lists(WORDS, min_size=1, max_size=10),
    data=st.data(),
)
def test_what_a_sample_shares_is_what_trying_everything_finds(sentences, tokens, data):
    masked = data.draw(st.lists(st.booleans(), min_size=len(tokens), max_size=len(tokens)))
    run = SharedRunIndex(sentences, max_slot_tokens=2).compare(tokens, masked)
    length, whole, rouge = brute_force(tokens, masked, sentences, width=2)
    assert (run.length, run.whole) == (length, whole)
    assert abs(run.rouge_l - rouge) < 1e-9
    if run.length:  # the sentence named holds the run
        assert brute_force(tokens, masked, [sentences[run.sentence]], width=2)[0] == run.length
    else:
        assert run.sentence is None


def test_a_planted_copy_is_found_whatever_names_it_holds():
    private = [
        "The patient was admitted with severe chest pain after three days of fever and cough .".split(),
        "No effect was seen .".split(),
    ]
    index = SharedRunIndex(private * 500)  # the index's size does not change the answer
    copied = "After lunch the patient was admitted with severe chest pain after three days of rest .".split()
    run = index.compare(copied)
    assert run.length == 12 and run.sentence % 2 == 0 and run.rouge_l > 0.8
    # a name in the middle stands for the words it covers: the run goes on across it
    masked = [token in ("chest", "pain") for token in copied]
    assert index.compare(copied, masked).length == 10
    # the sentence copied whole with another name in place of "fever": a whole sentence, whatever its length
    swapped = "The patient was admitted with severe chest pain after three days of malaria and cough .".split()
    run = index.compare(swapped, [token == "malaria" for token in swapped])
    assert run.whole and run.length == 15
    assert index.compare("Nothing here resembles it at all .".split()).length == 1  # "."


def test_the_distribution_counts_each_length_and_those_under_k():
    runs = [SharedRun(0, None), SharedRun(5, 1), SharedRun(5, 2), SharedRun(9, 0)]
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
