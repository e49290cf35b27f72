"""Tests for saijax.learn.replay: files, the window, and augmentation."""

import os

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from saijax.core import features, go
from saijax.learn import replay

N = 5
A = N * N + 1


def _random_rows(rng, count, *, generation=0, first_game=0, valid=None):
    """Rows with random binary planes and random policies."""
    planes = (rng.random((count, N, N, 17)) < 0.3).astype(np.float32)
    planes[..., 16] = 1.0
    policy = rng.random((count, A)).astype(np.float32)
    policy /= policy.sum(axis=1, keepdims=True)
    return replay.TrainingRows(
        planes=np.asarray(features.pack_planes(planes)),
        to_play=rng.choice(np.array([1, -1], np.int8), count),
        policy=policy,
        signed_komi=rng.choice([-7.5, 7.5, 0.5], count).astype(np.float32),
        z=rng.choice([0.0, 0.5, 1.0], count).astype(np.float32),
        margin=rng.normal(0, 5, count).astype(np.float32),
        game_id=(first_game + np.arange(count) // 10).astype(np.int32),
        move_number=(np.arange(count) % 10).astype(np.int32),
        is_branch=(np.arange(count) % 3 == 0),
        generation=np.full((count,), generation, np.int32),
        valid=(np.ones((count,), bool) if valid is None else valid),
    )


def _assert_rows_equal(a, b):
    for name in a.__dataclass_fields__:
        np.testing.assert_array_equal(np.asarray(getattr(a, name)), np.asarray(getattr(b, name)), name)


# ---------------------------------------------------------------------------
# Files and the window.


def test_write_and_load_window(tmp_path):
    rng = np.random.default_rng(1)
    buffer = replay.ReplayBuffer(tmp_path / "replay", N)
    written = {}
    for g in range(4):
        valid = rng.random(40) < 0.8
        rows = _random_rows(rng, 40, generation=g, first_game=100 * g, valid=valid)
        assert buffer.write_generation(g, rows) == valid.sum()
        written[g] = jax.tree_util.tree_map(lambda x, v=valid: x[v], rows)
    assert buffer.available_generations() == [0, 1, 2, 3]
    assert os.path.exists(tmp_path / "replay" / "gen_000002.npz")
    assert not [f for f in os.listdir(tmp_path / "replay") if not f.startswith("gen_")]

    # A fresh buffer (a restarted run) rebuilds exactly the kept rows.
    again = replay.ReplayBuffer(tmp_path / "replay", N)
    for g in range(4):
        _assert_rows_equal(again.read_generation(g), written[g])
    rows = again.load_window(last_generation=3, window=2)
    assert again.window_generations == [2, 3]
    _assert_rows_equal(rows, replay.concatenate_rows([written[2], written[3]]))
    assert again.num_rows == len(written[2].z) + len(written[3].z)
    # Older windows and windows longer than the history.
    again.load_window(last_generation=1, window=5)
    assert again.window_generations == [0, 1]
    # A missing generation is skipped and an older one takes its place.
    os.remove(tmp_path / "replay" / "gen_000002.npz")
    again.load_window(last_generation=3, window=2)
    assert again.window_generations == [1, 3]
    with pytest.raises(ValueError, match="no replay files"):
        again.load_window(last_generation=-1, window=2)


def test_write_accepts_scan_shaped_rows(tmp_path):
    rng = np.random.default_rng(2)
    rows = _random_rows(rng, 24)
    shaped = jax.tree_util.tree_map(lambda x: jnp.asarray(x).reshape((6, 4) + x.shape[1:]), rows)
    buffer = replay.ReplayBuffer(tmp_path, N)
    assert buffer.write_generation(7, shaped) == 24
    _assert_rows_equal(buffer.read_generation(7), rows)


def test_corrupt_file_names_it(tmp_path):
    rng = np.random.default_rng(3)
    buffer = replay.ReplayBuffer(tmp_path, N)
    buffer.write_generation(0, _random_rows(rng, 30))
    buffer.write_generation(1, _random_rows(rng, 30))
    path = buffer.path(1)
    size = os.path.getsize(path)
    with open(path, "r+b") as f:
        f.truncate(size // 2)
    with pytest.raises(ValueError) as info:
        buffer.load_window(1, 2)
    assert path in str(info.value) and "corrupt" in str(info.value)

    with open(path, "wb") as f:
        f.write(b"not an npz file at all")
    with pytest.raises(ValueError, match="gen_000001.npz"):
        buffer.read_generation(1)


def test_other_board_size_is_rejected(tmp_path):
    rng = np.random.default_rng(4)
    replay.ReplayBuffer(tmp_path, N).write_generation(0, _random_rows(rng, 5))
    with pytest.raises(ValueError, match="board size"):
        replay.ReplayBuffer(tmp_path, 7).read_generation(0)


def test_stale_temporary_files_are_removed(tmp_path):
    stale = tmp_path / ".tmp_gen_000003.abc.npz"
    stale.write_bytes(b"half written")
    buffer = replay.ReplayBuffer(tmp_path, N)
    assert not stale.exists()
    assert buffer.available_generations() == []


# ---------------------------------------------------------------------------
# Sampling and augmentation.


def test_symmetry_matches_go_transforms():
    """`_apply_symmetry` is `go.transform_planes` / `go.transform_policy`."""
    rules = go.GoRules(N)
    rng = np.random.default_rng(5)
    rows = _random_rows(rng, 8)
    planes = features.unpack_planes(jnp.asarray(rows.planes))
    symmetry = jnp.arange(8)
    packed, policy = replay._apply_symmetry(jnp.asarray(rows.planes), jnp.asarray(rows.policy), symmetry, N)
    out = features.unpack_planes(packed)
    for k in range(8):
        np.testing.assert_array_equal(out[k], go.transform_planes(planes[k], k))
        np.testing.assert_array_equal(policy[k], go.transform_policy(rules, rows.policy[k], k))


def test_sample_keeps_planes_and_policy_consistent(tmp_path):
    """A stone at point a (plane 0) ↔ policy mass at a, after augmentation;
    the pass entry is fixed; all 8 symmetries occur."""
    count = 40
    rng = np.random.default_rng(6)
    rows = _random_rows(rng, count)
    planes = np.zeros((count, N, N, 17), np.float32)
    planes[..., 16] = 1.0
    points = rng.integers(0, N * N, count)
    # Asymmetric points make the symmetry identifiable.
    points[:4] = [1, 7, 3, 15]
    planes[np.arange(count), points // N, points % N, 0] = 1.0
    # A second marker in another plane, at point 0's image under nothing:
    planes[np.arange(count), 0, 1, 5] = 1.0
    policy = np.zeros((count, A), np.float32)
    policy[np.arange(count), points] = 0.75
    policy[:, N * N] = 0.25
    rows = rows.replace(planes=np.asarray(features.pack_planes(planes)), policy=policy)
    buffer = replay.ReplayBuffer(tmp_path, N)
    buffer.write_generation(0, rows)
    buffer.load_window(0, 1)
    # The permutation table must be buildable inside the sampler's trace.
    replay._symmetry_permutations.cache_clear()
    batch = buffer.sample(jax.random.key(0), 256)
    assert batch["planes"].shape == (256, N, N, 17)
    assert batch["policy"].shape == (256, A)
    for name in ("signed_komi", "z", "margin"):
        assert batch[name].shape == (256,)
    stone = np.asarray(batch["planes"][..., 0]).reshape(256, N * N)
    np.testing.assert_array_equal(stone.sum(axis=1), 1.0)
    np.testing.assert_array_equal(np.argmax(stone, axis=1), np.argmax(batch["policy"][:, : N * N], 1))
    np.testing.assert_array_equal(batch["policy"][:, N * N], 0.25)
    np.testing.assert_array_equal(batch["planes"][..., 16], 1.0)
    # The (0, 1) marker visits all 8 of its images: every symmetry occurs.
    marker = np.asarray(batch["planes"][..., 5]).reshape(256, N * N)
    assert len(set(np.argmax(marker, axis=1))) == 8

    with_colour = buffer.sample(jax.random.key(1), 64, value_head="winrate")
    assert with_colour["planes"].shape == (64, N, N, 18)


def test_sample_is_uniform_and_does_not_retrace(tmp_path):
    rng = np.random.default_rng(7)
    buffer = replay.ReplayBuffer(tmp_path, N)
    for g in range(3):
        rows = _random_rows(rng, 50 + 10 * g, generation=g)
        rows = rows.replace(margin=np.full((50 + 10 * g,), float(g), np.float32))
        buffer.write_generation(g, rows)
    buffer.load_window(2, 3)
    sizes = []
    counts = np.zeros(3)
    for i in range(20):
        batch = buffer.sample(jax.random.key(i), 128)
        counts += np.bincount(np.asarray(batch["margin"]).astype(int), minlength=3)
    sizes.append(replay._sample._cache_size())
    expected = np.array([50, 60, 70]) / 180 * counts.sum()
    assert np.all(np.abs(counts - expected) < 5 * np.sqrt(expected))
    # A window of another row count in the same size bucket reuses the
    # compiled sampler.
    buffer.load_window(1, 2)
    buffer.sample(jax.random.key(99), 128)
    assert replay._sample._cache_size() == sizes[0]
