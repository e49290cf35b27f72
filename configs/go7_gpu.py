"""python -m saijax.train --config=configs/go7_gpu.py --workdir=runs/go7_gpu

SAI on 7×7 for one GPU (issue 33): `go7.py`, the CPU run with the 7×7
ablation's switches, with only what a GPU changes. The run goes in legs of
at most 8 minutes (`benchmarks/gpu_leg.py run go7_gpu`, docs/performance.md
"The GPU lane"); each leg resumes from the one before, committed in
`experiments/legs/go7_gpu_run/leg/`.

* **A 4×64 net** (go7.py: 3×32; 474,675 parameters): bigger than the CPU
  run's, as large as a committed leg allows beside the others (7.5 MB with
  Adam's moments and the weight average; the repository stays under 50 MB).
* **Generations of 4,096 games** on 4,096 slots (go7.py: 512 on 64), with
  the generation-keyed schedules rescaled to mean what they meant in go7.py:
  a window of 1 generation, then 2 from generation 6; 64 simulations
  throughout (no ramp: each change compiles a new self-play chunk); 180
  generations, about SAI's 500 M evaluations; Adam's rate steps at 95 and 148.
* **Training steps on 1,024 positions** (go7.py: 128), in blocks of 32 steps
  as one program each, bfloat16 self-play (training stays float32).

Reached: the first leg, generation 46, 151 M self-play evaluations in 7.4
minutes on one H200 (the zoo's `go7-gpu-G46`, the independent judge of
§4.4's point-losing moves); its β_∅ was 0.24 at generation 46 (0.29 over
the last 10), as low as the CPU run's 3×32 net's 0.23. Why the net and the generations are these sizes, and the leg's
tables: experiments/legs/README.md ("The GPU runs").
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
