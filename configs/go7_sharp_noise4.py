"""python -m saijax.train --config=configs/go7_sharp_noise4.py --workdir=runs/sharp/puct_noise4

The sharp-value recipe from issue 43's round 16 on (experiments/README.md,
"SAI's sharp value on 7×7", round 16): `go7_sharp_puct.py` (SAI's opening,
every move a full 256-simulation PUCT search, 32 samples per new row) with
root noise on the opening's 4 random moves only
(`selfplay.noise_moves = 4`; go7_sharp_puct.py: Dirichlet noise at every
root, as SAI's and Leela Zero's self-play ran). After the opening every
move is the most-visited move of a search without noise, as the net plays
at evaluation; such a root also keeps first-play urgency 0.25 (a noisy
root's is 0, `search.noisy_root_fpu_reduction`), so the switch changes
both, and round 16 does not separate them.

Round 16 (from the end-state run's workdir at 165, generations 166-180,
four runs side by side): seeds 0 and 1 of this config against the
recipe with the same seeds. The family declared before the runs
(experiments/configs/sharp_value.py) called the lever on both measures
in both seeds: the data's beta per generation 4.13 and 2.34 against
1.16 and 1.19 (Holm 0.0076 and 0.0003; seed 0's capped by the fit's
ridge where its games split by komi without an exception), the data's
alpha 8.76 and 8.76 against 8.20 and 8.10 (Holm p < 0.0001). Over
171-180 beta_empty 2.35 and 2.76 (the controls 1.03 and 0.99), alpha_empty
8.80 and 8.93 (8.33 and 8.13), and self-play's plateau (Black about half
from komi 7 to 8.5) gone: Black 0.8-0.9 below 9, half at 9, none above.
The likely reason, measured before the round: with the recipe's root
noise at every move (weight 0.25) the same net's 256-visit games at komi
8.5 gave Black 0.75 and 0.58 instead of 0.91 and 0.64 (two nets at 165,
64 games each): the noise decides games near the fair komi, in both
directions. Without it, self-play plays the main lines as the net plays
them at evaluation (at 180, 256 visits without noise: Black 1.00 at komi
8.5 and 0.03 at 9.5).

The end-state run continues under this config from its seed 0's compact
leg at 180, `experiments/results/sharp_value/sharp_noise4_leg/` (copy it
to `runs/sharp/puct_noise4` and run the command above).
"""

import os

from saijax.learn import config as config_lib


def get_config():
    """go7_sharp_puct.py with root noise on the opening's 4 random moves only."""
    config = config_lib.load_config(os.path.join(os.path.dirname(__file__), "go7_sharp_puct.py"))
    config.selfplay.noise_moves = 4  # Dirichlet noise on the random opening moves only (go7_sharp_puct.py: every root)
    return config
