"""python -m saijax.train --config=configs/go7_sharp.py --workdir=runs/go7_sharp

The sharp-value recipe so far (issue 43; experiments/README.md, "SAI's
sharp value on 7×7", rounds 1–7): `go7_sai.py` (SAI's opening, fine-tuned
from the zoo's go7-S1) with the two levers that moved β_∅. It is what
round 3's arms ran (`sai_v256_spr32`, `sai_v256_spr32_s1`, which continued
round 2's run from its generation 26), and what a GPU leg should start
from; it does not yet reach SAI's β_∅ > 2.

* **Every move a full 256-simulation search** (SAI: 250 visits; go7.py:
  64, three moves in four at 8 under playout caps). The only lever that
  sharpened self-play's own komi curve: the data's β 0.28–0.32 → 0.41
  (round 2). 128 games a generation keep a generation at about 1.15 M
  evaluations, 4–6 minutes on 2 cores.
* **32 samples per new row** (SAI: about 36; go7.py: 4). Round 2's net
  lagged its data (β_∅ 0.28 against the data's 0.41); at 32, in two seeds,
  β_∅ rose from 0.30 to 0.42 within 7 generations and then followed its
  data (0.44 and 0.41 over the last 10 generations, against the data's
  0.43 and 0.47), with α_∅ at 9.01 ± 0.33 and 9.04 ± 0.63, the fair komi.

What did not move β_∅: the fixed-komi share, a komi temperature of 0.25,
SAI's opening on its own (round 1); on top of this recipe (round 4), a
komi temperature of 0.25 (β_∅ 0.41 → 0.30 in 14 generations), λ = 0.5 in
self-play (the data's β fell, 0.47 → 0.31: Welch, Holm p = 0.004) and 1024
visits (0.41 held; the data's β +0.05, inconclusive); the second and
third legs of seed 0 (rounds 5 and 6, generations 50–89) moved β_∅ by
−0.05 and −0.07 (to 0.32) while α_∅ drifted to 8.3–8.8, and its fourth
(round 7, 90–109) by +0.13 (to 0.45). Round 7 also trained α by the value
loss alone (`training.score_aux_weight` = 0, SAI's loss; the score target
ties α to the mean final margin, which games given away inflate): from
generation 89, seed 0's data β rose against leg 4's (+0.11) and seed 1's
fell (−0.07), so the lever is inconclusive; in both, α_∅ drifted above
the fair komi (9.6–9.8), so the score target stays. What limits it: the data's curve is as flat within
one opening and one net as pooled (experiments/sharp_value.py's within
fits), and pairs of games one net played from one position a point of komi
apart part by move 6–12 and turn the wrong way in about a third of the
pairs that turn (`komi_pairs.csv`): the flatness is in the 3×32 net's own
play. The lever left is the net's size (21 CPU generations from
go7-gpu-G46, two declared tests, both inconclusive), a GPU's job:
`go7_sharp_gpu.py` is this recipe from go7-gpu-G46's 4×64 net with
go7_gpu.py's GPU switches (2,048 slots, 8-minute legs).

Round 8 searched as SAI's engine did, PUCT with root noise at every move
(`go7_sharp_puct.py`), from this run's generation 109: the data's β rose
in both seeds against this config's own leg 5, so the end-state run goes
on under `go7_sharp_puct.py`; this file stays what rounds 3–8 ran.
"""

import os

from saijax.learn import config as config_lib


def get_config():
    """go7_sai.py with full 256-simulation searches and 32 samples per new row."""
    config = config_lib.load_config(os.path.join(os.path.dirname(__file__), "go7_sai.py"))
    config.schedules.visits = ((0, 256),)
    config.selfplay.fast_simulations = 0  # no playout caps: every search full
    config.selfplay.full_search_prob = 1.0
    config.selfplay.games_per_generation = 128
    config.training.samples_per_new_row = 32.0
    return config
