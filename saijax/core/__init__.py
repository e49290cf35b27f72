"""The core layer: what a Go program is made of, and nothing about matches or training.

Rules (:mod:`~saijax.core.go`), the network's input planes
(:mod:`~saijax.core.features`), the network (:mod:`~saijax.core.networks`),
the sigmoid and λ/μ maths (:mod:`~saijax.core.sigmoid`,
:mod:`~saijax.core.agents`), the tree and the batched search
(:mod:`~saijax.core.mcts`, :mod:`~saijax.core.search`), checkpoints, SGF,
and the elementary checks every validator shares. It imports no other layer
(README, "How the pieces fit").
"""
