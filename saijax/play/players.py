"""Players: the one thing that chooses moves in saijax (docs/design.md §8).

A :class:`Player` is a frozen bundle of what a search needs: a name, an
evaluator and its variables (a network's ``{'params', 'batch_stats'}``), the
static search settings (:class:`saijax.core.search.SearchConfig`) and the λ/μ
agent (:class:`saijax.core.search.Agent`, validated in its own constructor). The
arena, the GTP engine, gating and the experiments all play with players; a
player with another agent, visit count or network precision is a new
player (:meth:`Player.with_agent`, :meth:`Player.with_visits`,
:meth:`Player.with_precision`). A network's dense layers fix N, so a
player supports exactly one board size.

Ways to get one:

* :func:`load_player` with a checkpoint: a run's workdir, its
  ``checkpoints`` directory, or one generation's step directory
  (``<workdir>/checkpoints/12``); without a step directory the newest
  generation is used;
* :func:`saijax.zoo.load`: a net of the model zoo (the zoo builds on this
  module, not the other way round);
* :func:`random_player` (or ``load_player(None, ...)``): a randomly
  initialised net, the "random net" that anchors Elo at 0;
* :func:`uniform_player`: uniformly random legal moves, no network;
* :meth:`Player.from_network`: any flax network and its variables.

Command lines name players with one grammar (``random``, ``uniform``,
``zoo:NAME``, a checkpoint) and one set of flags: :mod:`saijax.cli.player`.

Checkpoints are read **read-only**, through :func:`checkpoints.load_network`
(never a ``checkpoints.Checkpointer``, which would delete the save in
progress of a training run that is still going), and the net is rebuilt
from the network spec its checkpoint records.
"""

from __future__ import annotations

import dataclasses
import functools
import os
from typing import Any

import jax
import jax.numpy as jnp

from saijax.core import checkpoints, features, go, networks, search
from saijax.play import control as control_lib

__all__ = ["Player", "load_player", "random_player", "root_ownership", "uniform_player"]


@functools.cache
def _network_evaluator(net: networks.SaiNet, precision: str = "float32") -> search.Evaluator:
    """One evaluator per network shape and precision, so equal networks share compiled searches."""
    return search.make_network_evaluator(net, go.GoRules(net.board_size), precision=precision)


def _default_config(value_head: str) -> search.SearchConfig:
    return search.SearchConfig(value_mode="score" if value_head == "score" else "sigmoid")


@dataclasses.dataclass(frozen=True, eq=False)
class Player:
    """Everything needed to choose moves: the one player type of saijax.

    The arena, the GTP engine, gating and the experiments all play with a
    :class:`Player`. It is frozen: a changed agent or visit count is a new
    player (:meth:`replace`, :meth:`with_agent`, :meth:`with_visits`).

    Attributes:
      name: the player's name in results tables and SGFs.
      evaluator: ``(variables, states) -> (policy_logits, alpha, beta)``.
      variables: the evaluator's parameters (``{"params", "batch_stats"}``
        for a network; None for a parameter-free evaluator).
      config: static search settings (visits, algorithm, ...).
      board_size: the board size the player supports (a network's dense
        layers fix it).
      agent: the λ/μ agent (traced, so players differing only here share
        compiled searches).
      net: the flax network behind ``evaluator``, or None.
      description: one line saying where the player came from.
      generation: the checkpoint's generation, or None.
      control: a position-control method (:class:`saijax.play.control.ControlConfig`)
        that picks the move from the search's output; None plays the search's own move.
      mixed: the mixed playing style (:class:`saijax.play.styles.MixedStyle`): a
        biased net searches the same positions and its move is played when
        this player's search finds it acceptable; None plays normally.
        An online style is a search setting instead (``config.root_prior``).
      precision: the network's compute precision in searches
        (``networks.PRECISIONS``); "" for a player without a network.
    """

    name: str
    evaluator: search.Evaluator
    variables: Any
    config: search.SearchConfig
    board_size: int
    agent: search.Agent = search.Agent()
    net: networks.SaiNet | None = None
    description: str = ""
    generation: int | None = None
    control: control_lib.ControlConfig | None = None
    mixed: Any = None
    precision: str = ""

    def __post_init__(self):
        if not isinstance(self.name, str) or not self.name.strip():
            raise ValueError(f"a player's name must be a non-empty string, got {self.name!r}")
        if not isinstance(self.config, search.SearchConfig):
            raise TypeError(f"player {self.name!r}: config must be a search.SearchConfig, got {type(self.config)}")
        if not isinstance(self.agent, search.Agent):
            raise TypeError(f"player {self.name!r}: agent must be a search.Agent, got {type(self.agent)}")
        if self.control is not None and self.mixed is not None:
            raise ValueError(f"player {self.name!r}: position control and the mixed style both pick the move; use one")
        if self.mixed is not None and self.mixed.biased.board_size != self.board_size:
            raise ValueError(f"player {self.name!r}: the mixed style's biased net plays another board size")
        if self.net is not None and self.net.board_size != self.board_size:
            raise ValueError(
                f"player {self.name!r}: the network is for {self.net.board_size}x{self.net.board_size}, "
                f"not {self.board_size}x{self.board_size}"
            )

    @classmethod
    def from_network(
        cls,
        name: str,
        net: networks.SaiNet,
        variables: Any,
        *,
        config: search.SearchConfig | None = None,
        agent: search.Agent | None = None,
        description: str = "",
        generation: int | None = None,
        precision: str = "float32",
    ) -> Player:
        """A player from a flax network and its ``{"params", "batch_stats"}``.

        Without a config, the default search settings, with
        ``value_mode="score"`` for a ``score`` head. ``precision`` is the
        net's compute precision in searches (``networks.PRECISIONS``; see
        :func:`saijax.core.search.make_network_evaluator`).
        """
        return cls(
            name=name,
            evaluator=_network_evaluator(net, precision),
            variables=variables,
            config=config or _default_config(net.value_head),
            board_size=net.board_size,
            agent=agent or search.Agent(),
            net=net,
            description=description,
            generation=generation,
            precision=precision,
        )

    @property
    def board_sizes(self) -> tuple[int, ...]:
        """The board sizes the player supports (GTP's ``boardsize``): one."""
        return (self.board_size,)

    @property
    def value_head(self) -> str:
        """The network's value head ("sai", "winrate", "score"); "sai" without a network."""
        return self.net.value_head if self.net is not None else "sai"

    def replace(self, **changes) -> Player:
        """A copy with some fields changed (validated again)."""
        return dataclasses.replace(self, **changes)

    def with_agent(
        self,
        agent: search.Agent | None = None,
        *,
        lambda_: float | None = None,
        mu: float | None = None,
        threshold: float | None = None,
        rename: bool = False,
    ) -> Player:
        """This player with another λ/μ agent (or some of its values changed).

        With ``rename``, the agent's label is appended to the name, e.g.
        ``gen12[l=1,m=0.5]``, so the two can meet in one results table.
        """
        agent = agent or self.agent
        changes = {k: v for k, v in (("lambda_", lambda_), ("mu", mu), ("threshold", threshold)) if v is not None}
        agent = agent.replace(**changes)
        name = self.name.split("[", 1)[0] + (f"[{agent.label}]" if agent.label else "") if rename else self.name
        return self.replace(agent=agent, name=name)

    def with_visits(self, visits: int) -> Player:
        """This player searching ``visits`` simulations per move."""
        return self.replace(config=dataclasses.replace(self.config, num_simulations=int(visits)))

    def with_precision(self, precision: str) -> Player:
        """This player with its network computing in ``precision`` ("float32" or
        "bfloat16", see :func:`saijax.core.search.make_network_evaluator`).

        Raises:
          ValueError: the player has no network, or an unknown precision.
        """
        if self.net is None:
            raise ValueError(f"player {self.name!r} has no network whose precision could change")
        return self.replace(evaluator=_network_evaluator(self.net, precision), precision=precision)

    def describe(self) -> str:
        """One line: name, search and agent."""
        cfg, ag = self.config, self.agent
        extras = ""
        if self.control is not None:
            extras += f", position control {self.control.method}"
        if cfg.root_prior is not None:
            extras += f", {getattr(cfg.root_prior, 'label', 'root prior')} style"
        if self.mixed is not None:
            mixed = self.mixed
            extras += f", mixed style with {mixed.biased.name} (w_diff {mixed.w_diff:g}, p_th {mixed.p_th:g})"
        return (
            f"{self.name}: {cfg.algorithm} {cfg.num_simulations} visits, "
            f"lambda={ag.lambda_:g} mu={ag.mu:g} threshold={ag.threshold:g}{extras}"
        )


def random_player(
    board_size: int,
    *,
    blocks: int = 2,
    filters: int = 16,
    value_head: str = "sai",
    seed: int = 0,
    name: str = "random",
    config: search.SearchConfig | None = None,
    agent: search.Agent | None = None,
) -> Player:
    """A randomly initialised network: the "random net" that anchors Elo at 0."""
    net = networks.make_network(board_size, blocks=blocks, filters=filters, value_head=value_head)
    # Jitted: one compile is much faster than flax's op-by-op init.
    variables = jax.jit(functools.partial(networks.init_network, net))(jax.random.PRNGKey(seed))
    return Player.from_network(
        name,
        net,
        variables,
        config=config,
        agent=agent,
        description=f"random {value_head} net {blocks}x{filters} for {board_size}x{board_size}, seed {seed}",
    )


def _uniform_evaluate(params, states):
    del params
    zeros = jnp.zeros(states.board.shape[0], jnp.float32)
    return jnp.zeros(states.legal.shape, jnp.float32), zeros, jnp.ones_like(zeros)


def uniform_player(board_size: int, name: str = "uniform") -> Player:
    """A player that picks uniformly among legal moves (pass included).

    One Gumbel simulation with a flat prior: the move is the argmax of i.i.d.
    Gumbel noise over the legal actions, i.e. a uniform draw. Its value head
    says "even" (α = 0), so it never resigns.
    """
    rules = go.GoRules(board_size)
    config = search.SearchConfig(num_simulations=1, max_num_considered_actions=rules.num_actions)
    return Player(
        name=name,
        evaluator=_uniform_evaluate,
        variables=None,
        config=config,
        board_size=board_size,
        description="uniformly random legal moves",
    )


def load_player(
    checkpoint: str | os.PathLike | None,
    *,
    board_size: int | None = None,
    blocks: int = 2,
    filters: int = 16,
    value_head: str = "sai",
    seed: int = 0,
    name: str | None = None,
    config: search.SearchConfig | None = None,
    agent: search.Agent | None = None,
) -> Player:
    """A checkpointed network, or a random one.

    Args:
      checkpoint: None for a random net; else a workdir, its ``checkpoints``
        directory, or a step directory ``<workdir>/checkpoints/<generation>``.
        (``zoo:<name>`` is :func:`saijax.cli.player.load_player`'s, or
        :func:`saijax.zoo.load`.)
      board_size: N of a random net (required then). With a checkpoint it is
        optional and, if given, must match the checkpoint's size.
      blocks, filters, value_head: shape of a random net; a checkpoint's own
        metadata decides its shape.
      seed: PRNG seed of a random net's initialisation.
      name: the player's name (default ``random-<blocks>x<filters>`` or
        ``gen<generation>``).
      config, agent: the player's search settings and λ/μ agent (default:
        :class:`saijax.core.search.SearchConfig` for the net's head, λ = μ = 0).

    Returns:
      The :class:`Player`.

    Raises:
      ValueError: no ``board_size`` for a random net, a bad net shape, a
        checkpoint for another board size, or a ``zoo:`` name.
      FileNotFoundError: the path does not exist or holds no checkpoint.
      checkpoints.CheckpointError: the checkpoint is corrupt or unreadable
        (the message names its directory).
    """
    if checkpoint is None:
        if board_size is None:
            raise ValueError("load_player: a random net needs board_size")
        return random_player(
            board_size,
            blocks=blocks,
            filters=filters,
            value_head=value_head,
            seed=seed,
            name=name or f"random-{blocks}x{filters}",
            config=config,
            agent=agent,
        )

    if isinstance(checkpoint, str) and checkpoint.startswith("zoo:"):
        raise ValueError(f"{checkpoint!r} is a zoo net: load it with saijax.cli.player.load_player or saijax.zoo.load")

    loaded = checkpoints.load_network(checkpoint)
    spec = loaded.spec
    if board_size is not None and int(board_size) != spec.board_size:
        raise ValueError(
            f"checkpoint {loaded.directory} is for {spec.board_size}x{spec.board_size}, "
            f"not the requested {board_size}x{board_size}"
        )
    return Player.from_network(
        name or f"gen{loaded.generation}",
        spec.build(),
        loaded.variables,
        config=config,
        agent=agent,
        description=(
            f"generation {loaded.generation}, {spec.blocks}x{spec.filters} {spec.value_head} net "
            f"(beta_scale {spec.beta_scale:g}) for {spec.board_size}x{spec.board_size}, from {loaded.directory}"
        ),
        generation=loaded.generation,
    )


@functools.cache
def _ownership_fn(net: networks.SaiNet, rules: go.GoRules):
    """Jitted ``(variables, state) -> [N*N] ownership`` of one position (one compile per net and rules)."""

    def ownership(variables, state):
        x = features.network_inputs(rules, jax.tree_util.tree_map(lambda a: a[None], state), net.value_head)
        return net.apply(variables, x, train=False).ownership[0]

    return jax.jit(ownership)


def root_ownership(player: Player, rules: go.GoRules, state: go.GoState) -> list[float] | None:
    """The net's predicted final ownership of a position, or None without an ownership head.

    Returns N*N floats in [-1, 1], row-major from the top-left point (the
    action order ``row * N + col``, row 0 the top line), from the view of the
    position's player to move (+1: that player's), as KataGo's
    ``kata-analyze ... ownership true`` reports them.
    """
    net = player.net
    if net is None or not getattr(net, "ownership_head", False) or player.variables is None:
        return None
    return [float(v) for v in jax.device_get(_ownership_fn(net, rules)(player.variables, state))]
