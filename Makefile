# `make demo` and `make test` each set up a fresh machine, then run.
SHELL := /bin/bash
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: setup system-deps demo test lint typecheck unit bench clean

setup: system-deps $(STAMP)

# Debian packages the tests and the demo need: bubblewrap (the sandbox) and
# chromium (the HTML leaderboard test). Skipped when already present.
# python3-venv is needed only where python3 is Debian's own and lacks ensurepip.
system-deps:
	@if ! command -v bwrap >/dev/null || ! command -v chromium >/dev/null \
	    || ! $(PY) -c 'import ensurepip' 2>/dev/null; then \
	  if [ "$$(id -u)" = 0 ]; then SUDO=""; else SUDO="sudo"; fi; \
	  PKGS="bubblewrap chromium fonts-dejavu-core"; \
	  $(PY) -c 'import ensurepip' 2>/dev/null || PKGS="$$PKGS python3-venv"; \
	  $$SUDO apt-get update -qq && \
	  DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq $$PKGS >/dev/null; \
	fi

$(STAMP): pyproject.toml constraints.txt | system-deps
	$(PY) -m venv $(VENV)
	$(BIN)/python -m pip install -q -c constraints.txt pip
	$(BIN)/python -m pip install -q -c constraints.txt hatchling editables
	$(BIN)/python -m pip install -q --no-build-isolation -c constraints.txt -e '.[dev,dask]'
	touch $(STAMP)

lint: setup
	$(BIN)/ruff check src tests bench
	$(BIN)/ruff format --check src tests bench

typecheck: setup
	$(BIN)/mypy

unit: setup
	PATH="$(CURDIR)/$(BIN):$$PATH" $(BIN)/pytest -q

test: lint typecheck unit

demo: setup
	PATH="$(CURDIR)/$(BIN):$$PATH" $(BIN)/python -m benchguard.demo

bench: setup
	for f in bench/*.py; do echo "== $$f"; $(BIN)/python $$f || exit 1; done

clean:
	rm -rf $(VENV) .mypy_cache .ruff_cache .pytest_cache demo-output
