"""Match conditions and their tables, shared by the experiments that play nets against each other.

:mod:`experiments.handicap.handicap` (Figs. 3 and 4), :mod:`experiments.recovery.recovery`
(Fig. 7), :mod:`experiments.elo_curve.elo_curve`, :mod:`experiments.gnugo_strength.gnugo_strength`
and :mod:`experiments.baselines.baselines` play with these:

* a :class:`Condition` is a cell of a figure (an opponent, a handicap and
  the komi each colour of the strong net plays at); :func:`play_conditions`
  plays many in lockstep matches and :func:`summary_rows` makes the win-rate
  table (95% Wilson intervals, split by colour);
* :func:`colour_record` is a player's record with one colour;
* :func:`pairing_settings` is the match of an Elo pairing, and
  :func:`play_pairings` plays a list of pairings into a resumable games table.
"""

from __future__ import annotations

import dataclasses
import math
import os
from collections.abc import Callable, Sequence

import jax
import jax.numpy as jnp
import numpy as np

from experiments.lib import common
from saijax.analysis import results
from saijax.core import go, sgf
from saijax.play import arena, match, players

__all__ = [
    "STRONG",
    "WEAK",
    "SUMMARY_COLUMNS",
    "CONDITION_COLUMNS",
    "NO_SGFS",
    "check_names",
    "Condition",
    "malus_conditions",
    "white_conditions",
    "Played",
    "play_conditions",
    "condition_rows",
    "summary_rows",
    "pooled_rows",
    "read_summary",
    "format_table",
    "start_positions",
    "plot_win_rates",
    "select",
    "colour_record",
    "pairing_settings",
    "play_pairings",
]

# The zoo's 7×7 nets: the papers' S1–S3 and W1–W3.
STRONG = ("zoo:go7-S1", "zoo:go7-S2", "zoo:go7-S3")
WEAK = ("zoo:go7-W1", "zoo:go7-W2", "zoo:go7-W3")

# The summary CSVs' columns (one row per cell and colour of the strong net).
SUMMARY_COLUMNS = tuple(
    "figure strong opponent lambda mu handicap malus strong_colour komi "
    "games wins draws losses win_rate wilson_lo wilson_hi mean_margin mean_win_margin distinct_games".split()
)
# conditions.csv: the condition of the games with these (black, white, komi, handicap).
CONDITION_COLUMNS = tuple("black white komi handicap figure strong opponent strong_colour malus lambda mu".split())
_TEXT = ("figure", "strong", "opponent", "strong_colour", "distinct_games")
# The distinct-games cell of games whose SGFs are missing (older tables left it empty).
NO_SGFS = "no SGFs"


def check_names(nets: Sequence[players.Player]) -> None:
    """Raises ValueError if two nets share a name (the games table tells nets apart by name)."""
    names = [p.name for p in nets]
    for name in names:
        if names.count(name) > 1 or f"{name}-copy" in names:
            raise ValueError(f"two nets are named {name!r} (or its copy's name); name them with NAME=SPEC")


@dataclasses.dataclass(frozen=True)
class Condition:
    """One cell of a figure: games of a strong net against an opponent under one setting.

    Attributes:
      figure: "fig3", "fig4" or "fig7".
      opponent: the opponent's label in tables and plots ("itself" for a
        net against its copy).
      handicap: 0 (even), 1 (H1) or >= 2 stones, White first.
      malus: points against the strong net relative to the setting's base
        komi: the even komi in Fig. 3, the plain handicap's 0.5 in Fig. 4,
        the recovery experiment's base komis in Fig. 7.
      komi_black: Black's komi when the strong net has Black.
      komi_white: Black's komi when the strong net has White.
    """

    figure: str
    opponent: str
    handicap: int
    malus: float
    komi_black: float
    komi_white: float


def malus_conditions(figure: str, opponent: str, maluses: Sequence[float], komi: float) -> list[Condition]:
    """Even games with ``m`` points against the strong net, colour-relative (Fig. 3)."""
    out = []
    for m in maluses:
        as_black, as_white = match.colour_relative_komi(komi, m, [True, False])
        out.append(Condition(figure, opponent, 0, float(m), as_black, as_white))
    return out


def white_conditions(figure: str, opponent: str, handicap: int, komis: Sequence[float], *, base: float):
    """The strong net as White at each of ``komis``; its malus is ``base − komi`` (Figs. 4 and 7)."""
    return [Condition(figure, opponent, int(handicap), float(base - k), float(k), float(k)) for k in komis]


@dataclasses.dataclass(frozen=True)
class Played:
    """A played game and its condition."""

    condition: Condition
    strong: str  # the strong player's name in the games table
    game: results.GameResult


def play_conditions(
    strong: players.Player,
    opponent: players.Player,
    conditions: Sequence[Condition],
    *,
    games: int,
    colours: str,
    seed: int,
    max_batch: int = 1024,
    resign_threshold: float | None = None,
    score_visits: int | None = 1000,
    opening_moves: int = 0,
    results_path: str | None = None,
    sgf_dir: str | None = None,
    resume: bool = False,
    log: Callable[[str], None] | None = None,
) -> list[Played]:
    """Plays ``games`` games per condition between ``strong`` (side A) and ``opponent``.

    The conditions are batched into lockstep matches of at most
    ``max_batch`` games (whole conditions; at least one per match), with one
    komi and handicap per game. With ``colours="alternate"`` the strong net
    has Black in the even-numbered games of each condition, so ``games``
    must be even; with ``"a_white"`` or ``"a_black"`` it keeps one colour.

    Args:
      strong, opponent: the two players (distinct names).
      conditions: the cells to play.
      games: games per condition.
      colours: :class:`saijax.play.match.MatchSettings` colours, side A = strong.
      seed: match seeds are ``seed + k`` for the k-th lockstep match.
      max_batch: most games per lockstep match.
      resign_threshold, score_visits, opening_moves, results_path: as in
        :class:`saijax.play.match.MatchSettings`.
      sgf_dir: write one SGF per game into ``<sgf_dir>/<strong>-<opponent>``
        (the summaries count distinct games from them).
      resume: keep the conditions that ``results_path`` already holds in
        full (their games are returned, not replayed); the rows of a
        condition cut short (a killed run) are dropped and it is played
        again whole.
      log: called with a line per game.

    Returns:
      One :class:`Played` per game, the resumed ones first.
    """
    if colours == "alternate" and games % 2:
        raise ValueError(f"--games must be even when colours alternate (half the games as Black), got {games}")
    out = []
    if resume and results_path is not None:
        out, conditions = _resume_conditions(results_path, strong.name, opponent.name, conditions, games, colours)
    per_match = max(1, int(max_batch) // int(games))
    for k, start in enumerate(range(0, len(conditions), per_match)):
        chunk = conditions[start : start + per_match]
        n = games * len(chunk)
        a_black = match.MatchSettings(games=n, colours=colours).side_a_black()
        cond = [c for c in chunk for _ in range(games)]
        settings = match.MatchSettings(
            games=n,
            komi=tuple(c.komi_black if b else c.komi_white for c, b in zip(cond, a_black)),
            handicap=tuple(c.handicap for c in cond),
            colours=colours,
            seed=int(seed) + k,
            resign_threshold=resign_threshold,
            score_visits=score_visits,
            opening_moves=opening_moves,
            results_path=results_path,
            sgf_dir=None if sgf_dir is None else os.path.join(sgf_dir, f"{strong.name}-{opponent.name}"),
        )
        played = arena.play_match(strong, opponent, settings, log=log)
        out.extend(Played(c, strong.name, g) for c, g in zip(cond, played))
    return out


def _condition_keys(c: Condition, strong: str, opponent: str, games: int, colours: str) -> dict[tuple, int]:
    """The games a condition holds: (black, white, 2·komi, handicap) -> count."""
    keys: dict[tuple, int] = {}
    for black in match.MatchSettings(games=games, colours=colours).side_a_black():
        key = (strong, opponent, round(2 * c.komi_black), c.handicap)
        if not black:
            key = (opponent, strong, round(2 * c.komi_white), c.handicap)
        keys[key] = keys.get(key, 0) + 1
    return keys


def _game_key(g: results.GameResult) -> tuple:
    return (g.black, g.white, round(2 * float(g.komi)), int(g.handicap))


def _resume_conditions(
    path: str, strong: str, opponent: str, conditions: Sequence[Condition], games: int, colours: str
) -> tuple[list[Played], list[Condition]]:
    """Splits ``conditions`` into the games ``path`` holds in full and the conditions still to play.

    The rows of the conditions to play (a cut-short condition) are removed
    from ``path``; every other row stays.
    """
    if not os.path.exists(path):
        return [], list(conditions)
    rows = results.read_results(path)
    by_key: dict[tuple, list[results.GameResult]] = {}
    for g in rows:
        by_key.setdefault(_game_key(g), []).append(g)
    done, todo, drop = [], [], set()
    for c in conditions:
        keys = _condition_keys(c, strong, opponent, games, colours)
        if all(len(by_key.get(k, ())) >= n for k, n in keys.items()):
            done.extend(Played(c, strong, g) for k, n in keys.items() for g in by_key[k][:n])
        else:
            todo.append(c)
            drop.update(keys)
    if any(_game_key(g) in drop for g in rows):
        common.rewrite_games(path, [g for g in rows if _game_key(g) not in drop])
    return done, todo


def _strong_colour(p: Played) -> str:
    return "black" if p.game.black == p.strong else "white"


def condition_rows(played: Sequence[Played], agents: dict[str, tuple[float, float]] | None = None) -> list[dict]:
    """One row per distinct (black, white, komi, handicap): the condition of those games."""
    rows: dict[tuple, dict] = {}
    for p in played:
        g = p.game
        key = (g.black, g.white, g.komi, g.handicap)
        lam, mu = (agents or {}).get(p.strong, (0.0, 0.0))
        row = dict(
            black=g.black,
            white=g.white,
            komi=g.komi,
            handicap=g.handicap,
            figure=p.condition.figure,
            strong=p.strong,
            opponent=p.condition.opponent,
            strong_colour=_strong_colour(p),
            malus=p.condition.malus,
            mu=mu,
            **{"lambda": lam},
        )
        if key in rows and rows[key] != row:
            raise ValueError(f"two conditions share the games key {key}: {rows[key]} and {row}")
        rows[key] = row
    return list(rows.values())


def distinct_count(games: Sequence[results.GameResult], board_size: int | None = None) -> int | str:
    """The distinct games (same moves in the same order) among ``games``, read from their SGFs;
    :data:`NO_SGFS` without them."""
    return distinct_sgf_games([g.sgf for g in games], board_size)


def distinct_sgf_games(paths: Sequence[str | None], board_size: int | None = None, *, symmetric: bool = False):
    """The distinct games among the SGFs at ``paths`` (with ``symmetric``, up to the board's 8 symmetries);
    :data:`NO_SGFS` if there are none or one is missing. An SGF is read from its file or from its run's
    archive (:func:`experiments.lib.common.sgf_bytes`)."""
    texts = [common.sgf_bytes(p) if p else None for p in paths]
    if not texts or any(t is None for t in texts):
        return NO_SGFS
    records = [sgf.read_sgf(t, check=False) for t in texts]  # no replay: the arena wrote them
    return distinct_games([r.moves for r in records], board_size or records[0].size)[int(symmetric)]


def _stats_row(base: dict, colour: str, komi, stats: results.ColourStats, distinct: int | str = "") -> dict:
    lo, hi = results.wilson_interval(stats.wins + 0.5 * stats.draws, stats.games)
    return {
        "distinct_games": distinct,
        **base,
        "strong_colour": colour,
        "komi": komi,
        "games": stats.games,
        "wins": stats.wins,
        "draws": stats.draws,
        "losses": stats.losses,
        "win_rate": round(stats.win_rate, 4),
        "wilson_lo": round(lo, 4),
        "wilson_hi": round(hi, 4),
        "mean_margin": round(stats.mean_margin, 2),
        "mean_win_margin": round(stats.mean_win_margin, 2),
    }


def summary_rows(played: Sequence[Played], agents: dict[str, tuple[float, float]] | None = None) -> list[dict]:
    """Win rates per condition and strong net, split by the strong net's colour.

    Each (strong net, condition) gives a row per colour the strong net
    played, and a ``both`` row when it played both; columns
    :data:`SUMMARY_COLUMNS`. Draws count half; the intervals are 95% Wilson.
    """
    cells: dict[tuple[str, Condition], list[results.GameResult]] = {}
    for p in played:
        cells.setdefault((p.strong, p.condition), []).append(p.game)
    rows = []
    for (strong, c), games in cells.items():
        lam, mu = (agents or {}).get(strong, (0.0, 0.0))
        s = results.summarize(games, strong)
        base = dict(figure=c.figure, strong=strong, opponent=c.opponent, mu=mu, handicap=c.handicap, malus=c.malus)
        base["lambda"] = lam
        colours = [("black", c.komi_black, s.black), ("white", c.komi_white, s.white)]
        for colour, komi, stats in colours:
            if stats.games:
                mine = [g for g in games if (g.black == strong) == (colour == "black")]
                rows.append(_stats_row(base, colour, komi, stats, distinct_count(mine)))
        if s.black.games and s.white.games:
            rows.append(_stats_row(base, "both", "", s.overall, distinct_count(games)))
    return [{k: r[k] for k in SUMMARY_COLUMNS} for r in rows]


def pooled_rows(rows: Sequence[dict], label: str) -> list[dict]:
    """Summary rows pooled over the strong nets, as the papers average over S1–S3.

    Rows of :func:`summary_rows` that share every column but ``strong`` (and
    the komi, which a pooled ``both`` row leaves empty) are added up: games,
    wins, draws and losses summed, the win rate and Wilson interval of the
    sums, the mean margin weighted by games and the mean winning margin by
    wins. With equal games per net this is the average of the nets' rates.
    The pooled rows are named ``label`` in the ``strong`` column.
    """
    cells: dict[tuple, list[dict]] = {}
    for r in rows:
        key = tuple(r[k] for k in SUMMARY_COLUMNS if k in ("figure", "opponent", "lambda", "mu", "handicap", "malus"))
        cells.setdefault((*key, r["strong_colour"], r["komi"]), []).append(r)
    out = []
    for group in cells.values():
        games = sum(int(r["games"]) for r in group)
        wins, draws = sum(int(r["wins"]) for r in group), sum(int(r["draws"]) for r in group)
        won = [(float(r["mean_win_margin"]), int(r["wins"])) for r in group if int(r["wins"])]
        margins = [(float(r["mean_margin"]), int(r["games"])) for r in group if int(r["games"])]
        lo, hi = results.wilson_interval(wins + 0.5 * draws, games)
        out.append(
            {
                **group[0],
                "strong": label,
                "games": games,
                "wins": wins,
                "draws": draws,
                "losses": sum(int(r["losses"]) for r in group),
                "win_rate": round((wins + 0.5 * draws) / games, 4) if games else math.nan,
                "wilson_lo": round(lo, 4),
                "wilson_hi": round(hi, 4),
                "mean_margin": round(sum(m * n for m, n in margins) / games, 2) if games else math.nan,
                "mean_win_margin": round(sum(m * n for m, n in won) / sum(n for _, n in won), 2) if won else math.nan,
                "distinct_games": NO_SGFS
                if any(r.get("distinct_games") in (None, "", NO_SGFS) for r in group)
                else sum(int(r["distinct_games"]) for r in group),  # different nets: different games
            }
        )
    return out


def read_summary(path: str) -> list[dict]:
    """A summary CSV (:data:`SUMMARY_COLUMNS`), numbers as floats."""
    return common.read_csv(path, text=_TEXT)


def format_table(rows: Sequence[dict]) -> str:
    """The summary as text: one line per cell, win rate and Wilson interval in %."""
    lines = [
        f"{'strong':>14s} {'opponent':>10s} {'lambda':>6s} {'H':>2s} {'malus':>6s} {'colour':>6s} {'komi':>5s} "
        f"{'games':>5s} {'win %':>6s} {'95% Wilson':>13s} {'margin':>7s}"
    ]
    for r in rows:
        komi = "" if r["komi"] == "" else f"{float(r['komi']):g}"
        margin = float(r["mean_margin"]) if r["mean_margin"] != "" else math.nan
        lines.append(
            f"{r['strong']:>14s} {r['opponent']:>10s} {float(r['lambda']):6g} {int(r['handicap']):2d} "
            f"{float(r['malus']):6g} {r['strong_colour']:>6s} {komi:>5s} {int(r['games']):5d} "
            f"{100 * float(r['win_rate']):6.1f} [{100 * float(r['wilson_lo']):4.1f}, "
            f"{100 * float(r['wilson_hi']):5.1f}] {'' if math.isnan(margin) else f'{margin:+7.1f}'}"
        )
    return "\n".join(lines)


def start_positions(nets: Sequence[players.Player], handicaps: Sequence[int]) -> list[dict]:
    """Each net's α, β on the start positions, and the komi at which it thinks them even.

    α is the lead of the player to move, before komi (docs/design.md §4):
    Black's with no stones or H1, White's with H >= 2 stones. The even komi
    (Black's) is α when Black is to move and −α when White is.
    """
    rows = []
    for net in nets:
        rules = go.GoRules(net.board_size)
        for h in handicaps:
            state = jax.vmap(lambda k: go.init(rules, k, h))(jnp.zeros(1, jnp.float32))
            _, alpha, beta = net.evaluator(net.variables, state)
            alpha, beta, to_play = (float(np.asarray(v)[0]) for v in (alpha, beta, state.to_play))
            rows.append(
                dict(
                    net=net.name,
                    handicap=h,
                    to_play="black" if to_play > 0 else "white",
                    alpha=round(alpha, 3),
                    beta=round(beta, 4),
                    even_komi=round(alpha if to_play > 0 else -alpha, 2),
                )
            )
    return rows


def plot_win_rates(ax, x, rows, **kwargs):
    """Win rates of summary ``rows`` at ``x`` with their Wilson intervals as error bars."""
    y = np.array([float(r["win_rate"]) for r in rows])
    lo = np.array([float(r["wilson_lo"]) for r in rows])
    hi = np.array([float(r["wilson_hi"]) for r in rows])
    ax.errorbar(x, y, yerr=[y - lo, hi - y], capsize=3, ms=4, **kwargs)


def select(rows, **where):
    """The rows whose columns equal ``where``'s values."""
    return [r for r in rows if all(r[k] == v for k, v in where.items())]


def colour_record(games: list[results.GameResult], player: str, colour: str) -> dict:
    """A player's record with one colour over a one-colour match: games, wins,
    draws, win rate with its 95% Wilson interval, mean margin."""
    s = results.summarize(games, player)
    stats = s.black if colour == "black" else s.white
    return {
        "games": stats.games,
        "wins": stats.wins,
        "draws": stats.draws,
        "win_rate": round(stats.win_rate, 4),
        "wilson_lo": round(s.wilson[0], 4),
        "wilson_hi": round(s.wilson[1], 4),
        "mean_margin": round(stats.mean_margin, 2),
    }


def pairing_settings(settings, k: int, results_path: str) -> match.MatchSettings:
    """The k-th Elo pairing's match: ``settings.games`` games at ``settings.komi``, colours
    alternating, ``settings.opening_moves`` random opening moves, its own seed."""
    return match.MatchSettings(
        games=settings.games,
        komi=settings.komi,
        seed=settings.seed * 100_003 + k,
        opening_moves=settings.opening_moves,
        score_visits=None,
        results_path=results_path,
    )


def play_pairings(
    nets: dict[str, players.Player],
    pairs: Sequence[tuple[str, str]],
    settings,
    *,
    sgf_root: str | None = None,
) -> list[results.GameResult]:
    """Plays each pairing of ``pairs`` (names of ``nets``) into ``<settings.outdir>/games.csv``
    (``settings``: an experiment's settings, with ``games``, ``komi``, ``seed``, ``opening_moves``,
    ``outdir`` and ``restart``).

    The k-th pairing is :func:`pairing_settings` ``(settings, k)`` (with
    ``sgf_root``, its SGFs go to ``<sgf_root>/<a>-<b>``). A pairing is keyed by
    its two names whatever their order, and the table resumes: pairings
    already played in full are kept, unless ``settings.restart``.

    Returns:
      The games of these pairings in the table afterwards (others are left out).
    """
    pairs = list(pairs)

    def key(pair):
        return tuple(sorted(pair))

    def play(pair, results_path):
        match_settings = pairing_settings(settings, pairs.index(pair), results_path)
        if sgf_root:
            sgf_dir = os.path.join(sgf_root, f"{pair[0]}-{pair[1]}")
            match_settings = dataclasses.replace(match_settings, sgf_dir=sgf_dir)
        return arena.play_match(nets[pair[0]], nets[pair[1]], match_settings)

    def report(pair, games):
        s = results.summarize(games, pair[0])
        return f"{pair[0]:>8s} vs {pair[1]:<8s}: {pair[0]} scores {100 * s.overall.win_rate:5.1f}% of {s.overall.games}"

    played = common.play_cells(
        pairs,
        play,
        path=common.games_path(settings.outdir),
        games=settings.games,
        key=key,
        game_key=lambda g: key((g.black, g.white)),
        resume=not settings.restart,
        report=report,
    )
    wanted = {key(pair) for pair in pairs}
    return [g for g in played if key((g.black, g.white)) in wanted]


def distinct_games(move_lists: Sequence[Sequence[int]], board_size: int) -> tuple[int, int]:
    """(distinct games, distinct up to the board's 8 symmetries) among move lists.

    Two games are the same when they have the same moves in the same order;
    up to symmetry, when one is the other rotated or reflected (the canonical
    form is the smallest of the 8 transformed move lists).
    """
    perms = [go._policy_perm(board_size, k) for k in range(8)]
    inverse = [np.argsort(p) for p in perms]  # action -> its image under transform k
    exact = {tuple(int(a) for a in moves) for moves in move_lists}
    canonical = {min(tuple(int(inv[a]) for a in moves) for inv in inverse) for moves in exact}
    return len(exact), len(canonical)
