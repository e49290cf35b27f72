"""Equal-compute baselines on 5×5: SAI, SAI without branching, AlphaZero, Leela Zero Score:
experiments/baselines/README.md.
"""
