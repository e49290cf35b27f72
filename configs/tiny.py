"""python -m saijax.train --config=configs/tiny.py --workdir=/tmp/tiny

A smoke-test run for CI: 5×5, a 1×8 net, 4 simulations, 16 games and a few
training steps per generation, 2 generations. After compilation the whole run
takes seconds; it checks the pipeline, not learning.
"""

import os

from saijax.learn import config as config_lib


def get_config():
    """The smallest run that exercises every stage."""
    config = config_lib.load_config(os.path.join(os.path.dirname(__file__), "default.py"))
    config.board_size = 5
    config.generations = 2

    config.network.blocks = 1
    config.network.filters = 8

    config.search.algorithm = "gumbel"
    config.search.num_simulations = 4
    config.search.max_num_considered_actions = 4

    config.selfplay.batch_size = 8
    config.selfplay.games_per_generation = 16
    config.selfplay.chunk_moves = 10
    config.selfplay.komi = 24.5
    config.selfplay.branch_prob = 0.05  # More branches, so CI sees some.
    config.selfplay.branch_queue_capacity = 16
    config.selfplay.random_moves = 4
    # Gumbel's sequential halving gives its considered moves about the same
    # few visits, so SAI's PUCT rule for random moves (more than one visit,
    # not losing) would leave almost none: every visited move may be drawn.
    config.selfplay.random_min_visits = 0
    config.selfplay.random_losing_threshold = 0.0
    config.selfplay.sgf_games_per_generation = 2

    config.schedules.visits = ()  # Constant 4 simulations.
    config.schedules.network = ()  # Constant 1×8.
    config.schedules.window = ((0, 2),)

    config.training.steps_per_generation = 4
    config.training.batch_size = 16
    config.training.optimizer = "adam"
    config.training.learning_rate = 1e-3

    config.gating.candidates = 2
    config.gating.games = 4
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
