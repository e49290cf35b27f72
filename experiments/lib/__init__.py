"""The code the claims share (experiments/README.md): no module here imports a claim's.

:mod:`common` (settings, nets, CSV files, figures, the error line, the resumable runner), :mod:`matches` (match
conditions played in lockstep and their tables), :mod:`paired` (the paired, pre-declared tests), :mod:`stat_tables`
(two-sample tests and their corrections), :mod:`curves` (training runs' learning curves), :mod:`claims` (a claim's
config and its runs' settings), :mod:`readme_tables` (the READMEs' generated tables).
"""
