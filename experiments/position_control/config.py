"""Position control ([PosCtl] §5, §7) on 7×7: go7-S1 controlled against go7-W3.

    python -m experiments.run --config=experiments/position_control/config.py
    python -m experiments.run --config=experiments/position_control/config.py --config.redraw=True  # tables, PNG
    python -m experiments.run --config=experiments/position_control/config.py --config.play=True \
        --config.outdir=/tmp/position_control  # play again (in the shipped folder it resumes)

``experiments/position_control/position_control.py`` with the second round's settings
(``shipped``: ``position_control/results/main/``): go7-S1 at 128 visits,
deterministic, against go7-W3, 214 games per condition, 4 random opening
moves per colour pair, komi 9.5; the endgame conditions, and ``none`` and
Leela+ (``C:2.5@starts``) beside them, from 107 near-even endgame starts
(ply 24, |α + k| < 3, made by go7-S1 against itself), each played with
both colours. The tests are the module's own (TOST, Fisher, Welch,
Mann–Whitney, with Holm and BH over the controlled conditions in
``summary.csv``), not the runner's paired families. The first round
(against GNU Go, 16 games, 64 visits) is in
``position_control/results/earlier/go7_position_control/``.
"""

from experiments.lib import claims

METHODS = ("none", "naive", "B", "C:1", "C:2.5", "C:2.5@starts", "endgame:2", "endgame:5")


def get_config():
    c = claims.claim_config("position_control")
    c.match = dict(games=214, visits=128, gumbel_scale=0.0, seed=0, board_size=7)
    c.runs = dict(
        main=dict(net="zoo:go7-S1", opponent="zoo:go7-W3", methods=METHODS, black_komi=9.5, white_komi=9.5,
                  opening_moves=4, endgame_starts=107, endgame_ply=24, endgame_band=3.0, endgame_rival="self"),
    )  # fmt: skip
    c.rebuild = dict(summarize_only=True)
    c.shipped = dict(main="experiments/position_control/results/main")
    c.figures = dict(main=["position_control.png"])
    return c
