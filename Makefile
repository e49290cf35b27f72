# saijax: the two set-up commands are `make demo` and `make test`.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: venv demo lint format test test-slow test-multihost bench clean

$(PY):
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip

$(STAMP): $(PY) pyproject.toml
	$(PY) -m pip install -q -e '.[test,bench]'
	touch $(STAMP)

venv: $(STAMP)

# The main job on a small default: SAI on 5x5 for 12 generations (a few
# minutes on a laptop CPU). Re-running resumes; `rm -rf runs/demo` restarts.
demo: $(STAMP)
	$(PY) -m saijax.train --config=configs/go5.py --workdir=runs/demo --config.generations=12

# The house style (ruff, configured in pyproject.toml); `make test` runs it first.
LINTED := saijax tests experiments benchmarks configs colab

lint: $(STAMP)
	$(VENV)/bin/ruff check $(LINTED)
	$(VENV)/bin/ruff format --check $(LINTED)

format: $(STAMP)
	$(VENV)/bin/ruff check --fix $(LINTED)
	$(VENV)/bin/ruff format $(LINTED)

test: lint
	PATH="$$PATH:/usr/games" $(PY) -m pytest -q

test-slow: $(STAMP)
	PATH="$$PATH:/usr/games" $(PY) -m pytest -q -m slow

# One run over two local processes (jax.distributed, gloo); part of test-slow.
test-multihost: $(STAMP)
	$(PY) -m pytest -q -m slow -s tests/multihost_test.py

# go_env.py and search.py print a ratio against a reference measured in the
# same run; flops.py counts FLOPs per evaluation (it compiles, runs nothing)
# and turns them into evaluations/s and GPU-hours (docs/performance.md).
bench: $(STAMP)
	$(PY) benchmarks/go_env.py
	$(PY) benchmarks/search.py
	$(PY) benchmarks/flops.py

clean:
	rm -rf $(VENV) build *.egg-info
