"""python -m saijax.train --config=configs/go5_alphazero.py --workdir=/tmp/go5-az

The AlphaZero baseline on 5×5 (experiments/baselines/baselines.py), sized like
`go5.py`: a tanh winrate head trained on ±1 at one fixed komi (24.5, so
perfect play wins for Black by half a point), no komi sampling, no
branching. Search, net, games, visits, training and resignation are go5's.
"""

import os

from saijax.learn import config as config_lib


def get_config():
    """go5.py with a winrate head at fixed komi 24.5."""
    config = config_lib.load_config(os.path.join(os.path.dirname(__file__), "go5.py"))
    config.network.value_head = "winrate"
    config.selfplay.komi_mode = "fixed"
    config.selfplay.komi = 24.5
    config.selfplay.branch_prob = 0.0
    return config
