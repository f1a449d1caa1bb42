from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import warnings

import datasets
import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st
from transformers import AutoModelForCausalLM, AutoTokenizer, HfArgumentParser, TrainerCallback

from hf_ecg.cli import build_parser, main
from hf_ecg.cli.common import CLIError
from hf_ecg.data.builder import ECGBlocksBuilder
from hf_ecg.modeling import ModelNotFoundError, add_ecg_tokens, apply_lora, load_causal_lm
from hf_ecg.runtime.blocks import ANSWER_TOKEN, CONTEXT_TOKEN, QUESTION_TOKEN
from hf_ecg.runtime.ecg_config import ECGConfig
from hf_ecg.synthetic.run_config import DatasetRunConfig
from hf_ecg.training.train import train_ecg_model
from hf_ecg.training.trainer import ECGTrainer, ECGTrainingArguments, encode_blocks
from tiny import save_tiny_model, tiny_gpt2, tiny_tokenizer, toy_corpus

TYPES = ["Chemical", "Disease"]


@pytest.fixture(scope="module")
def tokenizer():
    tok = tiny_tokenizer()
    add_ecg_tokens(tok, None, TYPES)
    return tok


segment = st.lists(st.sampled_from(["cures", "<Chemical>", "pain", "<Disease>", ".", "severe", "fever"]), max_size=30)


@given(context=segment, answer=segment, question=st.sampled_from(["<Chemical>", "<Disease>", "<ENDTEXT>"]))
def test_labels_are_masked_exactly_outside_the_answer(tokenizer, context, answer, question):
    answer_text = " ".join([*answer, question])
    batch = {"context": [" ".join(context)], "question": [question], "answer": [answer_text]}
    encoded = encode_blocks(batch, tokenizer, max_length=24)
    ids, labels = encoded["input_ids"][0], encoded["labels"][0]
    answer_ids = tokenizer(answer_text, add_special_tokens=False)["input_ids"]
    context_ids = tokenizer(batch["context"][0], add_special_tokens=False)["input_ids"]
    question_at = ids.index(tokenizer.convert_tokens_to_ids(QUESTION_TOKEN))
    answer_at = ids.index(tokenizer.convert_tokens_to_ids(ANSWER_TOKEN))
    assert len(ids) == len(labels) <= 24
    # The structure survives any truncation: context marker, context, question, answer marker, answer.
    assert ids[0] == tokenizer.convert_tokens_to_ids(CONTEXT_TOKEN)
    assert answer_at == question_at + 2
    kept_context, kept_answer = ids[1:question_at], ids[answer_at + 1 :]
    assert kept_context == context_ids[len(context_ids) - len(kept_context) :]  # cut from the left only
    assert kept_answer == answer_ids[len(answer_ids) - len(kept_answer) :]
    assert kept_answer == answer_ids or not kept_context  # the context goes before the answer is cut
    assert labels == [-100] * (answer_at + 1) + kept_answer
    if len(context_ids) + len(answer_ids) + 4 <= 24:
        assert ids == [ids[0], *context_ids, ids[question_at], ids[question_at + 1], ids[answer_at], *answer_ids]
    assert ids[-1] == tokenizer.convert_tokens_to_ids(question)
    whole = encode_blocks(batch, tokenizer, max_length=24, loss_on="all")
    assert whole["labels"][0] == whole["input_ids"][0]


def test_tag_tokens_are_single_special_tokens(tokenizer):
    ids = tokenizer("severe <Disease> and<Chemical>", add_special_tokens=False)["input_ids"]
    assert tokenizer.convert_tokens_to_ids("<Disease>") in ids and tokenizer.convert_tokens_to_ids("<Chemical>") in ids


def blocks_of(tmp_path, repeat=4):
    corpus = toy_corpus(tmp_path / "toy.tsv", repeat=repeat)
    builder = ECGBlocksBuilder(cache_dir=str(tmp_path / "cache"), data_files={"train": str(corpus)})
    builder.download_and_prepare()
    return builder.as_dataset()["train"]


def make_trainer(tmp_path, *, lora=False, callbacks=None, train_dataset=None, **overrides):
    tok = tiny_tokenizer()
    model = tiny_gpt2(len(tok))
    ids = add_ecg_tokens(tok, model, TYPES)
    if lora:
        model = apply_lora(model, ids, r=4, alpha=8, dropout=0.0)
    kwargs = dict(
        output_dir=str(tmp_path / "out"),
        learning_rate=5e-3,
        per_device_train_batch_size=8,
        num_train_epochs=1,
        lora=lora,
        use_cpu=True,
        save_strategy="no",
        logging_steps=1,
        seed=0,
        disable_tqdm=True,
    )
    kwargs.update(overrides)
    blocks = blocks_of(tmp_path)
    return ECGTrainer(
        model=model,
        args=ECGTrainingArguments(**kwargs),
        ecg_config=ECGConfig(entity_types=TYPES, base_model="tiny-gpt2"),
        train_dataset=blocks if train_dataset is None else train_dataset,
        eval_dataset=blocks.select(range(5)),
        processing_class=tok,
        callbacks=callbacks,
    ), ids


def test_training_lowers_answer_loss_on_held_out_blocks(tmp_path):
    trainer, _ = make_trainer(tmp_path, max_steps=30)
    before = trainer.evaluate()["eval_loss"]
    trainer.train()
    after = trainer.evaluate()["eval_loss"]
    assert after < before - 0.5


def padded_share(tmp_path, **overrides):
    """Padding over all positions in one epoch of training batches, on samples of 4 to 120 tokens."""
    lengths = [4 + (37 * i) % 117 for i in range(400)]
    ids = [[5] * n for n in lengths]
    samples = datasets.Dataset.from_dict({"input_ids": ids, "labels": ids})
    trainer, _ = make_trainer(tmp_path, train_dataset=samples, **overrides)
    batches = list(trainer.get_train_dataloader())
    assert sorted(int(n) for b in batches for n in b["attention_mask"].sum(1)) == sorted(lengths)  # all, once
    return 1 - sum(int(b["attention_mask"].sum()) for b in batches) / sum(b["attention_mask"].numel() for b in batches)


def test_training_batches_group_samples_of_similar_length(tmp_path):
    random_share = padded_share(tmp_path, train_sampling_strategy="random")
    assert random_share > 0.3  # random batches of 8 are much padding ...
    assert padded_share(tmp_path) < random_share / 3  # ... which the default sampler mostly avoids


def test_lora_trains_the_new_tag_token_embeddings_and_merges_them(tmp_path):
    trainer, ids = make_trainer(tmp_path, lora=True, max_steps=10)
    wrapped_embeddings = trainer.model.base_model.model.get_input_embeddings()
    weight_before = wrapped_embeddings.token_adapter.base_layer.weight.detach().clone()
    trainer.train()
    trainer.save_model()
    merged = AutoModelForCausalLM.from_pretrained(tmp_path / "out")
    after = merged.get_input_embeddings().weight.detach()
    new_rows = torch.tensor(ids)
    changed = (after[new_rows] - weight_before[new_rows]).abs().sum(dim=1)
    assert (changed > 0).all(), "every ECG token embedding must move under LoRA"
    old_rows = torch.arange(weight_before.shape[0])[~torch.isin(torch.arange(weight_before.shape[0]), new_rows)]
    assert torch.equal(after[old_rows], weight_before[old_rows]), "LoRA must leave the original vocabulary alone"
    assert not (tmp_path / "out" / "adapter_config.json").exists()  # merged: a plain model folder
    assert ECGConfig.load(tmp_path / "out").entity_types == TYPES


class Interrupt(TrainerCallback):
    def on_step_end(self, args, state, control, **kwargs):
        if state.global_step == 3:
            raise KeyboardInterrupt("simulated crash")


def test_interrupted_run_resumes_from_its_checkpoint(tmp_path):
    settings_ = dict(max_steps=6, save_strategy="steps", save_steps=2)
    trainer, _ = make_trainer(tmp_path, callbacks=[Interrupt()], **settings_)
    with pytest.raises(KeyboardInterrupt):
        trainer.train()
    assert sorted(os.listdir(tmp_path / "out")) == ["checkpoint-2"]
    resumed, _ = make_trainer(tmp_path, **settings_)
    resumed.train(resume_from_checkpoint=str(tmp_path / "out" / "checkpoint-2"))
    assert resumed.state.global_step == 6
    logged_steps = [log["step"] for log in resumed.model_card_data.training_logs if "loss" in log]
    assert logged_steps == [3, 4, 5, 6]  # continued after the checkpoint, not from scratch


def test_trainer_checks_columns_and_tokens(tmp_path):
    blocks = blocks_of(tmp_path)
    tok = tiny_tokenizer()
    model = tiny_gpt2(len(tok))
    args = ECGTrainingArguments(output_dir=str(tmp_path / "o"), use_cpu=True)
    config = ECGConfig(entity_types=TYPES)
    with pytest.raises(ValueError, match=r"call hf_ecg\.modeling\.add_ecg_tokens first"):
        ECGTrainer(model=model, args=args, ecg_config=config, train_dataset=blocks, processing_class=tok)
    add_ecg_tokens(tok, model, TYPES)
    with pytest.raises(ValueError, match=r"lacks column\(s\) \['question', 'answer'\]"):
        ECGTrainer(
            model=model,
            args=args,
            ecg_config=config,
            processing_class=tok,
            train_dataset=blocks.remove_columns(["question", "answer"]),
        )


def test_training_arguments_parse_from_yaml_with_help(tmp_path):
    config = tmp_path / "c.yaml"
    config.write_text("output_dir: out\nlora: true\nlora_r: 4\nloss_on: all\nlearning_rate: 0.001\n")
    (args,) = HfArgumentParser(ECGTrainingArguments).parse_yaml_file(str(config))
    assert (args.lora, args.lora_r, args.loss_on, args.learning_rate) == (True, 4, "all", 0.001)
    assert args.remove_unused_columns is False
    helps = HfArgumentParser(ECGTrainingArguments).format_help()
    assert "--loss_on {answer,all}" in helps and "--save_mention_bank" in helps
    with pytest.raises(ValueError, match="loss_on"):
        ECGTrainingArguments(output_dir="x", loss_on="prompt")


def test_train_config_yaml_values_keep_their_types_and_the_command_line_wins(tmp_path):
    """A dict-valued field arrives as a dict (not its repr), a YAML number as a number; flags override the file;
    a key that is no field is named; learning_rate left out means the recipe's rate (None in --help)."""
    from hf_ecg.cli.train import _training_arguments

    config = tmp_path / "c.yaml"
    config.write_text(
        "lr_scheduler_type: cosine_with_restarts\nlr_scheduler_kwargs: {num_cycles: 2}\nlora_r: 4\n"
        "lora_target_modules: [c_attn, c_proj]\nwarmup_steps: 3\nseed: 5\n"
    )
    parser = build_parser()
    args = parser.parse_args(
        ["train", "--data", "d.tsv", "--model", "m", "--output", str(tmp_path / "o"), "--config", str(config)]
    )
    training = _training_arguments(args, ["--seed", "7"])
    assert training.lr_scheduler_kwargs == {"num_cycles": 2}
    assert (training.lora_r, training.lora_target_modules, training.warmup_steps) == (4, ["c_attn", "c_proj"], 3)
    assert training.seed == 7 and training.learning_rate == 1e-3 and training.output_dir == str(tmp_path / "o")
    config.write_text("lora_rank: 4\n")
    with pytest.raises(CLIError, match="not ECGTrainingArguments fields: lora_rank"):
        _training_arguments(args, [])
    assert ECGTrainingArguments(output_dir="x", lora=False).learning_rate == 5e-4
    assert ECGTrainingArguments(output_dir="x", learning_rate=2e-4).learning_rate == 2e-4


def test_the_trainer_leaves_the_callers_arguments_as_they_were(tmp_path):
    """ECGTrainer and train_ecg_model work on copies (dataclasses.replace), as SpanMarker's trainer does: the
    caller's push_to_hub and checkpoint settings are not rewritten."""
    from hf_ecg.training.train import _evaluate_and_keep_best

    args = ECGTrainingArguments(
        output_dir=str(tmp_path / "o"), push_to_hub=True, hub_model_id="org/x", save_strategy="steps", save_steps=7
    )
    before = args.to_dict()
    kept = _evaluate_and_keep_best(args)
    assert args.to_dict() == before
    tok = tiny_tokenizer()
    model = tiny_gpt2(len(tok))
    add_ecg_tokens(tok, model, TYPES)
    trainer = ECGTrainer(
        model=model,
        args=args,
        ecg_config=ECGConfig(entity_types=TYPES),
        processing_class=tok,
        train_dataset=blocks_of(tmp_path),
    )
    assert trainer.push_after_training and not trainer.args.push_to_hub  # no checkpoint pushes during training
    assert args.to_dict() == before and args.push_to_hub
    assert kept.load_best_model_at_end and kept.metric_for_best_model == "eval_loss" and kept.save_total_limit == 1
    assert str(kept.eval_strategy) in ("epoch", "IntervalStrategy.EPOCH") and kept.push_to_hub


def test_unknown_model_offline_says_what_was_tried(monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(ModelNotFoundError) as info:
        load_causal_lm("no-such-org/no-such-model")
    message = str(info.value)
    assert "offline alias (known: smollm2-135m, minilm-l6)" in message
    assert "local folder" in message and "does not exist" in message
    assert "Hub repo 'no-such-org/no-such-model'" in message


def test_cli_train_writes_a_reloadable_model_with_config_and_card(tmp_path, capsys):
    model_dir = save_tiny_model(tmp_path / "tiny")
    data = toy_corpus(tmp_path / "toy.tsv", repeat=3)
    config = tmp_path / "train.yaml"
    config.write_text("learning_rate: 0.003\nper_device_train_batch_size: 4\nuse_cpu: true\nlogging_steps: 1\n")
    out = tmp_path / "m"
    code = main(
        [
            "train",
            "--data",
            str(data),
            "--model",
            str(model_dir),
            "--output",
            str(out),
            "--max-steps",
            "3",
            "--config",
            str(config),
            "--save_strategy",
            "no",
            "--seed",
            "3",
            "--corpus-name",
            "toy-cdr",
        ]
    )
    assert code == 0
    printed = capsys.readouterr().out
    assert "for 3 steps" in printed and f"wrote {out}/" in printed
    model = AutoModelForCausalLM.from_pretrained(out)
    tok = AutoTokenizer.from_pretrained(out)
    assert model.get_input_embeddings().weight.shape[0] == len(tok)
    assert tok.convert_tokens_to_ids("<Disease>") != tok.unk_token_id
    ecg = json.loads((out / "ecg_config.json").read_text())
    assert ecg["entity_types"] == TYPES and ecg["tag_tokens"]["Disease"] == "<Disease>"
    assert ecg["corpus_statistics"]["num_sentences"] == 12 and ecg["corpus_statistics"]["name"] == "toy-cdr"
    assert {m["mention"] for m in ecg["mention_bank"]["Chemical"]} == {"Aspirin", "Ibuprofen", "paracetamol"}
    card = (out / "README.md").read_text()
    assert "learning_rate | 0.003" in card and "Chemical, Disease" in card and "from toy-cdr" in card
    assert ecg["lora"] is True  # the default recipe
    assert set(ecg["tag_pieces"]) == set(TYPES) and "Disease" in ecg["tag_pieces"]["Disease"]
    assert isinstance(ecg["tag_piece_exceptions"], list)


def test_a_qa_plan_generator_learns_plan_questions_and_writes_the_requested_entities(tmp_path):
    from hf_ecg.data.sources import load_labelled
    from hf_ecg.synthetic.generate import generate_dataset

    model_dir = save_tiny_model(tmp_path / "tiny")
    data = toy_corpus(tmp_path / "toy.tsv", repeat=2)
    out = tmp_path / "m"
    builder = ECGBlocksBuilder(cache_dir=str(tmp_path / "cache"), data_files={"train": str(data)}, layout="qa-plan")
    builder.download_and_prepare()
    rows = builder.as_dataset()["train"]
    for row in rows:  # each question: the block's own tag, then the tags of the blocks after it
        if row["block_index"] >= 0:
            later = row["entities"][row["block_index"] :]
            assert row["question"] == " ".join([*(f"<{label}>" for label in later), "<ENDTEXT>"])
    args = ["train", "--data", str(data), "--model", str(model_dir), "--output", str(out), "--max-steps", "2"]
    assert main([*args, "--layout", "qa-plan", "--use_cpu", "true", "--save_strategy", "no"]) == 0
    assert ECGConfig.load(out).layout == "qa-plan"
    requested = [["Chemical", "Disease"], ["Disease"], []]
    generate_dataset(
        out, tmp_path / "gen", 6, entities=requested, mentions="random", run=DatasetRunConfig(progress_bar=False)
    )
    assert [list(sample.entity_types) for sample in load_labelled(tmp_path / "gen")] == requested * 2


@pytest.mark.parametrize("lora", [True, False])
def test_a_base_model_saved_in_bfloat16_is_trained_in_float32(lora, tmp_path):
    # transformers 5 loads a checkpoint in its own dtype (SmolLM2 on the Hub is bfloat16): optimizer steps on
    # bfloat16 weights would lose the small updates; bf16 training is autocast over float32 weights.
    from safetensors import safe_open

    model_dir = save_tiny_model(tmp_path / "tiny", dtype=torch.bfloat16)
    data = toy_corpus(tmp_path / "toy.tsv", repeat=2)
    out = tmp_path / "m"
    args = ["train", "--data", str(data), "--model", str(model_dir), "--output", str(out), "--max-steps", "2"]
    assert main([*args, "--use_cpu", "true", "--save_strategy", "no", *([] if lora else ["--no-lora"])]) == 0
    with safe_open(out / "model.safetensors", "pt") as weights:
        assert {weights.get_slice(name).get_dtype() for name in weights.keys()} == {"F32"}


@pytest.mark.parametrize(
    ("flags", "lora", "rate"),
    [([], True, 1e-3), (["--no-lora"], False, 5e-4), (["--lora"], True, 1e-3), (["--full"], False, 5e-4)],
)  # --lora and --full: the old spellings, still read
def test_cli_train_recipe_is_lora_unless_no_lora(flags, lora, rate, tmp_path):
    from hf_ecg.cli.common import CLIError
    from hf_ecg.cli.train import _training_arguments

    parser = build_parser()
    args = parser.parse_args(["train", "--data", "d.tsv", "--model", "m", "--output", str(tmp_path / "o"), *flags])
    training = _training_arguments(args, [])
    assert (training.lora, training.learning_rate) == (lora, rate)
    both = parser.parse_args(["train", "--data", "d", "--model", "m", "--output", "o", "--lora", "--no-lora"])
    with pytest.raises(CLIError, match="both set lora"):
        _training_arguments(both, [])


def test_same_seed_trains_the_same_lora_model(tmp_path):
    # LoRA's A matrices are drawn at random when the adapters are added, before the Trainer exists:
    # unless the seed is set first, two runs with one seed give two models.
    model_dir = save_tiny_model(tmp_path / "tiny")
    data = toy_corpus(tmp_path / "toy.tsv", repeat=2)

    def weights(name: str, seed: int) -> dict[str, torch.Tensor]:
        args = ECGTrainingArguments(
            output_dir=str(tmp_path / name),
            lora=True,
            lora_r=4,
            max_steps=2,
            learning_rate=1e-2,
            per_device_train_batch_size=4,
            use_cpu=True,
            save_strategy="no",
            disable_tqdm=True,
            seed=seed,
        )
        train_ecg_model(data, str(model_dir), args)
        return AutoModelForCausalLM.from_pretrained(tmp_path / name).state_dict()

    first, again, other = weights("a", 7), weights("b", 7), weights("c", 8)
    assert first.keys() == again.keys()
    assert all(torch.equal(first[key], again[key]) for key in first)
    assert any(not torch.equal(first[key], other[key]) for key in first)  # the seed does reach the weights


def test_held_out_sentences_are_evaluated_every_epoch_and_the_best_checkpoint_is_kept(tmp_path):
    model_dir = save_tiny_model(tmp_path / "tiny")
    data = toy_corpus(tmp_path / "toy.tsv", repeat=5)  # 20 sentences: 2 held out at the default 10%
    args = ECGTrainingArguments(
        output_dir=str(tmp_path / "m"),
        lora=True,
        lora_r=4,
        num_train_epochs=3,
        learning_rate=5e-2,
        per_device_train_batch_size=4,
        use_cpu=True,
        disable_tqdm=True,
        seed=1,
    )
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        trainer = train_ecg_model(data, str(model_dir), args)
    assert not [w for w in caught if "save_embedding_layers" in str(w.message)]  # peft's, once per checkpoint
    evaluations = [log for log in trainer.state.log_history if "eval_loss" in log]
    assert len(evaluations) == 3  # one evaluation per epoch
    best = min(evaluations, key=lambda log: log["eval_loss"])
    assert trainer.args.load_best_model_at_end and trainer.state.best_metric == best["eval_loss"]
    assert trainer.state.best_model_checkpoint.endswith(f"checkpoint-{best['step']}")
    card = trainer.model_card_data  # the card says which checkpoint the weights are from
    assert (card.best_step, card.best_eval_loss) == (best["step"], best["eval_loss"])
    assert (
        f"The weights are those of step {best['step']}, the lowest validation loss"
        in (tmp_path / "m" / "README.md").read_text()
    )
    # every block once (20 sentences, 30 entities) and a mention row per entity (30; the default layout,
    # after-sentence, as in-sentence)
    assert len(trainer.train_dataset) + len(trainer.eval_dataset) == 20 + 30 + 30
    assert 2 <= len(trainer.eval_dataset) <= 6 + 4  # the blocks and mention samples of 2 held-out sentences
    saved = ECGConfig.load(tmp_path / "m")
    assert saved.sentence_endings == ["."]
    assert saved.sentence_breaks == {"capital": 0.0, "digit": 0.0, "entity": 0.0}  # one sentence each
    assert saved.unended_share == 0.0


def test_a_model_trained_on_a_classlabel_dataset_generates_in_its_label_order(tmp_path):
    from hf_ecg.data.corpus import read_conll
    from hf_ecg.runtime.decoding import DecodingConfig
    from hf_ecg.synthetic.generate import generate_dataset

    names = ["O", "B-Disease", "I-Disease", "B-Chemical", "I-Chemical"]  # not the sorted order
    corpus = read_conll(toy_corpus(tmp_path / "toy.tsv", repeat=2))
    features = datasets.Features(
        {
            "tokens": datasets.Sequence(datasets.Value("string")),
            "ner_tags": datasets.Sequence(datasets.ClassLabel(names=names)),
        }
    )
    gold = datasets.Dataset.from_dict(
        {"tokens": [list(s.tokens) for s in corpus], "ner_tags": [[names.index(t) for t in s.tags] for s in corpus]},
        features=features,
    )
    args = ECGTrainingArguments(
        output_dir=str(tmp_path / "m"),
        max_steps=1,
        per_device_train_batch_size=4,
        use_cpu=True,
        save_strategy="no",
        disable_tqdm=True,
    )
    train_ecg_model(gold, str(save_tiny_model(tmp_path / "tiny")), args)
    assert ECGConfig.load(tmp_path / "m").label_names == names
    generated = generate_dataset(
        tmp_path / "m",
        tmp_path / "gen",
        3,
        decoding=DecodingConfig(max_block_tokens=4),
        run=DatasetRunConfig(progress_bar=False),
    )
    synthetic = datasets.load_dataset(str(generated), split="train", cache_dir=str(tmp_path / "cache"))
    mixed = datasets.concatenate_datasets([gold, synthetic.select_columns(["tokens", "ner_tags"])])
    assert mixed.features["ner_tags"].feature.names == names and len(mixed) == len(gold) + 3
    with pytest.raises(ValueError, match="both as files or both as datasets"):
        train_ecg_model(gold, str(tmp_path / "tiny"), args, validation=str(tmp_path / "toy.tsv"))


def test_hold_out_moves_whole_sentences():
    from hf_ecg.training.train import hold_out_sentences

    train = datasets.Dataset.from_dict(
        {"sentence_id": [0, 0, 1, 2, 2, 2, 3, 4], "block_index": [0, 1, 0, 0, 1, 2, 0, 0]}
    )
    split = hold_out_sentences(datasets.DatasetDict({"train": train}), 5, 0.4, seed=0)
    kept, held = set(split["train"]["sentence_id"]), set(split["validation"]["sentence_id"])
    assert len(held) == 2 and not kept & held and kept | held == set(range(5))
    assert len(split["train"]) + len(split["validation"]) == len(train)
    assert hold_out_sentences(datasets.DatasetDict({"train": train}), 5, 0.05, seed=0).keys() == {"train"}


def test_cli_train_reads_the_corpus_like_blocks_does(tmp_path, capsys):
    data = tmp_path / "bad.tsv"
    data.write_text("a\tB-Chemical\n\nb\tO\nc\tI-Disease\n")
    code = main(["train", "--data", str(data), "--model", "unused", "--output", str(tmp_path / "m"), "--strict"])
    assert code == 2
    assert f"{data}:4: token 2: 'I-Disease' does not continue a span" in capsys.readouterr().err


def test_accelerate_launch_two_cpu_processes(tmp_path):
    model_dir = save_tiny_model(tmp_path / "tiny")
    data = toy_corpus(tmp_path / "toy.tsv", repeat=3)
    out = tmp_path / "m"
    env = {**os.environ, "HF_DATASETS_CACHE": str(tmp_path / "cache"), "OMP_NUM_THREADS": "1"}
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "accelerate.commands.launch",
            "--cpu",
            "--num_processes",
            "2",
            "--num_machines",
            "1",
            "--mixed_precision",
            "no",
            "--dynamo_backend",
            "no",
            "-m",
            "hf_ecg.cli",
            "train",
            "--data",
            str(data),
            "--model",
            str(model_dir),
            "--output",
            str(out),
            "--max-steps",
            "2",
            "--save_strategy",
            "no",
            "--per-device-train-batch-size",
            "2",
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    assert "for 2 steps" in result.stdout
    assert result.stdout.count("wrote ") == 1  # only the main process reports and saves
    assert (out / "ecg_config.json").is_file() and (out / "model.safetensors").is_file()


CARD_PATTERN = r"""---
base_model: gpt2
library_name: transformers
pipeline_tag: text-generation
tags:
- hf_ecg
- ecg-qalm
- entity-controlled-generation
- synthetic-data
- ner
---

# ECG-QALM generator for bc5cdr

This model writes \*\*new labelled NER sentences\*\* .*
- \*\*Entity types:\*\* Chemical, Disease
- \*\*Base model:\*\* gpt2
- \*\*Fine-tuning:\*\* LoRA \(r=8, alpha=16\), new tag-token embeddings trained, adapters merged into the weights
- \*\*Loss:\*\* answer block only

## Usage

```python
import hf_ecg  # registers the "entity-controlled-generation" pipeline
from transformers import pipeline

generator = pipeline\("entity-controlled-generation", model="org/bc5cdr-ecg"\)
generator\(\[\["Chemical", "Disease"\]\], num_return_sequences=3\)
```
.*
## Training data

45 sentences \(112 entities, 157 Q&A blocks\) from bc5cdr, the first 45 sentences of the training split\.

\| entity type \| mentions \|
\|---\|---\|
\| Chemical \| 53 \|
\| Disease \| 59 \|

The mention bank .* is not included in `ecg_config.json`\.

## Training

\| hyperparameter \| value \|
\|---\|---\|
\| learning_rate \| 0\.0005 \|
\| lora \| True \|
\| lora_r \| 8 \|
\| lora_alpha \| 16 \|
\| loss_on \| answer \|

\| step \| epoch \| training loss \| validation loss \|
\|---\|---\|---\|---\|
\| 10 \| 0\.5 \| 2\.5000 \| - \|
\| 20 \| 1\.0 \| 1\.2500 \| 1\.7500 \|

The weights are those of step 20, the lowest validation loss \(1\.7500\)\.

### Framework versions

- hf-ecg \d+\.\d+\.\d+\S*
- transformers \d+\.\d+\.\d+\S*
.*
## Citation

```bibtex
@inproceedings\{aggarwal-etal-2023-ecg,.*ECG.*QALM.*
\}
```"""


def test_model_card_renders_exactly(tmp_path):
    from hf_ecg.hub.model_card import ECGModelCardData

    card = ECGModelCardData(
        base_model="gpt2",
        model_id="org/bc5cdr-ecg",
        entity_types=TYPES,
        dataset_name="bc5cdr",
        first_n=45,
        corpus_statistics={
            "num_sentences": 45,
            "num_entities": 112,
            "num_blocks": 157,
            "entity_type_counts": {"Chemical": 53, "Disease": 59},
        },
        hyperparameters={"learning_rate": 0.0005, "lora": True, "lora_r": 8, "lora_alpha": 16, "loss_on": "answer"},
        training_logs=[
            {"step": 10, "epoch": 0.5, "loss": 2.5},
            {"step": 20, "epoch": 1.0, "loss": 1.25, "eval_loss": 1.75},
        ],
        best_step=20,
        best_eval_loss=1.75,
    )
    text = str(card.to_model_card())
    assert re.fullmatch(CARD_PATTERN, text, flags=re.DOTALL), text


def test_model_card_of_an_ecg_lm_model_says_so():
    from hf_ecg.hub.model_card import ECGModelCardData

    card = ECGModelCardData(base_model="gpt2", entity_types=TYPES, hyperparameters={"layout": "lm"})
    text = str(card.to_model_card())
    assert "\n# ECG-LM generator\n" in text and "- ecg-lm\n" in text, text
    assert "ECG-QALM" not in text.split("## Usage")[0] and "Q&A blocks" not in text


def test_new_tokens_start_from_their_descriptions():
    tokenizer = tiny_tokenizer()
    model = tiny_gpt2(len(tokenizer))
    original = model.get_input_embeddings().weight.detach().clone()
    add_ecg_tokens(tokenizer, model, ["Chemical", "cell_type"])
    weight = model.get_input_embeddings().weight.detach()
    assert torch.equal(weight[: len(original)], original)  # old rows untouched

    def row(token):
        return weight[tokenizer.convert_tokens_to_ids(token)]

    def mean_of(text):
        return original[tokenizer(text, add_special_tokens=False)["input_ids"]].mean(0)

    assert torch.allclose(row("<Chemical>"), mean_of("Chemical"))
    assert torch.allclose(row("<cell_type>"), mean_of("cell type"))
    assert torch.allclose(row("<ENDTEXT>"), original[tokenizer.eos_token_id])
    assert torch.allclose(row(QUESTION_TOKEN), mean_of("question"))
    assert not torch.allclose(row("<Chemical>"), row("<cell_type>"))  # tags are told apart from the start


def test_the_trainer_encodes_its_blocks_afresh_and_never_reads_a_tokenization_cached_by_another_version(
    tmp_path, monkeypatch
):
    """``datasets`` fingerprints a map by its function's name, not its code (and not the code it calls): a blocks
    dataset encoded once left a cache file that a later hf_ecg, whose layout differs, would read back as if it were
    its own (an experiment of the eighteenth session trained on the previous layout that way). The trainer encodes
    afresh: what it trains on is what its own layout code gives."""
    import hf_ecg.training.trainer as trainer_module

    blocks = blocks_of(tmp_path)  # read from Arrow files: maps on it are cached beside them
    first, _ = make_trainer(tmp_path, train_dataset=blocks)
    real = trainer_module.training_sample

    def one_more_id(segments, context, question, answer, *, max_length):  # another version's layout
        sample, prompt_length = real(segments, context, question, answer, max_length=max_length)
        return [segments.answer, *sample], prompt_length + 1

    monkeypatch.setattr(trainer_module, "training_sample", one_more_id)
    second, _ = make_trainer(tmp_path, train_dataset=blocks)
    assert blocks.cache_files  # the dataset does cache its maps
    for old, new in zip(first.train_dataset["input_ids"], second.train_dataset["input_ids"], strict=True):
        assert new[1:] == old and len(new) == len(old) + 1
