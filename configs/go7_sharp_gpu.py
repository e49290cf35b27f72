"""python -m saijax.train --config=configs/go7_sharp_gpu.py --workdir=runs/go7_sharp_gpu

As one leg on the device machine: ``python3 benchmarks/gpu_leg.py run
go7_sharp_gpu --out $OUT --leg_form=compact``.

The sharp recipe of `go7_sharp.py` from random weights, sized for one GPU:
the same net (3×32), search, opening, noise, komi rule and 32 training
samples per new row, with 1,024 games in lockstep and per generation
instead of 128. A generation is then 8 of the CPU run's, so the
generation-keyed schedules are divided by 8 (visits 64 → 128 → 256 at
generations 0, 4 and 8; Adam 1e-3 → 3e-4 at 4; a window of 1 generation,
then 2 from 6, about the CPU run's 256 → 1,280 games); the net updates 8
times less often per game, which is what a GPU's batch costs. Training
batches of 512, bfloat16 self-play, the compilation cache and 8-minute
legs, as `go7_gpu.py`. Nothing has run under it on a GPU yet.

The config this file held before (go7-gpu-G46's 4×64 net fine-tuned under
the rounds 3–8 recipe, never run on a GPU) is in the sharp value's journal,
experiments/sharp_value/journal.md.
"""

import os

from saijax.learn import config as config_lib


def get_config():
    """go7_sharp.py for one GPU: 1,024 games a generation, schedules scaled to match, 8-minute legs."""
    config = config_lib.load_config(os.path.join(os.path.dirname(__file__), "go7_sharp.py"))
    config.generations = 40  # about go7_sharp.py's 250 CPU generations of 128 games
    config.time_limit_minutes = 8.0  # one leg (go7_sharp.py: no limit)
    config.precision = "bfloat16"  # self-play and metrics; training stays float32
    config.selfplay.batch_size = 1024  # go7_sharp.py: 64
    config.selfplay.games_per_generation = 1024  # go7_sharp.py: 128
    config.selfplay.branch_queue_capacity = 4 * 1024  # 4 × the slots, as go7_sharp.py
    config.schedules.visits = ((0, 64), (4, 128), (8, 256))  # go7_sharp.py: 0, 30, 60
    config.schedules.window = ((0, 1), (6, 2))  # go7_sharp.py: 2 → 10 generations of 128
    config.training.lr_boundaries = (4,)  # go7_sharp.py: 30
    config.training.batch_size = 512  # go7_sharp.py: 128
    config.keep_checkpoint_every = 1
    return config
