"""The first round re-analysed: the shipped first-round tables with two-sample tests, corrections and power.

    python -m experiments.run --config=experiments/reanalysis/config.py                    # checks the folder
    python -m experiments.run --config=experiments/reanalysis/config.py --config.redraw=True  # rewrites its CSVs

``experiments/reanalysis/reanalysis.py`` reads the first round's tables from
the claims' ``results/`` folders (nothing is played; it runs in seconds) and
writes one CSV per table into ``results/``. The README says what it changes
against each first-round verdict.
"""

from experiments.lib import claims


def get_config():
    c = claims.claim_config("reanalysis")
    c.match = dict(results_dir="experiments")
    c.runs = dict(main=dict())
    c.shipped = dict(main="experiments/reanalysis/results")
    return c
