"""Training losses for the SAI, winrate and score value heads (docs/design.md §7).

The loss is

    policy cross-entropy + value_weight · value MSE + l2_coef · L2,

where the value MSE depends on the head:

* ``'sai'``: MSE(τ(k_s), z) on the [0, 1] scale, with τ(k_s) = σ(β(α + k_s))
  the predicted win probability at the row's own komi and z ∈ {0, ½, 1}.
  SAI's TensorFlow code wrote this as 0.7 · MSE(tanh(β/2·(α+k)), 2z − 1).
  Since tanh(t/2) = 2σ(t) − 1, that is 0.7 · 4 · MSE(τ, z), so the matching
  `value_weight` on the [0, 1] scale is 2.8 (docs/design.md §10).
* ``'winrate'``: AlphaZero/Leela Zero style: a tanh v, whose win probability
  is (v + 1)/2, trained with MSE((v + 1)/2, z) on the same [0, 1] scale as
  SAI's head. The ±1-scale MSE(v, 2z − 1) is 4 times that, so with one
  `value_weight` for both heads the baseline would get four times SAI's
  relative value weight; on one scale the two are equal by construction.
* ``'score'``: Leela Zero Score style, MSE(s, margin / N²) for a linear s,
  weighted by `score_weight` (20 in the LZS paper) instead of `value_weight`.

Three optional auxiliary terms (KataGo's targets [Wu 2019], off by default):

* ownership: `ownership_weight` · the mean over the N² points of
  (o − t)², o the ownership head's tanh output and t ∈ {−1, 0, 1} the final
  Tromp–Taylor owner from the mover's view, averaged over the rows whose
  `ownership_mask` is 1 (games played out; resigned games have no final
  ownership). A mean over points, so KataGo's 1.5/N² per point summed over
  the board is `ownership_weight` = 1.5.
* final score (SAI head only): `score_aux_weight` · MSE((α + k_s)/N²,
  margin/N²) over the same rows. α + k_s is the mover's predicted final
  margin, so this is the score head's loss applied to α.
* opponent reply: `opponent_policy_weight` · the policy cross-entropy of the
  opponent policy head against the next position's policy target (the
  search's improved policy at the opponent's turn); all-zero rows (no next
  position, or a cheap search) are left out of the mean, as in
  :func:`policy_loss`. KataGo weighs it 0.15.

L2 is ½·Σw² over convolution and dense kernels only, as `tf.nn.l2_loss` in the
Leela Zero and SAI training code; biases and batch-norm parameters are not
decayed.
"""

from collections.abc import Mapping
from typing import Any

import jax
import jax.numpy as jnp

from saijax.core import networks, sigmoid

__all__ = [
    "policy_loss",
    "value_loss_sai",
    "value_loss_winrate",
    "value_loss_score",
    "ownership_loss",
    "score_aux_loss",
    "l2_loss",
    "total_loss",
]


def _masked_log_softmax(logits, keep):
    """log_softmax(logits) where `keep`, else 0 (so −inf logits are safe)."""
    log_probs = jax.nn.log_softmax(logits, axis=-1)
    return jnp.where(keep, log_probs, 0.0)


def policy_loss(logits, target):
    """Cross-entropy −Σ_a target_a · log softmax(logits)_a, batch mean.

    Moves with target 0 contribute nothing, even when their logit is −inf or
    hugely negative (illegal moves), so neither the loss nor its gradient is
    NaN.

    Args:
        logits: [B, A] policy logits.
        target: [B, A] target distribution (visit counts or Gumbel
            `action_weights`), rows summing to 1; an all-zero row has no
            policy target (a cheap search under playout cap randomisation)
            and is left out of the mean.

    Returns:
        Scalar mean cross-entropy in nats over the rows with a target.
    """
    log_probs = _masked_log_softmax(logits, target > 0)
    per_row = -jnp.sum(target * log_probs, axis=-1)
    return jnp.sum(per_row) / jnp.maximum(jnp.sum(_has_policy(target)), 1)


def _has_policy(target):
    """bool[B]: the row has a policy target (not all zeros)."""
    return jnp.sum(target, axis=-1) > 0


def value_loss_sai(alpha, beta, signed_komi, z):
    """MSE(τ(k_s), z) for the SAI head, batch mean (docs/design.md §7).

    Args:
        alpha: [B] α, the mover's lead before komi.
        beta: [B] β > 0.
        signed_komi: [B] k_s, the row's komi as the mover's bonus.
        z: [B] outcome for the mover at that komi: 0 loss, ½ draw, 1 win.

    Returns:
        Scalar mean of (σ(β(α + k_s)) − z)², on the [0, 1] scale.
    """
    tau = sigmoid.winrate(alpha, beta, signed_komi)
    return jnp.mean(jnp.square(tau - z))


def value_loss_winrate(value, z):
    """MSE((v + 1)/2, z) for a tanh winrate head, batch mean, on SAI's [0, 1] scale.

    Args:
        value: [B] tanh output in [−1, 1], from the mover's view.
        z: [B] outcome for the mover: 0, ½ or 1.

    Returns:
        Scalar mean squared error between the head's win probability and z:
        a quarter of the ±1-scale MSE(v, 2z − 1), so that the same
        `value_weight` weighs it exactly as it weighs :func:`value_loss_sai`.
    """
    return jnp.mean(jnp.square(0.5 * (value + 1.0) - z))


def value_loss_score(score, margin, board_size):
    """MSE(s, margin / N²) for a Leela Zero Score style head, batch mean.

    Args:
        score: [B] predicted final margin for the mover, divided by N².
        margin: [B] final Tromp–Taylor margin for the mover, komi included, in
            points.
        board_size: N, a Python int.

    Returns:
        Scalar mean squared error on the margin / N² scale.
    """
    target = margin / float(board_size * board_size)
    return jnp.mean(jnp.square(score - target))


def _masked_mean(per_row, mask):
    """Σ mask·per_row / Σ mask (0 when no row is masked in)."""
    mask = mask.astype(jnp.float32)
    return jnp.sum(mask * per_row) / jnp.maximum(jnp.sum(mask), 1.0)


def ownership_loss(ownership, target, mask):
    """Squared error of the ownership head, mean over points and masked rows.

    Args:
        ownership: [B, N*N] predicted ownership in [−1, 1], mover's view.
        target: [B, N*N] final Tromp–Taylor owner, mover's view: +1, −1 or 0.
        mask: [B] 1 for rows of games played out, 0 otherwise.

    Returns:
        Scalar Σ_rows mask · mean_points (o − t)² / Σ mask (0 with no row).
    """
    per_row = jnp.mean(jnp.square(ownership - target.astype(jnp.float32)), axis=-1)
    return _masked_mean(per_row, mask)


def score_aux_loss(alpha, signed_komi, margin, mask, board_size):
    """MSE((α + k_s)/N², margin/N²) over masked rows (SAI head's score auxiliary).

    Args:
        alpha: [B] α, the mover's lead before komi.
        signed_komi: [B] k_s.
        margin: [B] final Tromp–Taylor margin for the mover, komi included.
        mask: [B] 1 for rows of games played out (their margin is counted,
            not estimated), 0 otherwise.
        board_size: N, a Python int.

    Returns:
        Scalar masked mean on the margin / N² scale.
    """
    scale = 1.0 / float(board_size * board_size)
    return _masked_mean(jnp.square((alpha + signed_komi - margin) * scale), mask)


def _leaf_name(path) -> str:
    last = path[-1]
    for attr in ("key", "name", "idx"):
        if hasattr(last, attr):
            return str(getattr(last, attr))
    return str(last)


def l2_loss(params):
    """½·Σw² over every leaf named 'kernel' (conv and dense weights).

    This is `tf.nn.l2_loss` summed over weights, as in SAI's and Leela Zero's
    training code. Biases and batch-norm 'scale'/'bias' are excluded, and so is
    anything else not named 'kernel' (e.g. batch statistics, if passed).

    Args:
        params: a flax Linen parameter tree (nested mappings).

    Returns:
        Scalar float32.
    """
    leaves = jax.tree_util.tree_flatten_with_path(params)[0]
    total = jnp.zeros((), jnp.float32)
    for path, leaf in leaves:
        if path and _leaf_name(path) == "kernel":
            total = total + jnp.sum(jnp.square(leaf.astype(jnp.float32)))
    return 0.5 * total


def total_loss(
    outputs: Any,
    batch: Mapping[str, jax.Array],
    params: Any,
    *,
    value_head: str,
    value_weight: float,
    l2_coef: float = 1e-4,
    score_weight: float = 20.0,
    board_size: int,
    ownership_weight: float = 0.0,
    score_aux_weight: float = 0.0,
    opponent_policy_weight: float = 0.0,
) -> tuple[jax.Array, dict[str, jax.Array]]:
    """The full training loss and its metrics (docs/design.md §7).

        loss = policy CE + w · value MSE + l2_coef · ½Σw²

    with w = `value_weight` for the 'sai' and 'winrate' heads and
    w = `score_weight` for the 'score' head. For 'sai', use value_weight = 2.8
    to match SAI's 0.7 on the ±1 scale (see the module docstring).

    Args:
        outputs: network outputs with attributes `policy_logits` [B, A],
            `alpha` [B], `beta` [B] (read for 'sai') and `value` [B] (read for
            'winrate': tanh value; for 'score': predicted margin / N²).
        batch: mapping with 'policy' [B, A], 'signed_komi' [B], 'z' [B]
            (0, ½, 1 for the mover) and 'margin' [B] (final Tromp–Taylor margin
            for the mover, komi included). Only the keys the head needs are
            read.
        params: the parameter tree, for L2 (Linen 'params' collection).
        value_head: 'sai', 'winrate' or 'score' (static).
        value_weight: weight of the value MSE for 'sai' and 'winrate'.
        l2_coef: L2 coefficient.
        score_weight: weight of the value MSE for 'score'.
        board_size: N, a Python int.
        ownership_weight: weight of :func:`ownership_loss` (static; needs
            `outputs.ownership` when > 0). Reads batch 'ownership' [B, N*N]
            and 'ownership_mask' [B].
        score_aux_weight: weight of :func:`score_aux_loss` ('sai' head only;
            static). Reads batch 'margin' and 'ownership_mask'.
        opponent_policy_weight: weight of the opponent policy head's
            cross-entropy (static; needs `outputs.opponent_policy_logits`
            when > 0). Reads batch 'opponent_policy' [B, A] (all-zero rows:
            no target).

    Returns:
        (loss, metrics): the scalar loss and a dict of scalars with keys
        'total_loss', 'policy_loss', 'value_loss' (unweighted MSE),
        'l2_loss' (unweighted ½Σw²), 'policy_entropy' (of the predicted policy)
        and 'policy_accuracy' (argmax of prediction equals argmax of target);
        plus 'ownership_loss' (unweighted) when the net has the ownership
        head, 'score_aux_loss' (unweighted) when score_aux_weight > 0, and
        'opponent_policy_loss' (unweighted) when the net has the opponent
        policy head.
    """
    if value_head not in networks.VALUE_HEADS:
        raise ValueError(f"value_head must be one of {networks.VALUE_HEADS}, got {value_head!r}")
    own_pred = getattr(outputs, "ownership", None)
    if ownership_weight > 0 and own_pred is None:
        raise ValueError("ownership_weight > 0 needs a network with the ownership head (outputs.ownership is None)")
    opp_logits = getattr(outputs, "opponent_policy_logits", None)
    if opponent_policy_weight > 0 and opp_logits is None:
        raise ValueError(
            "opponent_policy_weight > 0 needs a network with the opponent policy head "
            "(outputs.opponent_policy_logits is None)"
        )
    if score_aux_weight > 0 and value_head != "sai":
        raise ValueError(f"score_aux_weight > 0 needs value_head 'sai', got {value_head!r}")
    logits = outputs.policy_logits
    target = batch["policy"]
    p_loss = policy_loss(logits, target)

    if value_head == "sai":
        v_loss = value_loss_sai(outputs.alpha, outputs.beta, batch["signed_komi"], batch["z"])
        weight = value_weight
    elif value_head == "winrate":
        v_loss = value_loss_winrate(outputs.value, batch["z"])
        weight = value_weight
    else:
        v_loss = value_loss_score(outputs.value, batch["margin"], board_size)
        weight = score_weight

    l2 = l2_loss(params)
    loss = p_loss + weight * v_loss + l2_coef * l2
    extra = {}
    if own_pred is not None:
        o_loss = ownership_loss(own_pred, batch["ownership"], batch["ownership_mask"])
        extra["ownership_loss"] = o_loss
        if ownership_weight > 0:
            loss = loss + ownership_weight * o_loss
    if score_aux_weight > 0:
        s_loss = score_aux_loss(
            outputs.alpha, batch["signed_komi"], batch["margin"], batch["ownership_mask"], board_size
        )
        extra["score_aux_loss"] = s_loss
        loss = loss + score_aux_weight * s_loss
    if opp_logits is not None:
        op_loss = policy_loss(opp_logits, batch["opponent_policy"])
        extra["opponent_policy_loss"] = op_loss
        if opponent_policy_weight > 0:
            loss = loss + opponent_policy_weight * op_loss

    probs = jax.nn.softmax(logits, axis=-1)
    log_probs = _masked_log_softmax(logits, probs > 0)
    entropy = -jnp.mean(jnp.sum(probs * log_probs, axis=-1))
    has = _has_policy(target)
    hits = jnp.sum(jnp.where(has, jnp.argmax(logits, axis=-1) == jnp.argmax(target, axis=-1), False))
    accuracy = hits / jnp.maximum(jnp.sum(has), 1)
    metrics = {
        "total_loss": loss,
        "policy_loss": p_loss,
        "value_loss": v_loss,
        "l2_loss": l2,
        "policy_entropy": jax.lax.stop_gradient(entropy),
        "policy_accuracy": accuracy,
        **extra,
    }
    return loss, metrics
