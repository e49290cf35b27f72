#!/bin/sh
# Issue 63's GPU minutes as one command on the device machine, in its order:
#   1. `make test-gpu` (the device code's tests; stopped by SIGINT at TEST_S),
#   2. the sharp recipe from random weights on the GPU (configs/go7_sharp_gpu.py,
#      one leg of GO7_MIN minutes, compact; resumes a committed leg if one exists),
#   3. a configs/go9_gpu.py leg with the recipe's self-play rules (what is left).
# What comes back is at most 8 files of 16 MiB, so everything lands in five:
#
#   OUT/go7/go7_sharp_gpu_leg.tar  OUT/go7/leg.json   the recipe's leg (gpu_leg.py unpack --from OUT/go7)
#   OUT/go9/go9_gpu_leg.tar        OUT/go9/leg.json   the 9x9 leg      (gpu_leg.py unpack --from OUT/go9)
#   OUT/logs.tar.gz   test-gpu.log/.txt, each leg's train.log and SGFs, this script's log
#
#   sh benchmarks/gpu_recipe.sh OUT [SECONDS] [TEST_S] [GO7_MIN]     # defaults 540, 150, 3.5
#
# Dry run here on the CPU at tiny sizes (minutes; the legs into /tmp, not the committed ones):
#   DRY=1 PYTHON=.venv/bin/python sh benchmarks/gpu_recipe.sh /tmp/recipe_out 300 40 0.5
set -u
OUT=${1:?usage: gpu_recipe.sh OUT [SECONDS] [TEST_S] [GO7_MIN]}
TOTAL=${2:-540}
TEST_S=${3:-150}
GO7_MIN=${4:-3.5}
PYTHON=${PYTHON:-python3}
DRY=${DRY:-}
mkdir -p "$OUT/logs"
export PYTHONUNBUFFERED=1  # the legs' train.log complete even when a hard limit stops them
LOG="$OUT/logs/gpu_recipe.log"
start=$(date +%s)
say() { echo "gpu_recipe.sh [$(($(date +%s) - start)) s]: $*" | tee -a "$LOG"; }
left() { echo $((TOTAL - ($(date +%s) - start))); }

if [ -n "$DRY" ]; then
  PLATFORM=cpu GPU_PLATFORM=cpu WHEELS=""
  TINY="--config.network.blocks=1 --config.network.filters=8 --config.schedules.network=() --config.generations=1"
  TINY="$TINY --config.selfplay.batch_size=8 --config.selfplay.games_per_generation=8"
  TINY="$TINY --config.selfplay.branch_queue_capacity=32 --config.schedules.visits=((0,4),)"
  TINY="$TINY --config.training.batch_size=16 --config.training.samples_per_new_row=1 --config.precision=float32"
  TINY="$TINY --config.gating.games=2"
  LEGS="--leg_dir=/tmp/gpu_recipe_noleg"
  rm -rf /tmp/gpu_recipe_runs
  WORK="/tmp/gpu_recipe_runs"
else
  PLATFORM=cuda GPU_PLATFORM=${GPU_PLATFORM:-cuda,cpu} WHEELS=".whl" TINY="" LEGS="" WORK="runs"
  command -v nvidia-smi >/dev/null && nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | tee -a "$LOG"
fi
command -v make >/dev/null || { say "make is not installed"; exit 2; }
if [ -n "$WHEELS" ] && ! "$PYTHON" -c "import mctx" 2>/dev/null; then
  "$PYTHON" -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl ||
    { say "the wheels in .whl/ did not install"; exit 2; }
  export PYTHONPATH=/tmp/site
fi

# 1. The device code's tests.
say "make test-gpu (at most $TEST_S s)"
timeout -s INT -k 20 "$TEST_S" make --no-print-directory test-gpu PYTHON="$PYTHON" GPU_PLATFORM="$GPU_PLATFORM" \
  GPU_PYTEST_FLAGS="-vv -rfE -p no:cacheprovider --durations=25" >"$OUT/logs/test-gpu.log" 2>&1
rc=$?
last=$(grep -E '^=+ .*(passed|failed|error).* =+$' "$OUT/logs/test-gpu.log" | tail -1)
[ "$rc" = 124 ] && last="stopped at ${TEST_S} s: $(grep -cE ' PASSED ' "$OUT/logs/test-gpu.log") passed, $(grep -cE ' (FAILED|ERROR) ' "$OUT/logs/test-gpu.log") failed so far; pytest: ${last:-no last line}"
echo "${last:-pytest exited $rc with no summary line}" | tee "$OUT/logs/test-gpu.txt" | tee -a "$LOG"

# 2. and 3. The legs: each stops itself on time (--minutes) and is killed at its hard limit.
leg() {  # leg RUN DIR MINUTES FORM
  hard=$(awk -v m="$3" 'BEGIN { printf "%d", m * 60 + 45 }')
  say "$1: a leg of $3 minutes (hard limit $hard s, $4)"
  # shellcheck disable=SC2086  # LEGS and TINY are lists of flags
  "$PYTHON" benchmarks/gpu_leg.py run "$1" --out "$OUT/$2" --minutes "$3" --hard_limit_s "$hard" --platform "$PLATFORM" \
    --workdir "$WORK/$1" --leg_form "$4" --wheels "$WHEELS" $LEGS -- $TINY >>"$LOG" 2>&1
  say "$1: gpu_leg.py exited $?"
  for f in train.log "$1_sgf.tar.gz"; do [ -f "$OUT/$2/$f" ] && mv "$OUT/$2/$f" "$OUT/logs/$2_$f"; done
}
mkdir -p "$OUT/go7" "$OUT/go9"
if awk -v m="$GO7_MIN" 'BEGIN { exit !(m > 0) }'; then
  leg go7_sharp_gpu go7 "$GO7_MIN" compact
else
  say "go7_sharp_gpu: GO7_MIN=$GO7_MIN, not started"
fi
go9_min=$(awk -v s="$(left)" 'BEGIN { m = (s - 75) / 60; printf "%.1f", (m > 0 ? m : 0) }')
if awk -v m="$go9_min" 'BEGIN { exit !(m >= 1) }'; then
  leg go9_gpu go9 "$go9_min" compact
else
  say "go9_gpu: $go9_min minutes left, not started"
fi

tar -C "$OUT" -czf "$OUT/logs.tar.gz" logs && rm -rf "$OUT/logs"
ls -lR "$OUT"
