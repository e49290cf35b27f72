"""python -m saijax.train --config=configs/go7_base.py --workdir=runs/go7_base

SAI on 7×7 for a CPU as saijax first ran it (the papers' proof of concept
used 7×7 with 3 blocks): the zoo's go7 nets before the ablation, the
ablation's `base` arm (experiments/README.md) and the base of the offline
style runs (`go7_style.py`, which fine-tune its net). Starts from
`default.py` and changes only the fields below. `go7.py` is this plus the
switches the ablation kept.
"""

import os

from saijax.learn import config as config_lib


def get_config():
    """7×7, 3×32 net, Gumbel search, small generations."""
    config = config_lib.load_config(os.path.join(os.path.dirname(__file__), "default.py"))
    config.board_size = 7
    # About 45 s per generation on a 2-core CPU: 140 generations in under 2 hours.
    config.generations = 140
    config.keep_checkpoint_every = 5  # for the Elo curve and the zoo

    config.network.blocks = 3
    config.network.filters = 32

    # Departure: Gumbel with few simulations instead of PUCT with 100+; it
    # learns from 16–32 simulations, which a CPU can afford.
    config.search.algorithm = "gumbel"
    config.search.num_simulations = 32
    config.search.max_num_considered_actions = 16

    config.selfplay.batch_size = 64
    config.selfplay.games_per_generation = 256
    config.selfplay.chunk_moves = 14
    config.selfplay.komi = 9.0  # 7×7's fair komi (fixed mode only).
    config.selfplay.branch_queue_capacity = 256
    config.selfplay.random_moves = 8  # ~ 25 · 49/81, scaled to the board.
    # Gumbel's sequential halving gives its considered moves about the same
    # few visits, so SAI's PUCT rule for random moves (more than one visit,
    # not losing) would leave almost none: every visited move may be drawn.
    config.selfplay.random_min_visits = 0
    config.selfplay.random_losing_threshold = 0.0
    # Passes as the shipped runs made them (the search decides); Gumbel
    # self-play did not collapse into pass-ended games (docs/design.md §6).
    config.search.root_pass_rule = "search"
    config.selfplay.sgf_games_per_generation = 4

    config.schedules.visits = ((0, 16), (10, 32))
    config.schedules.network = ()  # Fixed 3×32.
    # The window grows as the net settles: more generations per update average
    # out the fair-komi noise of 256-game generations.
    config.schedules.window = ((0, 2), (4, 4), (20, 6), (50, 10))

    # Departure: Adam at 1e-3 instead of SGD at 1e-4: with a few hundred
    # steps per generation SGD at the paper's rate barely moves a fresh net.
    config.training.steps_per_generation = 200
    config.training.batch_size = 128
    config.training.optimizer = "adam"
    config.training.learning_rate = 1e-3
    # Step decay once the policy has found D4 (about generation 15): at a
    # constant 1e-3 the fair-komi estimate swung by ±3 points per generation.
    config.training.lr_schedule = "piecewise"
    config.training.lr_boundaries = (50, 90)
    config.training.lr_values = (3e-4, 1e-4)

    config.gating.candidates = 4
    config.gating.games = 32
    # The self-play rules default.py had before it took the sharp recipe
    # (configs/go7_sharp.py), kept so that this config's runs, its zoo nets
    # and its tests stay as shipped: noise at every root, the opening drawn
    # ∝ visits at T = 1 without take-back, steps_per_generation steps.
    config.selfplay.noise_moves = -1
    config.selfplay.random_temperature = 1.0
    config.selfplay.random_takeback = False
    config.selfplay.opening_policy = "visits"
    config.training.samples_per_new_row = 0.0
    return config
