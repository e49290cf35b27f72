"""Tests for saijax.core.sigmoid: the SAI sigmoid and the λ/μ value family."""

import chex
import hypothesis
import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import strategies as st
from scipy import integrate, special

from saijax.core import sigmoid

F32_EPS = float(np.finfo(np.float32).eps)
MAX_ALPHA = 3610.0  # 10·N² on 19×19.


# ---------------------------------------------------------------------------
# Independent float64 references.


def _ref_f(alpha, beta, u, same_player):
    """f(u) of docs/design.md §4, written out literally, in float64."""
    if same_player:
        return special.expit(beta * (alpha + u))
    return 1.0 - special.expit(beta * (alpha - u))


def _ref_nu(alpha, beta, x_lo, x_hi, same_player):
    """ν by numerical quadrature, in float64.

    Integrates in t = β(±α + u), where f is σ(t) for both players (for the
    other player 1 − σ(β(α − u)) = σ(β(u − α))). quad only sees the part of
    the range where σ is neither 0 nor 1 to float64 precision (|t| ≤ 40);
    outside it the integrand is 0 or 1 to within e⁻⁴⁰.
    """
    alpha, beta, x_lo, x_hi = map(float, (alpha, beta, x_lo, x_hi))
    lo, hi = min(x_lo, x_hi), max(x_lo, x_hi)
    if hi == lo:
        return float(_ref_f(alpha, beta, lo, same_player))
    shift = alpha if same_player else -alpha
    t_lo, t_hi = beta * (shift + lo), beta * (shift + hi)
    a, b = max(t_lo, -40.0), min(t_hi, 40.0)
    total = max(0.0, t_hi - max(t_lo, 40.0))  # where σ = 1.
    if a < b:
        points = [0.0] if a < 0.0 < b else None
        total += integrate.quad(special.expit, a, b, points=points, limit=200, epsabs=1e-13, epsrel=1e-12)[0]
    if t_hi - t_lo > 0.0:
        return total / (t_hi - t_lo)
    return float(_ref_f(alpha, beta, 0.5 * (lo + hi), same_player))


def _ref_bonus(theta, alpha, beta, k):
    p = theta / 2 + (1 - theta) * special.expit(beta * (alpha + k))
    return special.logit(p) / beta - alpha


# ---------------------------------------------------------------------------
# Compiled functions, shared by the tests of this module.


@pytest.fixture(scope="module")
def nu_scalar_fn():
    """For the property test: float32 scalars only, so it must compile once."""
    return jax.jit(chex.assert_max_traces(sigmoid.interval_average, n=1))


@pytest.fixture(scope="module")
def nu_fn():
    return jax.jit(sigmoid.interval_average)


@pytest.fixture(scope="module")
def nu_grad_fn():
    def total(alpha, beta, x_lo, x_hi, same_player):
        return jnp.sum(sigmoid.interval_average(alpha, beta, x_lo, x_hi, same_player))

    return jax.jit(jax.grad(total, argnums=(0, 1, 2, 3)))


def _f32(*xs):
    return tuple(np.asarray(x, np.float32) for x in xs)


# ---------------------------------------------------------------------------
# ν against quadrature.


@st.composite
def _interval_cases(draw):
    beta = float(np.float32(10.0 ** draw(st.floats(-6.0, 4.0))))
    alpha = draw(st.one_of(st.floats(-MAX_ALPHA, MAX_ALPHA), st.sampled_from([-MAX_ALPHA, -0.5, 0.0, 0.5, MAX_ALPHA])))
    same_player = draw(st.booleans())
    # The sigmoid's centre, in P's bonus.
    centre = -alpha if same_player else alpha

    def endpoint():
        return draw(
            st.one_of(
                st.floats(-2 * MAX_ALPHA, 2 * MAX_ALPHA),
                st.floats(-40.0, 40.0).map(lambda t: float(np.clip(centre + t / beta, -1e5, 1e5))),
            )
        )

    x_lo = endpoint()
    kind = draw(st.sampled_from(["free", "zero", "narrow"]))
    if kind == "free":
        x_hi = endpoint()
    elif kind == "zero":
        x_hi = x_lo
    else:
        x_hi = x_lo + draw(st.floats(-1e-3, 1e-3))
    if draw(st.booleans()):
        x_lo, x_hi = x_hi, x_lo
    return tuple(float(np.float32(v)) for v in (alpha, beta, x_lo, x_hi)) + (same_player,)


@hypothesis.settings(max_examples=400, deadline=None)
@hypothesis.given(_interval_cases())
def test_interval_average_matches_quadrature(nu_scalar_fn, case):
    alpha, beta, x_lo, x_hi, same_player = case
    got = float(nu_scalar_fn(*_f32(alpha, beta, x_lo, x_hi), np.asarray(same_player)))
    assert np.isfinite(got)
    # float32 cannot resolve α + u better than a few ulps of |α| + |u|. With
    # β = 1e4 that is a whole sigmoid width, so the reference is bracketed by
    # shifting α by that much (ν is monotone in α).
    delta = 8 * F32_EPS * (abs(alpha) + abs(x_lo) + abs(x_hi))
    refs = [_ref_nu(alpha + d, beta, x_lo, x_hi, same_player) for d in (-delta, delta)]
    tol = 1e-5
    assert min(refs) - tol <= got <= max(refs) + tol, (got, refs)


def test_interval_average_simple_values(nu_fn):
    # Mean of σ over [−1, 1] is ½ by symmetry; over [0, 2] it is
    # (softplus(2) − log 2) / 2.
    np.testing.assert_allclose(nu_fn(*_f32(0.0, 1.0, -1.0, 1.0, True)), 0.5, atol=1e-7)
    expected = (np.log1p(np.exp(2.0)) - np.log(2.0)) / 2
    np.testing.assert_allclose(nu_fn(*_f32(1.0, 1.0, -1.0, 1.0, True)), expected, rtol=1e-6)
    np.testing.assert_allclose(nu_fn(*_f32(-1.0, 1.0, -1.0, 1.0, False)), expected, rtol=1e-6)


# ---------------------------------------------------------------------------
# Limits and symmetries.


def test_bonus_endpoints_exact():
    alpha = jnp.array([-MAX_ALPHA, -3.0, 0.0, 2.5, 1e4, -1e4, MAX_ALPHA])
    beta = jnp.array([1e-6, 0.5, 1.0, 1e4, 1e4, 1e4, 1e-3])
    k = jnp.array([7.5, -7.5, 0.5, -6.5, 0.0, 0.0, -0.5])
    np.testing.assert_array_equal(sigmoid.bonus_for(0.0, alpha, beta, k), k)
    np.testing.assert_array_equal(sigmoid.bonus_for(1.0, alpha, beta, k), -alpha)


def test_bonus_for_matches_definition():
    theta, alpha, beta, k = np.meshgrid(
        [1e-3, 0.1, 0.3, 0.5, 0.9, 0.999],
        [-60.0, -7.0, -0.5, 0.0, 3.0, 40.0],
        [1e-6, 1e-3, 0.1, 0.5, 2.0],
        [-7.5, 0.0, 6.5],
        indexing="ij",
    )
    got = np.asarray(sigmoid.bonus_for(*_f32(theta, alpha, beta, k)), np.float64)
    want = _ref_bonus(theta, alpha, beta, k)
    # Compare the margin α + x, which is what the sigmoid sees.
    np.testing.assert_allclose(alpha + got, alpha + want, rtol=1e-4, atol=1e-4)
    # x_θ always lies between k_s (θ = 0) and −α (θ = 1).
    lo, hi = np.minimum(k, -alpha), np.maximum(k, -alpha)
    assert np.all(got >= lo - 1e-3) and np.all(got <= hi + 1e-3)


def test_bonus_moves_winrate_towards_half():
    theta = jnp.array([0.25, 0.5, 0.75])[:, None]
    alpha = jnp.array([5.0, -9.0, 30.0, -30.0])
    beta = jnp.array([0.4, 0.2, 1.0, 0.5])
    k = jnp.array([-7.5, 7.5, 0.5, 0.0])
    x = sigmoid.bonus_for(theta, alpha, beta, k)
    tau_k = sigmoid.winrate(alpha, beta, k)
    np.testing.assert_allclose(sigmoid.winrate(alpha, beta, x), theta / 2 + (1 - theta) * tau_k, atol=1e-6)


def test_plain_winrate_when_lambda_mu_zero():
    alpha = jnp.array([3.0, -12.0, 0.0, 100.0])
    beta = jnp.array([0.3, 1.0, 5.0, 0.01])
    k = jnp.array([-7.5, 7.5, 0.5, -0.5])
    x_lambda, x_mu = sigmoid.agent_interval(alpha, beta, k, 0.0, 0.0, 0.0)
    np.testing.assert_array_equal(x_lambda, k)
    np.testing.assert_array_equal(x_mu, k)
    tau = sigmoid.winrate(alpha, beta, k)
    v = sigmoid.leaf_value(alpha, beta, True, x_lambda, x_mu)
    np.testing.assert_allclose(v, 2 * tau - 1, atol=1e-6)
    # A leaf with the opponent to move: its own win probability at its own
    # signed komi (−k_s) is σ(β(α − k_s)), and v is from its view.
    v_opp = sigmoid.leaf_value(alpha, beta, False, x_lambda, x_mu)
    np.testing.assert_allclose(v_opp, 2 * sigmoid.winrate(alpha, beta, -k) - 1, atol=1e-6)


def test_zero_width_is_point_value(nu_fn):
    alpha, beta, x = np.meshgrid([-MAX_ALPHA, -4.0, 0.0, 2.0, MAX_ALPHA], [1e-6, 0.3, 1e4], [-7.5, 0.0, 3.5, MAX_ALPHA])
    for same_player in (True, False):
        got = nu_fn(*_f32(alpha, beta, x, x), np.asarray(same_player))
        np.testing.assert_allclose(got, _ref_f(alpha, beta, x, same_player), atol=1e-6)


def test_lambda_equals_mu_uses_point_value():
    alpha, beta, k = 4.0, 0.5, -7.5
    for theta in (0.0, 0.3, 0.7, 1.0):
        x_lambda, x_mu = sigmoid.agent_interval(alpha, beta, k, theta, theta, 0.0)
        np.testing.assert_array_equal(x_lambda, x_mu)
        v = sigmoid.leaf_value(alpha, beta, True, x_lambda, x_mu)
        np.testing.assert_allclose(v, 2 * sigmoid.winrate(alpha, beta, x_lambda) - 1, atol=1e-6)


def test_lambda_one():
    alpha, beta, k = 6.0, 0.7, -7.5
    # λ = μ = 1: the root itself looks exactly balanced.
    x_lambda, x_mu = sigmoid.agent_interval(alpha, beta, k, 1.0, 1.0, 0.0)
    np.testing.assert_allclose(x_lambda, -alpha)
    np.testing.assert_allclose(sigmoid.leaf_value(alpha, beta, True, x_lambda, x_mu), 0.0, atol=1e-7)
    # λ = 1, μ = 0: the average of τ over [k_s, −α].
    x_lambda, x_mu = sigmoid.agent_interval(alpha, beta, k, 1.0, 0.0, 0.0)
    nu = sigmoid.interval_average(alpha, beta, x_mu, x_lambda, True)
    np.testing.assert_allclose(nu, _ref_nu(alpha, beta, k, -alpha, True), atol=1e-6)


def test_order_independent(nu_fn):
    args = _f32([3.0, -200.0, 0.0], [0.5, 1e-4, 1e4], [-7.5, 100.0, -1e-3], [2.0, -50.0, 2e-3])
    for same_player in (True, False):
        a, b, lo, hi = args
        sp = np.asarray(same_player)
        np.testing.assert_allclose(nu_fn(a, b, lo, hi, sp), nu_fn(a, b, hi, lo, sp), atol=1e-7)


def test_opponent_view_is_complement(nu_fn):
    alpha, beta, lo, hi = np.meshgrid(
        [-30.0, -1.0, 0.0, 2.5, MAX_ALPHA], [1e-6, 0.2, 3.0, 1e4], [-7.5, 0.5], [-2.0, 10.0]
    )
    true = np.asarray(True)
    mine = nu_fn(*_f32(alpha, beta, lo, hi), true)
    # The opponent's lead is −α, and P's bonus u is the opponent's −u.
    theirs = nu_fn(*_f32(-alpha, beta, -hi, -lo), true)
    np.testing.assert_allclose(mine + theirs, 1.0, atol=2e-6)


def test_mirrored_leaf_value_is_negated():
    alpha = jnp.array([-20.0, -1.0, 0.0, 4.0, MAX_ALPHA])
    beta = jnp.array([0.5, 1e-6, 2.0, 0.1, 1e4])
    x_lambda = jnp.array([3.0, -7.5, 0.5, -2.0, 0.0])
    x_mu = jnp.array([-7.5, -7.5, 4.0, 8.0, 1.0])
    v_same = sigmoid.leaf_value(alpha, beta, True, x_lambda, x_mu)
    # The same position seen by the other player: lead −α, same β.
    v_other = sigmoid.leaf_value(-alpha, beta, False, x_lambda, x_mu)
    np.testing.assert_allclose(v_same, -v_other, atol=1e-6)
    assert np.all(np.abs(v_same) <= 1.0)


def test_signed_komi():
    np.testing.assert_array_equal(
        sigmoid.signed_komi(jnp.array([7.5, 7.5, -3.0]), jnp.array([1, -1, -1])), [-7.5, 7.5, -3.0]
    )


def test_threshold_gates_agent():
    # Winning, losing and balanced at k = 0.
    alpha = jnp.array([20.0, -20.0, 0.0])
    beta, k = 0.5, 0.0
    x_lambda, x_mu = sigmoid.agent_interval(alpha, beta, k, 1.0, 0.5, 0.5)
    # Winning and balanced apply (λ, μ); losing falls back to (0, 0).
    np.testing.assert_allclose(x_lambda, [-20.0, 0.0, 0.0])
    np.testing.assert_allclose(x_mu, sigmoid.bonus_for(0.5, alpha, beta, k).at[1].set(0.0))
    # Threshold 0 always applies.
    x_lambda, _ = sigmoid.agent_interval(alpha, beta, k, 1.0, 0.5, 0.0)
    np.testing.assert_allclose(x_lambda, -alpha)


def test_batched_under_vmap_and_jit():
    alpha = jnp.linspace(-10.0, 10.0, 6)
    beta = jnp.full(6, 0.4)
    k = jnp.full(6, 7.5)

    def pipeline(a, b, kk):
        x_lambda, x_mu = sigmoid.agent_interval(a, b, kk, 0.5, 0.0, 0.0)
        return sigmoid.leaf_value(a, b, True, x_lambda, x_mu)

    batched = pipeline(alpha, beta, k)
    mapped = jax.jit(jax.vmap(pipeline))(alpha, beta, k)
    np.testing.assert_allclose(mapped, batched, atol=1e-6)


# ---------------------------------------------------------------------------
# Finite values and gradients at the extremes.


def _extreme_grid():
    alpha = [-MAX_ALPHA, -1.0, 0.0, 1e-3, MAX_ALPHA]
    beta = [1e-6, 1e-3, 1.0, 1e4]
    intervals = [
        (0.0, 0.0),
        (7.5, 7.5),
        (-MAX_ALPHA, MAX_ALPHA),
        (MAX_ALPHA, -MAX_ALPHA),
        (-MAX_ALPHA, -MAX_ALPHA),
        (MAX_ALPHA, MAX_ALPHA - 1e-4),
        (-7.5, 7.5),
        (1.0, 1.0 + 1e-6),
        (-2 * MAX_ALPHA, -MAX_ALPHA),
    ]
    rows = [(a, b, lo, hi) for a in alpha for b in beta for lo, hi in intervals]
    return _f32(*np.array(rows).T)


def test_interval_average_finite_at_extremes(nu_fn, nu_grad_fn):
    alpha, beta, lo, hi = _extreme_grid()
    for same_player in (True, False):
        sp = np.asarray(same_player)
        nu = np.asarray(nu_fn(alpha, beta, lo, hi, sp))
        assert np.all(np.isfinite(nu))
        assert np.all((nu >= 0.0) & (nu <= 1.0))
        for g in nu_grad_fn(alpha, beta, lo, hi, sp):
            assert np.all(np.isfinite(g))


def test_interval_average_endpoint_gradients(nu_grad_fn):
    # dν/dx_hi = (f(x_hi) − ν) / (x_hi − x_lo) and
    # dν/dx_lo = (ν − f(x_lo)) / (x_hi − x_lo).
    alpha, beta, lo, hi = np.meshgrid([-3.0, 0.0, 5.0], [0.1, 0.5, 2.0], [-7.5, -1.0], [0.5, 6.0])
    args = _f32(alpha, beta, lo, hi)
    alpha, beta, lo, hi = (a.astype(np.float64) for a in args)
    for same_player in (True, False):
        _, _, g_lo, g_hi = nu_grad_fn(*args, np.asarray(same_player))
        nu = np.vectorize(_ref_nu)(alpha, beta, lo, hi, same_player)
        width = hi - lo
        np.testing.assert_allclose(g_hi, (_ref_f(alpha, beta, hi, same_player) - nu) / width, rtol=1e-3, atol=1e-6)
        np.testing.assert_allclose(g_lo, (nu - _ref_f(alpha, beta, lo, same_player)) / width, rtol=1e-3, atol=1e-6)


def test_zero_width_gradient_is_half_slope(nu_grad_fn):
    alpha, beta, x = _f32([2.0, -1.0], [0.5, 3.0], [-1.0, 0.5])
    g_alpha, _, g_lo, g_hi = nu_grad_fn(alpha, beta, x, x, np.asarray(True))
    s = special.expit(beta * (alpha + x))
    slope = beta * s * (1 - s)
    np.testing.assert_allclose(g_alpha, slope, rtol=1e-5)
    np.testing.assert_allclose(g_lo, slope / 2, rtol=1e-5)
    np.testing.assert_allclose(g_hi, slope / 2, rtol=1e-5)


def test_bonus_for_finite_at_extremes():
    theta, alpha, beta, k = np.meshgrid(
        [0.0, 1e-6, 0.3, 0.5, 1 - 1e-6, 1.0],
        [-1e4, -MAX_ALPHA, 0.0, 1e4],
        [1e-6, 1.0, 1e4],
        [-1e4, -7.5, 0.0, 7.5, 1e4],
    )
    args = _f32(theta, alpha, beta, k)
    x = jax.jit(sigmoid.bonus_for)(*args)
    assert np.all(np.isfinite(x))
    grads = jax.jit(jax.grad(lambda *a: jnp.sum(sigmoid.bonus_for(*a)), argnums=(0, 1, 2, 3)))(*args)
    for g in grads:
        assert np.all(np.isfinite(g))


def test_full_leaf_pipeline_finite_gradients():
    """Gradients from root (α, β, k) and leaf (α, β) to the leaf value."""
    root_alpha, root_beta, k, leaf_alpha, leaf_beta = (
        a.ravel()
        for a in np.meshgrid(
            [-MAX_ALPHA, 0.0, 12.0, MAX_ALPHA],
            [1e-6, 0.5, 1e4],
            [-7.5, 0.5],
            [-MAX_ALPHA, -3.0, MAX_ALPHA],
            [1e-6, 1.0, 1e4],
        )
    )
    args = _f32(root_alpha, root_beta, k, leaf_alpha, leaf_beta)

    def value(root_alpha, root_beta, k, leaf_alpha, leaf_beta, same_player):
        x_lambda, x_mu = sigmoid.agent_interval(root_alpha, root_beta, k, 0.8, 0.2, 0.0)
        return sigmoid.leaf_value(leaf_alpha, leaf_beta, same_player, x_lambda, x_mu)

    values = jax.jit(value)
    grads_fn = jax.jit(jax.grad(lambda *a: jnp.sum(value(*a)), argnums=(0, 1, 2, 3, 4)))
    for same_player in (True, False):
        sp = np.asarray(same_player)
        v = values(*args, sp)
        assert np.all(np.isfinite(v)) and np.all(np.abs(v) <= 1.0)
        grads = grads_fn(*args, sp)
        for g in grads:
            assert np.all(np.isfinite(g))
