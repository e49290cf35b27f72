# saijax: the two set-up commands are `make demo` and `make test`.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: venv demo lint format test test-slow test-multihost bench test-gpu bench-gpu gpu-wheels clean

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

# Two pytest-xdist workers: the suite is mostly single-threaded XLA compiles,
# so on 2 cores it takes about 20 minutes instead of 24. A file's tests stay on
# one worker (its module fixtures run once). TEST_WORKERS=0 runs in one process.
TEST_WORKERS ?= 2
test: lint
	PATH="$$PATH:/usr/games" $(PY) -m pytest -q -n $(TEST_WORKERS) --dist loadfile

test-slow: $(STAMP)
	PATH="$$PATH:/usr/games" $(PY) -m pytest -q -m slow

# One run over two local processes (jax.distributed, gloo); part of test-slow.
test-multihost: $(STAMP)
	$(PY) -m pytest -q -m slow -s tests/multihost_test.py

# go_env.py, search.py, selfplay.py and training.py print a ratio against a
# reference measured in the same run (selfplay.py: self-play against its net's
# forward pass, for the shipped configs/go7.py; training.py: training steps,
# step by step and in blocks, against their compute alone); flops.py counts
# FLOPs per evaluation (it compiles, runs nothing) and turns them into
# evaluations/s and GPU-hours (docs/performance.md).
bench: $(STAMP)
	$(PY) benchmarks/go_env.py
	$(PY) benchmarks/search.py
	$(PY) benchmarks/selfplay.py --config=configs/go7.py
	$(PY) benchmarks/training.py --config=configs/go7.py --block=8 --steps=64
	$(PY) benchmarks/flops.py

# The GPU lane (docs/performance.md, "The GPU lane"). On a machine with a GPU
# and no network, with the Python that is there ($(PYTHON), python3 unless
# given): these two targets install nothing and make no venv. The packages
# that Python lacks travel as wheels: `make gpu-wheels` here fills .whl/, and
# docs/performance.md gives the one-line install there. Together they fit in
# 8 minutes of one H100; BENCH_BUDGET is bench-gpu's share, in seconds.
# GPU_PLATFORM=cpu (and GPU_TESTS=...) tries the targets out on a CPU.
# cuda,cpu: the GPU is the default device, and JAX keeps a CPU device for host
# callbacks (the replayed search's miss check, benchmarks/selfplay.py), which
# fail with JAX_PLATFORMS=cuda alone (found on the first run on an H200).
GPU_PLATFORM ?= cuda,cpu
GPU_ENV := JAX_PLATFORMS=$(GPU_PLATFORM) XLA_PYTHON_CLIENT_PREALLOCATE=false PYTHONPATH="$(CURDIR)$${PYTHONPATH:+:$$PYTHONPATH}"
GPU_WORKERS ?= 8
# More pytest flags for test-gpu (e.g. -rA --durations=20, to keep a record).
GPU_PYTEST_FLAGS ?=
# The device code: the env, the network, search, self-play, the train step
# and one pipeline run (tiny.py's two generations).
GPU_TESTS := tests/go_test.py tests/features_test.py tests/networks_test.py tests/losses_test.py \
	tests/search_test.py tests/mcts_test.py tests/selfplay_test.py tests/selfplay_passes_test.py tests/training_test.py \
	tests/pipeline_test.py::test_two_generations_write_checkpoints_metrics_replay_and_sgf
BENCH_OUT ?= bench-gpu
BENCH_BUDGET ?= 300
BENCH_FLAGS ?=

# pytest-xdist's workers share the GPU (no preallocation); a file's tests stay
# on one worker, so its module fixtures run once.
test-gpu:
	$(GPU_ENV) $(PYTHON) -m pytest -q -n $(GPU_WORKERS) --dist loadfile $(GPU_PYTEST_FLAGS) $(GPU_TESTS)

bench-gpu:
	$(GPU_ENV) $(PYTHON) benchmarks/gpu.py --out $(BENCH_OUT) --budget_s $(BENCH_BUDGET) $(BENCH_FLAGS)

# Here, with a network: the wheels the GPU machine's Python lacks, into .whl/.
gpu-wheels:
	sh benchmarks/gpu_wheels.sh .whl

clean:
	rm -rf $(VENV) build *.egg-info
