# saijax: the two set-up commands are `make demo` and `make test`.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: venv demo test test-slow bench clean

$(PY):
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip

$(STAMP): $(PY) pyproject.toml
	$(PY) -m pip install -q -e '.[test,bench]'
	touch $(STAMP)

venv: $(STAMP)

demo: $(STAMP)
	$(PY) -m saijax.demo

test: $(STAMP)
	PATH="$$PATH:/usr/games" $(PY) -m pytest -q

test-slow: $(STAMP)
	PATH="$$PATH:/usr/games" $(PY) -m pytest -q -m slow

bench: $(STAMP)
	$(PY) benchmarks/go_env.py

clean:
	rm -rf $(VENV) build *.egg-info
