"""python -m saijax.train --config=configs/go7_sharp_gpu.py --workdir=runs/go7_sharp_gpu

As one leg on the device machine: ``python3 benchmarks/gpu_leg.py run
go7_sharp_gpu --out $OUT --leg_form=compact``.

The sharp-value recipe (`go7_sharp.py`, issue 43) with the lever that the
CPU could not afford, the bigger net, sized for one GPU (issue 44). It
fine-tunes the zoo's go7-gpu-G46 (the 4×64 net of `go7_gpu.py`'s first
leg, 151 M evaluations) under the recipe: SAI's opening (`go7_sai.py`),
every move a full 256-simulation search, 32 training samples per new row.
Like `go7_gpu.py` it runs in legs of at most 8 minutes that resume from
the one committed in `experiments/results/go7_sharp_gpu_run/leg/`
(`benchmarks/gpu_leg.py`, docs/performance.md "The GPU lane").

**Why this net.** On the CPU the recipe took the 3×32 net's β_∅ from 0.30
to 0.41–0.44 and then held it there: its own self-play data are as flat
within one opening of one generation's net as pooled (experiments/
README.md, round 4), so the flatness is in the net's play; more visits
(1024), a komi temperature and λ in self-play did not sharpen them. A
bigger net is the lever left. The CPU runs it only at 64 games a
generation (`sharp_g46`, round 5, about 10 minutes a generation beside
another arm).

**What a GPU changes** (from `go7_sharp.py`), each as `go7_gpu.py` does:

* 4×64 from go7-gpu-G46 (`init_checkpoint`; `go7_sharp.py`: 3×32 from
  go7-S1);
* 2,048 slots and 2,048 games a generation (`go7_sharp.py`: 64 and 128).
  A game of the recipe costs about 9,000 evaluations (36 searched moves of
  257, branches apart; the CPU arms' 1.15 M a generation of 128), so a
  generation is about 19 M evaluations, about 15–25 s at the H200's 7×7
  rate of go7_gpu (1.34 M evaluations a second at 64 simulations; 256
  deepens the tree, so an estimate until a leg has run);
* the window: 2 generations (4,096 games; `go7_sharp.py`: 10 of 128, 1,280);
* training batches of 1,024 (`go7_sharp.py`: 128) at the same learning
  rate: 32 samples per new row make about 2,500 steps a generation, about
  6 s in blocks of 32 (go7_gpu's 2.5 ms a step on the H200);
* bfloat16 self-play, the compilation cache and 8-minute legs.

Expected: about 30 s a generation, 12–15 generations and 230–290 M
evaluations an 8-minute leg, compiling included (the CPU recipe's 38 M
evaluations in round 3). A compact leg (no optimizer state) is about
3.7 MB; Adam restarts at each leg.
"""

import os

from saijax.learn import config as config_lib


def get_config():
    """go7_sharp.py for one GPU: go7-gpu-G46's 4×64 net, 2,048 slots, bfloat16, 8-minute legs."""
    config = config_lib.load_config(os.path.join(os.path.dirname(__file__), "go7_sharp.py"))
    config.init_checkpoint = "zoo:go7-gpu-G46"  # go7_sharp.py: zoo:go7-S1
    config.network.blocks = 4  # go7_sharp.py: 3
    config.network.filters = 64  # go7_sharp.py: 32

    config.time_limit_minutes = 8.0  # one leg (go7_sharp.py: no limit)
    config.compilation_cache = True
    config.precision = "bfloat16"  # self-play and metrics; training stays float32

    config.selfplay.batch_size = 2048  # go7_sharp.py: 64
    config.selfplay.games_per_generation = 2048  # go7_sharp.py: 128
    config.selfplay.branch_queue_capacity = 4 * 2048  # 4 × the slots, as go7_sharp.py (256 for 64)
    config.schedules.window = ((0, 2),)  # 4,096 games (go7_sharp.py: 10 generations of 128)
    config.training.batch_size = 1024  # go7_sharp.py: 128
    return config
