"""SAI's sigmoid value and the λ/μ value family (docs/design.md §4).

A SAI network evaluates a position s, with player P to move, as two numbers:
α_s, P's expected board lead before komi, and β_s > 0, how sure the net is of
it. P's win probability given x bonus points is the sigmoid

    τ_s(x) = σ(β_s (α_s + x)),

and at the real komi it is τ_s(k_s), with k_s the signed komi for P
(see `signed_komi`). The λ/μ agents replace τ_s(k_s) by the average of the
sigmoid over a bonus interval [x_μ, x_λ] (`bonus_for`, `interval_average`),
which is what `leaf_value` hands to mctx.

Every function here is pure, elementwise and broadcasts over its arguments, so
it works unbatched, batched, under `jax.vmap` and under `jax.jit`. The dtype is
float32. The functions are written so that values *and* gradients stay
finite for β from 1e-6 to 1e4 and |α| up to 10·N² (3610 on 19×19), including
zero-width intervals: every `jnp.where` that guards a singular branch feeds
that branch a safe dummy input ("double where"), because a NaN in the untaken
branch would otherwise leak into the gradient.
"""

import jax
import jax.numpy as jnp

__all__ = [
    "winrate",
    "signed_komi",
    "bonus_for",
    "interval_average",
    "agent_interval",
    "leaf_value",
]

# Below this width in sigmoid units, β·|x_hi − x_lo|, the interval average is
# replaced by the sigmoid at the midpoint. The midpoint rule's error is at most
# w²/24 · max|σ''| < 1e-10 there, far below float32 resolution.
_MIDPOINT_WIDTH = 1e-4

# Below this |β(α + k)|, `_logit_mixture` uses the atanh form, which is exact
# in relative terms near 0; above it the log form, which does not saturate.
_ATANH_LIMIT = 1.0


def winrate(alpha, beta, x):
    """P's win probability given a bonus: τ(x) = σ(β(α + x)) (docs/design.md §4).

    Args:
        alpha: α, the lead of the player to move P before komi, in points.
        beta: β > 0, the sigmoid's steepness (the net's confidence in α).
        x: total bonus points for P; `signed_komi(...)` gives the real one.

    Returns:
        τ(x) in [0, 1], broadcast over the arguments.
    """
    return jax.nn.sigmoid(beta * (alpha + x))


def signed_komi(komi, to_play):
    """The komi as a bonus for the player to move: k_s in docs/design.md §4.

    Args:
        komi: the game's komi (points given to White).
        to_play: +1 if Black is to move, −1 if White is.

    Returns:
        +komi if White is to move, −komi if Black is, i.e. `-komi * to_play`.
    """
    return -komi * to_play


def _log_expm1(w):
    """log(eᵂ − 1) for w > 0, without overflow for large w."""
    small = w < 1.0
    w_small = jnp.where(small, w, 1.0)
    w_big = jnp.where(small, 1.0, w)
    return jnp.where(small, jnp.log(jnp.expm1(w_small)), w_big + jnp.log1p(-jnp.exp(-w_big)))


def _logit_mixture(theta, t):
    """logit(θ/2 + (1 − θ)·σ(t)) for 0 < θ < 1 and any real t.

    With y = 2p − 1 = (1 − θ)·tanh(t/2) the answer is 2·atanh(y). That form
    is exact near t = 0 but saturates when tanh(t/2) rounds to 1, so for
    |t| ≥ 1 it is evaluated as log(1 + y) − log(1 − y), with
    1 − y = θ + 2(1 − θ)σ(−|t|) taken in log space. The result is odd in t.
    """
    small = jnp.abs(t) < _ATANH_LIMIT
    t_small = jnp.where(small, t, 0.0)
    near_zero = 2.0 * jnp.arctanh((1.0 - theta) * jnp.tanh(0.5 * t_small))

    s = jnp.where(small, _ATANH_LIMIT, jnp.abs(t))
    log_one_minus_y = jnp.logaddexp(jnp.log(theta), jnp.log(2.0) + jnp.log1p(-theta) + jax.nn.log_sigmoid(-s))
    one_plus_y = 2.0 - theta - 2.0 * (1.0 - theta) * jax.nn.sigmoid(-s)
    far = jnp.sign(t) * (jnp.log(one_plus_y) - log_one_minus_y)
    return jnp.where(small, near_zero, far)


def bonus_for(theta, alpha, beta, signed_komi):
    """The bonus x_θ of docs/design.md §4, eq. (2) of the ECAI paper.

        x_θ = logit(θ/2 + (1 − θ)·τ(k_s)) / β − α

    so that τ(x_θ) moves P's win probability a fraction θ of the way from
    τ(k_s) towards ½. `x_0 = k_s` exactly (by selection) and `x_1 = −α`.
    |α + x_θ| ≤ |α + k_s| always, so x_θ stays between k_s and −α.

    Args:
        theta: θ in [0, 1] (λ or μ).
        alpha: α of the root position, P's lead before komi.
        beta: β > 0 of the root position.
        signed_komi: k_s, the komi as P's bonus.

    Returns:
        x_θ in points, P's bonus. Finite, with finite gradients, even when
        τ(k_s) rounds to 0 or 1 in float32.
    """
    is_zero = theta <= 0.0
    is_one = theta >= 1.0
    theta_safe = jnp.where(is_zero | is_one, 0.5, theta)
    t = beta * (alpha + signed_komi)
    interior = _logit_mixture(theta_safe, t) / beta - alpha
    return jnp.where(is_zero, signed_komi, jnp.where(is_one, -alpha, interior))


def _mean_sigmoid(m, h):
    """Mean of σ over [m − h, m + h], for any real m, h (even in h).

    Uses the exact identity
        softplus(q) − softplus(p) = log1p(σ(p)·expm1(q − p)),
    evaluated in log space as softplus(log σ(p) + log expm1(q − p)). Unlike a
    plain difference of softplus values it keeps full relative precision for
    all p < q, so dividing by a small width q − p costs nothing. The symmetry
    mean σ over [m ± h] = 1 − mean σ over [−m ± h] reduces to m ≤ 0, where the
    mean is at most ½ and the result carries absolute float32 precision.
    """
    w = 2.0 * jnp.abs(h)
    narrow = w < _MIDPOINT_WIDTH
    midpoint = jax.nn.sigmoid(m)

    w_safe = jnp.where(narrow, 1.0, w)
    h_safe = 0.5 * w_safe
    # `where` rather than -|m|, so the gradient at m = 0 is not zeroed by abs.
    m_neg = jnp.where(m <= 0.0, m, -m)
    lower = m_neg - h_safe
    integral = jax.nn.softplus(jax.nn.log_sigmoid(lower) + _log_expm1(w_safe))
    mean_neg = integral / w_safe
    wide = jnp.where(m <= 0.0, mean_neg, 1.0 - mean_neg)
    return jnp.where(narrow, midpoint, wide)


def interval_average(alpha, beta, x_lo, x_hi, same_player):
    """ν: the average of the root player's win probability over a bonus range.

    docs/design.md §4:

        ν = 1/(x_hi − x_lo) ∫_{x_lo}^{x_hi} f(u) du   (f(x_lo) when equal)
        f(u) = σ(β(α + u))          if same_player
        f(u) = 1 − σ(β(α − u))      otherwise

    α and β belong to the evaluated position r; u is a bonus for the root
    player P. When r's player to move is P, f is r's own sigmoid; otherwise
    r's player gets −u, and f is the complement of its win probability.
    Since 1 − σ(β(α − u)) = σ(β(−α + u)), the second case is the first with −α.

    The closed form ∫σ(β(α+u))du = softplus(β(α+u))/β is evaluated stably
    (see `_mean_sigmoid`). The result does not depend on the order of x_lo and
    x_hi. When β·|x_hi − x_lo| < 1e-4 the midpoint value f((x_lo + x_hi)/2) is
    used, which covers λ = μ.

    Args:
        alpha: α_r, the lead of r's player to move before komi.
        beta: β_r > 0.
        x_lo: one end of the bonus interval, P's bonus (x_μ).
        x_hi: the other end (x_λ).
        same_player: bool, whether r's player to move is P.

    Returns:
        ν in [0, 1]: P's averaged win probability according to r.
    """
    alpha = jnp.where(same_player, alpha, -alpha)
    m = beta * (alpha + 0.5 * (x_lo + x_hi))
    h = 0.5 * beta * (x_hi - x_lo)
    return _mean_sigmoid(m, h)


def agent_interval(alpha, beta, signed_komi, lambda_, mu, threshold):
    """The bonus interval (x_λ, x_μ) of the variable λ/μ agent (docs/design.md §4).

    (λ, μ) apply only while the root's τ(k_s) is at least `threshold`;
    otherwise the agent falls back to (0, 0), i.e. plain win probability with
    both endpoints equal to k_s. A threshold of 0 always applies (λ, μ).

    Args:
        alpha: α_s of the search root.
        beta: β_s of the search root.
        signed_komi: k_s, the komi as the root player's bonus.
        lambda_: λ in [0, 1].
        mu: μ in [0, λ].
        threshold: minimum τ_s(k_s) for (λ, μ) to apply.

    Returns:
        (x_lambda, x_mu), both bonuses for the root player, to be used for
        every node of the search (the papers' root anchoring).
    """
    apply = winrate(alpha, beta, signed_komi) >= threshold
    lambda_ = jnp.where(apply, lambda_, 0.0)
    mu = jnp.where(apply, mu, 0.0)
    x_lambda = bonus_for(lambda_, alpha, beta, signed_komi)
    x_mu = bonus_for(mu, alpha, beta, signed_komi)
    return x_lambda, x_mu


def leaf_value(alpha, beta, same_player, x_lambda, x_mu):
    """The mctx value of a leaf, in [−1, 1], from the leaf's player to move.

    ν = `interval_average(alpha, beta, x_mu, x_lambda, same_player)` is the
    root player P's averaged win probability. mctx backs values up with
    discount −1 and wants them from the leaf's mover, so (docs/design.md §4)

        v = 2ν − 1   if the leaf's player to move is P,
        v = 1 − 2ν   otherwise.

    Args:
        alpha: α of the leaf (its mover's lead before komi; for a terminal
            leaf, the Tromp–Taylor margin for its mover without komi).
        beta: β of the leaf (β_terminal for a terminal leaf).
        same_player: bool, whether the leaf's player to move is the root's.
        x_lambda: x_λ from `agent_interval`, the root player's bonus.
        x_mu: x_μ from `agent_interval`.

    Returns:
        v in [−1, 1].
    """
    nu = interval_average(alpha, beta, x_mu, x_lambda, same_player)
    return jnp.where(same_player, 2.0 * nu - 1.0, 1.0 - 2.0 * nu)
