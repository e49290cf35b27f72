"""Fig. 3: handicap by komi ([SAI-9x9] §4.1): experiments/handicap/README.md."""
