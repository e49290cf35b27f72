"""python -m saijax.train --config=configs/go7_sai.py --workdir=runs/sharp/sai

SAI's 7×7 self-play rules on top of `go7.py`, fine-tuned from the zoo's
go7-S1: the base of the sharp-value arms (experiments/README.md, "SAI's
sharp value on 7×7"; each arm is this plus one lever, e.g.
`--config.selfplay.fixed_komi_share=0.3`). It is a starting point for
those measurements, not yet a recipe that reaches SAI's β_∅ > 2.

What it changes, and why:

* **SAI's opening.** 4 random moves (SAI: "the first few"), drawn from
  the search's improved policy at T = 0.5 among moves with more than 2
  visits and a value above 5%, from full searches only
  (`selfplay.random_full_search_only`: under playout caps an opening slot
  waits for a full search), with root noise on those moves only; a random
  move that would make its player resign is taken back (it cannot fire
  before move 12 on 7×7). go7.py draws 8 moves ∝ Gumbel visits with no
  filter, most of them from 8-simulation searches where the draw is
  uniform among the prior's top 8: in the GPU run's complete games Black
  opened at D4, perfect play's move, 14% of the time; here 100%.
* **Fine-tuning schedules.** `init_checkpoint` restarts go7.py's
  generation-keyed schedules at 0, so they are set flat: 64 simulations,
  Adam at 3e-4, a window of 10 generations (go7.py's late values).
* The fair komi for the fixed-komi lever: `selfplay.komi` 9.5, SAI's 7×7
  komi (used only with `selfplay.fixed_komi_share` > 0).

A generation is 512 games, about 0.5 M self-play evaluations (2–3.5
minutes for two such runs side by side on 2 cores); the opening's waits
for a full search spend 5.5–12.7% of them (mean 7.7% over 39 generations,
`selfplay_waiting_evaluations`). Measured so far (experiments/README.md,
"SAI's sharp value on 7×7"): self-play opens at D4 in every complete game
(go7.py's rule: 14% in the GPU run), but β_∅ stays 0.2–0.3 over 33
generations, alone or with a 30% fixed-komi share or a komi temperature
of 0.25, and the net fits its data's komi curve (the data's β 0.28–0.32).
With every search full at 256 simulations (128 games a generation,
``--config.schedules.visits='((0,256),)' --config.selfplay.full_search_prob=1.0``)
β_∅ rose slowly, 0.22 to 0.30 over 27 generations (32.5 M evaluations),
with the data's β at 0.41, above the net's. With 32 samples per new row
on top (round 3, two seeds from round 2's generation 26) β_∅ caught up with
its data, 0.41–0.44 over the last 10 generations, α_∅ at 9.0: that
combination is `go7_sharp.py`, the recipe so far.
"""

import os

from saijax.learn import config as config_lib


def get_config():
    """go7.py with SAI's opening, fine-tuned from go7-S1."""
    config = config_lib.load_config(os.path.join(os.path.dirname(__file__), "go7.py"))
    config.init_checkpoint = "zoo:go7-S1"
    config.generations = 300
    config.keep_checkpoint_every = 5

    config.selfplay.opening_policy = "improved"
    config.selfplay.random_moves = 4
    config.selfplay.noise_moves = 4
    config.selfplay.random_temperature = 0.5
    config.selfplay.random_min_visits = 2
    config.selfplay.random_losing_threshold = 0.05
    config.selfplay.random_full_search_only = True
    config.selfplay.random_takeback = True
    config.selfplay.komi = 9.5

    config.schedules.visits = ((0, 64),)
    config.schedules.window = ((0, 10),)
    config.training.lr_schedule = "constant"
    config.training.learning_rate = 3e-4
    return config
