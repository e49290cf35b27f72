"""python -m saijax.train --config=configs/go7_sharp_puct.py --workdir=runs/sharp/sharp_puct

The sharp-value recipe with SAI's search in self-play (issue 43, round 8;
experiments/README.md, "SAI's sharp value on 7×7"): `go7_sharp.py` (SAI's
opening, every move a full 256-simulation search, 32 samples per new row)
searching as SAI's engine did, PUCT instead of Gumbel:

* **PUCT** (`search.algorithm = "puct"`): c_puct 0.8, first-play urgency
  0.25 (none at a noisy root), the move with the most visits, the visit
  distribution as the policy target (go7_sharp.py: Gumbel MuZero over 16
  root candidates, its improved policy as the target);
* **Dirichlet noise at every root** (`selfplay.noise_moves = -1`;
  concentration 0.03·361/49, weight 0.25), as SAI's and Leela Zero's
  self-play ran (go7_sharp.py: noise on the 4 random opening moves only).

From the same compact leg of the recipe's run (generation 109), two seeds
of this config against the recipe's own leg 5, 20 generations side by
side: the data's β per generation 0.81 and 0.88 against 0.56 (both
higher, Welch; the declared family in experiments/configs/sharp_value.py),
β_∅ 0.45 → 0.74 and 0.45 → 0.75 against 0.45 → 0.53, the late positions'
β 2.5–2.8 against 1.4 and their score error 1.5–2 points against 3.6. It is
the first lever since round 3's to move the data's β in both seeds; β_∅
is still far from SAI's > 2, and α_∅ drifted below the fair komi in seed
0 (8.6 over its last 10 generations). Round 8 is the end-state run's new
line: it continues from `experiments/results/sharp_value/sharp_puct_leg/`
(copy it to `runs/sharp/sharp_puct` and run the command above).
"""

import os

from saijax.learn import config as config_lib


def get_config():
    """go7_sharp.py with SAI's PUCT search and root noise at every self-play move."""
    config = config_lib.load_config(os.path.join(os.path.dirname(__file__), "go7_sharp.py"))
    config.search.algorithm = "puct"
    config.selfplay.noise_moves = -1  # Dirichlet noise at every root (go7_sai.py: the opening's 4)
    return config
