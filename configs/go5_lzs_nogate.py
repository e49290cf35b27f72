"""python -m saijax.train --config=configs/go5_lzs_nogate.py --workdir=/tmp/go5-lzs-nogate

`go5_lzs.py` without the gate: every trained net plays the next generation's
self-play. On 5×5 at the fixed komi 24.5, Black wins only by taking the whole
board, so the LZS gate (55% of 40 games against the playing net) seldom
passes and a gated run can stay with its first net; this arm measures the
score head and search themselves (experiments/baselines/baselines.py).
"""

import os

from saijax.learn import config as config_lib


def get_config():
    """go5_lzs.py, every net promoted."""
    config = config_lib.load_config(os.path.join(os.path.dirname(__file__), "go5_lzs.py"))
    config.gating.enabled = False
    return config
