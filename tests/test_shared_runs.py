"""The longest run of tokens a sample shares with the user's text, outside its entity mentions."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from hf_ecg.synthetic.shared_runs import SharedRun, SharedRunIndex, run_distribution

WORDS = st.sampled_from(["the", "The", "patients", "with", "fever", "were", "given", "aspirin", ".", "of", "a"])


def brute_force(tokens, masked, sentences) -> int:
    """The longest run of ``tokens`` outside ``masked`` that a sentence holds, case aside, by trying every one."""
    best = 0
    folded = [[t.casefold() for t in s] for s in sentences]
    for i in range(len(tokens)):
        for j in range(i + 1, len(tokens) + 1):
            if any(masked[i:j]):
                break
            run = [t.casefold() for t in tokens[i:j]]
            if any(run == s[a : a + len(run)] for s in folded for a in range(len(s) - len(run) + 1)):
                best = max(best, j - i)
    return best


@given(
    sentences=st.lists(st.lists(WORDS, min_size=1, max_size=12), min_size=1, max_size=6),
    tokens=st.lists(WORDS, min_size=1, max_size=14),
    data=st.data(),
    k=st.integers(1, 5),
)
def test_the_longest_run_is_what_trying_every_run_finds(sentences, tokens, data, k):
    masked = data.draw(st.lists(st.booleans(), min_size=len(tokens), max_size=len(tokens)))
    run = SharedRunIndex(sentences, k=k).longest_run(tokens, masked)
    expected = brute_force(tokens, masked, sentences)
    assert run.length == (expected if expected >= k else 0)
    if run.length:
        held = [t.casefold() for t in sentences[run.sentence]]
        assert any(
            [t.casefold() for t in tokens[i : i + run.length]] == held[a : a + run.length]
            for i in range(len(tokens))
            for a in range(len(held))
        )
        assert 0.0 < run.rouge_l <= 1.0
    else:
        assert run == SharedRun(0, None, 0.0)


def test_a_planted_copy_is_found_and_its_names_break_the_run():
    private = [
        "The patient was admitted with severe chest pain after three days of fever and cough .".split(),
        "No effect was seen .".split(),
    ]
    index = SharedRunIndex(private * 500)  # the index's size does not change the answer
    copied = "After lunch the patient was admitted with severe chest pain after three days of rest .".split()
    run = index.longest_run(copied)
    assert run.length == 12 and run.sentence % 2 == 0 and run.rouge_l > 0.7
    # the same words with a slot name in the middle: the run stops at the name
    masked = [token == "chest" for token in copied]
    assert index.longest_run(copied, masked).length == 6  # "the patient was admitted with severe"
    assert index.longest_run("Nothing here resembles it at all .".split()).length == 0


def test_the_distribution_counts_each_length_and_those_under_k():
    runs = [SharedRun(0, None, 0.0), SharedRun(5, 1, 0.5), SharedRun(5, 2, 0.4), SharedRun(9, 0, 0.9)]
    assert run_distribution(runs, 4) == {"<4": 1, "5": 2, "9": 1}
