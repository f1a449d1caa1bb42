"""Generation quality metrics: hand-computed cases, exactness of the pruned nearest ROUGE-L, perplexity."""

from __future__ import annotations

import json
import math
from collections import Counter

import datasets
import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

from hf_ecg.cli import main
from hf_ecg.data.corpus import read_conll
from hf_ecg.evaluation.quality import (
    block_health,
    distinct_n,
    entity_type_tvd,
    gold_self_report,
    has_repetition,
    length_ks,
    nearest_rouge_l,
    perplexity,
    rouge_l,
    surface_health,
    template_copy_rate,
    templates,
)
from hf_ecg.synthetic.run_config import DatasetRunConfig
from tiny import save_tiny_ecg_model, save_tiny_model, tiny_gpt2, tiny_tokenizer, toy_corpus


def test_distinct_n_by_hand():
    assert distinct_n([["a", "b", "c", "a", "b", "c"]], 3) == 3 / 4  # abc bca cab abc
    assert distinct_n([["a", "b", "c"], ["a", "b", "c"]], 3) == 1 / 2  # n-grams are pooled over sentences
    assert distinct_n([["a", "b", "a"]], 1) == 2 / 3
    assert distinct_n([["a", "b"]], 3) == 0.0  # no 3-gram at all


FRAGMENT = "In a".split()
REPETITION = "A TR beta 2 and 36-I 36-I 36-I were able to reduce it .".split()
LOOP = "the cells of the cells of the cells of the donor .".split()
COMPLETE = "IL-2 induces the expression of c-fos in T cells .".split()


def test_surface_health_on_a_fragment_a_repetition_and_a_complete_sentence():
    assert not has_repetition(COMPLETE) and not has_repetition(FRAGMENT)
    assert has_repetition(REPETITION) and has_repetition(LOOP)  # a token, and a 3-gram, three times in a row
    assert not has_repetition("a b a b c".split())  # twice is language, not a loop
    health = surface_health([FRAGMENT, REPETITION, LOOP, COMPLETE], ["."])
    assert health["complete"] == 3 / 4  # the fragment does not end like a sentence
    assert health["short"] == 1 / 4  # the fragment has 2 tokens
    assert health["repetition"] == 2 / 4
    assert health["length_mean"] == (2 + 14 + 12 + 10) / 4
    assert surface_health([COMPLETE], ["!"])["complete"] == 0.0  # complete means: ends like gold ends
    assert health["second_sentence"] == 0.0


def test_a_second_sentence_is_counted_where_complete_does_not_see_it():
    two = "Cells died . The rest grew .".split()
    tacked = "Cells died . p53 .".split()
    decimal = "P = 0 . 05 ( i . p . ) .".split()  # BC5CDR's way of writing numbers: counted, gold shows it too
    health = surface_health([two, tacked, decimal, COMPLETE], ["."], tags=[[], ["O"] * 3 + ["B-Protein", "O"], [], []])
    assert health["complete"] == 1.0
    assert health["second_sentence"] == 3 / 4
    assert surface_health([tacked], ["."])["second_sentence"] == 0.0  # without tags, lower-case p53 opens nothing


def test_length_distance_and_block_counts_by_hand():
    assert length_ks([5, 5, 10], [5, 5, 10]) == 0.0
    assert length_ks([1, 2], [8, 9]) == 1.0  # disjoint
    assert length_ks([2, 10], [10, 10]) == 0.5
    health = block_health([["A"], [], ["A", "B"]], forced=[1, 0, 0], cut=[0, 0, 2])
    assert health == {"blocks": 6, "blocks_forced": 1, "blocks_cut": 2, "blocks_forced_or_cut_share": 0.5}


def test_rouge_l_by_hand():
    cat = "the cat sat on the mat".split()
    assert rouge_l(cat, "the cat is on the mat".split()) == pytest.approx(2 * 5 / 12)  # LCS: the cat on the mat
    assert rouge_l("a b c d".split(), "d c b a".split()) == 2 * 1 / 8
    assert rouge_l("a b".split(), "a x b y z".split()) == 2 * 2 / 7
    assert rouge_l(cat, cat) == 1.0
    assert rouge_l([], cat) == 0.0


@given(
    a=st.lists(st.sampled_from("abcde"), max_size=70),
    b=st.lists(st.sampled_from("abcde"), max_size=70),
)
def test_the_bit_parallel_lcs_is_the_table_s(a, b):
    """The LCS length computed a token of one sentence at a time on integers is the dynamic programme's."""
    from hf_ecg.evaluation.quality import _lcs

    table = [[0] * (len(b) + 1) for _ in range(len(a) + 1)]
    for i, x in enumerate(a):
        for j, y in enumerate(b):
            table[i + 1][j + 1] = table[i][j] + 1 if x == y else max(table[i][j + 1], table[i + 1][j])
    assert _lcs(a, b) == table[-1][-1] == _lcs(b, a)


def test_gold_against_itself_gives_rouge_l_one(tmp_path):
    gold = [s.tokens for s in read_conll(toy_corpus(tmp_path / "toy.tsv"))]
    assert nearest_rouge_l(gold, gold) == [1.0] * len(gold)


words = st.lists(st.sampled_from("a b c d e f".split()), min_size=0, max_size=8)


@given(st.lists(words, min_size=1, max_size=6), st.lists(words, min_size=1, max_size=8))
def test_pruned_nearest_rouge_l_equals_brute_force(generated, reference):
    brute = [max(rouge_l(g, r) for r in reference) for g in generated]
    assert nearest_rouge_l(generated, reference) == brute


@given(st.lists(words, min_size=2, max_size=8))
def test_leave_one_out_nearest_rouge_l_equals_brute_force(reference):
    brute = [max(rouge_l(g, r) for j, r in enumerate(reference) if j != i) for i, g in enumerate(reference)]
    assert nearest_rouge_l(reference, reference, leave_one_out=True) == brute


def test_gold_self_report_by_hand():
    gold = [
        (["a", "b", "c", "."], ["B-X", "O", "O", "O"]),
        (["d", "b", "c", "."], ["B-X", "O", "O", "O"]),
        (["e", "f", "g", "h"], ["O", "O", "O", "O"]),
    ]
    report = gold_self_report(gold)
    # the first two share "b c ." (LCS 3 of 4 + 4 tokens) and their template "<X> b c ."
    assert report["rouge_l_max"] == pytest.approx(0.75) and report["rouge_l_mean"] == pytest.approx(0.5)
    assert report["template_copy_rate"] == pytest.approx(2 / 3) and report["entity_type_tvd"] == 0.0
    with pytest.raises(ValueError, match="at least two"):
        gold_self_report(gold[:1])


def test_templates_copy_rate_and_type_distance_by_hand():
    rows = [
        ("Aspirin cures pain".split(), ["B-Chemical", "O", "B-Disease"]),
        ("severe pain hurts".split(), ["B-Disease", "I-Disease", "O"]),
    ]
    assert templates(rows) == ["<Chemical> cures <Disease>", "<Disease> hurts"]
    assert template_copy_rate(["<Chemical> cures <Disease>", "x <Disease>"], templates(rows)) == 0.5
    assert entity_type_tvd(Counter(A=3, B=1), Counter(A=1, B=1)) == 0.25
    assert entity_type_tvd(Counter(A=1), Counter(B=2)) == 1.0
    assert entity_type_tvd(Counter(A=2, B=2), Counter(A=1, B=1)) == 0.0


def test_batched_padded_perplexity_equals_one_text_at_a_time():
    tokenizer = tiny_tokenizer()
    model = tiny_gpt2(len(tokenizer)).eval()
    texts = ["Aspirin cures headache .", "No effect was seen", "fever", "Patients with severe pain received it ."]
    nll, count = 0.0, 0
    with torch.no_grad():
        for text in texts:
            ids = torch.tensor([[tokenizer.eos_token_id, *tokenizer(text)["input_ids"]]])
            loss = model(input_ids=ids, labels=ids).loss.item()  # mean over len - 1 predicted tokens
            nll += loss * (ids.shape[1] - 1)
            count += ids.shape[1] - 1
    expected = math.exp(nll / count)
    assert perplexity(texts, model, tokenizer, batch_size=3) == pytest.approx(expected, rel=1e-5)
    assert perplexity(texts, model, tokenizer, batch_size=1) == pytest.approx(expected, rel=1e-5)


def test_cli_evaluate_quality_prints_json(tmp_path, capsys):
    from hf_ecg.runtime.decoding import DecodingConfig
    from hf_ecg.runtime.words import sentence_endings
    from hf_ecg.synthetic.generate import generate_dataset

    model_dir = save_tiny_ecg_model(tmp_path / "gen-model")
    generated = generate_dataset(
        model_dir,
        tmp_path / "synthetic",
        6,
        decoding=DecodingConfig(max_block_tokens=5),
        run=DatasetRunConfig(progress_bar=False),
    )
    gold = toy_corpus(tmp_path / "gold.tsv")
    ref_model = save_tiny_model(tmp_path / "ref-lm")
    out = tmp_path / "quality.json"
    code = main(
        [
            "evaluate",
            "quality",
            "--generated",
            str(generated),
            "--reference",
            str(gold),
            "--ref-model",
            str(ref_model),
            "--output",
            str(out),
        ]
    )
    assert code == 0
    report = json.loads(capsys.readouterr().out)
    assert report == json.loads(out.read_text())
    assert report["num_generated"] == 6 and report["num_reference"] == 4
    assert report["perplexity_ratio"] == pytest.approx(report["perplexity_generated"] / report["perplexity_gold"])
    assert 0 <= report["rouge_l_mean"] <= report["rouge_l_max"] <= 1
    own = gold_self_report([(s.tokens, s.tags) for s in read_conll(gold)])  # gold against the other gold sentences
    assert [report[f"{m}_gold"] for m in ("rouge_l_mean", "rouge_l_max", "template_copy_rate")] == pytest.approx(
        [own["rouge_l_mean"], own["rouge_l_max"], own["template_copy_rate"]]
    )
    assert 0 <= report["entity_type_tvd"] <= 1 and 0 <= report["template_copy_rate"] <= 1
    for measure in ("complete", "short", "repetition", "second_sentence"):
        assert 0 <= report[f"{measure}_generated"] <= 1 and 0 <= report[f"{measure}_gold"] <= 1
    assert report["complete_gold"] == 1.0 and 0 <= report["length_ks"] <= 1
    flags = datasets.load_dataset(str(generated), split="train")
    assert report["blocks"] == sum(len(e) + 1 for e in flags["entities"])
    assert report["blocks_forced"] == sum(flags["forced_tags"]) and report["blocks_cut"] == 0  # target rule
    # complete by the gold's own sentence endings (the decoder's flag reads the model's, here the defaults: '?' too)
    endings = sentence_endings([s.tokens for s in read_conll(gold)])
    assert report["complete_generated"] == pytest.approx(sum(t[-1] in endings for t in flags["tokens"]) / 6)
    assert report["tag_pieces"] == pytest.approx(sum(n > 0 for n in flags["tag_pieces"]) / 6)

    code = main(["evaluate", "quality", "--generated", str(gold), "--reference", str(gold), "--ref-model", "none"])
    same = json.loads(capsys.readouterr().out)
    assert code == 0 and "perplexity_ratio" not in same
    assert same["rouge_l_mean"] == 1.0 and same["template_copy_rate"] == 1.0 and same["entity_type_tvd"] == 0.0
    assert same["distinct_3_ratio"] == 1.0
    assert same["complete_generated"] == same["complete_gold"] and same["length_ks"] == 0.0
    assert "blocks" not in same and "tag_pieces" not in same  # a corpus file has no decoder flags


def test_several_generated_sets_score_as_each_alone(tmp_path):
    """quality_reports loads the reference LM and scores gold once; every set's report must be the one
    quality_report gives that set on its own."""
    from hf_ecg.evaluation.quality import quality_report, quality_reports

    gold = [(s.tokens, s.tags) for s in read_conll(toy_corpus(tmp_path / "gold.tsv"))]
    other = [("Ibuprofen eased the fever".split(), ["B-Chemical", "O", "O", "B-Disease"]), gold[0]]
    ref_model = str(save_tiny_model(tmp_path / "ref-lm"))
    together = quality_reports({"gold": gold, "other": other}, gold, ref_model=ref_model)
    assert set(together) == {"gold", "other"}
    for name, rows in (("gold", gold), ("other", other)):
        assert together[name] == pytest.approx(quality_report(rows, gold, ref_model=ref_model))
    assert together["gold"]["perplexity_ratio"] == pytest.approx(1.0)
    assert together["other"]["num_generated"] == 2 and together["other"]["rouge_l_max"] == 1.0
    with pytest.raises(ValueError, match="at least one generated"):
        quality_reports({"empty": []}, gold, ref_model=None)


def test_a_reference_lm_that_is_an_encoder_is_refused_in_one_line(tmp_path, capsys):
    """A BERT folder as --ref-model loaded as BertLMHeadModel and failed inside the first forward pass."""
    from tiny import save_tiny_bert, toy_corpus

    gold = toy_corpus(tmp_path / "gold.tsv")
    bert = save_tiny_bert(tmp_path / "bert")
    argv = ["evaluate", "quality", "--generated", str(gold), "--reference", str(gold), "--ref-model", str(bert)]
    assert main(argv) == 2
    err = [line for line in capsys.readouterr().err.splitlines() if "error:" in line]
    assert len(err) == 1 and "is not a causal language model (BertModel)" in err[0]
