"""The zoo's nets against GNU Go 3.8 level 10, played out: go5 on 5×5, the `configs/go7.py` run's end on 7×7.

    python -m experiments.run --config=experiments/gnugo_strength/config.py
    python -m experiments.run --config=experiments/gnugo_strength/config.py --config.redraw=True  # the PNGs
    python -m experiments.run --config=experiments/gnugo_strength/config.py --config.play=True  # play again

``experiments/gnugo_strength/gnugo_strength.py``, one run per board, each as shipped:

* ``go5`` (``gnugo_strength/results/go5/``): the zoo's ``go5`` (generation
  50) at 64 visits, 10 games per colour, as Black at komi 24.5 (it must take
  the whole board) and as White at 25.5, with sampled moves (``gumbel_scale``
  1, the search's default when it was played; 0 now, so it is set here);
* ``go7`` (``gnugo_strength/results/go7/``, in the training run's folder):
  generation 169 of ``configs/go7.py`` (the checkpoint in
  ``legs/go7_run/leg/``; the zoo's go7-S1 is the same net in float16) at
  256 visits, 40 games per colour, komi 8.5 as Black and 9.5 as White, GNU
  Go's first 4 moves drawn among those it rates at least half its best.
* ``go7_gpu`` (``gnugo_strength/results/go7_gpu/``):
  generation 46 of ``configs/go7_gpu.py``, the end of its first leg on an
  H200 (``legs/go7_gpu_run/leg/``; a later leg replaces that folder, and
  git keeps this checkpoint), with go7's settings.

    python -m experiments.run --config=experiments/gnugo_strength/config.py --config.play=True \
        --config.only=go7_gpu  # one run played again

``go7`` and ``go7_gpu`` played their search's best move (``gumbel_scale`` 0); both seed 0. Each row is a one-sample
Wilson interval against a fixed opponent: no test families. The earlier 7×7
runs' checks are in ``gnugo_strength/results/earlier/`` (``go7_gnugo``: the
first run's generations 45 and 75; ``go7b_gnugo``: the second run's 70; 64
visits with sampled moves).
"""

from experiments.lib import claims


def get_config():
    c = claims.claim_config("gnugo_strength")
    c.match = dict(level=10, seed=0)
    c.runs = dict(
        go5=dict(nets=("zoo:go5",), board_size=5, games=10, visits=64, black_komi=24.5, white_komi=25.5,
                 gumbel_scale=1.0),
        go7=dict(nets=("S1=experiments/legs/go7_run/leg/checkpoints/169",), board_size=7, games=40, visits=256,
                 black_komi=8.5, white_komi=9.5, engine_opening_moves=4, gumbel_scale=0.0),
        go7_gpu=dict(nets=("G46=experiments/legs/go7_gpu_run/leg/checkpoints/46",), board_size=7, games=40,
                     visits=256, black_komi=8.5, white_komi=9.5, engine_opening_moves=4, gumbel_scale=0.0),
    )  # fmt: skip
    c.rebuild = dict(plot_only=True)
    c.shipped = dict(go5="experiments/gnugo_strength/results/go5", go7="experiments/gnugo_strength/results/go7",
                     go7_gpu="experiments/gnugo_strength/results/go7_gpu")  # fmt: skip
    c.figures = dict(go5=["gnugo_strength.png"], go7=["gnugo_strength.png"], go7_gpu=["gnugo_strength.png"])
    return c
