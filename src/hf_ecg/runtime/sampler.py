"""The draw of one token per row, for templates and written mentions alike: one set of sampling settings
(:class:`SamplingParams`, from :class:`~hf_ecg.runtime.decoding_config.DecodingConfig`), read the same way by both.

The template decoder draws with a ``torch.Generator`` (one per decode call, :meth:`Sampler.draw`); the mention
writer with a uniform number per row from the row's own random stream (:meth:`Sampler.draw_at`, so that a
template's mentions do not depend on the batch it is written in). Both keep the ``top_k`` most likely tokens,
apply the temperature and ``top_p``, and without sampling take the most likely token.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import torch
from transformers import LogitsProcessorList, TemperatureLogitsWarper, TopPLogitsWarper

__all__ = ["Sampler", "SamplingParams"]


@dataclass(frozen=True)
class SamplingParams:
    """How a token is drawn: ``do_sample`` (false: the most likely token), ``temperature``, ``top_k`` (0 keeps
    all) and ``top_p`` (1 keeps all)."""

    do_sample: bool = True
    temperature: float = 1.0
    top_k: int = 50
    top_p: float = 1.0

    def generate_kwargs(self) -> dict[str, Any]:
        """The same settings as ``model.generate()`` takes them."""
        if not self.do_sample:
            return {"do_sample": False}
        return {"do_sample": True, "temperature": self.temperature, "top_k": self.top_k, "top_p": self.top_p}


class Sampler:
    """Draws a token per row from scores the constraints have already masked (``-inf``)."""

    def __init__(self, params: SamplingParams) -> None:
        self.params = params
        warpers: list[Any] = [TemperatureLogitsWarper(params.temperature)] if params.temperature != 1.0 else []
        self._warpers = LogitsProcessorList(warpers + ([TopPLogitsWarper(params.top_p)] if params.top_p < 1.0 else []))

    def _candidates(self, scores: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor | None]:
        """The scores to draw from, warped, and the token ids they stand for (``None``: the whole vocabulary).
        Top-k is applied by keeping the k best (``torch.topk``) rather than masking the rest: the same
        distribution, without a softmax over ~50k tokens per row."""
        candidates = None
        if 0 < self.params.top_k < scores.shape[-1]:
            scores, candidates = scores.topk(self.params.top_k, dim=-1)
        return self._warpers(None, scores), candidates

    def draw(self, scores: torch.Tensor, rng: torch.Generator) -> torch.Tensor:
        """A token id per row (a 1-D tensor), drawn with ``rng``."""
        if not self.params.do_sample:
            return scores.argmax(dim=-1)
        scores, candidates = self._candidates(scores)
        choice = torch.multinomial(torch.softmax(scores, dim=-1), 1, generator=rng)
        return (candidates.gather(1, choice) if candidates is not None else choice).squeeze(1)

    def draw_at(self, scores: torch.Tensor, uniforms: Sequence[float]) -> list[int]:
        """A token id per row, row ``r`` at ``uniforms[r]`` (in [0, 1)) of its distribution's cumulative sum."""
        if not self.params.do_sample:
            return scores.argmax(dim=-1).tolist()
        scores, candidates = self._candidates(scores)
        # Inverse-CDF sampling: the distribution torch.multinomial draws from, at a fraction of its CPU cost over
        # a whole vocabulary. The draw is kept below the total (the largest float32 under it), so the token found
        # is one whose probability is not zero: never one past the last allowed token.
        cdf = torch.softmax(scores, dim=-1).cumsum(-1)
        total = cdf[:, -1:]
        at = torch.tensor([[u] for u in uniforms], dtype=torch.float64, device=cdf.device)
        draw = torch.minimum((at * total).to(cdf.dtype), torch.nextafter(total, torch.zeros_like(total)))
        choice = torch.searchsorted(cdf, draw, right=True)
        return (candidates.gather(1, choice) if candidates is not None else choice).squeeze(1).tolist()
