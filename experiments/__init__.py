"""The papers' experiments: one script per experiment, runnable alone.

Each is ``python experiments/<script>.py ...`` or ``python -m
experiments.<script> ...``; :mod:`experiments.common` holds what they share
(flags, nets, CSV files, figures, the error line, the resumable runner) and
:mod:`experiments.matches` the match conditions and their tables.

Three claims (Figs. 5–7 and §4.4) also run from a config,
``python -m experiments.run --config=experiments/configs/<claim>.py``
(:mod:`experiments.run`), with the paired, pre-declared tests of
:mod:`experiments.paired`; :mod:`experiments.readme_tables` writes the
README's marked tables from the CSVs.
"""
