"""python -m saijax.train --config=configs/go7_style.py --workdir=runs/go7-centre
python -m saijax.train --config=configs/go7_style.py --workdir=runs/go7-edge --config.style.centre_bonus=-0.2

Offline playing styles on 7×7 (docs/design.md §8, saijax.play.styles): the zoo's
net go7-base-S1 (the strong net of the first 7×7 run, configs/go7_base.py),
fine-tuned by SAI self-play whose every Tromp–Taylor margin weights the
points by line: edge points (lines 1–2) count 1 − b, line
3 counts 1, the centre point (line 4) 1 + b. b = +0.2 (the paper's β for its
Net_center) trains a centre-oriented net, b = −0.2 an edge/corner-oriented
one. The paper trained its biased nets from scratch for two weeks on 13×13;
here they start from the strong net and train a few generations, which
shifts their preferences while keeping them able to play.
"""

import os

from saijax.learn import config as config_lib


def get_config():
    """go7_base.py (the net of zoo:go7-base-S1), started from it, scored with the centre style's map."""
    config = config_lib.load_config(os.path.join(os.path.dirname(__file__), "go7_base.py"))
    config.init_checkpoint = "zoo:go7-base-S1"
    config.style.centre_bonus = 0.2
    config.generations = 12
    config.keep_checkpoint_every = 4
    config.schedules.visits = ((0, 32),)
    config.schedules.window = ((0, 2), (3, 4))
    # The net is already trained: a small constant rate, no decay.
    config.training.lr_schedule = "constant"
    config.training.lr_boundaries = ()
    config.training.lr_values = ()
    config.training.learning_rate = 3e-4
    return config
