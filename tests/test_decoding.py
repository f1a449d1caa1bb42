"""The block decoders (batched with a KV cache, sequential, the constraint as a LogitsProcessor) against a
naive reference, and the redraw rules."""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import replace

import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

from hf_ecg.runtime.blocks import ANSWER_TOKEN, CONTEXT_TOKEN, ENDTEXT, QUESTION_TOKEN, tag_label
from hf_ecg.runtime.char_boundaries import CharacterBoundaries
from hf_ecg.runtime.decoding import ChainedDecoder, DecodedTemplate, DecodingConfig
from hf_ecg.runtime.decoding_cache import (
    PASS_OVERHEAD_TOKENS,
    RowBatch,
    SlotLayer,
    TemplateRow,
    length_groups,
    live_columns,
)
from hf_ecg.runtime.decoding_slots import keep_prefix
from hf_ecg.runtime.ecg_config import ECGConfig
from hf_ecg.runtime.words import WordSplitter, has_repetition, sentence_breaks, visible


def naive_greedy(model, tokenizer, config, sequence, max_block_tokens, block_end, end_at_sentence_end=False):
    """Reference: one row, the whole prompt re-encoded every step, no cache, the same constraint."""
    vocab = tokenizer.get_vocab()
    tags = {vocab[t] for t in config.tag_tokens.values()} | {vocab[ENDTEXT]}
    banned = sorted(
        tags | {vocab[CONTEXT_TOKEN], vocab[QUESTION_TOKEN], vocab[ANSWER_TOKEN]} | set(tokenizer.all_special_ids)
    )
    words: list[str] = []
    ends = [*(config.tag_tokens[t] for t in sequence), ENDTEXT]
    characters = CharacterBoundaries(tokenizer)  # whole characters: its own tests hold it to Python's codec
    for k, target in enumerate(ends):
        context = tokenizer(" ".join(words), add_special_tokens=False)["input_ids"] if words else []
        # qa: the question is the block's tag; qa-plan: it and the tags of the blocks after it
        question = tokenizer(" ".join(ends[k:]), add_special_tokens=False)["input_ids"]
        question = question if config.layout == "qa-plan" else [vocab[target]]
        ids = [vocab[CONTEXT_TOKEN], *context, vocab[QUESTION_TOKEN], *question, vocab[ANSWER_TOKEN]]
        block: list[int] = []
        while True:
            with torch.no_grad():
                logits = model(torch.tensor([ids + block])).logits[0, -1].clone()
            # "target": only the requested tag may end the block; "any-stop": every tag and <ENDTEXT> may
            allowed = sorted(tags) if block_end == "any-stop" else [vocab[target]]
            keep = logits[allowed].clone()
            logits[banned] = -float("inf")
            logits[allowed] = keep
            characters.mask(logits[None], [characters.state(block)])
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
        # the decoder's text rule: no control character reaches a word
        text = visible(tokenizer.decode(block, skip_special_tokens=True, clean_up_tokenization_spaces=False))
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
    ("block_end", "headroom", "end_at_sentence_end", "layout"),
    [
        ("target", 64, False, "qa"),
        ("any-stop", 64, False, "qa"),
        ("target", 1, False, "qa"),
        ("target", 64, True, "qa"),
        ("target", 64, False, "qa-plan"),
        ("target", 1, False, "qa-plan"),
    ],
)
def test_batched_cache_decoding_equals_naive_decoding(
    tiny, block_end, headroom, end_at_sentence_end, layout, monkeypatch
):
    """Right-aligned slots, refills, trimming, compaction and the cache buffer's re-layouts (every
    step at headroom 1) change nothing: greedy output equals re-encoding every prompt from scratch; with the
    ``qa-plan`` layout too (questions of several lengths, first prompts of several lengths)."""
    monkeypatch.setattr(SlotLayer, "HEADROOM", headroom)
    model, tokenizer, config = tiny
    config = replace(config, layout=layout)
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
    after = [
        [*before[0], "the", "<Disease>"],
        [*before[1], "in", "young", "rats", "<Gene>"],
        ["x", "<Gene>"],
        ["unrelated", "<Chemical>"],
    ]
    targets = [decoder.tag_ids[t] for t in ("Disease", "Gene", "Chemical", "Disease")]
    captured = {}  # row index -> (logits, live keys/values per layer, cache entry, length)

    def capture(rows, logits, caches, lengths, rng):
        for row, row_logits, (source, j, columns), length in zip(rows, logits, caches, lengths, strict=True):
            states = [
                (live_columns(layer.keys, j, length, columns), live_columns(layer.values, j, length, columns))
                for layer in source.layers
            ]
            captured[row.index] = (row_logits, states, (source, j, columns), length)
        return [], []

    decoder._begin_blocks = capture

    def prefill(rows, words):
        for row, w in zip(rows, words, strict=True):
            row.words = list(w)
        captured.clear()
        decoder._prefill(rows, torch.Generator())
        return dict(captured)

    fresh = prefill([TemplateRow(i, [t, decoder.endtext_id]) for i, t in enumerate(targets)], after)
    assert decoder._reused_prompt_tokens == 0
    rows = [TemplateRow(i, [t, t, decoder.endtext_id]) for i, t in enumerate(targets)]
    prefill(rows, before)
    for index, (_, _, (source, j, columns), length) in captured.items():
        keep_prefix(rows[index], source, j, length, columns)  # as when block 1 ends
        rows[index].block = 1
    kept = prefill(rows, after)
    # rows 0 and 1 extend their context, row 2 had only <|context|>, row 3 starts over
    assert decoder._reused_prompt_tokens == sum(len(decoder._prompt_ids(w, [0])) - 3 for w in before[:3])
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
        torch.tensor(prompts),
        attention_mask=torch.ones(len(prompts), len(prompts[0]), dtype=torch.long),
        logits_processor=LogitsProcessorList([decoder.logits_processor(targets, max_block_tokens=max_block_tokens)]),
        eos_token_id=decoder.stop_ids,
        pad_token_id=decoder.pad_id,
        max_new_tokens=max_block_tokens,
        do_sample=True,
        top_k=0,
    )
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
    rows = [TemplateRow(i, [target, decoder.endtext_id], words=["w"]) for i in range(4000)]
    logits = torch.full((len(rows), len(tokenizer)), -5.0)
    # at T=0.5, 41 is a third as likely as 40; 42, third best, would still be drawn a tenth of the time
    logits[:, 40], logits[:, 41], logits[:, 42] = 2.0, 2.0 - math.log(3) * 0.5, 1.2
    logits[:, target] = -30.0  # neither tag nor <ENDTEXT> competes
    drawn = Counter(decoder.row_sampler.sample(logits, rows, torch.Generator().manual_seed(0)))
    assert set(drawn) == {40, 41}
    assert abs(drawn[41] / len(rows) - 0.25) < 0.03  # 1 : 3 after temperature


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
            assert result.model_tokens <= 4 * blocks  # tokens of the kept blocks only
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
        settings = DecodingConfig(
            mode=mode, batch_size=4, max_block_tokens=4, max_attempts=6, seed=1, redraw_budget=budget
        )
        decoder = ChainedDecoder(model, tokenizer, config, settings)
        return decoder.decode(sequences), decoder

    free, unbounded = run(None)
    capped, bounded = run(0.5)
    kept, redrawn = sum(r.model_tokens for r in capped), sum(r.redrawn_tokens for r in capped)
    assert (bounded.budget.kept, bounded.budget.redrawn) == (kept, redrawn)
    assert redrawn <= 0.5 * kept + bounded.budget.allowance + 4
    assert sum(r.redrawn_tokens for r in free) > 2 * redrawn
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
        settings = DecodingConfig(
            mode=mode, batch_size=4, max_block_tokens=16, max_attempts=60, seed=3, redraw_budget=None, **options
        )
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
        (
            cost([sizes[a:b] for a, b in zip((0, *cuts), (*cuts, len(sizes)), strict=True)])
            for n in range(min(max_groups, len(sizes)))
            for cuts in combinations(range(1, len(sizes)), n)
        ),
        default=0,
    )
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
            settings = DecodingConfig(
                batch_size=4, max_block_tokens=16, max_attempts=40, seed=4, redraw_budget=None, redraw_run_on=run_on
            )
            decoder = ChainedDecoder(model, tokenizer, config, settings)
            sampler = decoder.row_sampler
            feed, blocks = sampler.block_words, []
            sampler.block_words = lambda ids, feed=feed, blocks=blocks: blocks.append(list(ids)) or feed(ids)
            decoded = decoder.decode(sequences)
            assert [r.template.entity_types for r in decoded] == sequences
            written.append((sum(r.attempts for r in decoded), blocks))
    finally:
        handle.remove()
    (plain_attempts, plain_blocks), (attempts, _) = written
    assert any(line_break in ids for ids in plain_blocks)  # the push works: breaks are written without the rule
    assert attempts > plain_attempts  # with it, those blocks were drawn again


@given(
    st.lists(st.lists(st.integers(1, 6), min_size=1, max_size=4), min_size=1, max_size=3),
    st.randoms(use_true_random=False),
)
def test_rows_joining_and_leaving_a_batch_keep_their_states_positions_and_ids(parts_lengths, rnd):
    """Batches of rows of different widths merged into one hold each row, in key order, with the same live
    columns, position and ids; rows leaving take nothing of the others' (the rows that stay keep their states
    wherever they move to), and columns no row uses are dropped."""
    from transformers import DynamicCache
    from transformers.cache_utils import DynamicLayer

    keys = rnd.sample(range(100), sum(map(len, parts_lengths)))
    expected, parts, k = {}, [], 0
    for lengths in parts_lengths:
        width = max(lengths) + rnd.randint(0, 2)
        mask = torch.zeros((len(lengths), width), dtype=torch.long)
        states = torch.randn(len(lengths), 2, width, 3)
        cache = DynamicCache()
        cache.layers = [DynamicLayer()]
        cache.layers[0].update(states, -states, 0)
        for row, length in enumerate(lengths):  # live columns right-aligned, gaps allowed before them
            mask[row, width - length :] = 1
            expected[keys[k + row]] = (states[row, :, width - length :], length + 7, [k + row])
        rows = keys[k : k + len(lengths)]
        positions = torch.tensor([expected[key][1] for key in rows])
        parts.append(RowBatch(rows, cache, mask, positions, [list(expected[key][2]) for key in rows]))
        k += len(lengths)

    def check(batch, kept):
        assert sorted(batch.keys) == sorted(kept)
        for row, key in enumerate(batch.keys):
            live = batch.mask[row].bool()
            torch.testing.assert_close(batch.cache.layers[0].keys[row][:, live], expected[key][0])
            torch.testing.assert_close(batch.cache.layers[0].values[row][:, live], -expected[key][0])
            assert batch.positions[row] == expected[key][1] and batch.answers[row] == expected[key][2]

    batch = RowBatch.merged(parts)
    assert batch.keys == sorted(expected)
    check(batch, expected)
    leaving = set(rnd.sample(range(len(batch.keys)), rnd.randint(0, len(batch.keys) - 1)))
    staying = [key for row, key in enumerate(batch.keys) if row not in leaving]
    batch.keep([row for row in range(len(batch.keys)) if row not in leaving])
    check(batch, staying)
    assert len(batch.answers) == len(batch.positions) == len(batch.mask) == batch.cache.layers[0].keys.shape[0]
    assert batch.mask[:, 0].any()  # once rows left, no column on the left that no row uses


@pytest.mark.parametrize("mode", ["batched", "sequential"])
def test_a_phrase_piece_is_written_exactly_where_it_stands_and_once(tiny, mode):
    """A request of entity types and phrases: every phrase is in the template verbatim, after the tags before it and
    before the tags after it, once; the tags are exactly the requested ones."""
    from hf_ecg.runtime.decoding import make_decoder
    from hf_ecg.runtime.decoding_config import DecodingConfig, Phrase

    model, tokenizer, config = tiny
    decoder = make_decoder(model, tokenizer, config, DecodingConfig(seed=3, max_block_tokens=6, mode=mode))
    types = list(config.entity_types)
    first, second = Phrase.of("zebra quartz"), Phrase(("mauve", "lintel", "."))
    requests = [
        [first, types[0], second],
        [types[0], first, types[-1], second],
        [first, second],
        [types[0], types[-1]],
    ]
    for request, decoded in zip(requests, decoder.decode(requests), strict=True):
        words = list(decoded.template.tokens)
        assert decoded.entities == tuple(p for p in request if isinstance(p, str))
        order = []
        for piece in request:
            if isinstance(piece, Phrase):
                n = len(piece.words)
                starts = [i for i in range(len(words) - n + 1) if tuple(words[i : i + n]) == piece.words]
                assert len(starts) == 1, (piece, words)  # verbatim, once
                order.append(starts[0])
            else:
                order.append(words.index(config.tag_tokens[piece], order[-1] + 1 if order else 0))
        assert order == sorted(order), (request, words)


def test_a_phrase_piece_is_refused_where_it_cannot_be_written(tiny):
    from hf_ecg.runtime.decoding import make_decoder
    from hf_ecg.runtime.decoding_config import DecodingConfig, Phrase

    model, tokenizer, config = tiny
    decoder = make_decoder(model, tokenizer, config, DecodingConfig(seed=3, max_block_tokens=6))
    tag = config.tag_tokens[config.entity_types[0]]
    for token in (tag, "<|mention|>", "<|context|>"):
        with pytest.raises(ValueError, match="structure tokens"):
            decoder.decode([[Phrase(("a", token))]])
    for bad in ((), ("two words",), ""):
        with pytest.raises(ValueError, match="phrase"):
            Phrase(bad)
