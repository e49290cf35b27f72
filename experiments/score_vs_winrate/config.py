"""Score vs. winrate ([SvW] §IV): Proposition 1 and Figs. 3–4, computed exactly.

    python -m experiments.run --config=experiments/score_vs_winrate/config.py
    python -m experiments.run --config=experiments/score_vs_winrate/config.py --config.redraw=True  # recompute
    python -m experiments.run --config=experiments/score_vs_winrate/config.py --config.play=True  # into outdir

``experiments/score_vs_winrate/score_vs_winrate.py`` with the shipped settings (``shipped``:
``score_vs_winrate/results/main/``): 2,000 random action-shared tree MDPs,
branch b = 2, depth d = 8, 2 actions per state, 100 bins for Fig. 4, seed
0. No games and no sampling error: ``redraw`` recomputes every table and
figure in a few seconds (also the 3 MB ``prop1_bandit.csv``, which is not
shipped). The claims are exact computations, so there are no test families.
"""

from experiments.lib import claims


def get_config():
    c = claims.claim_config("score_vs_winrate")
    c.match = dict(seed=0)
    c.runs = dict(main=dict(num_mdps=2000, branch=2, depth=8, num_actions=2, num_bins=100, tie_break="lexicographic"))
    c.shipped = dict(main="experiments/score_vs_winrate/results/main")
    c.figures = dict(main=["prop1_bandit.png", "fig3_outcome_loss_by_level.png", "fig4_variance_log_ratio.png"])
    return c
