"""Training twice: the generator's whole own sentences added to the gold sentences as templates only."""

from __future__ import annotations

import json
from dataclasses import replace

import datasets
import pytest
from hypothesis import given
from hypothesis import strategies as st

from hf_ecg.cli import main
from hf_ecg.data.builder import ECGBlocksBuilder
from hf_ecg.data.corpus import load_corpus
from hf_ecg.data.outputs import MODEL, OWN_SENTENCES_DIR
from hf_ecg.hub import training_record
from hf_ecg.hub.model_card import ECGModelCardData
from hf_ecg.hub.training_record import own_sentence_count
from hf_ecg.modeling import model_fingerprint
from hf_ecg.runtime.ecg_config import ECGConfig
from hf_ecg.training import own_sentences
from hf_ecg.training import train as train_module
from hf_ecg.training.own_sentences import failed_check, write_own_sentences
from hf_ecg.training.train import hold_out_sentences, train_ecg_model
from hf_ecg.training.training_args import ECGTrainingArguments
from tiny import save_tiny_model, toy_corpus

#: The library's threshold (tests train once by default: conftest.train_once_by_default sets it to 0).
MAX_CORPUS = training_record.OWN_SENTENCES_MAX_CORPUS
OWN = 24
STEPS = 400


@given(sentences=st.integers(1, 3000), requested=st.none() | st.integers(0, 5000))
def test_the_default_writes_twice_the_corpus_and_at_least_400_for_small_corpora_only(sentences, requested):
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(training_record, "OWN_SENTENCES_MAX_CORPUS", MAX_CORPUS)
        count = own_sentence_count(sentences, requested)
    if requested is not None:
        assert count == requested
    elif sentences >= MAX_CORPUS:
        assert count == 0
    else:
        assert count >= 2 * sentences and count >= 400 and count == max(2 * sentences, 400)


def test_a_trial_trains_once_unless_own_sentences_are_asked_for():
    """`hf-ecg train --max-steps 4` on 45 sentences is a quick try: it trained twice, writing 400 sentences."""
    assert own_sentence_count(45, None, trial=True) == 0
    assert own_sentence_count(45, 10, trial=True) == 10  # asked for explicitly: trained twice
    assert train_module.is_trial(ECGTrainingArguments(output_dir="o", max_steps=4))
    assert train_module.is_trial(ECGTrainingArguments(output_dir="o", num_train_epochs=0.5))
    assert not train_module.is_trial(ECGTrainingArguments(output_dir="o"))
    args = ECGTrainingArguments(output_dir="o", max_steps=4)
    assert train_module.training_plan(45, 160, args, 0) == "training once on 45 sentences: 4 steps (--max-steps)"
    plan = train_module.training_plan(45, 160, ECGTrainingArguments(output_dir="o"), 400)
    assert plan.startswith("training twice on 45 sentences: about 60 steps (3 epochs of 160 rows)")
    assert "--own-sentences 0 trains once" in plan


def test_train_max_steps_on_a_small_corpus_trains_once_and_says_so(tmp_path, capsys):
    data = toy_corpus(tmp_path / "toy.tsv", repeat=2)
    base = save_tiny_model(tmp_path / "base")
    argv = ["train", "--data", str(data), "--model", str(base), "-o", str(tmp_path / "m"), "--max-steps", "4"]
    assert main([*argv, "--use_cpu", "true", "--save_strategy", "no"]) == 0
    out = capsys.readouterr().out
    assert "hf-ecg train: training once on" in out and "4 steps (--max-steps)" in out
    assert not (tmp_path / "m" / OWN_SENTENCES_DIR).exists() and "trained it again" not in out


def test_the_defaults_train_twice_below_the_threshold_only(monkeypatch):
    monkeypatch.setattr(training_record, "OWN_SENTENCES_MAX_CORPUS", MAX_CORPUS)
    assert own_sentence_count(45, None) == 400 and own_sentence_count(300, None) == 600
    assert own_sentence_count(744, None) == 0 and own_sentence_count(186, 0) == 0
    with pytest.raises(ValueError, match="own_sentences must be >= 0"):
        ECGTrainingArguments(output_dir="o", own_sentences=-1)


def arguments(output_dir, own: int | None) -> ECGTrainingArguments:
    """A tiny GPT-2 trained on the toy corpus long enough to write whole sentences, with a held-out split."""
    return ECGTrainingArguments(
        output_dir=str(output_dir),
        lora=False,
        max_steps=STEPS,
        learning_rate=5e-3,
        per_device_train_batch_size=8,
        use_cpu=True,
        eval_strategy="steps",
        eval_steps=STEPS,
        disable_tqdm=True,
        seed=3,
        own_sentences=own,
        report_to=[],
    )


@pytest.fixture(scope="module")
def trained_twice(tmp_path_factory):
    root = tmp_path_factory.mktemp("twice")
    data = toy_corpus(root / "toy.tsv", repeat=8)  # 32 sentences, 3 held out
    trainer = train_ecg_model(data, str(save_tiny_model(root / "base")), arguments(root / "model", OWN))
    return root, data, trainer


def test_the_second_training_adds_the_whole_own_sentences_as_templates(trained_twice):
    root, data, trainer = trained_twice
    model = root / "model"
    gold = load_corpus(str(data))
    record = trainer.model_card_data.own_sentences
    assert record["written"] == OWN and 0 < record["kept"] <= OWN
    assert record["kept"] + sum(record["dropped"].values()) == OWN

    written = datasets.load_dataset(str(model / OWN_SENTENCES_DIR), split="train")
    assert written.num_rows == OWN
    whole = [
        row for row in written if row["complete"] and not (row["forced_tags"] or row["cut_blocks"] or row["tag_pieces"])
    ]
    assert record["kept"] <= len(whole)
    # The sentences kept, as the second training read them: none is a gold sentence, each is one sentence that ends
    # as gold ones do.
    kept = write_own_sentences(model, gold, OWN, seed=3, progress_bar=False)  # the finished folder, read again
    assert len(kept.corpus) == record["kept"] and kept.dropped == record["dropped"]
    gold_tokens = {s.tokens for s in gold}
    for sentence in kept.corpus:
        assert sentence.tokens not in gold_tokens and sentence.tokens[-1] == "." and "." not in sentence.tokens[:-1]
    # Templates only: one block per entity and one for the end, no mention samples.
    assert record["blocks"] == sum(len(s.spans) + 1 for s in kept.corpus)
    gold_blocks = ECGBlocksBuilder(
        data_files={"train": str(data)}, mention_samples=True, cache_dir=str(root / "blocks")
    )
    gold_blocks.download_and_prepare()
    held_out = hold_out_sentences(gold_blocks.as_dataset(), 32, 0.1, seed=3)
    assert len(trainer.train_dataset) == len(held_out["train"]) + record["blocks"]
    # The held-out split, the rules' statistics and the mention bank are the gold sentences' alone.
    assert len(trainer.eval_dataset) == len(held_out["validation"])
    config = ECGConfig.load(model)
    assert config.corpus_statistics["num_sentences"] == 32 and config.sentence_endings == ["."]
    assert {m["mention"] for m in config.mention_bank["Chemical"]} == {"Aspirin", "Ibuprofen", "paracetamol"}
    assert record["first_best_eval_loss"] is not None and record["first_steps"] == STEPS
    assert f"After the first training it wrote {OWN} sentences" in (model / "README.md").read_text()
    assert MODEL.foreign(model) == []  # hf_ecg's own folder: --overwrite may replace it, nothing else is in it


def test_resuming_after_the_first_training_writes_and_trains_the_second_only(tmp_path, capsys):
    data = toy_corpus(tmp_path / "toy.tsv", repeat=8)
    base = save_tiny_model(tmp_path / "base")
    model = tmp_path / "model"
    once = train_ecg_model(data, str(base), arguments(model, 0))
    assert once.model_card_data.own_sentences is None and not (model / OWN_SENTENCES_DIR).exists()
    first = model_fingerprint(str(model))
    argv = ["train", "--data", str(data), "--model", str(base), "-o", str(model), "--resume"]
    argv += ["--own-sentences", str(OWN), "--no-lora", "--max-steps", str(STEPS), "--learning-rate", "5e-3"]
    argv += ["--seed", "3", "--use_cpu", "true", "--eval_strategy", "steps", "--eval_steps", str(STEPS)]
    assert main(argv) == 0
    out = capsys.readouterr().out
    written = json.loads((model / OWN_SENTENCES_DIR / "ecg_generation.json").read_text())
    assert written["model_fingerprint"] == first  # written by the first training's model, not a new one
    card = ECGModelCardData.load(model)
    assert card.own_sentences["first_steps"] == STEPS and card.total_steps == STEPS
    assert f"wrote {OWN} sentences with it ({model}/{OWN_SENTENCES_DIR}/)" in out
    assert f"trained it again with the {card.own_sentences['kept']} whole ones" in out


clause = st.lists(st.sampled_from(["a", "b", "(", ",", "i", "p", "TET"]), min_size=1, max_size=12)


@given(first=clause, second=clause, refused=st.integers(0, 3))
def test_a_second_sentence_of_any_kind_or_a_refused_redraw_fails(first, second, refused):
    endings = {".", "!"}
    one = [*first, "."]
    assert failed_check(one, refused, endings) == ("refused-redraw" if refused else None)
    for ending in endings:  # a lower-case run-on (`... . icine ...`) as much as a capital one
        two = [*first, ending, *second, "."]
        assert failed_check(two, refused, endings) == ("refused-redraw" if refused else "second-sentence")


def test_words_spelt_from_a_bare_space_as_no_gold_word_is_are_odd(tmp_path):
    from tiny import tiny_tokenizer

    tokenizer = tiny_tokenizer()  # byte-level BPE: " Aspirin" is the bare space, then "Aspirin"
    assert tokenizer.tokenize(" Aspirin")[0] == tokenizer.tokenize(" ")[0] != tokenizer.tokenize(" cures")[0]
    gold = load_corpus(str(toy_corpus(tmp_path / "toy.tsv")))
    words = ["Aspirin", "cures", "5", "12", "xyzq", "qq"]
    odd = own_sentences.bare_space_words(words, (s.tokens for s in gold), tokenizer)
    assert odd == {"xyzq", "qq"}  # gold's own spelling, a merged word and numbers are not odd
    assert failed_check(["a", "qq", "."], 0, {"."}, odd) == "odd-word"
    assert failed_check(["Aspirin", "cures", "12", "."], 0, {"."}, odd) is None


def test_a_second_sentence_is_one_after_a_full_stop_not_after_any_ending():
    assert own_sentences.full_stops([")", "."]) == {"."}  # JNLPBA: a `)` ends a sentence now and then
    assert own_sentences.full_stops(["。"]) == {"。"} and own_sentences.full_stops([]) == {".", "!", "?"}
    assert failed_check(["a", "(", "b", ")", "c", "."], 0, own_sentences.full_stops([")", "."])) is None


def test_resuming_when_no_own_sentence_passes_keeps_the_first_generator(tmp_path, monkeypatch, caplog):
    data = toy_corpus(tmp_path / "toy.tsv", repeat=8)
    model = tmp_path / "model"
    train_ecg_model(data, str(save_tiny_model(tmp_path / "base")), arguments(model, 0))
    first = model_fingerprint(str(model))
    monkeypatch.setattr(own_sentences, "failed_check", lambda *args: "second-sentence")  # none passes
    trainer = train_ecg_model(data, str(tmp_path / "base"), arguments(model, OWN), resume=True)
    assert "none of the 24 sentences the generator wrote passed the rules" in caplog.text
    # What it returns is the first generator as saved: saving it again (a push saves first) changes no weight.
    assert trainer.model_card_data.total_steps == STEPS == trainer.state.global_step
    assert trainer.model_card_data.own_sentences is None
    trainer.save_model()
    assert model_fingerprint(str(model)) == first


def test_resume_refuses_other_data_base_model_or_lora_and_a_finished_training(tmp_path, capsys):
    """A run killed at a checkpoint and resumed with another corpus saved the first corpus's weights under the
    second's card; a finished one resumed rewrote its card. Each is refused in one line, the folder untouched."""
    from hf_ecg.data.outputs import TRAINING_RECORD

    data = toy_corpus(tmp_path / "toy.tsv", repeat=8)
    other = toy_corpus(tmp_path / "other.tsv", repeat=9)
    base = save_tiny_model(tmp_path / "base")
    model = tmp_path / "model"
    train_ecg_model(data, str(base), arguments(model, 0))
    record = json.loads((model / TRAINING_RECORD).read_text())
    assert record["finished"] is True and record["fingerprint"]["lora"] is False
    argv = ["train", "--data", str(data), "--model", str(base), "-o", str(model), "--resume", "--own-sentences", "0"]
    argv += ["--no-lora", "--max-steps", str(STEPS), "--learning-rate", "5e-3", "--seed", "3"]
    argv += ["--per-device-train-batch-size", "8", "--use_cpu", "true"]
    before = {path: path.read_bytes() for path in model.rglob("*") if path.is_file()}
    assert main(argv) == 2
    assert "holds a finished training: there is nothing to resume" in capsys.readouterr().err
    # an interrupted training (the record says so) resumed with other data, another base model, LoRA
    (model / TRAINING_RECORD).write_text(json.dumps({**record, "finished": False}))
    before[model / TRAINING_RECORD] = (model / TRAINING_RECORD).read_bytes()
    other_base = save_tiny_model(tmp_path / "other-base", n_positions=512)
    capsys.readouterr()
    for changed, replaced in (("data", ["--data", str(other)]), ("base_model", ["--model", str(other_base)])):
        flag = replaced[0]
        swapped = [replaced[1] if i and argv[i - 1] == flag else a for i, a in enumerate(argv)]
        assert main(swapped) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and f"was begun with other {changed}: resuming would mix two trainings" in err[0]
    assert main([a for a in argv if a != "--no-lora"]) == 2
    assert "was begun with other lora" in capsys.readouterr().err
    assert {path: path.read_bytes() for path in model.rglob("*") if path.is_file()} == before


def test_a_killed_training_resumes_with_the_same_command_only(tmp_path, capsys):
    from transformers import TrainerCallback

    from hf_ecg.data.outputs import TRAINING_RECORD

    data = toy_corpus(tmp_path / "toy.tsv", repeat=8)
    other = toy_corpus(tmp_path / "other.tsv", repeat=9)
    base = save_tiny_model(tmp_path / "base")
    model = tmp_path / "model"

    class Killed(TrainerCallback):  # the process dies after the checkpoint of step 4
        def on_save(self, args, state, control, **kwargs):
            if state.global_step == 4:
                raise KeyboardInterrupt

    argv = ["train", "--data", str(data), "--model", str(base), "-o", str(model), "--own-sentences", "0"]
    argv += ["--no-lora", "--max-steps", "8", "--save-steps", "4", "--learning-rate", "5e-3", "--seed", "3"]
    argv += ["--use_cpu", "true", "--eval_strategy", "no", "--validation-split", "0"]
    settings = dict(max_steps=8, save_steps=4, eval_strategy="no", save_strategy="steps", validation_split=0.0)
    with pytest.raises(KeyboardInterrupt):
        train_ecg_model(data, str(base), replace(arguments(model, 0), **settings), callbacks=[Killed()])
    assert (model / "checkpoint-4").is_dir() and not json.loads((model / TRAINING_RECORD).read_text())["finished"]
    capsys.readouterr()
    checkpoint = {path: path.read_bytes() for path in (model / "checkpoint-4").rglob("*") if path.is_file()}
    resume = [*argv, "--resume", "--per-device-train-batch-size", "8"]
    for changed, swapped in (
        ("data", [str(other) if a == str(data) else a for a in resume]),
        ("lora", [a for a in resume if a != "--no-lora"]),
    ):
        assert main(swapped) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and f"was begun with other {changed}" in err[0]
    assert {path: path.read_bytes() for path in (model / "checkpoint-4").rglob("*") if path.is_file()} == checkpoint
    assert main(resume) == 0  # the same command continues from checkpoint-4 to the end
    assert ECGModelCardData.load(model).total_steps == 8
    assert json.loads((model / TRAINING_RECORD).read_text())["finished"] is True
