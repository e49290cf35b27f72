"""The SAI papers' explanatory sigmoid figures: [SAI-ext] Fig. 1 and [SAI-9x9] Fig. 1.

    python -m experiments.run --config=experiments/configs/sigmoid_figures.py
    python -m experiments.run --config=experiments/configs/sigmoid_figures.py --config.redraw=True  # draw again

``experiments/sigmoid_figures.py`` with its settings (``shipped``:
``results/sigmoid_figures/main/``): example positions at komi 7.5, and the
ECAI figure's agent at λ = 0.8, μ = 0.3. Every number comes from
``saijax.core.sigmoid``; nothing is played or sampled, so ``redraw`` and
``play`` both draw the figures again (``play`` into ``outdir``), in
seconds. The figures illustrate the model; there is nothing to test.
"""

from experiments import run


def get_config():
    c = run.claim_config("sigmoid_figures")
    c.match = {}
    c.runs = dict(main=dict(komi=7.5, lambda_=0.8, mu=0.3))
    c.shipped = dict(main="experiments/results/sigmoid_figures/main")
    c.figures = dict(main=["fig1_sigmoids.png", "ecai_fig1_interval_average.png"])
    return c
