"""SAI from random weights: `configs/go7_sharp.py`'s two seeds against SAI's 7×7 end state (issue 63).

    python -m experiments.run --config=experiments/sharp_recipe/config.py
    python -m experiments.run --config=experiments/sharp_recipe/config.py --config.play=True  # from live workdirs

``experiments/sharp_recipe/recipe.py`` over each seed's newest shipped leg
(``experiments/legs/sharp_s0/leg``, ``sharp_s1/leg``: their whole
``metrics.jsonl`` from generation 0): the learning curves, the targets
table and the timing table, and the figure. Nothing is played: ``play``
and ``redraw`` both compute the tables again (``play`` into ``outdir``;
``--config.runs.main.runs='("runs/sharp_s0","runs/sharp_s1")'`` reads live
workdirs instead). The GTP and GNU Go end checks join from
``results/main/end_checks.csv`` once measured. There is no test family: the claim is that
each seed meets every target, a run being the unit.
"""

from experiments.lib import claims


def get_config():
    c = claims.claim_config("sharp_recipe", "recipe")
    c.match = {}
    c.runs = dict(main=dict(runs=("experiments/legs/sharp_s0/leg", "experiments/legs/sharp_s1/leg"),
                            end_checks="experiments/sharp_recipe/results/main/end_checks.csv"))  # fmt: skip
    c.shipped = dict(main="experiments/sharp_recipe/results/main")
    c.figures = dict(main=["sharp_recipe.png"])
    return c
