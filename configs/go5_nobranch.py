"""python -m saijax.train --config=configs/go5_nobranch.py --workdir=/tmp/go5-nobranch

The branching ablation on 5×5 (experiments/baselines/baselines.py): SAI exactly as
`go5.py`, but self-play never branches (``selfplay.branch_prob = 0``), so
every game starts from the empty board at a komi drawn around α_∅.
"""

import os

from saijax.learn import config as config_lib


def get_config():
    """go5.py without branching."""
    config = config_lib.load_config(os.path.join(os.path.dirname(__file__), "go5.py"))
    config.selfplay.branch_prob = 0.0
    return config
