"""The 7×7 self-play ablation: the arms' final nets rated against each other at equal evaluations.

    python -m experiments.run --config=experiments/ablation/config.py
    python -m experiments.run --config=experiments/ablation/config.py --config.redraw=True  # ablation.png
    python -m experiments.run --config=experiments/ablation/config.py --config.play=True  # resumes the pairings

``experiments/ablation/ablation.py`` with the settings of the shipped round robin
(``shipped``: ``ablation/results/main/``): the eight arms' runs (each
``python -m saijax.train`` for 36 generations, the commands in
experiments/README.md; ``opening`` is the first 36 generations of a longer
run), 200 games per pairing, deterministic search at 64 visits, komi 9.5,
4 random opening moves per game pair, α_∅, β_∅ and the score error over
the last 10 generations, Elo anchored at ``base``. The arms were added in
four sessions (the pairings resume), which one run with every arm
reproduces. Playing needs the arms' workdirs (``runs/ablation/<arm>``),
which the repository does not ship: their final nets are in
``ablation/results/main/nets/``, their curves in ``curves.csv``. The tests
are the module's own (exact binomial per pairing, Holm and BH over the 28
pairings, in ``pairings.csv``), not the runner's paired families. The
folder also holds ``catch_up/`` (``experiments/ablation/catch_up.py``) and
``gnugo/`` (``experiments/gnugo_strength/gnugo_strength.py`` on two arms' nets).
"""

from experiments.lib import claims

ARMS = dict(
    base="runs/ablation/base",
    noise="runs/ablation/noise",
    own="runs/ablation/own",
    caps="runs/ablation/caps",
    rest="runs/ablation/rest",
    opening="runs/go7_improved@35",
    rest_s1="runs/ablation/rest_s1",
    base_s1="runs/ablation/base_s1",
)


def get_config():
    c = claims.claim_config("ablation")
    c.match = dict(games=200, visits=64, gumbel_scale=0.0, seed=0, board_size=7)
    c.runs = dict(main=dict(arms=tuple(f"{k}={v}" for k, v in ARMS.items()), komi=9.5, opening_moves=4, last=10))
    c.rebuild = dict(plot_only=True)
    c.shipped = dict(main="experiments/ablation/results/main")
    c.figures = dict(main=["ablation.png"])
    return c
