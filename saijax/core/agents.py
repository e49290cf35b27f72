"""SAI's λ/μ agents (docs/design.md §4): which bonus interval a search
averages each node's win probability over.

An :class:`Agent` holds λ, μ and the variable agent's threshold, validated
in its constructor (the one place saijax checks 1 ≥ λ ≥ μ ≥ 0); a search
takes it as :class:`AgentParams`, traced values, so changing the agent never
recompiles. ``saijax.core.search`` re-exports both; ``sigmoid.agent_interval``
turns them into the interval [x_μ, x_λ] at each root.
"""

from __future__ import annotations

import dataclasses
import math

import chex
import jax.numpy as jnp
import numpy as np
from flax import struct

__all__ = ["Agent", "AgentParams"]


@dataclasses.dataclass(frozen=True)
class Agent:
    """SAI's λ/μ agent (docs/design.md §4), validated here and nowhere else.

    Attributes:
      lambda_: upper end θ = λ of the bonus interval [x_μ, x_λ].
      mu: lower end θ = μ; 1 ≥ λ ≥ μ ≥ 0. λ = μ = 0 is the plain win rate.
      threshold: the variable agent applies (λ, μ) only while the root's win
        rate τ_s(k_s) is at least this, and (0, 0) below it; 0 = always.
    """

    lambda_: float = 0.0
    mu: float = 0.0
    threshold: float = 0.0

    def __post_init__(self):
        for name in ("lambda_", "mu", "threshold"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
                raise ValueError(f"agent {name} must be a number, got {value!r}")
            if not math.isfinite(float(value)):
                raise ValueError(f"agent {name} must be finite, got {value!r}")
            object.__setattr__(self, name, float(value))
        if not 0.0 <= self.mu <= self.lambda_ <= 1.0:
            raise ValueError(f"the λ/μ agent needs 1 >= lambda >= mu >= 0, got lambda={self.lambda_:g}, mu={self.mu:g}")
        if not 0.0 <= self.threshold <= 1.0:
            raise ValueError(f"agent threshold must be in [0, 1], got {self.threshold:g}")

    def replace(self, **changes) -> Agent:
        """A copy with some values changed (validated again)."""
        return dataclasses.replace(self, **changes)

    def params(self) -> AgentParams:
        """The agent as traced scalars for :func:`run_search`."""
        return AgentParams(jnp.float32(self.lambda_), jnp.float32(self.mu), jnp.float32(self.threshold))

    @property
    def label(self) -> str:
        """A short tag for names and tables: "" for (0, 0, 0), else e.g. "l=1,m=0.5,t=0.7"."""
        if self.lambda_ == 0 and self.mu == 0 and self.threshold == 0:
            return ""
        label = f"l={self.lambda_:g},m={self.mu:g}"
        return label + (f",t={self.threshold:g}" if self.threshold else "")


@struct.dataclass
class AgentParams:
    """The λ/μ agent as traced values (scalars, or one per game), so changing it does not recompile."""

    lambda_: chex.Array  # [] or [B]
    mu: chex.Array  # [] or [B]
    threshold: chex.Array  # [] or [B]
