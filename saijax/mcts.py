"""The batched MCTS loop over an ``mctx.Tree``.

:func:`search` runs the algorithm of ``mctx.search`` (simulate, expand,
back up; node ``i`` is created by simulation ``i``) on the same
``mctx.Tree``, with mctx's action-selection functions and qtransforms, and
returns the same tree. Two things differ, both for the batched case:

* **The backward pass is batched with scatters.** ``mctx`` vmaps a
  ``while_loop`` that walks from the leaf to the root; under ``vmap`` every
  iteration becomes a select over the whole ``[B, nodes, actions]`` child
  arrays, so backing up costs O(B · nodes · actions) per level. Here each
  level updates one node per game with scatters (games already at the root
  write out of bounds, which is dropped), so it costs O(B · actions).
* **Randomness is per game.** The action-selection keys of game ``i`` come
  from its own key and the simulation number, so a game's search does not
  depend on the rest of the batch.
* **The model may read the tree** (``recurrent_fn_reads_tree``): besides the
  parent's embedding it then gets the tree and the parent node indices, so a
  node's embedding need not repeat what its ancestors hold (saijax.search
  keeps the superko record out of the nodes and reads the path instead).

The update arithmetic is mctx's, operation for operation, so the trees match
``mctx.search`` given the same selections (see tests/search_test.py).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

import chex
import jax
import jax.numpy as jnp
import mctx

__all__ = ["search"]

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
            embedding, tree, parent)``, with the tree before the expansion and
            ``parent`` [B] the expanded nodes (the parents of the new ones).

    Returns:
        The ``mctx.Tree`` with batch B and ``num_simulations + 1`` nodes.
    """
    batch = root.value.shape[0]
    rows = jnp.arange(batch)
    if not jax.dtypes.issubdtype(keys.dtype, jax.dtypes.prng_key):
        keys = jax.random.wrap_key_data(keys)
    tree = _instantiate(root, num_simulations, invalid_actions, extra_data)

    def body(sim, tree):
        sim_keys = jax.vmap(lambda k: jax.random.fold_in(k, sim))(keys)
        parent, action = jax.vmap(_simulate, in_axes=(0, 0, None, None, None))(
            sim_keys, tree, root_action_selection_fn, interior_action_selection_fn, num_simulations
        )
        child = tree.children_index[rows, parent, action]
        child = jnp.where(child == Tree.UNVISITED, sim + 1, child)
        key = jax.random.fold_in(keys[0], sim)
        tree = _expand(params, key, tree, recurrent_fn, parent, action, child, recurrent_fn_reads_tree)
        return _backward(tree, child)

    return jax.lax.fori_loop(0, num_simulations, body, tree)


class _Walk(NamedTuple):
    key: chex.PRNGKey
    node: chex.Array
    action: chex.Array
    next_node: chex.Array
    depth: chex.Array
    going: chex.Array


def _simulate(key, tree: Tree, root_select: Callable, interior_select: Callable, max_depth: int):
    """One game: walks from the root to an unvisited action (or max_depth);
    returns (node, action).

    The root step is taken before the loop, so each loop iteration runs only
    the interior selection (mctx switches with a ``cond``, which under
    ``vmap`` computes both selections at every depth).
    """

    def body(w: _Walk) -> _Walk:
        key, sub = jax.random.split(w.key)
        action = interior_select(sub, tree, w.next_node, w.depth)
        next_node = tree.children_index[w.next_node, action]
        depth = w.depth + 1
        going = (next_node != Tree.UNVISITED) & (depth < max_depth)
        return _Walk(key, w.next_node, action, next_node, depth, going)

    key, sub = jax.random.split(key)
    root = jnp.int32(Tree.ROOT_INDEX)
    action = root_select(sub, tree, root)
    next_node = tree.children_index[root, action]
    depth = jnp.ones((), tree.children_prior_logits.dtype)
    going = (next_node != Tree.UNVISITED) & (depth < max_depth)
    end = jax.lax.while_loop(lambda w: w.going, body, _Walk(key, root, action, next_node, depth, going))
    return end.node, end.action


def _set(x, values, *index):
    """Per-game ``x[b, *index[b]] = values[b]``; out-of-range indices are dropped."""
    rows = jnp.arange(x.shape[0])
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


def _expand(params, key, tree: Tree, recurrent_fn, parent, action, child, reads_tree: bool) -> Tree:
    """Evaluates (parent, action) of every game and stores it as node ``child``."""
    rows = jnp.arange(parent.shape[0])
    embedding = jax.tree_util.tree_map(lambda x: x[rows, parent], tree.embeddings)
    if reads_tree:
        out, embedding = recurrent_fn(params, key, action, embedding, tree, parent)
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


def _backward(tree: Tree, leaf) -> Tree:
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
