"""The Gradio Space (spaces/app.py) on localhost: one generation through gradio_client, and the page in
headless Chromium (Debian's /usr/bin/chromium) showing the result; its screenshot is kept in test-artifacts/."""

from __future__ import annotations

import json
import re
import shutil
import socket
from pathlib import Path

import pytest

from tiny import save_tiny_ecg_model

ROOT = Path(__file__).resolve().parents[1]
ARTIFACTS = ROOT / "test-artifacts"
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
TYPES = ("Chemical", "Disease")
MENTIONS = {"Chemical": ["aspirin"], "Disease": ["severe pain"]}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def app():
    """hf_ecg.demo.app, the module spaces/app.py serves (gradio is a dev dependency: skip without it)."""
    pytest.importorskip("gradio")
    import hf_ecg.demo.app

    return hf_ecg.demo.app


@pytest.fixture(scope="module")
def space(app, tmp_path_factory):
    """The app serving a tiny model on localhost; yields its URL."""
    model_dir = save_tiny_ecg_model(tmp_path_factory.mktemp("space-model"), TYPES, MENTIONS)
    demo = app.build_demo(str(model_dir))
    _, url, _ = demo.launch(
        server_name="127.0.0.1", server_port=free_port(), prevent_thread_lock=True, ssr_mode=False, quiet=True
    )
    yield url
    demo.close()


def test_highlighted_segments_join_mentions_and_keep_every_token(app):
    sample = {
        "tokens": ["Aspirin", "eased", "severe", "pain", "and", "fever"],
        "ner_tags": ["B-Chemical", "O", "B-Disease", "I-Disease", "O", "B-Disease"],
    }
    segments = app.highlighted(sample)
    assert segments == [
        ("Aspirin", "Chemical"),
        (" eased", None),
        (" severe pain", "Disease"),
        (" and", None),
        (" fever", "Disease"),
    ]
    assert "".join(text for text, _ in segments).split() == sample["tokens"]


def test_one_generation_through_gradio_client(space, tmp_path):
    from gradio_client import Client

    client = Client(space, verbose=False, download_files=str(tmp_path))
    highlighted, jsonl = client.predict(
        "Disease, Chemical", False, 2, 1.0, 6, 0, api_name="/generate"
    )  # entities, sample, number, temperature, block tokens, seed
    samples = [json.loads(line) for line in Path(jsonl).read_text(encoding="utf-8").splitlines()]
    assert [s["entities"] for s in samples] == [["Disease", "Chemical"]] * 2
    labels = [item["class_or_confidence"] for item in highlighted if item["class_or_confidence"]]
    assert labels == ["Disease", "Chemical"] * 2
    mentions = [item["token"].strip() for item in highlighted if item["class_or_confidence"]]
    assert mentions == ["severe pain", "aspirin"] * 2

    sampled, _ = client.predict("", True, 3, 1.0, 6, 1, api_name="/generate")
    assert sum(item["token"].endswith("\n") for item in sampled) == 3  # three sentences


def test_bad_input_gets_a_clear_message(space):
    from gradio_client import Client

    client = Client(space, verbose=False)
    with pytest.raises(Exception, match=r"Unknown entity type 'Gene'\. This model knows: Chemical, Disease"):
        client.predict("Chemical, Gene", False, 1, 1.0, 6, 0, api_name="/generate")
    with pytest.raises(Exception, match=r"At most 8 entities per sentence; you asked for 9"):
        client.predict(", ".join(["Chemical"] * 9), False, 1, 1.0, 6, 0, api_name="/generate")


@pytest.fixture(scope="module")
def sketch_space(app, tmp_path_factory):
    """The app serving a tiny sketch generator (two training steps, ``--layout sketch``); yields its URL."""
    from hf_ecg.cli import main
    from tiny import save_tiny_model, toy_corpus

    root = tmp_path_factory.mktemp("sketch-space")
    data = toy_corpus(root / "toy.tsv", repeat=3)
    argv = ["train", "--data", str(data), "--model", str(save_tiny_model(root / "base")), "--output", str(root / "m")]
    assert main([*argv, "--max-steps", "2", "--layout", "sketch", "--save_strategy", "no", "--use_cpu", "true"]) == 0
    demo = app.build_demo(str(root / "m"))
    _, url, _ = demo.launch(
        server_name="127.0.0.1", server_port=free_port(), prevent_thread_lock=True, ssr_mode=False, quiet=True
    )
    yield url
    demo.close()


def test_a_sketch_generator_writes_around_a_typed_sketch(sketch_space, tmp_path):
    """The Sketch tab: ``_`` for each gap, tags in order; every sample holds the sketch's tags in order, and a sketch
    without a tag or with a type the model lacks gets a clear message."""
    from gradio_client import Client

    client = Client(sketch_space, verbose=False, download_files=str(tmp_path))
    _, jsonl = client.predict("_ <Disease> _ induced by <Chemical> _", 2, 1.0, 6, 0, api_name="/sketch")
    samples = [json.loads(line) for line in Path(jsonl).read_text(encoding="utf-8").splitlines()]
    assert [s["entities"] for s in samples] == [["Disease", "Chemical"]] * 2
    with pytest.raises(Exception, match=r"A sketch needs at least one entity tag"):
        client.predict("no tags _ here", 1, 1.0, 6, 0, api_name="/sketch")
    with pytest.raises(Exception, match=r"Unknown entity type 'Gene'"):
        client.predict("_ <Gene> _", 1, 1.0, 6, 0, api_name="/sketch")


def test_an_ecg_model_has_no_sketch_tab(space):
    from gradio_client import Client

    assert (
        "/sketch"
        not in Client(space, verbose=False).view_api(print_info=False, return_format="dict")["named_endpoints"]
    )


@pytest.mark.skipif(not Path(CHROMIUM).exists(), reason="Debian chromium not installed (apt-get install chromium)")
def test_page_in_headless_chromium_shows_the_result(space):
    from playwright.sync_api import expect, sync_playwright

    ARTIFACTS.mkdir(exist_ok=True)
    flags = [
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
    ]
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=flags)
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 900})
            page.goto(space)
            page.locator("#entities textarea").fill("Chemical, Disease")
            page.locator("#generate").click()
            results = page.locator("#results")
            expect(results).to_contain_text("aspirin", timeout=120_000)  # not "1.": the progress text has "1.4s"
            expect(results).to_contain_text("severe pain")
            expect(page.locator("#download a").first).to_have_attribute("href", re.compile(r"samples\.jsonl$"))
            page.screenshot(path=str(ARTIFACTS / "space.png"), full_page=True)
        finally:
            browser.close()
    assert (ARTIFACTS / "space.png").stat().st_size > 10_000


def index_reachable() -> bool:
    import urllib.request

    try:
        urllib.request.urlopen("https://pypi.org/simple/gradio/", timeout=10).close()
    except OSError:
        return False
    return True


def test_a_built_space_names_its_model_and_its_requirements_resolve_in_a_fresh_venv(app, tmp_path, monkeypatch):
    import subprocess
    import sys

    folder = tmp_path / "space"
    built = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "build_space.py"), "--model", "org/toy-ecg", "--output", str(folder)],
        capture_output=True,
        text=True,
    )  #  (the command as the README gives it)
    assert built.returncode == 0, built.stderr[-2000:]
    assert f"wrote {folder}/: app.py, README.md (models: org/toy-ecg)" in built.stdout
    (wheel,) = folder.glob("hf_ecg-*.whl")
    assert f"./{wheel.name}\n" in (folder / "requirements.txt").read_text()
    assert app.card_model(folder / "README.md") == "org/toy-ecg"  # the app loads the model its card names
    assert app.card_model(ROOT / "spaces" / "README.md") is None  # the repository's card names none
    monkeypatch.delenv(app.MODEL_ENV, raising=False)
    assert app.resolve_model(folder / "README.md") == "org/toy-ecg"  # named: nothing is trained at start-up
    if not index_reachable():
        pytest.skip("the package index is not reachable: the requirements were not resolved")
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    resolved = subprocess.run(
        [
            str(venv / "bin" / "python"),
            "-m",
            "pip",
            "install",
            "--dry-run",
            "--quiet",
            "--report",
            "report.json",
            "-r",
            "requirements.txt",
            "torch==2.13.0",
        ],
        cwd=folder,
        capture_output=True,
        text=True,
    )
    assert resolved.returncode == 0, resolved.stderr[-2000:]
    installed = {
        item["metadata"]["name"].lower() for item in json.loads((folder / "report.json").read_text())["install"]
    }
    assert {"hf-ecg", "gradio", "torch", "transformers", "datasets"} <= installed
