"""The papers' experiments: one folder per claim, run by one runner from its config.

``python -m experiments.run --config=experiments/<claim>/config.py``
(:mod:`experiments.run`) builds the settings of a claim's runs from its
config and runs its science module (``experiments/<claim>/<module>.py``: a
``Settings`` dataclass and a ``run(settings)``), with the paired,
pre-declared tests of :mod:`experiments.lib.paired`. What the claims share
is in :mod:`experiments.lib`; no claim imports another's module. The long
runs' legs are in ``experiments/legs/``. experiments/README.md lists the
claims, their verdicts and their commands.
"""
