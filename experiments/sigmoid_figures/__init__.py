"""The sigmoid figures of [SAI-ext] and [SAI-9x9] (Fig. 1 of each): experiments/sigmoid_figures/README.md."""
