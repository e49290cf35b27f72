"""§4.4: SAI against a winrate-head net ([SAI-9x9] §4.4): experiments/suboptimal_moves/README.md."""
