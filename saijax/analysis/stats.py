"""Statistics of saijax's tables: intervals, two-sample tests, corrections, power.

Every experiment and report draws its statistics from here:

* intervals of a win rate (Wilson, Clopper–Pearson) and of a mean;
* two conditions compared as two samples: win counts with Fisher's exact
  test (never against the other condition's rate taken as known), margins
  with Welch's t-test and the Mann–Whitney U test;
* a table's p-values corrected for multiplicity: Holm (family-wise error)
  and Benjamini–Hochberg (false discovery rate), side by side;
* power: the smallest effect a game count can detect, and the games an
  effect needs (α = 0.05, power 0.8 by default), for an equivalence test
  (TOST) too;
* one-sample tests (binomial, TOST equivalence to ½) and the papers' marks.

:mod:`saijax.analysis.results` (the games table and its summaries) uses the intervals.
"""

from __future__ import annotations

import math
from collections.abc import Iterable

import numpy as np
import scipy.stats

__all__ = [
    "wilson_interval",
    "clopper_pearson_interval",
    "fisher_win_test",
    "welch_t_test",
    "mann_whitney_test",
    "holm_correction",
    "benjamini_hochberg",
    "detectable_win_rate",
    "games_per_arm_needed",
    "detectable_mean_difference",
    "equivalence_to_half",
    "equivalence_power",
    "equivalence_games_needed",
    "binomial_test",
    "paired_t_test",
    "normal_test",
    "closer_to_half_test",
    "standard_error",
    "mean_interval",
    "significance_mark",
]

_Z95 = 1.959963984540054


# ---------------------------------------------------------------------------
# Intervals.


def wilson_interval(successes: float, n: int, z: float = _Z95) -> tuple[float, float]:
    """Wilson score interval for a proportion (default 95%).

    Args:
      successes: successes; may be fractional (draws counted as half a win).
      n: trials.
      z: the normal quantile of the confidence level.

    Returns:
      (low, high), clipped to [0, 1]; (0, 1) with no trials.
    """
    if n <= 0:
        return (0.0, 1.0)
    p = successes / n
    z2 = z * z
    centre = (p + z2 / (2 * n)) / (1 + z2 / n)
    half = z * math.sqrt(p * (1 - p) / n + z2 / (4 * n * n)) / (1 + z2 / n)
    return (max(0.0, centre - half), min(1.0, centre + half))


def clopper_pearson_interval(successes: float, n: int, confidence: float = 0.95) -> tuple[float, float]:
    """Clopper–Pearson ("exact") interval from beta quantiles (scipy.stats.beta).

    Args:
      successes: successes; fractional values (half draws) are used as-is in
        the beta parameters.
      n: trials.
      confidence: the confidence level.

    Returns:
      (low, high); (0, 1) with no trials.
    """
    if n <= 0:
        return (0.0, 1.0)
    a = 1.0 - confidence
    lo = 0.0 if successes <= 0 else float(scipy.stats.beta.ppf(a / 2, successes, n - successes + 1))
    hi = 1.0 if successes >= n else float(scipy.stats.beta.ppf(1 - a / 2, successes + 1, n - successes))
    return (lo, hi)


# ---------------------------------------------------------------------------
# Tests between conditions, multiple-comparison corrections, power.
#
# Win counts are compared as two samples (Fisher's exact test), never against
# the other condition's rate taken as known; margins with Welch's t-test and
# the Mann–Whitney U test; a table's p-values are corrected with Holm (family-
# wise error) or Benjamini–Hochberg (false discovery rate). Power uses the
# arcsine (Cohen's h) normal approximation: 2·asin(√p̂) has variance ≈ 1/n
# whatever p, which gives closed forms both ways (the detectable rate for a
# given n, the n for a given pair of rates); it is what statsmodels'
# ``NormalIndPower`` with ``proportion_effectsize`` computes.

_ALTERNATIVES = ("two-sided", "less", "greater")


def _check_alternative(alternative: str) -> None:
    if alternative not in _ALTERNATIVES:
        raise ValueError(f"alternative must be one of {list(_ALTERNATIVES)}, got {alternative!r}")


def fisher_win_test(wins_a: int, games_a: int, wins_b: int, games_b: int, alternative: str = "two-sided") -> float:
    """Fisher's exact test of two win counts (``scipy.stats.fisher_exact``).

    Both rates are estimated: the test conditions on the total wins, so
    neither condition's rate is taken as known (unlike a binomial test
    against the other's observed rate, which overstates significance).

    Args:
      wins_a, games_a: condition A's wins and games (non-negative integers;
        at half-integer komi there are no draws).
      wins_b, games_b: condition B's.
      alternative: "two-sided"; "less" for A's win rate lower than B's;
        "greater" for higher.

    Returns:
      The p-value (1.0 if either condition has no games).

    Raises:
      ValueError: an unknown alternative, or wins outside [0, games].
    """
    _check_alternative(alternative)
    for wins, games in ((wins_a, games_a), (wins_b, games_b)):
        if not 0 <= wins <= games:
            raise ValueError(f"wins must be in [0, games], got {wins} of {games}")
    if games_a == 0 or games_b == 0:
        return 1.0
    table = [[int(wins_a), int(games_a - wins_a)], [int(wins_b), int(games_b - wins_b)]]
    return float(scipy.stats.fisher_exact(table, alternative=alternative).pvalue)


def _finite(values: Iterable[float]) -> np.ndarray:
    x = np.asarray([float(v) for v in values], dtype=float)
    return x[np.isfinite(x)]


def welch_t_test(a: Iterable[float], b: Iterable[float], alternative: str = "two-sided") -> tuple[float, float]:
    """Welch's unequal-variance t-test of two samples' means (``scipy.stats.ttest_ind``).

    Args:
      a, b: the samples (e.g. winning margins); non-finite values are dropped.
      alternative: "two-sided"; "greater" for A's mean larger than B's;
        "less" for smaller.

    Returns:
      (t, p); (nan, nan) if a sample has fewer than 2 values or both have
      no spread.
    """
    _check_alternative(alternative)
    x, y = _finite(a), _finite(b)
    if len(x) < 2 or len(y) < 2 or (np.ptp(x) == 0 and np.ptp(y) == 0):
        return (math.nan, math.nan)
    res = scipy.stats.ttest_ind(x, y, equal_var=False, alternative=alternative)
    return (float(res.statistic), float(res.pvalue))


def mann_whitney_test(a: Iterable[float], b: Iterable[float], alternative: str = "two-sided") -> tuple[float, float]:
    """Mann–Whitney U test of two samples (``scipy.stats.mannwhitneyu``, asymptotic with ties corrected).

    Args:
      a, b: the samples; non-finite values are dropped.
      alternative: "two-sided"; "greater" for A stochastically larger than B;
        "less" for smaller.

    Returns:
      (U of A, p); (nan, nan) if a sample is empty.
    """
    _check_alternative(alternative)
    x, y = _finite(a), _finite(b)
    if len(x) == 0 or len(y) == 0:
        return (math.nan, math.nan)
    res = scipy.stats.mannwhitneyu(x, y, alternative=alternative, method="asymptotic")
    return (float(res.statistic), float(res.pvalue))


def _ranked(pvalues: Iterable[float]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(p, out, order): the p-values, a NaN result array, and the finite ones' indices, smallest p first."""
    p = np.asarray([float(v) for v in pvalues], dtype=float)
    ok = np.flatnonzero(np.isfinite(p))
    return p, np.full(p.shape, math.nan), ok[np.argsort(p[ok], kind="stable")]


def holm_correction(pvalues: Iterable[float]) -> list[float]:
    """Holm's step-down adjusted p-values (family-wise error control).

    The i-th smallest of m p-values becomes max over j ≤ i of
    (m − j + 1)·p_(j), capped at 1. Reject at level a where adjusted ≤ a.
    NaN entries (tests not run) are kept as NaN and do not count in m.

    Args:
      pvalues: raw p-values, in any order.

    Returns:
      The adjusted p-values, in the input order.
    """
    p, out, order = _ranked(pvalues)
    m = len(order)
    running = 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (m - rank) * p[i]))
        out[i] = running
    return out.tolist()


def benjamini_hochberg(pvalues: Iterable[float]) -> list[float]:
    """Benjamini–Hochberg adjusted p-values ("q-values"; false discovery rate control).

    The i-th smallest of m p-values becomes min over j ≥ i of m·p_(j)/j,
    capped at 1. NaN entries are kept as NaN and do not count in m.

    Args:
      pvalues: raw p-values, in any order.

    Returns:
      The adjusted p-values, in the input order.
    """
    p, out, order = _ranked(pvalues)
    m = len(order)
    running = 1.0
    for rank in range(m - 1, -1, -1):
        i = order[rank]
        running = min(running, m * p[i] / (rank + 1))
        out[i] = running
    return out.tolist()


def _z_sum(alpha: float, power: float, alternative: str) -> float:
    _check_alternative(alternative)
    if not (0 < alpha < 1 and 0 < power < 1):
        raise ValueError(f"alpha and power must be in (0, 1), got {alpha}, {power}")
    z_alpha = scipy.stats.norm.ppf(1 - alpha / 2 if alternative == "two-sided" else 1 - alpha)
    return float(z_alpha + scipy.stats.norm.ppf(power))


def detectable_win_rate(
    games_per_arm: float,
    baseline: float,
    alpha: float = 0.05,
    power: float = 0.8,
    alternative: str = "two-sided",
    direction: str = "lower",
    games_baseline: float | None = None,
) -> float:
    """The win rate another condition needs to be told apart from ``baseline`` (arcsine approximation).

    Two samples (the baseline's rate is estimated too): with
    φ = 2·asin(√p), the difference of the two φ̂ has variance
    1/n_a + 1/n_b, so the test has the requested power when
    |φ_a − φ_b| ≥ (z_α + z_power)·√(1/n_a + 1/n_b) (Cohen's h). The
    two-sided z_α is z_{1−α/2}; one-sided, z_{1−α}.

    Args:
      games_per_arm: the other condition's games (and the baseline's unless
        ``games_baseline`` is given).
      baseline: the baseline's win rate, in [0, 1].
      alpha, power: the test's level and the power wanted.
      alternative: "two-sided", or one-sided ("less"/"greater": only the
        size of z_α matters here).
      direction: "lower" (a loss of strength) or "higher".
      games_baseline: the baseline's games if they differ.

    Returns:
      The rate (in [0, 1]); NaN if no rate in that direction is detectable
      at these sizes. The smallest detectable difference is the result minus
      ``baseline``.
    """
    if direction not in ("lower", "higher"):
        raise ValueError(f"direction must be 'lower' or 'higher', got {direction!r}")
    if not 0 <= baseline <= 1 or games_per_arm <= 0:
        raise ValueError(f"need a baseline in [0, 1] and games > 0, got {baseline}, {games_per_arm}")
    n_b = games_per_arm if games_baseline is None else games_baseline
    h = _z_sum(alpha, power, alternative) * math.sqrt(1 / games_per_arm + 1 / n_b)
    phi = 2 * math.asin(math.sqrt(baseline)) + (h if direction == "higher" else -h)
    if not 0 <= phi <= math.pi:
        return math.nan
    return math.sin(phi / 2) ** 2


def games_per_arm_needed(
    rate_a: float, rate_b: float, alpha: float = 0.05, power: float = 0.8, alternative: str = "two-sided"
) -> int:
    """Games per condition for a two-sample test of win rates ``rate_a`` and ``rate_b`` (arcsine approximation).

    n = 2·((z_α + z_power) / h)², h = |2·asin√rate_a − 2·asin√rate_b|, rounded
    up (e.g. h = 0.2, two-sided α 0.05, power 0.8: 393; Cohen's table: 392).

    Args:
      rate_a, rate_b: the two win rates, in [0, 1].
      alpha, power, alternative: as in :func:`detectable_win_rate`.

    Returns:
      The games per arm.

    Raises:
      ValueError: equal rates (no finite n), or bad arguments.
    """
    h = abs(2 * math.asin(math.sqrt(rate_a)) - 2 * math.asin(math.sqrt(rate_b)))
    if h == 0:
        raise ValueError("equal rates: no number of games detects no difference")
    return math.ceil(2 * (_z_sum(alpha, power, alternative) / h) ** 2)


def detectable_mean_difference(
    sd_a: float,
    n_a: float,
    sd_b: float,
    n_b: float,
    alpha: float = 0.05,
    power: float = 0.8,
    alternative: str = "two-sided",
    df: float | None = None,
) -> float:
    """The smallest difference of two means (e.g. margins) a Welch test detects with the given power.

    (q_α + q_power)·√(sd_a²/n_a + sd_b²/n_b), with normal quantiles q, or
    Student-t quantiles with ``df`` degrees of freedom when given (an
    approximation of the noncentral t; use it for a handful of samples,
    e.g. seeds).

    Args:
      sd_a, n_a, sd_b, n_b: the samples' standard deviations and sizes.
      alpha, power, alternative: the test's level, the power wanted, and
        whether the test is two-sided.
      df: degrees of freedom for t quantiles; None for normal ones.

    Returns:
      The difference, in the samples' units.
    """
    if df is None:
        q = _z_sum(alpha, power, alternative)
    else:
        _check_alternative(alternative)
        a = alpha / 2 if alternative == "two-sided" else alpha
        q = float(scipy.stats.t.ppf(1 - a, df) + scipy.stats.t.ppf(power, df))
    return q * math.sqrt(sd_a**2 / n_a + sd_b**2 / n_b)


def detectable_paired_shift(
    n: int, sd: float = 1.0, alpha: float = 0.05, power: float = 0.8, alternative: str = "two-sided"
) -> float:
    """The smallest mean of ``n`` paired differences a Wilcoxon signed-rank test detects with the given power.

    (z_α + z_power)·sd/√(n·3/π): the paired t test's normal approximation
    with the signed-rank test's asymptotic relative efficiency 3/π (normal
    differences). With ``sd`` = 1 it is the effect in units of the
    differences' standard deviation (n = 120, one-sided α 0.05: 0.23).

    Args:
      n: the pairs (e.g. games scored by two estimators).
      sd: the standard deviation of the paired differences.
      alpha, power, alternative: as in :func:`detectable_win_rate`.

    Returns:
      The mean difference, in ``sd``'s units.
    """
    if n < 2 or not sd > 0:
        raise ValueError(f"need n >= 2 pairs and sd > 0, got n={n}, sd={sd}")
    return _z_sum(alpha, power, alternative) * sd / math.sqrt(n * 3 / math.pi)


def equivalence_to_half(wins: int, games: int, margin: float) -> float:
    """TOST: is a win rate within ½ ± ``margin``? Two one-sided exact binomial tests.

    H0: rate ≤ ½ − margin or rate ≥ ½ + margin; the p-value is the larger of
    the binomial tests of rate > ½ − margin and rate < ½ + margin
    (``scipy.stats.binomtest``). A small p supports equivalence (e.g.
    "the two nets are equally strong within ±10 points"); a large p means
    the games cannot show it, whatever the point estimate.

    Args:
      wins, games: the record (no draws).
      margin: the equivalence margin, in (0, ½).

    Returns:
      The TOST p-value (1.0 without games).
    """
    if not 0 < margin < 0.5:
        raise ValueError(f"margin must be in (0, 0.5), got {margin}")
    if games <= 0:
        return 1.0
    lower = scipy.stats.binomtest(int(wins), int(games), 0.5 - margin, alternative="greater").pvalue
    upper = scipy.stats.binomtest(int(wins), int(games), 0.5 + margin, alternative="less").pvalue
    return float(max(lower, upper))


def equivalence_power(games: int, margin: float, rate: float = 0.5, alpha: float = 0.05) -> float:
    """The exact power of :func:`equivalence_to_half` at level ``alpha`` when the true win rate is ``rate``.

    The TOST rejects (shows equivalence) for the win counts k with both
    one-sided exact p-values at most ``alpha``: P(X ≥ k | ½ − margin) ≤ α
    and P(X ≤ k | ½ + margin) ≤ α, X binomial with ``games`` trials; the
    power is the binomial probability of those k at ``rate``. E.g. 10 games
    and margin 0.3: only k = 5 is rejected (P(X ≥ 5 | 0.2) = 0.033,
    P(X ≥ 4 | 0.2) = 0.121), so the power at ½ is C(10, 5) / 2¹⁰ = 0.246.

    Args:
      games: the games of the condition.
      margin: the equivalence margin, in (0, ½).
      rate: the true win rate, in [0, 1].
      alpha: the level of each one-sided test.

    Returns:
      The power, in [0, 1] (0 when no count can show equivalence).
    """
    if not 0 < margin < 0.5:
        raise ValueError(f"margin must be in (0, 0.5), got {margin}")
    if not 0 <= rate <= 1 or not 0 < alpha < 1:
        raise ValueError(f"need a rate in [0, 1] and alpha in (0, 1), got {rate}, {alpha}")
    if games <= 0:
        return 0.0
    k = np.arange(int(games) + 1)
    shown = (scipy.stats.binom.sf(k - 1, games, 0.5 - margin) <= alpha) & (
        scipy.stats.binom.cdf(k, games, 0.5 + margin) <= alpha
    )
    return float(np.sum(scipy.stats.binom.pmf(k[shown], games, rate)))


def equivalence_games_needed(
    margin: float,
    rate: float = 0.5,
    alpha: float = 0.05,
    power: float = 0.8,
    *,
    method: str = "exact",
    multiple: int = 1,
    max_games: int = 1_000_000,
) -> int:
    """The games a TOST (:func:`equivalence_to_half`) needs to show a win rate within ½ ± ``margin``.

    ``method="exact"``: the smallest multiple of ``multiple`` whose exact
    power (:func:`equivalence_power`) at the true ``rate`` reaches
    ``power``. The exact power is a sawtooth in the game count (the
    rejection region grows by whole counts), so a few slightly larger counts
    can fall just below ``power`` again: at ±0.10 around a true ½ it is
    0.806 at 214 games, 0.796–0.800 at 220–226 and above 0.83 from 228.

    ``method="normal"``: the normal approximation n = (z_{1−α} + z)² ·
    r(1 − r) / (margin − |r − ½|)², with z = z_{1−(1−power)/2} when the true
    rate r is exactly ½ (both one-sided tests must reject, and their
    failures are symmetric) and z_{power} otherwise, rounded up to a
    multiple of ``multiple``: 215 at ±0.10, α 0.05, power 0.8, r = ½
    ((1.645 + 1.282)² · 0.25 / 0.01 = 214.1).

    Args:
      margin: the equivalence margin, in (0, ½).
      rate: the true win rate, inside ½ ± margin.
      alpha, power: each one-sided test's level and the power wanted.
      method: "exact" (binomial) or "normal".
      multiple: count only multiples of this (2 when colours alternate).
      max_games: give up beyond this count (exact method).

    Returns:
      The games.

    Raises:
      ValueError: bad arguments, a rate outside the margin, or no count up
        to ``max_games`` has the power.
    """
    if not 0 < margin < 0.5:
        raise ValueError(f"margin must be in (0, 0.5), got {margin}")
    if not abs(rate - 0.5) < margin:
        raise ValueError(f"the true rate {rate} is not inside 1/2 ± {margin}: no count shows equivalence")
    if not (0 < alpha < 1 and 0 < power < 1) or int(multiple) < 1:
        raise ValueError(f"need alpha and power in (0, 1) and multiple >= 1, got {alpha}, {power}, {multiple}")
    step = int(multiple)
    if method == "normal":
        z_power = scipy.stats.norm.ppf(1 - (1 - power) / 2 if rate == 0.5 else power)
        z = scipy.stats.norm.ppf(1 - alpha) + z_power
        n = math.ceil(z**2 * rate * (1 - rate) / (margin - abs(rate - 0.5)) ** 2)
        return step * math.ceil(n / step)
    if method != "exact":
        raise ValueError(f"method must be 'exact' or 'normal', got {method!r}")
    for n in range(step, int(max_games) + 1, step):
        if equivalence_power(n, margin, rate, alpha) >= power:
            return n
    raise ValueError(f"no count up to {max_games} games has power {power} at margin {margin}")


# ---------------------------------------------------------------------------
# One-sample tests, intervals of means and the papers' marks (the experiments').


def binomial_test(successes: float, games: int, rate: float = 0.5, alternative: str = "two-sided") -> float:
    """Exact binomial test of a win count against a rate taken as known (``scipy.stats.binomtest``).

    Use it against a fixed rate (½, or a paper's baseline taken as known as
    [SAI-9x9] Table 1 does); two observed conditions are compared with
    :func:`fisher_win_test` instead.

    Args:
      successes: wins (a fractional count, e.g. half draws, is rounded down).
      games: games.
      rate: the rate under the null hypothesis, in [0, 1].
      alternative: "two-sided"; "less" for a rate lower than ``rate``;
        "greater" for higher.

    Returns:
      The p-value; NaN without games or with a non-finite rate.
    """
    _check_alternative(alternative)
    if games <= 0 or not math.isfinite(rate):
        return math.nan
    k = int(math.floor(successes))
    return float(scipy.stats.binomtest(k, int(games), p=min(1.0, max(0.0, rate)), alternative=alternative).pvalue)


def paired_t_test(a: Iterable[float], b: Iterable[float], alternative: str = "two-sided") -> tuple[float, float]:
    """Paired t-test of two samples over the same units (``scipy.stats.ttest_rel``), e.g. two
    estimators' errors on the same games.

    Returns:
      (t, p); (nan, nan) with fewer than 2 pairs or no spread in the differences.

    Raises:
      ValueError: samples of different lengths.
    """
    _check_alternative(alternative)
    x = np.asarray([float(v) for v in a], dtype=float)
    y = np.asarray([float(v) for v in b], dtype=float)
    if x.shape != y.shape:
        raise ValueError(f"paired samples need equal lengths, got {len(x)} and {len(y)}")
    ok = np.isfinite(x) & np.isfinite(y)
    d = x[ok] - y[ok]
    if len(d) < 2 or np.ptp(d) == 0:
        return (math.nan, math.nan)
    res = scipy.stats.ttest_rel(x[ok], y[ok], alternative=alternative)
    return (float(res.statistic), float(res.pvalue))


def normal_test(difference: float, se: float, alternative: str = "two-sided") -> float:
    """z test of an estimated difference with a known standard error (e.g. two Elo ratings
    with the fit's errors: ``se = hypot(se_a, se_b)``).

    Returns:
      The p-value of z = difference / se; NaN if se is not positive.
    """
    _check_alternative(alternative)
    if not se > 0:
        return math.nan
    z = difference / se
    if alternative == "two-sided":
        return float(2 * scipy.stats.norm.sf(abs(z)))
    return float(scipy.stats.norm.sf(z) if alternative == "greater" else scipy.stats.norm.cdf(z))


def closer_to_half_test(rate_a: float, games_a: int, rate_b: float, games_b: int) -> float:
    """One-sided test that win rate A is closer to ½ than win rate B (position control's aim).

    A z test on the difference of the distances |rate − ½| (normal
    approximation), each rate's variance taken at least 0.25/n so that a
    rate of 0 or 1 does not make it certain.

    Returns:
      The p-value; NaN if a condition has no games.
    """
    if games_a <= 0 or games_b <= 0:
        return math.nan
    se = math.sqrt(
        max(rate_a * (1 - rate_a), 0.25 / games_a) / games_a + max(rate_b * (1 - rate_b), 0.25 / games_b) / games_b
    )
    return float(scipy.stats.norm.sf((abs(rate_b - 0.5) - abs(rate_a - 0.5)) / se))


def standard_error(values: Iterable[float]) -> float:
    """The standard error of a mean, sd (ddof 1) / √n; non-finite values dropped; NaN below 2 values."""
    x = _finite(values)
    return float(np.std(x, ddof=1) / math.sqrt(len(x))) if len(x) > 1 else math.nan


def mean_interval(values: Iterable[float], confidence: float = 0.95, *, t: bool = False) -> tuple[float, float]:
    """A mean and the half-width of its confidence interval (normal quantile, or Student's t with ``t``).

    Non-finite values (and empty strings or None) are dropped.

    Returns:
      (mean, half-width); the half-width is NaN below 2 values, both NaN without values.
    """
    x = _finite(v for v in values if v not in ("", None))
    if not len(x):
        return (math.nan, math.nan)
    q = scipy.stats.t.ppf(0.5 + confidence / 2, len(x) - 1) if t else scipy.stats.norm.ppf(0.5 + confidence / 2)
    return (float(np.mean(x)), float(q * standard_error(x)))


def significance_mark(p: float) -> str:
    """[SAI-9x9]'s marks: ``**`` for p < 0.001, ``*`` for p < 0.05, else (or NaN) ``""``."""
    if not math.isfinite(p):
        return ""
    return "**" if p < 0.001 else ("*" if p < 0.05 else "")
