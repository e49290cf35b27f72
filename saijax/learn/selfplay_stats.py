"""Self-play's statistics of a generation (docs/design.md §6): the games'
results and lengths, resignations, the score estimate in late positions,
passes, the data's own komi curve and how self-play opened.

Pure host-side functions of :class:`saijax.learn.selfplay.FinishedGame` lists
(``saijax.learn.run_selfplay`` calls :func:`generation_stats` on each
generation's games); :mod:`saijax.learn.selfplay` does not import this module,
so the two form no import cycle.
"""

from __future__ import annotations

import collections
from typing import TYPE_CHECKING, Any

import numpy as np

from saijax.core import go

if TYPE_CHECKING:
    from saijax.learn.selfplay import FinishedGame

__all__ = [
    "SHARP_BETA",
    "KOMI_FIT_RIDGE",
    "LOCAL_KOMI_WINDOW",
    "WITHIN_MIN_GAMES",
    "late_score_stats",
    "pass_stats",
    "komi_curve_fit",
    "komi_curve_fit_within",
    "komi_curve_stats",
    "opening_stats",
    "generation_stats",
]


SHARP_BETA = 5.0  # SAI's "β > 5" in final and nearly final positions


def late_score_stats(games: list[FinishedGame]) -> dict[str, float]:
    """The score estimate in final and nearly final positions (SAI §2.5).

    Over the last quarter of the recorded positions of every game counted to
    the end (``score_errors``): ``score_error_late``, the mean |α + k − final
    margin|; ``beta_late``, the median root β; ``sharp_late_fraction``, the
    share of those positions with β > 5; ``score_error_sharp_late``, the
    mean error over them (SAI: α + k typically within ½ point, β > 5).
    """
    errors, betas = [], []
    for g in games:
        n = len(g.score_errors)
        if not n or len(g.score_betas) != n:
            continue
        first = (3 * n) // 4
        errors.extend(g.score_errors[first:])
        betas.extend(g.score_betas[first:])
    errors, betas = np.asarray(errors, np.float64), np.asarray(betas, np.float64)
    known = ~np.isnan(betas)
    sharp = known & (betas > SHARP_BETA)
    nan = float("nan")
    return {
        "score_error_late": float(errors.mean()) if errors.size else nan,
        "beta_late": float(np.median(betas[known])) if known.any() else nan,
        "sharp_late_fraction": float(sharp.sum() / known.sum()) if known.any() else nan,
        "score_error_sharp_late": float(errors[sharp].mean()) if sharp.any() else nan,
    }


def pass_stats(games: list[FinishedGame]) -> dict[str, float]:
    """How the complete games (not branches) of a generation ended, for
    spotting self-play that collapses into short pass-ended games.

    ``pass_ended_games``: the fraction that ended by two passes (not by
    resignation or the move cap); ``first_pass_move``: the mean move number
    of a game's first pass, over the games with one; ``median_game_length``;
    ``opening_pass_share`` (and ``opening_pass_games``, their number): the fraction whose first move was a pass, what
    self-play actually opened with (the net's preferred first move, the
    metrics' ``first_move``, is only its prior's favourite).
    """
    complete = [g for g in games if not g.is_branch]
    if not complete:
        return dict.fromkeys(("pass_ended_games", "first_pass_move", "median_game_length", "opening_pass_share"),
                             float("nan")) | {"opening_pass_games": 0}  # fmt: skip
    pass_action = int(complete[0].start_planes.shape[0]) ** 2
    ended, firsts, opened = 0, [], 0
    for g in complete:
        moves = [a for a in g.actions if a >= 0]
        if len(moves) >= 2 and moves[-1] == moves[-2] == pass_action and not g.resigned:
            ended += 1
        if pass_action in moves:
            firsts.append(g.start_move + moves.index(pass_action))
        opened += g.start_move == 0 and bool(moves) and moves[0] == pass_action
    return {
        "pass_ended_games": ended / len(complete),
        "opening_pass_share": opened / len(complete),
        "opening_pass_games": opened,
        "first_pass_move": float(np.mean(firsts)) if firsts else float("nan"),
        "median_game_length": float(np.median([g.length for g in complete])),
    }


KOMI_FIT_RIDGE = 0.01  # penalty 0.01·β²/2: a separable sample gets a large finite β, not a divergence


def komi_curve_fit(komi, black_score, *, ridge: float = KOMI_FIT_RIDGE) -> tuple[float, float, float]:
    """The komi curve of a set of games: (α, β, standard error of β).

    Maximum likelihood of Black's results (1 win, ½ draw, 0 loss) under
    P(Black wins at komi k) = σ(β(α − k)), the curve the value head is
    trained toward at the empty board, by Newton's method on (β·(α − k̄), β)
    with k̄ the mean komi. The standard error is the inverse Hessian's. NaN
    for fewer than 2 distinct komi (β is not identified: a fixed-komi run)
    or fewer than 10 games.
    """
    k = np.asarray(komi, np.float64).reshape(-1)
    y = np.asarray(black_score, np.float64).reshape(-1)
    nan = float("nan")
    if k.size < 10 or np.unique(k).size < 2:
        return nan, nan, nan
    mean = float(k.mean())
    x = k - mean
    # (c, b): P = σ(c − b·x), the ridge on b only.
    theta, cov = _logistic_newton(np.stack([np.ones_like(x), -x], axis=1), y, np.array([0.0, ridge]))
    c, beta = float(theta[0]), float(theta[1])
    se = float(np.sqrt(max(cov[1, 1], 0.0)))
    alpha = mean + c / beta if beta != 0 else nan
    return alpha, beta, se


def _logistic_newton(design: np.ndarray, y: np.ndarray, ridge: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Maximum likelihood of scores ``y`` (1, ½, 0) under σ(design · θ) with the penalty
    Σ ridge·θ²/2, by Newton's method with a backtracking line search: (θ, the inverse Hessian)."""
    theta = np.zeros(design.shape[1])

    def objective(t):
        z = design @ t
        # −log-likelihood of y under σ(z), plus the ridge.
        return float(np.sum(np.logaddexp(0.0, z) - y * z) + 0.5 * np.sum(ridge * t * t))

    hessian = np.eye(theta.size)
    for _ in range(100):
        p = 1.0 / (1.0 + np.exp(-(design @ theta)))
        grad = design.T @ (p - y) + ridge * theta  # d(−ll)/dθ
        hessian = (design * (p * (1.0 - p))[:, None]).T @ design + np.diag(ridge)
        step = np.linalg.solve(hessian, grad)
        f0, t = objective(theta), 1.0
        while objective(theta - t * step) > f0 + 1e-12 and t > 1e-8:
            t *= 0.5
        theta = theta - t * step
        if np.max(np.abs(t * step)) < 1e-9:
            break
    return theta, np.linalg.inv(hessian)


WITHIN_MIN_GAMES = 10  # an opening's games below this many leave the within-openings fit


def komi_curve_fit_within(
    komi, black_score, groups, *, ridge: float = KOMI_FIT_RIDGE, min_games: int = WITHIN_MIN_GAMES
) -> tuple[float, float, int, int]:
    """The komi curve's β within groups of games (e.g. the position after
    self-play's random opening): (β, its standard error, games, groups used).

    P(Black wins at komi k) = σ(β(α_g − k)) with one α per group and one β
    for all, by maximum likelihood: how sharply the results turn with the
    komi once the opening is fixed. Beside :func:`komi_curve_fit` over the
    same games it says whether the spread of the openings (each its own
    fair komi: the within β is the steeper) or the play after them (the two
    alike) flattens the data's curve. Groups with fewer than ``min_games``
    games or a single komi are left out; the ridge (on β and on each
    group's intercept) keeps a group that its favourite always wins finite.
    NaN when fewer than 10 games or no komi spread remain.
    """
    k = np.asarray(komi, np.float64).reshape(-1)
    y = np.asarray(black_score, np.float64).reshape(-1)
    labels = np.asarray(groups).reshape(-1)
    if not (k.size == y.size == labels.size):
        raise ValueError(f"komi, black_score and groups differ in length: {k.size}, {y.size}, {labels.size}")
    names, index = np.unique(labels, return_inverse=True)
    keep = [g for g in range(names.size) if (index == g).sum() >= min_games and np.unique(k[index == g]).size > 1]
    mask = np.isin(index, keep)
    nan = float("nan")
    if mask.sum() < 10 or not keep:
        return nan, nan, int(mask.sum()), len(keep)
    k, y, index = k[mask], y[mask], np.searchsorted(keep, index[mask])
    x = k - float(k.mean())
    design = np.concatenate([np.eye(len(keep))[index], -x[:, None]], axis=1)  # (c_g, b): σ(c_g − b·x)
    theta, cov = _logistic_newton(design, y, np.full(len(keep) + 1, ridge))
    return float(theta[-1]), float(np.sqrt(max(cov[-1, -1], 0.0))), int(k.size), len(keep)


LOCAL_KOMI_WINDOW = 1.5  # points either side of the net's α_∅: the local fit's komi


def komi_curve_stats(games: list[FinishedGame], alpha_empty: float = float("nan")) -> dict[str, float]:
    """The data's own komi curve (:func:`komi_curve_fit`) over the complete
    games (not branches, whose komi is their position's): ``data_alpha`` and
    ``data_beta``, what the value head is trained toward at the empty board,
    beside the net's α_∅ and β_∅; ``data_beta_se``; ``komi_sd``, the spread
    of those games' komi; ``komi_results``, komi → [games, Black's score],
    from which generations pool.

    The ``_local`` fit keeps the games whose komi is within
    :data:`LOCAL_KOMI_WINDOW` of ``alpha_empty`` (the centre of the sampled
    komi; ``local_games`` of them): how sharply the result turns at the
    komi where the decision is. A logistic over the whole sampled range is
    flatter than that when the results level off short of 0 and 1 away
    from it (upsets: games the komi's favourite loses anyway), and the net,
    trained on every sampled komi, learns the whole range's β.

    The ``_kept`` fit keeps the complete games without a blunder
    (``kept_games`` of them), the only ones whose empty board is trained on
    (the rows up to a game's last blunder are dropped); ``blunder_game_share``
    is the share of all the games (branches too) with a blunder.
    """
    complete = [g for g in games if not g.is_branch]
    komi = np.array([g.komi for g in complete], np.float64)
    score = np.array([(g.winner + 1) / 2.0 for g in complete], np.float64)
    alpha, beta, se = komi_curve_fit(komi, score)
    near = np.abs(komi - alpha_empty) <= LOCAL_KOMI_WINDOW
    alpha_l, beta_l, se_l = komi_curve_fit(komi[near], score[near])
    kept = np.array([g.blunder_move < 0 for g in complete], bool)
    alpha_k, beta_k, se_k = komi_curve_fit(komi[kept], score[kept])
    results: dict[str, list[float]] = {}
    for k, y in zip(komi.tolist(), score.tolist()):
        cell = results.setdefault(f"{k:g}", [0, 0.0])
        cell[0] += 1
        cell[1] += y
    return {
        # komi -> [complete games, Black's score (wins + ½ draws)], for pooling generations.
        "komi_results": {k: results[k] for k in sorted(results, key=float)},
        "data_alpha": alpha,
        "data_beta": beta,
        "data_beta_se": se,
        "data_alpha_local": alpha_l,
        "data_beta_local": beta_l,
        "data_beta_local_se": se_l,
        "local_games": int(near.sum()),
        "data_alpha_kept": alpha_k,
        "data_beta_kept": beta_k,
        "data_beta_kept_se": se_k,
        "kept_games": int(kept.sum()),
        "blunder_game_share": float(np.mean([g.blunder_move >= 0 for g in games])) if games else float("nan"),
        "komi_sd": float(komi.std()) if komi.size > 1 else float("nan"),
    }


def opening_stats(games: list[FinishedGame]) -> dict[str, Any]:
    """What self-play opened with: over the complete games played from the
    empty board, ``first_move_shares`` (GTP vertex → share, most played
    first), ``first_move_entropy`` (bits; 0 when every game opens alike,
    log2(N²) when uniform), ``first_move_top`` and ``first_move_top_share``,
    and ``first_move_centre_share``, the centre point's share on an odd
    board (D4 on 7×7, which perfect play opens with; NaN on an even board).
    """
    firsts = [g.actions[0] for g in games if not g.is_branch and g.start_move == 0 and g.actions]
    nan = float("nan")
    if not firsts:
        return {"first_move_shares": {}, "first_move_entropy": nan, "first_move_top": "",
                "first_move_top_share": nan, "first_move_centre_share": nan}  # fmt: skip
    n = int(games[0].start_planes.shape[0])
    rules = go.GoRules(n)
    counts = collections.Counter(firsts)
    shares = {go.to_gtp(rules, a): c / len(firsts) for a, c in counts.most_common()}
    p = np.array(list(shares.values()))
    top = next(iter(shares))
    centre = (n // 2) * n + n // 2
    return {
        "first_move_shares": shares,
        "first_move_entropy": float(-(p * np.log2(p)).sum()) + 0.0,
        "first_move_top": top,
        "first_move_top_share": shares[top],
        "first_move_centre_share": counts.get(centre, 0) / len(firsts) if n % 2 else nan,
    }


def generation_stats(games: list[FinishedGame], alpha_empty: float, beta_empty: float) -> dict[str, Any]:
    """Self-play statistics of one generation (docs/design.md §6, issue list)."""
    n = len(games)
    komis = [g.komi for g in games]
    hist = collections.Counter(komis)
    complete = [g for g in games if not g.is_branch]
    no_resign = [g for g in games if not g.may_resign and g.would_resign != 0]
    false_res = [g for g in no_resign if g.winner == g.would_resign]
    errors = [e for g in games for e in g.score_errors]
    resigned = [g.margin * g.winner for g in games if g.resigned]
    rows = int(sum(g.rows for g in games))
    return {
        "games": n,
        "complete_games": len(complete),
        "branch_games": n - len(complete),
        "moves": int(sum(g.length - g.start_move for g in games)),
        "rows": rows,
        "black_winrate": float(np.mean([g.winner == 1 for g in games])) if n else float("nan"),
        "white_winrate": float(np.mean([g.winner == -1 for g in games])) if n else float("nan"),
        "draws": int(sum(g.winner == 0 for g in games)),
        "resignations": int(sum(g.resigned for g in games)),
        "no_resign_games": int(sum(not g.may_resign for g in games)),
        "false_resignations": len(false_res),
        "false_resignation_rate": (len(false_res) / len(no_resign)) if no_resign else 0.0,
        "avg_game_length": float(np.mean([g.length for g in complete])) if complete else float("nan"),
        "avg_komi": float(np.mean(komis)) if n else float("nan"),
        "komi_histogram": {str(k): int(v) for k, v in sorted(hist.items())},
        "alpha_empty": float(alpha_empty),
        "beta_empty": float(beta_empty),
        # Mean |α + k − final margin| over the positions of games counted to the end.
        "score_error": float(np.mean(errors)) if errors else float("nan"),
        "score_error_positions": len(errors),
        **late_score_stats(games),
        **pass_stats(games),
        # Mean winning margin the score estimate gave at resignation.
        "resign_score_estimate": float(np.mean(resigned)) if resigned else float("nan"),
        # Training rows from resigned games: their win/loss targets, but no
        # final score or ownership behind them.
        "resigned_row_share": (sum(g.rows for g in games if g.resigned) / rows) if rows else float("nan"),
        **komi_curve_stats(games, alpha_empty),
        **opening_stats(games),
    }
