"""Tests of the optional ownership auxiliary target (KataGo's, adapted to SAI):
the head, the per-point Tromp–Taylor ownership, the self-play targets
(colour flip, resigned games masked), the replay files and their symmetries,
the loss, the config switch, and one 5×5 pipeline generation with the head on.

Everything is 5×5 with tiny nets; the pipeline run shares configs/tiny.py's
shapes.
"""

import json
import os

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from conftest import TINY, empty_step_fields

from saijax import gtp
from saijax.core import checkpoints, features, go, networks
from saijax.learn import config as config_lib
from saijax.learn import losses, pipeline, replay, selfplay, training
from saijax.play import players

N = 5
RULES = go.GoRules(N, max_moves=50)


def _planes_to_board(planes):
    """float [.., N, N, 17] → (own stones, opponent stones) [.., N*N]."""
    p = np.asarray(planes)
    return p[..., 0].reshape(p.shape[:-3] + (-1,)), p[..., 4].reshape(p.shape[:-3] + (-1,))


# ---------------------------------------------------------------------------
# Network and spec.


def test_network_outputs_with_and_without_head():
    # Shapes only: traced, not compiled.
    x = jax.ShapeDtypeStruct((3, N, N, 17), jnp.float32)
    for head in (False, True):
        spec = networks.NetworkSpec(N, 0, 4, ownership_head=head)
        net = spec.build()
        assert net.spec == spec
        variables = jax.eval_shape(lambda k, net=net: networks.init_network(net, k), jax.random.key(0))
        assert ("ownership_out" in variables["params"]) == head
        out, _ = jax.eval_shape(lambda v, x, net=net: networks.apply_network(net, v, x), variables, x)
        assert out.policy_logits.shape == (3, N * N + 1) and out.alpha.shape == (3,)
        if head:
            assert out.ownership.shape == (3, N * N) and out.ownership.dtype == jnp.float32
        else:
            assert out.ownership is None
        _, stats = jax.eval_shape(lambda v, x, net=net: networks.apply_network(net, v, x, train=True), variables, x)
        assert ("ownership_bn" in stats) == head


def test_spec_dicts_old_and_new():
    old = dict(board_size=N, blocks=1, filters=8, value_head="sai", beta_scale=0.4)
    spec = networks.NetworkSpec.from_dict(old)  # a checkpoint written before the field existed
    assert spec.ownership_head is False and spec == networks.NetworkSpec(N, 1, 8)
    assert spec.to_dict() == old  # unchanged dict without the head
    with_head = networks.NetworkSpec(N, 1, 8, ownership_head=True)
    d = json.loads(json.dumps(with_head.to_dict()))
    assert d == {**old, "ownership_head": True}
    assert networks.NetworkSpec.from_dict(d) == with_head and with_head.build().ownership_head
    with pytest.raises(ValueError, match="ownership_head"):
        networks.NetworkSpec(N, 1, 8, ownership_head=1)


def test_config_switch_validation():
    config = config_lib.load_config(TINY)
    assert config.network.ownership_head is False
    assert config.training.ownership_weight == 0.0 and config.training.score_aux_weight == 0.0
    assert not config_lib.records_ownership(config)
    assert not training.network_spec(config, 0).ownership_head
    config.training.ownership_weight = 1.5
    with pytest.raises(ValueError, match=r"training\.ownership_weight.*network\.ownership_head"):
        config_lib.validate(config, device_count=1)
    config.network.ownership_head = True
    config_lib.validate(config, device_count=1)
    assert config_lib.records_ownership(config) and training.network_spec(config, 0).ownership_head
    config.network.ownership_head = False
    config.training.ownership_weight = 0.0
    config.training.score_aux_weight = 1.0
    config_lib.validate(config, device_count=1)
    assert config_lib.records_ownership(config)
    # A config from before the fields existed validates, with everything off.
    config = config_lib.load_config(TINY)
    del config.network["ownership_head"], config.training["ownership_weight"], config.training["score_aux_weight"]
    config_lib.validate(config, device_count=1)
    assert not config_lib.records_ownership(config) and not training.network_spec(config, 0).ownership_head


# ---------------------------------------------------------------------------
# Tromp–Taylor ownership.


def test_ownership_matches_area_score_on_random_positions():
    rng = np.random.default_rng(0)
    boards = rng.choice(np.array([0, 1, -1], np.int8), size=(24, N * N), p=[0.5, 0.25, 0.25])
    # A hand-checked position: black wall on column 1, white on column 3.
    # Column 0 reaches only black, column 4 only white, column 2 both (dame).
    wall = np.zeros((N, N), np.int8)
    wall[:, 1], wall[:, 3] = 1, -1
    boards = np.concatenate([boards, wall.reshape(1, -1)])
    # ownership and area_score read only the board.
    empty = go.init(RULES, 0.5)
    states = jax.tree_util.tree_map(lambda x: jnp.broadcast_to(x, (len(boards),) + x.shape), empty)
    states = states.replace(board=jnp.asarray(boards, empty.board.dtype))
    own, score = jax.jit(jax.vmap(lambda s: (go.ownership(RULES, s), go.area_score(RULES, s))))(states)
    own, score = np.asarray(own), np.asarray(score)
    assert set(np.unique(own)) <= {-1, 0, 1}
    np.testing.assert_array_equal(own.sum(axis=1), score)
    np.testing.assert_array_equal(own[boards != 0], boards[boards != 0])  # stones own their points
    o = own[-1].reshape(N, N)
    np.testing.assert_array_equal(o[0], [1, 1, 0, -1, -1])
    assert (o == o[0]).all()


# ---------------------------------------------------------------------------
# Self-play targets (hand-made records for GameCollector).


def _records(games, t_len, b):
    """A [t_len, b] StepRecord: games = {slot: [per-move dicts]}; others inactive."""

    fields = empty_step_fields(t_len, b, N, ownership=True)
    for i, moves in games.items():
        for t, values in enumerate(moves):
            fields["active"][t, i] = True
            for name, value in values.items():
                fields[name][t, i] = value
    return selfplay.StepRecord(**fields)


def _game(gid, moves, final, *, resigned=False):
    """Moves alternate Black, White, ...; the last one ends the game with
    ownership `final` (black's view) and margin sum(final) − 0.5."""
    out = []
    for m in range(moves):
        last = m == moves - 1
        out.append(
            dict(
                game_id=gid,
                move_number=m,
                to_play=1 if m % 2 == 0 else -1,
                komi=0.5,
                signed_komi=-0.5 if m % 2 == 0 else 0.5,
                action=m,
                finished=last,
                resigned=resigned and last,
                winner=int(np.sign(final.sum() - 0.5)) if last else 0,
                margin=float(final.sum() - 0.5) if last else 0.0,
                final_ownership=final if last else np.zeros_like(final),
                length=moves,
            )
        )
    return out


def test_collector_targets_flip_colour_and_mask_resigned_games():
    rng = np.random.default_rng(1)
    final = rng.choice([-1, 0, 1], N * N).astype(np.int8)
    records = _records({0: _game(3, 3, final), 1: _game(4, 2, final, resigned=True)}, 3, 2)
    rows, games = selfplay.GameCollector(RULES).add_chunk(records, generation=0)
    assert sorted(g.game_id for g in games) == [3, 4]
    assert rows.ownership.shape == (5, N * N) and rows.ownership.dtype == np.int8
    for r in range(rows.num_rows):
        if rows.game_id[r] == 3:  # played out: the final ownership from the mover's view
            assert rows.ownership_mask[r]
            np.testing.assert_array_equal(rows.ownership[r], final * rows.to_play[r])
            # Its points add up to the mover's margin, komi included.
            assert rows.ownership[r].sum() + rows.signed_komi[r] == rows.margin[r]
        else:  # resigned: unknown final ownership
            assert not rows.ownership_mask[r] and not rows.ownership[r].any()
    white_rows = (rows.game_id == 3) & (rows.to_play == -1)
    np.testing.assert_array_equal(rows.ownership[white_rows][0], -final)
    # Records without ownership (the switch off) give rows without targets.
    plain = records.replace(final_ownership=None)
    rows, _ = selfplay.GameCollector(RULES).add_chunk(plain, generation=0)
    assert rows.ownership is None and rows.ownership_mask is None
    filled = replay.with_ownership(rows)
    assert filled.ownership.shape == (5, N * N) and not filled.ownership_mask.any()


# ---------------------------------------------------------------------------
# Replay files and symmetries.


def _rows(rng, count):
    planes = (rng.random((count, N, N, 17)) < 0.3).astype(np.float32)
    planes[..., 4] *= 1 - planes[..., 0]  # no point holds two stones
    planes[..., 16] = 1.0
    own, opp = _planes_to_board(planes)
    policy = rng.random((count, N * N + 1)).astype(np.float32)
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
        # A target tied to the position: +1 on the mover's stones, -1 on the opponent's.
        ownership=(own - opp).astype(np.int8),
        ownership_mask=np.arange(count) % 2 == 0,
    )


def test_replay_round_trip_and_symmetric_samples(tmp_path):
    rng = np.random.default_rng(2)
    rows = _rows(rng, 40)
    buffer = replay.ReplayBuffer(tmp_path, N)
    buffer.write_generation(0, rows)
    back = buffer.read_generation(0)
    np.testing.assert_array_equal(back.ownership, rows.ownership)
    np.testing.assert_array_equal(back.ownership_mask, rows.ownership_mask)

    buffer.load_window(0, 1)
    batch = buffer.sample(jax.random.key(0), 256)
    assert batch["ownership"].shape == (256, N * N) and batch["ownership_mask"].shape == (256,)
    own, opp = _planes_to_board(batch["planes"])
    # Each sample's ownership moved with its (transformed) stones.
    np.testing.assert_array_equal(np.asarray(batch["ownership"]), own - opp)
    # And the samples really were transformed: several symmetries per row.
    seen = {}
    for b in range(256):
        seen.setdefault(np.asarray(batch["ownership"][b]).tobytes(), None)
    assert len(seen) > 40
    # The mask travels with its row: masked rows have even game ids (policy row sums pin the row).
    assert set(np.unique(np.asarray(batch["ownership_mask"]))) == {0.0, 1.0}


def test_old_replay_files_read_without_targets(tmp_path):
    rng = np.random.default_rng(3)
    buffer = replay.ReplayBuffer(tmp_path, N)
    buffer.write_generation(0, _rows(rng, 8))
    path = buffer.path(0)
    with np.load(path) as data:
        arrays = {k: data[k] for k in data.files if k not in ("ownership", "ownership_mask")}
    arrays["format_version"] = np.asarray(1, np.int32)
    np.savez_compressed(path, **arrays)  # a format-1 file, as written before the targets existed
    old = buffer.read_generation(0)
    assert old.ownership is None and old.ownership_mask is None and old.num_rows == 8
    # Sampling rows without targets gives zero targets, mask 0.
    buffer.load_window(0, 1)
    batch = buffer.sample(jax.random.key(0), 8)
    assert batch["ownership"].shape == (8, N * N) and not np.asarray(batch["ownership_mask"]).any()
    # Rows without targets are written exactly as before (format 1).
    buffer.write_generation(2, old)
    with np.load(buffer.path(2)) as data:
        assert "ownership" not in data.files and int(data["format_version"]) == 1
    # Old and new generations load into one window.
    buffer.write_generation(1, _rows(rng, 8))
    window = buffer.load_window(1, 2)
    assert window.num_rows == 16 and window.ownership_mask.sum() == 4 and not window.ownership[:8].any()
    arrays["format_version"] = np.asarray(99, np.int32)
    np.savez_compressed(path, **arrays)
    with pytest.raises(ValueError, match=r"gen_000000\.npz.*format 99"):
        buffer.read_generation(0)
    # A format-2 file missing the ownership arrays is corrupt, named.
    arrays["format_version"] = np.asarray(2, np.int32)
    np.savez_compressed(path, **arrays)
    with pytest.raises(ValueError, match=r"gen_000000\.npz"):
        buffer.read_generation(0)


# ---------------------------------------------------------------------------
# Loss.


def test_ownership_loss_zero_when_perfect_masked_and_gradient_flows():
    rng = np.random.default_rng(4)
    target = rng.choice([-1.0, 0.0, 1.0], (6, N * N)).astype(np.float32)
    mask = np.array([1, 1, 0, 1, 0, 1], np.float32)
    assert float(losses.ownership_loss(target, target, mask)) == 0.0
    wrong = np.where(mask[:, None] > 0, target, -target)  # errors only on masked-out rows
    assert float(losses.ownership_loss(wrong, target, mask)) == 0.0
    assert float(losses.ownership_loss(np.zeros_like(target), target, mask)) == pytest.approx(
        np.mean(np.square(target[mask > 0]))
    )
    assert float(losses.ownership_loss(target, target, np.zeros(6, np.float32))) == 0.0
    # Score auxiliary: zero when α + k_s is the final margin.
    alpha, k, margin = np.array([3.0, -2.0]), np.array([0.5, -0.5]), np.array([3.5, 1.0])
    assert float(losses.score_aux_loss(alpha, k, margin, np.array([1.0, 0.0]), N)) == 0.0
    assert float(losses.score_aux_loss(alpha, k, margin, np.array([1.0, 1.0]), N)) == pytest.approx((3.5 / 25) ** 2 / 2)

    net = networks.NetworkSpec(N, 0, 4, ownership_head=True).build()
    variables = jax.jit(lambda k: networks.init_network(net, k))(jax.random.key(0))
    batch = {
        "planes": jnp.asarray(rng.random((6, N, N, 17)) < 0.3, jnp.float32),
        "policy": jnp.full((6, N * N + 1), 1.0 / (N * N + 1)),
        "signed_komi": jnp.zeros(6),
        "z": jnp.full(6, 0.5),
        "margin": jnp.zeros(6),
        "ownership": jnp.asarray(target),
        "ownership_mask": jnp.asarray(mask),
    }

    def loss(params, stats=variables["batch_stats"], net=net, weight=1.5, aux=2.0):
        out, _ = networks.apply_network(net, {"params": params, "batch_stats": stats}, batch["planes"], train=True)
        return losses.total_loss(
            out,
            batch,
            params,
            value_head="sai",
            value_weight=2.8,
            l2_coef=0.0,
            board_size=N,
            ownership_weight=weight,
            score_aux_weight=aux,
        )

    (total, m), grads = jax.jit(jax.value_and_grad(loss, has_aux=True))(variables["params"])
    parts = m["policy_loss"] + 2.8 * m["value_loss"] + 1.5 * m["ownership_loss"] + 2.0 * m["score_aux_loss"]
    assert float(total) == pytest.approx(float(parts), rel=1e-5)
    assert float(m["ownership_loss"]) > 0
    assert float(jnp.abs(grads["ownership_out"]["kernel"]).sum()) > 0  # the head learns
    # Weight 0: still reported (the head exists), no score metric.
    _, m0 = jax.eval_shape(lambda p: loss(p, weight=0.0, aux=0.0), variables["params"])
    assert "ownership_loss" in m0 and "score_aux_loss" not in m0
    # Without the head: no ownership metric, and a weight is an error.
    plain = networks.NetworkSpec(N, 0, 4).build()
    plain_vars = jax.eval_shape(lambda k: networks.init_network(plain, k), jax.random.key(0))
    _, m = jax.eval_shape(lambda v: loss(v["params"], v["batch_stats"], plain, 0.0, 0.0), plain_vars)
    assert "ownership_loss" not in m
    with pytest.raises(ValueError, match="ownership head"):
        jax.eval_shape(lambda v: loss(v["params"], v["batch_stats"], plain, 1.0, 0.0), plain_vars)


# ---------------------------------------------------------------------------
# One pipeline generation with the switch on.


@pytest.mark.slow  # about 40-65 s: in `make test-slow` (CI runs both)
def test_pipeline_generation_with_the_learning_switches(tmp_path):
    config = config_lib.load_config(TINY)
    config.generations = 1
    config.selfplay.games_per_generation = 8
    config.selfplay.sgf_games_per_generation = 0
    config.selfplay.no_resign_fraction = 0.5  # some games played out, some maybe resigned
    config.network.ownership_head = True
    config.training.ownership_weight = 1.5
    config.training.score_aux_weight = 1.0
    # KataGo's global pooling and opponent-reply policy target (kata_switches_test.py).
    config.network.global_pooling = True
    config.network.opponent_policy_head = True
    config.training.opponent_policy_weight = 0.15
    # The other learning switches ride along: noise in the opening only, and
    # playout caps (half the moves searched with 1 simulation instead of 4).
    config.selfplay.noise_moves = 2
    config.selfplay.fast_simulations = 1
    config.selfplay.full_search_prob = 0.5
    # Weight averaging, and the steps set from the new rows (half a sample each).
    config.training.ema_decay = 0.9
    config.training.samples_per_new_row = 0.5
    workdir = str(tmp_path / "run")
    log = []
    pipeline.train_and_evaluate(config, workdir, progress=False, log=log.append)
    with open(os.path.join(workdir, "metrics.jsonl")) as f:
        (metrics,) = [json.loads(line) for line in f]
    # Compute: each lockstep move of the B slots costs 4 + 1 evaluations in a
    # full search, 1 + 1 in a cheap one.
    full = metrics["selfplay_full_search_fraction"]
    assert 0 < full < 1
    moves = metrics["selfplay_evaluations"] / config.selfplay.batch_size / (2 + 3 * full)
    assert abs(moves - round(moves)) < 1e-6 and round(moves) % config.selfplay.chunk_moves == 0
    assert np.isfinite(metrics["train_ownership_loss"]) and metrics["train_ownership_loss"] >= 0
    assert np.isfinite(metrics["train_score_aux_loss"])
    assert np.isfinite(metrics["train_opponent_policy_loss"]) and metrics["train_opponent_policy_loss"] > 0
    assert "ownership" in log[-1]

    rows = replay.ReplayBuffer(os.path.join(workdir, "replay"), N).read_generation(0)
    # Cheap searches give no policy target: their rows are all zeros.
    sums = rows.policy.sum(axis=1)
    assert (sums == 0).any() and (sums > 0).any() and (np.abs(sums[sums > 0] - 1) < 1e-4).all()
    played = rows.ownership_mask
    assert played.any()
    # Played-out rows: the target's points add up to the mover's final margin.
    np.testing.assert_allclose(
        rows.ownership[played].sum(axis=1) + rows.signed_komi[played], rows.margin[played], atol=1e-4
    )
    assert not rows.ownership[~played].any()
    # Opponent targets: the policy of the next row of the same game (a game's
    # rows are stored together, in order), zeros after its last move.
    assert rows.opponent_policy.shape == rows.policy.shape
    for r in range(rows.num_rows):
        if r + 1 < rows.num_rows and rows.game_id[r + 1] == rows.game_id[r]:
            assert rows.move_number[r + 1] == rows.move_number[r] + 1
            np.testing.assert_array_equal(rows.opponent_policy[r], rows.policy[r + 1])
        else:
            assert not rows.opponent_policy[r].any()

    # The reuse ratio: steps from the new rows, and the metric from the steps.
    steps = max(1, round(0.5 * rows.num_rows / config.training.batch_size))
    assert metrics["train_steps"] == steps
    assert metrics["train_samples_per_new_row"] == pytest.approx(steps * config.training.batch_size / rows.num_rows)
    # The rate is set per generation then (constant here).
    assert metrics["train_learning_rate"] == pytest.approx(config.training.learning_rate)

    # Resuming with the head switched off is refused, naming the field.
    config.network.ownership_head = False
    config.training.ownership_weight = 0.0
    config.network.global_pooling = config.network.opponent_policy_head = False
    config.training.opponent_policy_weight = 0.0
    with pytest.raises(checkpoints.CheckpointError, match=r"ownership head.*network\.ownership_head"):
        pipeline.train_and_evaluate(config, workdir, progress=False, log=lambda *_: None)

    loaded = checkpoints.load_network(workdir)
    assert loaded.metadata["ema_net"]  # the averaged net is the one that plays
    assert loaded.spec.ownership_head and loaded.spec.to_dict()["ownership_head"] is True
    assert loaded.spec.global_pooling and loaded.spec.opponent_policy_head
    player = players.load_player(workdir)
    assert player.net.ownership_head

    # GTP: kata-analyze ... ownership true ends each line with the root's
    # N² ownership values, player to move's view (KataGo's format).
    engine = gtp.GtpEngine(player, visits=2, komi=0.5, seed=0)
    engine.handle("play b C3")  # White to move
    line = engine.handle("kata-analyze ownership true")
    assert line.startswith("=\ninfo move ")
    values = [float(v) for v in line.split(" ownership ")[1].split()]
    state = engine.state
    assert int(state.to_play) == -1
    np.testing.assert_allclose(values, players.root_ownership(player, engine.rules, state), atol=1e-6)
    assert len(values) == N * N and all(-1 <= v <= 1 for v in values)
    assert " ownership " not in engine.handle("kata-analyze ownership false")
    assert " ownership " not in engine.handle("kata-analyze")
    # A net without the head accepts the request and emits no ownership.
    assert players.root_ownership(players.random_player(N, blocks=0, filters=4), engine.rules, state) is None
