"""SAI's 7×7 end state and Fig. 2: the `configs/go7.py` run ([SAI-7x7], [SAI-9x9] Fig. 2):
experiments/elo_curve/README.md.
"""
