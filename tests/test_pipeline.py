"""The entity-controlled-generation pipeline: what it returns for every input form, its registration, and
the remote-code set a pushed model carries."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import datasets
import pytest
from hypothesis import given
from hypothesis import strategies as st
from transformers import pipeline

import hf_ecg
from hf_ecg.runtime.blocks import tag_label
from hf_ecg.runtime.decoding import DecodedTemplate
from hf_ecg.runtime.filling import MentionFiller
from hf_ecg.runtime.mentions import MentionBank
from hf_ecg.runtime.tags import tags_to_spans
from tiny import GENERATION_TYPES as TYPES


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
        decoded.append(([len(chunk["sequences"]) for chunk in model_inputs["chunks"]], options["batch_size"]))
        return real_forward(self, model_inputs, **options)

    monkeypatch.setattr(type(gen), "_forward", counting_forward)
    # chunks are filled in groups of up to MAX_KEPT_PREFIXES samples (the groups generate_dataset writes mentions in)
    monkeypatch.setattr("hf_ecg.runtime.engine.MAX_KEPT_PREFIXES", 4)
    for stream in (dataset, KeyDataset(dataset, "entities"), (r for r in requests), dataset["entities"]):
        decoded.clear()
        results = gen(stream, batch_size=2, max_block_tokens=4, seed=1)
        assert not isinstance(results, list)  # a stream gives an iterator
        results = list(results)
        assert [[s["entities"] for s in samples] for samples in results] == [[r] for r in requests]
        assert decoded == [([2, 2], 2), ([1], 2)]  # batch_size requests a chunk, two chunks a group, in order
    decoded.clear()
    gen(requests, num_return_sequences=2, max_block_tokens=4)  # a list: the default batch, 64 requests
    assert decoded == [([10], 64)]
    # Equal requests in two batches are drawn from two seeds.
    twice = list(gen((["Chemical"] for _ in range(2)), batch_size=1, max_block_tokens=6, seed=3))
    assert twice[0][0]["template"] != twice[1][0]["template"] or twice[0][0]["tokens"] != twice[1][0]["tokens"]


def test_bad_input_is_refused_with_a_reason(gen):
    with pytest.raises(ValueError, match=r"unknown entity type\(s\) \['Protein'\]; this model knows: Chemical, "):
        gen(["Chemical", "Protein"])
    with pytest.raises(TypeError, match="not a bare string"):
        gen("Chemical")
    with pytest.raises(TypeError, match=r"e\.g\. \['Chemical', 'Disease'\], not a bare string"):
        gen("Chemical,Disease")
    with pytest.raises(ValueError, match="max_block_tokens must be in"):
        gen(["Chemical"], max_block_tokens=0)
    with pytest.raises(ValueError, match="temperature must be > 0"):
        gen(["Chemical"], temperature=0)
    with pytest.raises(ValueError, match="top_p must be in"):
        gen(["Chemical"], top_p=1.5)
    with pytest.raises(ValueError, match="exceeds max_entities=2"):
        gen(["Chemical"] * 3, max_entities=2)
    for count in (0, 1.5, "2", True):
        with pytest.raises(ValueError, match="num_return_sequences must be a whole number >= 1"):
            gen(["Chemical"], num_return_sequences=count)
    for size in (0, -1, 2.0):
        with pytest.raises(ValueError, match="batch_size must be a whole number >= 1"):
            gen([["Chemical"]], batch_size=size)
    with pytest.raises(TypeError, match="unknown option"):
        gen(["Chemical"], temprature=0.5)
    with pytest.raises(ValueError, match="do_sample=False decodes greedily: temperature, top_k would do nothing"):
        gen(["Chemical"], do_sample=False, top_k=5, temperature=0.7)  # what the CLI refuses too
    assert len(gen(["Chemical"], do_sample=False)) == 1


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
    assert config["custom_pipelines"]["entity-controlled-generation-remote-code"]["impl"] == (
        "ecg_pipeline.EntityControlledGenerationPipeline"
    )
    assert [path.name for path in (tmp_path / "saved").glob("*.py")] == ["ecg_pipeline.py"]
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


def test_save_pretrained_keeps_the_model_card_of_the_folder_it_loaded(model_dir, tmp_path):
    import shutil

    source = tmp_path / "trained"
    shutil.copytree(model_dir, source)
    (source / "ecg_card.json").write_text('{"base_model": "tiny"}\n')
    (source / "README.md").write_text("---\nlibrary_name: hf-ecg\n---\n# the card\n")
    gen = pipeline("entity-controlled-generation", model=str(source))
    gen.save_pretrained(str(tmp_path / "saved"))
    for name in ("ecg_card.json", "README.md"):
        assert (tmp_path / "saved" / name).read_text() == (source / name).read_text()
    plain = pipeline("entity-controlled-generation", model=str(model_dir))  # no card: none invented
    plain.save_pretrained(str(tmp_path / "plain"))
    assert not (tmp_path / "plain" / "ecg_card.json").exists()


def test_the_remote_code_set_is_the_documented_list_and_the_whole_runtime_package():
    """What transformers copies into a pushed model (pipeline.py and its relative imports, recursively) is
    exactly hf_ecg.runtime.REMOTE_CODE_MODULES, which is every module of the runtime package; the corpus
    readers are not among them."""
    from transformers.dynamic_module_utils import get_relative_import_files

    import hf_ecg.runtime
    from hf_ecg.runtime import REMOTE_CODE_MODULES

    folder = Path(hf_ecg.runtime.__file__).parent
    shipped = {Path(f).name for f in get_relative_import_files(str(folder / "pipeline.py"))} | {"pipeline.py"}
    assert shipped == set(REMOTE_CODE_MODULES)
    assert len(REMOTE_CODE_MODULES) == len(set(REMOTE_CODE_MODULES))
    assert {p.name for p in folder.glob("*.py")} - {"__init__.py"} == shipped
    assert "corpus.py" not in shipped


def test_the_one_file_of_remote_code_is_current_and_defines_each_name_once():
    """The file a model folder carries is what scripts/bundle_remote_code.py joins from the runtime package now:
    a change to a runtime module that is not bundled again fails here."""
    import importlib.util

    path = Path(__file__).resolve().parents[1] / "scripts" / "bundle_remote_code.py"
    spec = importlib.util.spec_from_file_location("bundle_remote_code", path)
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    BUNDLE, bundle = script.BUNDLE, script.bundle
    assert BUNDLE.read_text(encoding="utf-8") == bundle(), "run python scripts/bundle_remote_code.py"
    text = BUNDLE.read_text(encoding="utf-8")
    assert "from ." not in text and text.count("from __future__ import annotations") == 1


def test_the_one_file_of_remote_code_passes_the_project_s_lint_as_shipped():
    """Generated like transformers' modeling files: its imports gathered on top, sorted and formatted by ruff, so
    that the project's lint covers it as it is (nothing excluded)."""
    import subprocess
    import sys

    root = Path(__file__).resolve().parents[1]
    bundle = root / "src" / "hf_ecg" / "remote_code" / "ecg_pipeline.py"
    for command in (["check"], ["format", "--check"]):
        done = subprocess.run(
            [sys.executable, "-m", "ruff", *command, str(bundle)], cwd=root, capture_output=True, text=True
        )
        assert done.returncode == 0, done.stdout + done.stderr
    head = bundle.read_text(encoding="utf-8").split("\n# ---- ", 1)[0]
    assert "import torch" in head  # every module's imports on top, none left below


def test_the_mention_writer_samples_at_the_decoders_temperature(gen):
    """`gen(..., temperature=0.8)` wrote templates at 0.8 and mentions at 1.0, while `generate_dataset` gave
    its mention writer the decoding temperature and top-p (issue 49, item 3): the forward step decodes and fills
    from one DecodingConfig now (SampleRun.samples, as generate_dataset does)."""
    _, forward, post = gen._sanitize_parameters(temperature=0.8, top_p=0.9, seed=1)
    assert forward == {"seed": 1, "temperature": 0.8, "top_p": 0.9} and post == {}
    samples = gen(["Chemical", "Disease"], temperature=0.8, top_p=0.9, seed=0, num_return_sequences=2)
    assert [[s["label"] for s in sample["spans"]] for sample in samples] == [["Chemical", "Disease"]] * 2


def test_the_pipeline_builds_its_engine_once_and_each_call_only_runs_it(tiny, monkeypatch):
    """The engine (and the vocabulary tables every decoder reads) is built with the pipeline; three calls with
    other settings build nothing of it again, and the decoders take its tables rather than computing theirs."""
    from hf_ecg.runtime import char_boundaries, engine, vocabulary
    from hf_ecg.runtime.pipeline import EntityControlledGenerationPipeline

    built = {"engines": 0, "tables": 0, "boundaries": 0}

    def counting(cls, key):
        real = cls.__init__

        def init(self, *args, **kwargs):
            built[key] += 1
            real(self, *args, **kwargs)

        monkeypatch.setattr(cls, "__init__", init)

    counting(engine.SampleEngine, "engines")
    counting(char_boundaries.CharacterBoundaries, "boundaries")
    real_of = vocabulary.VocabularyTables.of.__func__
    monkeypatch.setattr(
        vocabulary.VocabularyTables,
        "of",
        classmethod(lambda cls, tokenizer: built.__setitem__("tables", built["tables"] + 1) or real_of(cls, tokenizer)),
    )
    model, tokenizer, config = tiny
    config.mention_bank = MentionBank.from_lists({t: [t.lower()] for t in TYPES}).to_dict()
    gen = EntityControlledGenerationPipeline(model=model, tokenizer=tokenizer, ecg_config=config, device="cpu")
    assert built == {"engines": 1, "tables": 1, "boundaries": 1}
    for settings in ({}, {"temperature": 0.7}, {"mode": "sequential", "max_block_tokens": 6}):
        assert len(gen([["Chemical"], ["Disease", "Gene"]], seed=1, max_attempts=1, **settings)) == 2
    assert built == {"engines": 1, "tables": 1, "boundaries": 1}


def test_the_pipeline_writes_a_phrase_exactly_where_the_request_puts_it(gen):
    """``gen(["Chemical", Phrase.of(...), "Disease"])``: the phrase verbatim, once, between the two mentions; the
    sample's entities are the requested types."""
    from hf_ecg.runtime.decoding_config import Phrase

    types = list(gen.ecg_config.entity_types)
    phrase = Phrase.of("zebra quartz lintel")
    samples = gen([types[0], phrase, types[-1]], num_return_sequences=3, seed=2, max_block_tokens=6)
    assert len(samples) == 3
    for sample in samples:
        tokens, spans = sample["tokens"], sample["spans"]
        assert list(sample["entities"]) == [types[0], types[-1]]
        at = [i for i in range(len(tokens) - 2) if tuple(tokens[i : i + 3]) == phrase.words]
        assert len(at) == 1
        text = sample["text"]
        first, second = spans
        assert first["end"] <= text.index("zebra quartz lintel") < second["start"]
    with pytest.raises(TypeError, match="entity types"):
        gen([[types[0], 3]])
