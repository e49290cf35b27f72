"""The SAI papers' explanatory sigmoid figures: [SAI-ext] Fig. 1 and [SAI-9x9] Fig. 1.

    python -m experiments.run --config=experiments/sigmoid_figures/config.py
    python -m experiments.run --config=experiments/sigmoid_figures/config.py --config.redraw=True  # draw again

``experiments/sigmoid_figures/sigmoid_figures.py`` with its settings (``shipped``:
``sigmoid_figures/results/main/``): example positions at komi 7.5, and the
ECAI figure's agent at λ = 0.8, μ = 0.3. Every number comes from
``saijax.core.sigmoid``; nothing is played or sampled, so ``redraw`` and
``play`` both draw the figures again (``play`` into ``outdir``), in
seconds. The figures illustrate the model; there is nothing to test.
"""

from experiments.lib import claims


def get_config():
    c = claims.claim_config("sigmoid_figures")
    c.match = {}
    c.runs = dict(main=dict(komi=7.5, lambda_=0.8, mu=0.3))
    c.shipped = dict(main="experiments/sigmoid_figures/results/main")
    c.figures = dict(main=["fig1_sigmoids.png", "ecai_fig1_interval_average.png"])
    return c
