"""Fig. 7: recovery from severe disadvantage ([SAI-9x9] §4.3): experiments/recovery/README.md."""
