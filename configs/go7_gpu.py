"""python -m saijax.train --config=configs/go7_gpu.py --workdir=runs/go7_gpu

SAI on 7×7 for one GPU (issue 33): `go7.py`, the CPU run with the 7×7
ablation's switches (root noise on the opening only, KataGo's ownership and
score targets, playout caps, global pooling, the opponent-reply target,
weight averaging, 4 training samples per new row), with only what a GPU
changes. The run goes in legs of at most 8 minutes
(`benchmarks/gpu_leg.py run go7_gpu`, docs/performance.md "The GPU lane");
each leg resumes from the one before, committed in
`experiments/results/go7_gpu_run/leg/`.

**The net: 4×64** (go7.py: 3×32), 474,675 parameters with go7.py's heads,
chosen from what could be measured on the CPU (experiments/README.md,
"The GPU runs (issue 33): pending a GPU"):

* Bigger than 3×32. This was argued from the spread of self-play's final
  margins, and that argument measured the wrong thing (issue 43;
  experiments/README.md, "What sets β_∅"). It read: the CPU run's 3×32 net,
  after 51.8 M evaluations, still loses whole groups against itself; its
  deterministic self-play from the random opening spreads by 29 points (sd;
  34 at 256 visits with 2 random moves), where β_∅ = π / (√3 · sd) ≥ 2
  would need about a point (opening_spread/S1_*). But the β_∅ a net learns
  follows Δ, how much its own self-play's Black win rate drops from komi
  8.5 to 9.5 (a logistic gives β ≈ 4·atanh Δ), not the margins' sd, which
  is dominated by collapses to ±49 (with λ = 0 the side that is losing at
  the komi gives the board away) that do not change who wins. The 5×5 net
  shows it: go5 (2×32, β_∅ 3.34, perfect against GNU Go as Black) spreads
  by 23 points too, nearly all of it whole-board ±25 swings (56 and 60 of
  64 games, opening_spread/go5_*), yet 58–66% of its games end at exactly
  +25, where the half point of komi decides: 4·atanh Δ 2.6–3.1. On 7×7,
  go7-S1 learned 0.23 (4·atanh Δ 0.31–0.50) and generation 46 of this
  config, 4×64, learned 0.24 (0.57). So nothing measured here says that
  3×32 is too small; whether net size moves β_∅ is one of issue 43's
  levers. Three blocks already see the whole board (a receptive field of 15
  points), so the extra capacity goes into width: 5.1 times the trunk's
  weights.
* Speed is not what limits the size. On one H200 (issue 31, 9×9, batch
  4,096, bfloat16, PUCT at 32 simulations) self-play ran 593 k evaluations/s against 1,673 k for the
  4×128 net's forward pass alone: the tree and the Go rules take about
  1.1 µs per evaluation, the net 0.6 µs. On 7×7 both shrink with the board
  (49 against 81 points); a 4×64 net is a quarter of 4×128's FLOPs, so it
  plays at an estimated 0.9–1.3 M evaluations/s and 4×128 only 10–25%
  slower (an estimate: no 7×7 rate has been measured on a GPU).
* The leg must be committed, and the repository must stay under 50 MB
  (tests/gpu_lane_test.py; 30.3 MB tracked before these runs). A leg holds
  the parameters, Adam's two moments and the weight average: the 4×64 leg
  is 7.5 MB (15.7 bytes per parameter, measured on the CPU at this net's
  size), beside go9_gpu.py's 4×128 leg of 10.0 MB (SGD's momentum only: 7.6
  bytes per parameter), 47.8 MB tracked in all. 4×96 (0.90 M parameters,
  about 14 MB) or 4×128 (1.49 M, about 23 MB) would not fit beside it.

**Generations of 4,096 games** (go7.py: 512) on 4,096 slots, so the GPU gets
a batch in the thousands and a generation's fixed costs (the window's
loading, the checkpoint, the empty-board evaluation) are spread over 8 times
the games. The generation-keyed schedules are rescaled so that they mean
what they meant in go7.py (one generation here is about 8 of go7.py's):

* the window holds about go7.py's rows: 1 generation (go7.py's 2–6), then
  2 from generation 6 (go7.py's 10 from generation 50);
* 64 simulations throughout (go7.py: 16, 32 from 10, 64 from 60): the ramp
  saved CPU time, and on a GPU each change of the simulations compiles a new
  self-play chunk, the larger part of the 40–55 s the H200 spent compiling
  at each launch (issue 31), about a tenth of a leg;
* 180 generations, about SAI's 500 M evaluations at go7.py's 670 per game;
  Adam's rate steps at the same fractions of the run as go7.py's (90 and 140
  of 170): generations 95 and 148.

Training steps on 1,024 positions (go7.py: 128), so a generation's 4 samples
per new row (about 100 k rows) are about 400 steps, not 3,200 small ones,
in blocks of 32 steps as one program each on a GPU (default.py's
`training.steps_per_call` = 0): the first leg, step by step, spent 57% of
its time training, 9.7 ms a step, where the steps' compute takes 2.5 ms
(benchmarks/training.py on the H200: 103 steps/s step by step, 394 in
blocks of 32, 403 for the compute alone).

Expected: about 2.7 M evaluations a generation (4,096 games of about 670,
as go7.py's generation 169 played them), 6–10 s a generation, so about
110–190 M evaluations per 8-minute leg after a minute of start-up and
compiling (the CPU run's 51.8 M within the first leg; SAI's 500 M in 3–5
legs). Every number in that paragraph is an estimate from the H200's 9×9
rates until a leg has run; `benchmarks/gpu_leg.py` prints the leg's own.
"""

import os

from saijax.learn import config as config_lib


def get_config():
    """go7.py for one GPU: bfloat16, 4,096 slots, 8-minute legs, a 4×64 net."""
    config = config_lib.load_config(os.path.join(os.path.dirname(__file__), "go7.py"))
    config.generations = 180  # ~ SAI's 500 M evaluations (go7.py: 170, 52 M)
    config.time_limit_minutes = 8.0  # one leg (go7.py: no limit)
    config.compilation_cache = True  # (default.py's default) a relaunch loads its programs
    config.precision = "bfloat16"  # self-play, metrics (go7.py: float32); training stays float32

    config.network.blocks = 4  # go7.py: 3
    config.network.filters = 64  # go7.py: 32

    config.selfplay.batch_size = 4096  # go7.py: 64
    config.selfplay.games_per_generation = 4096  # go7.py: 512
    config.selfplay.branch_queue_capacity = 16384  # 4 × the slots, as go7.py (256 for 64)

    config.schedules.visits = ()  # constant search.num_simulations (go7.py: 16 → 32 → 64)
    config.search.num_simulations = 64
    config.schedules.window = ((0, 1), (6, 2))  # go7.py: ((0, 2), (4, 4), (20, 6), (50, 10))

    config.training.batch_size = 1024  # go7.py: 128
    config.training.lr_boundaries = (95, 148)  # go7.py: (90, 140) of 170 generations
    return config
