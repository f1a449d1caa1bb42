"""The decoding steps' attention on a CPU (hf_ecg.runtime.attention): the same as transformers' ``sdpa`` attention
for every shape and mask a decoder gives it, and what the decoders run."""

from __future__ import annotations

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from transformers import DynamicCache, LlamaConfig, LlamaForCausalLM
from transformers.integrations.sdpa_attention import sdpa_attention_forward

from hf_ecg.runtime.attention import DECODE_STEP_ATTENTION, decode_step_attention, use_decode_step_attention
from hf_ecg.runtime.decoding import ChainedDecoder
from hf_ecg.runtime.mention_writer import MentionWriter
from tiny import tiny_ecg_model


class _Layer(torch.nn.Module):
    def __init__(self, groups: int) -> None:
        super().__init__()
        self.num_key_value_groups = groups
        self.is_causal = True


@settings(max_examples=60, deadline=None)
@given(
    batch=st.integers(1, 5),
    kv_heads=st.integers(1, 3),
    groups=st.sampled_from([1, 2, 3]),
    positions=st.integers(1, 12),
    queries=st.sampled_from([1, 1, 3]),
    padding=st.lists(st.integers(0, 11), min_size=5, max_size=5),
    seed=st.integers(0, 2**16),
)
def test_a_step_is_attended_as_sdpa_attends_it(batch, kv_heads, groups, positions, queries, padding, seed):
    """One query per row (a decoding step), any grouping of query heads on key/value heads, rows left-padded: the
    products give sdpa's output; a prompt (several queries) is sdpa's own computation."""
    generator = torch.Generator().manual_seed(seed)
    queries = min(queries, positions)
    dim = 8
    query = torch.randn(batch, kv_heads * groups, queries, dim, generator=generator)
    key = torch.randn(batch, kv_heads, positions, dim, generator=generator)
    value = torch.randn(batch, kv_heads, positions, dim, generator=generator)
    mask = torch.ones(batch, 1, queries, positions, dtype=torch.bool).tril(positions - queries)
    for row in range(batch):  # left padding, never over the row's own query
        mask[row, :, :, : min(padding[row], positions - queries)] = False
    module = _Layer(groups).eval()
    expected, _ = sdpa_attention_forward(module, query, key, value, mask, scaling=0.3)
    output, weights = decode_step_attention(module, query, key, value, mask, scaling=0.3)
    assert weights is None and output.shape == (batch, queries, kv_heads * groups, dim)
    torch.testing.assert_close(output, expected, rtol=1e-5, atol=1e-5)
    unmasked, _ = decode_step_attention(module, query, key, value, None)
    torch.testing.assert_close(unmasked, sdpa_attention_forward(module, query, key, value, None)[0])


def tiny_llama() -> LlamaForCausalLM:
    """A 2-layer Llama whose 4 query heads share 2 key/value heads (as SmolLM2's do 3 to 1), ``sdpa`` attention."""
    torch.manual_seed(0)
    config = LlamaConfig(
        vocab_size=64,
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=64,
    )
    return LlamaForCausalLM(config).eval()


@pytest.mark.parametrize("family", ["llama", "gpt2"])
def test_a_model_given_the_step_attention_decodes_as_with_sdpa(family):
    """A left-padded prompt then a step: the same logits with the decoding steps' attention as with ``sdpa``."""
    model = tiny_llama() if family == "llama" else tiny_ecg_model()[0].eval()
    model.set_attn_implementation("sdpa")
    ids = torch.randint(1, 60, (3, 9), generator=torch.Generator().manual_seed(1))
    mask = torch.ones_like(ids)
    mask[0, :4] = 0
    positions = (mask.cumsum(-1) - 1).clamp(min=0)

    def step_logits() -> torch.Tensor:
        with torch.inference_mode():
            cache = DynamicCache(config=model.config)
            model(input_ids=ids, attention_mask=mask, position_ids=positions, cache=cache, use_cache=True)
            longer = torch.cat([mask, torch.ones(3, 1, dtype=torch.long)], 1)
            out = model(input_ids=ids[:, :1], attention_mask=longer, position_ids=positions[:, -1:] + 1, cache=cache)
            return out.logits[:, -1]

    expected = step_logits()
    use_decode_step_attention(model)
    assert model.config._attn_implementation == DECODE_STEP_ATTENTION
    torch.testing.assert_close(step_logits(), expected, rtol=1e-5, atol=1e-5)


def test_the_decoders_run_the_step_attention_and_leave_another_implementation_alone():
    from hf_ecg.runtime.blocks import MENTION_TOKEN

    model, tokenizer, config = tiny_ecg_model(mention=True)
    model.set_attn_implementation("sdpa")
    ChainedDecoder(model, tokenizer, config)
    assert model.config._attn_implementation == DECODE_STEP_ATTENTION
    eager, tokenizer, config = tiny_ecg_model(mention=True)
    eager.set_attn_implementation("eager")
    config.mention_token = MENTION_TOKEN
    MentionWriter(eager, tokenizer, config)
    assert eager.config._attn_implementation == "eager"
