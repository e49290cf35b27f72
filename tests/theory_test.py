"""Tests for saijax.analysis.theory ([SvW] §IV, see docs/design.md)."""

import itertools

import numpy as np
import pytest
from scipy import special

from saijax.analysis import theory


def _mdp(transitions, leaf_scores):
    """A one-MDP batch from per-level [b**l, A, b] lists."""
    return theory.TreeMDP(
        transitions=tuple(np.asarray(t, float)[None] for t in transitions), leaf_scores=np.asarray(leaf_scores)[None]
    )


def _squeeze(arrays):
    return [np.asarray(a)[0] for a in arrays]


# --------------------------------------------------------------------------
# Proposition 1.


def test_bandit_condition_matches_brute_force_on_a_grid():
    mu = np.arange(-3.0, 3.01, 0.25)
    sigma = np.arange(0.25, 3.01, 0.25)
    mu1, mu2, s1, s2 = np.meshgrid(mu, mu, sigma, sigma, indexing="ij")
    # Direct definition of eq. (1): better expected score, worse winrate.
    brute = (mu1 > mu2) & (special.ndtr(mu1 / s1) < special.ndtr(mu2 / s2))
    condition = theory.bandit_conflict(mu1, mu2, s1, s2)
    np.testing.assert_array_equal(condition, brute)
    # Both branches of the "if and only if" occur on the grid.
    assert (condition & (mu2 > 0)).any() and (condition & (mu1 < 0)).any()
    # A conflict never happens with means of opposite signs or a zero mean.
    assert not (condition & (mu1 * mu2 <= 0)).any()


def test_bandit_condition_examples_and_variance_preference():
    # Winning: outcome refuses the better-mean arm because it is noisier.
    assert theory.bandit_conflict(2.0, 1.0, 3.0, 1.0)
    assert not theory.bandit_conflict(2.0, 1.0, 1.5, 1.0)
    # Losing: outcome refuses the better-mean arm because it is quieter.
    assert theory.bandit_conflict(-0.5, -1.0, 0.2, 1.0)
    assert not theory.bandit_conflict(-0.5, -1.0, 0.8, 1.0)
    # On the boundary sigma1 = sigma2 * mu1 / mu2 the winrates are equal.
    assert not theory.bandit_conflict(2.0, 1.0, 2.0, 1.0)
    assert not theory.bandit_conflict(1.0, 0.0, 5.0, 1.0)
    np.testing.assert_allclose(theory.bandit_outcome_value(1.0, 1.0), special.ndtr(1.0))


def test_bandit_condition_against_sampling():
    rng = np.random.default_rng(0)
    mu1, mu2, s1, s2 = 0.6, 0.5, 1.5, 0.5  # winning, arm 1 too noisy
    assert theory.bandit_conflict(mu1, mu2, s1, s2)
    samples1 = rng.normal(mu1, s1, 200_000)
    samples2 = rng.normal(mu2, s2, 200_000)
    assert samples1.mean() > samples2.mean()
    assert (samples1 > 0).mean() + 0.05 < (samples2 > 0).mean()


# --------------------------------------------------------------------------
# Hand-computed MDPs.

# b = 2, d = 2, 2 actions; probabilities are dyadic so everything is exact.
# Level-1 state 0 is risky (leaves +4, -2), state 1 is safe (leaves +1, 0,
# and a score of 0 is a loss). At the root, action 0 has the better expected
# score, action 1 the better winrate.
_WINNING = dict(
    transitions=[
        [[[0.5, 0.5], [0.25, 0.75]]],
        [[[0.5, 0.5], [0.25, 0.75]], [[0.5, 0.5], [0.75, 0.25]]],
    ],
    leaf_scores=[4, -2, 1, 0],
)


def test_hand_computed_winning_mdp():
    mdp = _mdp(**_WINNING)
    sol = theory.solve_tree_mdps(mdp)
    # Level 1: state 0 q_score = (1, -0.5), q_outcome = (0.5, 0.25);
    # state 1 q_score = (0.5, 0.75), q_outcome = (0.5, 0.75).
    np.testing.assert_array_equal(sol.score_of_score.q[1][0], [[1.0, -0.5], [0.5, 0.75]])
    np.testing.assert_array_equal(sol.outcome_of_outcome.q[1][0], [[0.5, 0.25], [0.5, 0.75]])
    np.testing.assert_array_equal(sol.pi_score[1][0], [0, 1])
    np.testing.assert_array_equal(sol.pi_outcome[1][0], [0, 1])
    # Root: q_score = (0.5*1 + 0.5*0.75, 0.25*1 + 0.75*0.75) = (.875, .8125),
    # q_outcome = (0.5*0.5 + 0.5*0.75, 0.25*0.5 + 0.75*0.75) = (.625, .6875).
    np.testing.assert_array_equal(sol.score_of_score.q[0][0], [[0.875, 0.8125]])
    np.testing.assert_array_equal(sol.outcome_of_outcome.q[0][0], [[0.625, 0.6875]])
    assert sol.pi_score[0][0, 0] == 0 and sol.pi_outcome[0][0, 0] == 1
    np.testing.assert_array_equal(sol.outcome_of_score.v[0][0], [0.625])
    np.testing.assert_array_equal(sol.outcome_of_outcome.v[0][0], [0.6875])
    # Leaves: values are the rewards; the outcome of a 0 score is a loss.
    np.testing.assert_array_equal(sol.outcome_of_outcome.v[2][0], [1, 0, 1, 0])
    # Variances, E[r^2] - q^2. Level 1: state 0: (10 - 1, 7 - 0.25);
    # state 1: (0.5 - 0.25, 0.75 - 0.5625).
    for var in (sol.var_of_score, sol.var_of_outcome):
        np.testing.assert_allclose(var[1][0], [[9.0, 6.75], [0.25, 0.1875]], rtol=0, atol=1e-12)
        # Root: E[r^2] = (0.5*10 + 0.5*0.75, 0.25*10 + 0.75*0.75).
        np.testing.assert_allclose(var[0][0], [[5.375 - 0.875**2, 3.0625 - 0.8125**2]], rtol=0, atol=1e-12)
    loss = theory.outcome_loss_by_level(sol)
    np.testing.assert_allclose(loss.mean, [0.0625, 0.0, 0.0], atol=1e-15)
    np.testing.assert_array_equal(loss.fraction_positive, [1.0, 0.0, 0.0])
    # Winning (winrate 0.6875): the outcome policy chose the quieter action.
    pref = theory.variance_preference(sol)
    assert pref.num_disagreements == 1
    np.testing.assert_array_equal(pref.winrate, [0.6875])
    expected = np.log(3.0625 - 0.8125**2) - np.log(5.375 - 0.875**2)
    np.testing.assert_allclose(pref.log_ratio_outcome, [expected])
    np.testing.assert_allclose(pref.log_ratio_score, [-expected])
    assert pref.log_ratio_outcome[0] < 0


def test_hand_computed_losing_mdp():
    # b = 3, d = 1: leaves +2, -1, -2. Action 0: (0, 3/4, 1/4), a sure loss
    # with score -1.25; action 1: (1/8, 0, 7/8), score -1.5 but wins 1/8.
    mdp = _mdp([[[[0.0, 0.75, 0.25], [0.125, 0.0, 0.875]]]], [2, -1, -2])
    sol = theory.solve_tree_mdps(mdp)
    np.testing.assert_array_equal(sol.score_of_score.q[0][0], [[-1.25, -1.5]])
    np.testing.assert_array_equal(sol.outcome_of_outcome.q[0][0], [[0.0, 0.125]])
    assert sol.pi_score[0][0, 0] == 0 and sol.pi_outcome[0][0, 0] == 1
    # Var: (0.75 + 1 - 1.5625, 0.5 + 3.5 - 2.25).
    np.testing.assert_allclose(sol.var_of_score[0][0], [[0.1875, 1.75]], atol=1e-12)
    np.testing.assert_array_equal(theory.outcome_loss_by_level(sol).mean, [0.125, 0.0])
    # Losing: the outcome policy chose the riskier action.
    pref = theory.variance_preference(sol)
    np.testing.assert_allclose(pref.log_ratio_outcome, [np.log(1.75 / 0.1875)])
    assert pref.log_ratio_score[0] < 0


def test_tie_breaking():
    # Both leaves win, so every action has winrate 1; action 1 scores more.
    mdp = _mdp([[[[0.5, 0.5], [0.75, 0.25]]]], [3, 1])
    lexicographic = theory.solve_tree_mdps(mdp)
    assert lexicographic.pi_outcome[0][0, 0] == 1
    assert theory.variance_preference(lexicographic).num_disagreements == 0
    first = theory.solve_tree_mdps(mdp, tie_break="first")
    assert first.pi_outcome[0][0, 0] == 0 and first.pi_score[0][0, 0] == 1
    # Both choices are outcome-optimal: no loss either way.
    for sol in (lexicographic, first):
        np.testing.assert_array_equal(theory.outcome_loss_by_level(sol).mean, [0.0, 0.0])
    with pytest.raises(ValueError, match="tie_break"):
        theory.solve_tree_mdps(mdp, tie_break="random")


# --------------------------------------------------------------------------
# Random MDPs against independent implementations.


def test_random_tree_mdps_shapes_and_ranges():
    mdp = theory.random_tree_mdps(np.random.default_rng(1), 500, branch=2, depth=3, num_actions=3)
    assert (mdp.num_mdps, mdp.branch, mdp.depth, mdp.num_actions) == (500, 2, 3, 3)
    for level, p in enumerate(mdp.transitions):
        assert p.shape == (500, 2**level, 3, 2)
        assert (p >= 0).all()
        np.testing.assert_allclose(p.sum(-1), 1.0)
    assert mdp.leaf_scores.shape == (500, 8)
    assert np.issubdtype(mdp.leaf_scores.dtype, np.integer)
    # Integers uniform in [-8, 8], both ends included.
    assert mdp.leaf_scores.min() == -8 and mdp.leaf_scores.max() == 8
    assert len(np.unique(mdp.leaf_scores)) == 17
    # Dirichlet(1, 1): the first coordinate is uniform on [0, 1].
    assert abs(mdp.transitions[2][..., 0].mean() - 0.5) < 0.01
    with pytest.raises(ValueError, match="depth"):
        theory.random_tree_mdps(np.random.default_rng(0), 1, branch=2, depth=0, num_actions=2)


def _leaf_distribution(mdp, policy, level, state, action):
    """P(leaf | s, a, then policy), by walking the tree (one MDP)."""
    b, d = mdp.branch, mdp.depth
    dist = {}
    stack = [(level, state, action, 1.0)]
    while stack:
        lvl, s, a, prob = stack.pop()
        for j in range(b):
            child, p = s * b + j, prob * mdp.transitions[lvl][0, s, a, j]
            if lvl + 1 == d:
                dist[child] = dist.get(child, 0.0) + p
            else:
                stack.append((lvl + 1, child, policy[lvl + 1][0, child], p))
    return dist


@pytest.mark.parametrize("branch,depth,num_actions", [(2, 3, 2), (3, 2, 3)])
def test_values_and_variances_against_leaf_distributions(branch, depth, num_actions):
    rng = np.random.default_rng(2)
    for _ in range(5):
        mdp = theory.random_tree_mdps(rng, 1, branch=branch, depth=depth, num_actions=num_actions)
        sol = theory.solve_tree_mdps(mdp)
        scores = mdp.leaf_scores[0].astype(float)
        for policy, var in ((sol.pi_score, sol.var_of_score), (sol.pi_outcome, sol.var_of_outcome)):
            score_q = theory.evaluate_policy(mdp, policy, scores[None]).q
            outcome_q = theory.evaluate_policy(mdp, policy, (scores > 0)[None]).q
            for level in range(depth):
                for s in range(branch**level):
                    for a in range(num_actions):
                        dist = _leaf_distribution(mdp, policy, level, s, a)
                        leaves = np.array(list(dist))
                        probs = np.array(list(dist.values()))
                        mean = probs @ scores[leaves]
                        assert score_q[level][0, s, a] == pytest.approx(mean, abs=1e-10)
                        assert outcome_q[level][0, s, a] == pytest.approx(probs @ (scores[leaves] > 0), abs=1e-12)
                        assert var[level][0, s, a] == pytest.approx(probs @ (scores[leaves] - mean) ** 2, abs=1e-9)


def test_backward_induction_beats_every_deterministic_policy():
    # b = 2, d = 2, 3 actions: 3 decision states, 27 deterministic policies.
    rng = np.random.default_rng(3)
    for _ in range(10):
        mdp = theory.random_tree_mdps(rng, 1, branch=2, depth=2, num_actions=3)
        sol = theory.solve_tree_mdps(mdp)
        scores = mdp.leaf_scores.astype(float)
        best_score = [np.full(2**depth, -np.inf) for depth in range(3)]
        best_outcome = [np.full(2**depth, -np.inf) for depth in range(3)]
        for root, s0, s1 in itertools.product(range(3), repeat=3):
            policy = (np.array([[root]]), np.array([[s0, s1]]))
            for best, leaf in ((best_score, scores), (best_outcome, theory.outcome_reward(scores))):
                v = theory.evaluate_policy(mdp, policy, leaf).v
                for level in range(3):
                    best[level] = np.maximum(best[level], v[level][0])
        for level in range(3):
            np.testing.assert_allclose(sol.score_of_score.v[level][0], best_score[level], atol=1e-12)
            np.testing.assert_allclose(sol.outcome_of_outcome.v[level][0], best_outcome[level], atol=1e-12)


def test_outcome_policy_never_loses_to_score_policy():
    mdp = theory.random_tree_mdps(np.random.default_rng(4), 300, branch=3, depth=4, num_actions=3)
    for tie_break in ("lexicographic", "first"):
        sol = theory.solve_tree_mdps(mdp, tie_break=tie_break)
        for best, other in zip(sol.outcome_of_outcome.v, sol.outcome_of_score.v):
            assert (best - other >= -1e-12).all()
        # And symmetrically for the score.
        score_of_outcome = theory.evaluate_policy(mdp, sol.pi_outcome, mdp.leaf_scores.astype(float))
        for best, other in zip(sol.score_of_score.v, score_of_outcome.v):
            assert (best - other >= -1e-9).all()
        loss = theory.outcome_loss_by_level(sol)
        assert (loss.mean >= 0).all() and loss.mean[0] > 0
        assert loss.mean[-1] == 0  # leaves have no decision
        # Sec. IV-C: when losing, pi_outcome picks the riskier action; when
        # winning, the quieter one; pi_score disagrees with it.
        pref = theory.variance_preference(sol)
        losing, winning = pref.winrate < 0.5, pref.winrate > 0.5
        assert np.median(pref.log_ratio_outcome[losing]) > 0
        assert np.median(pref.log_ratio_outcome[winning]) < 0
        assert np.median(pref.log_ratio_score[losing]) < 0
        assert np.median(pref.log_ratio_score[winning]) > 0


def test_binned_median():
    x = np.array([0.0, 0.05, 0.2, 0.25, 0.3, 1.0, 1.5])
    y = np.array([1.0, 3.0, 5.0, 7.0, 9.0, 4.0, 100.0])
    centers, medians, counts = theory.binned_median(x, y, num_bins=4)
    np.testing.assert_allclose(centers, [0.125, 0.375, 0.625, 0.875])
    np.testing.assert_array_equal(counts, [3, 2, 0, 1])  # 1.5 is outside
    np.testing.assert_array_equal(medians[[0, 1, 3]], [3.0, 8.0, 4.0])
    assert np.isnan(medians[2])
