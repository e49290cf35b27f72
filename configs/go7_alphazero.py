"""python -m saijax.train --config=configs/go7_alphazero.py --workdir=runs/go7-az

The AlphaGo-style (winrate-head) counterpart of `go7.py` for SAI 9×9 paper
§4.4 (experiments/suboptimal_moves/suboptimal_moves.py): everything as `go7.py` except the
value head, a tanh win rate trained on ±1 at one fixed komi, 9.5 (the
experiments' even komi; 7×7's fair komi is 9, so perfect play wins for
White by half a point), with no komi sampling, no branching and no final-score
target (all three need the sigmoid: the score target trains α + k). The
ownership target, playout caps, opening noise, search, net and training
schedule are go7.py's. Run it to the same self-play evaluations as `go7.py` (about
50 M, the `selfplay_evaluations` metric) in legs, as that run was.
"""

import os

from saijax.learn import config as config_lib


def get_config():
    """go7.py with a winrate head at fixed komi 9.5."""
    config = config_lib.load_config(os.path.join(os.path.dirname(__file__), "go7.py"))
    config.network.value_head = "winrate"
    config.selfplay.komi_mode = "fixed"
    config.selfplay.komi = 9.5
    config.selfplay.branch_prob = 0.0
    config.training.score_aux_weight = 0.0
    return config
