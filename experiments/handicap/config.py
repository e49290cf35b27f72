"""Figs. 3 and 4 of [SAI-9x9] (handicap by komi, and by stones and komi), on 7×7.

    python -m experiments.run --config=experiments/handicap/config.py
    python -m experiments.run --config=experiments/handicap/config.py --config.redraw=True  # figures from the CSVs
    python -m experiments.run --config=experiments/handicap/config.py --config.play=True  # play again

``experiments/handicap/handicap.py`` with these settings. Run ``main`` (the second
round): go7-S1, S2 and S3 against themselves and W1–W3, 60 games per cell,
at the paper's maluses 0, 2, 4, 6, 8 and at those the malus-0 margins
calibrate to win rates of 50%, 25%, 10% and 3% (Fig. 3); as White against
W3 in H1 and H2 over a wide range of komis, 40 games per cell (Fig. 4).
Run ``w1``: Fig. 4's H2 against W1, the calibration of Fig. 7's H2
situation (``experiments/recovery/config.py``). Deterministic search at 128
visits, two random opening moves per game pair, played out.

The script tests each cell against its baseline (malus 0, the highest
komi of its handicap) with Fisher's exact test and Holm/BH over its own
tables (``fig3_tests.csv``, ``fig4_tests.csv``); the cells are played with
different seeds, so there is no pairing to add and no ``claim_tests``.
"""

from experiments.lib import claims


def get_config():
    c = claims.claim_config("handicap")
    c.rebuild = dict(plot_only=True)
    c.match = dict(visits=128, gumbel_scale=0.0, opening_moves=2, komi=9.5, seed=0, board_size=7)
    c.runs = dict(
        main=dict(strong=("zoo:go7-S1", "zoo:go7-S2", "zoo:go7-S3"), weak=("zoo:go7-W1", "zoo:go7-W2", "zoo:go7-W3"),
                  figures=("3", "4"), games=60, fig4_games=40, maluses=(0.0, 2.0, 4.0, 6.0, 8.0),
                  target_rates=(0.5, 0.25, 0.1, 0.03), h1_komis=(2.5, 0.5, -1.5, -9.5, -19.5, -29.5, -39.5),
                  h2_komis=(13.5, 10.5, 8.5, 0.5, -9.5, -19.5, -29.5)),
        w1=dict(strong=("zoo:go7-S1", "zoo:go7-S2", "zoo:go7-S3"), weak=("zoo:go7-W1",), figures=("4",), games=40,
                fig4_games=40, h1_komis=(), h2_komis=(0.5, -9.5, -19.5, -29.5, -39.5)),
    )  # fmt: skip
    c.shipped = dict(main="experiments/handicap/results/main", w1="experiments/handicap/results/w1")
    c.figures = dict(main=["fig3_handicap_by_komi.png", "fig4_handicap_by_stones.png"],
                     w1=["fig4_handicap_by_stones.png"])  # fmt: skip
    return c
