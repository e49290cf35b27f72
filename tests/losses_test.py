"""Tests for saijax.learn.losses."""

import functools
from typing import NamedTuple

import flax.linen as nn
import jax
import jax.numpy as jnp
import numpy as np
import pytest

from saijax.core import networks
from saijax.learn import losses


class _Outputs(NamedTuple):
    policy_logits: jax.Array  # [B, A]
    alpha: jax.Array  # [B]
    beta: jax.Array  # [B]
    value: jax.Array  # [B]


class _TinyNet(nn.Module):
    """Conv, batch norm and dense: kernels, biases and BN scale/bias."""

    @nn.compact
    def __call__(self, x, train=False):
        x = nn.Conv(3, (3, 3))(x)
        x = nn.BatchNorm(use_running_average=not train)(x)
        x = nn.relu(x)
        return nn.Dense(5)(x.reshape(x.shape[0], -1))


@pytest.fixture(scope="module")
def tiny_variables():
    return _TinyNet().init(jax.random.key(0), jnp.zeros((1, 3, 3, 2)))


def test_policy_loss_hand_computed():
    logits = jnp.array([[1.0, 2.0, 3.0], [0.0, 0.0, 0.0]])
    target = jnp.array([[0.0, 0.5, 0.5], [1.0, 0.0, 0.0]])
    log_z = np.log(np.exp(1.0) + np.exp(2.0) + np.exp(3.0))
    row0 = -(0.5 * (2.0 - log_z) + 0.5 * (3.0 - log_z))
    row1 = np.log(3.0)
    np.testing.assert_allclose(losses.policy_loss(logits, target), (row0 + row1) / 2, rtol=1e-6)


def test_rows_without_a_policy_target_are_left_out():
    """Playout caps: a cheap search's row has an all-zero policy; the loss and the
    accuracy are those of the other rows, and the zero rows get no gradient."""
    logits = jnp.array([[1.0, 2.0, 3.0], [0.0, 0.0, 0.0], [5.0, -1.0, 0.0]])
    target = jnp.array([[0.0, 0.5, 0.5], [0.0, 0.0, 0.0], [1.0, 0.0, 0.0]])
    kept = jnp.array([0, 2])
    loss, grad = jax.value_and_grad(losses.policy_loss)(logits, target)
    np.testing.assert_allclose(loss, losses.policy_loss(logits[kept], target[kept]), rtol=1e-6)
    np.testing.assert_array_equal(grad[1], 0.0)
    assert float(losses.policy_loss(logits, jnp.zeros_like(target))) == 0.0


def test_policy_loss_ignores_illegal_logits():
    logits = jnp.array([[-jnp.inf, 0.0, 1.0, -1e30], [2.0, -jnp.inf, 0.0, 0.0]])
    target = jnp.array([[0.0, 0.25, 0.75, 0.0], [1.0, 0.0, 0.0, 0.0]])
    loss, grad = jax.value_and_grad(losses.policy_loss)(logits, target)
    assert np.isfinite(loss)
    assert np.all(np.isfinite(grad))
    legal = jnp.array([[False, True, True, False], [True, False, True, True]])
    want = losses.policy_loss(jnp.where(legal, logits, -1e9), target)
    np.testing.assert_allclose(loss, want, rtol=1e-6)


def test_value_loss_sai_is_quarter_of_pm1_mse():
    """0.7 · MSE(tanh(β/2·(α+k)), 2z−1) = 2.8 · MSE(τ(k), z) (docs/design.md §10)."""
    alpha = jnp.array([3.0, -2.0, 0.0, 10.0])
    beta = jnp.array([0.5, 1.0, 0.2, 0.05])
    k = jnp.array([-7.5, 7.5, 0.5, -0.5])
    z = jnp.array([1.0, 0.0, 0.5, 1.0])
    pm1 = jnp.mean(jnp.square(jnp.tanh(beta / 2 * (alpha + k)) - (2 * z - 1)))
    np.testing.assert_allclose(2.8 * losses.value_loss_sai(alpha, beta, k, z), 0.7 * pm1, rtol=1e-5)


def _sai_grads(alpha, beta, k, z):
    args = [jnp.array([v], jnp.float32) for v in (alpha, beta, k, z)]
    return jax.grad(losses.value_loss_sai, argnums=(0, 1))(*args)


def test_value_loss_sai_gradient_signs():
    # A win not yet certain: raising α (or β, when α + k > 0) lowers the loss.
    g_alpha, g_beta = _sai_grads(alpha=2.0, beta=0.5, k=-0.5, z=1.0)
    assert g_alpha < 0 and g_beta < 0
    # A win predicted as a loss (α + k < 0): raising β makes it worse.
    g_alpha, g_beta = _sai_grads(alpha=-3.0, beta=0.5, k=0.5, z=1.0)
    assert g_alpha < 0 and g_beta > 0
    # A loss predicted as a win: raising α or β makes it worse.
    g_alpha, g_beta = _sai_grads(alpha=4.0, beta=0.5, k=-0.5, z=0.0)
    assert g_alpha > 0 and g_beta > 0
    # A draw: the loss pulls τ(k) to ½, so α + k towards 0 and β down.
    g_alpha, g_beta = _sai_grads(alpha=4.0, beta=0.5, k=-0.5, z=0.5)
    assert g_alpha > 0 and g_beta > 0


def test_value_loss_sai_finite_at_extremes():
    alpha = jnp.array([-3610.0, 3610.0, 0.0, 3610.0])
    beta = jnp.array([1e4, 1e4, 1e-6, 1e-6])
    k = jnp.array([7.5, -7.5, 0.0, 7.5])
    z = jnp.array([1.0, 0.0, 0.5, 1.0])
    loss, grads = jax.value_and_grad(losses.value_loss_sai, argnums=(0, 1))(alpha, beta, k, z)
    assert np.isfinite(loss)
    for g in grads:
        assert np.all(np.isfinite(g))


def test_winrate_and_sai_value_losses_are_on_one_scale():
    """A winrate head and a SAI head predicting the same win probabilities get
    the same value loss, so one value_weight weighs them equally."""
    key = jax.random.PRNGKey(3)
    p = jax.random.uniform(key, (64,), minval=0.01, maxval=0.99)
    z = jnp.round(jax.random.uniform(jax.random.fold_in(key, 1), (64,)) * 2) / 2
    k = jnp.linspace(-9.5, 9.5, 64)
    beta = jnp.full(64, 0.4)
    alpha = jnp.log(p / (1 - p)) / beta - k  # so that τ(k) = p
    sai = losses.value_loss_sai(alpha, beta, k, z)
    winrate = losses.value_loss_winrate(2 * p - 1, z)
    np.testing.assert_allclose(float(sai), float(winrate), rtol=1e-5)


def test_value_loss_winrate_and_score():
    value = jnp.array([0.5, -1.0, 0.0])
    z = jnp.array([1.0, 0.0, 0.5])
    # On the [0, 1] scale: (v + 1)/2 against z, a quarter of the ±1-scale MSE.
    np.testing.assert_allclose(losses.value_loss_winrate(value, z), (0.25 + 0.0 + 0.0) / 3 / 4, rtol=1e-6)
    score = jnp.array([0.1, -0.2])
    margin = jnp.array([8.1, -16.2])
    np.testing.assert_allclose(losses.value_loss_score(score, margin, 9), (0.0 + 0.0) / 2, atol=1e-12)
    np.testing.assert_allclose(
        losses.value_loss_score(jnp.zeros(2), margin, 9), ((8.1 / 81) ** 2 + (16.2 / 81) ** 2) / 2, rtol=1e-5
    )


def test_l2_counts_kernels_only(tiny_variables):
    params = tiny_variables["params"]
    kernels = [params["Conv_0"]["kernel"], params["Dense_0"]["kernel"]]
    want = 0.5 * sum(float(jnp.sum(k**2)) for k in kernels)
    np.testing.assert_allclose(losses.l2_loss(params), want, rtol=1e-6)

    # Biases and BN scale/bias do not count, whatever their value.
    def bump(path, leaf):
        name = path[-1].key
        return leaf if name == "kernel" else leaf + 5.0

    bumped = jax.tree_util.tree_map_with_path(bump, params)
    assert float(jnp.sum(bumped["BatchNorm_0"]["scale"])) > 0
    np.testing.assert_allclose(losses.l2_loss(bumped), want, rtol=1e-6)
    # Passing the whole variable dict (with batch_stats) changes nothing.
    np.testing.assert_allclose(losses.l2_loss(tiny_variables), want, rtol=1e-6)


def _batch_and_outputs(batch_size=4, board_size=3):
    num_actions = board_size * board_size + 1
    keys = jax.random.split(jax.random.key(1), 6)
    logits = jax.random.normal(keys[0], (batch_size, num_actions))
    logits = logits.at[:, 0].set(-jnp.inf)  # an illegal move everywhere.
    policy = jax.nn.softmax(jax.random.normal(keys[1], (batch_size, num_actions)))
    policy = policy.at[:, 0].set(0.0)
    policy = policy / policy.sum(-1, keepdims=True)
    outputs = _Outputs(
        policy_logits=logits,
        alpha=3.0 * jax.random.normal(keys[2], (batch_size,)),
        beta=jnp.exp(jax.random.normal(keys[3], (batch_size,))),
        value=jnp.tanh(jax.random.normal(keys[4], (batch_size,))),
    )
    batch = {
        "policy": policy,
        "signed_komi": jnp.array([-7.5, 7.5, 0.5, -0.5])[:batch_size],
        "z": jnp.array([1.0, 0.0, 0.5, 1.0])[:batch_size],
        "margin": jnp.array([3.5, -10.5, 0.0, 1.5])[:batch_size],
    }
    return outputs, batch


@pytest.mark.parametrize("value_head", networks.VALUE_HEADS)
def test_total_loss(value_head, tiny_variables):
    params = tiny_variables["params"]
    outputs, batch = _batch_and_outputs()
    loss_fn = jax.jit(
        functools.partial(
            losses.total_loss, value_head=value_head, value_weight=2.8, l2_coef=1e-4, score_weight=20.0, board_size=3
        )
    )
    loss, metrics = loss_fn(outputs, batch, params)
    assert set(metrics) == {"total_loss", "policy_loss", "value_loss", "l2_loss", "policy_entropy", "policy_accuracy"}
    for name, value in metrics.items():
        assert value.shape == (), name
        assert np.isfinite(value), name
    weight = 20.0 if value_head == "score" else 2.8
    np.testing.assert_allclose(
        loss, metrics["policy_loss"] + weight * metrics["value_loss"] + 1e-4 * metrics["l2_loss"], rtol=1e-6
    )
    np.testing.assert_allclose(metrics["total_loss"], loss)
    assert 0.0 <= metrics["policy_accuracy"] <= 1.0

    grads = jax.grad(lambda o, p: loss_fn(o, batch, p)[0], argnums=(0, 1))(outputs, params)
    for g in jax.tree_util.tree_leaves(grads):
        assert np.all(np.isfinite(g))


def test_total_loss_rejects_unknown_head():
    outputs, batch = _batch_and_outputs()
    with pytest.raises(ValueError, match="value_head"):
        losses.total_loss(outputs, batch, {}, value_head="tanh", value_weight=1.0, board_size=3)
