"""python -m saijax.train --config=configs/go7_sharp.py --workdir=runs/sharp

SAI on 7×7 from random weights to a sharp value: one run, no checkpoint to
start from, every setting that differs from `default.py` stated here.
SAI's 7×7 end state is a fair komi of 9 (α_∅ ≈ 9) with a sharp komi curve
(β_∅ > 2); `configs/go7.py` stays flat (α_∅ 5.5–6.6, β_∅ 0.14–0.23).

The self-play rules are those the sharp-value experiment measured
(experiments/README.md, "SAI's sharp value on 7×7"), fixed before the run:

* every move a full PUCT search, SAI's engine (no playout caps), with
  64 → 128 → 256 simulations (generations 0, 30, 60; SAI: 250), the root
  passing only where Leela Zero's rules allow it (as `default.py`);
* SAI's opening: 4 random moves drawn from the search at T = 0.5 among
  moves with more than 2 visits and a value above 5%, taken back if it
  would resign; Dirichlet noise on those 4 roots only, then the search's
  most-visited move, as the net plays at evaluation;
* komi of each complete game drawn from the net's own sigmoid (SAI);
* 32 training samples per new row (SAI: about 36), Adam at 1e-3 until
  generation 30 and 3e-4 after, a window of 2 → 10 generations;
* a 3×32 net with KataGo's ownership and score targets, global pooling,
  the opponent-reply head and weight averaging (go7.py's ablation).

A generation is 128 games: about 0.25 M self-play evaluations at 64
simulations, 1 M at 256. The run goes in time-boxed legs
(`--config.time_limit_minutes=M`, README "Long runs in legs"); seed 1 is
`--config.seed=1`. Targets, budget and where both seeds stand:
experiments/sharp_recipe/README.md (tables in its results/main/); their
newest legs: experiments/legs/sharp_s0/leg, sharp_s1/leg.
"""

import os

from saijax.learn import config as config_lib


def get_config():
    """7×7 SAI from random weights with the sharp-value self-play rules."""
    config = config_lib.load_config(os.path.join(os.path.dirname(__file__), "default.py"))
    config.board_size = 7
    config.generations = 250
    config.keep_checkpoint_every = 5  # the Elo curve and the zoo

    config.network.blocks = 3
    config.network.filters = 32
    config.network.ownership_head = True
    config.network.global_pooling = True
    config.network.opponent_policy_head = True

    config.search.algorithm = "puct"
    # Leela Zero's root pass rules (default.py's): with "search" (SAI's
    # --dumbpass), seed 0 of a pilot collapsed into pass-ended games by
    # generation 2 (median length 7 moves), the side a wide sampled komi
    # favours passing at once.
    config.search.root_pass_rule = "leela"

    config.selfplay.batch_size = 64
    config.selfplay.games_per_generation = 128
    config.selfplay.chunk_moves = 14
    config.selfplay.komi = 9.5  # SAI's 7×7 komi (matches; self-play samples it)
    config.selfplay.branch_queue_capacity = 256
    config.selfplay.sgf_games_per_generation = 4
    config.selfplay.opening_policy = "improved"
    config.selfplay.random_moves = 4
    config.selfplay.noise_moves = 4  # Dirichlet noise on the random opening moves only
    config.selfplay.random_temperature = 0.5
    config.selfplay.random_min_visits = 2
    config.selfplay.random_losing_threshold = 0.05
    config.selfplay.random_takeback = True

    config.schedules.visits = ((0, 64), (30, 128), (60, 256))
    config.schedules.network = ()  # 3×32 throughout
    config.schedules.window = ((0, 2), (4, 4), (20, 6), (50, 10))

    config.training.batch_size = 128
    config.training.steps_per_generation = 200  # converts generations to steps for the schedules
    config.training.samples_per_new_row = 32.0
    config.training.optimizer = "adam"
    config.training.learning_rate = 1e-3
    config.training.lr_schedule = "piecewise"
    config.training.lr_boundaries = (30,)
    config.training.lr_values = (3e-4,)
    config.training.ownership_weight = 1.5
    config.training.score_aux_weight = 5.0
    config.training.opponent_policy_weight = 0.15
    config.training.ema_decay = 0.99

    config.gating.candidates = 4
    config.gating.games = 32
    return config
