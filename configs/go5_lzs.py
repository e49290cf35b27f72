"""python -m saijax.train --config=configs/go5_lzs.py --workdir=/tmp/go5-lzs

The Leela Zero Score baseline on 5×5 (experiments/baselines/baselines.py), sized like
`go5.py`. From LZS (configs/lzs.py): the linear score head (final margin /
N², weight 20) and search on the predicted score, fixed komi (24.5 here), no
branching, no resignation (every game is played out), the LZS pass rule, and
gating: one candidate per generation, promoted at a 55% score.

Departures, so that the arms differ only in what the comparison is about:
the search is go5's Gumbel search with 16–32 simulations, not LZS's PUCT
with 100–850 visits; the net, games per generation, window and optimiser
are go5's; the gate plays 40 games, not 400 (at 5×5 compute; a 55% gate on
40 games is a weak filter, and its games are reported beside the self-play
compute).
"""

import os

from saijax.learn import config as config_lib


def get_config():
    """go5.py with LZS's score head, pass rule, no resignation and gating."""
    config = config_lib.load_config(os.path.join(os.path.dirname(__file__), "go5.py"))
    config.network.value_head = "score"
    config.search.value_mode = "score"
    config.selfplay.komi_mode = "fixed"
    config.selfplay.komi = 24.5
    config.selfplay.branch_prob = 0.0
    config.selfplay.resign_threshold = -1.0
    config.selfplay.no_resign_fraction = 0.0
    config.selfplay.lzs_pass_rule = True
    config.gating.enabled = True
    config.gating.candidates = 1
    config.gating.games = 40
    config.gating.threshold = 0.55
    return config
