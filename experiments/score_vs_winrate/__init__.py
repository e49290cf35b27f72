"""Score vs. winrate: Proposition 1 and Figs. 3–4 ([SvW] §IV): experiments/score_vs_winrate/README.md."""
