"""The papers' experiments: one science module per experiment, run from typed settings.

Each module has a ``Settings`` dataclass and a ``run(settings)``;
``python -m experiments.run --config=experiments/configs/<claim>.py``
(:mod:`experiments.run`) builds the settings of a claim's runs from its
config and runs them, with the paired, pre-declared tests of
:mod:`experiments.paired`. The modules people also run alone keep a command
line made from their settings' fields (``python experiments/<module>.py
...`` or ``python -m experiments.<module> ...``). :mod:`experiments.common`
holds what they share (the settings, nets, CSV files, figures, the error
line, the resumable runner), :mod:`experiments.matches` the match
conditions and their tables, and :mod:`experiments.readme_tables` writes
the README's marked tables from the CSVs.
"""
