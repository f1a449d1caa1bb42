from __future__ import annotations

import random
from collections import Counter

import pytest

from hf_ecg.data.corpus import Corpus, Sentence
from hf_ecg.data.statistics import CorpusStatistics
from hf_ecg.runtime.mentions import MentionBank
from hf_ecg.runtime.tags import Span
from hf_ecg.synthetic.entity_sequences import (
    FixedSampler,
    GoldSampler,
    TargetDistributionSampler,
    UnderRepresentedSampler,
    UniformSampler,
    make_sampler,
)


def sentence(text: str, *spans: tuple[int, int, str]) -> Sentence:
    return Sentence(tuple(text.split()), tuple(Span(*s) for s in spans))


CORPUS = Corpus(
    [
        sentence("aspirin cures headache", (0, 1, "Chem"), (2, 3, "Dis")),
        sentence("aspirin again", (0, 1, "Chem")),
        sentence("big bad fever here", (1, 3, "Dis")),
        sentence("nothing here"),
        sentence("ibuprofen", (0, 1, "Chem")),
    ],
    name="toy",
)


def test_mention_bank_counts_and_round_trips_through_dict():
    bank = MentionBank.from_sentences(CORPUS)
    assert bank.types == ["Chem", "Dis"]
    assert bank.counts("Chem") == Counter({("aspirin",): 2, ("ibuprofen",): 1})
    assert bank.sizes() == {"Chem": {"unique": 2, "total": 3}, "Dis": {"unique": 2, "total": 2}}
    assert MentionBank.from_dict(bank.to_dict()) == bank
    assert bank.to_dict()["Chem"][0] == {"mention": "aspirin", "tokens": ["aspirin"], "count": 2}


def test_mention_bank_sampling_strategies():
    bank = MentionBank.from_lists({"X": ["a"] * 9 + ["b c"]})
    rng = random.Random(0)
    weighted = Counter(bank.sample("X", rng, "weighted") for _ in range(2000))
    uniform = Counter(bank.sample("X", rng, "random") for _ in range(2000))
    assert weighted[("a",)] > 1600  # 90% of the mass
    assert 800 < uniform[("b", "c")] < 1200  # half of the distinct mentions
    with pytest.raises(ValueError, match="known types: X"):
        bank.sample("Y", rng)
    with pytest.raises(ValueError, match="unknown fill strategy"):
        bank.sample("X", rng, "magic")


def test_corpus_statistics():
    stats = CorpusStatistics.from_corpus(CORPUS)
    assert (stats.num_sentences, stats.num_entities, stats.num_blocks) == (5, 5, 10)
    assert stats.entity_type_counts == {"Chem": 3, "Dis": 2}
    assert stats.sequence_counts == Counter({("Chem", "Dis"): 1, ("Chem",): 2, ("Dis",): 1, (): 1})
    assert CorpusStatistics.from_dict(stats.to_dict()) == stats
    assert "5 sentences" in stats.summary()


def test_gold_sampler_mimics_the_gold_distribution():
    stats = CorpusStatistics.from_corpus(CORPUS)
    draws = Counter(GoldSampler(stats.sequence_counts).sample(5000, random.Random(1)))
    assert set(draws) == set(stats.sequence_counts)
    assert 1700 < draws[("Chem",)] < 2300  # 2 of 5


def test_urg_weights_sentences_by_inverse_type_frequency():
    # Chem 9 times, Dis once: a [Dis] sentence weighs 1/1, a [Chem] sentence 1/9.
    counts = Counter({("Chem",): 9, ("Dis",): 1, (): 5})
    draws = Counter(UnderRepresentedSampler(counts).sample(4000, random.Random(2)))
    assert draws[()] == 0  # entity-free sentences weigh 0
    assert 1800 < draws[("Dis",)] < 2200  # weight 1 vs 9 * 1/9 = 1


def test_uniform_and_target_samplers_keep_gold_lengths():
    counts = Counter({("Chem", "Chem"): 3, ("Dis",): 1})
    rng = random.Random(3)
    uniform = UniformSampler(counts, ["Chem", "Dis"]).sample(2000, rng)
    assert {len(s) for s in uniform} == {1, 2}
    assert 0.4 < sum(t == "Dis" for s in uniform for t in s) / sum(map(len, uniform)) < 0.6
    target = TargetDistributionSampler(counts, {"Dis": 1.0, "Chem": 0.0}).sample(100, rng)
    assert all(set(s) <= {"Dis"} for s in target)


def test_same_seed_same_sequences():
    stats = CorpusStatistics.from_corpus(CORPUS)
    for name in ("gold", "urg", "uniform"):
        sampler = make_sampler(name, stats)
        assert sampler.sample(20, random.Random(7)) == sampler.sample(20, random.Random(7))


def test_unknown_types_and_samplers_name_the_known_ones():
    stats = CorpusStatistics.from_corpus(CORPUS)
    with pytest.raises(ValueError, match=r"unknown entity type\(s\) \['Drug'\]; known types: Chem, Dis"):
        make_sampler("fixed", stats, sequences=[["Chem", "Drug"]])
    with pytest.raises(ValueError, match="known types: Chem, Dis"):
        make_sampler("target", stats, distribution={"Drug": 1.0})
    with pytest.raises(ValueError, match="known: gold, urg"):
        make_sampler("zipf", stats)


def test_fixed_sampler_cycles():
    sampler = FixedSampler([["A"], []])
    assert sampler.sample(3, random.Random()) == [("A",), (), ("A",)]
    assert sampler.sample(1, random.Random()) == [()]
