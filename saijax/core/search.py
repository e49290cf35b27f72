"""Batched MCTS with SAI's λ/μ agents, on top of mctx (docs/design.md §4, §5).

The search is mctx's algorithm (Gumbel MuZero or PUCT action selection on an
``mctx.Tree``, run by :func:`saijax.core.mcts.search`, whose backward pass is one
batched update along each simulation's path) with the Go state, without its
superko record, plus the node's (α, β) as the embedding. What makes it SAI's
is the value given to every node:

* At the root, the evaluator's (α_s, β_s) and the real signed komi k_s give
  the bonus interval [x_μ, x_λ] (``sigmoid.agent_interval``; the variable
  agent falls back to (0, 0) when τ_s(k_s) < threshold).
* Every node r of the tree is valued by ν_r(s), the root player's win
  probability under r's sigmoid averaged over that same interval, then
  turned into mctx's [-1, 1] value from r's player's view
  (``sigmoid.leaf_value``). Anchoring at the root keeps backed-up values
  comparable.
* Terminal nodes (two passes, move cap) use α = their Tromp–Taylor margin for
  the player to move, without komi, and β = ``beta_terminal``.
* With ``value_mode='score'`` (the LZS baseline) the value is the predicted
  final margin, komi included, over N², clipped to [-1, 1].

Evaluators are any ``(params, states) -> (policy_logits [B, A], alpha [B],
beta [B])`` over a batch of :class:`saijax.core.go.GoState`. Baseline heads plug
in through :func:`make_network_evaluator`, which converts their outputs into
(α, β) form.

The λ/μ agent is an :class:`Agent` (`saijax.core.agents`, re-exported here;
validated in its constructor, the one place saijax checks 1 ≥ λ ≥ μ ≥ 0),
passed to each search as traced values (:class:`AgentParams`).
A search's :class:`SearchOutput` is also what every caller reads it
through: ``best_value`` feeds :func:`should_resign`, the resign rule that
self-play, the arena and GTP share; ``pv`` and ``child_pv`` come from one
principal-variation walk on device; :func:`root_moves` turns one game's
output into the per-move list that GTP's analysis prints.

Illegal moves get prior logit ``finfo.min`` at every node; if PUCT still
selects one inside the tree (possible when every legal child looks bad), the
transition is a terminal loss for the mover, so it is never preferred.

Superko in the tree: a game's superko record (``GoState.hash_history``, one
hash per position played) is stored once, at the root, not in every node.
Nodes hold :func:`saijax.core.go.without_history` states, and expanding a node
steps its parent with ``go.step(..., seen=...)``, where a position counts as
seen if it is in the root's record or is the position of a node on the path
from the root to the parent (the simulation's descent,
:class:`saijax.core.mcts.Path`, and the nodes' hashes). That is exactly the record
the game would have at that node, so a move is legal in the tree exactly when
it would be legal in the game.

Memory: the tree stores, per node, the embedding (the ``GoState`` without
its record, plus α, β) and mctx's per-child arrays. With P = N² and A = P + 1,
the state is 16·P + 24 bytes: 1.3 kB on 9×9, 5.8 kB on 19×19 (the record
would add 8·H, H ≈ 2P hash slots: 1.4 and 5.8 kB). mctx's six [A] child
arrays take 24·A bytes: 2.0 and 8.7 kB. A 19×19 search with 800 simulations
at batch 256 therefore stores about 205k nodes × 14.5 kB ≈ 3 GB.
`benchmarks/search.py` prints these figures from the tree's shapes.
"""

from __future__ import annotations

import dataclasses
import functools
import math
from collections.abc import Callable
from typing import Any

import chex
import jax
import jax.numpy as jnp
import mctx
import numpy as np
from flax import struct

from saijax.core import features, go, mcts, networks, sigmoid
from saijax.core.agents import Agent, AgentParams

__all__ = [
    "ALGORITHMS",
    "VALUE_MODES",
    "SearchConfig",
    "Agent",
    "AgentParams",
    "SearchOutput",
    "Evaluator",
    "make_network_evaluator",
    "run_search",
    "position_keys",
    "make_search_fn",
    "RootMove",
    "root_moves",
    "should_resign",
    "default_resign_after",
]

Evaluator = Callable[[Any, go.GoState], tuple[chex.Array, chex.Array, chex.Array]]
ALGORITHMS = ("gumbel", "puct")
ROOT_PASS_RULES = ("search", "leela")
VALUE_MODES = ("sigmoid", "score")
WALKS = ("auto", *mcts.WALKS)


def tree_walk(config: SearchConfig) -> str:
    """``config.walk`` with "auto" resolved for JAX's default backend (see :class:`SearchConfig`)."""
    if config.walk != "auto":
        return config.walk
    return "path" if jax.default_backend() in ("gpu", "cuda", "rocm", "tpu") else "parents"


@dataclasses.dataclass(frozen=True)
class SearchConfig:
    """Static search settings (hashable, so usable as a jit static argument).

    Attributes:
      algorithm: "gumbel" (``mctx.gumbel_muzero_policy``) or "puct"
        (``mctx.muzero_policy``).
      num_simulations: simulations per search.
      max_num_considered_actions: Gumbel root width.
      gumbel_scale: Gumbel noise scale (0 = deterministic Gumbel search).
      c_puct: PUCT exploration constant (mctx ``pb_c_init``; ``pb_c_base`` is
        set so large that it stays constant, as in SAI/Leela Zero).
      dirichlet_alpha: root noise concentration; 0 means 0.03·361/N².
      dirichlet_fraction: root noise weight for PUCT (0 disables noise).
      temperature: PUCT action choice ∝ visits^(1/T); 0 = most visited.
      fpu_reduction: PUCT first-play urgency, Leela Zero style: an unvisited
        child is valued at the parent's win rate minus
        fpu_reduction·sqrt(prior mass of the visited children).
      noisy_root_fpu_reduction: PUCT only: the FPU reduction at a root with
        Dirichlet noise (self-play). SAI and Leela Zero use 0 there: "do not
        lower the expected eval for root moves that are likely not the best
        if we have introduced noise there exactly to explore more"; with a
        reduction, a few simulations all go to the prior's favourite and the
        policy target sharpens whatever the net already prefers.
      root_pass_rule: when the root may pass: "search" (always, as any
        move: SAI's and Leela Zero's self-play, ``--dumbpass``) or "leela"
        (only where :func:`leela_pass_allowed` allows it; elsewhere the pass
        is not a root child, so it gets no visits and no policy target).
      pass_answer_prior: PUCT only: at a node whose last move was a pass,
        the answering pass's prior is raised by this (SAI's engine: 0.2,
        "Fix for 'dumbpass'", 2019), so the search soon sees that a first
        pass can end the game; 0 is mctx's plain PUCT.
      beta_terminal: β used for terminal positions.
      value_mode: "sigmoid" (SAI, and the winrate baseline) or "score" (LZS).
      pv_length: length of the principal variations returned (0: none, the
        default: only analysis reads them, e.g. GTP asks for 32).
      walk: how a simulation finds the ancestors of the node it expands, for
        the superko check and the backward pass (``saijax.core.mcts``): "parents"
        (loops up the parent links, one level an iteration: the least work,
        best on a CPU), "path" (the descent's record: no loop, a fixed
        amount of work a simulation, for a GPU or TPU, where each loop
        iteration costs kernel launches and a wait), or "auto" (the default:
        "path" when JAX's default backend is a GPU or TPU, else "parents").
        The trees, and so the games, are the same either way.
      root_prior: None, or a hashable object whose ``weights(rules, states)``
        gives [B, A] positive factors multiplied into the root's prior (the
        online playing styles, :class:`saijax.play.styles.OnlineStyle`); the
        tree below the root and ``SearchOutput.child_prior`` keep the net's
        own priors.

    The λ/μ agent is not a search setting: it is an :class:`Agent`, passed to
    each search as traced values, so changing it never recompiles.
    """

    algorithm: str = "gumbel"
    num_simulations: int = 32
    max_num_considered_actions: int = 16
    gumbel_scale: float = 1.0
    c_puct: float = 0.8
    dirichlet_alpha: float = 0.0
    dirichlet_fraction: float = 0.0
    temperature: float = 0.0
    fpu_reduction: float = 0.25
    noisy_root_fpu_reduction: float = 0.0
    pass_answer_prior: float = 0.0
    root_pass_rule: str = "search"
    beta_terminal: float = 10.0
    value_mode: str = "sigmoid"
    pv_length: int = 0
    walk: str = "auto"
    root_prior: Any = None

    def __post_init__(self):
        if self.algorithm not in ALGORITHMS:
            raise ValueError(f"search.algorithm must be one of {ALGORITHMS}, got {self.algorithm!r}")
        if self.value_mode not in VALUE_MODES:
            raise ValueError(f"search.value_mode must be one of {VALUE_MODES}, got {self.value_mode!r}")
        if int(self.num_simulations) < 1:
            raise ValueError(f"search.num_simulations must be >= 1, got {self.num_simulations}")
        if int(self.pv_length) < 0:
            raise ValueError(f"search.pv_length must be >= 0, got {self.pv_length}")
        if self.walk not in WALKS:
            raise ValueError(f"search.walk must be one of {WALKS}, got {self.walk!r}")
        if self.root_pass_rule not in ROOT_PASS_RULES:
            raise ValueError(f"search.root_pass_rule must be one of {ROOT_PASS_RULES}, got {self.root_pass_rule!r}")
        if not 0.0 <= self.pass_answer_prior <= 1.0:
            raise ValueError(f"search.pass_answer_prior must be in [0, 1], got {self.pass_answer_prior}")
        if self.beta_terminal <= 0:
            raise ValueError(f"search.beta_terminal must be > 0, got {self.beta_terminal}")
        if self.root_prior is not None and not callable(getattr(self.root_prior, "weights", None)):
            raise ValueError(f"search.root_prior must have a weights(rules, states) method, got {self.root_prior!r}")


@struct.dataclass
class _Embedding:
    state: go.GoState  # [B, ...] without its superko record (go.without_history)
    alpha: chex.Array  # [B] the node's α (TT margin at terminal nodes)
    beta: chex.Array  # [B]


@struct.dataclass
class _RootInfo:
    x_lambda: chex.Array  # [B]
    x_mu: chex.Array  # [B]
    player: chex.Array  # [B] int8, the root's player to move
    komi: chex.Array  # [B], black's komi
    history: chex.Array  # [B, H, 2] uint32, the roots' superko records (GoState.hash_history)


@struct.dataclass
class SearchOutput:
    """Per-game search results (B games, A = N*N + 1 actions, values in [0, 1]).

    "Agent value" is the root player's λ/μ-averaged win probability ν
    (docs/design.md §4); with λ = μ = 0 it is the plain win probability.
    """

    action: chex.Array  # [B] int32, the move chosen by the search
    visit_counts: chex.Array  # [B, A] int32, root child visits
    policy: chex.Array  # [B, A] float32, improved policy (the policy target)
    root_alpha: chex.Array  # [B] α of the root evaluation (lead before komi)
    root_beta: chex.Array  # [B] β of the root evaluation
    root_winrate: chex.Array  # [B] τ_s(k_s): root win probability at the real komi
    root_value: chex.Array  # [B] backed-up agent value of the root
    x_lambda: chex.Array  # [B] the agent interval used (bonus for the root player)
    x_mu: chex.Array  # [B]
    child_visits: chex.Array  # [B, A] int32 (same as visit_counts)
    child_q: chex.Array  # [B, A] agent value of each child for the root player; nan if unvisited
    child_prior: chex.Array  # [B, A] prior probability (illegal = 0)
    child_score_lead: chex.Array  # [B, A] root player's α + k from the child's evaluation; nan if unvisited
    child_beta: chex.Array  # [B, A] β of the child's evaluation; nan if unvisited
    child_pv: chex.Array  # [B, A, pv_length] int32, each child's line (the child's move first); -1 pads
    pv: chex.Array  # [B, pv_length] int32, most-visited line from the root; -1 pads
    best_value: chex.Array  # [B] max child_q over visited children (root_value if none): the resign test's input
    score_estimate: chex.Array  # [B] median root-player margin (α + k) over visited nodes
    child_pv_visits: chex.Array | None = None  # [B, A, pv_length] int32, visits of each child_pv node; 0 pads


# ---------------------------------------------------------------------------
# Evaluators.


def make_network_evaluator(net: networks.SaiNet, rules: go.GoRules, *, precision: str = "float32") -> Evaluator:
    """Wraps a network (eval mode) as an evaluator over ``{"params", "batch_stats"}``.

    Baseline heads are expressed as (α, β): for ``winrate``, β = 1 and
    α = logit(p) − k_s, so τ(k_s) is the net's win probability p; for
    ``score``, β = 1 and α = predicted margin − k_s, so α + k_s is the net's
    predicted final margin.

    Args:
      net: the network.
      rules: the rules of its board size.
      precision: one of ``networks.PRECISIONS``. "bfloat16" runs the trunk and
        hidden layers in bfloat16 (``SaiNet.dtype``; the float32 parameters
        are cast as they are used), which is what a GPU or TPU runs fastest;
        the output layers compute in float32 and the logits, α and β come
        back as float32 either way.

    Raises:
      ValueError: an unknown precision.
    """
    net = net.clone(dtype=networks.compute_dtype(precision))
    head = net.value_head

    def evaluate(variables, states):
        x = features.network_inputs(rules, states, head)
        out = net.apply(variables, x, train=False)
        if head == "sai":
            return out.policy_logits, out.alpha, out.beta
        k = sigmoid.signed_komi(states.komi, states.to_play.astype(jnp.float32))
        if head == "winrate":
            p = jnp.clip((out.value + 1.0) / 2.0, 1e-6, 1.0 - 1e-6)
            return out.policy_logits, jnp.log(p) - jnp.log1p(-p) - k, jnp.ones_like(p)
        return out.policy_logits, out.alpha - k, jnp.ones_like(out.alpha)

    return evaluate


# ---------------------------------------------------------------------------
# The search.


def _node_value(config: SearchConfig, rules: go.GoRules, alpha, beta, states, root: _RootInfo):
    """mctx value in [-1, 1] of each node, from its player-to-move's view."""
    if config.value_mode == "score":
        k = sigmoid.signed_komi(states.komi, states.to_play.astype(jnp.float32))
        return jnp.clip((alpha + k) / rules.num_points, -1.0, 1.0)
    same = states.to_play == root.player
    return sigmoid.leaf_value(alpha, beta, same, root.x_lambda, root.x_mu)


def _terminal_margin(rules: go.GoRules, states, terminal):
    """Tromp–Taylor margin for the player to move, without komi, where ``terminal`` [B] (elsewhere 0).

    The other games' boards are scored as a board of black stones: under
    ``vmap`` the scoring's flood fill runs until every game's has stopped,
    and a board with no empty point stops at once, so the loop runs as long
    as the ended games need (late positions, small empty regions), not as
    long as a mid-game position elsewhere in the batch would.
    """
    board = jnp.where(terminal[:, None], states.board, jnp.int8(1))
    score = jax.vmap(lambda s: go.area_score(rules, s))(states.replace(board=board))
    return jnp.where(terminal, score * states.to_play.astype(jnp.float32), 0.0)


def _masked_logits(logits, legal):
    return jnp.where(legal, logits, jnp.finfo(logits.dtype).min)


def _step_in_tree(rules: go.GoRules, state, action, root_history, hashes, parents, path: mcts.Path):
    """``go.step`` from one game's tree node, the last of ``path`` (its state has no record).

    The superko record is the root's ``root_history`` [H, 2] plus the hashes
    (``hashes`` [M, 2], the tree's) of the nodes from this one up to the
    root, the root excluded (its own hash is in its record): with a full
    path (``walk="path"``), the path's nodes, compared in one step; with a
    path of one entry, a walk up the parent links (``parents`` [M]).
    """
    if path.nodes.shape[0] > 1:

        def seen(candidates):
            slot = jnp.arange(path.nodes.shape[0])
            below_root = (slot >= 1) & (slot < path.length)
            on_path = hashes[jnp.where(below_root, path.nodes, 0)]  # [D, 2]
            hit = (candidates[:, None, 0] == on_path[None, :, 0]) & (candidates[:, None, 1] == on_path[None, :, 1])
            return go.in_history(root_history, candidates) | jnp.any(hit & below_root[None, :], axis=1)

    else:

        def seen(candidates):
            def up(carry):
                at, hit = carry
                h = hashes[at]
                return parents[at], hit | ((candidates[:, 0] == h[0]) & (candidates[:, 1] == h[1]))

            start = (path.nodes[0], go.in_history(root_history, candidates))
            return jax.lax.while_loop(lambda c: c[0] != mctx.Tree.ROOT_INDEX, up, start)[1]

    return go.step(rules, state, action, seen=seen)


def _make_recurrent_fn(evaluator: Evaluator, rules: go.GoRules, config: SearchConfig):
    vstep = jax.vmap(functools.partial(_step_in_tree, rules))

    def recurrent_fn(params, rng_key, action, embedding: _Embedding, tree: mctx.Tree, path: mcts.Path):
        del rng_key
        net_params, root = params
        states = embedding.state
        was_legal = jnp.take_along_axis(states.legal, action[:, None], axis=1)[:, 0]
        nxt = vstep(states, action, root.history, tree.embeddings.state.hash, tree.parents, path)
        logits, alpha, beta = evaluator(net_params, nxt)
        term = nxt.terminated
        # Scoring is a flood fill: skip it when no leaf in the batch has ended.
        margin = jax.lax.cond(
            jnp.any(term), lambda: _terminal_margin(rules, nxt, term), lambda: jnp.zeros(term.shape, jnp.float32)
        )
        alpha = jnp.where(term, margin, alpha)
        beta = jnp.where(term, config.beta_terminal, beta)
        value = _node_value(config, rules, alpha, beta, nxt, root)
        reward = jnp.where(term, -value, 0.0)
        discount = jnp.where(term, 0.0, -1.0)
        # An illegal move (only PUCT can pick one in-tree) loses for the mover.
        reward = jnp.where(was_legal, reward, -1.0)
        discount = jnp.where(was_legal, discount, 0.0)
        value = jnp.where(discount == 0.0, 0.0, value)
        out = mctx.RecurrentFnOutput(
            reward=reward.astype(jnp.float32),
            discount=discount.astype(jnp.float32),
            prior_logits=_masked_logits(logits.astype(jnp.float32), nxt.legal),
            value=value.astype(jnp.float32),
        )
        return out, _Embedding(nxt, alpha.astype(jnp.float32), beta.astype(jnp.float32))

    return recurrent_fn


def _qtransform_fpu(tree: mctx.Tree, node_index, *, fpu_reduction: float):
    """PUCT values on Leela Zero's [0, 1] scale with FPU reduction.

    mctx's default (min-max normalisation, unvisited = minimum) makes PUCT
    greedy on the first child that beats its parent when the prior is flat;
    SAI/Leela Zero instead value unvisited children a little below the parent.
    """
    q = tree.qvalues(node_index)
    visits = tree.children_visits[node_index]
    prior = jax.nn.softmax(tree.children_prior_logits[node_index])
    visited_mass = jnp.sum(jnp.where(visits > 0, prior, 0.0))
    parent = (tree.node_values[node_index] + 1.0) / 2.0
    fpu = parent - fpu_reduction * jnp.sqrt(visited_mass)
    return jnp.where(visits > 0, (q + 1.0) / 2.0, fpu)


def _with_pass_answer(qtransform, tree: mctx.Tree, node_index, *, bonus, pass_action, pb_c_init, pb_c_base):
    """``qtransform`` plus SAI's answer to a pass: at a node whose last move
    was a pass, the pass child's PUCT prior is raised by ``bonus`` (SAI's
    engine: 0.2, added to the normalised policy, the others unchanged), so a
    search that tries a first pass soon tries the answering pass, which ends
    the game with its exact Tromp–Taylor result (docs/design.md §5).

    Written as the PUCT prior term's increase, c·√N·bonus/(1 + n_pass),
    added to the pass child's value term: ``mctx.muzero_action_selection``
    sums the two, so this is its selection with the raised prior.
    """
    values = qtransform(tree, node_index)
    node_visits = tree.node_visits[node_index]
    pb_c = pb_c_init + jnp.log((node_visits + pb_c_base + 1.0) / pb_c_base)
    extra = jnp.sqrt(node_visits) * pb_c * bonus / (tree.children_visits[node_index, pass_action] + 1.0)
    after_pass = tree.embeddings.state.passes[node_index] >= 1
    return values.at[pass_action].add(jnp.where(after_pass, extra, 0.0))


def _principal_variations(tree: mctx.Tree, start, length: int):
    """The most-visited line below each start node and the visits of its nodes.

    ``start`` is [B, K] node indices (-1: no node, an all -1 line). This is
    the one PV walk: the root's line and every root child's line use it.

    Returns:
      (int32[B, K, length] the moves, -1 pads; int32[B, K, length] the
      visit count of the node each move leads to, 0 pads).
    """
    batch, k = start.shape
    if length == 0:
        return jnp.full((batch, k, 0), -1, jnp.int32), jnp.zeros((batch, k, 0), jnp.int32)
    rows = jnp.arange(batch)[:, None]

    def body(i, carry):
        node, alive, pv, pv_visits = carry
        visits = tree.children_visits[rows, node]  # [B, K, A]
        action = jnp.argmax(visits, axis=-1).astype(jnp.int32)
        count = jnp.take_along_axis(visits, action[..., None], axis=-1)[..., 0]
        alive = alive & (count > 0)
        pv = pv.at[:, :, i].set(jnp.where(alive, action, -1))
        pv_visits = pv_visits.at[:, :, i].set(jnp.where(alive, count, 0).astype(jnp.int32))
        child = tree.children_index[rows, node, action]
        node = jnp.where(alive, child, node)
        return node, alive, pv, pv_visits

    alive = start >= 0
    init = (
        jnp.maximum(start, 0),
        alive,
        jnp.full((batch, k, length), -1, jnp.int32),
        jnp.zeros((batch, k, length), jnp.int32),
    )
    _, _, pv, pv_visits = jax.lax.fori_loop(0, length, body, init)
    return pv, pv_visits


def run_search(
    evaluator: Evaluator,
    params,
    key: chex.PRNGKey,
    states: go.GoState,
    *,
    rules: go.GoRules,
    config: SearchConfig,
    agent: Agent | AgentParams | None = None,
    return_tree: bool = False,
    noise_scale=None,
):
    """Searches a batch of positions, each with its own komi and player to move.

    All randomness is per game: root Gumbel noise (Gumbel), root Dirichlet
    noise, PUCT tie-breaking and temperature sampling are drawn from each
    game's own key, so a game's result does not depend on what else is in the
    batch. With one key, game i's key is derived from that key and game i's
    position (board hash, player, komi): searching a position alone with the
    same key gives the same result as searching it inside any batch. Pass B
    keys ([B, 2]) to give identical positions different noise (self-play
    does). Jittable with ``rules``, ``config`` and ``evaluator`` static (see
    :func:`make_search_fn`).

    Args:
      evaluator: ``(params, states) -> (policy_logits, alpha, beta)``.
      params: evaluator parameters (e.g. ``{"params", "batch_stats"}``).
      key: one PRNG key, or B keys [B, 2]; consumed.
      states: batched ``GoState`` [B, ...].
      rules: the static rules (board size).
      config: static search settings.
      agent: the λ/μ agent: an :class:`Agent`, or :class:`AgentParams`
        (scalars or [B], traced); None is λ = μ = 0 (the plain win rate).
      return_tree: also return the mctx tree (for analysis tools).
      noise_scale: None, or a factor (scalar or [B], traced) on each root's
        noise: Gumbel's ``config.gumbel_scale`` and PUCT's
        ``config.dirichlet_fraction``. 0 makes that root's search
        deterministic; self-play uses it to keep noise to the opening
        (``selfplay.noise_moves``) without a second compile.

    Returns:
      :class:`SearchOutput`, or ``(SearchOutput, mctx.Tree)``, batched [B].
    """
    typed = jax.dtypes.issubdtype(key.dtype, jax.dtypes.prng_key)
    if key.ndim == (0 if typed else 1):
        keys = jax.vmap(_position_key, in_axes=(None, 0))(key, states)
    else:
        keys = key
    return _search_batch(
        evaluator,
        params,
        keys,
        states,
        rules=rules,
        config=config,
        agent=agent,
        return_tree=return_tree,
        noise_scale=noise_scale,
    )


def position_keys(keys, states: go.GoState):
    """[B, 2] keys: game i's search key from ``keys[i]`` and its position, as :func:`run_search` derives it.

    ``run_search`` given one key searches game i with the key derived from
    that key and game i's position; a caller that batches positions searched
    with different keys (the analysis engine's rounds) passes
    ``position_keys(round_keys, states)`` and gets, for each game, the search
    ``run_search(evaluator, params, round_keys[i], states[i:i+1])`` would do.
    """
    return jax.vmap(_position_key)(keys, states)


def _position_key(key, state: go.GoState):
    """A key that depends only on ``key`` and the position searched."""
    key = jax.random.fold_in(key, state.hash[0])
    key = jax.random.fold_in(key, state.hash[1])
    key = jax.random.fold_in(key, state.move_count)
    key = jax.random.fold_in(key, (state.komi * 2).astype(jnp.int32))
    return jax.random.fold_in(key, state.to_play.astype(jnp.int32))


def _gumbel_policy(search_params, keys, root, recurrent_fn, legal, config: SearchConfig, noise):
    """mctx's Gumbel MuZero policy, with the root Gumbel noise drawn per game.

    Same algorithm as ``mctx.gumbel_muzero_policy`` (Sequential Halving at
    the root, the deterministic interior selection, completed-Q improved
    policy); only the noise differs: ``noise[i] · gumbel_scale · Gumbel(keys[i])``
    for game i, so results are independent of the batch.
    """
    invalid = ~legal
    gumbel = (noise * config.gumbel_scale)[:, None] * jax.vmap(lambda k: jax.random.gumbel(k, legal.shape[1:]))(keys)
    qtransform = mctx.qtransform_completed_by_mix_value
    tree = mcts.search(
        search_params,
        keys,  # the Gumbel selections draw nothing
        root=root,
        recurrent_fn=recurrent_fn,
        root_action_selection_fn=functools.partial(
            mctx.gumbel_muzero_root_action_selection,
            num_simulations=config.num_simulations,
            max_num_considered_actions=config.max_num_considered_actions,
            qtransform=qtransform,
        ),
        interior_action_selection_fn=functools.partial(
            mctx.gumbel_muzero_interior_action_selection, qtransform=qtransform
        ),
        num_simulations=config.num_simulations,
        invalid_actions=invalid,
        extra_data=mctx.GumbelMuZeroExtraData(root_gumbel=gumbel),
        recurrent_fn_reads_tree=True,
        walk=tree_walk(config),
    )
    visits = tree.summary().visit_counts
    considered = jnp.max(visits, axis=-1, keepdims=True)
    completed_q = jax.vmap(qtransform, in_axes=[0, None])(tree, tree.ROOT_INDEX)
    logits = root.prior_logits - jnp.max(root.prior_logits, axis=-1, keepdims=True)
    score = jnp.maximum(-1e9, gumbel + logits + completed_q) + jnp.where(visits == considered, 0.0, -jnp.inf)
    action = jnp.argmax(jnp.where(invalid, -jnp.inf, score), axis=-1).astype(jnp.int32)
    weights = jax.nn.softmax(_masked_logits(root.prior_logits + completed_q, legal), axis=-1)
    return action, weights, tree


def _puct_policy(search_params, keys, root, recurrent_fn, legal, config: SearchConfig, rules: go.GoRules, noise_scale):
    """PUCT (as ``mctx.muzero_policy``: ``mctx.muzero_action_selection`` at
    every node) with per-game Dirichlet noise, tie breaks and sampling."""
    k_noise, k_tie, k_act, k_search = (jax.vmap(lambda k, i=i: jax.random.fold_in(k, i))(keys) for i in range(4))
    probs = jax.nn.softmax(root.prior_logits, axis=-1)
    if config.dirichlet_fraction > 0:
        alpha = config.dirichlet_alpha or 0.03 * 361 / rules.num_points
        noise = jax.vmap(lambda k: jax.random.dirichlet(k, jnp.full(legal.shape[1:], alpha)))(k_noise)
        noise = jnp.where(legal, noise, 0.0)
        noise = noise / jnp.maximum(jnp.sum(noise, axis=-1, keepdims=True), 1e-12)
        fraction = (noise_scale * config.dirichlet_fraction)[:, None]
        probs = (1.0 - fraction) * probs + fraction * noise
    # A tiny per-game perturbation of the prior breaks exact ties (flat
    # priors); mctx's own 1e-7 tie noise is far smaller than this.
    tie = 1e-4 * jax.vmap(lambda k: jax.random.uniform(k, legal.shape[1:]))(k_tie)
    logits = _masked_logits(jnp.log(jnp.maximum(probs, 1e-30)) + tie, legal)
    root = root.replace(prior_logits=logits)
    pb_c_base = 1e12

    def selection(fpu_reduction):
        qtransform = functools.partial(_qtransform_fpu, fpu_reduction=fpu_reduction)
        if config.pass_answer_prior > 0:
            qtransform = functools.partial(
                _with_pass_answer,
                qtransform,
                bonus=config.pass_answer_prior,
                pass_action=rules.pass_action,
                pb_c_init=config.c_puct,
                pb_c_base=pb_c_base,
            )
        return functools.partial(
            mctx.muzero_action_selection, pb_c_init=config.c_puct, pb_c_base=pb_c_base, qtransform=qtransform
        )

    # A root with Dirichlet noise takes noisy_root_fpu_reduction (SAI's and
    # Leela Zero's self-play: 0), the others fpu_reduction; per game, in
    # tree.extra_data, since noise_scale is.
    if config.dirichlet_fraction > 0:
        root_fpu = jnp.where(
            jnp.broadcast_to(noise_scale, legal.shape[:1]) > 0, config.noisy_root_fpu_reduction, config.fpu_reduction
        ).astype(jnp.float32)
    else:
        root_fpu = jnp.full(legal.shape[:1], config.fpu_reduction, jnp.float32)

    def root_selection(key, tree, node_index):
        return selection(tree.extra_data)(key, tree, node_index, depth=0)

    tree = mcts.search(
        search_params,
        k_search,  # mctx's 1e-7 tie-break noise, per game
        root=root,
        recurrent_fn=recurrent_fn,
        root_action_selection_fn=root_selection,
        interior_action_selection_fn=selection(config.fpu_reduction),
        num_simulations=config.num_simulations,
        invalid_actions=~legal,
        extra_data=root_fpu,
        recurrent_fn_reads_tree=True,
        walk=tree_walk(config),
    )
    visits = tree.summary().visit_probs  # visit-count distribution
    if config.temperature > 0:
        act_logits = jnp.where(visits > 0, jnp.log(jnp.maximum(visits, 1e-30)) / config.temperature, -jnp.inf)
        action = jax.vmap(jax.random.categorical)(k_act, act_logits)
    else:
        # Most visits; ties go to the higher prior.
        action = jnp.argmax(visits + 1e-6 * jax.nn.softmax(logits, axis=-1), axis=-1)
    return action.astype(jnp.int32), visits, tree


def leela_pass_allowed(rules: go.GoRules, states: go.GoState, winrate):
    """[B] bool: may the player to move pass, by Leela Zero's rules for a
    "clever" engine (``UCTNode::create_children`` and
    ``UCTSearch::get_best_move`` without ``--dumbpass``; SAI's engine has the
    same code)?

    Never when the pass loses at once: the opponent may answer with a pass,
    which ends the game at the current Tromp–Taylor count (komi included),
    so the player's count must be at least even. Beyond that, only when few
    moves are left (at most max(5, N) legal points), or the player's win
    rate ``winrate`` is above 0.8, or the opponent has just passed and the
    player is ahead (passing wins at once). A finished game, or one with no
    legal point, may always pass.
    """
    tt = jax.vmap(lambda s: go.area_score(rules, s))(states) - states.komi
    tt = tt * states.to_play.astype(jnp.float32)
    points = jnp.sum(states.legal[:, : rules.num_points], axis=-1)
    few = points <= max(5, rules.size)
    answer_wins = (states.passes >= 1) & (tt > 0)
    return ((tt >= 0) & (few | (winrate > 0.8) | answer_wins)) | states.terminated | (points == 0)


def _search_batch(
    evaluator: Evaluator,
    params,
    key: chex.PRNGKey,
    states: go.GoState,
    *,
    rules: go.GoRules,
    config: SearchConfig,
    agent: Agent | AgentParams | None = None,
    return_tree: bool = False,
    noise_scale=None,
):
    """The batched search with per-game keys [B, 2] (see :func:`run_search`)."""
    batch = states.board.shape[0]
    noise = jnp.ones((batch,), jnp.float32)
    if noise_scale is not None:
        noise = jnp.broadcast_to(jnp.asarray(noise_scale, jnp.float32), (batch,))
    if agent is None:
        agent = Agent()
    if isinstance(agent, Agent):
        agent = agent.params()
    lam = jnp.broadcast_to(jnp.asarray(agent.lambda_, jnp.float32), (batch,))
    mu = jnp.broadcast_to(jnp.asarray(agent.mu, jnp.float32), (batch,))
    threshold = jnp.broadcast_to(jnp.asarray(agent.threshold, jnp.float32), (batch,))

    logits, alpha, beta = evaluator(params, states)
    alpha = alpha.astype(jnp.float32)
    beta = beta.astype(jnp.float32)
    k_root = sigmoid.signed_komi(states.komi, states.to_play.astype(jnp.float32))
    x_lambda, x_mu = sigmoid.agent_interval(alpha, beta, k_root, lam, mu, threshold)
    root_info = _RootInfo(
        x_lambda=x_lambda, x_mu=x_mu, player=states.to_play, komi=states.komi, history=states.hash_history
    )
    # A finished root (a lockstep slot waiting to be refilled) only "passes".
    legal = jnp.where(states.terminated[:, None], jnp.arange(states.legal.shape[1]) == rules.pass_action, states.legal)
    if config.root_pass_rule == "leela":
        allowed = leela_pass_allowed(rules, states, sigmoid.winrate(alpha, beta, k_root))
        legal = legal.at[:, rules.pass_action].set(legal[:, rules.pass_action] & allowed)
    root_value = _node_value(config, rules, alpha, beta, states, root_info)
    root_logits = logits.astype(jnp.float32)
    if config.root_prior is not None:
        root_logits = root_logits + jnp.log(config.root_prior.weights(rules, states))
    root = mctx.RootFnOutput(
        prior_logits=_masked_logits(root_logits, legal),
        value=root_value,
        embedding=_Embedding(go.without_history(states), alpha, beta),
    )
    recurrent_fn = _make_recurrent_fn(evaluator, rules, config)
    search_params = (params, root_info)
    if config.algorithm == "gumbel":
        action, weights, tree = _gumbel_policy(search_params, key, root, recurrent_fn, legal, config, noise)
    else:
        action, weights, tree = _puct_policy(search_params, key, root, recurrent_fn, legal, config, rules, noise)
    result = _summarise(rules, config, tree, action, weights, legal, logits, alpha, beta, k_root, root_info)
    if return_tree:
        return result, tree
    return result


def _summarise(rules, config, tree, action, weights, legal, logits, alpha, beta, k_root, root_info):
    root_idx = mctx.Tree.ROOT_INDEX
    visits = tree.children_visits[:, root_idx].astype(jnp.int32)  # [B, A]
    visited = visits > 0
    # Children's Q from the root player's view, mapped from [-1, 1] to [0, 1].
    q = tree.qvalues(jnp.full(visits.shape[0], root_idx))
    if config.value_mode == "score":
        child_q = jnp.where(visited, q, jnp.nan)
        root_value = tree.node_values[:, root_idx]
    else:
        child_q = jnp.where(visited, (q + 1.0) / 2.0, jnp.nan)
        root_value = (tree.node_values[:, root_idx] + 1.0) / 2.0

    # Per-node margin for the root player, komi included.
    node_states = tree.embeddings.state
    node_alpha = tree.embeddings.alpha  # [B, nodes]
    node_player = node_states.to_play.astype(jnp.float32)
    node_k = sigmoid.signed_komi(node_states.komi, node_player)
    same = node_states.to_play == root_info.player[:, None]
    margin = jnp.where(same, node_alpha + node_k, -(node_alpha + node_k))
    score_estimate = jnp.nanmedian(jnp.where(tree.node_visits > 0, margin, jnp.nan), axis=1)

    child_idx = tree.children_index[:, root_idx]  # [B, A], -1 unvisited
    child_margin = jnp.take_along_axis(margin, jnp.maximum(child_idx, 0), axis=1)
    child_score = jnp.where(child_idx >= 0, child_margin, jnp.nan)
    child_beta = jnp.take_along_axis(tree.embeddings.beta, jnp.maximum(child_idx, 0), axis=1)
    child_beta = jnp.where(child_idx >= 0, child_beta, jnp.nan)
    best_value = jnp.where(
        jnp.any(visited, axis=-1), jnp.nanmax(jnp.where(visited, child_q, -jnp.inf), axis=-1), root_value
    )
    root_node = jnp.full((visits.shape[0], 1), root_idx, jnp.int32)
    pv = _principal_variations(tree, root_node, config.pv_length)[0][:, 0]
    child_pv, child_pv_visits = _principal_variations(tree, child_idx, max(config.pv_length - 1, 0))
    actions = jnp.broadcast_to(jnp.arange(visits.shape[1], dtype=jnp.int32)[None, :, None], child_idx.shape + (1,))
    child_pv = jnp.concatenate([jnp.where(child_idx[..., None] >= 0, actions, -1), child_pv], axis=-1)
    child_pv = child_pv[..., : config.pv_length]
    child_pv_visits = jnp.concatenate([visits[..., None], child_pv_visits], axis=-1)[..., : config.pv_length]

    prior = jax.nn.softmax(_masked_logits(logits.astype(jnp.float32), legal), axis=-1)
    prior = jnp.where(legal, prior, 0.0)
    return SearchOutput(
        action=action.astype(jnp.int32),
        visit_counts=visits,
        policy=weights.astype(jnp.float32),
        root_alpha=alpha,
        root_beta=beta,
        root_winrate=sigmoid.winrate(alpha, beta, k_root),
        root_value=root_value,
        x_lambda=root_info.x_lambda,
        x_mu=root_info.x_mu,
        child_visits=visits,
        child_q=child_q,
        child_prior=prior,
        child_score_lead=child_score,
        child_beta=child_beta,
        child_pv=child_pv,
        pv=pv,
        best_value=best_value,
        score_estimate=score_estimate,
        child_pv_visits=child_pv_visits,
    )


def make_search_fn(evaluator: Evaluator, rules: go.GoRules, config: SearchConfig, *, return_tree: bool = False):
    """A jitted ``search(params, key, states, agent=None) -> SearchOutput``."""

    def search(params, key, states, agent=None):
        return run_search(
            evaluator, params, key, states, rules=rules, config=config, agent=agent, return_tree=return_tree
        )

    return jax.jit(search)


# ---------------------------------------------------------------------------
# Reading a search: the resign rule and the root moves.


def default_resign_after(rules: go.GoRules) -> int:
    """Moves played before resignation is allowed: N²/4, rounded down (docs/design.md §6)."""
    return rules.num_points // 4


def should_resign(best_value, move_count, *, threshold, resign_after):
    """The one resign rule of self-play, the arena and GTP (docs/design.md §6).

    The player to move resigns when the agent value of its best visited move
    is below ``threshold``, once ``resign_after`` moves have been played. A
    negative threshold never resigns, nor does a NaN value. Works on jnp
    arrays (traced, batched) and on numpy/Python scalars.

    Args:
      best_value: ``SearchOutput.best_value``, [B] or scalar, in [0, 1].
      move_count: moves played so far, same shape.
      threshold: resign threshold (scalar or same shape); < 0 disables.
      resign_after: moves before resignation is allowed.

    Returns:
      bool mask of the positions whose player resigns.
    """
    return (threshold >= 0) & (move_count >= resign_after) & (best_value < threshold)


@dataclasses.dataclass(frozen=True)
class RootMove:
    """One visited root move of a search, as analysis tools show it.

    Attributes:
      action: the move (``row * N + col``, pass = N²).
      visits: its visit count.
      value: its agent value for the player to move, in [0, 1].
      prior: the network's prior probability.
      score_lead: the player to move's α + k from the child's evaluation.
      beta: the child's β (its score's standard deviation is π/(√3 β)).
      pv: the principal variation, starting with ``action``.
      pv_visits: the visit count of each node of ``pv`` (its first entry is
        ``visits``); empty when the output carries none.
    """

    action: int
    visits: int
    value: float
    prior: float
    score_lead: float
    beta: float
    pv: tuple[int, ...]
    pv_visits: tuple[int, ...] = ()


def root_moves(out: SearchOutput, game: int = 0) -> list[RootMove]:
    """The visited root moves of one game of a search, most visited first.

    Ties in visits go to the higher value, then the lower action. ``out`` may
    be on device or on host; only game ``game`` is transferred.
    """
    visits, q, prior, lead, beta, pvs = (
        np.asarray(x)
        for x in jax.device_get(
            (
                out.child_visits[game],
                out.child_q[game],
                out.child_prior[game],
                out.child_score_lead[game],
                out.child_beta[game],
                out.child_pv[game],
            )
        )
    )
    pv_visits = None if out.child_pv_visits is None else np.asarray(jax.device_get(out.child_pv_visits[game]))
    visited = np.flatnonzero(visits > 0)
    moves = []
    for a in visited:
        pv = tuple(int(m) for m in pvs[a] if m >= 0)
        counts = () if pv_visits is None or not pv else tuple(int(v) for v in pv_visits[a][: len(pv)])
        moves.append(
            RootMove(
                action=int(a),
                visits=int(visits[a]),
                value=float(q[a]),
                prior=float(prior[a]),
                score_lead=float(lead[a]),
                beta=float(beta[a]),
                pv=pv or (int(a),),
                pv_visits=counts or (int(visits[a]),),
            )
        )
    moves.sort(key=lambda m: (-m.visits, -m.value if math.isfinite(m.value) else math.inf, m.action))
    return moves
