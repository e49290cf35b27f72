"""The results table: one row per game, written and read, and win-rate summaries (docs/design.md §8).

Matches (:mod:`saijax.arena`, :mod:`saijax.play.gtp_match`) append one
:class:`GameResult` per finished game to a table; :mod:`saijax.elo` fits
ratings to it, and :func:`summarize` / :func:`format_report` turn it into win
rates with Wilson and Clopper–Pearson 95% intervals, split by colour.

Columns, in this order (:data:`COLUMNS`, the CSV header and the JSON keys):

* ``black``, ``white``: player names (always strings, even ``"007"``).
* ``winner``: ``"black"``, ``"white"`` or ``"draw"``.
* ``margin``: Black minus White in points, komi included. A counted game's
  margin is the Tromp–Taylor count. A resigned game's margin is the score
  estimate of a search from the position where the resignation happened,
  except that a resignation always decides the winner: an estimate on the
  wrong side of zero (or none at all) is recorded as the smallest win, ±0.5
  (:func:`winner_and_margin`).
* ``resigned``: the loser resigned (true/false).
* ``moves``: moves played, passes included (a resignation is not a move).
* ``komi``: Black's komi. ``handicap``: handicap stones (0 and 1: none).
* ``end``: ``"passes"``, ``"resign"`` or ``"cap"`` (the move cap).
* ``score_estimate``: the raw estimate at a resignation (Black minus White),
  empty otherwise.
* ``engine_score``, ``engine_dead``: a GTP engine's ``final_score`` and its
  dead stones (space-separated vertices) when a game against it was counted.
* ``sgf``: the game's SGF path. ``game``: its index in the match.
  ``seed``: the match seed.
* ``resign_ply``, ``resign_estimate``, ``resign_own_estimate``: the ply at
  which the resign rule first fired (0-based), the score estimate there
  (Black minus White; the scorer's, see ``MatchSettings.score_visits``) and
  the resigning player's own search's estimate. Set at a resignation, and in
  matches that play resignations out (``MatchSettings.play_out``), where
  they validate the estimator against the final count; empty otherwise.
* ``visits``, ``gumbel_scale``, ``precision``: how the players searched:
  visits per move, the root's Gumbel noise scale (0: the search's best
  move) and the network's compute precision (``float32``, ``bfloat16``).
  One value when both players share it, else Black's and White's joined
  by ``/`` (``1000/128``); ``-`` where it does not apply (a GTP engine's
  side, a search other than Gumbel's, a player without a network).
* ``opening``: the moves no player chose, as GTP vertices (``C3 D4``): a
  start position's (``MatchSettings.start_moves``), then the random
  opening moves; empty without them. ``opening_id``: a short hash of the
  board size, the handicap and ``opening``, so games that start from the
  same position share it (the two games of a colour pair, the same game
  of two arms played with one seed); empty without an opening.

Tables written before a column existed read it as empty.

Format. The file name picks it: ``.csv`` (any case) is CSV with a header
row, with empty cells for missing values; anything else (``.jsonl``,
``.ndjson``, ...) is one JSON object per line, with ``null`` for missing
values. The table is append-only: each row is one ``write`` on a file opened
for appending, then flushed, so concurrent or interrupted writers leave whole
lines. Appending to a CSV written with an older header (the columns up to
``seed`` or ``resign_own_estimate``) first rewrites it, whole, with the
current header and empty new cells; any other header is an error.

Reading (:func:`read_results`) also accepts hand-written tables: only
``black``, ``white`` and ``winner`` are required, other columns may be absent
or empty (strings read as ``""``, ``resigned`` as false, ``handicap`` as 0,
other numbers as None), and columns this module does not know are ignored.
"""

from __future__ import annotations

import csv
import dataclasses
import io
import json
import math
import os
from collections.abc import Iterable, Mapping
from typing import Any

import numpy as np

from saijax.analysis.stats import clopper_pearson_interval, wilson_interval

__all__ = [
    "COLUMNS",
    "GameResult",
    "ColourStats",
    "Summary",
    "winner_and_margin",
    "append_results",
    "read_results",
    "wilson_interval",  # from saijax.analysis.stats, where the tests live
    "clopper_pearson_interval",
    "summarize",
    "format_report",
    "format_games",
    "game_line",
]

_OUTCOMES = ("black", "white", "draw")
_REQUIRED = ("black", "white", "winner")


# ---------------------------------------------------------------------------
# The row.


@dataclasses.dataclass(frozen=True)
class GameResult:
    """One game of a match: a row of the results table (columns in the module docstring).

    Attributes:
      black, white: player names.
      winner: "black", "white" or "draw".
      margin: Black minus White in points, komi included: the Tromp–Taylor
        count, or at resignation the score estimate (with the ±0.5 rule of
        :func:`winner_and_margin`); None if unknown.
      resigned: the loser resigned.
      moves: moves played, passes included (a resignation is not a move).
      komi: Black's komi.
      handicap: handicap stones (0/1: none).
      end: "passes", "resign" or "cap" (the move cap); "" if unknown.
      score_estimate: the raw score estimate at resignation (Black minus
        White), else None.
      engine_score: the GTP engine's ``final_score`` answer when the game
        was counted ("" for net-vs-net games and resignations).
      engine_dead: the stones the engine calls dead at that point (its
        ``final_status_list dead``, space-separated vertices), "" if none or
        not asked. Tromp–Taylor removes no dead stones, so the two counts
        can only agree when this is empty.
      sgf: the SGF path, or "".
      game: the game's index in the match.
      seed: the match seed.
      resign_ply, resign_estimate, resign_own_estimate: where the resign
        rule first fired and the estimates there (module docstring).
      visits, gumbel_scale, precision: the players' search settings, one
        value or Black's/White's (module docstring); "" if unknown.
      opening: the moves no player chose (GTP vertices, space-separated).
      opening_id: the opening's short hash; "" without an opening.
    """

    black: str
    white: str
    winner: str
    margin: float | None = None
    resigned: bool = False
    moves: int | None = None
    komi: float | None = None
    handicap: int = 0
    end: str = ""
    score_estimate: float | None = None
    engine_score: str = ""
    engine_dead: str = ""
    sgf: str = ""
    game: int | None = None
    seed: int | None = None
    resign_ply: int | None = None
    resign_estimate: float | None = None
    resign_own_estimate: float | None = None
    visits: str = ""
    gumbel_scale: str = ""
    precision: str = ""
    opening: str = ""
    opening_id: str = ""

    def to_dict(self) -> dict[str, Any]:
        """The row as a dict, keys in :data:`COLUMNS` order."""
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, row: Mapping[str, Any]) -> GameResult:
        """Validates one row (a JSON object, or a CSV row of strings) into a GameResult.

        Values are converted to the column's type (CSV cells are text); empty
        or missing optional values take the field's default; unknown keys are
        ignored; ``winner`` is normalised to lower case.

        Args:
          row: column name -> value.

        Returns:
          The row.

        Raises:
          ValueError: ``black``/``white``/``winner`` missing, an unknown
            winner, a player against itself, or a value of the wrong type.
            The message names the column and the value.
        """
        if not isinstance(row, Mapping):
            raise ValueError(f"expected an object per game, got {type(row).__name__}")
        missing = [k for k in _REQUIRED if row.get(k) in (None, "")]
        if missing:
            raise ValueError(f"missing column(s) {missing}")
        values = {}
        for name, kind in _KINDS.items():
            value = row.get(name)
            if value is None or value == "":
                continue
            values[name] = _coerce(name, kind, value)
        winner = values["winner"].strip().lower()
        if winner not in _OUTCOMES:
            raise ValueError(f"winner must be one of {list(_OUTCOMES)}, got {row['winner']!r}")
        values["winner"] = winner
        if values["black"] == values["white"]:
            raise ValueError(f"player {values['black']!r} plays itself")
        return cls(**values)


COLUMNS: tuple[str, ...] = tuple(f.name for f in dataclasses.fields(GameResult))
_KINDS = {
    "black": str,
    "white": str,
    "winner": str,
    "margin": float,
    "resigned": bool,
    "moves": int,
    "komi": float,
    "handicap": int,
    "end": str,
    "score_estimate": float,
    "engine_score": str,
    "engine_dead": str,
    "sgf": str,
    "game": int,
    "seed": int,
    "resign_ply": int,
    "resign_estimate": float,
    "resign_own_estimate": float,
    "visits": str,
    "gumbel_scale": str,
    "precision": str,
    "opening": str,
    "opening_id": str,
}
assert tuple(_KINDS) == COLUMNS
# The headers of CSVs written by an older saijax, which appending migrates.
_OLDER_HEADERS = tuple(COLUMNS[: COLUMNS.index(last) + 1] for last in ("seed", "resign_own_estimate"))


def _coerce(name: str, kind: type, value: Any):
    """``value`` (typed from JSON, or text from CSV) as a ``kind``; ValueError names the column."""
    if kind is str:
        if isinstance(value, bool) or not isinstance(value, (str, int, float)):
            raise ValueError(f"{name} must be a string, got {value!r}")
        return str(value)
    if kind is bool:
        if isinstance(value, bool):
            return value
        if isinstance(value, str) and value.strip().lower() in ("true", "false"):
            return value.strip().lower() == "true"
        raise ValueError(f"{name} must be true or false, got {value!r}")
    number = value
    if isinstance(value, str):
        try:
            number = float(value) if kind is float else int(value)
        except ValueError:
            try:
                number = float(value)  # an int column written as "61.0"
            except ValueError:
                number = None
    if isinstance(number, bool) or not isinstance(number, (int, float)):
        raise ValueError(f"{name} must be a number, got {value!r}")
    if kind is int:
        if isinstance(number, float) and not number.is_integer():
            raise ValueError(f"{name} must be an integer, got {value!r}")
        return int(number)
    return float(number)


def winner_and_margin(count_margin: float, resign_winner: int, estimate: float | None) -> tuple[str, float]:
    """The winner and the margin to record for a finished game.

    Args:
      count_margin: Black minus White Tromp–Taylor count, komi included (used
        when nobody resigned).
      resign_winner: +1 if White resigned, -1 if Black resigned, 0 if the
        game was counted.
      estimate: the score estimate at a resignation (Black minus White), or
        None.

    Returns:
      (winner, margin): ``"black"``, ``"white"`` or ``"draw"``, and the
      margin. At a resignation the margin is the estimate, or ±0.5 (the
      smallest win) if the estimate is missing, not finite, zero or on the
      loser's side.
    """
    if resign_winner != 0:
        sign = float(resign_winner)
        margin = float(estimate) if estimate is not None and math.isfinite(estimate) else math.nan
        if not margin * sign > 0:  # NaN, zero or the wrong side: the smallest win
            margin = 0.5 * sign
        return ("black" if resign_winner == 1 else "white"), margin
    margin = float(count_margin)
    if margin > 0:
        return "black", margin
    if margin < 0:
        return "white", margin
    return "draw", 0.0


# ---------------------------------------------------------------------------
# Writing and reading the table.


def _is_csv(path: str) -> bool:
    return path.lower().endswith(".csv")


def append_results(path: str | os.PathLike, games: Iterable[GameResult]) -> None:
    """Appends rows to a results table: CSV if the name ends in .csv, else JSONL.

    Each row is written with one ``write`` call on a file opened in append
    mode and flushed, so concurrent or interrupted writers leave whole lines.
    A CSV gets a header when it is new or empty; one with an older header
    (the module docstring) is first rewritten with the current one. Missing
    directories are created.

    Args:
      path: the table.
      games: the rows to append.

    Raises:
      ValueError: appending to a CSV whose header is neither :data:`COLUMNS`
        nor an older one, or an older one with a row of another length.
    """
    path = os.fspath(path)
    rows = [r.to_dict() for r in games]
    if not rows:
        return
    parent = os.path.dirname(path)
    if parent:
        os.makedirs(parent, exist_ok=True)
    is_csv = _is_csv(path)
    columns = list(COLUMNS)
    if is_csv and os.path.exists(path) and os.path.getsize(path):
        with open(path, encoding="utf-8", newline="") as existing:
            header = next(csv.reader(existing), None)
        if tuple(header or ()) in _OLDER_HEADERS:
            _migrate_csv(path, header)
        elif header != columns:
            raise ValueError(f"{path}: existing CSV header {header} differs from the results columns {columns}")
    with open(path, "a", encoding="utf-8", newline="") as f:
        if is_csv and f.tell() == 0:
            f.write(",".join(columns) + "\r\n")
        for row in rows:
            if is_csv:
                buf = io.StringIO()
                csv.DictWriter(buf, fieldnames=columns).writerow({k: "" if v is None else v for k, v in row.items()})
                line = buf.getvalue()
            else:
                line = json.dumps(row, allow_nan=False) + "\n"
            f.write(line)
            f.flush()


def _migrate_csv(path: str, header: list[str]) -> None:
    """Rewrites a CSV of an older header with :data:`COLUMNS`, its cells as they were and the new ones empty.

    Written aside and renamed over ``path``, so a failure leaves the table as it was.
    """
    tmp = path + ".migrating"
    try:
        with open(path, encoding="utf-8", newline="") as src, open(tmp, "w", encoding="utf-8", newline="") as dst:
            reader, writer = csv.reader(src), csv.writer(dst)
            next(reader)
            writer.writerow(COLUMNS)
            for row in reader:
                if not row:
                    continue
                if len(row) != len(header):
                    raise ValueError(f"{path}:{reader.line_num}: {len(row)} cells, the header has {len(header)}")
                writer.writerow(row + [""] * (len(COLUMNS) - len(header)))
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.remove(tmp)


def _row(path: str, line_num: int, row: Any) -> GameResult:
    try:
        return GameResult.from_dict(row)
    except ValueError as e:
        raise ValueError(f"{path}:{line_num}: {e}") from None


def read_results(path: str | os.PathLike) -> list[GameResult]:
    """Reads a results table written by :func:`append_results`, or by hand.

    ``.csv`` files are read with their header row; any other extension as one
    JSON object per line, blank lines skipped. Only ``black``, ``white`` and
    ``winner`` are required; see the module docstring for the defaults of
    the other columns.

    Args:
      path: the table.

    Returns:
      One :class:`GameResult` per game, in file order.

    Raises:
      ValueError: a bad row: ``path:line: <what is wrong>``, naming the column
        and value (a missing column, an unknown winner, a player against
        itself, a value of the wrong type, a CSV row with more cells than the
        header, a line that is not JSON).
      OSError: the file cannot be read.
    """
    path = os.fspath(path)
    games = []
    if _is_csv(path):
        with open(path, newline="", encoding="utf-8") as f:
            reader = csv.DictReader(f)
            for row in reader:
                if None in row:
                    raise ValueError(f"{path}:{reader.line_num}: more cells than header columns")
                games.append(_row(path, reader.line_num, row))
    else:
        with open(path, encoding="utf-8") as f:
            for line_num, line in enumerate(f, start=1):
                if not line.strip():
                    continue
                try:
                    row = json.loads(line)
                except json.JSONDecodeError as e:
                    raise ValueError(f"{path}:{line_num}: bad JSON: {e}") from None
                games.append(_row(path, line_num, row))
    return games


# ---------------------------------------------------------------------------
# Intervals and summaries.


@dataclasses.dataclass(frozen=True)
class ColourStats:
    """A player's games with one colour (or all games).

    Attributes:
      games, wins, draws, losses: counts.
      win_rate: (wins + draws/2) / games; NaN without games.
      mean_margin: the player's average margin (own points minus the
        opponent's, komi included); NaN without games.
      mean_win_margin: average margin of the games won; NaN if none.
    """

    games: int
    wins: int
    draws: int
    losses: int
    win_rate: float
    mean_margin: float
    mean_win_margin: float


@dataclasses.dataclass(frozen=True)
class Summary:
    """A player's record over a results table (see :func:`summarize`)."""

    player: str
    opponents: tuple[str, ...]
    overall: ColourStats
    black: ColourStats
    white: ColourStats
    wilson: tuple[float, float]  # 95% Wilson interval of the win rate
    clopper_pearson: tuple[float, float]  # 95% Clopper–Pearson interval
    resignations: int  # games (of this player) ended by resignation
    counted: int  # games ended by two passes or the move cap
    mean_moves: float


def _field(row: GameResult | Mapping[str, Any], name: str, default: Any = None) -> Any:
    """A column of a GameResult or a dict row; ``default`` if absent or None."""
    value = row.get(name) if isinstance(row, Mapping) else getattr(row, name, None)
    return default if value is None else value


def _colour_stats(outcomes: list[tuple[int, float | None]]) -> ColourStats:
    """Stats of (outcome +1/0/-1, player's margin or None) pairs."""
    wins = sum(1 for o, _ in outcomes if o == 1)
    draws = sum(1 for o, _ in outcomes if o == 0)
    losses = sum(1 for o, _ in outcomes if o == -1)
    n = len(outcomes)
    margins = [m for _, m in outcomes if m is not None]
    win_margins = [m for o, m in outcomes if o == 1 and m is not None]
    return ColourStats(
        games=n,
        wins=wins,
        draws=draws,
        losses=losses,
        win_rate=(wins + 0.5 * draws) / n if n else math.nan,
        mean_margin=float(np.mean(margins)) if margins else math.nan,
        mean_win_margin=float(np.mean(win_margins)) if win_margins else math.nan,
    )


def summarize(games: Iterable[GameResult | Mapping[str, Any]], player: str) -> Summary:
    """One player's record: win rate with 95% intervals, split by colour.

    Draws count as half a win in the win rate and its intervals. Margins are
    turned to the player's point of view (Black's margin as Black, minus it
    as White); missing or non-finite margins are left out of the means.

    Args:
      games: :class:`GameResult` rows (e.g. from :func:`read_results`) or
        dicts with the same columns.
      player: the player's name.

    Returns:
      The player's :class:`Summary`.

    Raises:
      ValueError: the player played none of the games.
    """
    by_colour: dict[str, list[tuple[int, float | None]]] = {"black": [], "white": []}
    opponents = set()
    resignations = counted = 0
    moves = []
    for row in games:
        black, white, winner = _field(row, "black"), _field(row, "white"), str(_field(row, "winner")).lower()
        if player not in (black, white):
            continue
        colour = "black" if player == black else "white"
        opponents.add(white if colour == "black" else black)
        sign = 1 if colour == "black" else -1
        outcome = 0 if winner == "draw" else (1 if winner == colour else -1)
        margin = _field(row, "margin")
        margin = None if margin in (None, "") or not math.isfinite(float(margin)) else sign * float(margin)
        by_colour[colour].append((outcome, margin))
        if _field(row, "resigned") in (True, "True", "true"):
            resignations += 1
        else:
            counted += 1
        if _field(row, "moves") not in (None, ""):
            moves.append(int(_field(row, "moves")))
    overall = _colour_stats(by_colour["black"] + by_colour["white"])
    if not overall.games:
        raise ValueError(f"player {player!r} played none of the games")
    points = overall.wins + 0.5 * overall.draws
    return Summary(
        player=player,
        opponents=tuple(sorted(opponents)),
        overall=overall,
        black=_colour_stats(by_colour["black"]),
        white=_colour_stats(by_colour["white"]),
        wilson=wilson_interval(points, overall.games),
        clopper_pearson=clopper_pearson_interval(points, overall.games),
        resignations=resignations,
        counted=counted,
        mean_moves=float(np.mean(moves)) if moves else math.nan,
    )


# ---------------------------------------------------------------------------
# Text reports.


def _pct(x: float) -> str:
    return "   -  " if not math.isfinite(x) else f"{100 * x:5.1f}%"


def _pts(x: float) -> str:
    return "    -" if not math.isfinite(x) else f"{x:+5.1f}"


def format_report(summary: Summary) -> str:
    """A text table of a :class:`Summary`: overall and per-colour records.

    Args:
      summary: from :func:`summarize`.

    Returns:
      A header line, one line per colour (and overall), and the win rate
      with its Wilson and Clopper–Pearson intervals.
    """
    lines = [
        f"{summary.player} vs {', '.join(summary.opponents)}: {summary.overall.games} games "
        f"({summary.counted} counted, {summary.resignations} by resignation, "
        f"{summary.mean_moves:.1f} moves on average)",
        f"{'':8s} {'games':>5s} {'wins':>5s} {'draws':>5s} {'losses':>6s} {'win rate':>8s} "
        f"{'mean margin':>11s} {'mean win margin':>15s}",
    ]
    for label, s in (("all", summary.overall), ("as black", summary.black), ("as white", summary.white)):
        lines.append(
            f"{label:8s} {s.games:5d} {s.wins:5d} {s.draws:5d} {s.losses:6d} {_pct(s.win_rate):>8s} "
            f"{_pts(s.mean_margin):>11s} {_pts(s.mean_win_margin):>15s}"
        )
    lo, hi = summary.wilson
    clo, chi = summary.clopper_pearson
    lines.append(
        f"win rate {_pct(summary.overall.win_rate).strip()}: 95% Wilson [{_pct(lo).strip()}, {_pct(hi).strip()}], "
        f"95% Clopper-Pearson [{_pct(clo).strip()}, {_pct(chi).strip()}] (draws count half)"
    )
    return "\n".join(lines)


def format_games(games: Iterable[GameResult | Mapping[str, Any]]) -> str:
    """One line per game: colours, winner, margin, how it ended.

    Args:
      games: :class:`GameResult` rows or dicts with the same columns; missing
        values print as blanks (a missing margin as ``-``).

    Returns:
      A header line and one line per game.
    """
    lines = [f"{'game':>4s}  {'black':16s} {'white':16s} {'winner':6s} {'margin':>7s} {'end':7s} {'moves':>5s}  engine"]
    for r in games:
        margin = _field(r, "margin", "")
        margin = f"{float(margin):+7.1f}" if margin != "" else f"{'-':>7s}"
        lines.append(
            f"{_field(r, 'game', ''):>4}  {str(_field(r, 'black')):16s} {str(_field(r, 'white')):16s} "
            f"{_field(r, 'winner'):6s} {margin} {_field(r, 'end', ''):7s} "
            f"{_field(r, 'moves', ''):>5}  {_field(r, 'engine_score', '') or ''}"
        )
    return "\n".join(lines)


def game_line(result: GameResult) -> str:
    """A one-line account of a finished game, as a match logs it.

    Args:
      result: a row written by a match (all columns set).

    Returns:
      E.g. ``game   3: B a vs W b: white wins, margin -4.5 (two passes, 31 moves)``.
    """
    how = {"resign": "resignation", "passes": "two passes", "cap": "move cap"}.get(result.end, result.end)
    return (
        f"game {result.game:3d}: B {result.black} vs W {result.white}: {result.winner} wins, "
        f"margin {result.margin:+.1f} "
        f"({how}, {result.moves} moves{', engine ' + result.engine_score if result.engine_score else ''})"
    )
