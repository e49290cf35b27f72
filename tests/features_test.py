"""Tests for saijax.core.features: the planes, the colour plane, packing, and that
search and replay build the same network input."""

import functools

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from saijax.core import features, go, networks
from saijax.learn import replay

N = 5
RULES = go.GoRules(N)
# A game with captures-free contact play; Black and White alternate to move.
_MOVES = [12, 6, 7, 11, 13, 25, 17, 8, 16]


@pytest.fixture(scope="module")
def positions():
    """The states after each of `_MOVES`, stacked: a GoState with batch [9]."""
    step = jax.jit(functools.partial(go.step, RULES))
    state = go.init(RULES, 7.5)
    states = []
    for action in _MOVES:
        state = step(state, action)
        states.append(state)
    return jax.tree_util.tree_map(lambda *xs: jnp.stack(xs), *states)


def _random_planes(rng, shape):
    planes = (rng.random(shape + (N, N, 17)) < 0.5).astype(np.float32)
    planes[..., 16] = 1.0
    return planes


# ---------------------------------------------------------------------------
# Planes and the colour plane.


def test_sai_planes_are_go_features(positions):
    planes = features.sai_planes(RULES, positions)
    assert planes.shape == (len(_MOVES), N, N, 17) and planes.dtype == jnp.float32
    for i in range(len(_MOVES)):
        one = jax.tree_util.tree_map(lambda x: x[i], positions)
        np.testing.assert_array_equal(planes[i], go.features(RULES, one))


@pytest.mark.parametrize("value_head", networks.VALUE_HEADS)
def test_plane_count_per_value_head(positions, value_head):
    x = jax.jit(features.network_inputs, static_argnums=(0, 2))(RULES, positions, value_head)
    assert x.shape == (len(_MOVES), N, N, networks.input_planes(value_head))
    assert x.dtype == jnp.float32
    np.testing.assert_array_equal(x[..., :17], features.sai_planes(RULES, positions))
    assert networks.input_planes(value_head) == (17 if value_head == "sai" else 18)


def test_unknown_value_head_is_rejected(positions):
    with pytest.raises(ValueError, match="value_head"):
        features.network_inputs(RULES, positions, "bogus")
    with pytest.raises(ValueError, match="value_head"):
        features.add_colour_plane(jnp.zeros((1, N, N, 17)), jnp.ones((1,), jnp.int8), "bogus")


@pytest.mark.parametrize("to_play, expected", [(1, 1.0), (-1, 0.0)])
def test_colour_plane_values(to_play, expected):
    """All ones when Black (+1) is to move, all zeros for White (-1)."""
    planes = jnp.asarray(_random_planes(np.random.default_rng(0), (3,)))
    x = features.add_colour_plane(planes, jnp.full((3,), to_play, jnp.int8), "winrate")
    assert x.shape == (3, N, N, 18)
    np.testing.assert_array_equal(x[..., :17], planes)
    np.testing.assert_array_equal(x[..., 17], expected)


def test_colour_plane_follows_each_state(positions):
    x = features.network_inputs(RULES, positions, "score")
    black = np.asarray(positions.to_play) == 1
    assert black.any() and (~black).any()
    np.testing.assert_array_equal(x[black, ..., 17], 1.0)
    np.testing.assert_array_equal(x[~black, ..., 17], 0.0)


def test_sai_gets_no_colour_plane():
    planes = jnp.asarray(_random_planes(np.random.default_rng(1), (2,)))
    np.testing.assert_array_equal(features.add_colour_plane(planes, jnp.asarray([1, -1]), "sai"), planes)


# ---------------------------------------------------------------------------
# Packing.


def test_pack_unpack_round_trip_on_real_positions(positions):
    feats = features.sai_planes(RULES, positions)
    to_play = positions.to_play
    packed = features.pack_planes(feats)
    assert packed.dtype == jnp.uint8 and packed.shape == (9, N, N, 2)
    np.testing.assert_array_equal(features.unpack_planes(packed), feats)
    unpack_with_colour = jax.jit(lambda p, t: features.add_colour_plane(features.unpack_planes(p), t, "winrate"))
    with_colour = unpack_with_colour(packed, to_play)
    assert with_colour.shape == (9, N, N, 18)
    np.testing.assert_array_equal(with_colour[..., :17], feats)
    black = np.asarray(to_play) == 1
    np.testing.assert_array_equal(with_colour[black, ..., 17], 1.0)
    np.testing.assert_array_equal(with_colour[~black, ..., 17], 0.0)
    np.testing.assert_array_equal(features.add_colour_plane(feats, to_play, "winrate"), with_colour)
    np.testing.assert_array_equal(features.add_colour_plane(feats, to_play, "sai"), feats)


def test_pack_unpack_round_trip_random():
    rng = np.random.default_rng(0)
    for shape in [(3, 4), (7,), ()]:
        planes = _random_planes(rng, shape)
        packed = features.pack_planes(planes)
        assert packed.shape == shape + (N, N, features.PACKED_BYTES)
        np.testing.assert_array_equal(features.unpack_planes(packed), planes)


def test_pack_drops_the_colour_plane():
    rng = np.random.default_rng(2)
    planes = _random_planes(rng, (4,))
    with_colour = features.add_colour_plane(jnp.asarray(planes), jnp.asarray([1, -1, 1, -1]), "winrate")
    np.testing.assert_array_equal(features.pack_planes(with_colour), features.pack_planes(planes))


def test_unpack_checks_shape():
    with pytest.raises(ValueError, match="packed planes"):
        features.unpack_planes(jnp.zeros((2, N, N, 3), jnp.uint8))


# ---------------------------------------------------------------------------
# Search and replay build the same input.


@pytest.mark.parametrize("value_head", networks.VALUE_HEADS)
def test_replay_sample_equals_network_inputs(positions, value_head, tmp_path):
    """Each sampled input is, up to its dihedral symmetry, exactly what
    `network_inputs` gives the search for one of the stored states."""
    count = len(_MOVES)
    a = N * N + 1
    rows = replay.TrainingRows(
        planes=features.pack_planes(features.sai_planes(RULES, positions)),
        to_play=positions.to_play.astype(jnp.int8),
        policy=jnp.full((count, a), 1.0 / a),
        signed_komi=jnp.zeros((count,)),
        z=jnp.zeros((count,)),
        margin=jnp.zeros((count,)),
        game_id=jnp.zeros((count,), jnp.int32),
        move_number=jnp.arange(count, dtype=jnp.int32),
        is_branch=jnp.zeros((count,), bool),
        generation=jnp.zeros((count,), jnp.int32),
        valid=jnp.ones((count,), bool),
    )
    buffer = replay.ReplayBuffer(tmp_path, N)
    buffer.write_generation(0, rows)
    buffer.load_window(0, 1)
    batch = np.asarray(buffer.sample(jax.random.key(3), 32, value_head=value_head)["planes"])

    searched = np.asarray(features.network_inputs(RULES, positions, value_head))
    candidates = np.stack([go.transform_planes(searched[i], k) for i in range(count) for k in range(8)])
    assert batch.shape[1:] == candidates.shape[1:]
    for sample in batch:
        assert (candidates == sample).all(axis=(1, 2, 3)).any()
