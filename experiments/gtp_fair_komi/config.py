"""[SAI-7x7]'s fair komi through GTP: does a net give Black ½ at komi 9 (the go7 run's targets)?

    python -m experiments.run --config=experiments/gtp_fair_komi/config.py
    python -m experiments.run --config=experiments/gtp_fair_komi/config.py --config.redraw=True  # from summary.csv
    python -m experiments.run --config=experiments/gtp_fair_komi/config.py --config.play=True  # ask again

``experiments/gtp_fair_komi/gtp_fair_komi.py`` with these settings: each net is asked,
as a GUI asks, for Black's empty-board win rate at komi 8.5 and 9.5
(deterministic 64-visit search, λ = μ = 0). Run ``main``: every other kept
generation of the go7 run (``runs/go7``, a workdir that is not shipped:
``go7_run/leg`` holds its last checkpoint only). Run ``old_zoo``: the first
zoo's strong net, now ``zoo:go7-base-S1``. The shipped answers are in the
training run's folder, ``go7_run/``, which keeps its name (played again,
they go to ``gtp_fair_komi/results/<run>/``); its
``fair_komi_old_zoo`` also has the first zoo's S2 and S3, which are no
longer shipped, so a new ``old_zoo`` run asks S1 alone. Run ``go7_gpu``:
generation 46 of ``configs/go7_gpu.py``, the end of its first leg on an
H200, in ``gtp_fair_komi/results/go7_gpu/`` (``--config.only=go7_gpu`` asks it
alone). One query per net and komi, no sampling: nothing to test, so no ``claim_tests``.
"""

from experiments.lib import claims


def get_config():
    c = claims.claim_config("gtp_fair_komi")
    c.rebuild = dict(plot_only=True)
    c.match = dict(komis=(8.5, 9.5), visits=64, seed=0, board_size=7)
    c.runs = dict(main=dict(workdir="runs/go7", every=2), old_zoo=dict(nets=("go7-S1=zoo:go7-base-S1",)),
                  go7_gpu=dict(nets=("G46=experiments/legs/go7_gpu_run/leg/checkpoints/46",)))  # fmt: skip
    c.shipped = dict(
        main="experiments/gtp_fair_komi/results/main",
        old_zoo="experiments/gtp_fair_komi/results/old_zoo",
        go7_gpu="experiments/gtp_fair_komi/results/go7_gpu",
    )
    c.figures = dict(main=["gtp_fair_komi.png"], old_zoo=["gtp_fair_komi.png"], go7_gpu=["gtp_fair_komi.png"])
    # --config.zoo=sharp: each net of the sharp zoo (issue 64), its judge beside them
    sharp = tuple(f"zoo:go7-sharp-{r}" for r in ("S1", "S2", "S3", "W1", "W2", "W3", "J"))
    c.zoos.sharp.runs = dict(main=dict(nets=sharp, workdir=""))
    return c
