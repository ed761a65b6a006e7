# ragls: make run | make test | make lint | make bench | make eval | make clients
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
RAGLS := $(abspath $(BIN)/ragls)
WS ?= .
Q ?= How does ragls split a source file into chunks along the syntax tree?
PYTEST_ARGS ?=
export PIP_DISABLE_PIP_VERSION_CHECK := 1

.PHONY: all venv venv-gpu run test test-server test-deps client-tools test-clients test-clients-at-once test-neovim test-jetbrains test-vscode \
        lint format bench eval eval-secrets soak snapshot clients clean

all: test

# The venv is rebuilt when the project's dependencies change. uv (from PyPI, into the venv) lays
# the dependencies down in seconds where pip takes about 45 s, the first step of `make test` that
# nothing else can overlap; pip (with ensurepip) stays the fallback. Both compile the bytecode up
# front: where PYTHONDONTWRITEBYTECODE is set (as on CI machines) nothing is compiled later, and
# each process would compile every module it imports again (lsprotocol alone, ~1 s).
$(VENV)/.installed: pyproject.toml
	@test -x $(BIN)/python || $(PYTHON) -m venv --without-pip $(VENV)
	PIP_ROOT_USER_ACTION=ignore $(PYTHON) -m pip install -q --prefix $(VENV) uv \
	  && $(BIN)/uv pip install -q --compile-bytecode --python $(BIN)/python pip -e ".[dev]" \
	  || { $(BIN)/python -m ensurepip > /dev/null && $(BIN)/python -m pip install -q --upgrade pip \
	       && $(BIN)/python -m pip install -q -e ".[dev]"; }
	@touch $@

# ragls's own modules too (an editable install compiles none of them): ~0.5 s less for each
# server, CLI and MCP process the tests start. Files changed since are compiled on import.
venv: $(VENV)/.installed
	@$(BIN)/python -m compileall -q server/ragls > /dev/null

## make venv-gpu: the venv with onnxruntime-gpu in place of the CPU build (embedder.device = "cuda").
## Both wheels own the `onnxruntime` module, so the CPU one goes and the GPU one is laid down again.
venv-gpu: venv
	$(BIN)/python -m pip install -q -e ".[dev,gpu]"
	$(BIN)/python -m pip uninstall -q -y onnxruntime
	$(BIN)/python -m pip install -q --force-reinstall --no-deps "onnxruntime-gpu>=1.20"
	$(BIN)/python -c "import onnxruntime as o; print('onnxruntime', o.__version__, o.get_available_providers())"

## make run [WS=path] [Q="question"]: index a folder, print its status and the <rag_context>.
run: venv
	$(BIN)/ragls search "$(WS)" "$(Q)" --status

## make test: every test suite at once: the server's (unit + end-to-end) as soon as the venv is
## made, the editor clients' once their tools are in. The clients' tools that do not need the venv
## (JDK, npm packages, Chromium, the VS Code bundle) are installed while it is made; apt-get holds a
## lock, so the tools go in one after another. Each suite's output is printed whole when it ends;
## every suite runs even when another fails.
test:
	$(MAKE) --no-print-directory -k -j4 --output-sync=target test-server test-clients-at-once

# The clients at a slightly lower priority: the server suite is the longest, and the clients' suites
# mostly wait on their editors.
test-clients-at-once: test-deps
	nice -n 3 $(MAKE) --no-print-directory -k -j3 --output-sync=target test-neovim test-jetbrains test-vscode

client-tools:
	$(MAKE) -C clients/jetbrains deps
	$(MAKE) -C clients/vscode deps build out/.tests-built

test-deps: venv client-tools
	$(MAKE) -C clients/neovim deps VENV=$(abspath $(VENV))

## make test-server [TEST_WORKERS=n] [PYTEST_ARGS=...]: the server suite in n pytest-xdist workers.
## Its tests mostly wait on real servers, so more workers than cores pays (alone on 2 cores: 4 workers
## 385 s, one process 702 s; beside the clients 4 workers 540 s, 6 workers 665 s). One test at a time
## per worker, the slow-marked ones first (tests/conftest.py).
TEST_WORKERS ?= 4
test-server: venv
	$(BIN)/python -m pytest -n $(TEST_WORKERS) --dist load --maxschedchunk 1 $(PYTEST_ARGS)

test-clients: test-neovim test-jetbrains test-vscode

test-neovim: venv
	$(MAKE) -C clients/neovim deps test RAGLS_SERVER=$(RAGLS) VENV=$(abspath $(VENV))

test-jetbrains: venv
	$(MAKE) -C clients/jetbrains deps test RAGLS_SERVER=$(RAGLS)

test-vscode: venv
	$(MAKE) -C clients/vscode deps test RAGLS_SERVER=$(RAGLS)

clients: venv
	$(MAKE) -C clients/vscode deps build

lint: venv
	$(BIN)/ruff check server tests eval scripts bench
	$(BIN)/ruff format --check server tests eval scripts bench

format: venv
	$(BIN)/ruff format server tests eval scripts bench
	$(BIN)/ruff check --fix server tests eval scripts bench

## make eval: build the golden sets from pinned registry packages and score ragls vs BM25;
## the commit message -> files and issue -> files tasks read bare git mirrors from MIRRORS
## (a repository without one is skipped).
MIRRORS ?= $(or $(RAGLS_EVAL_MIRRORS),/work/.mirror)
eval: venv
	$(BIN)/python eval/build_golden.py
	nice -n 5 $(BIN)/ragls eval --all --baselines --no-ablations --commits eval/commits.toml --issues eval/issues.toml \
		--mirrors $(MIRRORS) \
		--out docs/evaluation-results.json

## make eval-secrets: recall and false positives of the secret scan on its labelled corpus, per
## family (goals: recall >= 0.98, 1.0 on provider tokens, false positives <= 2 %; docs/security.md).
eval-secrets: venv
	$(BIN)/python -m ragls.evaluation.secret_eval

## make snapshot [WS=path] [OUT=file]: index a folder and export its vectors (docs/scaling.md).
OUT ?= ragls.snapshot
snapshot: venv
	$(BIN)/ragls snapshot export "$(WS)" -o "$(OUT)"

## make soak: the reliability suite with a long kill -9 loop (RAGLS_KILL_LOOPS, default 200), then
## the concurrency soak (tests/reliability/soak_concurrency.py) for SOAK_SECONDS (default 600).
KILL_LOOPS ?= 200
SOAK_SECONDS ?= 600
soak: venv
	RAGLS_KILL_LOOPS=$(KILL_LOOPS) $(BIN)/python -m pytest tests/reliability -q -s
	RAGLS_SOAK_SECONDS=$(SOAK_SECONDS) $(BIN)/python -m pytest tests/reliability/soak_concurrency.py -q -s -p no:xdist \
		-o timeout=$$(( $(SOAK_SECONDS) + 900 ))

## make bench: performance benchmarks (see docs/performance.md).
bench: venv
	$(BIN)/python -m bench.run --out bench-results

clean:
	rm -rf $(VENV) .pytest_cache bench-results
