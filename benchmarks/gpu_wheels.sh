#!/bin/sh
# The wheels that the GPU machines' Python lacks, for Python 3.12 on x86-64
# Linux, into DIR (default .whl/): `make gpu-wheels` runs it, here, where pip
# has a network. The GPU machines (docs/performance.md, "The GPU lane") have
# jax, jaxlib with CUDA 13, flax, optax, chex, orbax-checkpoint, numpy, scipy,
# matplotlib, tqdm, absl-py, PyYAML, protobuf, packaging, typing-extensions,
# pytest and pytest-xdist, but not saijax's other needs (pyproject.toml):
#
#   mctx, ml-collections, sgfmill, tensorboardX; pgx (benchmarks) and its
#   svgwrite.
#
# Their own needs are all among the packages already there. The versions are
# those the CPU venv runs; one version of each, or pip's install there stops.
# There (no network), one line before the command installs them:
#
#   python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir \
#     --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site || exit;
set -eu
DIR=${1:-.whl}
PYTHON=${PYTHON:-python3}
WHEELS="mctx==0.0.71 ml-collections==1.1.0 sgfmill==1.1.1 tensorboardX==2.6.5 pgx==2.6.0 svgwrite==1.4.3"
mkdir -p "$DIR"
for wheel in $WHEELS; do
  # Pure-Python wheels: the platform tags only let pip fetch for another
  # Python than its own.
  "$PYTHON" -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
    --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 \
    --platform any -d "$DIR" "$wheel"
done
ls -l "$DIR"
