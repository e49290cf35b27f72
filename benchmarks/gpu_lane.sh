#!/bin/sh
# The GPU lane's first check (issue 44, step 1) as one command on the device
# machine: the wheels' install line, `make test-gpu`, then `make bench-gpu`
# with what is left of SECONDS, everything written under OUT in at most four
# files (what comes back from the device machine is at most 8):
#
#   OUT/test-gpu.log    pytest -vv's output (a line per test as it ends, the
#                       failures, the durations and the last line), stopped
#                       by SIGINT at TEST_S seconds
#   OUT/test-gpu.txt    pytest's last line, or what stopped it
#   OUT/bench.tar.gz    benchmarks/gpu.py's section files and summary.md
#   OUT/bench.log       its output
#
#   sh benchmarks/gpu_lane.sh OUT [SECONDS] [TEST_S]     # defaults 560, 240
#
# Here, a dry run on the CPU at small sizes (docs/performance.md, "The GPU lane"):
#   GPU_PLATFORM=cpu PYTHON=.venv/bin/python BENCH_FLAGS=--small sh benchmarks/gpu_lane.sh /tmp/o 400 60
set -u
OUT=${1:?usage: gpu_lane.sh OUT [SECONDS] [TEST_S]}
TOTAL=${2:-560}
TEST_S=${3:-240}
PYTHON=${PYTHON:-python3}
GPU_PLATFORM=${GPU_PLATFORM:-cuda,cpu}
# The bench's shares: self-play's rows may not starve the anchor and training.
BENCH_FLAGS=${BENCH_FLAGS:---caps forward=40,selfplay=190,training=60}
mkdir -p "$OUT"
start=$(date +%s)
command -v make >/dev/null || { echo "gpu_lane.sh: make is not installed" | tee "$OUT/test-gpu.txt"; exit 2; }
if ! "$PYTHON" -c "import mctx" 2>/dev/null; then
  "$PYTHON" -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl ||
    { echo "gpu_lane.sh: the wheels in .whl/ did not install" | tee "$OUT/test-gpu.txt"; exit 2; }
  export PYTHONPATH=/tmp/site
fi
command -v nvidia-smi >/dev/null && nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader

# At TEST_S, SIGINT: pytest stops its workers and still prints the failures' tracebacks and its last line.
timeout -s INT -k 20 "$TEST_S" make --no-print-directory test-gpu PYTHON="$PYTHON" GPU_PLATFORM="$GPU_PLATFORM" \
  GPU_PYTEST_FLAGS="-vv -rfE -p no:cacheprovider --durations=25" >"$OUT/test-gpu.log" 2>&1
rc=$?
last=$(grep -E '^=+ .*(passed|failed|error).* =+$' "$OUT/test-gpu.log" | tail -1)
if [ "$rc" = 124 ]; then
  last="stopped at ${TEST_S} s: $(grep -cE ' PASSED ' "$OUT/test-gpu.log") passed, $(grep -cE ' (FAILED|ERROR) ' "$OUT/test-gpu.log") failed so far; pytest: ${last:-no last line}"
fi
echo "${last:-pytest exited $rc with no summary line}" | tee "$OUT/test-gpu.txt"

left=$((TOTAL - ($(date +%s) - start) - 15))
echo "gpu_lane.sh: $left s left for the bench"
if [ "$left" -gt 30 ]; then
  # shellcheck disable=SC2086  # BENCH_FLAGS is a list of flags
  timeout $((left + 10)) make --no-print-directory bench-gpu PYTHON="$PYTHON" GPU_PLATFORM="$GPU_PLATFORM" \
    BENCH_OUT="$OUT/bench" BENCH_BUDGET="$left" BENCH_FLAGS="$BENCH_FLAGS" >"$OUT/bench.log" 2>&1
  echo "gpu_lane.sh: bench-gpu exited $?"
fi
[ -d "$OUT/bench" ] && tar -C "$OUT" -czf "$OUT/bench.tar.gz" bench && rm -rf "$OUT/bench"
ls -l "$OUT"
