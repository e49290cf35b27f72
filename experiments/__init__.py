"""The papers' experiments: one script per experiment, runnable alone.

Each is ``python experiments/<script>.py ...`` or ``python -m
experiments.<script> ...``; :mod:`experiments.common` holds what they share
(flags, nets, CSV files, figures, the error line, the resumable runner) and
:mod:`experiments.matches` the match conditions and their tables.
"""
