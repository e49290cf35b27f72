"""Tests of two of KataGo's self-play efficiency switches (Wu 2019, Table 2):
global pooling (`network.global_pooling`) and the opponent-reply policy
target (`network.opponent_policy_head`, `training.opponent_policy_weight`).

The network, its spec, the self-play targets, the replay files and their
symmetries, the loss and the config. One 5×5 pipeline generation with both
switches on is `ownership_test.py::test_pipeline_generation_with_the_learning_switches`.
"""

import json

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from conftest import TINY, empty_step_fields

from saijax.core import features, go, networks
from saijax.learn import config as config_lib
from saijax.learn import losses, replay, selfplay, training

N = 5
RULES = go.GoRules(N, max_moves=50)
A = N * N + 1


# ---------------------------------------------------------------------------
# Network and spec.


def _shapes(spec, batch=3):
    """(variables, train-mode outputs and stats) as shapes: traced, not compiled."""
    net = spec.build()
    x = jax.ShapeDtypeStruct((batch, N, N, networks.input_planes(spec.value_head)), jnp.float32)
    variables = jax.eval_shape(lambda k: networks.init_network(net, k), jax.random.key(0))
    out, stats = jax.eval_shape(lambda v, x: networks.apply_network(net, v, x, train=True), variables, x)
    return variables, out, stats


@pytest.mark.parametrize("value_head", ["sai", "winrate"])
def test_network_shapes_and_parameters_with_each_switch(value_head):
    counts = {}
    for pooling in (False, True):
        for opponent in (False, True):
            spec = networks.NetworkSpec(N, 4, 8, value_head, global_pooling=pooling, opponent_policy_head=opponent)
            assert spec.build().spec == spec
            variables, out, stats = _shapes(spec)
            params = variables["params"]
            counts[pooling, opponent] = networks.param_count(params)
            assert out.policy_logits.shape == (3, A) and out.alpha.shape == (3,) and out.beta.shape == (3,)
            if opponent:
                assert out.opponent_policy_logits.shape == (3, A)
                assert out.opponent_policy_logits.dtype == jnp.float32
                assert {"opponent_policy_conv", "opponent_policy_dense"} <= set(params)
                assert "opponent_policy_bn" in stats
            else:
                assert out.opponent_policy_logits is None and not any(k.startswith("opponent") for k in params)
            # Pooling: every third block (block_2 of 4), and the heads.
            pooled = [k for k in params if k.startswith("block_") and "gpool_conv" in params[k]]
            assert pooled == (["block_2"] if pooling else [])
            assert ("policy_gpool" in params) == pooling and ("policy_pass_gpool" in params) == pooling
            if pooling:
                assert params["block_2"]["gpool_conv"]["kernel"].shape == (3, 3, 8, 2)  # F // 4 pooled channels
                assert params["block_2"]["gpool_dense"]["kernel"].shape == (4, 8)  # mean ⧺ max → F biases
                hidden = "alpha_hidden" if value_head == "sai" else "value_hidden"
                assert params[hidden]["kernel"].shape[0] == 2 * N * N + 2 * 8  # map ⧺ pooled trunk
    base = counts[False, False]
    assert counts[True, False] > base and counts[False, True] > base
    assert counts[True, True] == counts[True, False] + counts[False, True] - base + 2 * 8 * 3  # + opp pooling


def test_fresh_pooling_net_plays_as_the_plain_net():
    """The pooled terms of the blocks and policy heads start at zero.

    With random pooled kernels the pass logit got an offset shared by every
    position, and a 7×7 run from scratch fell into pass-ended games. A fresh
    net's policy must therefore equal its own policy with the pooled terms
    removed, on a real mid-game position.
    """
    spec = networks.NetworkSpec(N, 3, 8, global_pooling=True, opponent_policy_head=True)
    net = spec.build()
    variables = networks.init_network(net, jax.random.key(3))
    params = variables["params"]
    zero_init = [params["block_2"]["gpool_dense"], params["policy_gpool"], params["policy_pass_gpool"]]
    zero_init += [params["opponent_policy_gpool"], params["opponent_policy_pass_gpool"]]
    for layer in zero_init:
        assert not np.any(np.asarray(layer["kernel"]))
    rules = go.GoRules(N)
    state = go.init(rules, 7.0)
    for move in (12, 6, 18, 0):
        state = go.play(rules, state, move)
    x = features.network_inputs(rules, jax.tree_util.tree_map(lambda a: a[None], state))
    out, _ = networks.apply_network(net, variables, x)
    bumped = jax.tree_util.tree_map(lambda a: a, variables)
    bumped["params"]["policy_pass_gpool"]["kernel"] = jnp.ones_like(params["policy_pass_gpool"]["kernel"])
    out_bumped, _ = networks.apply_network(net, bumped, x)
    # The pass term is live (trainable, reads the pooled trunk) but starts silent.
    assert float(out_bumped.policy_logits[0, -1]) > float(out.policy_logits[0, -1]) + 1.0
    np.testing.assert_allclose(out_bumped.policy_logits[0, :-1], out.policy_logits[0, :-1], rtol=1e-6)


def test_pooling_blocks():
    assert networks.pooling_blocks(0) == ()
    assert networks.pooling_blocks(1) == (0,) and networks.pooling_blocks(2) == (1,)
    assert networks.pooling_blocks(3) == (2,) and networks.pooling_blocks(6) == (2, 5)


def test_spec_dicts_old_and_new():
    old = dict(board_size=N, blocks=1, filters=8, value_head="sai", beta_scale=0.4)
    spec = networks.NetworkSpec.from_dict(old)  # a checkpoint or zoo entry written before the fields
    assert spec.global_pooling is False and spec.opponent_policy_head is False
    assert spec.to_dict() == old
    new = networks.NetworkSpec(N, 1, 8, global_pooling=True, opponent_policy_head=True)
    d = json.loads(json.dumps(new.to_dict()))
    assert d == {**old, "global_pooling": True, "opponent_policy_head": True}
    assert networks.NetworkSpec.from_dict(d) == new
    assert networks.NetworkSpec.from_dict({**old, "global_pooling": True}).to_dict() == {**old, "global_pooling": True}
    net = networks.make_network(N, blocks=1, filters=8, global_pooling=True, opponent_policy_head=True)
    assert net.spec == new
    for name in ("global_pooling", "opponent_policy_head"):
        with pytest.raises(ValueError, match=name):
            networks.NetworkSpec(N, 1, 8, **{name: 1})


# ---------------------------------------------------------------------------
# Self-play targets (hand-made records for GameCollector).


def _records(games, t_len, b):
    """A [t_len, b] StepRecord: games = {slot: [per-move dicts]}; others inactive."""

    fields = empty_step_fields(t_len, b, N)
    for i, moves in games.items():
        for t, values in enumerate(moves):
            fields["active"][t, i] = True
            for name, value in values.items():
                fields[name][t, i] = value
    return selfplay.StepRecord(**fields)


def _game(gid, moves, rng, *, start=0, resigned=False, blunder_at=(), cheap_at=()):
    """Moves alternate colours from move number `start`; the last ends the
    game. Each policy row is a random distribution (all zeros at `cheap_at`)."""
    out = []
    for m in range(moves):
        last = m == moves - 1
        policy = rng.random(A).astype(np.float32)
        policy = np.zeros(A, np.float32) if m in cheap_at else policy / policy.sum()
        out.append(
            dict(
                game_id=gid,
                move_number=start + m,
                to_play=1 if (start + m) % 2 == 0 else -1,
                policy=policy,
                action=-1 if (last and resigned) else m,
                blunder=m in blunder_at,
                finished=last,
                resigned=resigned and last,
                winner=1 if last else 0,
                margin=3.5 if last else 0.0,
                length=start + moves,
            )
        )
    return out


def test_collector_opponent_target_is_the_next_rows_policy():
    rng = np.random.default_rng(0)
    played = _game(7, 5, rng, blunder_at=(1,), cheap_at=(3,))  # rows 0, 1 dropped; row 3 cheap
    resigned = _game(8, 3, rng, start=4, resigned=True)  # a branch-like game starting at move 4
    # Game 9 does not finish in this chunk: its rows wait.
    unfinished = _game(9, 5, rng)[:3]
    records = _records({0: played, 1: resigned, 2: unfinished}, 5, 3)
    collector = selfplay.GameCollector(RULES, opponent_policy=True)
    rows, games = collector.add_chunk(records, generation=0)
    assert sorted(g.game_id for g in games) == [7, 8] and collector.pending_games == 1
    assert rows.opponent_policy.shape == (rows.num_rows, A) and rows.opponent_policy.dtype == np.float32
    for gid, moves in ((7, played), (8, resigned)):
        mine = np.flatnonzero(rows.game_id == gid)
        by_move = {int(rows.move_number[r]): r for r in mine}
        for j, m in enumerate(moves):
            r = by_move.get(m["move_number"])
            if r is None:  # before the last blunder
                assert gid == 7 and j <= 1
                continue
            np.testing.assert_array_equal(rows.policy[r], m["policy"])
            if j + 1 < len(moves):  # the next position of the same game, even a cheap (all-zero) one
                np.testing.assert_array_equal(rows.opponent_policy[r], moves[j + 1]["policy"])
            else:  # the game's last position (two passes or a resignation): no target
                assert not rows.opponent_policy[r].any()
    # Row 2's next position was searched cheaply: an all-zero target too.
    r2 = np.flatnonzero((rows.game_id == 7) & (rows.move_number == 2))[0]
    assert not rows.opponent_policy[r2].any()
    # The unfinished game's rows come with the chunk that finishes it.
    rest = _game(9, 5, np.random.default_rng(5))[3:]
    later = _records({0: rest}, 2, 1)
    rows9, games9 = collector.add_chunk(later, generation=1)
    assert [g.game_id for g in games9] == [9] and rows9.num_rows == 5
    np.testing.assert_array_equal(rows9.opponent_policy[2], rest[0]["policy"])  # move 2 → move 3 across chunks
    np.testing.assert_array_equal(rows9.opponent_policy[1], unfinished[2]["policy"])
    # Switch off (the default): no targets at all.
    rows, _ = selfplay.GameCollector(RULES).add_chunk(records, generation=0)
    assert rows.opponent_policy is None


# ---------------------------------------------------------------------------
# Replay files and symmetries.


def _rows(rng, count, *, opponent=True):
    planes = (rng.random((count, N, N, 17)) < 0.3).astype(np.float32)
    planes[..., 4] *= 1 - planes[..., 0]
    planes[..., 16] = 1.0
    own = planes[..., 0].reshape(count, -1)
    policy = rng.random((count, A)).astype(np.float32)
    # An opponent target tied to the position: mass on the mover's stones,
    # and a pass entry that must stay in place.
    opp = np.concatenate([own, np.full((count, 1), 0.5, np.float32)], axis=1)
    opp[::3] = 0.0  # some rows without a target
    return replay.TrainingRows(
        planes=np.asarray(features.pack_planes(planes)),
        to_play=rng.choice(np.array([1, -1], np.int8), count),
        policy=policy / policy.sum(axis=1, keepdims=True),
        signed_komi=np.zeros(count, np.float32),
        z=np.zeros(count, np.float32),
        margin=np.zeros(count, np.float32),
        game_id=np.arange(count, dtype=np.int32),
        move_number=np.zeros(count, np.int32),
        is_branch=np.zeros(count, bool),
        generation=np.zeros(count, np.int32),
        valid=np.ones(count, bool),
        opponent_policy=(opp / np.maximum(opp.sum(axis=1, keepdims=True), 1e-9)) if opponent else None,
    )


def test_replay_round_trip_and_symmetric_samples(tmp_path):
    rng = np.random.default_rng(2)
    rows = _rows(rng, 40)
    buffer = replay.ReplayBuffer(tmp_path, N)
    buffer.write_generation(0, rows)
    with np.load(buffer.path(0)) as data:
        assert int(data["format_version"]) == 3 and "ownership" not in data.files
    back = buffer.read_generation(0)
    np.testing.assert_array_equal(back.opponent_policy, rows.opponent_policy)
    assert back.ownership is None

    buffer.load_window(0, 1)
    batch = buffer.sample(jax.random.key(0), 256)
    opp = np.asarray(batch["opponent_policy"])
    assert opp.shape == (256, A)
    own = np.asarray(batch["planes"])[..., 0].reshape(256, -1)
    has = opp.sum(axis=1) > 0
    assert has.any() and (~has).any()
    # Each target moved with its (transformed) stones; pass stayed put.
    expected = np.concatenate([own, np.full((256, 1), 0.5)], axis=1)
    expected /= expected.sum(axis=1, keepdims=True)
    np.testing.assert_allclose(opp[has], expected[has], rtol=1e-6)
    # ... with the policy's permutation: a row whose two targets are equal stays equal.
    same = rows.replace(opponent_policy=rows.policy)
    buffer.write_generation(1, same)
    buffer.load_window(1, 1)
    batch = buffer.sample(jax.random.key(1), 256)
    np.testing.assert_array_equal(np.asarray(batch["opponent_policy"]), np.asarray(batch["policy"]))
    originals = {r.tobytes() for r in same.policy}
    assert any(np.asarray(batch["policy"][b]).tobytes() not in originals for b in range(256))


def test_old_files_and_mixed_windows(tmp_path):
    rng = np.random.default_rng(3)
    buffer = replay.ReplayBuffer(tmp_path, N)
    # Rows without the targets are written exactly as before (format 1).
    buffer.write_generation(0, _rows(rng, 8, opponent=False))
    with np.load(buffer.path(0)) as data:
        assert int(data["format_version"]) == 1 and "opponent_policy" not in data.files
    assert buffer.read_generation(0).opponent_policy is None
    # A format-2 file (ownership, no opponent targets) reads with the field None.
    own_rows = replay.with_ownership(_rows(rng, 8, opponent=False))
    buffer.write_generation(1, own_rows)
    with np.load(buffer.path(1)) as data:
        assert int(data["format_version"]) == 2
    assert buffer.read_generation(1).opponent_policy is None
    # Format 3 with both target groups.
    both = replay.with_ownership(_rows(rng, 8))
    buffer.write_generation(2, both)
    back = buffer.read_generation(2)
    assert back.ownership is not None and back.opponent_policy is not None
    # One window over all three: missing targets become all-zero rows.
    window = buffer.load_window(2, 3)
    assert window.num_rows == 24 and not window.opponent_policy[:16].any()
    np.testing.assert_array_equal(window.opponent_policy[16:], both.opponent_policy)
    batch = buffer.sample(jax.random.key(0), 64)
    assert batch["opponent_policy"].shape == (64, A)
    # A window without any targets samples zero rows (no target).
    buffer.load_window(0, 1)
    assert not np.asarray(buffer.sample(jax.random.key(0), 8)["opponent_policy"]).any()
    # A format-3 file missing its opponent targets is corrupt, named.
    with np.load(buffer.path(2)) as data:
        arrays = {k: data[k] for k in data.files if k != "opponent_policy"}
    np.savez_compressed(buffer.path(2), **arrays)
    with pytest.raises(ValueError, match=r"gen_000002\.npz"):
        buffer.read_generation(2)


# ---------------------------------------------------------------------------
# Loss.


def test_loss_ignores_zero_rows_and_trains_the_head():
    rng = np.random.default_rng(4)
    logits = jnp.asarray(rng.normal(size=(6, A)), jnp.float32)
    target = rng.random((6, A)).astype(np.float32)
    target /= target.sum(axis=1, keepdims=True)
    zeroed = target.copy()
    zeroed[[1, 4]] = 0.0
    kept = np.array([0, 2, 3, 5])
    assert float(losses.policy_loss(logits, zeroed)) == pytest.approx(
        float(losses.policy_loss(logits[kept], target[kept]))
    )

    net = networks.NetworkSpec(N, 1, 4, global_pooling=True, opponent_policy_head=True).build()
    variables = jax.jit(lambda k: networks.init_network(net, k))(jax.random.key(0))
    batch = {
        "planes": jnp.asarray(rng.random((6, N, N, 17)) < 0.3, jnp.float32),
        "policy": jnp.full((6, A), 1.0 / A),
        "signed_komi": jnp.zeros(6),
        "z": jnp.full(6, 0.5),
        "margin": jnp.zeros(6),
        "ownership": jnp.zeros((6, N * N)),
        "ownership_mask": jnp.zeros(6),
        "opponent_policy": jnp.asarray(zeroed),
    }

    def loss(params, stats=variables["batch_stats"], net=net, weight=0.15):
        out, _ = networks.apply_network(net, {"params": params, "batch_stats": stats}, batch["planes"], train=True)
        return losses.total_loss(
            out,
            batch,
            params,
            value_head="sai",
            value_weight=2.8,
            l2_coef=0.0,
            board_size=N,
            opponent_policy_weight=weight,
        )

    (total, m), grads = jax.jit(jax.value_and_grad(loss, has_aux=True))(variables["params"])
    assert float(total) == pytest.approx(
        float(m["policy_loss"] + 2.8 * m["value_loss"] + 0.15 * m["opponent_policy_loss"]), rel=1e-5
    )
    assert float(m["opponent_policy_loss"]) > 0
    assert float(jnp.abs(grads["opponent_policy_dense"]["kernel"]).sum()) > 0  # the head learns
    assert float(jnp.abs(grads["block_0"]["gpool_dense"]["kernel"]).sum()) > 0  # so does the pooling
    # Weight 0: reported, not trained.
    _, m0 = jax.eval_shape(lambda p: loss(p, weight=0.0), variables["params"])
    assert "opponent_policy_loss" in m0
    # Without the head: no metric, and a weight is an error.
    plain = networks.NetworkSpec(N, 1, 4).build()
    plain_vars = jax.eval_shape(lambda k: networks.init_network(plain, k), jax.random.key(0))
    _, m = jax.eval_shape(lambda v: loss(v["params"], v["batch_stats"], plain, 0.0), plain_vars)
    assert "opponent_policy_loss" not in m
    with pytest.raises(ValueError, match="opponent policy head"):
        jax.eval_shape(lambda v: loss(v["params"], v["batch_stats"], plain, 0.15), plain_vars)


# ---------------------------------------------------------------------------
# Config.


def test_config_switches_validation():
    config = config_lib.load_config(TINY)
    assert config.network.global_pooling is False and config.network.opponent_policy_head is False
    assert config.training.opponent_policy_weight == 0.0
    spec = training.network_spec(config, 0)
    assert not spec.global_pooling and not spec.opponent_policy_head
    assert not config_lib.records_opponent_policy(config)
    config.training.opponent_policy_weight = 0.15
    with pytest.raises(ValueError, match=r"training\.opponent_policy_weight.*network\.opponent_policy_head"):
        config_lib.validate(config, device_count=1)
    config.network.opponent_policy_head = True
    config.network.global_pooling = True
    config_lib.validate(config, device_count=1)
    spec = training.network_spec(config, 0)
    assert spec.global_pooling and spec.opponent_policy_head and config_lib.records_opponent_policy(config)
    config.training.opponent_policy_weight = -0.1
    with pytest.raises(ValueError, match=r"training\.opponent_policy_weight"):
        config_lib.validate(config, device_count=1)
    # A config from before the fields existed validates, with both off.
    config = config_lib.load_config(TINY)
    del config.network["global_pooling"], config.network["opponent_policy_head"]
    del config.training["opponent_policy_weight"]
    config_lib.validate(config, device_count=1)
    spec = training.network_spec(config, 0)
    assert not spec.global_pooling and not spec.opponent_policy_head
    assert not config_lib.records_opponent_policy(config)
