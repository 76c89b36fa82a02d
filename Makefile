# `make demo` and `make test` each set up a fresh machine, then run.
SHELL := /bin/bash
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
# The real agent CLIs the end-to-end tests run, pinned, in a project-local npm prefix
# (gitignored). npm's own cache makes a reinstall cheap; the stamp names the versions,
# so changing a pin reinstalls and nothing else does.
CLAUDE_CODE_VERSION := 2.1.332
CODEX_VERSION := 0.171.0
AGENT_CLIS := .agent-clis
AGENT_CLIS_STAMP := $(AGENT_CLIS)/.installed-claude-code-$(CLAUDE_CODE_VERSION)-codex-$(CODEX_VERSION)

.PHONY: setup system-deps agent-clis demo test lint typecheck unit quick bench clean

setup: system-deps $(STAMP)

# Debian packages the tests and the demo need: bubblewrap (the sandbox), strace (the
# system audit), util-linux's setpriv (agents drop root), gcc (the native Landlock
# launcher, harness/confine_exec.c, built at setup), chromium (the HTML
# leaderboard test) and npm (to install the agent CLIs). Skipped when already present.
# python3-venv is needed only where python3 is Debian's own and lacks ensurepip.
system-deps:
	@if ! command -v bwrap >/dev/null || ! command -v chromium >/dev/null \
	    || ! command -v npm >/dev/null || ! command -v strace >/dev/null \
	    || ! command -v setpriv >/dev/null || ! command -v gcc >/dev/null \
	    || ! $(PY) -c 'import ensurepip' 2>/dev/null; then \
	  if [ "$$(id -u)" = 0 ]; then SUDO=""; else SUDO="sudo"; fi; \
	  PKGS="bubblewrap strace util-linux gcc libc6-dev chromium fonts-dejavu-core"; \
	  command -v npm >/dev/null || PKGS="$$PKGS nodejs npm"; \
	  $(PY) -c 'import ensurepip' 2>/dev/null || PKGS="$$PKGS python3-venv"; \
	  $$SUDO apt-get update -qq && \
	  DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq $$PKGS >/dev/null; \
	fi

# Two distributions from this repo: benchguard (no verifiers) and the redaction-pressure
# environment (environments/redaction_pressure, depends on verifiers), both editable.
ENV_DIR := environments/redaction_pressure

# After installing, the editable sources are compiled to bytecode: a start with
# bytecode writing off (PYTHONDONTWRITEBYTECODE, a read-only checkout) then does not
# recompile every module (bench/scan_e2e.py --baseline shows the start-up it costs).

$(STAMP): pyproject.toml constraints.txt $(ENV_DIR)/pyproject.toml | system-deps
	$(PY) -m venv $(VENV)
	$(BIN)/python -m pip install -q -c constraints.txt pip
	$(BIN)/python -m pip install -q -c constraints.txt hatchling editables
	$(BIN)/python -m pip install -q --no-build-isolation -c constraints.txt -e '$(ENV_DIR)[test]'
	$(BIN)/python -m pip install -q --no-build-isolation -c constraints.txt -e '.[dev,dask]'
	$(BIN)/python -m compileall -q src $(ENV_DIR)/redaction_pressure
	$(BIN)/python -m benchguard.harness.launcher_build
	touch $(STAMP)

agent-clis: $(AGENT_CLIS_STAMP)

$(AGENT_CLIS_STAMP): | system-deps
	rm -rf $(AGENT_CLIS)
	mkdir -p $(AGENT_CLIS)
	npm install --prefix $(AGENT_CLIS) --no-audit --no-fund --no-save --loglevel=error \
	    @anthropic-ai/claude-code@$(CLAUDE_CODE_VERSION) @openai/codex@$(CODEX_VERSION)
	$(AGENT_CLIS)/node_modules/.bin/claude --version
	$(AGENT_CLIS)/node_modules/.bin/codex --version
	touch $(AGENT_CLIS_STAMP)

lint: setup
	$(BIN)/ruff check src tests bench $(ENV_DIR)
	$(BIN)/ruff format --check src tests bench $(ENV_DIR)

typecheck: setup
	$(BIN)/mypy

# Both test suites: benchguard's (tests/) and the environment's own ($(ENV_DIR)/tests,
# run from its directory so its pyproject's pytest settings apply).
unit: setup agent-clis
	PATH="$(CURDIR)/$(BIN):$$PATH" $(BIN)/pytest -q
	cd $(ENV_DIR) && PATH="$(CURDIR)/$(BIN):$$PATH" $(CURDIR)/$(BIN)/pytest -q

# Everyday work: both suites without the tests marked slow (servers, browsers,
# subprocess agents). `make unit` and `make test` (what CI runs) keep everything.
quick: setup
	PATH="$(CURDIR)/$(BIN):$$PATH" $(BIN)/pytest -q -m "not slow"
	cd $(ENV_DIR) && PATH="$(CURDIR)/$(BIN):$$PATH" $(CURDIR)/$(BIN)/pytest -q -m "not slow"

test: lint typecheck unit

demo: setup
	PATH="$(CURDIR)/$(BIN):$$PATH" $(BIN)/python -m benchguard.demo

bench: setup
	for f in bench/*.py; do echo "== $$f"; $(BIN)/python $$f || exit 1; done

clean:
	rm -rf $(VENV) $(AGENT_CLIS) .mypy_cache .ruff_cache .pytest_cache demo-output
