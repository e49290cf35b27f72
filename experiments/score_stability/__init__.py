"""§3.6: the score estimate's stability ([SAI-9x9] §3.6): experiments/score_stability/README.md."""
