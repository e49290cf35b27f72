"""Tests for saijax.core.widen and training.widen_network: a net grown by
widening computes what the old one did, in both batch-norm modes, with every
head; the optimizer's state carries over; training then moves the new
weights; what cannot be widened is refused with the field named."""

import functools

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from conftest import training_config

from saijax.core import networks, widen
from saijax.learn import config as config_lib
from saijax.learn import training

N = 5


def _spec(blocks, filters, **kw):
    return networks.NetworkSpec(board_size=N, blocks=blocks, filters=filters, **kw)


def _perturbed(variables, seed):
    """Initial variables moved off their defaults (BN averages not 0 and 1,
    zero-initialised pooling weights not zero), so that a copy in the wrong
    place shows."""
    rng = np.random.default_rng(seed)
    out = jax.tree_util.tree_map(lambda x: np.asarray(x) + 0.2 * rng.standard_normal(x.shape, np.float32), variables)
    out["batch_stats"] = jax.tree_util.tree_map(lambda x: np.abs(x) + 0.5, out["batch_stats"])
    return out


def _init(spec, seed):
    """The net's initial variables, initialised in one jitted program (eager
    initialisation compiles every primitive: minutes on a busy CPU)."""
    return jax.jit(functools.partial(networks.init_network, spec.build()))(jax.random.key(seed))


def _planes(value_head, batch=6, seed=2):
    rng = np.random.default_rng(seed)
    return (rng.random((batch, N, N, networks.input_planes(value_head))) < 0.3).astype(np.float32)


HEADS = dict(ownership_head=True, global_pooling=True, opponent_policy_head=True)
WINRATE = dict(value_head="winrate", global_pooling=True)


@pytest.mark.parametrize(
    "old, new",
    [
        (_spec(3, 4, **HEADS), _spec(4, 8, **HEADS)),  # wider and deeper, every head, pooling
        (_spec(1, 4), _spec(3, 6)),  # no pooling: blocks 1 -> 3, filters 4 -> 6
        (_spec(3, 4, **WINRATE), _spec(3, 9, **WINRATE)),  # pooling branch 1 -> 2 channels
        (_spec(2, 8, value_head="score"), _spec(2, 8, value_head="score")),  # no change: a copy
    ],
)
def test_the_widened_net_computes_what_the_old_one_did(old, new):
    old_net, new_net = old.build(), new.build()
    old_vars = _perturbed(_init(old, 0), 1)
    fresh = _init(new, 3)
    grown = widen.widen_variables(old_vars, old, new, fresh)
    x = _planes(old.value_head)
    for train in (False, True):
        # Jitted: op-by-op (eager) application compiles every primitive, minutes on a busy CPU.
        a, _ = jax.jit(functools.partial(networks.apply_network, old_net, train=train))(old_vars, x)
        b, _ = jax.jit(functools.partial(networks.apply_network, new_net, train=train))(grown, x)
        for field in ("policy_logits", "alpha", "beta", "value", "ownership", "opponent_policy_logits"):
            va, vb = getattr(a, field), getattr(b, field)
            if va is None:
                assert vb is None
                continue
            np.testing.assert_allclose(np.asarray(vb), np.asarray(va), atol=2e-5, rtol=1e-5, err_msg=f"{field} {train}")
    # The new channels are not copies of the old: they start from the fresh net.
    if new.filters > old.filters:
        kernel = np.asarray(grown["params"]["block_0"]["conv1"]["kernel"])
        np.testing.assert_array_equal(kernel[..., old.filters :, : old.filters], 0.0)  # new into old: 0
        np.testing.assert_array_equal(
            kernel[..., new.filters - 1], np.asarray(fresh["params"]["block_0"]["conv1"]["kernel"])[..., -1]
        )
        assert np.any(kernel[..., new.filters - 1] != 0)


def _steps(net, config, state, n, seed):
    step = training.make_train_step(net, N, config, optimizer=training.make_optimizer(config))
    rng = np.random.default_rng(seed)
    metrics = None
    for _ in range(n):
        batch = {
            "planes": _planes("sai", batch=32, seed=int(rng.integers(1 << 30))),
            "policy": np.eye(N * N + 1, dtype=np.float32)[rng.integers(0, N * N + 1, 32)],
            "signed_komi": rng.choice([-7.5, 0.5, 7.5], 32).astype(np.float32),
            "z": rng.choice([0.0, 1.0], 32).astype(np.float32),
            "margin": rng.normal(0, 8, 32).astype(np.float32),
        }
        state, metrics = step(state, batch)
    return state, metrics


def test_widen_network_carries_the_optimizer_and_the_new_weights_learn():
    config = training_config()
    old, new = _spec(1, 4, global_pooling=True), _spec(1, 8, global_pooling=True)
    old_net, new_net = old.build(), new.build()
    tx = training.make_optimizer(config)
    state = training.create_train_state(old_net, tx, jax.random.key(0), variables=_init(old, 0))
    # Adam three steps in: moments that are not zero (set, not trained, to compile one train step only).
    adam = state.opt_state.inner_state[0]
    adam = adam._replace(
        count=jnp.asarray(3, adam.count.dtype),
        mu=jax.tree_util.tree_map(lambda m: m + 0.01, adam.mu),
        nu=jax.tree_util.tree_map(lambda v: v + 1e-4, adam.nu),
    )
    inner = (adam, *state.opt_state.inner_state[1:])
    state = state.replace(step=jnp.asarray(3, jnp.int32), opt_state=state.opt_state._replace(inner_state=inner))
    grown = training.widen_network(state, old, new_net, training.make_optimizer(config), jax.random.key(1))
    assert int(grown.step) == int(state.step) == 3
    old_adam, new_adam = state.opt_state.inner_state[0], grown.opt_state.inner_state[0]
    assert int(new_adam.count) == int(old_adam.count) == 3
    mu_old = np.asarray(old_adam.mu["block_0"]["conv1"]["kernel"])
    mu_new = np.asarray(new_adam.mu["block_0"]["conv1"]["kernel"])
    np.testing.assert_array_equal(mu_new[..., :4, :4], mu_old)
    np.testing.assert_array_equal(mu_new[..., 4:], 0.0)
    x = _planes("sai")
    a = jax.jit(old_net.apply, static_argnames="train")(state.variables, x, train=False)
    b = jax.jit(new_net.apply, static_argnames="train")(grown.variables, x, train=False)
    np.testing.assert_allclose(np.asarray(b.alpha), np.asarray(a.alpha), atol=1e-5)
    # One step: the weights from new channels into old ones leave zero.
    trained, metrics = _steps(new_net, config, grown, 1, seed=5)
    assert np.isfinite(float(metrics["total_loss"]))
    kernel = np.asarray(trained.params["block_0"]["conv1"]["kernel"])
    assert np.any(kernel[..., 4:, :4] != 0)


def test_widen_network_widens_the_weight_average():
    config = training_config()
    old, new = _spec(1, 8), _spec(2, 8)
    tx = training.make_optimizer(config)
    state = training.create_train_state(old.build(), tx, jax.random.key(0), variables=_init(old, 0), ema=True)
    grown = training.widen_network(state, old, new.build(), tx, jax.random.key(1))
    assert isinstance(grown, training.EmaTrainState)
    assert "block_1" in grown.ema["params"]
    np.testing.assert_array_equal(np.asarray(grown.ema["params"]["block_1"]["bn2"]["scale"]), 0.0)


@pytest.mark.parametrize(
    "old, new, match",
    [
        (_spec(2, 16), _spec(2, 8), "cannot shrink a net: 2x16 -> 2x8"),
        (_spec(3, 8), _spec(2, 8), "cannot shrink"),
        (_spec(2, 8), _spec(2, 16, value_head="winrate"), "value_head goes 'sai' -> 'winrate'"),
        (_spec(2, 8), _spec(2, 16, ownership_head=True), "ownership_head goes False -> True"),
        (_spec(2, 8, global_pooling=True), _spec(3, 8, global_pooling=True), r"moves global pooling from blocks \(1"),
    ],
)
def test_what_cannot_be_widened_is_refused(old, new, match):
    with pytest.raises(ValueError, match=match):
        widen.check_widening(old, new)
    empty = {"params": {}, "batch_stats": {}}
    with pytest.raises(ValueError, match=match):
        widen.widen_variables(empty, old, new, empty)


def test_config_checks_training_growth():
    config = config_lib.load_config("configs/tiny.py")
    with config.unlocked():
        config.training.growth = "net2net"
    with pytest.raises(ValueError, match=r"training.growth must be one of \('retrain', 'widen'\), got 'net2net'"):
        config_lib.validate(config)
    with config.unlocked():
        config.training.growth = "widen"
        config.schedules.network = ((0, 2, 16), (5, 2, 8))
    with pytest.raises(ValueError, match=r"training.growth 'widen' and schedules.network .*cannot shrink"):
        config_lib.validate(config)
    with config.unlocked():
        config.schedules.network = ((0, 2, 8), (5, 3, 16))
    config_lib.validate(config)
    with config.unlocked():
        config.training.growth = "retrain"
        config.schedules.network = ((0, 2, 16), (5, 2, 8))
    config_lib.validate(config)  # retraining may shrink
