"""Figs. 5, 6 and Table 1: the λ/μ agents ([SAI-9x9] §4.2): experiments/score_targeting/README.md."""
