"""Generation: decoder, filling, pipeline, generate_dataset, `hf-ecg generate` (tiny untrained GPT-2)."""

from __future__ import annotations

import json
import logging
import math
import os
import subprocess
import sys
from collections import Counter
from dataclasses import replace
from pathlib import Path

import datasets
import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st
from transformers import pipeline

import hf_ecg
from hf_ecg.cli import main
from hf_ecg.runtime.blocks import ANSWER_TOKEN, CONTEXT_TOKEN, ENDTEXT, QUESTION_TOKEN, tag_label
from hf_ecg.runtime.decoding import ChainedDecoder, DecodedTemplate, DecodingConfig
from hf_ecg.runtime.decoding_base import Row
from hf_ecg.runtime.decoding_cache import PASS_OVERHEAD_TOKENS, SlotLayer, length_groups, live_columns
from hf_ecg.runtime.ecg_config import ECGConfig
from hf_ecg.runtime.filling import MentionFiller
from hf_ecg.runtime.mentions import MentionBank
from hf_ecg.runtime.pipeline import EntityControlledGenerationPipeline
from hf_ecg.runtime.tags import tags_to_spans
from hf_ecg.runtime.words import WordSplitter, has_repetition, sentence_breaks
from hf_ecg.synthetic.generate import UNDERTRAINED_REFUSED_SHARE, align_labels, bio_labels, cost_line, generate_dataset
from tiny import save_tiny_ecg_model, tiny_ecg_model

TYPES = ("Chemical", "Disease", "Gene")
MENTIONS = {"Chemical": ["aspirin", "acetyl salicylic acid"], "Disease": ["fever", "severe pain"], "Gene": ["BRCA1"]}


@pytest.fixture(scope="module")
def tiny():
    return tiny_ecg_model(TYPES)


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory):
    """A saved tiny ECG model with a mention bank and corpus statistics, as `hf-ecg train` writes it."""
    return save_tiny_ecg_model(tmp_path_factory.mktemp("tiny-ecg"), TYPES, MENTIONS)


@pytest.fixture(scope="module")
def gen(tiny):
    model, tokenizer, config = tiny
    config.mention_bank = MentionBank.from_lists(MENTIONS).to_dict()
    return EntityControlledGenerationPipeline(
        model=model, tokenizer=tokenizer, ecg_config=config, device="cpu", max_block_tokens=8, max_attempts=2
    )  # an untrained model rarely ends a block itself: keep blocks short and their tries few


def entity_types_of(sample: dict) -> list[str]:
    spans, _ = tags_to_spans(sample["ner_tags"], "IOB2", strict=True)
    return [span.label for span in spans]


requests = st.lists(st.lists(st.sampled_from(TYPES), max_size=4), min_size=1, max_size=5)


@given(
    sequences=requests,
    batch_size=st.integers(1, 4),
    max_block_tokens=st.integers(1, 8),
    seed=st.integers(0, 2**32),
)
def test_every_sample_carries_exactly_the_requested_entities(gen, sequences, batch_size, max_block_tokens, seed):
    out = gen(sequences, batch_size=batch_size, max_block_tokens=max_block_tokens, seed=seed)
    assert len(out) == len(sequences)
    for request, (sample,) in zip(sequences, out, strict=True):
        assert sample["entities"] == request
        assert entity_types_of(sample) == request  # the BIO spans: these types, in this order
        assert len(sample["tokens"]) == len(sample["ner_tags"])
        assert sample["tokens"] or sample["forced_tags"]  # empty only when the block limit ended it
        assert sample["text"] == " ".join(sample["tokens"])
        assert [tag_label(t) for t in sample["template"].split(" ") if tag_label(t)] == request
        assert 0 <= sample["forced_tags"] <= len(request) + 1


def test_sequential_mode_also_returns_the_requested_entities(gen):
    sequences = [["Gene", "Chemical"], [], ["Disease"]]
    out = gen(sequences, mode="sequential", max_block_tokens=4, max_attempts=2, seed=3)
    assert [entity_types_of(s) for (s,) in out] == sequences


def naive_greedy(model, tokenizer, config, sequence, max_block_tokens, block_end, end_at_sentence_end=False):
    """Reference: one row, the whole prompt re-encoded every step, no cache, the same constraint."""
    vocab = tokenizer.get_vocab()
    tags = {vocab[t] for t in config.tag_tokens.values()} | {vocab[ENDTEXT]}
    banned = sorted(tags | {vocab[CONTEXT_TOKEN], vocab[QUESTION_TOKEN], vocab[ANSWER_TOKEN]} | set(
        tokenizer.all_special_ids))  # fmt: skip
    words: list[str] = []
    for k, target in enumerate([*(config.tag_tokens[t] for t in sequence), ENDTEXT]):
        context = tokenizer(" ".join(words), add_special_tokens=False)["input_ids"] if words else []
        ids = [vocab[CONTEXT_TOKEN], *context, vocab[QUESTION_TOKEN], vocab[target], vocab[ANSWER_TOKEN]]
        block: list[int] = []
        while True:
            with torch.no_grad():
                logits = model(torch.tensor([ids + block])).logits[0, -1].clone()
            # "target": only the requested tag may end the block; "any-stop": every tag and <ENDTEXT> may
            allowed = sorted(tags) if block_end == "any-stop" else [vocab[target]]
            keep = logits[allowed].clone()
            logits[banned] = -float("inf")
            logits[allowed] = keep
            if len(block) + 1 >= max_block_tokens:
                token = vocab[target]
            elif target == ENDTEXT and not may_end(tokenizer, words, block, end_at_sentence_end):
                logits[allowed] = -float("inf")
                token = int(logits.argmax())
            else:
                token = int(logits.argmax())
            if token in allowed:
                break
            block.append(token)
        text = tokenizer.decode(block, skip_special_tokens=True, clean_up_tokenization_spaces=False)
        words += [w for w in WordSplitter(config.word_exceptions)(text) if tag_label(w) is None and w != ENDTEXT]
        if k < len(sequence):
            words.append(target)
    return tuple(words)


def may_end(tokenizer, words, block, end_at_sentence_end):
    """The reference's reading of when a sentence may end: not empty, and after '.', '!' or '?' when asked."""
    text = tokenizer.decode(block, skip_special_tokens=True, clean_up_tokenization_spaces=False)
    so_far = [*words, *(w for w in WordSplitter()(text) if tag_label(w) is None and w != ENDTEXT)]
    if not so_far:
        return False
    return not end_at_sentence_end or so_far[-1] in {".", "!", "?"}


@pytest.mark.parametrize(
    ("block_end", "headroom", "end_at_sentence_end"),
    [("target", 64, False), ("any-stop", 64, False), ("target", 1, False), ("target", 64, True)],
)
def test_batched_cache_decoding_equals_naive_decoding(tiny, block_end, headroom, end_at_sentence_end, monkeypatch):
    """Right-aligned slots, refills, trimming, compaction and the cache buffer's re-layouts (every
    step at headroom 1) change nothing: greedy output equals re-encoding every prompt from scratch."""
    monkeypatch.setattr(SlotLayer, "HEADROOM", headroom)
    model, tokenizer, config = tiny
    sequences = [("Chemical", "Disease"), (), ("Gene",), ("Disease", "Disease", "Chemical"), ("Chemical",)] * 2
    settings = DecodingConfig(
        do_sample=False, batch_size=3, max_block_tokens=7, block_end=block_end, end_at_sentence_end=end_at_sentence_end
    )
    decoder = ChainedDecoder(model, tokenizer, config, settings)
    decoded = decoder.decode(sequences)
    for sequence, result in zip(sequences, decoded, strict=True):
        expected = naive_greedy(model, tokenizer, config, sequence, 7, block_end, end_at_sentence_end)
        assert result.template.tokens == expected
        if end_at_sentence_end:  # the sentence ended after '.', '!' or '?', or its last block was forced
            assert result.complete or result.forced_tags
    # later prompts were fed on top of the kept <|context|> prefix, not only the 1-token empty context
    assert decoder._reused_prompt_tokens > sum(len(sequence) for sequence in sequences)


def test_prefill_over_kept_prefixes_equals_prefill_from_scratch(tiny):
    """Rows whose prompts extend their last prompt's kept <|context|> prefix, by different lengths and
    beside a row whose context does not extend its last one, get the same logits and the same live
    keys/values as when every prompt is encoded in full."""
    model, tokenizer, config = tiny
    decoder = ChainedDecoder(model, tokenizer, config, DecodingConfig(do_sample=False))
    before = [["aspirin", "cures", "<Chemical>"], ["severe", "<Disease>"], [], ["no", "effect", "<Gene>"]]
    after = [[*before[0], "the", "<Disease>"], [*before[1], "in", "young", "rats", "<Gene>"], ["x", "<Gene>"],
             ["unrelated", "<Chemical>"]]  # fmt: skip
    targets = [decoder.tag_ids[t] for t in ("Disease", "Gene", "Chemical", "Disease")]
    captured = {}  # row index -> (logits, live keys/values per layer, cache entry, length)

    def capture(rows, logits, caches, lengths, generator, finish_block):
        for row, row_logits, (source, j, columns), length in zip(rows, logits, caches, lengths, strict=True):
            states = [(live_columns(layer.keys, j, length, columns), live_columns(layer.values, j, length, columns))
                      for layer in source.layers]  # fmt: skip
            captured[row.index] = (row_logits, states, (source, j, columns), length)
        return []

    decoder._begin_blocks = capture

    def prefill(rows, words):
        for row, w in zip(rows, words, strict=True):
            row.words = list(w)
        captured.clear()
        decoder._prefill(rows, torch.Generator(), None)
        return dict(captured)

    fresh = prefill([Row(i, [t, decoder.endtext_id]) for i, t in enumerate(targets)], after)
    assert decoder._reused_prompt_tokens == 0
    rows = [Row(i, [t, t, decoder.endtext_id]) for i, t in enumerate(targets)]
    prefill(rows, before)
    for index, (_, _, (source, j, columns), length) in captured.items():
        decoder._keep_prefix(rows[index], source, j, length, columns)  # as when block 1 ends
        rows[index].block = 1
    kept = prefill(rows, after)
    # rows 0 and 1 extend their context, row 2 had only <|context|>, row 3 starts over
    assert decoder._reused_prompt_tokens == sum(len(decoder._prompt_ids(w, 0)) - 3 for w in before[:3])
    for index in range(len(rows)):
        torch.testing.assert_close(kept[index][0], fresh[index][0], rtol=1e-4, atol=1e-4)
        for (k1, v1), (k2, v2) in zip(kept[index][1], fresh[index][1], strict=True):
            torch.testing.assert_close(k1, k2, rtol=1e-4, atol=1e-4)
            torch.testing.assert_close(v1, v2, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("max_block_tokens", [3, 40])
def test_the_constraint_as_a_logits_processor_keeps_generate_to_the_requested_tag(tiny, max_block_tokens):
    """model.generate() with the decoder's constraint: each row's block holds no structural token and ends
    on its own requested stop (by the model's choice, or forced at the limit)."""
    from transformers import LogitsProcessorList

    model, tokenizer, config = tiny
    decoder = ChainedDecoder(model, tokenizer, config, DecodingConfig())
    targets = ["Chemical", "Gene", None, "Disease"]
    prompts = [decoder.block_prompt([], t) for t in targets]  # each row's first block
    torch.manual_seed(0)
    out = model.generate(
        torch.tensor(prompts), attention_mask=torch.ones(len(prompts), len(prompts[0]), dtype=torch.long),
        logits_processor=LogitsProcessorList([decoder.logits_processor(targets, max_block_tokens=max_block_tokens)]),
        eos_token_id=decoder.stop_ids, pad_token_id=decoder.pad_id, max_new_tokens=max_block_tokens,
        do_sample=True, top_k=0,
    )  # fmt: skip
    banned = set(decoder.constraint.banned.tolist())
    for target, row in zip(targets, out[:, len(prompts[0]) :].tolist(), strict=True):
        expected = decoder.endtext_id if target is None else decoder.tag_ids[target]
        end = row.index(expected)  # the block ends on its own stop ...
        assert end < max_block_tokens and not banned & set(row[:end])  # ... with no structural token before it
    with pytest.raises(ValueError, match="unknown entity types"):
        decoder.logits_processor(["Protein"])


def test_top_k_one_sampling_is_greedy_decoding(tiny):
    model, tokenizer, config = tiny
    sequences = [("Chemical", "Disease"), (), ("Gene",), ("Disease", "Chemical")]
    greedy = ChainedDecoder(model, tokenizer, config, DecodingConfig(do_sample=False, max_block_tokens=7))
    top_one = ChainedDecoder(model, tokenizer, config, DecodingConfig(top_k=1, max_block_tokens=7, seed=5))
    assert [r.template for r in top_one.decode(sequences)] == [r.template for r in greedy.decode(sequences)]


def test_top_k_sampling_draws_only_the_k_best_tokens_in_their_proportions(tiny):
    model, tokenizer, config = tiny
    decoder = ChainedDecoder(model, tokenizer, config, DecodingConfig(top_k=2, temperature=0.5))
    target = decoder.tag_ids["Chemical"]
    rows = [Row(i, [target, decoder.endtext_id], words=["w"]) for i in range(4000)]
    logits = torch.full((len(rows), len(tokenizer)), -5.0)
    # at T=0.5, 41 is a third as likely as 40; 42, third best, would still be drawn a tenth of the time
    logits[:, 40], logits[:, 41], logits[:, 42] = 2.0, 2.0 - math.log(3) * 0.5, 1.2
    logits[:, target] = -30.0  # neither tag nor <ENDTEXT> competes
    drawn = Counter(decoder._sample(logits, rows, torch.Generator().manual_seed(0)))
    assert set(drawn) == {40, 41}
    assert abs(drawn[41] / len(rows) - 0.25) < 0.03  # 1 : 3 after temperature


def test_same_seed_same_samples_other_seed_other_samples(gen):
    first = gen([["Chemical"], ["Disease", "Gene"]], num_return_sequences=3, seed=11, max_block_tokens=6)
    again = gen([["Chemical"], ["Disease", "Gene"]], num_return_sequences=3, seed=11, max_block_tokens=6)
    other = gen([["Chemical"], ["Disease", "Gene"]], num_return_sequences=3, seed=12, max_block_tokens=6)
    assert first == again
    assert first != other


def test_a_block_at_its_token_limit_gets_its_tag_forced_and_counted(gen):
    (sample,) = gen(["Chemical", "Disease"], max_block_tokens=1, seed=0)
    assert sample["forced_tags"] == 3  # every block, <ENDTEXT> included
    assert sample["template"] == "<Chemical> <Disease>"


def test_a_block_at_its_limit_is_drawn_again_before_its_tag_is_forced(tiny):
    """An untrained model never ends a block itself: each block is drawn max_attempts times, then forced."""
    model, tokenizer, config = tiny
    sequences = [("Chemical", "Disease"), ("Gene",), ()] * 3
    for attempts in (1, 3):
        settings = DecodingConfig(batch_size=4, max_block_tokens=4, max_attempts=attempts, seed=1, redraw_budget=None)
        decoded = ChainedDecoder(model, tokenizer, config, settings).decode(sequences)
        for sequence, result in zip(sequences, decoded, strict=True):
            assert result.entities == sequence and result.template.entity_types == sequence
            blocks = len(sequence) + 1
            # a forced block used every try; a block the model ended itself used at least one
            assert result.forced_tags * attempts + (blocks - result.forced_tags) <= result.attempts
            assert result.attempts <= attempts * blocks
            assert result.num_tokens <= 4 * blocks  # tokens of the kept blocks only
        total_blocks = sum(len(sequence) + 1 for sequence in sequences)
        assert (sum(r.attempts for r in decoded) > total_blocks) == (attempts > 1)  # blocks were drawn again


@pytest.mark.parametrize("mode", ["batched", "sequential"])
def test_the_redraw_budget_bounds_the_tokens_thrown_away(tiny, mode):
    """An untrained model never ends a block itself: with no bound every block is drawn max_attempts times;
    under a budget the redrawn tokens stay within ratio x kept + allowance + one block, the redraws it refused
    are counted, and every sample still carries exactly its requested entities."""
    model, tokenizer, config = tiny
    sequences = [("Chemical", "Disease"), ("Gene",), ()] * 4

    def run(budget: float | None) -> tuple[list, ChainedDecoder]:
        settings = DecodingConfig(mode=mode, batch_size=4, max_block_tokens=4, max_attempts=6, seed=1,
                                  redraw_budget=budget)  # fmt: skip
        decoder = ChainedDecoder(model, tokenizer, config, settings)
        return decoder.decode(sequences), decoder

    free, unbounded = run(None)
    capped, bounded = run(0.5)
    kept, redrawn = sum(r.num_tokens for r in capped), sum(r.discarded_tokens for r in capped)
    assert (bounded.budget.kept, bounded.budget.redrawn) == (kept, redrawn)
    assert redrawn <= 0.5 * kept + bounded.budget.allowance + 4
    assert sum(r.discarded_tokens for r in free) > 2 * redrawn
    assert unbounded.budget.refused == 0 and sum(r.refused_redraws for r in free) == 0
    assert sum(r.refused_redraws for r in capped) == bounded.budget.refused > 0
    for sequence, result in zip(sequences, capped, strict=True):
        assert result.entities == sequence and result.template.entity_types == sequence


def test_blocks_that_leave_a_fragment_or_loop_are_drawn_again(tiny):
    """A model pushed towards ending its blocks, ',' and '.': without the redraw rules some sentences stop
    after ',' and some blocks loop (', , ,'); with them (the default) every sentence ends with '.' and none
    loops, in both procedures, and each sample still carries exactly its requested entities."""
    model, tokenizer, config = tiny
    vocab = tokenizer.get_vocab()
    bonus = torch.zeros(model.get_output_embeddings().weight.shape[0])
    for token in [ENDTEXT, *config.tag_tokens.values()]:
        bonus[vocab[token]] = 5.5
    bonus[vocab[","]], bonus[vocab["."]] = 6.4, 6.0
    handle = model.get_output_embeddings().register_forward_hook(lambda module, inputs, output: output + bonus)
    sequences = [("Chemical",), ("Disease", "Gene"), ()] * 6
    try:

        def run(mode: str = "batched", ecg_config: ECGConfig = config, **redraw: bool) -> list:
            settings = DecodingConfig(
                mode=mode, batch_size=4, max_block_tokens=16, max_attempts=60, seed=2, redraw_budget=None, **redraw
            )
            decoded = ChainedDecoder(model, tokenizer, ecg_config, settings).decode(sequences)
            assert [r.template.entity_types for r in decoded] == sequences
            return decoded

        plain = run(redraw_unended=False, redraw_repetition=False)
        assert not all(r.complete for r in plain)
        assert any(has_repetition(r.template.tokens) for r in plain)
        for mode in ("batched", "sequential"):
            redrawn = run(mode)
            assert all(r.complete and r.template.tokens[-1] == "." for r in redrawn), mode
            assert not any(has_repetition(r.template.tokens) for r in redrawn), mode
            assert sum(r.attempts for r in redrawn) > sum(r.attempts for r in plain)
        # a corpus whose sentences often end on a word (tweets): redraw_unended does not apply, the loop rule does
        tweets = run(ecg_config=replace(config, unended_share=0.46))
        assert not all(r.complete for r in tweets)
        assert not any(has_repetition(r.template.tokens) for r in tweets)
        assert all(r.complete for r in run(ecg_config=replace(config, unended_share=0.01)))
    finally:
        handle.remove()


def test_a_block_that_begins_a_second_sentence_is_drawn_again(tiny):
    """A model pushed towards '.' and 'No': without redraw_run_on some samples hold a second sentence
    ('. No', '. <Gene>'); with it, for a model whose training sentences never do (sentence_breaks), none
    does, in both procedures, entities exact. A model trained before the statistic was recorded, or
    one trained on text full of them (tweets), keeps the old behaviour."""
    model, tokenizer, config = tiny
    vocab = tokenizer.get_vocab()
    bonus = torch.zeros(model.get_output_embeddings().weight.shape[0])
    for token in [ENDTEXT, *config.tag_tokens.values()]:
        bonus[vocab[token]] = 5.0
    bonus[vocab["."]], bonus[vocab["ĠNo"]] = 6.0, 5.5
    handle = model.get_output_embeddings().register_forward_hook(lambda module, inputs, output: output + bonus)
    sequences = [("Chemical",), ("Disease", "Gene"), ()] * 6
    split_corpus = replace(config, sentence_breaks={"capital": 0.0, "digit": 0.0, "entity": 0.0})
    tweets = replace(config, sentence_breaks={"capital": 0.37, "digit": 0.01, "entity": 0.03})

    def breaks(result: DecodedTemplate) -> list[int]:
        tokens = result.template.tokens
        entities = {i for i, token in enumerate(tokens) if tag_label(token) is not None}
        return sentence_breaks(tokens, ["."], entities)

    def run(ecg_config: ECGConfig, mode: str = "batched", **options: bool) -> list[DecodedTemplate]:
        settings = DecodingConfig(mode=mode, batch_size=4, max_block_tokens=16, max_attempts=60, seed=3,
                                  redraw_budget=None, **options)  # fmt: skip
        decoded = ChainedDecoder(model, tokenizer, ecg_config, settings).decode(sequences)
        assert [r.template.entity_types for r in decoded] == sequences
        return decoded

    try:
        plain = run(split_corpus, redraw_run_on=False)
        assert any(breaks(r) for r in plain)
        assert run(config) == plain and run(tweets) == plain  # no statistic, or a corpus of tweets: rule off
        for mode in ("batched", "sequential"):
            redrawn = run(split_corpus, mode)
            assert not any(breaks(r) for r in redrawn), mode
            assert all(r.complete for r in redrawn), mode
            assert sum(r.attempts for r in redrawn) > sum(r.attempts for r in plain)
        # a corpus whose sentences often end on a word (tweets): redraw_unended does not apply, the loop rule does
        tweets = run(ecg_config=replace(config, unended_share=0.46))
        assert not all(r.complete for r in tweets)
        assert not any(has_repetition(r.template.tokens) for r in tweets)
        assert all(r.complete for r in run(ecg_config=replace(config, unended_share=0.01)))
    finally:
        handle.remove()


def test_input_forms(gen):
    single = gen(["Chemical", "Disease"], num_return_sequences=2, seed=0)
    assert len(single) == 2 and all(s["entities"] == ["Chemical", "Disease"] for s in single)
    batch = gen([["Chemical"], {"entities": ["Gene"]}], num_return_sequences=2, seed=0)
    assert [[s["entities"] for s in group] for group in batch] == [[["Chemical"]] * 2, [["Gene"]] * 2]
    (as_dict,) = gen({"entities": ["Disease"]}, seed=0)
    assert as_dict["entities"] == ["Disease"]
    (offsets,) = as_dict["spans"]  # ready for gr.HighlightedText / Argilla: offsets into text and the type
    assert offsets["label"] == "Disease" and as_dict["text"][offsets["start"] : offsets["end"]] in (
        "fever",
        "severe pain",
    )
    assert gen([], seed=0) == [] and gen((), seed=0) == []  # an empty batch, as other pipelines take it
    ((empty,),) = gen([[]], seed=0)  # one request with no entity: an entity-free sentence
    assert empty["entities"] == [] and empty["tokens"] and set(empty["ner_tags"]) == {"O"}


def test_dataset_keydataset_and_generator_inputs_stream_in_batches(gen, monkeypatch):
    from transformers.pipelines.pt_utils import KeyDataset

    requests = [["Chemical"], [], ["Disease", "Gene"], ["Gene"], ["Chemical", "Chemical"]]
    dataset = datasets.Dataset.from_dict({"entities": requests, "id": list(range(5))})
    decoded = []
    real_forward = type(gen)._forward

    def counting_forward(self, model_inputs, **options):
        decoded.append((len(model_inputs["sequences"]), options["batch_size"]))
        return real_forward(self, model_inputs, **options)

    monkeypatch.setattr(type(gen), "_forward", counting_forward)
    for stream in (dataset, KeyDataset(dataset, "entities"), (r for r in requests), dataset["entities"]):
        decoded.clear()
        results = gen(stream, batch_size=2, max_block_tokens=4, seed=1)
        assert not isinstance(results, list)  # a stream gives an iterator
        results = list(results)
        assert [[s["entities"] for s in samples] for samples in results] == [[r] for r in requests]
        assert decoded == [(2, 2), (2, 2), (1, 2)]  # batch_size requests at a time, in order
    decoded.clear()
    gen(requests, num_return_sequences=2, max_block_tokens=4)  # a list: the default batch, 64 requests
    assert decoded == [(10, 64)]
    # Equal requests in two batches are drawn from two seeds.
    twice = list(gen((["Chemical"] for _ in range(2)), batch_size=1, max_block_tokens=6, seed=3))
    assert twice[0][0]["template"] != twice[1][0]["template"] or twice[0][0]["tokens"] != twice[1][0]["tokens"]


def test_bad_input_is_refused_with_a_reason(gen):
    with pytest.raises(ValueError, match=r"unknown entity type\(s\) \['Protein'\]; this model knows: Chemical, "):
        gen(["Chemical", "Protein"])
    with pytest.raises(TypeError, match="not a bare string"):
        gen("Chemical")
    with pytest.raises(ValueError, match="max_block_tokens must be in"):
        gen(["Chemical"], max_block_tokens=0)
    with pytest.raises(ValueError, match="temperature must be > 0"):
        gen(["Chemical"], temperature=0)
    with pytest.raises(ValueError, match="top_p must be in"):
        gen(["Chemical"], top_p=1.5)
    with pytest.raises(ValueError, match="exceeds max_entities=2"):
        gen(["Chemical"] * 3, max_entities=2)
    with pytest.raises(ValueError, match="num_return_sequences must be >= 1"):
        gen(["Chemical"], num_return_sequences=0)
    with pytest.raises(TypeError, match="unknown option"):
        gen(["Chemical"], temprature=0.5)


def test_user_mentions_fill_the_tags(gen):
    mine = {"Chemical": ["compound X"], "Disease": ["condition Y"], "Gene": ["G1"]}
    (sample,) = gen(["Chemical", "Disease"], mentions=mine, seed=0)
    tokens, tags = sample["tokens"], sample["ner_tags"]
    assert " ".join(t for t, tag in zip(tokens, tags, strict=True) if tag != "O") == "compound X condition Y"
    with pytest.raises(ValueError, match=r"no mentions of type\(s\) \['Gene'\]"):
        gen(["Gene"], mentions={"Chemical": ["c"]})


def test_weighted_filling_follows_mention_frequencies():
    bank = MentionBank({"Chemical": {("common",): 99, ("rare",): 1}})
    from hf_ecg.runtime.blocks import Template
    from hf_ecg.runtime.decoding import DecodedTemplate

    decoded = DecodedTemplate(("Chemical",), Template(("take", "<Chemical>")))
    import random

    rng = random.Random(0)
    weighted = [MentionFiller(bank, "weighted").fill(decoded, rng)["tokens"][1] for _ in range(400)]
    uniform = [MentionFiller(bank, "random").fill(decoded, rng)["tokens"][1] for _ in range(400)]
    assert weighted.count("rare") < 20 < uniform.count("rare")


def test_pipeline_registered_by_import_and_served_from_a_folder(model_dir):
    assert hf_ecg  # importing hf_ecg registers the task
    gen = pipeline("entity-controlled-generation", model=str(model_dir))
    (sample,) = gen(["Gene"], seed=0, max_block_tokens=5)
    assert sample["entities"] == ["Gene"] and "BRCA1" in sample["tokens"]


def test_import_hf_ecg_then_transformers_registers_the_task_without_touching_transformers_loader(tmp_path):
    """The usual order (`import hf_ecg`, then `from transformers import pipeline`): hf_ecg's import loads
    neither transformers.pipelines nor torch, and the task is registered once transformers.pipelines is."""
    script = (
        "import sys\n"
        "import hf_ecg\n"
        "assert 'transformers.pipelines' not in sys.modules and 'torch' not in sys.modules\n"
        "from transformers import pipeline\n"
        "from transformers.pipelines import PIPELINE_REGISTRY\n"
        "assert 'entity-controlled-generation' in PIPELINE_REGISTRY.get_supported_tasks()\n"
        "module = sys.modules['transformers.pipelines']\n"
        "assert 'exec_module' not in vars(module.__spec__.loader._loader), 'the wrapped loader is not patched'\n"
        "print('ok')\n"
    )
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=tmp_path, timeout=300)
    assert result.returncode == 0 and result.stdout.strip().endswith("ok"), result.stderr[-3000:]


def test_saved_pipeline_loads_with_remote_code_without_hf_ecg(model_dir, tmp_path):
    gen = pipeline("entity-controlled-generation", model=str(model_dir))
    gen.save_pretrained(str(tmp_path / "saved"))
    config = json.loads((tmp_path / "saved" / "config.json").read_text())
    assert config["custom_pipelines"]["entity-controlled-generation"]["impl"] == (
        "pipeline.EntityControlledGenerationPipeline"
    )
    script = (
        "import sys, json\n"
        "from transformers import pipeline\n"
        f"gen = pipeline(model={str(tmp_path / 'saved')!r}, trust_remote_code=True)\n"
        "out = gen(['Chemical', 'Disease'], seed=0, max_block_tokens=5)\n"
        "assert 'hf_ecg' not in sys.modules, 'the saved code must not need hf_ecg'\n"
        "print(json.dumps(out))\n"
    )
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=tmp_path, timeout=300)
    assert result.returncode == 0, result.stderr[-3000:]
    (sample,) = json.loads(result.stdout.strip().splitlines()[-1])
    assert sample["entities"] == ["Chemical", "Disease"]


def load(directory: Path) -> datasets.Dataset:
    return datasets.load_dataset(str(directory), split="train", cache_dir=str(directory.parent / "hf-cache"))


def test_generate_dataset_loads_with_classlabel_tags_and_is_reproducible(model_dir, tmp_path):
    settings = {"samples_per_shard": 7, "seed": 5, "decoding": DecodingConfig(max_block_tokens=6, batch_size=4)}
    generate_dataset(model_dir, tmp_path / "a", 17, **settings)
    generate_dataset(model_dir, tmp_path / "b", 17, **settings)
    a, b = load(tmp_path / "a"), load(tmp_path / "b")
    assert sorted(a["id"]) == list(range(17))
    assert {"id", "tokens", "ner_tags", "entities", "template", "text"} <= set(a.column_names)
    assert a.features["ner_tags"].feature.names == bio_labels(TYPES)
    assert a.to_list() == b.to_list()  # same seed, same dataset
    names = a.features["ner_tags"].feature.names
    for row in a:
        spans, _ = tags_to_spans([names[i] for i in row["ner_tags"]], "IOB2", strict=True)
        assert [s.label for s in spans] == row["entities"]
        # the spans column: character offsets of each mention in text, with its type
        assert [(row["text"][o["start"] : o["end"]], o["label"]) for o in row["spans"]] == [
            (" ".join(row["tokens"][s.start : s.end]), s.label) for s in spans
        ]
    assert len(list((tmp_path / "a" / "data").glob("train-*.parquet"))) == 3
    # The decoder's flags are columns a user filters on.
    assert a.features["complete"].dtype == "bool" and a.features["cut_blocks"].dtype == "int32"
    whole = a.filter(lambda row: row["complete"])
    endings = {".", "!", "?"}  # the usual endings: this model's config records none of its own
    assert all(row["tokens"] and row["tokens"][-1] in endings for row in whole)
    assert all(not row["complete"] for row in a if not row["tokens"] or row["tokens"][-1] not in endings)
    assert sum(a["cut_blocks"]) == 0  # the default rule cuts nothing


# conll2003's order: O first, then B-/I- pairs, not sorted; one label the synthetic data never uses.
GOLD_LABELS = ["O", "B-Gene", "I-Gene", "B-Disease", "I-Disease", "B-MISC", "I-MISC", "B-Chemical", "I-Chemical"]


def gold_dataset() -> datasets.Dataset:
    features = datasets.Features({"tokens": datasets.Sequence(datasets.Value("string")),
                                  "ner_tags": datasets.Sequence(datasets.ClassLabel(names=GOLD_LABELS))})  # fmt: skip
    return datasets.Dataset.from_dict({"tokens": [["BRCA1", "causes", "fever", "."]], "ner_tags": [[1, 0, 3, 0]]},
                                      features=features)  # fmt: skip


def tag_strings(dataset: datasets.Dataset) -> list[list[str]]:
    names = dataset.features["ner_tags"].feature.names
    return [[names[k] for k in row] for row in dataset["ner_tags"]]


def test_generated_data_concatenates_with_gold_in_the_gold_label_order(model_dir, tmp_path):
    gold = gold_dataset()
    settings = {"seed": 3, "decoding": DecodingConfig(max_block_tokens=4, batch_size=4)}
    sorted_names = load(generate_dataset(model_dir, tmp_path / "sorted", 6, **settings))
    with pytest.raises(ValueError, match="aligned"):  # what a user meets without the gold order
        datasets.concatenate_datasets([gold, sorted_names.select_columns(["tokens", "ner_tags"])])

    ordered = load(generate_dataset(model_dir, tmp_path / "ordered", 6, label_names=GOLD_LABELS, **settings))
    assert ordered.features["ner_tags"].feature.names == GOLD_LABELS
    assert tag_strings(ordered) == tag_strings(sorted_names)  # the same tags, other ids
    assert any(tag != "O" for row in tag_strings(ordered) for tag in row)
    mixed = datasets.concatenate_datasets([gold, ordered.select_columns(["tokens", "ner_tags"])])
    assert tag_strings(mixed) == tag_strings(gold) + tag_strings(ordered)

    aligned = align_labels(sorted_names, gold)  # data generated before: re-numbered to the gold order
    assert aligned.features["ner_tags"] == ordered.features["ner_tags"]
    assert aligned["ner_tags"] == ordered["ner_tags"]
    assert align_labels(ordered, GOLD_LABELS) is ordered
    with pytest.raises(ValueError, match=r"lack \['B-Chemical', 'I-Chemical'\]"):
        generate_dataset(model_dir, tmp_path / "bad", 2, label_names=GOLD_LABELS[:-2], **settings)
    with pytest.raises(ValueError, match="not among the label names"):
        align_labels(sorted_names, ["O", "B-Gene", "I-Gene"])


def test_the_readme_mixing_example_runs_as_written(model_dir, tmp_path, monkeypatch):
    readme = (Path(__file__).resolve().parents[1] / "README.md").read_text()
    example = readme.split("### Mixing with your gold dataset")[1].split("```python\n")[1].split("```")[0]
    assert len(example.strip().splitlines()) == 5
    monkeypatch.chdir(tmp_path)
    gold_dataset().save_to_disk("my-gold")
    written = generate_dataset(model_dir, "outputs/quickstart/synthetic", 4, progress_bar=False,
                               decoding=DecodingConfig(max_block_tokens=4, batch_size=4))  # fmt: skip
    namespace: dict = {}
    exec(example, namespace)
    mixed = namespace["mixed"]
    assert mixed.features["ner_tags"].feature.names == GOLD_LABELS
    assert tag_strings(mixed) == tag_strings(gold_dataset()) + tag_strings(load(written))


def test_interrupted_generation_resumes_to_exactly_n_unique_ids(model_dir, tmp_path, monkeypatch):
    import hf_ecg.synthetic.generate as generate_module

    settings = {"samples_per_shard": 4, "seed": 1, "decoding": DecodingConfig(max_block_tokens=5, batch_size=3)}
    generate_dataset(model_dir, tmp_path / "whole", 14, **settings)

    real_write = generate_module.write_shard
    written = []

    def crash_after_two(rows, features, data_dir, shard, rank):
        if len(written) == 2:
            (data_dir / f".tmp-{rank}-train-{shard:05d}.parquet").write_bytes(b"half a shard")
            raise KeyboardInterrupt  # killed while writing the third shard
        written.append(shard)
        real_write(rows, features, data_dir, shard, rank)

    monkeypatch.setattr(generate_module, "write_shard", crash_after_two)
    with pytest.raises(KeyboardInterrupt):
        generate_dataset(model_dir, tmp_path / "resumed", 14, **settings)
    # The finished shards wait outside data/: the folder cannot pass for a dataset of 8 rows.
    assert len(list((tmp_path / "resumed" / "unfinished").glob("train-*.parquet"))) == 2
    assert not (tmp_path / "resumed" / "data").exists()
    with pytest.raises(datasets.exceptions.DataFilesNotFoundError):
        load(tmp_path / "resumed")
    monkeypatch.setattr(generate_module, "write_shard", real_write)
    generate_dataset(model_dir, tmp_path / "resumed", 14, **settings)
    resumed = load(tmp_path / "resumed")
    assert sorted(resumed["id"]) == list(range(14))  # exactly N, no duplicates
    assert resumed.sort("id").to_list() == load(tmp_path / "whole").sort("id").to_list()
    assert not list((tmp_path / "resumed" / "data").glob(".tmp-*"))
    assert not (tmp_path / "resumed" / "unfinished").exists()
    with pytest.raises(ValueError, match=r"other settings .*seed"):
        generate_dataset(model_dir, tmp_path / "resumed", 14, **{**settings, "seed": 2})


def test_a_folder_begun_before_the_spans_column_resumes_with_its_columns(model_dir, tmp_path):
    import pyarrow.parquet as pq

    settings = {"samples_per_shard": 3, "seed": 2, "decoding": DecodingConfig(max_block_tokens=4, batch_size=3)}
    folder = generate_dataset(model_dir, tmp_path / "old", 6, **settings)
    first, second = sorted((folder / "data").glob("train-*.parquet"))
    pq.write_table(pq.read_table(first).drop_columns(["spans"]), first)  # as an older hf_ecg wrote it
    second.unlink()  # ... and stopped there
    generate_dataset(model_dir, folder, 6, **settings)
    assert [pq.read_schema(p).names for p in (first, second)] == [pq.read_schema(first).names] * 2
    assert "spans" not in load(folder).column_names and load(folder).num_rows == 6


def test_a_folder_written_before_a_decoding_option_existed_resumes(model_dir, tmp_path):
    old_rules = {"redraw_unended": False, "redraw_repetition": False, "redraw_run_on": False,
                 "redraw_tag_pieces": False}  # an older hf_ecg: none of these rules  # fmt: skip
    settings = {
        "samples_per_shard": 3, "seed": 2, "decoding": DecodingConfig(max_block_tokens=4, batch_size=2, **old_rules)
    }  # fmt: skip
    generate_dataset(model_dir, tmp_path / "old", 3, **settings)
    manifest_path = tmp_path / "old" / "ecg_generation.json"
    manifest = json.loads(manifest_path.read_text())
    for option in ("end_at_sentence_end", "redraw_unrequested_tag", "redraw_budget", *old_rules):
        del manifest["decoding"][option]  # as an older hf_ecg wrote it
    assert manifest.pop("dtype") in ("float32", "bfloat16")  # before it was recorded, runs were float32
    manifest.pop("generation_cost")
    assert manifest["mentions"] == {"source": "bank", "strategy": "random", "bank": "generator"}
    manifest["mentions"] = None  # before the mentions record, the default was written as null
    manifest_path.write_text(json.dumps(manifest))
    old_settings = {**settings, "decoding": replace(settings["decoding"], redraw_budget=None), "dtype": "float32"}
    generate_dataset(model_dir, tmp_path / "old", 3, **old_settings)  # the same settings: resumes, no error
    for changed in ({"end_at_sentence_end": True}, {"redraw_unended": True}, {"redraw_tag_pieces": True}, {}):
        # today's redraw defaults differ from what the folder was written with: refused, not mixed
        other = DecodingConfig(max_block_tokens=4, batch_size=2, **{**old_rules, **changed}) if changed else None
        other = other or DecodingConfig(max_block_tokens=4, batch_size=2)
        with pytest.raises(ValueError, match="other settings"):
            generate_dataset(model_dir, tmp_path / "old", 3, **{**settings, "decoding": other})
    with pytest.raises(ValueError, match="differing: decoding"):  # today's default budget: not the folder's
        generate_dataset(model_dir, tmp_path / "old", 3, **{**settings, "dtype": "float32"})
    with pytest.raises(ValueError, match="differing: dtype"):
        generate_dataset(model_dir, tmp_path / "old", 3, **{**old_settings, "dtype": "bfloat16"})


def test_a_run_records_what_it_cost_in_its_manifest_card_and_columns(model_dir, tmp_path, caplog):
    """The tiny model never ends a block: every sample is costly, the budget bounds it, the run says so."""
    decoding = DecodingConfig(max_block_tokens=6, batch_size=4, max_attempts=5)
    with caplog.at_level(logging.INFO, logger="hf_ecg.synthetic.generate"):
        generate_dataset(model_dir, tmp_path / "gen", 8, seed=1, decoding=decoding, dtype="float32")
    manifest = json.loads((tmp_path / "gen" / "ecg_generation.json").read_text())
    ds = load(tmp_path / "gen")
    cost = manifest["generation_cost"]
    assert manifest["dtype"] == "float32" and cost["redraw_budget"] == 1.0
    assert cost["model_tokens"] == sum(ds["model_tokens"]) > 0
    assert cost["redrawn_tokens"] == sum(ds["redrawn_tokens"]) > 0
    assert cost["redrawn_tokens"] <= cost["model_tokens"] + 6 * 1 + 6  # 1x kept + the allowance (4 rows) + 1 block
    assert cost["refused_redraws"] == sum(ds["refused_redraws"]) > 0 and cost["blocks"] == 8 + sum(
        map(len, ds["entities"])
    )
    assert cost["undertrained"] == (cost["refused_redraws"] > UNDERTRAINED_REFUSED_SHARE * cost["blocks"])
    assert cost_line(cost) in caplog.text
    assert ("looks undertrained" in caplog.text) == cost["undertrained"]
    card = (tmp_path / "gen" / "README.md").read_text()
    assert f"{cost['model_tokens']} kept, {cost['redrawn_tokens']} (" in card
    assert "| `redrawn_tokens` | int32 |" in card
    # finished: the same call again changes nothing (the cost record is not a setting)
    generate_dataset(model_dir, tmp_path / "gen", 8, seed=1, decoding=decoding, dtype="float32")


def test_cli_generate_with_entities_and_mention_file(model_dir, tmp_path, capsys):
    mentions = tmp_path / "mentions.json"
    mentions.write_text(json.dumps({"Chemical": ["zz-chem"], "Disease": ["zz-dis"]}))
    out = tmp_path / "gen"
    code = main(["generate", "--model", str(model_dir), "-n", "5", "-o", str(out), "--entities", "Chemical,Disease",
                 "--entities", "", "--mentions", str(mentions), "--max-block-tokens", "5",
                 "--batch-size", "2", "--block-end", "target", "--max-attempts", "2",
                 "--no-redraw-unended", "--no-redraw-run-on", "--redraw-budget", "none",
                 "--dtype", "float32"])  # fmt: skip
    assert code == 0
    printed = capsys.readouterr().out
    assert f"wrote 5 samples to {out}/data/" in printed
    assert "the generator wrote " in printed and "in blocks drawn again" in printed
    manifest = json.loads((out / "ecg_generation.json").read_text())
    assert manifest["mentions"] == {"source": "file", "path": str(mentions)}
    decoding = manifest["decoding"]
    assert decoding["block_end"] == "target" and decoding["max_attempts"] == 2
    assert decoding["redraw_unended"] is False and decoding["redraw_repetition"] is True
    assert decoding["redraw_run_on"] is False and decoding["redraw_budget"] is None
    assert manifest["dtype"] == "float32"
    ds = load(out).sort("id")
    assert ds["entities"] == [["Chemical", "Disease"], [], ["Chemical", "Disease"], [], ["Chemical", "Disease"]]
    assert "zz-chem" in ds[0]["tokens"] and "zz-dis" in ds[0]["tokens"]
    code = main(
        ["generate", "--model", str(model_dir), "-n", "2", "-o", str(tmp_path / "bad"), "--entities", "Protein"]
    )
    assert code == 2
    assert "unknown entity type(s) ['Protein']; known types: Chemical, Disease, Gene" in capsys.readouterr().err


def test_cli_generate_and_filter_take_the_label_order_of_a_gold_dataset(model_dir, tmp_path, capsys):
    gold_dataset().save_to_disk(str(tmp_path / "gold"))
    out = tmp_path / "gen"
    common = ["--model", str(model_dir), "-n", "3", "--max-block-tokens", "4", "--batch-size", "4"]
    assert main(["generate", *common, "-o", str(out), "--label-names", str(tmp_path / "gold")]) == 0
    assert load(out).features["ner_tags"].feature.names == GOLD_LABELS
    sorted_out = tmp_path / "sorted"
    assert main(["generate", *common, "-o", str(sorted_out)]) == 0
    gold_file = tmp_path / "gold.tsv"
    gold_file.write_text("BRCA1\tB-Gene\ncauses\tO\nfever\tB-Disease\n.\tO\n\n")
    names = ",".join(GOLD_LABELS)
    assert main(["filter", "--generated", str(sorted_out), "--gold", str(gold_file), "--output",
                 str(tmp_path / "kept"), "--rule", "duplicate", "--label-names", names]) == 0  # fmt: skip
    kept = load(tmp_path / "kept")
    assert kept.features["ner_tags"].feature.names == GOLD_LABELS
    assert tag_strings(kept) == tag_strings(load(sorted_out).sort("id"))[: len(kept)]
    capsys.readouterr()
    assert main(["generate", *common, "-o", str(tmp_path / "bad"), "--label-names", "O,B-Gene,I-Gene"]) == 2
    assert "lack ['B-Chemical', 'I-Chemical', 'B-Disease', 'I-Disease']" in capsys.readouterr().err


def test_accelerate_two_processes_split_the_shards(model_dir, tmp_path):
    out = tmp_path / "parallel"
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    result = subprocess.run(
        [sys.executable, "-m", "accelerate.commands.launch", "--cpu", "--num_processes", "2", "--num_machines", "1",
         "--mixed_precision", "no", "--dynamo_backend", "no", "-m", "hf_ecg.cli", "generate", "--model",
         str(model_dir), "-n", "10", "-o", str(out), "--samples-per-shard", "3", "--seed", "4",
         "--max-block-tokens", "5", "--batch-size", "2"],
        capture_output=True, text=True, env=env, timeout=600,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr[-3000:]
    assert result.stdout.count("wrote 10 samples") == 1
    single = tmp_path / "single"
    assert main(["generate", "--model", str(model_dir), "-n", "10", "-o", str(single), "--samples-per-shard", "3",
                 "--seed", "4", "--max-block-tokens", "5", "--batch-size", "2"]) == 0  # fmt: skip
    parallel = load(out).sort("id")
    assert parallel["id"] == list(range(10))
    assert parallel.to_list() == load(single).sort("id").to_list()  # the same dataset, whoever wrote it


@given(st.lists(st.integers(1, 64), max_size=9), st.integers(1, 4))
def test_prefill_groups_partition_the_rows_at_the_least_padded_cost(lengths, max_groups):
    """The passes hold every row once, at most max_groups of them, and cost what the best split of the sorted
    lengths into contiguous passes costs (brute force), padding and per-pass overhead included."""
    from itertools import combinations

    groups = length_groups(lengths, max_groups=max_groups)
    assert sorted(j for group in groups for j in group) == list(range(len(lengths)))
    assert len(groups) <= max_groups and all(groups)

    def cost(parts: list[list[int]]) -> int:
        return sum(len(p) * max(p) for p in parts) + PASS_OVERHEAD_TOKENS * max(0, len(parts) - 1)

    sizes = sorted(lengths)
    best = min(
        (cost([sizes[a:b] for a, b in zip((0, *cuts), (*cuts, len(sizes)), strict=True)])
         for n in range(min(max_groups, len(sizes)))
         for cuts in combinations(range(1, len(sizes)), n)),
        default=0,
    )  # fmt: skip
    assert cost([[lengths[j] for j in group] for group in groups]) == best


def test_a_block_that_writes_a_line_break_is_drawn_again(tiny):
    """No corpus sentence holds a line break: a model pushed towards one has its blocks drawn again the moment
    it writes it (redraw_run_on), and with the rule off the breaks stay in the block text."""
    model, tokenizer, config = tiny
    vocab = tokenizer.get_vocab()
    line_break = vocab["Ċ"]
    bonus = torch.zeros(model.get_output_embeddings().weight.shape[0])
    for token in [ENDTEXT, *config.tag_tokens.values()]:
        bonus[vocab[token]] = 5.5  # blocks end soon, on their own
    bonus[vocab["."]], bonus[line_break] = 6.0, 5.0
    handle = model.get_output_embeddings().register_forward_hook(lambda module, inputs, output: output + bonus)
    sequences = [("Chemical",), ("Disease", "Gene")] * 4
    written = []
    try:
        for run_on in (False, True):
            settings = DecodingConfig(batch_size=4, max_block_tokens=16, max_attempts=40, seed=4, redraw_budget=None,
                                      redraw_run_on=run_on)  # fmt: skip
            decoder = ChainedDecoder(model, tokenizer, config, settings)
            feed = decoder._block_words
            blocks = []
            decoder._block_words = lambda ids, feed=feed, blocks=blocks: blocks.append(list(ids)) or feed(ids)
            decoded = decoder.decode(sequences)
            assert [r.template.entity_types for r in decoded] == sequences
            written.append((sum(r.attempts for r in decoded), blocks))
    finally:
        handle.remove()
    (plain_attempts, plain_blocks), (attempts, _) = written
    assert any(line_break in ids for ids in plain_blocks)  # the push works: breaks are written without the rule
    assert attempts > plain_attempts  # with it, those blocks were drawn again
