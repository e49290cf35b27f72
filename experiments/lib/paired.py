"""Paired, pre-declared tests: the statistics of :mod:`experiments.run`'s claims.

Where two arms share their openings (the same match seed and game index:
the same random opening moves, colours and komi), a game of one arm and
the same game of the other are a pair, and the tests use the pairs:

* :func:`mcnemar`: wins, the exact McNemar test (a sign test on the
  discordant pairs: the arm won and the baseline lost, or the reverse);
* :func:`wilcoxon`: margins (or counts), the Wilcoxon signed-rank test of
  the paired differences;
* :func:`self_play_sign`: an agent against a copy of its own net at
  λ = μ = 0. That baseline gives each opening pair (the two games of one
  opening, one with each colour) exactly one win whatever the opening
  (with deterministic play the two games are the same game), so it is one
  game per opening pair and needs no games of its own: the agent's pairs
  won twice against those lost twice, a sign test;
* :func:`fisher`, :func:`welch`: the unpaired tests, where the arms do not
  share openings (the shipped Fig. 5 cells: ``score_targeting.cell_seed``
  hashes each cell).

Each test gives ``p`` on every unit and ``p_nocap`` without the units in
which a game ended by the move cap (a paired unit drops out if either
game did).

**Families, declared before the games** (:class:`Family`, from a config's
``families``): a family names the rows it holds (``where``) and how many
(``size``). :func:`adjust` puts Holm and Benjamini–Hochberg adjusted p
beside ``p`` and ``p_nocap`` of the rows of each family only; it refuses
a family whose rows are not the declared number, and one that holds an
aggregate row beside one of its parts (a ``both`` colours row beside a
colour's row, a pooled row beside one net's). Rows outside every family
have no adjusted p, and :func:`adjusted` refuses them.

:func:`identical_pairs` counts the colour pairs of a table that are the
same game (a deterministic self-play baseline); :func:`distinct` counts
distinct games, also up to the board's 8 symmetries, where the SGFs exist.
"""

from __future__ import annotations

import dataclasses
import math
import statistics
from collections.abc import Hashable, Iterable, Mapping, Sequence
from typing import Any

import scipy.stats

from experiments.lib import matches
from saijax.analysis import stats

# A sample: unit -> (value, capped). Keys pair units across arms.
Sample = Mapping[Hashable, tuple[float, bool]]

AGGREGATES = ("both", "all", "S1-S3")  # a colour row's and the nets' pooled rows
ADJUSTED = ("p_holm", "p_bh", "p_nocap_holm", "p_nocap_bh")


def sign_p(up: int, down: int, alternative: str = "two-sided") -> float:
    """Exact sign test of ``up`` against ``down`` discordant units (``greater``: more up); 1 without any."""
    n = int(up) + int(down)
    return float(scipy.stats.binomtest(int(up), n, 0.5, alternative=alternative).pvalue) if n else 1.0


def _mean(values) -> float:
    values = [float(v) for v in values]
    return statistics.fmean(values) if values else math.nan


def _uncapped(sample: Sample) -> dict:
    return {k: v for k, v in sample.items() if not v[1]}


def _both(test, *samples, alternative: str) -> dict:
    """``test`` on every unit and, as ``p_nocap``, without the capped ones."""
    row = test(*samples, alternative=alternative)
    row["p_nocap"] = test(*map(_uncapped, samples), alternative=alternative)["p"]
    return row


def _mcnemar(arm: Sample, base: Sample, *, alternative: str) -> dict:
    keys = arm.keys() & base.keys()
    up = sum(arm[k][0] > base[k][0] for k in keys)
    down = sum(arm[k][0] < base[k][0] for k in keys)
    return {"test": "McNemar", "n": len(keys), "up": up, "down": down, "value": _mean(arm[k][0] for k in keys),
            "base_value": _mean(base[k][0] for k in keys), "p": sign_p(up, down, alternative)}  # fmt: skip


def mcnemar(arm: Sample, base: Sample, alternative: str = "two-sided") -> dict:
    """Exact McNemar test of paired wins (1/0): the pairs the arm won and the baseline lost (``up``) against
    the reverse (``down``); ``greater``: the arm wins more."""
    return _both(_mcnemar, arm, base, alternative=alternative)


def _wilcoxon(arm: Sample, base: Sample, *, alternative: str) -> dict:
    keys = sorted(arm.keys() & base.keys(), key=repr)
    diffs = [arm[k][0] - base[k][0] for k in keys]
    nonzero = [d for d in diffs if d]
    p = float(scipy.stats.wilcoxon(nonzero, alternative=alternative).pvalue) if nonzero else 1.0
    return {"test": "Wilcoxon", "n": len(keys), "up": sum(d > 0 for d in diffs), "down": sum(d < 0 for d in diffs),
            "value": _mean(arm[k][0] for k in keys), "base_value": _mean(base[k][0] for k in keys), "p": p}  # fmt: skip


def wilcoxon(arm: Sample, base: Sample, alternative: str = "two-sided") -> dict:
    """Wilcoxon signed-rank test of the paired differences arm − baseline (zero differences dropped)."""
    return _both(_wilcoxon, arm, base, alternative=alternative)


def _self_play(arm: Sample, *, alternative: str) -> dict:
    up = sum(v == 2 for v, _ in arm.values())
    down = sum(v == 0 for v, _ in arm.values())
    value = _mean(v / 2 for v, _ in arm.values())
    return {"test": "sign, self-play pairs", "n": len(arm), "up": up, "down": down, "value": value,
            "base_value": 0.5, "p": sign_p(up, down, alternative)}  # fmt: skip


def self_play_sign(pair_scores: Sample, alternative: str = "two-sided") -> dict:
    """An agent against its own net at λ = μ = 0: its wins per opening pair (0, 1 or 2) against the
    baseline's 1, a sign test of the pairs won twice (``up``) against those lost twice (``down``)."""
    return _both(_self_play, pair_scores, alternative=alternative)


def _fisher(arm: Sample, base: Sample, *, alternative: str) -> dict:
    a, b = [v for v, _ in arm.values()], [v for v, _ in base.values()]
    p = stats.fisher_win_test(int(sum(a)), len(a), int(sum(b)), len(b), alternative)
    return {"test": "Fisher", "n": len(a), "base_n": len(b), "value": _mean(a), "base_value": _mean(b), "p": p}


def fisher(arm: Sample, base: Sample, alternative: str = "two-sided") -> dict:
    """Fisher's exact test of two unpaired samples of wins (1/0)."""
    return _both(_fisher, arm, base, alternative=alternative)


def _welch(arm: Sample, base: Sample, *, alternative: str) -> dict:
    a, b = [v for v, _ in arm.values()], [v for v, _ in base.values()]
    return {"test": "Welch", "n": len(a), "base_n": len(b), "value": _mean(a), "base_value": _mean(b),
            "p": stats.welch_t_test(a, b, alternative)[1]}  # fmt: skip


def welch(arm: Sample, base: Sample, alternative: str = "two-sided") -> dict:
    """Welch's t-test of two unpaired samples (e.g. winning margins)."""
    return _both(_welch, arm, base, alternative=alternative)


def shares_openings(arm: Sample, base: Sample) -> bool:
    """Whether two samples keyed by (…, seed, game) hold the same units: they can be paired."""
    return bool(arm) and arm.keys() == base.keys()


def identical_pairs(games: Sequence) -> tuple[int, int]:
    """(colour pairs, pairs that are the same game) among games 2j, 2j + 1 of each match seed: the
    same winner's colour, margin, length and end."""
    by_key = {(g.seed, g.game): g for g in games}
    pairs = same = 0
    for (seed, game), g in by_key.items():
        other = by_key.get((seed, game + 1))
        if game % 2 == 0 and other is not None:
            pairs += 1
            same += (g.winner, g.margin, g.moves, g.end) == (other.winner, other.margin, other.moves, other.end)
    return pairs, same


def distinct(sgf_paths: Sequence[str | None], board_size: int | None = None) -> tuple[int | str, int | str]:
    """(distinct games, distinct up to the board's 8 symmetries) from the SGFs, their files or their run's archive;
    (:data:`experiments.lib.matches.NO_SGFS`, the same) without them."""
    exact = matches.distinct_sgf_games(sgf_paths, board_size)
    if exact == matches.NO_SGFS:
        return exact, exact
    return exact, matches.distinct_sgf_games(sgf_paths, board_size, symmetric=True)


# --------------------------------------------------------------------------
# Families.


@dataclasses.dataclass(frozen=True)
class Family:
    """A family of tests, declared before the games.

    Attributes:
      name: its name (a ledger verdict names it).
      where: the rows it holds: column -> value, or a tuple of values.
      size: how many rows it holds; the runner refuses any other number.
    """

    name: str
    where: Mapping[str, Any]
    size: int

    def holds(self, row: Mapping) -> bool:
        return all(row.get(k) in (v if isinstance(v, (tuple, list)) else (v,)) for k, v in self.where.items())


def families(declared: Mapping[str, Mapping]) -> list[Family]:
    """The :class:`Family` list of a config's ``families`` (name -> {where, size})."""
    return [Family(name, dict(f["where"]), int(f["size"])) for name, f in declared.items()]


def _covers(a: Mapping, b: Mapping, keys: Iterable[str]) -> bool:
    """Whether row ``a`` aggregates row ``b``: equal but where ``a`` pools what ``b`` splits."""
    pooled = False
    for k in keys:
        if a.get(k) == b.get(k):
            continue
        if a.get(k) not in AGGREGATES or b.get(k) in AGGREGATES:
            return False
        pooled = True
    return pooled


def adjust(rows: list[dict], declared: Sequence[Family], keys: Sequence[str]) -> list[dict]:
    """Holm and BH adjusted ``p`` and ``p_nocap`` within each declared family (``family`` names it).

    ``keys`` are the columns that identify a row (for the aggregate check).
    Rows outside every family get empty adjusted columns.

    Raises:
      ValueError: a row in two families, a family whose rows are not its
        declared size, or a family holding an aggregate row beside its part.
    """
    for r in rows:
        r["family"] = ""
        r.update(dict.fromkeys(ADJUSTED, ""))
    for fam in declared:
        members = [r for r in rows if fam.holds(r)]
        taken = [r["family"] for r in members if r["family"]]
        if taken:
            raise ValueError(f"family {fam.name}: a row is already in family {taken[0]}")
        if len(members) != fam.size:
            raise ValueError(f"family {fam.name} is declared with {fam.size} rows, the tables give {len(members)}; "
                             "declare the family again before the games, not after")  # fmt: skip
        for a in members:
            for b in members:
                if _covers(a, b, keys):
                    part = {k: b.get(k) for k in keys}
                    raise ValueError(f"family {fam.name}: an aggregate row beside its part {part}")
        for col in ("p", "p_nocap"):
            raw = [r[col] for r in members]
            for method, values in (("holm", stats.holm_correction(raw)), ("bh", stats.benjamini_hochberg(raw))):
                for r, v in zip(members, values):
                    r[f"{col}_{method}"] = v
        for r in members:
            r["family"] = fam.name
    return rows


def adjusted(row: Mapping, method: str = "holm", column: str = "p") -> float:
    """A row's ``column`` adjusted by ``method`` ("holm" or "bh"); refused for a row outside every family."""
    if not row.get("family"):
        raise ValueError(f"no adjusted p for a row outside every declared family: {dict(row)}")
    return float(row[f"{column}_{method}"])
