"""The batched MCTS loop over an ``mctx.Tree``.

:func:`search` runs the algorithm of ``mctx.search`` (simulate, expand,
back up; node ``i`` is created by simulation ``i``) on the same
``mctx.Tree``, with mctx's action-selection functions and qtransforms, and
returns the same tree. What differs is for the batched case:

* **The backward pass is batched**, in one of two ways (``walk``). ``mctx``
  vmaps a ``while_loop`` that walks from the leaf to the root; under
  ``vmap`` every iteration becomes a select over the whole
  ``[B, nodes, actions]`` child arrays, O(B · nodes · actions) a level.

  - ``"parents"``: a loop walks every game up its parent links at once,
    one level an iteration, updating one node per game with scatters
    (games already at the root write out of range, which is dropped):
    O(B · actions) a level, and as many iterations as the deepest leaf.
  - ``"path"``: the descent records each game's path (the nodes from the
    root to the expanded one and the actions taken, :class:`Path`), and the
    backward pass is one update along it, with no loop: the values backed
    up, ``v_i = r_i + γ_i · v_(i+1)`` from the leaf's value, are suffix
    compositions of the maps ``v ↦ r + γ·v`` (one associative scan), then
    one scatter per array updates every node of every path (a path's nodes
    are distinct). It does O(B · depth bound) work a simulation whatever
    the leaf's depth, more than ``"parents"`` on a CPU, where work is the
    cost; on a GPU each loop iteration is a round of kernel launches and a
    wait for the loop's condition, which this saves.

* **Randomness is per game.** The action-selection keys of game ``i`` come
  from its own key and the simulation number, so a game's search does not
  depend on the rest of the batch.
* **The model may read the tree** (``recurrent_fn_reads_tree``): besides the
  parent's embedding it then gets the tree and the simulation's
  :class:`Path` (with ``walk="parents"``, a path of one entry: the expanded
  node), so a node's embedding need not repeat what its ancestors hold
  (saijax.core.search keeps the superko record out of the nodes and checks the
  path's positions instead, by the same walk or path).

The per-node arithmetic is mctx's (the visit-weighted mean of the node
value and the backed-up value; the child value is the child's node value
after its update), so the trees match ``mctx.search`` given the same
selections (tests/mcts_test.py), by either walk. With ``"path"`` the
backed-up values are bit for bit the sequential ones whenever a reward
comes only with a zero discount, as in Go (a move's reward is paid where
the game ends); otherwise they agree to rounding.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

import chex
import jax
import jax.numpy as jnp
import mctx

__all__ = ["WALKS", "Path", "search"]

WALKS = ("parents", "path")

Tree = mctx.Tree


def search(
    params: Any,
    keys: chex.Array,
    *,
    root: mctx.RootFnOutput,
    recurrent_fn: Callable,
    root_action_selection_fn: Callable,
    interior_action_selection_fn: Callable,
    num_simulations: int,
    invalid_actions: chex.Array,
    extra_data: Any = None,
    recurrent_fn_reads_tree: bool = False,
    walk: str = "parents",
) -> mctx.Tree:
    """Runs ``num_simulations`` simulations from a batch of roots.

    Args:
        params: passed to ``recurrent_fn``.
        keys: [B] typed keys or [B, 2] raw keys, one per game.
        root: mctx's root output, with batch B.
        recurrent_fn: mctx's ``(params, rng_key, action [B], embedding) ->
            (RecurrentFnOutput, embedding)``; its ``rng_key`` is a single key.
        root_action_selection_fn: ``(key, tree, node) -> action`` on one
            game's tree (e.g. ``mctx.gumbel_muzero_root_action_selection``).
        interior_action_selection_fn: ``(key, tree, node, depth) -> action``.
        num_simulations: simulations per game; the tree has one more node.
        invalid_actions: [B, A] bool, True where an action is illegal at the
            root.
        extra_data: stored in ``tree.extra_data`` (e.g. the Gumbel noise).
        recurrent_fn_reads_tree: call ``recurrent_fn(params, rng_key, action,
            embedding, tree, path)``, with the tree before the expansion and
            each game's :class:`Path` from the root to the expanded node (the
            parent of the new one).
        walk: how the backward pass (and a model reading the tree) finds a
            leaf's ancestors: "parents" (a loop up the parent links) or
            "path" (the descent's record; no loop). The module docstring.

    Returns:
        The ``mctx.Tree`` with batch B and ``num_simulations + 1`` nodes.
    """
    if walk not in WALKS:
        raise ValueError(f"walk must be one of {WALKS}, got {walk!r}")
    batch = root.value.shape[0]
    rows = jnp.arange(batch)
    slots = num_simulations if walk == "path" else 1
    if not jax.dtypes.issubdtype(keys.dtype, jax.dtypes.prng_key):
        keys = jax.random.wrap_key_data(keys)
    tree = _instantiate(root, num_simulations, invalid_actions, extra_data)

    def body(sim, tree):
        sim_keys = jax.vmap(lambda k: jax.random.fold_in(k, sim))(keys)
        path = jax.vmap(_simulate, in_axes=(0, 0, None, None, None, None))(
            sim_keys, tree, root_action_selection_fn, interior_action_selection_fn, num_simulations, slots
        )
        parent, action = path.last()
        child = tree.children_index[rows, parent, action]
        child = jnp.where(child == Tree.UNVISITED, sim + 1, child)
        key = jax.random.fold_in(keys[0], sim)
        tree = _expand(params, key, tree, recurrent_fn, path, child, recurrent_fn_reads_tree)
        return _backward_path(tree, path, child) if walk == "path" else _backward_parents(tree, child)

    return jax.lax.fori_loop(0, num_simulations, body, tree)


class Path(NamedTuple):
    """A simulation's descent, per game: ``nodes[:length]`` are the nodes
    from the root (``nodes[0]``) to the one expanded, ``actions[i]`` the
    action taken at ``nodes[i]``; entries from ``length`` on are padding
    (node ``Tree.NO_PARENT``). Batched: ``nodes``, ``actions`` [B, D],
    ``length`` [B], with D = the search's maximum depth. With D = 1 (the
    walk up the parent links) only the expanded node and its action are
    kept, in entry 0, and ``length`` is 1."""

    nodes: chex.Array
    actions: chex.Array
    length: chex.Array

    def last(self):
        """(node, action) [B] each: the expanded node and the action expanded."""
        i = jnp.minimum(self.length - 1, self.nodes.shape[-1] - 1)[..., None]
        return (jnp.take_along_axis(self.nodes, i, axis=-1)[..., 0],
                jnp.take_along_axis(self.actions, i, axis=-1)[..., 0])  # fmt: skip


class _Walk(NamedTuple):
    key: chex.PRNGKey
    action: chex.Array
    next_node: chex.Array
    depth: chex.Array
    going: chex.Array
    nodes: chex.Array  # [D]
    actions: chex.Array  # [D]
    length: chex.Array


def _simulate(key, tree: Tree, root_select: Callable, interior_select: Callable, max_depth: int, slots: int) -> Path:
    """One game: walks from the root to an unvisited action (or max_depth);
    returns its :class:`Path` of ``slots`` entries (1: the last node only).

    The root step is taken before the loop, so each loop iteration runs only
    the interior selection (mctx switches with a ``cond``, which under
    ``vmap`` computes both selections at every depth).
    """
    record = slots > 1
    slots = jnp.arange(slots)

    def body(w: _Walk) -> _Walk:
        key, sub = jax.random.split(w.key)
        node = w.next_node
        action = interior_select(sub, tree, node, w.depth)
        next_node = tree.children_index[node, action]
        depth = w.depth + 1
        going = (next_node != Tree.UNVISITED) & (depth < max_depth)
        here = slots == (w.length if record else 0)
        nodes, actions = jnp.where(here, node, w.nodes), jnp.where(here, action, w.actions)
        return _Walk(key, action, next_node, depth, going, nodes, actions, w.length + 1)

    key, sub = jax.random.split(key)
    root = jnp.int32(Tree.ROOT_INDEX)
    action = root_select(sub, tree, root)
    next_node = tree.children_index[root, action]
    depth = jnp.ones((), tree.children_prior_logits.dtype)
    going = (next_node != Tree.UNVISITED) & (depth < max_depth)
    nodes = jnp.where(slots == 0, root, Tree.NO_PARENT).astype(jnp.int32)
    actions = jnp.where(slots == 0, action, 0).astype(jnp.int32)
    start = _Walk(key, action, next_node, depth, going, nodes, actions, jnp.int32(1))
    end = jax.lax.while_loop(lambda w: w.going, body, start)
    return Path(end.nodes, end.actions, end.length if record else jnp.int32(1))


def _set(x, values, *index):
    """Per-game ``x[b, *index[b]] = values[b]``; out-of-range indices are dropped. The indices may have
    more axes than the batch (a path's [B, D]: D entries per game)."""
    rows = jnp.arange(x.shape[0]).reshape((-1,) + (1,) * (jnp.ndim(index[0]) - 1))
    return x.at[(rows,) + index].set(values, mode="drop")


def _write_node(tree: Tree, node, prior_logits, value, embedding) -> Tree:
    """Fills node ``node[b]`` of every game with its evaluation."""
    rows = jnp.arange(tree.node_visits.shape[0])
    return tree.replace(
        children_prior_logits=_set(tree.children_prior_logits, prior_logits, node),
        raw_values=_set(tree.raw_values, value, node),
        node_values=_set(tree.node_values, value, node),
        node_visits=_set(tree.node_visits, tree.node_visits[rows, node] + 1, node),
        embeddings=jax.tree_util.tree_map(lambda t, s: _set(t, s, node), tree.embeddings, embedding),
    )


def _instantiate(root: mctx.RootFnOutput, num_simulations: int, invalid_actions, extra_data) -> Tree:
    batch, num_actions = root.prior_logits.shape
    nodes = (batch, num_simulations + 1)
    children = nodes + (num_actions,)
    dtype = root.value.dtype
    tree = Tree(
        node_visits=jnp.zeros(nodes, jnp.int32),
        raw_values=jnp.zeros(nodes, dtype),
        node_values=jnp.zeros(nodes, dtype),
        parents=jnp.full(nodes, Tree.NO_PARENT, jnp.int32),
        action_from_parent=jnp.full(nodes, Tree.NO_PARENT, jnp.int32),
        children_index=jnp.full(children, Tree.UNVISITED, jnp.int32),
        children_prior_logits=jnp.zeros(children, root.prior_logits.dtype),
        children_values=jnp.zeros(children, dtype),
        children_visits=jnp.zeros(children, jnp.int32),
        children_rewards=jnp.zeros(children, dtype),
        children_discounts=jnp.zeros(children, dtype),
        embeddings=jax.tree_util.tree_map(lambda x: jnp.zeros(nodes + x.shape[1:], x.dtype), root.embedding),
        root_invalid_actions=invalid_actions,
        extra_data=extra_data,
    )
    root_node = jnp.full((batch,), Tree.ROOT_INDEX, jnp.int32)
    return _write_node(tree, root_node, root.prior_logits, root.value, root.embedding)


def _expand(params, key, tree: Tree, recurrent_fn, path: Path, child, reads_tree: bool) -> Tree:
    """Evaluates the last (node, action) of every game's path and stores it as node ``child``."""
    parent, action = path.last()
    rows = jnp.arange(parent.shape[0])
    embedding = jax.tree_util.tree_map(lambda x: x[rows, parent], tree.embeddings)
    if reads_tree:
        out, embedding = recurrent_fn(params, key, action, embedding, tree, path)
    else:
        out, embedding = recurrent_fn(params, key, action, embedding)
    tree = _write_node(tree, child, out.prior_logits, out.value, embedding)
    return tree.replace(
        children_index=_set(tree.children_index, child, parent, action),
        children_rewards=_set(tree.children_rewards, out.reward, parent, action),
        children_discounts=_set(tree.children_discounts, out.discount, parent, action),
        parents=_set(tree.parents, parent, child),
        action_from_parent=_set(tree.action_from_parent, action, child),
    )


def _backward_parents(tree: Tree, leaf) -> Tree:
    """Backs the leaves' values up to the roots, one level per iteration for
    all games at once. A game that has reached its root writes to node index
    ``nodes`` (out of range, dropped) and keeps its state."""
    rows = jnp.arange(leaf.shape[0])
    out_of_range = tree.node_visits.shape[1]

    def body(carry):
        tree, value, index = carry
        going = index != Tree.ROOT_INDEX
        parent = jnp.where(going, tree.parents[rows, index], Tree.ROOT_INDEX)
        action = jnp.where(going, tree.action_from_parent[rows, index], 0)
        count = tree.node_visits[rows, parent]
        reward = tree.children_rewards[rows, parent, action]
        value = jnp.where(going, reward + tree.children_discounts[rows, parent, action] * value, value)
        parent_value = (tree.node_values[rows, parent] * count + value) / (count + 1.0)
        child_value = tree.node_values[rows, index]
        child_visits = tree.children_visits[rows, parent, action] + 1
        target = jnp.where(going, parent, out_of_range)
        tree = tree.replace(
            node_values=_set(tree.node_values, parent_value, target),
            node_visits=_set(tree.node_visits, count + 1, target),
            children_values=_set(tree.children_values, child_value, target, action),
            children_visits=_set(tree.children_visits, child_visits, target, action),
        )
        return tree, value, jnp.where(going, parent, index)

    start = (tree, tree.node_values[rows, leaf], leaf)
    tree, _, _ = jax.lax.while_loop(lambda c: jnp.any(c[2] != Tree.ROOT_INDEX), body, start)
    return tree


def _backward_path(tree: Tree, path: Path, leaf) -> Tree:
    """Backs the leaves' values up their paths to the roots, every level of
    every game at once (the module docstring)."""
    batch, depth = path.nodes.shape
    rows = jnp.arange(batch)[:, None]
    on_path = jnp.arange(depth)[None, :] < path.length[:, None]  # [B, D]
    nodes = jnp.where(on_path, path.nodes, 0)
    # Edge i goes from nodes[i] down by actions[i]; off the path it is the identity map.
    reward = jnp.where(on_path, tree.children_rewards[rows, nodes, path.actions], 0.0)
    discount = jnp.where(on_path, tree.children_discounts[rows, nodes, path.actions], 1.0)
    discount, reward = jax.lax.associative_scan(
        lambda later, earlier: (earlier[0] * later[0], earlier[1] + earlier[0] * later[1]),
        (discount, reward),
        reverse=True,
        axis=1,
    )
    leaf_value = tree.node_values[rows[:, 0], leaf]
    value = reward + discount * leaf_value[:, None]  # [B, D]: the value backed up into nodes[i]
    count = tree.node_visits[rows, nodes]
    new_value = (tree.node_values[rows, nodes] * count + value) / (count + 1.0)
    # The value of the child below each node, after its own update (the leaf's is not updated).
    below = jnp.concatenate([new_value[:, 1:], jnp.zeros_like(new_value[:, :1])], axis=1)
    last = jnp.arange(depth)[None, :] == (path.length - 1)[:, None]
    child_value = jnp.where(last, leaf_value[:, None], below)
    target = jnp.where(on_path, nodes, tree.node_visits.shape[1])  # off the path: out of range, dropped
    child_visits = tree.children_visits[rows, nodes, path.actions] + 1
    return tree.replace(
        node_values=_set(tree.node_values, new_value, target),
        node_visits=_set(tree.node_visits, count + 1, target),
        children_values=_set(tree.children_values, child_value, target, path.actions),
        children_visits=_set(tree.children_visits, child_visits, target, path.actions),
    )
