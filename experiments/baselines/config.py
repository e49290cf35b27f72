"""Equal-compute baselines on 5×5 ([LZS] §6.2, [SAI-ext] §2.3, §2.5): SAI, NoBranch, AlphaZero, LZS.

    python -m experiments.run --config=experiments/baselines/config.py
    python -m experiments.run --config=experiments/baselines/config.py --config.redraw=True  # summary, PNG
    python -m experiments.run --config=experiments/baselines/config.py --config.play=True  # train and play again

``experiments/baselines/baselines.py`` with the shipped settings (``shipped``:
``baselines/results/main/``): the arms SAI, NoBranch, AlphaZero and LZS
with seeds 0 and 1 and LZS-nogate with seed 0, 30 generations each (a
checkpoint rated every 3), trained into ``runs/baselines/<arm>_s<seed>``;
one Elo scale from 20-game pairings (each net against its run's next two,
the nearest-compute net of every other arm, the random net against each
run's first two) at komi 24.5, 32 visits, 2 random opening moves; each
run's last net against GNU Go level 10 (10 games a colour, 64 visits); 64
self-play calibration games per SAI and NoBranch net. Every match sampled
its moves (``gumbel_scale`` 1, which ``baselines.py`` set when these were
played; the default is 0 now, so it is set here). ``redraw`` is the
``plot`` stage: ``summary.csv`` (with the tests against SAI) and
``baselines.png`` from the shipped tables. ``play`` trains every run
first (about 40 minutes of the 2-core CPU per seed); one stage alone, e.g.
``--config.runs.main.stages="('elo',)"``, resumes what was played.
"""

from experiments.baselines.baselines import STAGES
from experiments.lib import claims


def get_config():
    c = claims.claim_config("baselines")
    c.match = dict(games=20, visits=32, gumbel_scale=1.0, seed=0)
    c.runs = dict(
        main=dict(root="runs/baselines", stages=STAGES, arms=("SAI", "NoBranch", "AlphaZero", "LZS", "LZS-nogate@0"),
                  seeds=(0, 1), generations=30, every=3, neighbours=2, random_pairings=2, komi=24.5, opening_moves=2,
                  level=10, gnugo_games=10, gnugo_visits=64, calibration_games=64, late_move=12),
    )  # fmt: skip
    c.rebuild = dict(stages=("plot",))
    c.shipped = dict(main="experiments/baselines/results/main")
    c.figures = dict(main=["baselines.png"])
    return c
