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

From the same compact leg of the recipe's run (generation 109), seeds 0
(20 generations) and 1 (10) of this config against the recipe's own leg 5
(20), side by side: the data's β per generation 0.81 and 0.91 against
0.57 (both higher, Welch, Holm 0.0024; the declared family in
experiments/configs/sharp_value.py), β_∅ 0.45 → 0.74 and 0.45 → 0.75
against 0.45 → 0.53, the late positions' β 2.6–2.7 against 1.3 and their
score error 1.7 points against 3.7: its losing side plays on (6% of the
played-out rows from games given away by more than half the board,
against 28%). It is the first lever since round 3's to move the data's β
in both seeds; β_∅ is still far from SAI's > 2, and α_∅ drifted below the
fair komi in seed 0 (8.47 over its last 10 generations). Seed 0's
generation 129, playing with this search (PUCT, 256 visits, the
most-visited move), beat GNU Go level 10 40/40 as Black at komi 8.5 and
39/40 as White at 9.5; with the Gumbel player, 32/40 as White. Round 8 is
the end-state run's new line: it continued from
`experiments/results/sharp_value/sharp_puct_leg/` (in git's history since
round 16, at 165: `git checkout 8dcf65e -- experiments/results/sharp_value/sharp_puct_leg`,
copy it to `runs/sharp/sharp_puct` and run the command above).

Round 9 ran the run's leg 2 (130–149: β_∅ 0.74 → 0.64, α_∅ drifting to
7.5) beside the same net widened to 3×64 at generation 130, starting as
exactly the 3×32 net (``--config.schedules.network='((0,3,32),(130,3,64))'
--config.training.growth=widen``): over 131–139 the data's β 0.92 against
0.66 (one seed, Welch p = 0.0055), α_∅ 8.8 held at the fair komi, and 109
of 128 of its games at komi 9.5 ended at exactly B+9; as White against GNU
Go level 10, 32/40. Round 10's second seed from the same checkpoint did not
repeat it (the data's β 0.68 against 0.70 over 131-136, p = 0.85), and seed
0 continued lost it (β_∅ 0.86 -> 0.58 over 141-146): the recipe stays 3×32.
Round 10 also found where the data go flat: off the fair komi by 1.5-3
points, 71-94% of the played-out games end moved toward the komi (the side
it favours gives points back while it still wins, and often one too many),
against B+9 within a point of it (experiments/README.md, round 10).
Round 11 read every complete game with the net that played it
(decided.csv): near the fair komi the side perfect play favours scores
0.4-0.8 in self-play, and its upsets are decided in the endgame (none in
the random opening), while the same nets' deterministic games at 8.5 and
9.5 are nearly perfect (generation 156 of the 3x64 line: Black 92% and
5%). Root noise on the opening's 4 moves only
(`--config.selfplay.noise_moves=4`) gave the data's beta 1.32 against
1.20 over 5 generations (p = 0.51, inconclusive) and beta_empty 0.99, the
highest yet; the komi concentrated (temperature 0.25) and the variable
agent (lambda 0.5 while ahead) made the data flatter. Nothing is called:
this config is unchanged.
Round 12: the opening-only noise did not repeat (seed 0 continued +0.04,
p = 0.79; seed 1 -0.06, p = 0.67), and self-play at 64 visits kept pace
with 256 at a quarter of the evaluations (the data's beta +0.06, p = 0.68;
one seed). The 92% of round 11 was the 64-visit search winning the main
lines' fights for Black: the same net at 256 visits won 34% as Black at
8.5 and 8% at 7.5 (Black's group dead in 36-48% of the games), while at
9.5 both budgets ended at perfect play's B+9 (79% and 94%). Self-play's
results are a plateau, Black scoring about 0.5 at every komi from 7 to 9,
which a logistic reads as alpha 8 and beta 1.2. Nothing is called.

Round 13: self-play at 64 visits, continued and at the control's compute
(512 games a generation, 8 samples per new row), against this recipe over
162-168: both moved the data's alpha toward 9 (+0.34 and +0.33, Holm
p < 0.05 each), not its beta (+0.21 and +0.16, inconclusive); one seed, so
the lever is the next round's candidate for a second seed, not a change to
this config. Searched at 256 visits at komi 8.5, this recipe's net at 168
lost Black's group in 66% of the games (Black won 17%), the two 64-visit
nets in 17% and 11% (Black won 69% and 88%, White's group dead in 22%
and 53%): the fights still decide, now more often for Black.

Round 14: both 64-visit forms again with seed 1 (from this recipe's 160):
the data's alpha higher again (+0.26 and +0.37) but not significant (Holm
0.73 and 0.22), the data's beta +0.04 and +0.11 (inconclusive), so by the
two-seed rule nothing is called and this config is unchanged. Searched at
256 visits from the same openings, this recipe's net at 168 ends its main
lines at B+7 at komi 7 (draws) and loses Black's group in them at 7.5: it
can secure B+7 and no more, so its play's cliff is between 7 and 7.5, not
at 9. The compute-matched 64-visit net plays perfect play's B+9 at 9.5 and
wins 80% at 8.5, but ends 38 of 64 games at B+7 (a loss) at 7.5.

Round 15 (the 3x64 workdirs were lost, so from this recipe's compact leg
at 149): SAI's fixed-komi share (`--config.selfplay.fixed_komi_share=0.3`,
30% of the complete games at 9.5) with seeds 0 and 1 against this
recipe's leg 3 (150-165): the two seeds went opposite ways (the data's
beta -0.15 and +0.34, its alpha +0.15 and -0.94), so nothing is called.
Self-play still scores about half for Black from komi 7 to 8.5 in every
run, while seed 1's net at 256 visits without noise wins 91% at 8.5 and
8% at 9.5. Leg 3's compact leg at 165 shipped in
`experiments/results/sharp_value/sharp_puct_leg/` (git 8dcf65e).

Round 16: root noise on the opening's 4 moves only, seeds 0 and 1, each
against this config with the same seed from leg 3's workdir at 165, was
called on the data's beta and alpha in both seeds, and beta_empty passed
2 in both (2.35 and 2.76 over 171-180, against this config's 1.03 and
0.99): the recipe is now `go7_sharp_noise4.py`, and the end-state run
goes on under it. This config's leg 4 (166-180) moved beta_empty +0.19.
"""

import os

from saijax.learn import config as config_lib


def get_config():
    """go7_sharp.py with SAI's PUCT search and root noise at every self-play move."""
    config = config_lib.load_config(os.path.join(os.path.dirname(__file__), "go7_sharp.py"))
    config.search.algorithm = "puct"
    config.selfplay.noise_moves = -1  # Dirichlet noise at every root (go7_sai.py: the opening's 4)
    return config
