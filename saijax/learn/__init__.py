"""The learn layer: the main job, SAI's self-play and training loop.

The config (:mod:`~saijax.learn.config`), read once into typed settings
(:mod:`~saijax.learn.run_setup`); self-play, replay, losses and the train
step; the run and its phases (:mod:`~saijax.learn.pipeline`,
:mod:`~saijax.learn.run_selfplay`, :mod:`~saijax.learn.gating`,
:mod:`~saijax.learn.run_metrics`, :mod:`~saijax.learn.legs`); several hosts.
It imports core, analysis, play and zoo, and no GTP module (README, "How the
pieces fit").
"""
