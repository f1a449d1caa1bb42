"""Mentions written in context: mention samples (format), training with them, the writer's constraints, and
generation with ``mentions="generated"`` from the API, the CLI and the pipeline."""

from __future__ import annotations

import json
from pathlib import Path

import datasets
import pytest
import torch
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from conftest import labelled_sentences
from hf_ecg.cli import main
from hf_ecg.data.builder import ECGBlocksBuilder
from hf_ecg.runtime.blocks import (
    ANSWER_TOKEN,
    ENDTEXT,
    MENTION_LAYOUTS,
    MENTION_TOKEN,
    QUESTION_TOKEN,
    Template,
    decompose,
    mention_samples,
    qa_samples,
    tag_label,
    tag_token,
)
from hf_ecg.runtime.decoding import DecodingConfig
from hf_ecg.runtime.decoding_cache import encode_after_prefixes
from hf_ecg.runtime.ecg_config import ECGConfig
from hf_ecg.runtime.mention_runner import shared_length
from hf_ecg.runtime.mention_writer import MentionWriter, template_seeds
from hf_ecg.runtime.pipeline import EntityControlledGenerationPipeline
from hf_ecg.runtime.sampler import SamplingParams
from hf_ecg.runtime.tags import tags_to_spans
from hf_ecg.synthetic.generate import generate_dataset
from hf_ecg.synthetic.run_config import DatasetRunConfig
from hf_ecg.training.train import train_ecg_model
from hf_ecg.training.trainer import ECGTrainingArguments, encode_blocks
from tiny import save_tiny_model, tiny_ecg_model, toy_corpus

TOY_MENTIONS = {"Chemical": {"Aspirin", "Ibuprofen", "paracetamol"}, "Disease": {"headache", "severe pain", "fever"}}


@given(labelled_sentences())
def test_a_mention_sample_is_its_sentence_with_one_slot_marked_and_the_slots_mention_as_answer(sentence):
    tokens, spans = sentence
    samples = mention_samples(tokens, spans)
    template, mentions = decompose(tokens, spans)
    assert len(samples) == len(spans)
    for k, (sample, span) in enumerate(zip(samples, sorted(spans), strict=True)):
        assert sample.question == tag_token(span.label) and sample.block_index == -1
        assert sample.answer.split(" ") == [*mentions[k], ENDTEXT]
        context = sample.context.split(" ")
        assert context.count(MENTION_TOKEN) == 1
        marker = context.index(MENTION_TOKEN)
        assert context[:marker] == tokens[: span.start]  # earlier entities as their words
        # later entities as their tags: the template after the slot's tag
        tags_before = sum(1 for s in spans if s.start < span.start)
        slot_position = [i for i, t in enumerate(template.tokens) if tag_label(t) is not None][tags_before]
        assert context[marker + 1 :] == list(template.tokens[slot_position + 1 :])


@given(labelled_sentences())
def test_an_after_template_mention_sample_is_the_template_then_the_earlier_slots_tag_and_mention(sentence):
    tokens, spans = sentence
    template, mentions = decompose(tokens, spans)
    samples = mention_samples(tokens, spans, layout="after-template")
    assert len(samples) == len(spans)
    for k, sample in enumerate(samples):
        assert sample.question == tag_token(sorted(spans)[k].label)
        assert sample.answer.split(" ") == [*mentions[k], ENDTEXT]
        pairs = [
            [QUESTION_TOKEN, tag_token(label), ANSWER_TOKEN, *mention, ENDTEXT]
            for label, mention in zip(template.entity_types[:k], mentions, strict=False)
        ]
        assert sample.context.split(" ") == [*template.tokens, *(token for pair in pairs for token in pair)]


WRITER_TYPES = ("Chemical", "Disease", "cell_type", "DNA")  # conftest's LABELS
WRITER_MODEL, WRITER_TOKENIZER, _ = tiny_ecg_model(WRITER_TYPES, mention=True)


@settings(max_examples=40, deadline=None)
@given(labelled_sentences(), st.sampled_from(MENTION_LAYOUTS))
def test_every_writer_prompt_is_its_training_rows_prompt_and_a_later_slot_adds_only_its_pair(sentence, layout):
    """Training rows and the writer's prompts come from one context builder, token for token; after the template,
    slot k's prompt repeats slot k-1's but for its last three ids, so the writer encodes only the pair between;
    ``after-sentence``: slot k's row is the last block row and the pairs up to slot k, its prompt the row up to
    slot k's mention (the only ids that carry loss), so it goes on from slot k-1's prompt and the mention drawn
    there."""
    tokens, spans = sentence
    assume(spans)
    template, mentions = decompose(tokens, spans)
    samples = mention_samples(tokens, spans, layout=layout)
    rows = {key: [getattr(sample, key) for sample in samples] for key in ("context", "question", "answer")}
    encoded = encode_blocks(rows, WRITER_TOKENIZER, max_length=4096)
    config = ECGConfig(
        entity_types=list(WRITER_TYPES),
        max_length=4096,
        mention_token=MENTION_TOKEN,
        mention_max_tokens=8,
        mention_layout=layout,
    )
    writer = MentionWriter(WRITER_MODEL, WRITER_TOKENIZER, config)
    prompts = [writer.prompt(template, mentions, k) for k in range(len(spans))]
    assert len(samples) == len(spans)  # a training row a slot, whatever the layout
    if layout == "after-sentence":
        mention_ids = WRITER_TOKENIZER([" ".join((*m, ENDTEXT)) for m in mentions], add_special_tokens=False)
        for k, (prompt, ids, labels) in enumerate(zip(prompts, encoded["input_ids"], encoded["labels"], strict=True)):
            taught = [i for i, label in enumerate(labels) if label != -100]
            assert prompt == ids[: taught[0]]  # the row up to its mention is the writer's prompt
            assert [ids[i] for i in taught] == ids[taught[0] :] == mention_ids["input_ids"][k]  # its mention, only
            if k + 1 < len(prompts):  # the next prompt: this one, the mention, <|question|> tag <|answer|>
                assert prompts[k + 1] == [*prompt, *mention_ids["input_ids"][k], *prompts[k + 1][-3:]]
        return
    for prompt, ids, labels in zip(prompts, encoded["input_ids"], encoded["labels"], strict=True):
        assert prompt == ids[: labels.index(next(label for label in labels if label != -100))]
    if layout == "after-template":
        for k in range(1, len(prompts)):
            pair = f" {QUESTION_TOKEN} {tag_token(template.entity_types[k - 1])} {ANSWER_TOKEN}"
            pair += f" {' '.join(mentions[k - 1])} {ENDTEXT}"
            new = len(prompts[k]) - shared_length(prompts[k - 1], prompts[k])
            assert new <= len(WRITER_TOKENIZER(pair, add_special_tokens=False)["input_ids"]) + 3


@given(labelled_sentences())
def test_an_after_sentence_mention_sample_is_the_last_block_sample_then_the_pairs_up_to_its_slot(sentence):
    tokens, spans = sentence
    template, mentions = decompose(tokens, spans)
    samples = mention_samples(tokens, spans, layout="after-sentence")
    assert len(samples) == len(spans)
    final = qa_samples(template)[-1]
    pairs = [
        [QUESTION_TOKEN, tag_token(label), ANSWER_TOKEN, *mention, ENDTEXT]
        for label, mention in zip(template.entity_types, mentions, strict=True)
    ]
    for k, sample in enumerate(samples):
        assert (sample.context, sample.question, sample.block_index) == (final.context, ENDTEXT, -1)
        assert sample.answer.split(" ") == [
            *final.answer.split(" "),
            *(token for pair in pairs[: k + 1] for token in pair),
        ]


@pytest.mark.parametrize("layout", ["in-sentence", None])
def test_the_builder_adds_mention_samples_only_when_asked(tmp_path, layout):
    """One sample per entity: ``in-sentence``, the sentence with its slot marked; the default, ``after-sentence``,
    the last block then the pairs up to the slot."""
    corpus = toy_corpus(tmp_path / "toy.tsv")
    plain = ECGBlocksBuilder(data_files={"train": str(corpus)}, cache_dir=str(tmp_path / "a"))
    plain.download_and_prepare()
    blocks = plain.as_dataset()["train"]
    assert -1 not in blocks["block_index"]
    options = {} if layout is None else {"mention_layout": layout}
    with_mentions = ECGBlocksBuilder(
        data_files={"train": str(corpus)}, mention_samples=True, cache_dir=str(tmp_path / "b"), **options
    )
    with_mentions.download_and_prepare()
    rows = with_mentions.as_dataset()["train"]
    mention_rows = rows.filter(lambda r: r["block_index"] == -1)
    assert len(rows) == len(blocks) + 6 and len(mention_rows) == 6  # the toy corpus: 3 sentences of 2 entities each
    if layout == "in-sentence":
        answers = {" ".join(r["answer"].split(" ")[:-1]) for r in mention_rows}
    else:  # each row's last pair is the mention it teaches
        pairs = [r["answer"].split(f" {QUESTION_TOKEN} ")[-1] for r in mention_rows]
        answers = {pair.split(f" {ANSWER_TOKEN} ")[1].removesuffix(f" {ENDTEXT}") for pair in pairs}
    assert answers == set().union(*TOY_MENTIONS.values())
    assert all(r["num_blocks"] == 3 for r in mention_rows)


def train_writer(root: Path, mention_layout: str = "in-sentence") -> Path:
    """A tiny GPT-2 trained with mention samples (in ``mention_layout``) on the toy corpus until it has learnt its
    mentions."""
    data = toy_corpus(root / "toy.tsv", repeat=8)
    args = ECGTrainingArguments(
        output_dir=str(root / "model"),
        lora=False,
        max_steps=600,
        learning_rate=5e-3,
        per_device_train_batch_size=8,
        use_cpu=True,
        save_strategy="no",
        disable_tqdm=True,
        seed=3,
        mention_samples=True,
        mention_layout=mention_layout,
        validation_split=0,
        report_to=[],
    )
    train_ecg_model(data, str(save_tiny_model(root / "base")), args)
    return root / "model"


@pytest.fixture(scope="module")
def writer_model(tmp_path_factory):
    return train_writer(tmp_path_factory.mktemp("mention-model"))


@pytest.fixture(scope="module")
def after_template_writer_model(tmp_path_factory):
    return train_writer(tmp_path_factory.mktemp("after-template-model"), "after-template")


@pytest.fixture(scope="module")
def after_sentence_writer_model(tmp_path_factory):
    return train_writer(tmp_path_factory.mktemp("after-sentence-model"), "after-sentence")


def test_training_with_mention_samples_records_the_marker_and_the_mention_limits(writer_model):
    config = ECGConfig.load(writer_model)
    assert config.mention_token == MENTION_TOKEN
    assert config.mention_max_words == {"Chemical": 1, "Disease": 2}
    assert config.mention_max_tokens >= 2
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(writer_model)
    assert tokenizer.convert_tokens_to_ids(MENTION_TOKEN) != tokenizer.unk_token_id
    assert MENTION_TOKEN in tokenizer.tokenize(f"a {MENTION_TOKEN} b")  # one special token, never split


def load_writer(model_dir: Path, **options):
    from hf_ecg.modeling import load_ecg_model

    model, tokenizer, config = load_ecg_model(model_dir)
    return MentionWriter(model, tokenizer, config, **options)


@pytest.mark.parametrize(
    ("model", "layout"),
    [
        ("writer_model", "in-sentence"),
        ("after_template_writer_model", "after-template"),
        ("after_sentence_writer_model", "after-sentence"),
    ],
)
def test_the_writer_fills_every_slot_within_the_training_mention_lengths_and_is_seeded(model, layout, request):
    writer_model = request.getfixturevalue(model)
    writer = load_writer(writer_model)
    assert writer.ecg_config.mention_layout == layout
    templates = [
        Template(("<Chemical>", "cures", "<Disease>", ".")),
        Template(("Patients", "with", "<Disease>", "received", "<Chemical>", ".")),
        Template(("No", "effect", ".")),
    ] * 4
    result = writer.write(templates, seed=1)
    assert result.slots == 16 and len(result.mentions) == 12 and result.mentions[2] == []
    assert result.written == sum(m is not None for row in result.mentions for m in row)
    assert result.written >= 12  # a trained writer rarely fails
    for template, row in zip(templates, result.mentions, strict=True):
        for label, mention in zip(template.entity_types, row, strict=True):
            if mention is not None:
                assert 1 <= len(mention) <= writer.rules.max_words[label]
                assert not any(w.startswith("<") and w.endswith(">") for w in mention)
    learnt = sum(
        " ".join(m) in TOY_MENTIONS[label]
        for template, row in zip(templates, result.mentions, strict=True)
        for label, m in zip(template.entity_types, row, strict=True)
        if m is not None
    )
    assert learnt >= result.written / 2  # it learnt to write a mention of the slot's type
    assert writer.write(templates, seed=1).mentions == result.mentions
    assert result.to_dict()["slots"] == 16


def test_a_template_writes_the_same_mentions_whichever_templates_it_is_written_with(writer_model):
    """Each template draws from its own stream (``seed[i]``): written alone, in another order or beside other
    templates in one batch, it gets the same mentions; so the shards of a run may be written together."""
    writer = load_writer(writer_model, batch_size=3)
    templates = [
        Template(("<Chemical>", "cures", "<Disease>", ".")),
        Template(("Patients", "with", "<Disease>", "received", "<Chemical>", "and", "<Chemical>", ".")),
        Template(("<Disease>", "after", "<Chemical>", ".")),
        Template(("No", "effect", ".")),
        Template(("<Chemical>", "induced", "<Disease>", "in", "rats", ".")),
    ]
    seeds = [11, 12, 13, 14, 15]
    together = writer.write(templates, seed=seeds)
    alone = [writer.write([t], seed=[s]).mentions[0] for t, s in zip(templates, seeds, strict=True)]
    assert together.mentions == alone
    reverse = writer.write(templates[::-1], seed=seeds[::-1])
    assert reverse.mentions == together.mentions[::-1]
    # an int seed is its template_seeds; another seed, other mentions
    assert writer.write(templates, seed=7).mentions == writer.write(templates, seed=template_seeds(7, 5)).mentions
    assert writer.write(templates, seed=7).mentions != writer.write(templates, seed=8).mentions
    with pytest.raises(ValueError, match="one seed per template"):
        writer.write(templates, seed=seeds[:2])


@pytest.mark.parametrize("group_by_length", [True, False])
def test_grouping_by_length_batches_similar_templates_and_still_fills_every_slot(
    writer_model, group_by_length, monkeypatch
):
    import hf_ecg.runtime.mention_runner as mention_runner

    encoded = []  # the prompts' lengths of each prefill pass

    def recording(model, cache, prompts, pasts, kept, pad_id):  # the real prefill, recording what it is given
        encoded.append(sorted(map(len, prompts)))
        return encode_after_prefixes(model, cache, prompts, pasts, kept, pad_id)

    monkeypatch.setattr(mention_runner, "encode_after_prefixes", recording)
    short = Template(("<Chemical>", "."))
    long = Template(("Patients", "who", "were", "given", "large", "doses", "of", "<Chemical>", "for", "weeks", "."))
    templates = [short, long] * 4
    result = load_writer(writer_model, batch_size=4, group_by_length=group_by_length).write(templates, seed=3)
    assert result.slots == 8 and result.written + sum(result.rejected.values()) >= 8
    assert sum(m is not None for row in result.mentions for m in row) == result.written
    first = encoded[0] if group_by_length else [n for lengths in encoded[:2] for n in lengths]
    # grouped, the first batch is the four long templates; in template order it mixes the two lengths
    assert (len(set(first)) == 1) is group_by_length


def test_a_prompt_encoded_on_the_kept_prefix_of_an_earlier_one_draws_as_if_encoded_whole(writer_model):
    """The keys/values kept from a slot's prompt serve the next slot's prompt up to where they differ, and the same
    prompt when a try is drawn again: same answers (same seed) and same keys/values as encoding it from scratch."""
    writer = load_writer(writer_model)
    templates = [
        Template(("<Chemical>", "cures", "<Disease>", "and", "<Chemical>", ".")),
        Template(("Patients", "with", "<Disease>", "got", "<Chemical>", ".")),
        Template(("<Disease>", "after", "<Chemical>", ".")),
    ]
    written = [[("Aspirin",), None, None], [("severe", "pain"), None], [("fever",), None]]
    first = [writer.prompt(t, w, 0) for t, w in zip(templates, written, strict=True)]
    second = [writer.prompt(t, w, 1) for t, w in zip(templates, written, strict=True)]

    def draw(prompts, kept, seed=5):
        with torch.inference_mode():
            return writer.draw(prompts, kept, seed)

    _, first_states = draw(first, [None] * 3)
    kept = list(zip(first, first_states, strict=True))
    for prompts in (second, first):  # the next slot's prompts, then the same prompts again (a redraw)
        answers, states = draw(prompts, kept)
        expected_answers, expected_states = draw(prompts, [None] * 3)
        assert answers == expected_answers
        for row, expected_row in zip(states, expected_states, strict=True):
            for (keys, values), (expected_keys, expected_values) in zip(row, expected_row, strict=True):
                torch.testing.assert_close(keys, expected_keys, rtol=1e-4, atol=1e-4)
                torch.testing.assert_close(values, expected_values, rtol=1e-4, atol=1e-4)
    for answer in answers:  # each answer stops at its <ENDTEXT> or at the limit
        ends = [i for i, token in enumerate(answer) if token == writer.endtext_id]
        assert ends == [len(answer) - 1] or (not ends and len(answer) == writer.rules.max_tokens + 1)


@pytest.mark.parametrize(
    ("model", "keep"),
    [
        ("after_template_writer_model", True),
        ("after_template_writer_model", False),
        ("after_sentence_writer_model", True),
    ],
)
def test_the_writer_starts_from_the_sentence_the_decoder_encoded_and_writes_as_if_it_encoded_it(
    model, keep, monkeypatch, request
):
    """``decode(keep_prefixes=True)``: each template keeps its last prompt's ``<|context|> context`` ids and their
    keys/values (those of encoding them afresh; an ``after-sentence`` model's, its whole last row: that prompt and
    the block it drew); the writer's first prompt starts with them, so it encodes only what follows, and writes the
    same mentions as when it encodes the whole prompt."""
    import hf_ecg.runtime.mention_runner as mention_runner
    from hf_ecg.runtime.decoding import ChainedDecoder

    writer = load_writer(request.getfixturevalue(model))
    model, tokenizer, config = writer.model, writer.tokenizer, writer.ecg_config
    whole_rows = config.mention_layout == "after-sentence"
    sequences = [("Chemical", "Disease"), ("Disease",), ("Chemical",), ()] * 3
    settings = DecodingConfig(batch_size=4, seed=2, max_block_tokens=12)
    decoded = ChainedDecoder(model, tokenizer, config, settings).decode(sequences, keep_prefixes=keep)
    if not keep:
        assert all(d.prompt_prefix is None for d in decoded)
        return
    assert all(d.prompt_prefix is not None for d in decoded)
    shared = []  # of each first prompt, the ids read from the decoder
    for d in decoded:
        ids, states = d.prompt_prefix
        assert ids[0] == writer.segments.context and all(len(k[0]) == len(ids) for k in [s[0] for s in states])
        assert (writer.segments.answer in ids) is whole_rows  # the last block's prompt and answer, or its context
        if d.entities:  # the writer's first prompt starts with the ids the decoder kept
            prompt = writer.prompt(d.template, [None] * len(d.entities), 0)
            shared.append(min(shared_length(prompt, ids), len(prompt) - 1))
            assert shared[-1] == len(ids) or (whole_rows and shared[-1] > ids.index(writer.segments.answer))
        with torch.inference_mode():
            fresh = model(input_ids=torch.tensor([ids]), use_cache=True).past_key_values
        for (keys, values), layer in zip(states, fresh.layers, strict=True):
            torch.testing.assert_close(keys, layer.keys[0], rtol=1e-4, atol=1e-4)
            torch.testing.assert_close(values, layer.values[0], rtol=1e-4, atol=1e-4)
    pasts = []

    def recording(model, cache, prompts, past, kept, pad_id):  # the real prefill, recording what it reuses
        pasts.extend(past)
        return encode_after_prefixes(model, cache, prompts, past, kept, pad_id)

    monkeypatch.setattr(mention_runner, "encode_after_prefixes", recording)
    templates = [d.template for d in decoded]
    whole = writer.write(templates, seed=6)
    reused = sum(pasts)
    pasts.clear()
    started = writer.write(templates, seed=6, prefixes=[d.prompt_prefix for d in decoded])
    assert started.mentions == whole.mentions and started.rejected == whole.rejected
    assert sum(pasts) == reused + sum(shared)  # every first prompt read its sentence from the decoder


def test_an_after_sentence_writer_goes_on_from_each_mention_it_drew_and_writes_as_if_it_encoded_it(
    after_sentence_writer_model, monkeypatch
):
    """With ``after-sentence``, a slot's prompt is the previous slot's, the mention drawn there and three ids: a row
    stays in the batch and is fed only what follows the ids it was fed (another try: the prompt's last id again),
    with the mentions and rejections of encoding each prompt on its own."""
    import hf_ecg.runtime.mention_runner as mention_runner
    import hf_ecg.runtime.mention_writer as mention_writer

    writer = load_writer(after_sentence_writer_model, batch_size=3, max_attempts=4)
    templates = [
        Template(("<Chemical>", "cures", "<Disease>", "and", "<Chemical>", ".")),
        Template(("Patients", "with", "<Disease>", "received", "<Chemical>", ".")),
        Template(("<Disease>", "after", "<Chemical>", ".")),
        Template(("No", "effect", ".")),
    ] * 2
    prefills, forced = [], []

    def recording(model, cache, prompts, past, kept, pad_id):  # the real prefill, recording how many prompts
        prefills.extend(prompts)
        return encode_after_prefixes(model, cache, prompts, past, kept, pad_id)

    going_on = mention_writer.RowBatch.go_on

    def recording_go_on(batch, row, fed, ids):  # the real one, recording the ids a row is fed
        forced.append(list(ids))
        return going_on(batch, row, fed, ids)

    monkeypatch.setattr(mention_runner, "encode_after_prefixes", recording)
    monkeypatch.setattr(mention_writer.RowBatch, "go_on", recording_go_on)
    in_batch = writer.write(templates, seed=4)
    assert len(prefills) == 6  # only each template's first prompt is encoded apart (two have no slot)
    tries = in_batch.written + sum(in_batch.rejected.values())
    assert len(forced) == tries - 6  # every later try went on in the batch
    assert in_batch.written >= 10 and in_batch.redrawn >= 1
    # a later slot's prompt, after an answer the tokenizer writes alike: <ENDTEXT> <|question|> tag <|answer|>;
    # another try: the prompt's last id
    assert sum(len(ids) == 4 for ids in forced) >= (in_batch.written - 6) // 2
    assert sum(len(ids) == 1 for ids in forced) == in_batch.redrawn

    prefills.clear()
    monkeypatch.setattr(mention_writer.MentionWriter, "_continue_in_batch", False)
    apart = writer.write(templates, seed=4)
    assert len(prefills) == tries  # the reference: each try's prompt encoded apart
    assert in_batch.mentions == apart.mentions and in_batch.rejected == apart.rejected


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(0, 10_000), min_size=1, max_size=12))
def test_an_answer_holds_at_least_the_words_the_writer_counts_before_it_ends(writer_model, draws):
    """The early stop's count (a try stops once it holds more words than its type's longest training mention) never
    exceeds the words the finished mention would have: stopping early rejects only tries that would be rejected."""
    writer = load_writer(writer_model)
    vocabulary = sorted(set(range(len(writer.tokenizer))) - set(writer.runner.banned) - {writer.endtext_id})
    ids = [vocabulary[d % len(vocabulary)] for d in draws]
    text = writer.tokenizer.decode(ids, skip_special_tokens=True, clean_up_tokenization_spaces=False)
    assert writer.rules.words_at_least(ids) <= len(writer.rules.split_words(text))


def test_a_try_longer_than_its_types_longest_training_mention_stops_there(writer_model):
    """A model pushed never to end its mention and to begin a word at every token: each try stops at one word more
    than its type's longest training mention (not at the token limit) and is rejected as too long."""
    writer = load_writer(writer_model, max_attempts=2)
    vocab = writer.tokenizer.get_vocab()
    word = next(i for token, i in sorted(vocab.items()) if token[:1] == "Ġ" and token[1:].isalpha())
    bonus = torch.zeros(len(writer.tokenizer))
    bonus[word], bonus[writer.endtext_id] = 50.0, -50.0
    handle = writer.model.get_output_embeddings().register_forward_hook(lambda module, inputs, out: out + bonus)
    answers = []
    judge = writer.rules.judge
    writer.rules.judge = lambda ids, label: answers.append((label, list(ids))) or judge(ids, label)
    try:
        result = writer.write([Template(("<Chemical>", "cures", "<Disease>", "."))] * 2, seed=1)
    finally:
        handle.remove()
    assert result.written == 0 and result.rejected == {"too long": 8}
    assert {(label, len(ids)) for label, ids in answers} == {
        (label, writer.rules.max_words[label] + 1) for label in ("Chemical", "Disease")
    }
    # the token limit alone would have stopped them later: max_tokens + 1 ids
    assert min(writer.rules.max_words.values()) + 1 < writer.rules.max_tokens + 1


@pytest.mark.parametrize("batch_size", [1, 2, 64])
def test_tries_that_join_a_batch_still_writing_are_each_counted_once(writer_model, batch_size):
    """Whatever the batch (rows joining the ones still writing at 2, one row at a time at 1): every slot is written
    or left to the bank after max_attempts rejected tries, and each rejected try is counted once."""
    templates = [
        Template(("<Chemical>", "cures", "<Disease>", "and", "<Chemical>", "in", "<Disease>", ".")),
        Template(("No", "effect", ".")),
        Template(("<Disease>", ".")),
        Template(("Patients", "with", "<Disease>", "received", "<Chemical>", ".")),
    ] * 3
    writer = load_writer(writer_model, batch_size=batch_size, max_attempts=2)
    result = writer.write(templates, seed=4)
    left = sum(m is None for row in result.mentions for m in row)
    assert [len(row) for row in result.mentions] == [len(t.entity_types) for t in templates]
    assert result.written + left == result.slots == 21
    assert sum(result.rejected.values()) == result.redrawn + left  # a slot left to the bank failed both tries
    assert result.redrawn <= result.slots  # one try drawn again per slot at most
    assert writer.write(templates, seed=4).mentions == result.mentions


def test_a_slots_prompt_holds_the_mentions_written_before_it_and_the_tags_after_it(writer_model):
    writer = load_writer(writer_model)
    template = Template(("<Chemical>", "cures", "<Disease>", "and", "<Chemical>", "."))
    text = writer.tokenizer.decode(writer.prompt(template, [("Aspirin",), None, None], 1))
    assert text.replace(" ", "").endswith(
        f"Aspirincures{MENTION_TOKEN}and<Chemical>.<|question|><Disease><|answer|>".replace(" ", "")
    )


def test_a_writer_refuses_a_model_not_trained_with_mention_samples(model_dir, tmp_path, capsys):
    with pytest.raises(ValueError, match="mention_samples"):
        load_writer(model_dir)
    code = main(
        ["generate", "--model", str(model_dir), "--output", str(tmp_path / "o"), "-n", "2", "--mentions", "generated"]
    )
    assert code == 2 and "mention_samples" in capsys.readouterr().err
    assert not (tmp_path / "o").exists()


def test_generated_mentions_fill_every_requested_entity_and_the_manifest_says_so(writer_model, tmp_path, capsys):
    out = tmp_path / "gen"
    code = main(
        [
            "generate",
            "--model",
            str(writer_model),
            "--output",
            str(out),
            "-n",
            "10",
            "--seed",
            "2",
            "--mentions",
            "generated",
            "--samples-per-shard",
            "4",
            "--max-block-tokens",
            "12",
        ]
    )
    printed = capsys.readouterr()
    assert code == 0, printed.err
    assert "the generator wrote" in printed.out and "not in the training mention bank" in printed.out
    rows = datasets.load_dataset(str(out), split="train", cache_dir=str(tmp_path / "cache"))
    labels = rows.features["ner_tags"].feature.names
    for row in rows:
        spans, _ = tags_to_spans([labels[t] for t in row["ner_tags"]], "IOB2", strict=True)
        assert [s.label for s in spans] == row["entities"]
    manifest = json.loads((out / "ecg_generation.json").read_text())
    assert manifest["mentions"]["source"] == "generated"
    writing = manifest["mention_writing"]
    assert writing["slots"] == sum(len(e) for e in rows["entities"])
    assert 0 <= writing["written"] <= writing["slots"] and "rejected" in writing
    assert "mention_novelty" in manifest
    card = (out / "README.md").read_text()
    assert "written by the generator" in card
    # the same command resumes (the writing record is not a setting) and changes nothing
    before = sorted(p.read_bytes() for p in (out / "data").glob("*.parquet"))
    assert (
        main(
            [
                "generate",
                "--model",
                str(writer_model),
                "--output",
                str(out),
                "-n",
                "10",
                "--seed",
                "2",
                "--mentions",
                "generated",
                "--samples-per-shard",
                "4",
                "--max-block-tokens",
                "12",
            ]
        )
        == 0
    )
    assert sorted(p.read_bytes() for p in (out / "data").glob("*.parquet")) == before


def test_the_pipeline_writes_mentions_when_asked(writer_model):
    from hf_ecg.modeling import load_ecg_model

    model, tokenizer, config = load_ecg_model(writer_model)
    gen = EntityControlledGenerationPipeline(
        model=model, tokenizer=tokenizer, ecg_config=config, device="cpu", max_block_tokens=12
    )
    first = gen(["Chemical", "Disease"], num_return_sequences=3, seed=4, mentions="generated")
    again = gen(["Chemical", "Disease"], num_return_sequences=3, seed=4, mentions="generated")
    assert first == again
    for sample in first:
        labels = [t for t in sample["ner_tags"] if t.startswith("B-")]
        assert labels == ["B-Chemical", "B-Disease"]


def test_the_pipeline_writes_what_generate_dataset_writes_at_a_temperature_other_than_1(writer_model, tmp_path):
    """Options and seeds routed once: the same model, requests, seed and settings give the same samples,
    templates and written mentions, from the pipeline (one chunk) and from ``generate_dataset`` (one shard)."""
    from hf_ecg.data.dataset_format import load_data_folder
    from hf_ecg.modeling import load_ecg_model

    settings = {"temperature": 0.8, "top_p": 0.95, "max_block_tokens": 12, "batch_size": 3}
    requests = [["Chemical", "Disease"], ["Disease"], []]
    out = generate_dataset(
        writer_model,
        tmp_path / "set",
        6,
        entities=[r for r in requests for _ in range(2)],
        seed=11,
        decoding=DecodingConfig(**settings),
        run=DatasetRunConfig(samples_per_shard=6, dtype="float32", progress_bar=False),
    )
    written = load_data_folder(out).sort("id")
    names = written.features["ner_tags"].feature.names
    model, tokenizer, config = load_ecg_model(writer_model)
    gen = EntityControlledGenerationPipeline(model=model, tokenizer=tokenizer, ecg_config=config, device="cpu")
    samples = [s for group in gen(requests, num_return_sequences=2, seed=11, **settings) for s in group]
    assert [s["template"] for s in samples] == written["template"]
    assert [s["text"] for s in samples] == written["text"]
    assert [s["ner_tags"] for s in samples] == [[names[k] for k in row] for row in written["ner_tags"]]
    assert [s["mention_sources"] for s in samples] == written["mention_sources"]
    assert "generated" in {origin for s in samples for origin in s["mention_sources"]}  # mentions were written
    at_1 = [s for g in gen(requests, num_return_sequences=2, seed=11, **{**settings, "temperature": 1.0}) for s in g]
    assert [s["text"] for s in at_1] != written["text"]  # the temperature reaches the samples


def test_greedy_and_top_k_reach_the_written_mentions(writer_model):
    """One set of sampling settings for templates and mentions: without sampling the mentions are the most likely
    ones whatever the seed, and top-k 1 at any temperature writes those same mentions; sampled at a high
    temperature they vary with the seed."""
    templates = [
        Template(("<Chemical>", "cures", "<Disease>", ".")),
        Template(("Patients", "with", "<Disease>", "received", "<Chemical>", ".")),
    ] * 3
    greedy = load_writer(writer_model, sampling=SamplingParams(do_sample=False))
    assert greedy.max_attempts == 1  # a greedy try would repeat itself
    most_likely = greedy.write(templates, seed=1).mentions
    assert any(mention is not None for row in most_likely for mention in row)
    assert greedy.write(templates, seed=2).mentions == most_likely
    top_1 = load_writer(writer_model, sampling=SamplingParams(temperature=5.0, top_k=1))
    assert top_1.write(templates, seed=1).mentions == top_1.write(templates, seed=2).mentions == most_likely
    hot = load_writer(writer_model, sampling=SamplingParams(temperature=2.0, top_k=0))
    assert hot.write(templates, seed=1).mentions != hot.write(templates, seed=2).mentions


def test_the_pipelines_greedy_decoding_is_greedy_for_mentions_too(writer_model):
    """``do_sample=False`` reaches the template decoder and the mention writer: the seed changes nothing."""
    from hf_ecg.modeling import load_ecg_model

    model, tokenizer, config = load_ecg_model(writer_model)
    gen = EntityControlledGenerationPipeline(model=model, tokenizer=tokenizer, ecg_config=config, device="cpu")
    requests = [["Chemical", "Disease"], ["Disease", "Chemical"]]
    runs = [gen(requests, seed=seed, do_sample=False, max_block_tokens=12) for seed in (1, 2)]
    assert runs[0] == runs[1]
    assert "generated" in {origin for group in runs[0] for s in group for origin in s["mention_sources"]}
    sampled = [gen(requests, seed=seed, temperature=5.0, max_block_tokens=12) for seed in (1, 2)]
    assert sampled[0] != sampled[1]


def writer_calls(monkeypatch) -> list[int]:
    """The number of templates of each :meth:`MentionWriter.write` call from now on (the real writer runs)."""
    calls: list[int] = []
    real_write = MentionWriter.write

    def counting(self, templates, *args, **kwargs):
        calls.append(len(templates))
        return real_write(self, templates, *args, **kwargs)

    monkeypatch.setattr(MentionWriter, "write", counting)
    return calls


def test_the_pipeline_fills_its_chunks_in_the_groups_generate_dataset_writes_its_shards_in(
    writer_model, tmp_path, monkeypatch
):
    """Several chunks: the pipeline fills them in the groups of shards ``generate_dataset`` writes mentions for in one
    call (here two of three chunks, then the third), and gives its samples."""
    import hf_ecg.runtime.engine as engine_module
    from hf_ecg.data.dataset_format import load_data_folder
    from hf_ecg.modeling import load_ecg_model

    monkeypatch.setattr(engine_module, "MAX_KEPT_PREFIXES", 8)
    calls = writer_calls(monkeypatch)
    settings = {"temperature": 3.0, "max_block_tokens": 10, "batch_size": 2}
    requests = [["Chemical", "Disease"], ["Disease"], ["Chemical"], ["Disease", "Chemical"], ["Chemical"]]
    out = generate_dataset(
        writer_model,
        tmp_path / "set",
        10,
        entities=[r for r in requests for _ in range(2)],
        seed=3,
        decoding=DecodingConfig(**settings),
        run=DatasetRunConfig(samples_per_shard=4, dtype="float32", progress_bar=False),
    )
    assert calls == [8, 2]
    written = load_data_folder(out).sort("id")
    model, tokenizer, config = load_ecg_model(writer_model)
    gen = EntityControlledGenerationPipeline(model=model, tokenizer=tokenizer, ecg_config=config, device="cpu")
    calls.clear()
    samples = [s for group in gen(requests, num_return_sequences=2, seed=3, **settings) for s in group]
    assert calls == [8, 2]
    assert [s["text"] for s in samples] == written["text"]
    assert [s["mention_sources"] for s in samples] == written["mention_sources"]


def test_generate_dataset_writes_the_mentions_of_several_shards_in_one_call_and_each_shard_as_alone(
    writer_model, tmp_path, monkeypatch
):
    """The writer takes the templates of up to MAX_KEPT_PREFIXES samples (several shards) in one call; every shard
    comes out as it does when written alone, also when a run killed between two shards of a group resumes."""
    import hf_ecg.runtime.engine as engine_module
    import hf_ecg.synthetic.writer as generate_module
    from hf_ecg.data.dataset_format import load_data_folder

    calls = writer_calls(monkeypatch)
    settings = {
        "seed": 4,
        # a high temperature: the toy writer's mentions vary with the numbers drawn, so another stream shows
        "decoding": DecodingConfig(max_block_tokens=10, batch_size=3, temperature=3.0),
        "run": DatasetRunConfig(samples_per_shard=3, dtype="float32", progress_bar=False),
    }
    monkeypatch.setattr(engine_module, "MAX_KEPT_PREFIXES", 3)  # a shard a call
    alone = load_data_folder(generate_dataset(writer_model, tmp_path / "alone", 11, **settings)).sort("id")
    assert calls == [3, 3, 3, 2]
    calls.clear()
    monkeypatch.setattr(engine_module, "MAX_KEPT_PREFIXES", 9)  # three shards a call
    together = load_data_folder(generate_dataset(writer_model, tmp_path / "together", 11, **settings)).sort("id")
    assert calls == [9, 2]
    assert together.to_list() == alone.to_list()
    assert "generated" in {origin for row in together["mention_sources"] for origin in row}

    real_save = generate_module.write_shard
    saved = []

    def crash_after_one(rows, features, data_dir, shard, rank):
        if saved:
            raise KeyboardInterrupt  # killed between the first and the second shard of a group
        saved.append(shard)
        real_save(rows, features, data_dir, shard, rank)

    calls.clear()
    monkeypatch.setattr(generate_module, "write_shard", crash_after_one)
    with pytest.raises(KeyboardInterrupt):
        generate_dataset(writer_model, tmp_path / "resumed", 11, **settings)
    monkeypatch.setattr(generate_module, "write_shard", real_save)
    resumed = load_data_folder(generate_dataset(writer_model, tmp_path / "resumed", 11, **settings)).sort("id")
    assert calls == [9, 9, 2]  # shards 0-2 together (killed after saving shard 0), again in the resumed run, then 3
    assert resumed.to_list() == alone.to_list()


def test_generate_dataset_rejects_generated_mentions_for_a_model_without_them(model_dir, tmp_path):
    with pytest.raises(ValueError, match="mention_samples"):
        generate_dataset(
            model_dir, tmp_path / "x", 2, mentions="generated", decoding=DecodingConfig(max_block_tokens=6)
        )


@pytest.mark.parametrize(("flags", "expected"), [([], True), (["--no-mention-samples"], False)])
def test_cli_train_takes_mention_samples_as_a_named_flag(flags, expected, tmp_path):
    from hf_ecg.cli import build_parser
    from hf_ecg.cli.train import _training_arguments

    args = build_parser().parse_args(["train", "--data", "d.tsv", "--model", "m", "--output", str(tmp_path), *flags])
    assert _training_arguments(args, []).mention_samples is expected
    assert _training_arguments(args, ["--mention_samples", "false"]).mention_samples is False


@pytest.mark.parametrize(
    ("words", "loose"),
    [
        (("pain", "-"), True),
        (("L", "-", "dopa", ","), True),
        ((",", "fever"), True),
        (("fever",), False),
        (("IL-2", "receptor", "(", "IL-2R", ")"), False),
        (("PD", ")"), True),
        (("-induced",), False),
    ],
)
def test_a_mention_that_runs_past_the_name_is_rejected(words, loose):
    from hf_ecg.runtime.mention_rules import loose_edge

    assert loose_edge(words) is loose


def test_a_training_mention_written_for_another_types_slot_is_rejected(writer_model):
    from hf_ecg.runtime.blocks import ENDTEXT as END
    from hf_ecg.runtime.mentions import MentionBank

    writer = load_writer(writer_model, known=MentionBank.from_lists({"Chemical": ["Aspirin"], "Disease": ["fever"]}))
    ids = writer.tokenizer("aspirin", add_special_tokens=False)["input_ids"] + [
        writer.tokenizer.convert_tokens_to_ids(END)
    ]
    assert writer.rules.judge(ids, "Disease") == (None, "another type's mention")  # case folded
    assert writer.rules.judge(ids, "Chemical") == (("aspirin",), "")
    new = writer.tokenizer("migraine", add_special_tokens=False)["input_ids"] + ids[-1:]
    assert writer.rules.judge(new, "Disease") == (("migraine",), "")  # a new name is not checked here


def test_given_mentions_are_kept_read_in_context_and_not_counted(writer_model):
    writer = load_writer(writer_model)
    templates = [Template(("<Chemical>", "cures", "<Disease>", "."))] * 6
    given = [[("Aspirin",), None], [None, ("fever",)], [("Aspirin",), ("fever",)]] * 2
    result = writer.write(templates, seed=2, given=given)
    assert result.slots == 4  # only the None slots are written and counted
    for row, kept in zip(result.mentions, given, strict=True):
        assert all(k is None or m == k for m, k in zip(row, kept, strict=True))
    assert result.written == sum(
        m is not None and k is None
        for row, g in zip(result.mentions, given, strict=True)
        for m, k in zip(row, g, strict=True)
    )
    # a slot written after a given one reads it in its prompt
    assert writer.prompt(templates[0], [("Aspirin",)], 1) != writer.prompt(templates[0], [None], 1)


def test_a_mixture_with_generated_mentions_writes_only_its_share(writer_model, tmp_path, capsys):
    diseases = tmp_path / "diseases.txt"
    diseases.write_text("acute asthma\nmigraine\n", encoding="utf-8")
    out = tmp_path / "mix"
    code = main(
        [
            "generate",
            "--model",
            str(writer_model),
            "--output",
            str(out),
            "-n",
            "16",
            "--seed",
            "1",
            "--mention-shares",
            "generated=1,lists=1",
            "--mentions",
            f"Disease={diseases}",
            "--max-block-tokens",
            "12",
        ]
    )
    printed = capsys.readouterr()
    assert code == 0, printed.err
    rows = datasets.load_dataset(str(out), split="train", cache_dir=str(tmp_path / "cache"))
    origins = []
    for row in rows:
        assert [s["label"] for s in row["spans"]] == row["entities"]
        for span, origin in zip(row["spans"], row["mention_sources"], strict=True):
            words = row["text"][span["start"] : span["end"]]
            if origin == "lists":
                assert span["label"] == "Disease" and words in {"acute asthma", "migraine"}
            origins.append(origin)
    manifest = json.loads((out / "ecg_generation.json").read_text())
    assert manifest["mentions"]["source"] == "mixture" and manifest["mentions"]["shares"] == {
        "generated": 0.5,
        "lists": 0.5,
    }
    writing = manifest["mention_writing"]
    assert writing["written"] == origins.count("generated") > 0
    assert writing["slots"] < len(origins)  # the lists' share was not written
    assert "lists" in origins and manifest["mention_sources"]["generated"] == origins.count("generated")
    card = " ".join((out / "README.md").read_text().split())
    assert "% of the slots written by the generator for the slot in its sentence" in card


def test_the_writer_can_write_the_longest_training_mention(after_sentence_writer_model):
    """An answer is the mention's ids, the space token text tokenization puts before ``<ENDTEXT>``, then
    ``<ENDTEXT>``: the token limit leaves room for all three, so the longest training mention can end."""
    writer = load_writer(after_sentence_writer_model, batch_size=3)
    longest = writer.tokenizer("paracetamol", add_special_tokens=False)["input_ids"]
    assert len(longest) == writer.ecg_config.mention_max_tokens  # the toy corpus's longest mention in tokens
    written = writer.write([Template(("Patients", "with", "<Disease>", "received", "<Chemical>", "."))] * 3, seed=4)
    assert ("paracetamol",) in [mentions[1] for mentions in written.mentions]


class _Fixed:
    """A random stream that returns the given uniform numbers (the sampler takes one per row)."""

    def __init__(self, value: float) -> None:
        self.value = value

    def random(self) -> float:
        return self.value


@settings(max_examples=80, deadline=None)
@given(
    st.lists(st.floats(-30, 30), min_size=8, max_size=8),
    st.lists(st.booleans(), min_size=8, max_size=8),
    st.one_of(st.floats(0, 1, exclude_max=True), st.just(1 - 2**-53), st.just(0.0)),
    st.booleans(),
)
def test_the_writers_sampler_draws_the_token_whose_share_of_the_distribution_holds_the_uniform_number(
    writer_model, scores, allowed, uniform, may_end
):
    """Inverse-CDF sampling: with uniform number ``u`` the token drawn is the one whose interval of the cumulated
    probabilities holds ``u`` (up to float32 rounding at the interval's edges); never a banned token, never
    ``<ENDTEXT>`` where it may not end, never a token of probability zero, even for ``u`` just under one."""
    writer = _sampling_writer(writer_model)
    vocab = writer.model.get_output_embeddings().weight.shape[0]
    candidates = [i for i in range(vocab) if i not in set(writer.runner.banned)][-8:]  # the last allowed ids: the edge
    assume(any(ok and (may_end or token != writer.endtext_id) for token, ok in zip(candidates, allowed, strict=True)))
    logits = torch.full((1, vocab), -float("inf"))
    for token, score, ok in zip(candidates, scores, allowed, strict=True):
        if ok:
            logits[0, token] = score
    (token,) = writer.runner.sample(logits, [0], [_Fixed(uniform)], [may_end])
    assert token in candidates and logits[0, token] > -float("inf") and token not in writer.runner.banned
    assert may_end or token != writer.endtext_id
    probabilities = torch.softmax(logits[0].double(), -1)
    if not may_end:
        probabilities[writer.endtext_id] = 0
        probabilities /= probabilities.sum()
    below, upto = float(probabilities[:token].sum()), float(probabilities[: token + 1].sum())
    assert below - 1e-5 <= uniform <= upto + 1e-5


_SAMPLING_WRITERS: dict[Path, MentionWriter] = {}


def _sampling_writer(model_dir: Path) -> MentionWriter:
    if model_dir not in _SAMPLING_WRITERS:
        # top-k 0: the cumulated probabilities run in vocabulary order (top-k runs them over the k best, best first)
        _SAMPLING_WRITERS[model_dir] = load_writer(model_dir, sampling=SamplingParams(top_k=0))
    return _SAMPLING_WRITERS[model_dir]
