"""saijax.core.mcts.search builds the same tree as mctx.search."""

import functools

import jax
import jax.numpy as jnp
import mctx
import numpy as np
import pytest

from saijax.core import mcts

B, A, SIMS = 6, 7, 24


def _recurrent_fn(params, rng_key, action, embedding):
    """A deterministic toy environment: the embedding is a float "state"."""
    del params, rng_key
    nxt = jnp.sin(embedding * 3.1 + action * 0.7 + 0.3)
    logits = jnp.sin(nxt[:, None] * jnp.arange(1, A + 1) * 1.7)
    ends = nxt > 0.8  # some leaves are terminal
    out = mctx.RecurrentFnOutput(
        reward=jnp.where(ends, jnp.cos(nxt), 0.0),
        discount=jnp.where(ends, 0.0, -1.0),
        prior_logits=logits,
        value=jnp.tanh(2.0 * nxt),
    )
    return out, nxt


def _root():
    start = jnp.linspace(-1.0, 1.0, B)
    logits = jnp.cos(start[:, None] * jnp.arange(1, A + 1))
    invalid = (jnp.arange(A)[None, :] + jnp.arange(B)[:, None]) % 4 == 0
    logits = jnp.where(invalid, jnp.finfo(jnp.float32).min, logits)
    return mctx.RootFnOutput(prior_logits=logits, value=jnp.tanh(start), embedding=start), invalid


def _assert_same_tree(ours, theirs):
    for field in ("node_visits", "parents", "action_from_parent", "children_index", "children_visits"):
        np.testing.assert_array_equal(getattr(ours, field), getattr(theirs, field), err_msg=field)
    for field in (
        "node_values",
        "raw_values",
        "children_values",
        "children_rewards",
        "children_discounts",
        "children_prior_logits",
        "embeddings",
    ):
        np.testing.assert_allclose(getattr(ours, field), getattr(theirs, field), rtol=1e-5, atol=1e-6, err_msg=field)


@pytest.mark.parametrize("walk", mcts.WALKS)
def test_gumbel_tree_matches_mctx(walk):
    root, invalid = _root()
    gumbel = jax.random.gumbel(jax.random.PRNGKey(3), (B, A))
    qtransform = mctx.qtransform_completed_by_mix_value
    kwargs = dict(
        root=root,
        recurrent_fn=_recurrent_fn,
        root_action_selection_fn=functools.partial(
            mctx.gumbel_muzero_root_action_selection,
            num_simulations=SIMS,
            max_num_considered_actions=4,
            qtransform=qtransform,
        ),
        interior_action_selection_fn=functools.partial(
            mctx.gumbel_muzero_interior_action_selection, qtransform=qtransform
        ),
        num_simulations=SIMS,
        invalid_actions=invalid,
        extra_data=mctx.GumbelMuZeroExtraData(root_gumbel=gumbel),
    )
    keys = jax.random.split(jax.random.PRNGKey(0), B)
    ours = jax.jit(lambda k: mcts.search(None, k, walk=walk, **kwargs))(keys)
    theirs = jax.jit(lambda k: mctx.search(None, k, **kwargs))(jax.random.PRNGKey(1))
    _assert_same_tree(ours, theirs)
    assert int(ours.node_visits[:, 0].min()) == SIMS + 1
    assert ours.children_index.max() == SIMS  # every simulation created a node
    assert float(jnp.max(ours.summary().visit_counts * invalid)) == 0.0


@pytest.mark.parametrize("walk", mcts.WALKS)
@pytest.mark.parametrize("sharp_prior", [False, True])
def test_puct_tree_matches_mctx(sharp_prior, walk):
    root, invalid = _root()
    if sharp_prior:  # a strongly preferred line: deep, narrow trees
        root = root.replace(prior_logits=jnp.where(invalid, root.prior_logits, 5.0 * root.prior_logits))
    selection = functools.partial(mctx.muzero_action_selection, pb_c_init=1.25, pb_c_base=19652.0)
    kwargs = dict(
        root=root,
        recurrent_fn=_recurrent_fn,
        root_action_selection_fn=functools.partial(selection, depth=0),
        interior_action_selection_fn=selection,
        num_simulations=SIMS,
        invalid_actions=invalid,
    )
    keys = jax.random.split(jax.random.PRNGKey(0), B)
    ours = jax.jit(lambda k: mcts.search(None, k, walk=walk, **kwargs))(keys)
    theirs = jax.jit(lambda k: mctx.search(None, k, **kwargs))(jax.random.PRNGKey(1))
    _assert_same_tree(ours, theirs)


def test_the_two_walks_build_the_same_tree_bit_for_bit():
    """Rewards only with a zero discount (as in Go): the path's scan gives the loop's values exactly."""
    root, invalid = _root()
    selection = functools.partial(mctx.muzero_action_selection, pb_c_init=1.25, pb_c_base=19652.0)
    kwargs = dict(root=root, recurrent_fn=_recurrent_fn, root_action_selection_fn=functools.partial(selection, depth=0),
                  interior_action_selection_fn=selection, num_simulations=SIMS, invalid_actions=invalid)  # fmt: skip
    keys = jax.random.split(jax.random.PRNGKey(0), B)
    trees = [jax.jit(lambda k, w=w: mcts.search(None, k, walk=w, **kwargs))(keys) for w in mcts.WALKS]
    for a, b in zip(jax.tree_util.tree_leaves(trees[0]), jax.tree_util.tree_leaves(trees[1]), strict=True):
        np.testing.assert_array_equal(a, b)
    assert int(trees[0].node_visits[:, 0].min()) == SIMS + 1
    with pytest.raises(ValueError, match="walk must be one of"):
        mcts.search(None, keys, walk="up", **kwargs)


def test_a_game_does_not_depend_on_the_batch():
    root, invalid = _root()
    selection = functools.partial(mctx.muzero_action_selection, pb_c_init=1.25, pb_c_base=19652.0)
    run = jax.jit(
        lambda r, k, inv: mcts.search(
            None,
            k,
            root=r,
            recurrent_fn=_recurrent_fn,
            root_action_selection_fn=functools.partial(selection, depth=0),
            interior_action_selection_fn=selection,
            num_simulations=SIMS,
            invalid_actions=inv,
        )
    )
    keys = jax.random.split(jax.random.PRNGKey(0), B)
    whole = run(root, keys, invalid)
    one = run(jax.tree_util.tree_map(lambda x: x[2:3], root), keys[2:3], invalid[2:3])
    np.testing.assert_array_equal(whole.children_visits[2], one.children_visits[0])
    np.testing.assert_allclose(whole.node_values[2], one.node_values[0], rtol=1e-6)
