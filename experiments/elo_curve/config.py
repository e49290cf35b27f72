"""Fig. 2 of [SAI-9x9] and [SAI-7x7] (Elo rises fast, then slowly) on the `configs/go7.py` run.

    python -m experiments.run --config=experiments/elo_curve/config.py
    python -m experiments.run --config=experiments/elo_curve/config.py --config.redraw=True  # elo_curve.png
    python -m experiments.run --config=experiments/elo_curve/config.py --config.play=True  # rate again

``experiments/elo_curve/elo_curve.py`` with the shipped settings (``shipped``:
``elo_curve/results/main/``, in the training run's folder): 35 kept
generations of ``runs/go7`` (every 5th and 169) and the random net, each
against the next two (the random net against the first two), 40 games per
pairing, deterministic search at 64 visits, komi 9.5, the first 2 moves of
each game pair at random. The Elo fit has Wald intervals and no test
families. Playing needs the run's workdir with its kept checkpoints
(``--config.runs.main.workdir=...``), which the repository does not ship
(``legs/go7_run/leg/`` holds generation 169 alone). The first 7×7 run's
curve (``configs/go7_base.py``, 24 games per pairing at 32 visits with
sampled moves) is in ``elo_curve/results/earlier/go7/``, that run's folder.
"""

from experiments.lib import claims

GENERATIONS = (*range(0, 170, 5), 169)


def get_config():
    c = claims.claim_config("elo_curve")
    c.match = dict(games=40, visits=64, gumbel_scale=0.0, seed=0)
    c.runs = dict(
        main=dict(workdir="runs/go7", generations=GENERATIONS, neighbours=2, random_pairings=2, opening_moves=2,
                  komi=9.5, title="configs/go7.py"),
    )  # fmt: skip
    c.rebuild = dict(plot_only=True)
    c.shipped = dict(main="experiments/elo_curve/results/main")
    c.figures = dict(main=["elo_curve.png"])
    return c
