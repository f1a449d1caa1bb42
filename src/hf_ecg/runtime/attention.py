"""Attention for the token-by-token steps of decoding on a CPU.

A decoding step asks attention for one query per row. PyTorch's CPU kernel behind
``scaled_dot_product_attention`` spends about ten times as long on that in bfloat16 as two small matrix
products do (SmolLM2-135M, 48 rows over 90 positions: 1.5 ms a layer against 0.16 ms), which made attention
about half of a bfloat16 decoding step. :func:`use_decode_step_attention` gives a model an attention
implementation that computes such steps as those products (queries grouped by the key/value head they share,
softmax in float32) and hands everything else (prompts, training, other devices) to transformers' own
``sdpa`` function, with the same masks.
"""

from __future__ import annotations

from typing import Any

import torch
from transformers import AttentionInterface
from transformers.integrations.sdpa_attention import sdpa_attention_forward
from transformers.masking_utils import AttentionMaskInterface, sdpa_mask

__all__ = ["DECODE_STEP_ATTENTION", "decode_step_attention", "use_decode_step_attention"]

#: The name the implementation is registered under (``model.config._attn_implementation``).
DECODE_STEP_ATTENTION = "hf_ecg_decode_step"


def decode_step_attention(
    module: Any,
    query: torch.Tensor,
    key: torch.Tensor,
    value: torch.Tensor,
    attention_mask: torch.Tensor | None,
    dropout: float = 0.0,
    scaling: float | None = None,
    **kwargs: Any,
) -> tuple[torch.Tensor, None]:
    """transformers' ``sdpa`` attention, but a one-query step on a CPU as two matrix products (see the module).
    ``query`` is ``[batch, heads, queries, dim]``, ``key``/``value`` ``[batch, kv_heads, positions, dim]``,
    ``attention_mask`` ``sdpa``'s boolean mask (``True``: attend) or ``None``; returns ``[batch, queries, heads,
    dim]`` as ``sdpa`` does."""
    plain = dropout == 0.0 and kwargs.get("position_bias") is None and not kwargs.get("softcap")
    if (
        query.shape[2] != 1
        or query.device.type != "cpu"
        or module.training
        or not plain
        or kwargs.get("output_attentions")
    ):
        return sdpa_attention_forward(
            module, query, key, value, attention_mask, dropout=dropout, scaling=scaling, **kwargs
        )
    batch, heads, _, dim = query.shape
    kv_heads = key.shape[1]
    # query head h reads key/value head h // (heads // kv_heads): the queries of one key/value head side by side
    grouped = query.reshape(batch, kv_heads, heads // kv_heads, dim)
    scores = torch.matmul(grouped, key.transpose(-1, -2)) * (dim**-0.5 if scaling is None else scaling)
    if attention_mask is not None:
        mask = attention_mask[:, :, -1:, : key.shape[-2]]  # [batch or 1, 1, 1, positions]
        scores = scores.masked_fill(~mask, float("-inf")) if mask.dtype == torch.bool else scores + mask
    weights = torch.softmax(scores, dim=-1, dtype=torch.float32).to(value.dtype)
    output = torch.matmul(weights, value)  # [batch, kv_heads, heads // kv_heads, dim]
    return output.reshape(batch, heads, 1, dim).transpose(1, 2).contiguous(), None


AttentionInterface.register(DECODE_STEP_ATTENTION, decode_step_attention)
AttentionMaskInterface.register(DECODE_STEP_ATTENTION, sdpa_mask)


def use_decode_step_attention(model: Any) -> None:
    """Give ``model`` :func:`decode_step_attention` when it runs transformers' ``sdpa`` attention (another
    implementation, eager or a GPU kernel, is left as it is). Nothing is saved with the model: its
    ``config.json`` does not record the attention implementation."""
    config = getattr(model, "config", None)
    if getattr(config, "_attn_implementation", None) == "sdpa" and hasattr(model, "set_attn_implementation"):
        model.set_attn_implementation(DECODE_STEP_ATTENTION)
