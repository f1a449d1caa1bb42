"""Sketches: the round trip of their text, what a sketch keeps, and which templates fit it."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from conftest import labelled_sentences
from hf_ecg.runtime.blocks import ENDTEXT, Template, decompose, tag_label
from hf_ecg.runtime.sketches import GAP_TOKEN, Sketch


@st.composite
def templates_and_kept(draw):
    tokens, spans = draw(labelled_sentences())
    template, _ = decompose(tokens, spans)
    words = [i for i, token in enumerate(template.tokens) if tag_label(token) is None]
    kept = draw(st.sets(st.sampled_from(words))) if words else set()
    return template, kept


@given(templates_and_kept())
def test_a_sketch_reads_back_from_its_text_and_fits_its_template(item):
    template, kept = item
    sketch = Sketch.of(template, kept)
    assert Sketch.parse(str(sketch)) == sketch
    assert sketch.fits(template)
    assert sketch.entity_types == template.entity_types
    assert sketch.kept_words == tuple(template.tokens[i] for i in sorted(kept))
    assert all(not (a == b == GAP_TOKEN) for a, b in zip(sketch.pieces, sketch.pieces[1:], strict=False))
    # a gap for each run of left-out words, none elsewhere
    left_out = [i not in kept and tag_label(t) is None for i, t in enumerate(template.tokens)]
    runs = sum(1 for i, out in enumerate(left_out) if out and (i == 0 or not left_out[i - 1]))
    assert sketch.pieces.count(GAP_TOKEN) == max(runs, 0 if template.tokens else 1)
    blocks = sketch.blocks()
    assert len(blocks) == len(template.entity_types) + 1 and blocks[-1][-1] == ENDTEXT
    assert sketch.questions()[0] == f"{sketch} {ENDTEXT}"
    assert sketch.questions()[-1] == " ".join(blocks[-1])


def test_kept_words_are_tokens_not_substrings():
    template = Template(("ATM", "kinase", "binds", "<Protein>", "in", "AT", "cells", "."))
    sketch = Sketch.of(template, [5])
    assert str(sketch) == f"{GAP_TOKEN} <Protein> {GAP_TOKEN} AT {GAP_TOKEN}"
    assert sketch.fits(Template(("the", "<Protein>", "of", "AT", "patients", ".")))
    assert not sketch.fits(Template(("the", "<Protein>", "of", "ATM", "patients", ".")))  # AT is not inside ATM


@pytest.mark.parametrize(
    ("tokens", "fits"),
    [
        (("<Chemical>", "induced", "<Disease>", "."), True),  # a gap may hold no word
        (("Oral", "<Chemical>", "quickly", "induced", "severe", "<Disease>", "in", "rats", "."), True),
        (("<Chemical>", "induced", "<Disease>"), False),  # the kept end is missing
        (("<Chemical>", "caused", "<Disease>", "."), False),  # a kept word replaced
        (("<Disease>", "induced", "<Chemical>", "."), False),  # the tags out of order
        (("<Chemical>", "induced", "<Disease>", "and", "<Disease>", "."), False),  # a tag the sketch lacks
        (("Then", "<Chemical>", "induced", "<Disease>", "."), True),
    ],
)
def test_a_template_fits_a_sketch_only_with_its_tags_and_kept_words_in_order(tokens, fits):
    sketch = Sketch.parse(f"{GAP_TOKEN} <Chemical> {GAP_TOKEN} induced {GAP_TOKEN} <Disease> {GAP_TOKEN} .")
    assert sketch.fits(Template(tokens)) is fits


@pytest.mark.parametrize(
    "pieces",
    [(), (GAP_TOKEN, GAP_TOKEN), ("two words",), ("a", ENDTEXT), ("<|context|>",), ("",)],
)
def test_a_malformed_sketch_is_refused(pieces):
    with pytest.raises(ValueError):
        Sketch(pieces)


def test_a_kept_index_of_a_tag_or_outside_is_refused():
    template = Template(("a", "<Chemical>", "b"))
    for kept in ([1], [3], [-1]):
        with pytest.raises(ValueError, match="not words of the template"):
            Sketch.of(template, kept)


def test_the_sketch_layout_asks_each_block_with_the_sketch_from_it_on():
    from hf_ecg.runtime.layout import layout_named

    template = Template(tuple("Oral <Chemical> quickly induced severe <Disease> in rats .".split()))
    sketch = Sketch.of(template, [3, 8])
    samples = layout_named("sketch").samples(template, sketch)
    assert [s.question for s in samples] == sketch.questions()
    assert [s.answer for s in samples] == [
        "Oral <Chemical>",
        "quickly induced severe <Disease>",
        f"in rats . {ENDTEXT}",
    ]
    assert samples[1].context == "Oral <Chemical>"
    # without a sketch: the template's tags, a gap around each
    assert layout_named("sketch").samples(template)[0].question == Sketch.of(template).questions()[0]


def test_a_sketch_generator_learns_the_gap_token_and_its_layout(sketch_model):
    import json

    from transformers import AutoTokenizer

    model, _ = sketch_model
    assert json.loads((model / "ecg_config.json").read_text())["layout"] == "sketch"
    tokenizer = AutoTokenizer.from_pretrained(model)
    assert len(tokenizer(GAP_TOKEN, add_special_tokens=False)["input_ids"]) == 1  # one special token, never split


def test_every_sketch_mention_is_in_its_sample_once_with_its_type(sketch_model, tmp_path):
    """GeniusAug through the one writer: each sample holds its sketch's (type, mention) multiset, in order; the
    manifest names the family; each sample's overlap with its source sentence is recorded."""
    import json

    import datasets

    from hf_ecg.data.corpus import read_conll
    from hf_ecg.runtime.decoding import DecodingConfig
    from hf_ecg.runtime.tags import tags_to_spans
    from hf_ecg.synthetic.genius import generate_from_sketches
    from hf_ecg.synthetic.run_config import DatasetRunConfig

    model, data = sketch_model
    gold = read_conll(data)
    sketched = [s for s in gold if s.spans]
    out = generate_from_sketches(
        model,
        tmp_path / "out",
        7,
        sketches=gold,
        decoding=DecodingConfig(max_block_tokens=4, batch_size=4),
        run=DatasetRunConfig(samples_per_shard=3, progress_bar=False),
    )
    rows = datasets.load_dataset(str(out), split="train").sort("id")
    names = rows.features["ner_tags"].feature.names
    for row in rows:
        source = sketched[row["id"] % len(sketched)]
        spans, _ = tags_to_spans([names[k] for k in row["ner_tags"]], "IOB2")
        found = [(s.label, tuple(row["tokens"][s.start : s.end])) for s in spans]
        assert found == [(s.label, tuple(source.tokens[s.start : s.end])) for s in source.spans]
        assert set(row["mention_sources"]) <= {"sketch"}
        assert Sketch.parse(row["sketch"]).entity_types == tuple(s.label for s in source.spans)
        assert row["source_shared_run"] >= 0 and 0 <= row["source_new_share"] <= 1
    manifest = json.loads((out / "ecg_generation.json").read_text())
    assert manifest["method"] == "geniusaug" and manifest["settings"]["kept_share"] == 0.2
    overlap = manifest["source_overlap"]
    assert overlap["samples"] == 7 and 0 <= overlap["near_copy_share"] <= 1 and overlap["longest_shared_run"] >= 0
    card = " ".join((out / "README.md").read_text(encoding="utf-8").split())
    assert "# Synthetic NER data written by a GeniusAug generator" in card and "baseline" not in card
    assert f"written around the sketches of `{data.name}`'s {len(sketched)} sentences with an entity" in card
    assert "each tag holds the mention its sketch's source sentence has there" in card


def test_a_sketch_run_refuses_what_it_cannot_write_before_writing(sketch_model, tmp_path):
    from hf_ecg.data.corpus import Corpus, Sentence, read_conll
    from hf_ecg.runtime.tags import Span
    from hf_ecg.synthetic.genius import generate_from_sketches
    from hf_ecg.synthetic.sketching import SketchConfig
    from tiny import save_tiny_ecg_model

    model, data = sketch_model
    gold = read_conll(data)
    cases = [
        (save_tiny_ecg_model(tmp_path / "ecg"), gold, "is not a sketch generator"),
        (model, Corpus([Sentence(("no", "entity"), ())], name="plain"), "no sentence with an entity"),
        (model, Corpus([Sentence(("BRCA1",), (Span(0, 1, "Gene"),))], name="genes"), "the generator does not write"),
    ]
    for generator, sketches, message in cases:
        with pytest.raises(ValueError, match=message):
            generate_from_sketches(generator, tmp_path / "out", 3, sketches=sketches)
        assert not (tmp_path / "out").exists()
    for share in (0, 1.5, float("nan")):
        with pytest.raises(ValueError, match="kept share"):
            SketchConfig(kept_share=share)


def test_a_sketch_request_to_a_generator_of_another_layout_is_refused(tiny):
    from hf_ecg.runtime.decoding import make_decoder
    from hf_ecg.runtime.decoding_config import DecodingConfig

    model, tokenizer, config = tiny
    decoder = make_decoder(model, tokenizer, config, DecodingConfig(max_block_tokens=3))
    with pytest.raises(ValueError, match="needs a sketch generator"):
        decoder.decode([Sketch.of_types(config.entity_types[:1])])


def test_cli_generate_from_sketches_and_its_bad_input(sketch_model, tmp_path, capsys):
    import json

    import datasets

    from hf_ecg.cli import main
    from tiny import save_tiny_ecg_model

    model, data = sketch_model
    out = tmp_path / "out"
    argv = ["generate", "--model", str(model), "-n", "4", "-o", str(out), "--max-block-tokens", "4"]
    assert main([*argv, "--sketches", str(data), "--candidates", "2"]) == 0
    assert "wrote 4 samples" in capsys.readouterr().out
    rows = datasets.load_dataset(str(out), split="train")
    manifest = json.loads((out / "ecg_generation.json").read_text())
    assert rows.num_rows == 4 and manifest["settings"]["candidates_per_sketch"] == 2
    assert manifest["source_overlap"]["whole"] == sum(rows["whole"])
    empty = tmp_path / "empty.tsv"
    empty.write_text("")
    bad = tmp_path / "bad"
    cases = [
        (["--sketches", str(data), "--kept-share", "0"], "--kept-share"),
        (["--sketches", str(data), "--kept-share", "1.5"], "--kept-share"),
        (["--sketches", str(data), "--kept-share", "nan"], "--kept-share"),
        (["--sketches", str(data), "--candidates", "0"], "--candidates"),
        (["--sketches", str(data), "--mixup", "1.5"], "--mixup"),
        (["--sketches", str(data), "--entities", "Chemical"], "--entities asks for entity sequences"),
        (["--sketches", str(empty)], "empty.tsv"),
    ]
    capsys.readouterr()
    for extra, message in cases:
        assert main([*argv[:-4], "-o", str(bad), *extra]) == 2
        err = capsys.readouterr().err
        assert message in err and len(err.strip().splitlines()) == 1, err
        assert not bad.exists()
    ecg = save_tiny_ecg_model(tmp_path / "ecg")
    assert main(["generate", "--model", str(ecg), "-n", "2", "-o", str(bad), "--sketches", str(data)]) == 2
    assert "is not a sketch generator" in capsys.readouterr().err and not bad.exists()


def test_a_sketch_generator_learns_from_text_with_counts_on_its_card_only(tmp_path, capsys):
    """``train --layout sketch --unlabelled TEXT --dictionary D``: a seeded choice of the text's sentences, labelled by
    the dictionary (a sentence without a name too), each asked with its sketches; the card counts them, never the
    text."""
    from hf_ecg.cli import main
    from hf_ecg.hub.model_card import ECGModelCardData
    from tiny import save_tiny_model, toy_corpus

    data = toy_corpus(tmp_path / "toy.tsv", repeat=2)
    text = tmp_path / "text.txt"
    sentences = ["Aspirin cures fever .", "No Quarvelline effect was seen .", "Patients with headache slept ."]
    text.write_text("\n".join(sentences) + "\n", encoding="utf-8")
    names = tmp_path / "names.json"
    names.write_text('{"Chemical": ["Aspirin"], "Disease": ["fever", "headache"]}', encoding="utf-8")
    argv = ["train", "--data", str(data), "--model", str(save_tiny_model(tmp_path / "base")), "-o", str(tmp_path / "m")]
    quick = ["--max-steps", "2", "--layout", "sketch", "--use_cpu", "true", "--report_to", "none"]
    assert main([*argv, *quick, "--unlabelled", str(text), "--dictionary", str(names)]) == 0
    assert "sketched 3 of your text's 3 sentences (3 names)" in capsys.readouterr().out
    card = ECGModelCardData.load(tmp_path / "m")
    assert card.text_sentences["sketched"] == 3 and card.text_sentences["with_names"] == 2
    assert card.text_sentences["blocks"] > 0 and not (tmp_path / "m" / "own-sentences").exists()
    readme = (tmp_path / "m" / "README.md").read_text(encoding="utf-8")
    assert "learned to write around sketches of unlabelled text: 3 of the text's 3 sentences" in readme
    for path in (tmp_path / "m").rglob("*"):
        if path.is_file():
            assert b"Quarvelline" not in path.read_bytes(), path


def test_the_pipeline_takes_a_sketch_and_returns_the_usual_sample(sketch_model):
    from transformers import pipeline

    import hf_ecg  # noqa: F401  (registers the task)

    model, _ = sketch_model
    gen = pipeline("entity-controlled-generation", model=str(model))
    sketch = Sketch.parse(f"{GAP_TOKEN} <Chemical> {GAP_TOKEN} cures {GAP_TOKEN} <Disease> {GAP_TOKEN}")
    samples = gen(sketch, num_return_sequences=2, seed=0, max_block_tokens=4)
    assert len(samples) == 2
    for sample in samples:
        assert sample["entities"] == ["Chemical", "Disease"]
        assert {"tokens", "ner_tags", "text", "template", "complete"} <= set(sample)
    assert len(gen([sketch, ["Disease"]], seed=0, max_block_tokens=4)) == 2  # a sketch beside a plain request


def _written(text: str, *, complete: bool = True, forced: int = 0):
    from hf_ecg.runtime.decoding_config import DecodedTemplate

    template = Template(tuple(text.split()))
    return DecodedTemplate(template.entity_types, template, forced_tags=forced, complete=complete)


def test_a_candidate_reads_better_whole_then_with_fewer_odd_words_then_keeping_its_sketch():
    from hf_ecg.synthetic.genius import candidate_score

    sketch = Sketch.parse(f"{GAP_TOKEN} <Disease> {GAP_TOKEN} induced by <Chemical> {GAP_TOKEN}")
    known = frozenset({"severe", "was", "induced", "caused", "by", "in", "rats", "the"})

    def score(text: str, **flags):
        return candidate_score(_written(text, **flags), sketch, known, (".",))

    good = score("Severe <Disease> was induced by <Chemical> in rats .")
    assert good.whole and good.keeps_sketch and good.odd_share == 0
    # each flaw loses to the good sentence, and a broken sentence loses to one that only drops a kept word
    for worse in (
        score("Severe <Disease> was induced by <Chemical> in rats", complete=False),
        score("Severe <Disease> was induced by <Chemical> in rats .", forced=1),
        score("<Disease> was was was induced by <Chemical> .", complete=True),
        score("<Disease> . The rats induced by <Chemical> .", complete=True),
        score("Severe <Disease> was caused by <Chemical> in rats ."),
        score("Severe <Disease> was induced by <Chemical> in asewareness 12 ."),
    ):
        assert worse.key() < good.key()
    assert (
        score("<Disease> was caused by <Chemical> .").key()
        > score("<Disease> was induced induced induced by <Chemical> .").key()
    )
    assert score("Severe <Disease> was induced by <Chemical> in 12 rats .").odd_share == pytest.approx(1 / 8)
    # the filled sample's words, when given, are counted: an invented name in a tag makes the sample worse
    template = _written("Severe <Disease> was induced by <Chemical> in rats .")
    named = candidate_score(template, sketch, known, (".",), "Severe pain was induced by rats in rats .".split())
    invented = candidate_score(
        template, sketch, known, (".",), "Severe pain was induced by thromboemployment in rats .".split()
    )
    assert named.odd_share == pytest.approx(1 / 9) and invented.key() < named.key()
    # an odd word weighs more than a dropped kept word: reading well comes before keeping the sketch
    assert (
        score("Severe <Disease> was caused by <Chemical> in rats .").key()
        > score("Severe <Disease> was induced by <Chemical> in asewareness .").key()
    )


def test_of_k_candidates_a_sample_keeps_the_best_and_records_how_it_reads():
    """``candidates_per_sketch``: each sample's sketch is asked k times in a row and the best candidate is kept (the
    first of equals); the sample says whether it reads whole and keeps its sketch's words."""
    from types import SimpleNamespace

    from hf_ecg.runtime.decoding_config import ShardSeeds
    from hf_ecg.synthetic.genius import SketchSource
    from hf_ecg.synthetic.sketching import SketchConfig

    sketch = Sketch.parse(f"{GAP_TOKEN} <Disease> {GAP_TOKEN} induced by <Chemical> {GAP_TOKEN}")
    candidates = [
        _written("Severe <Disease> was induced by <Chemical> in rats", complete=False),  # sample 0
        _written("Severe <Disease> was caused by <Chemical> in rats ."),
        _written("<Disease> was induced by <Chemical> ."),  # the best of sample 0
        _written("<Disease> induced by <Chemical> ."),  # sample 1: the first of three equals
        _written("<Disease> was induced by <Chemical> ."),
        _written("<Disease> is induced by <Chemical> ."),
    ]
    asked, reported = [], []

    def templates(requests, seeds, progress):
        asked.extend(requests)
        progress(4, None)
        progress(2, None)
        return candidates, None

    def fill(decoded, rng, mentions, origins):  # the tags filled: "asthma" is known, "aspirin" is not
        words = [{"<Disease>": "asthma", "<Chemical>": "aspirin"}.get(w, w) for w in decoded.template.tokens]
        return {"template": str(decoded.template), "tokens": words}

    run = SimpleNamespace(
        templates=templates, filler=SimpleNamespace(fill=fill), ecg_config=SimpleNamespace(sentence_endings=["."])
    )
    source = SketchSource(
        "m",
        "float32",
        run,
        "gold",
        [(sketch, (("asthma",), ("aspirin",)), ("<Disease>", "with", "<Chemical>"))],
        SketchConfig(candidates_per_sketch=3),
        known_words=frozenset({"was", "induced", "by", "is", "in", "rats", "asthma", "aspirin"}),
    )
    (rows,), _ = source.shard_rows([(range(2), ShardSeeds.of(1, 0))], lambda n, _: reported.append(n))
    assert asked == [sketch] * 6 and sum(reported) == 2  # progress in samples, not candidates
    assert [row["template"] for row in rows] == [
        "<Disease> was induced by <Chemical> .",
        "<Disease> induced by <Chemical> .",
    ]
    assert all(row["whole"] and row["keeps_sketch"] for row in rows)


def test_a_shareable_sketch_set_drops_the_samples_that_copy_the_text(sketch_model, tmp_path, capsys):
    """``generate --sketches PRIVATE --shareable --unlabelled PRIVATE``: the text-copy rule judges sketch samples as
    it judges ECG-QALM's; a text that holds two samples' sentences has those two dropped, and nothing of it kept."""
    import json

    import datasets

    from hf_ecg.cli import main

    model, data = sketch_model
    argv = ["generate", "--model", str(model), "-n", "4", "--max-block-tokens", "4", "--sketches", str(data)]
    assert main([*argv, "-o", str(tmp_path / "open")]) == 0
    capsys.readouterr()
    written = datasets.load_dataset(str(tmp_path / "open"), split="train").sort("id")
    text = tmp_path / "private.tsv"  # CoNLL: its sentences tokenized as the samples are
    planted = [" ".join(tokens) for tokens in written["tokens"][:2]]
    lines = [*written["tokens"][:2], ["an", "unrelated", "sentence", "."]]
    text.write_text("\n\n".join("\n".join(f"{word}\tO" for word in tokens) for tokens in lines) + "\n")
    out = tmp_path / "shareable"
    assert main([*argv, "-o", str(out), "--shareable", "--unlabelled", str(text), "--gold", str(data)]) == 0
    capsys.readouterr()
    kept = datasets.load_dataset(str(out), split="train")
    assert not {" ".join(tokens) for tokens in kept["tokens"]} & set(planted)
    manifest = json.loads((out / "ecg_generation.json").read_text())
    assert manifest["selection"]["dropped"].get("text-copy", 0) >= 2


@given(templates_and_kept(), templates_and_kept(), st.randoms(use_true_random=False))
def test_a_mixed_sketch_joins_a_start_and_an_end_with_their_mentions(first, second, rng):
    """Sketch mixup: the start of one sketch up to a gap, one gap, the end of another after a gap; each tag keeps
    the mention its own sentence has there; a sketch with no gap (nothing to cut) comes back as it was."""
    from hf_ecg.synthetic.sketching import mixed_sketch

    sketched = []
    for template, kept in (first, second):
        sketch = Sketch.of(template, kept)
        mentions = tuple((f"m{len(sketched)}-{k}",) for k in range(len(sketch.entity_types)))
        sketched.append((sketch, mentions, template.tokens))
    (a, a_mentions, _), (b, b_mentions, _) = sketched
    mix, mentions, source = mixed_sketch(sketched[0], sketched[1], rng)
    assert len(mentions) == len(mix.entity_types)
    if (mix, mentions) == (a, a_mentions):
        return  # nothing to cut that leaves a tag, or a cut that gave the first sketch back whole
    assert mix.entity_types  # a mix holds a tag
    assert GAP_TOKEN in mix.pieces
    heads = [k for k in range(len(mix.pieces)) if mix.pieces[k] == GAP_TOKEN and a.pieces[:k] == mix.pieces[:k]]
    assert any(b.pieces[len(b.pieces) - (len(mix.pieces) - k - 1) :] == mix.pieces[k + 1 :] for k in heads)
    head_tags = [m for m in mentions if m[0].startswith("m0-")]
    tail_tags = [m for m in mentions if m[0].startswith("m1-")]
    assert mentions == (*head_tags, *tail_tags)
    assert head_tags == list(a_mentions[: len(head_tags)]) and tail_tags == list(
        b_mentions[len(b_mentions) - len(tail_tags) :]
    )
    assert (
        source[: len(first[0].tokens)] == first[0].tokens
        and source[len(source) - len(second[0].tokens) :] == second[0].tokens
    )


def test_mixed_sketches_keep_each_mention_with_its_own_type(sketch_model, tmp_path):
    """``mixup_share=1``: every sample's sketch mixes two sentences; each tag still holds a mention of its own type
    from the gold, the mix is recorded, and some samples hold another entity sequence than their own sentence's."""
    import json

    import datasets

    from hf_ecg.data.corpus import read_conll
    from hf_ecg.runtime.decoding import DecodingConfig
    from hf_ecg.runtime.tags import tags_to_spans
    from hf_ecg.synthetic.genius import generate_from_sketches
    from hf_ecg.synthetic.run_config import DatasetRunConfig
    from hf_ecg.synthetic.sketching import SketchConfig

    model, data = sketch_model
    gold = read_conll(data)
    sketched = [s for s in gold if s.spans]
    known = {(s.label, tuple(x.tokens[s.start : s.end])) for x in sketched for s in x.spans}
    out = generate_from_sketches(
        model,
        tmp_path / "out",
        8,
        sketches=gold,
        config=SketchConfig(mixup_share=1.0),
        decoding=DecodingConfig(max_block_tokens=4, batch_size=4),
        run=DatasetRunConfig(samples_per_shard=4, progress_bar=False),
    )
    rows = datasets.load_dataset(str(out), split="train").sort("id")
    names = rows.features["ner_tags"].feature.names
    moved = 0
    for row in rows:
        spans, _ = tags_to_spans([names[k] for k in row["ner_tags"]], "IOB2")
        assert spans and {(s.label, tuple(row["tokens"][s.start : s.end])) for s in spans} <= known
        assert tuple(s.label for s in spans) == Sketch.parse(row["sketch"]).entity_types  # the mixed sketch's tags
        own = sketched[row["id"] % len(sketched)]
        moved += [s.label for s in spans] != [s.label for s in own.spans]
    assert moved > 0
    assert json.loads((out / "ecg_generation.json").read_text())["settings"]["mixup_share"] == 1.0
