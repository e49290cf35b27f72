"""Playing styles against GNU Go ([PosCtl] §4.4, §6) on 7×7.

    python -m experiments.run --config=experiments/styles/config.py
    python -m experiments.run --config=experiments/styles/config.py --config.redraw=True  # the PNG
    python -m experiments.run --config=experiments/styles/config.py --config.play=True  # play again

``experiments/styles/styles.py`` with the settings of its one round (``shipped``:
``styles/results/main/``): the plain net go7-base-S1 (go7-S1 when it was
played), its online, offline (go7-centre, go7-edge) and mixed styles
(w_diff 0.05, p_th 0.1), 20 games each against GNU Go level 10 (never
resigning), komi 8.5 when the styled side has Black and 9.5 when it has
White, 64 visits with the first round's sampled moves (``gumbel_scale`` 1:
the search's default then; the search's other defaults have changed since,
so a replay plays these settings but not necessarily the same games). The
tests are the module's own (Fisher against ``plain``), not the runner's
paired families.
"""

from experiments.lib import claims
from experiments.styles.styles import ALL_PLAYERS


def get_config():
    c = claims.claim_config("styles")
    c.match = dict(games=20, visits=64, gumbel_scale=1.0, seed=0, board_size=7)
    c.runs = dict(
        main=dict(net="zoo:go7-base-S1", centre_net="zoo:go7-centre", edge_net="zoo:go7-edge",
                  players=ALL_PLAYERS, level=10, black_komi=8.5, white_komi=9.5, opening=12, w_diff=0.05,
                  p_th=0.1),
    )  # fmt: skip
    c.rebuild = dict(plot_only=True)
    c.shipped = dict(main="experiments/styles/results/main")
    c.figures = dict(main=["styles.png"])
    return c
