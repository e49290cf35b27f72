"""python -m saijax.train --config=configs/go9_gpu.py --workdir=runs/go9_gpu

SAI's 9×9 run 1 for one GPU (issue 33): `default.py` (run 1: 2,000 games a
generation, PUCT from 100 to 850 visits, a 4×128 net growing to 8×160, SGD
at 1e-4 for 4,000 steps of 512) with the GPU switches of `go7_gpu.py` and
nothing else changed. The run goes in legs of at most 8 minutes
(`benchmarks/gpu_leg.py run go9_gpu`, docs/performance.md "The GPU lane");
each leg resumes from the one before, committed in
`experiments/legs/go9_gpu_run/leg/`.

It keeps default.py's fixes for 9×9 self-play collapsing into pass-ended
games (issue 32, docs/design.md §6), by inheriting them, so that a later fix
there applies here too (tests/gpu_configs_test.py checks they are in force):
no FPU reduction at the noisy self-play root
(`search.noisy_root_fpu_reduction = 0`), the raised prior of the answer to
a pass (`search.pass_answer_prior = 0.2`), Leela Zero's root pass rules
(`search.root_pass_rule = 'leela'`), and random opening moves only among
moves searched more than once and not losing
(`selfplay.random_min_visits = 1`, `selfplay.random_losing_threshold =
0.05`); the sampled komi is bounded by the board's N² in the code.

2,048 slots for run 1's 2,000 games a generation: a generation lasts about
one game per slot, so a game's moves come from one net or two consecutive
ones (with 4,096 slots, from more). On one H200 (issue 31, 9×9 4×128,
bfloat16, PUCT at 32 simulations) self-play ran 338 k evaluations/s at batch
1,024 and 593 k at 4,096. A generation of about 2,000 games of 60–100 moves
at 101 evaluations a move is 12–20 M evaluations, 27–45 s at about 450 k/s,
plus 4,000 training steps of 512 (an estimated 3–5 ms each on the GPU, and
1–2 ms each to sample a batch, measured on this CPU): 45–75 s a generation,
about 6–10 generations and 70–200 M evaluations per 8-minute leg after a
minute of start-up and compiling. All of these are estimates until a leg
has run (`benchmarks/gpu_leg.py` prints the leg's own); run 1's 690
generations, about 25 billion evaluations, are far beyond a few legs.

Leg size: the parameters and SGD's momentum (no weight average), 10.0 MB for
the 4×128 net (1.32 M parameters, 7.6 bytes each, measured on the CPU at this
net's size); about 14.5 MB after the schedule's 6×128 (generation 300). The
8×160 net (generation 450, 3.8 M parameters, about 29 MB) is past what the
repository can hold (docs/performance.md, "The GPU lane").
"""

import os

from saijax.learn import config as config_lib


def get_config():
    """default.py (SAI's 9×9 run 1) for one GPU: bfloat16, 2,048 slots, 8-minute legs."""
    config = config_lib.load_config(os.path.join(os.path.dirname(__file__), "default.py"))
    config.time_limit_minutes = 8.0  # one leg (default.py: no limit)
    config.compilation_cache = True  # (default.py's default) a relaunch loads its programs
    config.precision = "bfloat16"  # self-play, metrics (default.py: float32); training stays float32

    config.selfplay.batch_size = 2048  # default.py: 256
    config.selfplay.branch_queue_capacity = 8192  # 4 × the slots, as default.py (1,024 for 256)
    return config
