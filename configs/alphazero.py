"""python -m saijax.train --config=configs/alphazero.py --workdir=/tmp/az9

The AlphaZero / Leela Zero baseline on 9×9: a tanh winrate head (with a
colour plane) trained on ±1 at one fixed komi, no branching, no komi
sampling; everything else as `default.py`.
"""

import os

from saijax.learn import config as config_lib


def get_config():
    """AlphaZero-style winrate head at fixed komi 7."""
    config = config_lib.load_config(os.path.join(os.path.dirname(__file__), "default.py"))
    config.network.value_head = "winrate"
    config.selfplay.komi_mode = "fixed"
    config.selfplay.komi = 7.0
    config.selfplay.branch_prob = 0.0
    return config
