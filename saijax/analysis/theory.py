"""Exact theory experiments of "Score vs. Winrate" ([SvW] §IV in docs/design.md's references).

The paper replaces the complexity of Go by randomness and shows, in two
settings where everything can be computed exactly, that a score-maximising
policy can lose more often than a winrate-maximising one:

* **Proposition 1**, the two-armed Gaussian bandit. Arm i pays a score
  ``N(mu_i, sigma_i**2)``; its outcome is ``1[score > 0]`` and wins with
  probability ``Phi(mu_i / sigma_i)``. The two rewards prefer different arms
  exactly when the means have the same sign and the better-mean arm is too
  noisy (winning) or too quiet (losing): :func:`bandit_conflict`.
* **Action-shared tree MDPs** (§IV-B, Fig. 2) with state branch ``b`` and
  depth ``d``: :func:`random_tree_mdps`, solved by backward induction
  (:func:`optimal_policy`), evaluated exactly (:func:`evaluate_policy`,
  :func:`score_variance`) and summarised as in Figs. 3 and 4
  (:func:`outcome_loss_by_level`, :func:`variance_preference`,
  :func:`binned_median`).

Conventions, as the paper defines them:

* The outcome reward is ``r_outcome = 1[r_score > 0]``: a final score of
  exactly 0 is a loss, not half a win, and outcome values are win
  probabilities in [0, 1] (:func:`outcome_reward`).
* Levels run ``0..d``; level ``l`` has ``b**l`` states. State ``i`` at level
  ``l`` has the children ``i*b + j`` (``j < b``) at level ``l + 1``, whatever
  the action; only the Dirichlet(1, ..., 1) transition probabilities depend
  on the action. The ``b**d`` leaves are level ``d``: every action there ends
  the game with the leaf's reward, so leaves carry no decision and policies
  are arrays for levels ``0..d-1`` only.
* Leaf scores are integers uniform in ``[-b**d, b**d]``, both ends included.
* "Value iteration" on a finite tree is one backward sweep, so all values here
  are exact (to float64 rounding), not iterated approximations.

Ties between actions (the paper does not say how it breaks them). With
integer leaf scores and a {0, 1} outcome, exact ties in outcome values are
common: if every child of a state is a sure win (or a sure loss), every
action has winrate 1 (or 0). A first-index rule would then make the outcome
policy "disagree" with the score policy in states where it is indifferent,
and those states would enter Fig. 4 with a variance preference that is
an artefact of the action numbering. So by default each policy breaks its
ties by the other reward: the outcome policy picks the best score among its
winrate-optimal actions, the score policy the best winrate among its
score-optimal actions (``tie_break='lexicographic'``; what a Go player
expects: win first, then by as much as possible). ``tie_break='first'`` takes
the lowest action index instead. Values within a relative ``1e-9`` of the
best count as tied, so float rounding never decides a tie. Fig. 3 does not
depend on this choice in the outcome policy (its value is the optimum either
way) and depends on it in the score policy only through measure-zero ties.

Everything is float64 NumPy, batched over MDPs with one vectorised step per
level: 2,000 MDPs with a few thousand states each take well under a second.
(float64 matters for the tie test above; JAX would need the process-wide
``jax_enable_x64`` flag, which other saijax code must not inherit.)
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

import numpy as np
from scipy import special

__all__ = [
    "bandit_outcome_value",
    "bandit_conflict",
    "TreeMDP",
    "TreeValues",
    "TreeSolution",
    "LevelLoss",
    "VariancePreference",
    "random_tree_mdps",
    "outcome_reward",
    "evaluate_policy",
    "optimal_policy",
    "score_variance",
    "solve_tree_mdps",
    "outcome_loss_by_level",
    "variance_preference",
    "binned_median",
]

_TIE_RTOL = 1e-9
# Var = E[r^2] - q^2 loses about 1e-16 * max(r^2) to cancellation; anything
# below this multiple of max(r^2) is treated as exactly zero variance.
_VAR_RTOL = 1e-12


# --------------------------------------------------------------------------
# Proposition 1: the two-armed Gaussian bandit.


def bandit_outcome_value(mu, sigma):
    """Winrate of an arm with score ``N(mu, sigma**2)``: ``Phi(mu / sigma)``.

    This is ``E[r_outcome] = P(r_score > 0)`` from the proof of Proposition 1.

    Args:
      mu: mean score, array-like.
      sigma: score standard deviation, array-like, > 0.

    Returns:
      The win probability, broadcast over the inputs.
    """
    return special.ndtr(np.asarray(mu, float) / np.asarray(sigma, float))


def bandit_conflict(mu1, mu2, sigma1, sigma2):
    """Proposition 1: score prefers arm 1 while outcome prefers arm 2.

    That is ``E[r_score(1)] > E[r_score(2)]`` and
    ``E[r_outcome(1)] < E[r_outcome(2)]`` (the paper's eq. (1)), which holds if
    and only if

    * ``mu1 > mu2 > 0`` and ``sigma1 > sigma2 * mu1 / mu2`` (winning: outcome
      turns down the better but noisier arm), or
    * ``mu2 < mu1 < 0`` and ``sigma1 < sigma2 * mu1 / mu2`` (losing: outcome
      turns down the better but quieter arm).

    Args:
      mu1, mu2: mean scores of the two arms, array-like.
      sigma1, sigma2: their standard deviations, array-like, > 0.

    Returns:
      A boolean array, broadcast over the inputs.
    """
    mu1, mu2, sigma1, sigma2 = np.broadcast_arrays(*(np.asarray(a, float) for a in (mu1, mu2, sigma1, sigma2)))
    ratio = np.divide(mu1, mu2, out=np.full(mu1.shape, np.nan), where=mu2 != 0)
    threshold = sigma2 * ratio
    winning = (mu1 > mu2) & (mu2 > 0) & (sigma1 > threshold)
    losing = (mu2 < mu1) & (mu1 < 0) & (sigma1 < threshold)
    return winning | losing


# --------------------------------------------------------------------------
# Action-shared tree MDPs.


class TreeMDP(NamedTuple):
    """A batch of ``M`` action-shared tree MDPs with branch b and depth d."""

    transitions: tuple[np.ndarray, ...]  # level l: [M, b**l, A, b], l = 0..d-1
    leaf_scores: np.ndarray  # [M, b**d] integer score rewards r_score

    @property
    def num_mdps(self) -> int:
        return self.leaf_scores.shape[0]

    @property
    def depth(self) -> int:
        return len(self.transitions)

    @property
    def branch(self) -> int:
        return self.transitions[0].shape[-1]

    @property
    def num_actions(self) -> int:
        return self.transitions[0].shape[-2]


class TreeValues(NamedTuple):
    """Action and state values of one policy for one leaf reward."""

    q: tuple[np.ndarray, ...]  # level l: [M, b**l, A], l = 0..d-1
    v: tuple[np.ndarray, ...]  # level l: [M, b**l], l = 0..d (v[d]: leaves)


class TreeSolution(NamedTuple):
    """Both optimal policies of a batch of tree MDPs and their statistics."""

    pi_score: tuple[np.ndarray, ...]  # level l: [M, b**l] int, l = 0..d-1
    pi_outcome: tuple[np.ndarray, ...]  # level l: [M, b**l] int, l = 0..d-1
    score_of_score: TreeValues  # q/v_score of pi_score (the optimal score values)
    outcome_of_outcome: TreeValues  # q/v_outcome of pi_outcome (optimal winrate)
    outcome_of_score: TreeValues  # q/v_outcome of pi_score
    var_of_score: tuple[np.ndarray, ...]  # level l: [M, b**l, A] Var_pi_score
    var_of_outcome: tuple[np.ndarray, ...]  # level l: [M, b**l, A] Var_pi_outcome


class LevelLoss(NamedTuple):
    """Fig. 3 statistics of ``v_outcome^pi_outcome - v_outcome^pi_score``."""

    mean: np.ndarray  # [d+1] average over all states of the level, all MDPs
    fraction_positive: np.ndarray  # [d+1] share of states with a strict loss
    max: np.ndarray  # [d+1] largest loss at the level
    num_states: np.ndarray  # [d+1] states averaged over (M * b**l)


class VariancePreference(NamedTuple):
    """Fig. 4 data: one entry per state where the two policies disagree."""

    winrate: np.ndarray  # [K] v_outcome^pi_outcome(s), the Fig. 4 x-axis
    log_ratio_outcome: np.ndarray  # [K] y(s) with pi+ = pi_outcome
    log_ratio_score: np.ndarray  # [K] y(s) with pi+ = pi_score
    log_ratio_printed: np.ndarray  # [K] the printed item-3 formula, see below
    level: np.ndarray  # [K] level of s
    num_disagreements: int  # states where the policies differ, before dropping
    num_zero_variance: int  # of those, dropped because a variance is 0


def random_tree_mdps(rng: np.random.Generator, num_mdps: int, *, branch: int, depth: int, num_actions: int) -> TreeMDP:
    """Draws action-shared tree MDPs as in §IV-B.

    All parameters are independent: leaf scores uniform over the integers in
    ``[-b**d, b**d]``, and for every nonterminal (state, action) the
    probabilities of the ``b`` children from Dirichlet(1, ..., 1).

    Args:
      rng: NumPy generator; consumed.
      num_mdps: how many MDPs (M).
      branch: state branch b >= 1.
      depth: depth d >= 1 (leaves are level d).
      num_actions: actions per state A >= 1.

    Returns:
      A :class:`TreeMDP` batch.
    """
    for name, value in (("num_mdps", num_mdps), ("branch", branch), ("depth", depth), ("num_actions", num_actions)):
        if int(value) != value or value < 1:
            raise ValueError(f"{name} must be a positive integer, got {value!r}")
    bound = branch**depth
    leaf_scores = rng.integers(-bound, bound, size=(num_mdps, branch**depth), endpoint=True)
    transitions = tuple(
        rng.dirichlet(np.ones(branch), size=(num_mdps, branch**level, num_actions)) for level in range(depth)
    )
    return TreeMDP(transitions=transitions, leaf_scores=leaf_scores)


def outcome_reward(scores) -> np.ndarray:
    """``r_outcome = 1[r_score > 0]``; a score of exactly 0 loses."""
    return (np.asarray(scores) > 0).astype(np.float64)


def _action_values(transitions: np.ndarray, child_values: np.ndarray):
    """q(s, a) = sum_j p(child_j | s, a) v(child_j).  -> [M, b**l, A]."""
    num_mdps, num_states, _, branch = transitions.shape
    children = child_values.reshape(num_mdps, num_states, branch)
    return np.einsum("msab,msb->msa", transitions, children)


def _take(q: np.ndarray, actions: np.ndarray) -> np.ndarray:
    return np.take_along_axis(q, actions[..., None], axis=-1)[..., 0]


def _first_near_max(x: np.ndarray, tol: float) -> np.ndarray:
    near = x >= x.max(axis=-1, keepdims=True) - tol
    return np.argmax(near, axis=-1)


def _tolerance(leaf_values: np.ndarray) -> float:
    return _TIE_RTOL * max(1.0, float(np.max(np.abs(leaf_values))))


def evaluate_policy(mdp: TreeMDP, policy: Sequence[np.ndarray], leaf_values) -> TreeValues:
    """Exact policy evaluation for any leaf reward.

    Because rewards come only at the leaves, the same sweep gives the score
    value (``leaf_values = r``), the winrate (``outcome_reward(r)``) and the
    score's second moment (``r**2``).

    Args:
      mdp: the MDP batch.
      policy: deterministic policy, one ``[M, b**l]`` int array per level
        ``l = 0..d-1``.
      leaf_values: ``[M, b**d]`` reward at each leaf.

    Returns:
      :class:`TreeValues` of the policy.
    """
    depth = mdp.depth
    values = [None] * (depth + 1)
    values[depth] = np.asarray(leaf_values, np.float64)
    q = [None] * depth
    for level in reversed(range(depth)):
        q[level] = _action_values(mdp.transitions[level], values[level + 1])
        values[level] = _take(q[level], np.asarray(policy[level]))
    return TreeValues(q=tuple(q), v=tuple(values))


def optimal_policy(mdp: TreeMDP, leaf_values, *, tie_break_values=None) -> tuple[tuple[np.ndarray, ...], TreeValues]:
    """Backward induction: an optimal deterministic policy and its values.

    Args:
      mdp: the MDP batch.
      leaf_values: ``[M, b**d]`` reward to maximise.
      tie_break_values: optional ``[M, b**d]`` second reward. Among actions
        whose value is within a relative 1e-9 of the best, the policy picks the
        best one for this reward (its value following the policy being built);
        remaining ties go to the lowest action index. ``None``: lowest index.

    Returns:
      ``(policy, values)``: one ``[M, b**l]`` int array per level ``0..d-1``,
      and the :class:`TreeValues` of ``leaf_values`` under that policy.
    """
    depth = mdp.depth
    values = [None] * (depth + 1)
    values[depth] = np.asarray(leaf_values, np.float64)
    tol = _tolerance(values[depth])
    if tie_break_values is not None:
        second = np.asarray(tie_break_values, np.float64)
        second_tol = _tolerance(second)
    q = [None] * depth
    policy = [None] * depth
    for level in reversed(range(depth)):
        transitions = mdp.transitions[level]
        q[level] = _action_values(transitions, values[level + 1])
        if tie_break_values is None:
            policy[level] = _first_near_max(q[level], tol)
        else:
            second_q = _action_values(transitions, second)
            near = q[level] >= q[level].max(axis=-1, keepdims=True) - tol
            policy[level] = _first_near_max(np.where(near, second_q, -np.inf), second_tol)
            second = _take(second_q, policy[level])
        values[level] = _take(q[level], policy[level])
    return tuple(policy), TreeValues(q=tuple(q), v=tuple(values))


def score_variance(mdp: TreeMDP, policy: Sequence[np.ndarray]) -> tuple[np.ndarray, ...]:
    """``Var_pi(r_score | s, a)``: final-score variance following pi after a.

    Computed as in §IV-C, ``E_pi[r_score**2 | s, a] - q_pi^score(s, a)**2``,
    with both moments from :func:`evaluate_policy`. Rounding can leave a tiny
    residue where the true variance is 0; values below ``1e-12 * max(r**2)``
    are set to exactly 0.

    Args:
      mdp: the MDP batch.
      policy: one ``[M, b**l]`` int array per level ``l = 0..d-1``.

    Returns:
      One ``[M, b**l, A]`` array per level ``l = 0..d-1``.
    """
    scores = mdp.leaf_scores.astype(np.float64)
    first = evaluate_policy(mdp, policy, scores).q
    second = evaluate_policy(mdp, policy, scores**2).q
    floor = _VAR_RTOL * max(1.0, float(np.max(scores**2)))
    out = []
    for m1, m2 in zip(first, second):
        var = m2 - m1**2
        out.append(np.where(var > floor, var, 0.0))
    return tuple(out)


def solve_tree_mdps(mdp: TreeMDP, *, tie_break: str = "lexicographic") -> TreeSolution:
    """Score- and outcome-optimal policies, cross-evaluated, with variances.

    Args:
      mdp: the MDP batch.
      tie_break: ``'lexicographic'`` (each policy breaks ties by the other
        reward, the default; see the module docstring) or ``'first'`` (lowest
        action index).

    Returns:
      A :class:`TreeSolution`.
    """
    if tie_break not in ("lexicographic", "first"):
        raise ValueError(f"tie_break must be 'lexicographic' or 'first', got {tie_break!r}")
    scores = mdp.leaf_scores.astype(np.float64)
    outcomes = outcome_reward(mdp.leaf_scores)
    lexicographic = tie_break == "lexicographic"
    pi_score, score_of_score = optimal_policy(mdp, scores, tie_break_values=outcomes if lexicographic else None)
    pi_outcome, outcome_of_outcome = optimal_policy(mdp, outcomes, tie_break_values=scores if lexicographic else None)
    return TreeSolution(
        pi_score=pi_score,
        pi_outcome=pi_outcome,
        score_of_score=score_of_score,
        outcome_of_outcome=outcome_of_outcome,
        outcome_of_score=evaluate_policy(mdp, pi_score, outcomes),
        var_of_score=score_variance(mdp, pi_score),
        var_of_outcome=score_variance(mdp, pi_outcome),
    )


def outcome_loss_by_level(solution: TreeSolution, *, atol: float = 1e-9) -> LevelLoss:
    """Fig. 3: winrate lost by playing pi_score instead of pi_outcome.

    Averages ``v_outcome^pi_outcome(s) - v_outcome^pi_score(s)`` over every
    state of each level (reachable or not, as in the paper) and over all MDPs.

    Args:
      solution: from :func:`solve_tree_mdps`.
      atol: a loss counts as strictly positive above this.

    Returns:
      A :class:`LevelLoss` with one entry per level ``0..d``.
    """
    losses = [best - score for best, score in zip(solution.outcome_of_outcome.v, solution.outcome_of_score.v)]
    return LevelLoss(
        mean=np.array([loss.mean() for loss in losses]),
        fraction_positive=np.array([(loss > atol).mean() for loss in losses]),
        max=np.array([loss.max() for loss in losses]),
        num_states=np.array([loss.size for loss in losses]),
    )


def _log_ratio(variance, chosen, discarded):
    return np.log(_take(variance, chosen)) - np.log(_take(variance, discarded))


def variance_preference(solution: TreeSolution) -> VariancePreference:
    """Fig. 4 data: log-ratio of score variances where the policies disagree.

    For each nonterminal state s with ``pi_outcome(s) != pi_score(s)`` and a
    policy pi+ (the other one is pi-), §IV-C defines

        y(s) = log Var_pi+(r | s, pi+(s)) - log Var_pi+(r | s, pi-(s)),

    both variances along pi+'s own trajectories (item 2 computes only
    ``Var_pi+``, and the Fig. 4 caption says "with variances computed along
    their own trajectories"). y > 0 means pi+ chose the riskier action.
    ``log_ratio_outcome`` uses pi+ = pi_outcome, ``log_ratio_score`` pi+ =
    pi_score. Item 3 as printed subtracts ``log Var_pi-(r | s, pi-(s))``
    instead; with that reading the score curve would be exactly minus the
    outcome curve, so it is reported separately as ``log_ratio_printed``
    (pi+ = pi_outcome) for comparison.

    States where one of the variances is 0 (only possible when all leaves
    reachable from s share one score) have no finite log and are dropped.

    Args:
      solution: from :func:`solve_tree_mdps`.

    Returns:
      A :class:`VariancePreference`; the x-axis of Fig. 4 is ``winrate``, the
      outcome-optimal value ``v_outcome^pi_outcome(s)``.
    """
    columns = {name: [] for name in VariancePreference._fields[:5]}
    num_disagreements = num_zero = 0
    for level, (pi_s, pi_o) in enumerate(zip(solution.pi_score, solution.pi_outcome)):
        differ = pi_s != pi_o
        num_disagreements += int(differ.sum())
        var_o = solution.var_of_outcome[level]
        var_s = solution.var_of_score[level]
        with np.errstate(divide="ignore", invalid="ignore"):
            y_outcome = _log_ratio(var_o, pi_o, pi_s)
            y_score = _log_ratio(var_s, pi_s, pi_o)
            y_printed = np.log(_take(var_o, pi_o)) - np.log(_take(var_s, pi_s))
        finite = np.isfinite(y_outcome) & np.isfinite(y_score) & np.isfinite(y_printed)
        keep = differ & finite
        num_zero += int((differ & ~finite).sum())
        columns["winrate"].append(solution.outcome_of_outcome.v[level][keep])
        columns["log_ratio_outcome"].append(y_outcome[keep])
        columns["log_ratio_score"].append(y_score[keep])
        columns["log_ratio_printed"].append(y_printed[keep])
        columns["level"].append(np.full(int(keep.sum()), level))
    return VariancePreference(
        **{name: np.concatenate(parts) for name, parts in columns.items()},
        num_disagreements=num_disagreements,
        num_zero_variance=num_zero,
    )


def binned_median(x, y, *, num_bins: int = 100, lo: float = 0.0, hi: float = 1.0):
    """Median of y in equal-width bins of x over ``[lo, hi]`` (``hi`` included).

    Args:
      x: ``[K]`` positions.
      y: ``[K]`` values.
      num_bins: number of bins (Fig. 4 uses 100).
      lo, hi: the binned range; points outside it are ignored.

    Returns:
      ``(centers, medians, counts)``, each ``[num_bins]``; empty bins have a
      NaN median.
    """
    x = np.asarray(x, np.float64)
    y = np.asarray(y, np.float64)
    edges = np.linspace(lo, hi, num_bins + 1)
    inside = (x >= lo) & (x <= hi)
    index = np.clip(np.searchsorted(edges, x[inside], side="right") - 1, 0, num_bins - 1)
    y = y[inside]
    medians = np.full(num_bins, np.nan)
    counts = np.bincount(index, minlength=num_bins)
    order = np.argsort(index, kind="stable")
    for b, chunk in enumerate(np.split(y[order], np.cumsum(counts)[:-1])):
        if chunk.size:
            medians[b] = np.median(chunk)
    return 0.5 * (edges[:-1] + edges[1:]), medians, counts
