"""Score targeting with the λ/μ agents: Figs. 5 and 6 and Table 1 of the SAI 9×9 paper, on 7×7.

    python -m experiments.run --config=experiments/score_targeting/config.py  # the shipped runs
    python experiments/score_targeting/score_targeting.py --outdir=runs/score_targeting   # zoo nets, 7×7, the defaults
    python experiments/score_targeting/score_targeting.py --strong=S=runs/go7/checkpoints/150 \\
        --weak=W=runs/go7/checkpoints/20 --games=20 --visits=32 --outdir=/tmp/score_targeting

Paper: [SAI-9x9] §4.2 (Figs. 5 and 6, Table 1) and §3.6–3.7 for the setting
(the same in [SAI-ext] §3.7–3.8; references in docs/design.md). The agent
is :class:`saijax.core.search.Agent` (docs/design.md §4): the strong net values a
node by its win probability averaged over the bonus interval [x_μ, x_λ]
fixed at the root, and the *variable agent* applies (λ, μ) only while the
root's win rate is at least ``threshold`` (plain win rate below it). Games
are played in lockstep by :func:`saijax.play.arena.play_match`.

The cells. Each strong net (``--strong``) plays, with colours alternating
(half the games as Black) at the even komi, one match per cell against

* **Fig. 5:** itself (a copy of the same net at λ = μ = 0) and each weak net
  (``--weak``), with agents λ ∈ ``--lambdas`` (0.5, 1) and
  μ = f·λ for f ∈ ``--mu_fractions`` (0, 0.5, 0.75, 1), threshold 0;
* **Fig. 6:** itself and the last weak net (the paper's W3), with the
  variable agents ``--variable_agents`` ((0.5, 0), (1, 0), (1, 0.5), the
  paper's three) at thresholds 0 and ``--thresholds`` (50%, 70%);
* both: the baseline λ = μ = 0 against every opponent.

A cell shared by the two figures (threshold 0) is played once. The opponent
always plays λ = μ = 0.

What is measured, per cell and for the strong side: its win rate (draws
half; 95% Wilson interval) and the average final score of its wins (its
winning margins, komi included, with their standard error), split by the
strong side's colour. Table 1 pools the strong nets (the paper's "averages
across the three strong nets"; with equal games per cell the pooled win rate
is that average, and the pooled mean winning margin weights each net by its
wins) and compares each agent with λ = μ = 0 against the same opponent with
the same colour, both arms' games counted (two samples): Fisher's exact
test that the win rate is *lower* (one-sided, ``p_win_rate``; two-sided
beside it), and that the winning margins are *larger*: Welch's t-test
(``p_score``; the agents change the spread of the margins, and the paper
does not say which t-test it ran) and the Mann–Whitney U test
(``p_score_mw``). Holm and Benjamini–Hochberg adjusted p over the table
stand beside each raw p. Marks as the paper's, on the raw p: ``*`` p < 0.05,
``**`` p < 0.001. The paper's own test, a binomial test with the λ = 0 rate
taken as known (degenerate at a baseline of 100%: one loss is then ``**``),
is kept as ``p_win_rate_binom_known`` for comparison only. The paper's own
Table 1 (9×9, komi 7.5, 400 games per cell, 1,000 visits, its S1–S3 and
W3) is :data:`PAPER_TABLE1`, printed and written beside ours, labelled 9×9.
``tests.csv`` has the same tests for every cell of both figures, per strong
net and pooled. Before playing, the script prints the smallest loss of
win rate its cells can detect (per net and pooled).

From 9×9 to 7×7 (the defaults; every one is a flag):

* **Komi 9.5.** 7×7's fair komi is 9 (perfect play wins B+9, [SAI-9x9]
  §2.4), so 9.5 is to 7×7 what 7.5 is to 9×9 (fair komi 7): the fair komi
  plus the half point that rules out draws, White favoured by half a point.
* **λ, μ and the thresholds** are fractions and win probabilities, not
  points, so they carry over unchanged.
* **Games and visits.** The paper played 400 games per cell with 1,000
  visits (a little above its final self-play search, 850). The defaults,
  100 games per cell and 64 visits (twice the go7 run's self-play search),
  fit a CPU: 3 strong nets × (4 opponents × 9 agents + 2 opponents × 6
  variable agents) = 144 cells, 14,400 games: about 75 s per cell after
  a minute of compiling, some 3 hours, on the project's 2-core CPU.
* **Scores.** Margins scale roughly with the board's area, 49/81 ≈ 0.6, so
  the paper's winning scores (about 10 points at baseline as White, gains
  of +7.6 against itself and +9.5 against W1 in Fig. 5) correspond to
  about 6, +4.6 and +5.7 points here, if the gain scales like the board.
* **Played out.** The paper's games ended by resignation and were scored by
  the median of α + k over a 1,000-visit search ([SAI-9x9] §3.6). By default
  nobody resigns here (``--resign_threshold`` unset): 7×7 games are short,
  and the Tromp–Taylor count is exact. With ``--resign_threshold``, a
  resigned game's margin is that estimate by the ``--scorer`` net (default
  the first strong net) at λ = μ = 0 with ``--score_visits``, as the issue
  asks: one fixed judge for every game.

Nets (``--strong``, ``--weak``, ``--scorer``) are comma lists of
``[NAME=]SPEC``, SPEC a checkpoint (``<workdir>/checkpoints/<gen>``), a
workdir or ``zoo:<name>``; without ``NAME=`` a net is named after its zoo
entry or generation. In the games table the strong side is
``NAME[l=λ,m=μ,t=threshold]`` and its copy is ``NAME``, so every game says
its own cell and ``--plot_only`` rebuilds every table from ``games.csv``.

Outputs in ``--outdir``:

* ``games.csv``: every game, the results table of :mod:`saijax.analysis.results`.
* ``cells.csv``: per strong net (and ``all``, pooled), opponent, agent
  (λ, μ, threshold) and the strong side's colour (``white``, ``black``,
  ``both``): games, wins, draws, losses, win rate, 95% Wilson interval,
  mean margin, mean winning margin, its standard error and the number of
  wins it averages.
* ``table1.csv``: Table 1, per threshold, opponent, colour and agent,
  pooled over the strong nets: games, win rate, Δ win rate, the baseline's
  games and wins, Fisher p (one-sided with Holm and BH, two-sided) and the
  known-rate binomial p, winning score, Δ score, Welch and Mann–Whitney p
  with Holm and BH, marks, and the paper's 9×9 numbers where it has that
  row (thresholds 50% and 70%, itself and W3).
* ``tests.csv``: every agent's cell against λ = μ = 0 (same strong net or
  the pooled nets, opponent and colour): wins, games and both arms' rates,
  Fisher p one-sided (lower) and two-sided, the winning margins' means,
  Welch and Mann–Whitney p one-sided (larger), each with Holm and BH over
  the pooled rows and over the per-net rows.
* ``fig5_score_targeting.png``: one column per opponent, the mean winning
  score above and the win rate below, against the agent (λ, μ), as White
  and as Black (pooled over the strong nets; each net's points faint).
* ``fig6_variable_agent.png``: one column per opponent and colour, the
  same two panels against the threshold, one line per agent, the
  baseline dotted.

* ``compare.csv`` (with ``--compare_with DIR``): every cell of this run
  (per strong net and pooled, each colour and both) beside the same cell
  of another run's ``games.csv`` (its games of this run's strong nets
  only), for instance the same cells at another visit count: both arms'
  games, wins and rates, Fisher's exact test two-sided, the winning
  margins' means and Welch's test two-sided, each with Holm and BH over
  the pooled rows and over the per-net rows.

``--resume`` keeps the complete cells of an existing ``games.csv`` and plays
the rest; ``--plot_only`` redraws every table and PNG from ``games.csv``.
``--fig5_agents`` names Fig. 5's agents one by one; ``--openings=shared``
gives every agent of a net the openings of its λ = μ = 0 cell against the
same opponent, so :func:`paired_tests` (``experiments/run.py``) can pair
them (the shipped runs hashed each cell's seed).
"""

from __future__ import annotations

import dataclasses
import math
import os
import re
import zlib
from collections.abc import Callable, Iterable, Sequence
from typing import Literal, NamedTuple

import numpy as np

from experiments.lib import common, matches, paired, stat_tables
from experiments.lib.common import setting
from saijax.analysis import results, stats
from saijax.cli import player as player_cli
from saijax.core import search
from saijax.play import arena, match, players

# 7×7 defaults (module docstring, "From 9×9 to 7×7").
EVEN_KOMI = 9.5
STRONG, WEAK = matches.STRONG, matches.WEAK
LAMBDAS = (0.5, 1.0)  # Fig. 5
MU_FRACTIONS = (0.0, 0.5, 0.75, 1.0)  # Fig. 5: μ = f·λ
VARIABLE_AGENTS = ((0.5, 0.0), (1.0, 0.0), (1.0, 0.5))  # Fig. 6 and Table 1
THRESHOLDS = (0.5, 0.7)  # Fig. 6, beside threshold 0

ITSELF = "itself"
ALL = "all"  # the strong net of pooled rows
COLOURS = ("white", "black")  # the paper's order

# [SAI-9x9] Table 1 (9×9, komi 7.5, averages over S1–S3, 400 games per cell):
# (threshold, opponent, colour, λ, μ) -> (win rate %, Δ win rate, score, Δ score),
# the Δs as printed, with the paper's marks.
PAPER_TABLE1: dict[tuple[float, str, str, float, float], tuple[float, str, float, str]] = {}


def _paper_block(threshold, opponent, white, black):
    for colour, rows in (("white", white), ("black", black)):
        for (lam, mu), values in zip(((0.0, 0.0), *VARIABLE_AGENTS), rows):
            PAPER_TABLE1[(threshold, opponent, colour, lam, mu)] = values


_paper_block(
    0.5,
    ITSELF,
    [(69.2, "-", 8.9, "-"), (64.2, "-5.0**", 17.5, "+8.6**"), (60.8, "-8.3**", 18.7, "+9.8**"),
     (52.5, "-16.7**", 22.4, "+13.5**")],
    [(30.0, "-", 11.2, "-"), (31.7, "+1.7", 14.6, "+3.4**"), (29.3, "-0.7", 16.3, "+5.1**"),
     (26.8, "-3.2*", 15.9, "+4.7**")],
)  # fmt: skip
_paper_block(
    0.7,
    ITSELF,
    [(69.2, "-", 8.9, "-"), (66.2, "-3.0", 16.5, "+7.6**"), (64.3, "-4.8**", 15.4, "+6.5**"),
     (60.0, "-9.2**", 17.4, "+8.4**")],
    [(30.0, "-", 11.2, "-"), (27.5, "-2.5", 15.6, "+4.4**"), (32.0, "+2.0", 14.9, "+3.7**"),
     (28.7, "-1.3", 17.0, "+5.8**")],
)  # fmt: skip
_paper_block(
    0.5,
    "W3",
    [(97.2, "-", 7.5, "-"), (97.7, "+0.5", 17.7, "+10.2**"), (95.5, "-1.7*", 24.2, "+16.8**"),
     (90.7, "-6.5**", 36.2, "+28.8**")],
    [(97.2, "-", 17.4, "-"), (96.3, "-0.8", 27.2, "+9.8**"), (96.2, "-1.0", 34.8, "+17.3**"),
     (91.3, "-5.8**", 41.0, "+23.5**")],
)  # fmt: skip
_paper_block(
    0.7,
    "W3",
    [(97.2, "-", 7.5, "-"), (96.8, "-0.3", 16.7, "+9.3**"), (95.8, "-1.3*", 21.5, "+14.0**"),
     (89.2, "-8.0**", 31.7, "+24.3**")],
    [(97.2, "-", 17.4, "-"), (96.2, "-1.0", 27.9, "+10.5**"), (96.7, "-0.5", 34.1, "+16.7**"),
     (89.3, "-7.8**", 39.9, "+22.4**")],
)  # fmt: skip

CELL_COLUMNS = (
    "strong",
    "opponent",
    "lambda",
    "mu",
    "threshold",
    "strong_colour",
    "games",
    "wins",
    "draws",
    "losses",
    "win_rate",
    "wilson_lo",
    "wilson_hi",
    "mean_margin",
    "mean_win_margin",
    "win_margin_se",
    "win_margins",
)
TABLE1_COLUMNS = (
    "threshold",
    "opponent",
    "paper_opponent",
    "strong_colour",
    "lambda",
    "mu",
    "strong_nets",
    "games",
    "wins",
    "win_rate",
    "d_win_rate",
    "base_games",
    "base_wins",
    "p_win_rate",
    "p_win_rate_holm",
    "p_win_rate_bh",
    "p_win_rate_two",
    "p_win_rate_binom_known",
    "mark_win_rate",
    "win_margins",
    "score",
    "score_se",
    "d_score",
    "p_score",
    "p_score_holm",
    "p_score_bh",
    "p_score_mw",
    "p_score_mw_holm",
    "p_score_mw_bh",
    "mark_score",
    "paper9x9_win_rate",
    "paper9x9_d_win_rate",
    "paper9x9_score",
    "paper9x9_d_score",
)


# --------------------------------------------------------------------------
# Agents, nets and player names.


def parse_pairs(text: str | Sequence[str]) -> list[tuple[float, float]]:
    """``"0.5:0,1:0.5"`` (or ``("0.5:0", "1:0.5")``) as [(λ, μ), ...]."""
    pairs = []
    for item in common.parse_list(text, str) if isinstance(text, str) else text:
        lam, sep, mu = item.partition(":")
        if not sep:
            raise ValueError(f"a variable agent is LAMBDA:MU, got {item!r}")
        pairs.append((float(lam), float(mu)))
    return pairs


def check_names(nets: Sequence[players.Player]) -> None:
    """Raises ValueError if two nets share a name, or a name could not be told from an agent's."""
    names = [p.name for p in nets]
    for name in names:
        if names.count(name) > 1:
            raise ValueError(f"two nets are named {name!r}; name them with NAME=SPEC")
        if "[" in name or name in (ITSELF, ALL):
            raise ValueError(f"a net may not be named {name!r} (no '[', not {ITSELF!r} or {ALL!r})")


def agents_fig5(lambdas: Iterable[float], mu_fractions: Iterable[float]) -> list[search.Agent]:
    """Fig. 5's agents: λ in ``lambdas``, μ = f·λ for f in ``mu_fractions``, threshold 0."""
    return [search.Agent(lam, f * lam) for lam in lambdas for f in mu_fractions]


def agents_fig6(pairs: Iterable[tuple[float, float]], thresholds: Iterable[float]) -> list[search.Agent]:
    """Fig. 6's variable agents: each (λ, μ) at threshold 0 and at each of ``thresholds``."""
    levels = list(dict.fromkeys([0.0, *thresholds]))
    return [search.Agent(lam, mu, t) for t in levels for lam, mu in pairs]


def agent_name(net: str, agent: search.Agent) -> str:
    """The strong side's name in the games table: ``net[l=λ,m=μ,t=threshold]``."""
    return f"{net}[l={agent.lambda_:g},m={agent.mu:g},t={agent.threshold:g}]"


_AGENT_NAME = re.compile(r"^(?P<net>[^\[]+)\[l=(?P<l>[^,\]]+),m=(?P<m>[^,\]]+),t=(?P<t>[^,\]]+)\]$")


def parse_agent_name(name: str) -> tuple[str, search.Agent] | None:
    """(net, agent) of a name made by :func:`agent_name`, or None for a plain net name."""
    found = _AGENT_NAME.match(name)
    if found is None:
        return None
    return found["net"], search.Agent(float(found["l"]), float(found["m"]), float(found["t"]))


# --------------------------------------------------------------------------
# Cells and matches.


@dataclasses.dataclass(frozen=True)
class Cell:
    """One cell: a strong net with one agent against one opponent (at λ = μ = 0).

    Attributes:
      strong: the strong net's name.
      opponent: the opponent's name, or ``"itself"`` for the strong net's copy.
      agent: the strong side's agent.
    """

    strong: str
    opponent: str
    agent: search.Agent

    @property
    def key(self) -> tuple[str, str, float, float, float]:
        return (self.strong, self.opponent, self.agent.lambda_, self.agent.mu, self.agent.threshold)


def plan_cells(
    strong: Sequence[str],
    weak: Sequence[str],
    *,
    figures: Iterable[str] = ("5", "6"),
    fig5_agents: Sequence[search.Agent] = (),
    fig6_agents: Sequence[search.Agent] = (),
) -> list[Cell]:
    """The cells of the figures, each once, in playing order (strong net, opponent, agent).

    Fig. 5: every strong net against itself and every weak net, baseline and
    ``fig5_agents``. Fig. 6: against itself and the last weak net, baseline
    and ``fig6_agents``.
    """
    figures = set(figures)
    baseline = search.Agent()
    wanted: dict[tuple[str, str], list[search.Agent]] = {}
    for s in strong:
        opponents = [ITSELF, *weak]
        if "5" in figures:
            for opp in opponents:
                wanted.setdefault((s, opp), []).extend([baseline, *fig5_agents])
        if "6" in figures:
            for opp in [ITSELF, *weak[-1:]]:
                wanted.setdefault((s, opp), []).extend([baseline, *fig6_agents])
    cells = []
    for (s, opp), agents in wanted.items():
        cells.extend(Cell(s, opp, a) for a in dict.fromkeys(agents))
    return cells


def cell_seed(seed: int, cell: Cell, shared: bool = False) -> int:
    """The match seed of a cell: a hash of the run seed and the cell, so a cell's games do not depend on the others.

    With ``shared`` the hash leaves the agent out: every agent of a strong
    net against one opponent plays the same openings, so its games pair with
    those of λ = μ = 0 (the shipped runs hashed the whole cell).
    """
    key = (cell.strong, cell.opponent) if shared else cell.key
    return zlib.crc32(f"{seed}|{key}".encode()) & 0x7FFFFFFF


def play_cell(
    strong: players.Player,
    opponent: players.Player,
    cell: Cell,
    *,
    games: int,
    komi: float,
    seed: int,
    resign_threshold: float | None = None,
    scorer: players.Player | None = None,
    score_visits: int | None = 1000,
    opening_moves: int = 0,
    shared_openings: bool = False,
    sgf_dir: str | None = None,
    results_path: str | None = None,
    log: Callable[[str], None] | None = None,
) -> list[results.GameResult]:
    """Plays one cell: ``games`` games, colours alternating, the strong side with ``cell.agent``.

    Args:
      strong: the strong net at λ = μ = 0 (its agent and name are set here).
      opponent: the weak net, or ``strong`` itself for ``cell.opponent ==
        "itself"`` (it keeps the plain name and λ = μ = 0).
      cell: the cell.
      games: games (even: half with each colour).
      komi: Black's komi in every game.
      seed: the run's seed (the match seed is :func:`cell_seed`, with ``shared_openings``).
      resign_threshold, scorer, score_visits, opening_moves, sgf_dir,
        results_path: as in :class:`saijax.play.match.MatchSettings` and
        :func:`saijax.play.arena.play_match`.
      log: called with a line per game.

    Returns:
      The games' rows.
    """
    if games % 2:
        raise ValueError(f"--games must be even (half the games with each colour), got {games}")
    side_a = strong.with_agent(cell.agent).replace(name=agent_name(strong.name, cell.agent))
    side_b = opponent.with_agent(search.Agent())
    settings = match.MatchSettings(
        games=int(games),
        komi=float(komi),
        colours="alternate",
        seed=cell_seed(seed, cell, shared_openings),
        resign_threshold=resign_threshold,
        score_visits=score_visits,
        opening_moves=opening_moves,
        sgf_dir=sgf_dir,
        results_path=results_path,
    )
    return arena.play_match(side_a, side_b, settings, scorer=scorer, log=log)


# --------------------------------------------------------------------------
# Tables.


class Outcome(NamedTuple):
    """One game from the strong side's point of view."""

    strong: str
    opponent: str  # "itself" or the opponent's name
    agent: search.Agent
    colour: str  # the strong side's colour
    result: int  # +1 win, 0 draw, -1 loss
    margin: float  # the strong side's margin, komi included (NaN if unknown)


def outcomes(games: Iterable[results.GameResult]) -> list[Outcome]:
    """Each game of a score-targeting table, from the strong side (the player named ``net[l=..,m=..,t=..]``).

    Raises:
      ValueError: a game without such a player, or with two.
    """
    out = []
    for g in games:
        sides = [(colour, parse_agent_name(name)) for colour, name in (("black", g.black), ("white", g.white))]
        agents = [(colour, parsed) for colour, parsed in sides if parsed is not None]
        if len(agents) != 1:
            raise ValueError(f"game {g.black} vs {g.white}: not a score-targeting game (one side net[l=,m=,t=])")
        colour, (net, agent) = agents[0]
        other = g.white if colour == "black" else g.black
        winner = str(g.winner).lower()
        result = 0 if winner == "draw" else (1 if winner == colour else -1)
        margin = math.nan if g.margin is None else float(g.margin) * (1 if colour == "black" else -1)
        out.append(Outcome(net, ITSELF if other == net else other, agent, colour, result, margin))
    return out


def _stats(group: Sequence[Outcome]) -> dict:
    """Counts, win rate with its Wilson interval, margins and winning margins of some games."""
    n = len(group)
    wins = sum(o.result == 1 for o in group)
    draws = sum(o.result == 0 for o in group)
    margins = np.array([o.margin for o in group if math.isfinite(o.margin)], float)
    win_margins = np.array([o.margin for o in group if o.result == 1 and math.isfinite(o.margin)], float)
    lo, hi = results.wilson_interval(wins + 0.5 * draws, n)
    return {
        "games": n,
        "wins": wins,
        "draws": draws,
        "losses": n - wins - draws,
        "win_rate": (wins + 0.5 * draws) / n if n else math.nan,
        "wilson_lo": lo,
        "wilson_hi": hi,
        "mean_margin": float(margins.mean()) if margins.size else math.nan,
        "mean_win_margin": float(win_margins.mean()) if win_margins.size else math.nan,
        "win_margin_se": stats.standard_error(win_margins),
        "win_margins": int(win_margins.size),
        "_win_margins": win_margins,
    }


def _public(row: dict, columns: Sequence[str]) -> dict:
    return {k: row[k] for k in columns}


def _agent_order(agent: search.Agent) -> tuple[float, float, float]:
    return (agent.threshold, agent.lambda_, agent.mu)


def cell_rows(played: Sequence[Outcome]) -> list[dict]:
    """cells.csv: per strong net (and ``all``), opponent, agent and colour (and ``both``); columns :data:`CELL_COLUMNS`.

    Rows keep the winning margins themselves under ``_win_margins`` (not
    written), for Table 1.
    """
    strong = list(dict.fromkeys(o.strong for o in played))
    opponents = list(dict.fromkeys(o.opponent for o in played))
    agents = sorted(dict.fromkeys(o.agent for o in played), key=_agent_order)
    groups: dict[tuple, list[Outcome]] = {}
    for o in played:
        for s in (o.strong, ALL):
            for colour in (o.colour, "both"):
                groups.setdefault((s, o.opponent, o.agent, colour), []).append(o)
    rows = []
    for s in [*strong, ALL]:
        for opp in opponents:
            for agent in agents:
                for colour in (*COLOURS, "both"):
                    group = groups.get((s, opp, agent, colour))
                    if group:
                        rows.append(
                            {
                                "strong": s,
                                "opponent": opp,
                                "lambda": agent.lambda_,
                                "mu": agent.mu,
                                "threshold": agent.threshold,
                                "strong_colour": colour,
                                "_nets": len({o.strong for o in group}),
                                **_stats(group),
                            }
                        )
    return rows


def table1_rows(cells: Sequence[dict]) -> list[dict]:
    """Table 1 from the pooled rows of :func:`cell_rows`: every agent against λ = μ = 0.

    One block per threshold and opponent (the thresholds in increasing
    order; at threshold 0, only the opponents that Fig. 6 plays when it was
    played at a higher threshold), rows by colour (White first) and agent,
    the baseline first. Columns :data:`TABLE1_COLUMNS`; win rates and their
    Δ in %, scores in points.
    """
    pooled = [r for r in cells if r["strong"] == ALL and r["strong_colour"] in COLOURS]
    by_key = {(r["opponent"], r["strong_colour"], r["lambda"], r["mu"], r["threshold"]): r for r in pooled}
    opponents = list(dict.fromkeys(r["opponent"] for r in pooled))
    variable = [r for r in pooled if r["threshold"] > 0]
    fig6_opponents = list(dict.fromkeys(r["opponent"] for r in variable))
    weak6 = [o for o in fig6_opponents if o != ITSELF]
    w3 = weak6[-1] if weak6 else ([o for o in opponents if o != ITSELF] or [None])[-1]
    thresholds = sorted({r["threshold"] for r in pooled})
    rows = []
    for t in thresholds:
        block_opponents = fig6_opponents if (t == 0 and variable) else opponents
        for opp in block_opponents:
            paper_opp = ITSELF if opp == ITSELF else ("W3" if opp == w3 else "")
            for colour in COLOURS:
                base = by_key.get((opp, colour, 0.0, 0.0, 0.0))
                agents = sorted(
                    {(r["lambda"], r["mu"]) for r in pooled if r["opponent"] == opp and r["threshold"] == t} - {(0, 0)}
                )
                if base is None or not agents:
                    continue
                for lam, mu in [(0.0, 0.0), *agents]:
                    r = base if (lam, mu) == (0.0, 0.0) else by_key.get((opp, colour, lam, mu, t))
                    if r is not None:
                        rows.append(_table1_row(t, opp, paper_opp, colour, lam, mu, r, base))
    tested = [r for r in rows if (r["lambda"], r["mu"]) != (0.0, 0.0)]
    stat_tables.correct(tested, "p_win_rate", "p_score", "p_score_mw")
    for r in rows:
        for col in ("p_win_rate", "p_score", "p_score_mw"):
            r.setdefault(f"{col}_holm", math.nan)
            r.setdefault(f"{col}_bh", math.nan)
    return rows


def _successes(row: dict) -> int:
    return int(math.floor(row["wins"] + 0.5 * row["draws"]))


def _table1_row(t, opp, paper_opp, colour, lam, mu, r, base) -> dict:
    is_base = (lam, mu) == (0.0, 0.0)
    p_win = p_two = p_known = p_score = p_mw = math.nan
    if not is_base and r["games"] and base["games"]:
        wins = stat_tables.compare_wins(_successes(r), r["games"], _successes(base), base["games"], "less")
        p_win, p_two = wins["p_fisher_less"], wins["p_fisher_two"]
        p_known = stats.binomial_test(_successes(r), r["games"], base["win_rate"], alternative="less")
        margins = stat_tables.compare_margins(list(r["_win_margins"]), list(base["_win_margins"]))
        p_score, p_mw = margins["p_welch_greater"], margins["p_mw_greater"]
    paper = PAPER_TABLE1.get((t, paper_opp, colour, lam, mu))
    return {
        "threshold": t,
        "opponent": opp,
        "paper_opponent": paper_opp,
        "strong_colour": colour,
        "lambda": lam,
        "mu": mu,
        "strong_nets": r["_nets"],
        "games": r["games"],
        "wins": r["wins"],
        "win_rate": 100 * r["win_rate"],
        "d_win_rate": math.nan if is_base else 100 * (r["win_rate"] - base["win_rate"]),
        "base_games": base["games"],
        "base_wins": base["wins"],
        "p_win_rate": p_win,
        "p_win_rate_two": p_two,
        "p_win_rate_binom_known": p_known,
        "mark_win_rate": stats.significance_mark(p_win),
        "win_margins": r["win_margins"],
        "score": r["mean_win_margin"],
        "score_se": r["win_margin_se"],
        "d_score": math.nan if is_base else r["mean_win_margin"] - base["mean_win_margin"],
        "p_score": p_score,
        "p_score_mw": p_mw,
        "mark_score": stats.significance_mark(p_score),
        "paper9x9_win_rate": "" if paper is None else paper[0],
        "paper9x9_d_win_rate": "" if paper is None else paper[1],
        "paper9x9_score": "" if paper is None else paper[2],
        "paper9x9_d_score": "" if paper is None else paper[3],
    }


def _num(x, fmt: str) -> str:
    try:
        x = float(x)
    except (TypeError, ValueError):
        return str(x)
    return "-" if not math.isfinite(x) else format(x, fmt)


def format_table1(rows: Sequence[dict]) -> str:
    """Table 1 as text, one block per threshold and opponent, the paper's 9×9 numbers on the right."""
    header = (
        f"{'colour':6s} {'λ':>4s} {'μ':>5s} {'games':>5s} {'win %':>6s} {'Δ win':>9s} {'wins':>4s} "
        f"{'score':>6s} {'±se':>5s} {'Δ score':>9s} | {'9×9 win %':>9s} {'Δ':>7s} {'score':>5s} {'Δ':>8s}"
    )
    lines = []
    block = None
    for r in rows:
        t, opp = float(r["threshold"]), r["opponent"]
        if (t, opp) != block:
            block = (t, opp)
            paper = r["paper_opponent"]
            note = f"; 9×9 paper: {'itself' if paper == ITSELF else paper}" if paper else ""
            lines += ["", f"Threshold={100 * t:g}%, opponent: {opp}{note}", header]
        is_base = float(r["lambda"]) == 0 and float(r["mu"]) == 0
        d_win = "-" if is_base else _num(r["d_win_rate"], "+.1f") + r["mark_win_rate"]
        d_score = "-" if is_base else _num(r["d_score"], "+.1f") + r["mark_score"]
        lines.append(
            f"{r['strong_colour']:6s} {float(r['lambda']):4g} {float(r['mu']):5g} {int(r['games']):5d} "
            f"{_num(r['win_rate'], '6.1f'):>6s} {d_win:>9s} {int(r['win_margins']):4d} "
            f"{_num(r['score'], '6.1f'):>6s} {_num(r['score_se'], '5.1f'):>5s} {d_score:>9s} | "
            f"{_num(r['paper9x9_win_rate'], '9.1f'):>9s} {r['paper9x9_d_win_rate']!s:>7s} "
            f"{_num(r['paper9x9_score'], '5.1f'):>5s} {r['paper9x9_d_score']!s:>8s}"
        )
    lines.append(
        "\nwin % and score (mean winning margin of the strong side) pooled over the strong nets; "
        "Δ against λ = μ = 0 (same opponent and colour); * p < 0.05, ** p < 0.001 "
        "(raw p: Fisher's exact test for a lower win rate, Welch t-test for a higher score; "
        "Holm and BH adjusted p in table1.csv). "
        "Right: the paper's Table 1, 9×9 at komi 7.5, where it has the row."
    )
    return "\n".join(lines).lstrip("\n")


def format_cells(rows: Sequence[dict], strong: str = ALL) -> str:
    """cells.csv as text for one strong net (default the pooled rows), by opponent, agent and colour."""
    lines = [
        f"{'strong':>10s} {'opponent':>10s} {'λ':>4s} {'μ':>5s} {'thr':>4s} {'colour':>6s} {'games':>5s} "
        f"{'win %':>6s} {'95% Wilson':>13s} {'win score':>9s} {'±se':>5s}"
    ]
    for r in rows:
        if r["strong"] != strong:
            continue
        lines.append(
            f"{r['strong']:>10s} {r['opponent']:>10s} {float(r['lambda']):4g} {float(r['mu']):5g} "
            f"{float(r['threshold']):4g} {r['strong_colour']:>6s} {int(r['games']):5d} "
            f"{100 * float(r['win_rate']):6.1f} [{100 * float(r['wilson_lo']):4.1f}, "
            f"{100 * float(r['wilson_hi']):5.1f}] {_num(r['mean_win_margin'], '+9.1f'):>9s} "
            f"{_num(r['win_margin_se'], '5.1f'):>5s}"
        )
    return "\n".join(lines)


def agent_tests(cells: Sequence[dict]) -> list[dict]:
    """tests.csv: every agent's cell against λ = μ = 0 of the same strong net, opponent and colour.

    For each strong net and for the pooled rows (``all``), opponent, agent
    and colour: the win rates and Fisher's exact test, one-sided (lower:
    the strength loss) and two-sided; the winning margins ("score") and
    Welch's and the Mann–Whitney test, one-sided (larger: the gain). Holm
    and BH adjusted p beside each raw p, over the pooled rows and over the
    per-net rows, each a family.
    """
    base = {(r["strong"], r["opponent"], r["strong_colour"]): r for r in cells if _is_plain(r)}
    pooled, per_net = [], []
    for r in cells:
        b = base.get((r["strong"], r["opponent"], r["strong_colour"]))
        if _is_plain(r) or b is None or not r["games"] or not b["games"]:
            continue
        row = {k: r[k] for k in ("strong", "opponent", "lambda", "mu", "threshold", "strong_colour")}
        row.update(stat_tables.compare_wins(_successes(r), r["games"], _successes(b), b["games"], "less"))
        row.update(stat_tables.compare_margins(list(r["_win_margins"]), list(b["_win_margins"]), "score_"))
        (pooled if r["strong"] == ALL else per_net).append(row)
    columns = ("p_fisher_less", "p_fisher_two", "score_p_welch_greater", "score_p_mw_greater")
    return [*stat_tables.correct(pooled, *columns), *stat_tables.correct(per_net, *columns)]


def compare_runs(cells: Sequence[dict], other_games: Sequence[results.GameResult], other: str) -> list[dict]:
    """compare.csv: each cell of :func:`cell_rows` against the same cell of another run (module docstring).

    ``other_games`` are the other run's games; only those of this run's
    strong nets count, so its pooled rows pool the same nets. Cells the
    other run did not play are left out.
    """
    nets = {r["strong"] for r in cells} - {ALL}
    theirs = cell_rows([o for o in outcomes(other_games) if o.strong in nets])
    key = ("strong", "opponent", "lambda", "mu", "threshold", "strong_colour")
    by_key = {tuple(r[k] for k in key): r for r in theirs}
    pooled, per_net = [], []
    for r in cells:
        b = by_key.get(tuple(r[k] for k in key))
        if b is None or not r["games"] or not b["games"]:
            continue
        wins, base_wins = _successes(r), _successes(b)
        mine, yours = list(r["_win_margins"]), list(b["_win_margins"])
        row = {k: r[k] for k in key}
        row.update(
            other_run=other,
            games=r["games"],
            wins=wins,
            win_rate=wins / r["games"],
            other_games=b["games"],
            other_wins=base_wins,
            other_win_rate=base_wins / b["games"],
            d_win_pts=100 * (wins / r["games"] - base_wins / b["games"]),
            p_fisher_two=stats.fisher_win_test(wins, r["games"], base_wins, b["games"]),
            score_n=len(mine),
            score_mean=r["mean_win_margin"],
            other_score_n=len(yours),
            other_score_mean=b["mean_win_margin"],
            score_diff=r["mean_win_margin"] - b["mean_win_margin"],
            score_p_welch_two=stats.welch_t_test(mine, yours)[1],
        )
        (pooled if r["strong"] == ALL else per_net).append(row)
    columns = ("p_fisher_two", "score_p_welch_two")
    return [*stat_tables.correct(pooled, *columns), *stat_tables.correct(per_net, *columns)]


def format_compare(rows: Sequence[dict]) -> str:
    """The pooled rows of :func:`compare_runs` as text."""
    lines = [
        f"{'opponent':>10s} {'λ':>4s} {'μ':>4s} {'t':>4s} {'colour':>6s} {'wins':>9s} {'other':>9s} {'Δ win':>6s} "
        f"{'p (Holm)':>15s} {'score':>6s} {'other':>6s} {'p (Holm)':>15s}"
    ]
    for r in rows:
        if r["strong"] != ALL:
            continue
        lines.append(
            f"{r['opponent']:>10s} {r['lambda']:4g} {r['mu']:4g} {r['threshold']:4g} {r['strong_colour']:>6s} "
            f"{r['wins']:>4d}/{r['games']:<4d} {r['other_wins']:>4d}/{r['other_games']:<4d} {r['d_win_pts']:+6.1f} "
            f"{r['p_fisher_two']:6.3g} ({r['p_fisher_two_holm']:6.3g}) {_num(r['score_mean'], '6.1f'):>6s} "
            f"{_num(r['other_score_mean'], '6.1f'):>6s} "
            f"{r['score_p_welch_two']:6.3g} ({r['score_p_welch_two_holm']:6.3g})"
        )
    return "\n".join(lines)


# The paired, pre-declared tests (experiments/run.py, experiments/lib/paired.py).
TEST_KEYS = ("run", "strong", "opponent", "lambda", "mu", "threshold", "colour", "measure")


def _samples(games: Sequence[results.GameResult]) -> dict[tuple, list[tuple[Outcome, results.GameResult]]]:
    """(strong net, opponent, agent) -> its games, each with its outcome."""
    cells: dict[tuple, list] = {}
    for o, g in zip(outcomes(games), games):
        cells.setdefault((o.strong, o.opponent, o.agent), []).append((o, g))
    return cells


def _sample(games, colour="both", value="win", pairs=False) -> dict:
    """unit -> (value, capped): a cell's wins, winning margins (``value="win_margin"``: won games only) or
    margins, of one colour or both; with ``pairs``, one unit per opening pair (games 2j, 2j + 1): its wins."""
    out: dict = {}
    for o, g in games:
        if colour != "both" and o.colour != colour:
            continue
        capped = g.end == "cap"
        if pairs:
            key = (o.strong, g.seed, g.game // 2)
            wins, cap = out.get(key, (0, False))
            out[key] = (wins + (o.result == 1), cap or capped)
        elif value == "win":
            out[(o.strong, g.seed, g.game)] = (float(o.result == 1), capped)
        elif value == "margin" or o.result == 1:
            out[(o.strong, g.seed, g.game)] = (o.margin, capped)
    return out


def paired_tests(runs: dict[str, Sequence[results.GameResult]], compare: Sequence[Sequence[str]] = ()) -> list[dict]:
    """Every agent against λ = μ = 0 in each run, and each cell of run A against run B for (A, B) in ``compare``.

    Wins, both colours: against itself :func:`paired.self_play_sign` over
    the opening pairs; against a weak net McNemar where the cells share
    their openings, else Fisher; one-sided (lower). Wins per colour (parts
    of that row), McNemar or Fisher (against itself the baseline's games of
    that colour are distinct games). Winning margins
    per colour, one-sided (larger): Wilcoxon on the openings both won where
    the openings are shared, else Welch. Per net and pooled (``all``).
    Between runs (shared seeds: the same cell key), two-sided McNemar on
    the wins and Wilcoxon on the margins of every game, both colours (a
    deterministic self-play baseline: its White games, one per pair).
    """
    rows = []
    for run, games in runs.items():
        cells = _samples(games)
        for nets in [[s] for s in dict.fromkeys(k[0] for k in cells)] + [None]:
            pooled = _pool(cells, nets)
            for (opp, agent), group in pooled.items():
                base = pooled.get((opp, search.Agent()))
                if agent == search.Agent() or base is None:
                    continue
                key = dict(run=run, strong=nets[0] if nets else ALL, opponent=opp, threshold=agent.threshold,
                           mu=agent.mu, **{"lambda": agent.lambda_})  # fmt: skip
                rows.extend({**key, **r} for r in _agent_rows(opp, group, base))
    for a, b in compare:
        rows.extend(_run_rows(f"{a} vs {b}", _samples(runs[a]), _samples(runs[b])))
    return rows


def _pool(cells: dict, nets: list[str] | None) -> dict:
    out: dict = {}
    for (s, opp, agent), games in cells.items():
        if nets is None or s in nets:
            out.setdefault((opp, agent), []).extend(games)
    return out


def _agent_rows(opp: str, group, base) -> list[dict]:
    if opp == ITSELF:
        both = paired.self_play_sign(_sample(group, pairs=True), "less")
    else:
        arm, b = _sample(group), _sample(base)
        both = (paired.mcnemar if paired.shares_openings(arm, b) else paired.fisher)(arm, b, "less")
    rows = [dict(colour="both", measure="wins", **both)]
    for colour in COLOURS:
        arm, b = _sample(group, colour), _sample(base, colour)
        shared = paired.shares_openings(arm, b)
        rows.append(
            dict(colour=colour, measure="wins", **(paired.mcnemar if shared else paired.fisher)(arm, b, "less"))
        )
        arm, b = _sample(group, colour, "win_margin"), _sample(base, colour, "win_margin")
        rows.append(dict(colour=colour, measure="win_margin", **(paired.wilcoxon if shared else paired.welch)(
            arm, b, "greater")))  # fmt: skip
    return rows


def _run_rows(run: str, mine: dict, theirs: dict) -> list[dict]:
    rows = []
    for nets in [[s] for s in dict.fromkeys(k[0] for k in mine)] + [None]:
        other = _pool(theirs, nets)
        for (opp, agent), group in _pool(mine, nets).items():
            if (opp, agent) not in other:
                continue
            colour = "white" if opp == ITSELF and agent == search.Agent() else "both"
            key = dict(run=run, strong=nets[0] if nets else ALL, opponent=opp, threshold=agent.threshold,
                       mu=agent.mu, colour=colour, **{"lambda": agent.lambda_})  # fmt: skip
            for measure, value, test in (("wins", "win", paired.mcnemar), ("margin", "margin", paired.wilcoxon)):
                a, b = (_sample(s, colour, value) for s in (group, other[(opp, agent)]))
                rows.append(dict(key, measure=measure, **test(a, b)))
    return rows


def claim_tests(dirs: dict[str, str], config) -> list[dict]:
    """experiments/run.py's tests: :func:`paired_tests` of each run's games.csv, runs compared as
    ``config.compare`` says."""
    runs = {name: results.read_results(os.path.join(d, "games.csv")) for name, d in dirs.items()}
    return paired_tests(runs, [tuple(c) for c in config.compare if set(c) <= set(runs)])


def _is_plain(row: dict) -> bool:
    return (row["lambda"], row["mu"], row["threshold"]) == (0.0, 0.0, 0.0)


class Tables(NamedTuple):
    """The experiment's tables: cells.csv's rows, Table 1's and the tests' (dicts, NaN where undefined)."""

    cells: list[dict]
    table1: list[dict]
    tests: list[dict]


def analyse(games: Sequence[results.GameResult]) -> Tables:
    """cells.csv's, table1.csv's and tests.csv's rows from the games table."""
    cells = cell_rows(outcomes(games))
    return Tables(cells, table1_rows(cells), agent_tests(cells))


# --------------------------------------------------------------------------
# Figures.

_STYLE = {"white": dict(fmt="o-", color="tab:blue"), "black": dict(fmt="s--", color="k")}


def _float_rows(rows: Sequence[dict]) -> list[dict]:
    """Rows of :func:`cell_rows` or of cells.csv (strings), numbers as floats and "" as NaN."""
    text = ("strong", "opponent", "strong_colour")
    return [
        {k: (float(v) if v != "" else math.nan) if isinstance(v, str) and k not in text else v for k, v in r.items()}
        for r in rows
    ]


def _panels(ax_score, ax_win, x, sel, offset, label, style, faint=False):
    """Draws winning score ± se (upper panel) and win rate with Wilson interval (lower) of ``sel`` at ``x``."""
    x = np.asarray(x, float) + offset
    win = np.array([r["win_rate"] for r in sel], float)
    score = np.array([r["mean_win_margin"] for r in sel], float)
    if faint:
        ax_score.plot(x, score, style["fmt"][0], color=style["color"], alpha=0.3, ms=3)
        ax_win.plot(x, win, style["fmt"][0], color=style["color"], alpha=0.3, ms=3)
        return
    se = np.array([r["win_margin_se"] for r in sel], float)
    lo = np.array([r["wilson_lo"] for r in sel], float)
    hi = np.array([r["wilson_hi"] for r in sel], float)
    kw = dict(capsize=3, ms=4, label=label, color=style["color"])
    ax_score.errorbar(x, score, yerr=np.nan_to_num(se), fmt=style["fmt"], **kw)
    ax_win.errorbar(x, win, yerr=[win - lo, hi - win], fmt=style["fmt"], **kw)


def plot_fig5(cells: Sequence[dict], title: str = ""):
    """Fig. 5: winning score (upper) and win rate (lower) against the agent, one column per opponent.

    Threshold-0 cells; solid White and dashed Black, pooled over the strong
    nets with 95% intervals (se for the score, Wilson for the win rate);
    each strong net's own values are the faint points. Returns the Figure.
    """
    plt = common.pyplot()
    rows = [r for r in _float_rows(cells) if r["threshold"] == 0 and r["strong_colour"] in COLOURS]
    opponents = list(dict.fromkeys(r["opponent"] for r in rows))
    agents = sorted({(r["lambda"], r["mu"]) for r in rows})
    strong = [s for s in dict.fromkeys(r["strong"] for r in rows) if s != ALL]
    x = {a: i for i, a in enumerate(agents)}
    ncols = max(1, len(opponents))
    fig, axes = plt.subplots(
        2, ncols, figsize=(ncols * max(2.8, 0.45 * len(agents)) + 1.2, 6.4), squeeze=False, sharex=True, sharey="row"
    )
    for j, opp in enumerate(opponents):
        top, bottom = axes[0, j], axes[1, j]
        for k, colour in enumerate(COLOURS):
            offset = 0.08 * (k - 0.5)
            for s in strong if len(strong) > 1 else []:
                sel = sorted(
                    matches.select(rows, strong=s, opponent=opp, strong_colour=colour),
                    key=lambda r: x[(r["lambda"], r["mu"])],
                )
                _panels(top, bottom, [x[(r["lambda"], r["mu"])] for r in sel], sel, offset, None, _STYLE[colour], True)
            sel = sorted(
                matches.select(rows, strong=ALL, opponent=opp, strong_colour=colour),
                key=lambda r: x[(r["lambda"], r["mu"])],
            )
            _panels(top, bottom, [x[(r["lambda"], r["mu"])] for r in sel], sel, offset, f"as {colour}", _STYLE[colour])
        top.set_title(f"vs {opp}")
        bottom.set_ylim(-0.03, 1.03)
        bottom.axhline(0.5, color="0.7", lw=0.8, ls=":")
        bottom.set_xticks(range(len(agents)))
        bottom.set_xticklabels([f"{lam:g}\n{mu:g}" for lam, mu in agents], fontsize=8)
        bottom.set_xlabel("λ over μ")
    axes[0, 0].set_ylabel("mean winning score (± se)")
    axes[1, 0].set_ylabel("win rate (95% Wilson)")
    axes[0, -1].legend(fontsize=8)
    fig.suptitle(title or "Fig. 5: the λ/μ agents\n(pooled over the strong nets; faint: each net)")
    fig.tight_layout()
    return fig


def plot_fig6(cells: Sequence[dict], title: str = ""):
    """Fig. 6: winning score (upper) and win rate (lower) against the threshold, per opponent and colour.

    One line per variable agent (λ, μ) at thresholds 0 and above, pooled
    over the strong nets with 95% intervals; λ = μ = 0 dotted. Only the
    opponents and agents played at a threshold above 0. Returns the Figure.
    """
    plt = common.pyplot()
    rows = [r for r in _float_rows(cells) if r["strong"] == ALL and r["strong_colour"] in COLOURS]
    variable = [r for r in rows if r["threshold"] > 0]
    opponents = list(dict.fromkeys(r["opponent"] for r in variable))
    agents = sorted({(r["lambda"], r["mu"]) for r in variable})
    thresholds = sorted({r["threshold"] for r in rows if (r["lambda"], r["mu"]) in agents})
    columns = [(opp, colour) for opp in opponents for colour in COLOURS]
    fig, axes = plt.subplots(
        2, max(1, len(columns)), figsize=(3.2 * max(1, len(columns)) + 1, 6.2), squeeze=False, sharex=True, sharey="row"
    )
    cmap = plt.get_cmap("tab10")
    for j, (opp, colour) in enumerate(columns):
        top, bottom = axes[0, j], axes[1, j]
        for k, (lam, mu) in enumerate(agents):
            sel = sorted(
                matches.select(rows, opponent=opp, strong_colour=colour, **{"lambda": lam, "mu": mu}),
                key=lambda r: r["threshold"],
            )
            sel = [r for r in sel if r["threshold"] in thresholds]
            style = dict(fmt="o-", color=cmap(k + 1))
            _panels(
                top,
                bottom,
                [100 * r["threshold"] for r in sel],
                sel,
                0.6 * (k - (len(agents) - 1) / 2),
                f"λ={lam:g}, μ={mu:g}",
                style,
            )
        base = matches.select(rows, opponent=opp, strong_colour=colour, threshold=0.0, **{"lambda": 0.0, "mu": 0.0})
        if base:
            if math.isfinite(base[0]["mean_win_margin"]):
                top.axhline(base[0]["mean_win_margin"], color=cmap(0), ls=":", label="λ = μ = 0")
            bottom.axhline(base[0]["win_rate"], color=cmap(0), ls=":", label="λ = μ = 0")
        top.set_title(f"vs {opp}, strong net as {colour}", fontsize=10)
        bottom.set_ylim(-0.03, 1.03)
        bottom.set_xticks([100 * t for t in thresholds])
        bottom.set_xlabel("threshold (%)")
    axes[0, 0].set_ylabel("mean winning score (± se)")
    axes[1, 0].set_ylabel("win rate (95% Wilson)")
    axes[0, -1].legend(fontsize=8)
    fig.suptitle(title or "Fig. 6: the variable agent (pooled over the strong nets)")
    fig.tight_layout()
    return fig


def draw(outdir: str, cells: Sequence[dict]) -> list[str]:
    """Writes the PNGs of the figures that ``cells`` has data for; returns their paths."""
    has_fig6 = any(float(r["threshold"]) > 0 for r in cells)
    return [
        common.save_figure(plot(cells), os.path.join(outdir, png))
        for plot, png, wanted in (
            (plot_fig5, "fig5_score_targeting.png", bool(cells)),
            (plot_fig6, "fig6_variable_agent.png", has_fig6),
        )
        if wanted
    ]


# --------------------------------------------------------------------------
# The experiment.


@dataclasses.dataclass(frozen=True, kw_only=True)
class Settings(common.MatchSettings):
    """Figs. 5 and 6's settings (the module docstring); ``komi`` has a default for 7×7 only (None:
    :data:`EVEN_KOMI`). The λ/μ player fields are the cells' (every net plays λ = μ = 0 but the strong side)."""

    outdir: str = "runs/score_targeting"
    games: int = setting(100, "games per cell, even (the paper: 400)")
    visits: int = 64
    strong: tuple[str, ...] = STRONG
    weak: tuple[str, ...] = setting(WEAK, "weak nets, strongest first (the last, W3, plays Fig. 6)")
    komi: float | None = setting(None, "Black's komi, the even game's (7x7: 9.5)")
    figures: tuple[str, ...] = setting(("5", "6"), "which figures' cells to play")
    lambdas: tuple[float, ...] = setting((0.5, 1.0), "Fig. 5's λ values")
    mu_fractions: tuple[float, ...] = setting((0.0, 0.5, 0.75, 1.0), "Fig. 5's μ as fractions of λ")
    fig5_agents: tuple[str, ...] = setting((), "Fig. 5's agents as LAMBDA:MU, instead of λ × μ fractions")
    openings: Literal["per_cell", "shared"] = setting(
        "per_cell", "shared: a net's agents play one opponent from the same openings (to pair them)"
    )
    variable_agents: tuple[str, ...] = setting(("0.5:0", "1:0", "1:0.5"), "Fig. 6's agents, LAMBDA:MU")
    thresholds: tuple[float, ...] = setting((0.5, 0.7), "Fig. 6's thresholds besides 0")
    scorer: str | None = setting(None, "[NAME=]SPEC scoring resigned games at λ = μ = 0; unset, the first strong net")
    sgf: bool = setting(False, "write every game's SGF to <outdir>/sgf")
    resume: bool = setting(False, "keep the complete cells of <outdir>/games.csv")
    compare_with: str = setting(
        "", "another run's outdir (its games.csv): compare every cell played in both (compare.csv)"
    )
    resign_threshold: float | None = None
    score_visits: int = 1000
    opening_moves: int = 0
    plot_only: bool = setting(False, "rebuild tables and PNGs from <outdir>/games.csv")
    verbose: bool = False

    def check(self) -> None:
        super().check()
        n = self.board_size
        if self.komi is None and n != 7 and not self.plot_only:
            raise self.error("komi", f"has a default for 7x7 only; give it for {n}x{n}")
        if self.games < 2 or self.games % 2:
            raise self.error("games", "needs an even number >= 2 (half the games with each colour)")

    def player_options(self, **changes) -> player_cli.PlayerOptions:
        """How the nets play: the player fields at λ = μ = 0 (the strong side plays its cell's agent)."""
        return super().player_options(**{"lambda_": 0.0, "mu": 0.0, "threshold": 0.0, **changes})


def _game_key(game: results.GameResult) -> tuple:
    """The key of the cell a game of the table belongs to (:attr:`Cell.key`)."""
    o = outcomes([game])[0]
    return (o.strong, o.opponent, o.agent.lambda_, o.agent.mu, o.agent.threshold)


def run(settings: Settings) -> Tables:
    """Plays the cells (with ``plot_only``: none), writes games.csv, cells.csv, table1.csv and the PNGs, and
    with ``compare_with`` compare.csv; returns the tables."""
    tables = write_tables(settings.outdir) if settings.plot_only else play(settings)
    print("\nCells (pooled over the strong nets):")
    print(format_cells(tables.cells))
    print("\nTable 1:")
    print(format_table1(tables.table1))
    if settings.compare_with:
        rows = write_compare(settings.outdir, settings.compare_with, tables.cells)
        print(f"\nAgainst {settings.compare_with} (pooled; Fisher and Welch two-sided, Holm in brackets):")
        print(format_compare(rows))
    return tables


def play(settings: Settings) -> Tables:
    """Plays the cells, writes games.csv, cells.csv, table1.csv and the PNGs; returns the tables."""
    # Every net plays λ = μ = 0 but the strong side of a cell, which plays the cell's agent.
    plain = settings.player_options()
    nets = dict(board_size=settings.board_size, options=plain, seed=settings.seed)
    strong = common.load_nets(settings.strong, **nets)
    weak = common.load_nets(settings.weak, **nets)
    if not strong:
        raise ValueError("need at least one strong net")
    check_names([*strong, *weak])
    figures = set(settings.figures)
    if not figures <= {"5", "6"}:
        raise ValueError(f"--figures takes 5 and 6, got {','.join(settings.figures)!r}")
    fig5 = agents_fig5(settings.lambdas, settings.mu_fractions)
    if settings.fig5_agents:
        fig5 = [search.Agent(lam, mu) for lam, mu in parse_pairs(settings.fig5_agents)]
    fig6 = agents_fig6(parse_pairs(settings.variable_agents), settings.thresholds)
    cells = plan_cells(
        [s.name for s in strong], [w.name for w in weak], figures=figures, fig5_agents=fig5, fig6_agents=fig6
    )
    half, pooled = settings.games // 2, settings.games // 2 * len(strong)
    print(f"power (a cell against λ = μ = 0, one colour, Fisher, one-sided α {stat_tables.ALPHA}, "
          f"power {stat_tables.POWER}):", flush=True)  # fmt: skip
    for n, label in ((half, "per net"), (pooled, f"pooled over {len(strong)} strong nets")):
        print("  " + stat_tables.detectable_line(n, label, (0.5, 0.7, 0.95)), flush=True)
    scorer = None
    if settings.resign_threshold is not None:
        name, spec = (
            common.parse_nets(settings.scorer)[0]
            if settings.scorer
            else (None, common.parse_nets(settings.strong)[0][1])
        )
        scorer = common.load_nets([(name or "scorer", spec)], **nets)[0]
    by_name = {p.name: p for p in [*strong, *weak]}
    log = common.log_lines(settings.verbose)

    def play(cell: Cell, path: str) -> list[results.GameResult]:
        s = by_name[cell.strong]
        opponent = s if cell.opponent == ITSELF else by_name[cell.opponent]
        return play_cell(
            s,
            opponent,
            cell,
            games=settings.games,
            komi=EVEN_KOMI if settings.komi is None else settings.komi,
            seed=settings.seed,
            resign_threshold=settings.resign_threshold,
            scorer=scorer,
            score_visits=settings.score_visits,
            opening_moves=settings.opening_moves,
            shared_openings=settings.openings == "shared",
            sgf_dir=os.path.join(settings.outdir, "sgf") if settings.sgf else None,
            results_path=path,
            log=log,
        )

    def report(cell: Cell, games: Sequence[results.GameResult]) -> str:
        st, a = _stats(outcomes(games)), cell.agent
        return (
            f"{cell.strong} l={a.lambda_:g} m={a.mu:g} t={a.threshold:g} vs {cell.opponent}: "
            f"wins {100 * st['win_rate']:.0f}%, winning score {_num(st['mean_win_margin'], '+.1f')}"
        )

    common.play_cells(
        cells,
        play,
        path=common.games_path(settings.outdir),
        games=settings.games,
        key=lambda c: c.key,
        game_key=_game_key,
        resume=settings.resume,
        report=report,
    )
    tables = write_tables(settings.outdir)
    print(f"wrote {settings.outdir}", flush=True)
    return tables


def write_tables(outdir: str) -> Tables:
    """Reads ``<outdir>/games.csv`` and writes cells.csv, table1.csv and the PNGs; returns the tables."""
    games = results.read_results(os.path.join(outdir, "games.csv"))
    if not games:
        raise ValueError(f"{outdir}/games.csv has no games")
    tables = analyse(games)
    common.write_csv(os.path.join(outdir, "cells.csv"), tables.cells, CELL_COLUMNS, digits=4)
    common.write_csv(os.path.join(outdir, "table1.csv"), tables.table1, TABLE1_COLUMNS, digits=4)
    if tables.tests:
        common.write_csv(os.path.join(outdir, "tests.csv"), tables.tests, digits=6)
    draw(outdir, tables.cells)
    return tables


def write_compare(outdir: str, other: str, cells: Sequence[dict]) -> list[dict]:
    """Writes ``<outdir>/compare.csv``: this run's cells against those of ``<other>/games.csv``."""
    path = os.path.join(other, "games.csv")
    if not os.path.exists(path):
        raise ValueError(f"--compare_with {other}: no games.csv there")
    rows = compare_runs(cells, results.read_results(path), other)
    if not rows:
        raise ValueError(f"--compare_with {other}: no cell of {outdir} was played there with the same strong nets")
    common.write_csv(os.path.join(outdir, "compare.csv"), rows, digits=6)
    return rows


def main(argv=None, *, exit_on_error: bool = False) -> int:
    """The command line: a flag per field of :class:`Settings`."""
    return common.main(__name__, argv, exit_on_error=exit_on_error)


if __name__ == "__main__":
    raise SystemExit(main(exit_on_error=True))
