"""The one draw templates and written mentions share: top-k, greedy, and the same distribution from both draws."""

from __future__ import annotations

import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from hf_ecg.runtime.decoding_config import DecodingConfig
from hf_ecg.runtime.sampler import Sampler, SamplingParams

scores_rows = st.lists(st.floats(-5, 5), min_size=12, max_size=12).map(lambda row: torch.tensor([row]))


@settings(max_examples=60, deadline=None)
@given(scores=scores_rows, k=st.integers(1, 11), uniform=st.floats(0, 1, exclude_max=True), seed=st.integers(0, 99))
def test_both_draws_keep_to_the_k_best_tokens(scores, k, uniform, seed):
    sampler = Sampler(SamplingParams(top_k=k, temperature=0.7))
    best = set(scores[0].topk(k).indices.tolist())
    assert sampler.draw_at(scores, [uniform])[0] in best
    assert int(sampler.draw(scores, torch.Generator().manual_seed(seed))[0]) in best


@given(scores=scores_rows, uniform=st.floats(0, 1, exclude_max=True))
def test_without_sampling_both_draws_take_the_most_likely_token(scores, uniform):
    sampler = Sampler(DecodingConfig(do_sample=False).sampling)
    most_likely = int(scores[0].argmax())
    assert sampler.draw_at(scores, [uniform]) == [most_likely]
    assert int(sampler.draw(scores, torch.Generator())[0]) == most_likely


def test_the_inverse_cdf_draw_follows_the_distribution_over_the_k_best():
    """Over many uniforms, each of the k best tokens is drawn about as often as its renormalised probability."""
    scores = torch.tensor([[2.0, 1.0, 0.0, -1.0, 3.0]])
    sampler = Sampler(SamplingParams(top_k=3))
    draws = sampler.draw_at(scores.expand(2000, -1), [(i + 0.5) / 2000 for i in range(2000)])
    expected = torch.softmax(torch.tensor([3.0, 2.0, 1.0]), -1)
    for token, share in zip([4, 0, 1], expected.tolist(), strict=True):
        assert abs(draws.count(token) / 2000 - share) < 0.01
    assert set(draws) == {4, 0, 1}


def test_the_decoding_config_gives_its_four_settings():
    config = DecodingConfig(do_sample=True, temperature=0.8, top_k=7, top_p=0.9)
    assert config.sampling == SamplingParams(True, 0.8, 7, 0.9)
    assert config.sampling.generate_kwargs() == {"do_sample": True, "temperature": 0.8, "top_k": 7, "top_p": 0.9}
    assert DecodingConfig(do_sample=False).sampling.generate_kwargs() == {"do_sample": False}
