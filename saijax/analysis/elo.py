"""Maximum-likelihood Elo ratings over a graph of pairings, with draws (docs/design.md §8).

Matches write one row per game to a results table (:mod:`saijax.analysis.results`,
JSONL or CSV); the fit needs only its columns ``black``, ``white`` and
``winner`` (``"black"``, ``"white"`` or ``"draw"``). This module fits one
rating per player to such a table, as in the extended SAI paper (§3.5), which
used a BayesElo-like maximum-likelihood estimator specialised for the draws
that integer komi produces in Go.

Model. The draw model is Rao–Kupper's, the one BayesElo uses (not Davidson's).
With ``F(z) = 1 / (1 + 10^(-z / 400))`` the logistic on the Elo scale and, for
a game between ``b`` (black) and ``w`` (white),
``x = r_b - r_w + adv``::

    P(black wins) = F(x - d)
    P(white wins) = F(-x - d) = 1 - F(x + d)
    P(draw)       = F(x + d) - F(x - d)

``adv`` is black's first-move advantage in Elo (positive favours black; with
komi it may well come out negative) and ``d >= 0`` the draw parameter: two
equal players draw with probability ``2 F(d) - 1``. Rao–Kupper was chosen over
Davidson because it is BayesElo's model, so ratings and ``d`` compare directly
with BayesElo output, and because it keeps every outcome a sum of ``log F``
terms: the draw probability factors as
``F(x + d) F(d - x) (1 - 10^(-2d / 400))``. The log-likelihood is then concave
in ``(r, adv, d)`` jointly, so the optimum is unique and Newton converges.

If no game in the table is a draw (half-point komi), ``d`` is not fitted and
is exactly 0: the model is then Bradley–Terry with a colour advantage.

Anchor. One player's rating is fixed at 0 and the others are fitted relative
to it. By default that is the player named ``"random"`` (the random net, as in
the paper's Figure 3) if there is one, else the first player in alphabetical
order.

Prior. A player who won (or lost) every game has an infinite maximum-likelihood
rating. As BayesElo does, the remedy is virtual draws: each counts as half a
win and half a loss between two players, with no colour, i.e. adds
``1/2 · (log F(r_i - r_j) + log F(r_j - r_i))`` to the objective, so it pulls
only the two ratings together and leaves ``adv`` and ``d`` to the real games.
Where the virtual draws go is the ``prior_draws`` argument:

* ``None`` (default): the plain MLE whenever it exists, which is what the SAI
  paper fits. Only if it does not (Ford's condition fails: some group of
  players never won nor drew against the rest), one virtual draw is put on
  each *one-sided* pairing, those between the strongly connected components
  of the "won or drew against" graph, and nowhere else. Should the fitted
  advantage still run off (tiny tables where a draw can be put down to
  black's advantage), one virtual draw goes on every pairing instead.
* a number ``x > 0``: ``x`` virtual draws on every pairing that was played,
  BayesElo's constant prior. With several hundred games per pair its effect is
  ~1 Elo, but beware: on a long chain of generations with many lopsided
  pairings (1000 Elo apart, all won by one side) each such pairing pulls its
  two ends together with no counter-force from its games, and the total span
  of the ratings shrinks noticeably.
* ``0``: the plain MLE; a table in which it does not exist raises
  ``ValueError``.

Uncertainty. Confidence intervals are Wald intervals from the observed
information: ``±1.96 · sqrt(diag((-H)^-1))``, with ``H`` the Hessian of the
(prior-penalised) log-likelihood at the optimum in the anchored
parameterisation, so the anchor has a zero-width interval and every other
interval is relative to the anchor. Optionally ``bootstrap=n`` refits ``n``
resamples of the games (with replacement) with the same estimator, prior
choice included, and reports percentile intervals.

Whether the estimate exists at all (no parameter running off to infinity) is
checked exactly before fitting, with a small linear programme; an estimate
that does not exist, or parameters the games cannot separate (singular
information), raise ``ValueError`` naming the parameters involved.

The pairing graph must be connected: ratings in two components that never met
are not comparable, so :func:`fit_elo` raises a ``ValueError`` listing the
components.

CLI::

    python -m saijax.elo results.jsonl [--anchor NAME] [--plot out.png]
        [--no-advantage] [--prior-draws X] [--bootstrap N] [--seed S]
"""

from __future__ import annotations

import collections
import dataclasses
import math
import os
import re
from collections.abc import Iterable, Mapping, Sequence

import numpy as np
import scipy.optimize
import scipy.sparse
import scipy.sparse.csgraph
import scipy.special

from saijax.analysis import results

__all__ = [
    "EloFit",
    "fit_elo",
    "format_table",
    "plot_ratings",
]

# Natural-log-odds per Elo point: F(z) = expit(_C * z).
_C = math.log(10.0) / 400.0
_Z95 = 1.959963984540054


@dataclasses.dataclass(frozen=True)
class EloFit:
    """The result of :func:`fit_elo`. All ratings and parameters are in Elo.

    Attributes:
      ratings: player -> rating, with ``ratings[anchor] == 0``.
      ci: player -> (low, high) 95% Wald interval from the observed information.
      stderr: player -> standard error (0 for the anchor).
      draw_elo: the draw parameter ``d`` (0 when the table has no draws).
      draw_elo_ci: 95% interval of ``d`` (low end clipped at 0).
      advantage: black's first-move advantage ``adv`` (0 when not fitted).
      advantage_ci: 95% interval of ``adv``.
      n_games: player -> number of games played.
      record: player -> (wins, draws, losses), all colours.
      log_likelihood: log-likelihood of the games at the optimum (natural log,
        prior excluded).
      anchor: the player fixed at 0.
      total_games: number of games in the table.
      prior_draws: virtual draws added per prior pairing (0 if none).
      prior_pairs: the pairings that received virtual draws.
      first_move_advantage: whether ``adv`` was fitted.
      bootstrap_ci: player -> (low, high) 95% percentile interval from the
        bootstrap, or ``None`` if no bootstrap was run.
      bootstrap_samples: number of bootstrap resamples fitted (0 if none).
    """

    ratings: dict[str, float]
    ci: dict[str, tuple[float, float]]
    stderr: dict[str, float]
    draw_elo: float
    draw_elo_ci: tuple[float, float]
    advantage: float
    advantage_ci: tuple[float, float]
    n_games: dict[str, int]
    record: dict[str, tuple[int, int, int]]
    log_likelihood: float
    anchor: str
    total_games: int
    prior_draws: float
    prior_pairs: tuple[tuple[str, str], ...]
    first_move_advantage: bool
    bootstrap_ci: dict[str, tuple[float, float]] | None = None
    bootstrap_samples: int = 0


# ----------------------------------------------------------------------------
# The likelihood.


@dataclasses.dataclass(frozen=True)
class _Problem:
    """Games aggregated into sparse linear terms of the parameter vector.

    The parameter vector θ (internal natural-log-odds units, Elo · _C) is
    ``[ratings of non-anchor players..., adv (if fitted), d (if fitted)]``.
    The objective is ``Σ_k weights[k] · log F(terms[k] @ θ) + n_draws · h(d)``
    over game terms, plus the same over prior terms, where
    ``h(d) = log(1 - e^{-2d})`` is the draw factor.
    """

    terms: scipy.sparse.csr_matrix  # [K, P]
    weights: np.ndarray  # [K]
    prior_terms: scipy.sparse.csr_matrix  # [Q, P]
    prior_weights: np.ndarray  # [Q]
    n_draws: float
    adv_index: int | None
    d_index: int | None
    n_params: int


def _log_expit(z: np.ndarray) -> np.ndarray:
    return -np.logaddexp(0.0, -z)


def _value_grad_hess(theta: np.ndarray, prob: _Problem, *, with_prior: bool = True):
    """Log-likelihood, gradient and Hessian at θ (internal units).

    Returns:
      (value, gradient [P], Hessian [P, P]); the Hessian is dense.
    """
    value = 0.0
    grad = np.zeros(prob.n_params)
    hess = np.zeros((prob.n_params, prob.n_params))
    parts = [(prob.terms, prob.weights)]
    if with_prior:
        parts.append((prob.prior_terms, prob.prior_weights))
    for terms, weights in parts:
        if terms.shape[0] == 0:
            continue
        z = terms @ theta
        value += float(weights @ _log_expit(z))
        # d/dz log F(z) = F(-z);  d²/dz² log F(z) = -F(z) F(-z).
        grad += terms.T @ (weights * scipy.special.expit(-z))
        curvature = weights * scipy.special.expit(z) * scipy.special.expit(-z)
        hess -= (terms.T @ scipy.sparse.diags(curvature) @ terms).toarray()
    if prob.d_index is not None and prob.n_draws > 0:
        d = theta[prob.d_index]
        if d <= 0:
            return -np.inf, grad, hess
        # h(d) = log(1 - e^{-2d}); h' = coth(d) - 1; h'' = -1 / sinh²(d).
        value += prob.n_draws * math.log(-math.expm1(-2.0 * d))
        grad[prob.d_index] += prob.n_draws * 2.0 / math.expm1(2.0 * d)
        hess[prob.d_index, prob.d_index] -= prob.n_draws / math.sinh(d) ** 2
    return value, grad, hess


def _build_problem(
    players: Sequence[str],
    anchor: str,
    cells: np.ndarray,
    pairs: np.ndarray,
    *,
    fit_advantage: bool,
    prior_draws: float,
) -> _Problem:
    """Turns per-cell outcome counts into the sparse term matrices.

    Args:
      players: sorted player names.
      anchor: the player fixed at 0.
      cells: [M, 5] int array of (black index, white index, black wins,
        draws, white wins), one row per ordered pairing.
      pairs: [E, 2] unordered pairs (i < j) that receive prior draws.
      fit_advantage: whether θ has an ``adv`` entry.
      prior_draws: virtual draws per pair.
    """
    column = {}
    for i, name in enumerate(players):
        if name != anchor:
            column[i] = len(column)
    n = len(column)
    adv_index = n if fit_advantage else None
    n_draws = float(cells[:, 3].sum()) if len(cells) else 0.0
    fit_draw = n_draws > 0
    d_index = n + int(fit_advantage) if fit_draw else None
    n_params = n + int(fit_advantage) + int(fit_draw)

    rows, cols, vals, weights = [], [], [], []

    def add(coeffs: list[tuple[int | None, float]], weight: float):
        if weight <= 0:
            return
        k = len(weights)
        for col, val in coeffs:
            if col is not None:
                rows.append(k)
                cols.append(col)
                vals.append(val)
        weights.append(weight)

    for b, w, n_black, n_draw, n_white in cells:
        cb, cw = column.get(int(b)), column.get(int(w))
        # x = r_b - r_w + adv.
        x = [(cb, 1.0), (cw, -1.0), (adv_index, 1.0)]
        neg_x = [(c, -v) for c, v in x]
        add(x + [(d_index, -1.0)], n_black)  # F(x - d)
        add(neg_x + [(d_index, -1.0)], n_white)  # F(-x - d)
        add(x + [(d_index, 1.0)], n_draw)  # F(x + d) ...
        add(neg_x + [(d_index, 1.0)], n_draw)  # ... · F(d - x) · (1 - e^{-2d})

    def matrix():
        return scipy.sparse.csr_matrix((vals, (rows, cols)), shape=(len(weights), n_params))

    terms, term_weights = matrix(), np.asarray(weights, float)
    rows, cols, vals, weights = [], [], [], []
    for i, j in pairs:
        ci, cj = column.get(int(i)), column.get(int(j))
        add([(ci, 1.0), (cj, -1.0)], 0.5 * prior_draws)
        add([(ci, -1.0), (cj, 1.0)], 0.5 * prior_draws)
    prior_terms, prior_weights = matrix(), np.asarray(weights, float)
    return _Problem(terms, term_weights, prior_terms, prior_weights, n_draws, adv_index, d_index, n_params)


def _solve(prob: _Problem, initial_draw: float) -> np.ndarray:
    """Maximises the penalised log-likelihood; returns θ (internal units).

    The optimiser (scipy's trust-region Newton-CG, ``trust-ncg``, with the
    exact Hessian) works on ``log d`` so that ``d`` stays positive; the
    objective is concave in ``d`` itself, and a monotone change of variable
    keeps the maximum unique.
    """
    di = prob.d_index

    def to_theta(phi):
        theta = phi.copy()
        if di is not None:
            theta[di] = math.exp(min(phi[di], 50.0))
        return theta

    def parts(phi):
        theta = to_theta(phi)
        value, grad, hess = _value_grad_hess(theta, prob)
        if di is not None:
            d = theta[di]
            g_d = grad[di]
            hess[di, :] *= d
            hess[:, di] *= d
            hess[di, di] += d * g_d
            grad[di] = d * g_d
        return -value, -grad, -hess

    cache = {}

    def cached(phi):
        key = phi.tobytes()
        if key not in cache:
            cache.clear()
            cache[key] = parts(phi)
        return cache[key]

    phi0 = np.zeros(prob.n_params)
    if di is not None:
        phi0[di] = math.log(initial_draw)
    scale = max(1.0, float(prob.weights.sum() + prob.prior_weights.sum()))
    result = scipy.optimize.minimize(
        lambda p: cached(p)[0],
        phi0,
        method="trust-ncg",
        jac=lambda p: cached(p)[1],
        hess=lambda p: cached(p)[2],
        options={"gtol": 1e-9 * scale, "maxiter": 500},
    )
    theta = to_theta(result.x)
    if not result.success or not np.all(np.isfinite(theta)):
        # trust-ncg can report failure when it stalls at machine precision;
        # accept the point if the gradient is negligible there.
        _, grad, _ = parts(result.x)
        if not np.all(np.isfinite(grad)) or np.max(np.abs(grad)) > 1e-5 * scale:
            raise RuntimeError(f"Elo fit did not converge: {result.message}")
    return theta


def _covariance(theta: np.ndarray, prob: _Problem, players: Sequence[str], anchor: str) -> np.ndarray:
    """Inverse observed information (-H)^-1 at θ, internal units."""
    _, _, hess = _value_grad_hess(theta, prob)
    eigenvalues, eigenvectors = np.linalg.eigh(-hess)
    if eigenvalues[0] <= 1e-12 * max(eigenvalues[-1], 1e-300):
        raise ValueError(
            "the parameters are not identifiable from these games (singular "
            "information matrix): the games cannot separate "
            + _describe_direction(eigenvectors[:, 0], prob, players, anchor)
            + ". This happens e.g. when pairings were played with one colour "
            "only; use first_move_advantage=False or prior_draws > 0."
        )
    return (eigenvectors / eigenvalues) @ eigenvectors.T


# ----------------------------------------------------------------------------
# Graph checks.


def _components(n: int, i: np.ndarray, j: np.ndarray, *, directed: bool):
    graph = scipy.sparse.coo_matrix((np.ones(len(i)), (i, j)), shape=(n, n))
    return scipy.sparse.csgraph.connected_components(graph, directed=directed, connection="strong")


def _check_connected(players: Sequence[str], cells: np.ndarray, anchor: str):
    n_comp, labels = _components(len(players), cells[:, 0], cells[:, 1], directed=False)
    if n_comp == 1:
        return
    groups = [sorted(players[k] for k in np.flatnonzero(labels == c)) for c in range(n_comp)]
    groups.sort(key=lambda g: (anchor not in g, g))
    listing = "; ".join(
        f"component {k + 1} ({len(g)} players{', anchor' if anchor in g else ''}): " + ", ".join(g)
        for k, g in enumerate(groups)
    )
    raise ValueError(
        f"the pairing graph is disconnected: {n_comp} components that never "
        f"played each other, so their ratings cannot be compared. {listing}"
    )


def _one_sided_pairs(players: Sequence[str], cells: np.ndarray) -> np.ndarray:
    """Pairings that make the maximum-likelihood ratings infinite.

    Draw an edge i -> j when i won or drew a game against j. The MLE of the
    ratings is finite iff this directed graph is strongly connected (Ford's
    condition). Otherwise the pairings between different strongly connected
    components are exactly the one-sided ones (one side never scored), and
    this returns them as [E, 2] unordered pairs.
    """
    src, dst = [], []
    for b, w, n_black, n_draw, n_white in cells:
        if n_black or n_draw:
            src.append(b)
            dst.append(w)
        if n_white or n_draw:
            src.append(w)
            dst.append(b)
    _, labels = _components(len(players), np.asarray(src, int), np.asarray(dst, int), directed=True)
    crossing = cells[labels[cells[:, 0]] != labels[cells[:, 1]], :2]
    return np.unique(np.sort(crossing, axis=1), axis=0).reshape(-1, 2)


def _separating_direction(prob: _Problem) -> np.ndarray | None:
    """A direction along which the objective grows forever, or None.

    The objective is a positive sum of increasing concave terms ``log F(a_k·θ)``
    (plus ``h(d)``, increasing in ``d``), so it has no maximum iff some
    direction ``v`` has ``a_k·v >= 0`` for every term, strictly for one, with
    ``v_d >= 0`` (the separation condition of logistic regression). A small
    linear programme finds such a direction if there is one.
    """
    terms = scipy.sparse.vstack([prob.terms, prob.prior_terms]).tocsr()
    bounds = [(-1.0, 1.0)] * prob.n_params
    if prob.d_index is not None:
        bounds[prob.d_index] = (0.0, 1.0)
    result = scipy.optimize.linprog(
        -np.asarray(terms.sum(axis=0)).ravel(),
        A_ub=-terms,
        b_ub=np.zeros(terms.shape[0]),
        bounds=bounds,
        method="highs",
    )
    if result.status != 0 or -result.fun < 1e-7:
        return None
    return result.x


def _describe_direction(v: np.ndarray, prob: _Problem, players: Sequence[str], anchor: str) -> str:
    """Names the parameters that move along a direction of parameter space."""
    v = v / np.max(np.abs(v))
    names = [p for p in players if p != anchor]
    parts = [f"the rating of {names[k]}" for k in range(len(names)) if abs(v[k]) > 1e-6]
    if prob.adv_index is not None and abs(v[prob.adv_index]) > 1e-6:
        parts.append("the first-move advantage")
    if prob.d_index is not None and abs(v[prob.d_index]) > 1e-6:
        parts.append("the draw parameter")
    return ", ".join(parts)


# ----------------------------------------------------------------------------
# The fit.


def _default_anchor(players: Sequence[str]) -> str:
    return "random" if "random" in players else players[0]


def _tally(games: Iterable[results.GameResult | Mapping]) -> dict[tuple[str, str], list[int]]:
    """Counts (black wins, draws, white wins) per ordered pairing, validating."""
    counts = collections.defaultdict(lambda: [0, 0, 0])
    slot = {"black": 0, "draw": 1, "white": 2}
    columns = ("black", "white", "winner")
    for k, game in enumerate(games):
        if isinstance(game, results.GameResult):
            game = {name: getattr(game, name) for name in columns}
        try:
            black, white, winner = (game[name] for name in columns)
        except (KeyError, TypeError, IndexError):
            black = white = winner = None
        if winner not in slot or type(black) is not str or type(white) is not str or black == white:
            # Slow path: raises with a precise message, or normalises the row
            # (e.g. winner "Black", numeric names). Only the three columns the
            # fit uses are checked.
            try:
                row = game if not isinstance(game, Mapping) else {name: game.get(name) for name in columns}
                game = results.GameResult.from_dict(row)
            except ValueError as e:
                raise ValueError(f"game {k}: {e}") from None
            black, white, winner = game.black, game.white, game.winner
        counts[black, white][slot[winner]] += 1
    return counts


def _estimate(
    players: Sequence[str],
    anchor: str,
    cells: np.ndarray,
    all_pairs: np.ndarray,
    *,
    fit_advantage: bool,
    prior_draws: float | None,
) -> tuple[_Problem, np.ndarray, np.ndarray, float]:
    """Chooses the prior, checks the estimate exists, and maximises.

    Args:
      players, anchor: as in :func:`_build_problem`.
      cells: [M, 5] outcome counts per ordered pairing (some may be 0 in a
        bootstrap resample).
      all_pairs: [E, 2] every pairing of the original table.
      fit_advantage, prior_draws: as in :func:`fit_elo`.

    Returns:
      (problem, θ in internal units, [Q, 2] pairings given virtual draws,
      virtual draws per such pairing).
    """
    played = cells[cells[:, 2:].sum(axis=1) > 0]
    if prior_draws is None:
        pairs, weight = _one_sided_pairs(players, played), 1.0
    else:
        pairs, weight = all_pairs, float(prior_draws)
    if weight == 0:
        pairs = all_pairs[:0]
    _check_connected(players, np.concatenate([played[:, :2], pairs]), anchor)

    def build():
        return _build_problem(players, anchor, cells, pairs, fit_advantage=fit_advantage, prior_draws=weight)

    prob = build()
    direction = _separating_direction(prob)
    if direction is not None and prior_draws is None and len(pairs) < len(all_pairs):
        # Virtual draws on the one-sided pairings bound the ratings but not
        # always the advantage (e.g. a draw can be put down to black's
        # advantage instead of equal strength): fall back to one virtual draw
        # on every pairing, BayesElo's prior.
        pairs = all_pairs
        prob = build()
        direction = _separating_direction(prob)
    if direction is not None:
        raise ValueError(
            "the maximum-likelihood estimate does not exist: "
            + _describe_direction(direction, prob, players, anchor)
            + " can grow without bound, because some players (or one colour) "
            "won every game that bears on them. Use prior_draws > 0"
            + (" or first_move_advantage=False" if fit_advantage else "")
            + ", or play more games."
        )
    total = cells[:, 2:].sum()
    draw_fraction = min(max(cells[:, 3].sum() / max(total, 1), 1e-3), 0.99)
    theta = _solve(prob, initial_draw=scipy.special.logit((1 + draw_fraction) / 2))
    return prob, theta, pairs, weight


def _interval(value: float, stderr: float) -> tuple[float, float]:
    return (value - _Z95 * stderr, value + _Z95 * stderr)


def fit_elo(
    games: Iterable[results.GameResult | Mapping],
    *,
    anchor: str | None = None,
    first_move_advantage: bool = True,
    prior_draws: float | None = None,
    bootstrap: int = 0,
    seed: int = 0,
) -> EloFit:
    """Fits Rao–Kupper (BayesElo) ratings with draws to a table of games.

    See the module docstring for the model, the prior and the intervals.

    Args:
      games: :class:`saijax.analysis.results.GameResult` rows (e.g. from
        :func:`saijax.analysis.results.read_results`) or mappings, with ``black``,
        ``white`` and ``winner`` (``"black"``, ``"white"`` or ``"draw"``).
      anchor: the player rated 0; default ``"random"`` if present, else the
        alphabetically first player.
      first_move_advantage: fit black's advantage ``adv``; if False it is 0.
      prior_draws: virtual draws (half a win plus half a loss each) added to
        every pairing of players who met. ``None`` (default): the plain MLE,
        plus one virtual draw on each one-sided pairing only if the MLE would
        otherwise be infinite. ``0``: the plain MLE, or ``ValueError``.
      bootstrap: number of resamples of the games for percentile intervals
        (0: none). Each resample goes through the same estimator, the choice
        of prior pairings included; resamples whose estimate does not exist
        are dropped (``EloFit.bootstrap_samples`` counts the ones kept).
      seed: seed of the bootstrap resampling.

    Returns:
      An :class:`EloFit`.

    Raises:
      ValueError: no games, a bad row, an unknown anchor, a disconnected
        pairing graph (the message lists the components), an MLE that does not
        exist with ``prior_draws=0``, or unidentifiable parameters.
    """
    counts = _tally(games)
    if not counts:
        raise ValueError("no games to rate")
    if prior_draws is not None and not prior_draws >= 0:
        raise ValueError(f"prior_draws must be None or >= 0, got {prior_draws}")
    if bootstrap < 0:
        raise ValueError(f"bootstrap must be >= 0, got {bootstrap}")
    players = sorted({p for pair in counts for p in pair})
    if anchor is None:
        anchor = _default_anchor(players)
    elif anchor not in players:
        raise ValueError(f"anchor {anchor!r} played no game; players: {players}")
    index = {name: i for i, name in enumerate(players)}
    cells = np.array([[index[b], index[w], *c] for (b, w), c in sorted(counts.items())], dtype=np.int64)
    _check_connected(players, cells, anchor)
    all_pairs = np.unique(np.sort(cells[:, :2], axis=1), axis=0)

    def estimate(cells_):
        return _estimate(
            players, anchor, cells_, all_pairs, fit_advantage=first_move_advantage, prior_draws=prior_draws
        )

    def ratings_of(theta):
        r = np.zeros(len(players))
        r[[i for i, name in enumerate(players) if name != anchor]] = theta[: len(players) - 1]
        return r / _C

    prob, theta, prior_pairs, prior_weight = estimate(cells)
    cov = _covariance(theta, prob, players, anchor)
    loglik, _, _ = _value_grad_hess(theta, prob, with_prior=False)
    elo = ratings_of(theta)
    se = ratings_of(np.sqrt(np.diag(cov)))

    def param(idx):
        if idx is None:
            return 0.0, (0.0, 0.0)
        value, err = theta[idx] / _C, math.sqrt(cov[idx, idx]) / _C
        return value, _interval(value, err)

    advantage, advantage_ci = param(prob.adv_index)
    draw_elo, draw_ci = param(prob.d_index)
    draw_ci = (max(0.0, draw_ci[0]), draw_ci[1])

    boot_ci = None
    if bootstrap:
        rng = np.random.default_rng(seed)
        flat = cells[:, 2:].ravel()
        total = int(flat.sum())
        samples = []
        for _ in range(bootstrap):
            resampled = cells.copy()
            resampled[:, 2:] = rng.multinomial(total, flat / total).reshape(-1, 3)
            # The same estimator, prior choice included, on each resample. A
            # resample may lose the games that connect the graph or keep the
            # MLE finite (only possible with prior_draws=0 or a fitted
            # advantage); such a replicate is dropped.
            try:
                samples.append(ratings_of(estimate(resampled)[1]))
            except (RuntimeError, ValueError):
                pass
        if not samples:
            raise ValueError("no bootstrap resample could be fitted")
        lo, hi = np.percentile(np.array(samples), [2.5, 97.5], axis=0)
        boot_ci = {name: (float(lo[i]), float(hi[i])) for i, name in enumerate(players)}

    record = np.zeros((len(players), 3), dtype=np.int64)
    np.add.at(record, cells[:, 0], cells[:, 2:])
    np.add.at(record, cells[:, 1], cells[:, :1:-1])
    return EloFit(
        ratings={name: float(elo[i]) for i, name in enumerate(players)},
        ci={name: _interval(float(elo[i]), float(se[i])) for i, name in enumerate(players)},
        stderr={name: float(se[i]) for i, name in enumerate(players)},
        draw_elo=float(draw_elo),
        draw_elo_ci=(float(draw_ci[0]), float(draw_ci[1])),
        advantage=float(advantage),
        advantage_ci=(float(advantage_ci[0]), float(advantage_ci[1])),
        n_games={name: int(record[i].sum()) for i, name in enumerate(players)},
        record={name: tuple(int(x) for x in record[i]) for i, name in enumerate(players)},
        log_likelihood=float(loglik),
        anchor=anchor,
        total_games=int(cells[:, 2:].sum()),
        prior_draws=prior_weight if len(prior_pairs) else 0.0,
        prior_pairs=tuple((players[i], players[j]) for i, j in prior_pairs),
        first_move_advantage=first_move_advantage,
        bootstrap_ci=boot_ci,
        bootstrap_samples=len(samples) if bootstrap else 0,
    )


# ----------------------------------------------------------------------------
# Reporting.


def format_table(fit: EloFit) -> str:
    """Renders a fit as a text table, strongest player first.

    Args:
      fit: the result of :func:`fit_elo`.

    Returns:
      A multi-line string: a header with the anchor, the draw parameter and the
      advantage, then one row per player with rating, ±95% half-width, the
      bootstrap interval if any, games and wins/draws/losses.
    """

    def pm(ci):
        return (ci[1] - ci[0]) / 2

    lines = [
        f"{fit.total_games} games, {len(fit.ratings)} players, anchor {fit.anchor!r} = 0",
        (
            f"prior: {fit.prior_draws:g} virtual draw(s) on each of {len(fit.prior_pairs)} pairing(s)"
            if fit.prior_pairs
            else "no prior (plain maximum likelihood)"
        ),
        f"draw parameter d = {fit.draw_elo:.1f} Elo (± {pm(fit.draw_elo_ci):.1f})",
    ]
    if fit.first_move_advantage:
        lines.append(f"black advantage = {fit.advantage:+.1f} Elo (± {pm(fit.advantage_ci):.1f})")
    lines.append(f"log-likelihood = {fit.log_likelihood:.2f}")
    lines.append("")
    width = max(6, *(len(name) for name in fit.ratings))
    header = f"{'rank':>4}  {'player':<{width}}  {'elo':>8}  {'±95%':>7}"
    if fit.bootstrap_ci is not None:
        header += f"  {'bootstrap 95%':>19}"
    header += f"  {'games':>6}  {'W/D/L':>15}"
    lines += [header, "-" * len(header)]
    order = sorted(fit.ratings, key=lambda name: (-fit.ratings[name], name))
    for rank, name in enumerate(order, start=1):
        row = f"{rank:>4}  {name:<{width}}  {fit.ratings[name]:>8.1f}  {pm(fit.ci[name]):>7.1f}"
        if fit.bootstrap_ci is not None:
            lo, hi = fit.bootstrap_ci[name]
            row += f"  {f'[{lo:.1f}, {hi:.1f}]':>19}"
        wins, draws, losses = fit.record[name]
        row += f"  {fit.n_games[name]:>6}  {f'{wins}/{draws}/{losses}':>15}"
        lines.append(row)
    return "\n".join(lines)


_TRAILING_NUMBER = re.compile(r"(\d+)$")


def plot_ratings(fit: EloFit, path: str | os.PathLike) -> None:
    """Plots the ratings with their 95% intervals and saves the figure.

    If at least two players' names end in a number (``gen12``, ``sai-0040``),
    the ratings are plotted against that number, as the paper's Figure 3 does
    with generations, and players without one (e.g. ``random``) are drawn as
    horizontal reference lines. Otherwise the players are shown sorted by
    rating. Uses matplotlib's Agg canvas, so no display is needed.

    Args:
      fit: the result of :func:`fit_elo`.
      path: output image file; the extension picks the format.
    """
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(8, 5))
    FigureCanvasAgg(fig)
    ax = fig.add_subplot()

    def err(names):
        return np.array(
            [[fit.ratings[n] - fit.ci[n][0] for n in names], [fit.ci[n][1] - fit.ratings[n] for n in names]]
        )

    numbered = {n: int(m.group(1)) for n in fit.ratings if (m := _TRAILING_NUMBER.search(n))}
    if len(numbered) >= 2:
        names = sorted(numbered, key=lambda n: (numbered[n], n))
        ax.errorbar(
            [numbered[n] for n in names],
            [fit.ratings[n] for n in names],
            yerr=err(names),
            fmt="o-",
            ms=3,
            capsize=2,
            label="rated players",
        )
        for k, name in enumerate(sorted(set(fit.ratings) - set(numbered))):
            ax.axhline(fit.ratings[name], ls="--", lw=1, color=f"C{k + 1}", label=name)
        ax.set_xlabel("generation (number at the end of the name)")
        ax.legend(loc="best")
    else:
        names = sorted(fit.ratings, key=lambda n: (fit.ratings[n], n))
        ax.errorbar(range(len(names)), [fit.ratings[n] for n in names], yerr=err(names), fmt="o", capsize=3)
        ax.set_xticks(range(len(names)))
        ax.set_xticklabels(names, rotation=45, ha="right")
    ax.set_ylabel(f"Elo (anchor {fit.anchor} = 0), 95% CI")
    ax.set_title(f"Elo ratings from {fit.total_games} games")
    ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(os.fspath(path))
