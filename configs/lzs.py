"""python -m saijax.train --config=configs/lzs.py --workdir=/tmp/lzs9

The Leela Zero Score baseline on 9×9 ([LZS] §4, see docs/design.md): a
linear score head trained on the final margin / N² with weight 20, PUCT with
c_puct 1.5, no resignation, fixed komi 7.5, no branching, the LZS pass rule,
the paper's visits / window / network / learning-rate schedules and gating at
55%. Starts from `default.py` and changes only the fields below.

LZS counted a generation per promoted net; saijax counts self-play cycles, so
with gating on its schedules advance a little faster than the paper's.
"""

import os

from saijax.learn import config as config_lib


def get_config():
    """LZS on 9×9."""
    config = config_lib.load_config(os.path.join(os.path.dirname(__file__), "default.py"))
    config.generations = 700  # LZS stopped after ~1.4 M self-plays (700×2000).

    config.network.value_head = "score"
    config.network.blocks = 2
    config.network.filters = 64

    config.search.algorithm = "puct"
    config.search.c_puct = 1.5
    config.search.value_mode = "score"

    config.selfplay.komi_mode = "fixed"
    config.selfplay.komi = 7.5
    config.selfplay.branch_prob = 0.0
    config.selfplay.random_moves = 15
    config.selfplay.resign_threshold = -1.0  # No resignation.
    config.selfplay.no_resign_fraction = 0.0
    config.selfplay.lzs_pass_rule = True

    # Equations (1) and (2) of the LZS paper.
    config.schedules.visits = ((0, 100), (16, 150), (32, 250), (48, 400), (64, 600), (80, 850))
    config.schedules.window = ((0, 4), (16, 8), (32, 12), (48, 16), (64, 20), (80, 24))
    # 2×64, then 4×128 at g=1, 8×160 at 25, 10×192 at 43, 12×256 at 50.
    config.schedules.network = ((0, 2, 64), (1, 4, 128), (25, 8, 160), (43, 10, 192), (50, 12, 256))

    # lr 0.02 for g < 44 and 0.002 from g = 45 (the paper leaves g = 44
    # open; we switch at 45).
    config.training.learning_rate = 0.02
    config.training.lr_schedule = "piecewise"
    config.training.lr_boundaries = (45,)
    config.training.lr_values = (0.002,)
    config.training.score_weight = 20.0

    config.gating.enabled = True
    config.gating.candidates = 1
    config.gating.games = 400
    config.gating.threshold = 0.55
    return config
