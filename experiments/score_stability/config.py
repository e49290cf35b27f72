"""§3.6 of [SAI-9x9] (the score estimate of a resign position), on 7×7.

    python -m experiments.run --config=experiments/score_stability/config.py
    python -m experiments.run --config=experiments/score_stability/config.py --config.redraw=True  # tables, figure
    python -m experiments.run --config=experiments/score_stability/config.py --config.play=True  # play again

``experiments/score_stability/score_stability.py`` with these settings: go7-S1 plays W1, W2
and W3, 40 games each (deterministic search at 128 visits, colours
alternating, two random opening moves per game pair, komi 9.5, played out);
go7-S2, not one of the players, scores the positions within 4 plies of each
resign point (its own win probability below 10%) by the root α + k and the
median of α + k over searches of 1, 100, 400 and 1,000 visits, against its
own 256-visit continuation. The script compares each estimator with the
1,000-visit median per game (Wilcoxon signed-rank, Holm and BH over its
``tests.csv``): already paired, so no ``claim_tests``. The first round
(``experiments/score_stability/score_estimation.py``, accuracy only, in
``score_stability/earlier/go7_score_estimation``) is not replayed here.
"""

from experiments.lib import claims


def get_config():
    c = claims.claim_config("score_stability")
    c.rebuild = dict(summarize_only=True)
    c.match = dict(visits=128, gumbel_scale=0.0, opening_moves=2, komi=9.5, seed=0, board_size=7)
    c.runs = dict(
        main=dict(strong="zoo:go7-S1", opponents=("zoo:go7-W1", "zoo:go7-W2", "zoo:go7-W3"), scorer="zoo:go7-S2",
                  games=40, score_visits_list=(1, 100, 400, 1000), continuation_visits=256, resign_threshold=0.1,
                  window=4),
    )  # fmt: skip
    c.shipped = dict(main="experiments/score_stability/results/main")
    c.figures = dict(main=["score_stability.png"])
    return c
