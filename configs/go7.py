"""python -m saijax.train --config=configs/go7.py --workdir=runs/go7

SAI on 7×7 for a CPU with the self-play and learning switches the 7×7
ablation kept (experiments/README.md, "The 7×7 self-play ablation"):
`go7_base.py`, the config saijax first ran, plus

* root noise on the 8 sampled opening moves only, then the search's best
  move (SAI's randomised opening);
* KataGo's ownership and final-score targets, playout cap randomisation
  (a quarter of the moves searched fully, the rest with 8 simulations),
  global pooling, the opponent-reply target, weight averaging and about 4
  training samples per new self-play row;
* more simulations once the policy has settled (64 from generation 60).

170 generations are about 50 M self-play evaluations (the
`selfplay_evaluations` metric); about 3 hours on an idle 2-core CPU, so on
this machine the run goes in legs that resume from a kept checkpoint
(README, "Long runs in legs").
"""

import os

from saijax.learn import config as config_lib


def get_config():
    """go7_base.py with the ablation's switches."""
    config = config_lib.load_config(os.path.join(os.path.dirname(__file__), "go7_base.py"))
    config.generations = 170

    config.network.ownership_head = True
    config.network.global_pooling = True
    config.network.opponent_policy_head = True

    config.selfplay.noise_moves = 8  # = random_moves: noise in the opening only
    # Playout caps: with two cheap searches in three moves a generation's
    # games cost less, so a generation has twice the games of go7_base.py.
    config.selfplay.fast_simulations = 8
    config.selfplay.full_search_prob = 0.25
    config.selfplay.games_per_generation = 512

    config.schedules.visits = ((0, 16), (10, 32), (60, 64))

    config.training.ownership_weight = 1.5
    config.training.score_aux_weight = 5.0
    config.training.opponent_policy_weight = 0.15
    config.training.ema_decay = 0.99
    config.training.samples_per_new_row = 4.0
    # Twice the rows per generation: the rate steps come later than in
    # go7_base.py (generations 50 and 90 there).
    config.training.lr_boundaries = (90, 140)
    return config
