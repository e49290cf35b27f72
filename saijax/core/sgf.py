"""SGF game records: read, write and replay with sgfmill (docs/design.md §8).

All SGF text goes through sgfmill; nothing here parses or formats SGF by
hand. A :class:`GameRecord` is the plain-Python form of one game: the start
position (board size, komi, handicap or AB/AW setup stones, who moves first)
and the moves as saijax action indices (``row * N + col``, row 0 at the top,
pass = ``N * N``). Colours are implied: moves alternate, starting with
``first_player``.

Conventions written by :func:`write_sgf`:

* FF[4], GM[1], CA[UTF-8], AP[saijax:<version>], SZ, KM, RU.
* HA[h] with the stones as AB when ``handicap >= 2``; any other setup stones
  go in AB/AW too. PL[W] when White moves first, PL[B] when Black moves first
  in a handicap game (both are unusual enough that readers should be told).
* Passes are empty moves (``B[]``), the FF[4] form.
* RE follows FF[4]: ``"B+3.5"``, ``"W+R"``, ``"0"`` for a draw (jigo),
  ``"Void"`` for no result; see :func:`game_result_string`.
* Per-move analysis goes in each move's C property in the ``key=value``
  format of :func:`move_comment`; the root C carries free text (for example
  the branch origin or komi sampling of a self-play game).

Reading (:func:`read_sgf`) accepts what sgfmill accepts, keeps the main line
only, and checks the game against the saijax rules (positional superko,
suicide illegal, play ends after two passes) by replaying it. Every problem
is an :class:`SgfError` (a ValueError) naming the file and the problem.
"""

from __future__ import annotations

import dataclasses
import math
import os
import re
import tempfile
from collections.abc import Mapping
from typing import Any, NamedTuple

import numpy as np
from sgfmill import boards, sgf, sgf_properties

from saijax import __version__
from saijax.core import go

__all__ = [
    "SgfError",
    "GameRecord",
    "GameResult",
    "write_sgf",
    "read_sgf",
    "replay",
    "move_comment",
    "parse_move_comment",
    "game_result_string",
    "parse_result",
]

DEFAULT_RULES = "Tromp-Taylor"
_COLOUR_LETTER = {1: "B", -1: "W"}
_SGF_COLOUR = {1: "b", -1: "w"}


class SgfError(ValueError):
    """A malformed SGF file, or a game that is illegal under the saijax rules."""


# ---------------------------------------------------------------------------
# The record.


@dataclasses.dataclass(frozen=True, kw_only=True)
class GameRecord:
    """One game: start position, moves and metadata. Validated on construction.

    Attributes:
      size: board size N, 2..19.
      komi: black's komi.
      moves: action indices in play order, pass = N*N. Colours alternate,
        starting with ``first_player``.
      handicap: number of handicap stones (written as HA when >= 2). If it is
        >= 2 and no setup stones are given, ``setup_black`` is filled with the
        GTP fixed-handicap points, as :func:`saijax.core.go.init` places them. 0 and
        1 both mean no stones (the papers' "H1" is an even game at komi 0.5).
      setup_black: action indices of black stones on the board before move 1
        (SGF AB): handicap stones or any other setup. Stored sorted.
      setup_white: the same for white stones (SGF AW).
      first_player: +1 if Black plays move 1, -1 if White. Defaults to White
        when ``handicap >= 2``, else Black.
      result: SGF RE value ("B+3.5", "W+R", "0", "Void", ...) or None.
      black_name: SGF PB, or None.
      white_name: SGF PW, or None.
      comments: None, or one comment (str or None) per move, written as the
        move node's C property.
      root_comment: the root node's C property, or None.
      rules: SGF RU value. saijax plays area scoring with positional superko
        and suicide illegal, which is written as "Tromp-Taylor".
    """

    size: int
    komi: float
    moves: tuple[int, ...] = ()
    handicap: int = 0
    setup_black: tuple[int, ...] = ()
    setup_white: tuple[int, ...] = ()
    first_player: int | None = None
    result: str | None = None
    black_name: str | None = None
    white_name: str | None = None
    comments: tuple[str | None, ...] | None = None
    root_comment: str | None = None
    rules: str = DEFAULT_RULES

    def __post_init__(self):
        def put(name, value):
            object.__setattr__(self, name, value)

        if isinstance(self.size, bool) or not isinstance(self.size, (int, np.integer)):
            raise ValueError(f"GameRecord.size must be an int, got {self.size!r}")
        if not 2 <= int(self.size) <= 19:
            raise ValueError(f"GameRecord.size must be in 2..19, got {self.size}")
        put("size", int(self.size))
        n_pts = self.size * self.size
        komi = float(self.komi)
        if not math.isfinite(komi):
            raise ValueError(f"GameRecord.komi must be finite, got {self.komi!r}")
        put("komi", komi)
        if int(self.handicap) < 0:
            raise ValueError(f"GameRecord.handicap must be >= 0, got {self.handicap}")
        put("handicap", int(self.handicap))

        def points(name, values, upper):
            out = tuple(int(v) for v in values)
            for v in out:
                if not 0 <= v < upper:
                    raise ValueError(f"GameRecord.{name} has {v}, outside 0..{upper - 1} on {self.size}x{self.size}")
            return out

        put("moves", points("moves", self.moves, n_pts + 1))
        # Setup stones are a set; sorting makes equal positions compare equal.
        put("setup_black", tuple(sorted(set(points("setup_black", self.setup_black, n_pts)))))
        put("setup_white", tuple(sorted(set(points("setup_white", self.setup_white, n_pts)))))
        both = set(self.setup_black) & set(self.setup_white)
        if both:
            vertices = ", ".join(go.to_gtp(go.GoRules(self.size), p) for p in sorted(both))
            raise ValueError(f"GameRecord has setup stones of both colours on {vertices}")
        if self.handicap >= 2 and not self.setup_black and not self.setup_white:
            put("setup_black", tuple(sorted(go.handicap_points(go.GoRules(self.size), self.handicap))))

        if self.first_player is None:
            put("first_player", -1 if self.handicap >= 2 else 1)
        elif int(self.first_player) not in (1, -1):
            raise ValueError(f"GameRecord.first_player must be +1 or -1, got {self.first_player!r}")
        else:
            put("first_player", int(self.first_player))

        if self.comments is not None:
            comments = tuple(None if c is None else str(c) for c in self.comments)
            if len(comments) != len(self.moves):
                raise ValueError(f"GameRecord.comments has {len(comments)} entries for {len(self.moves)} moves")
            put("comments", comments)

    @property
    def colours(self) -> tuple[int, ...]:
        """+1/-1 colour of each move."""
        return tuple(self.first_player * (1 if i % 2 == 0 else -1) for i in range(len(self.moves)))


# ---------------------------------------------------------------------------
# Coordinates: saijax actions <-> sgfmill (row, col) with row 0 at the BOTTOM.


def _to_sgfmill(size: int, action: int):
    if action == size * size:
        return None
    row, col = divmod(int(action), size)
    return (size - 1 - row, col)


def _from_sgfmill(size: int, point) -> int:
    if point is None:
        return size * size
    row, col = point
    return (size - 1 - row) * size + col


# ---------------------------------------------------------------------------
# Writing.


def write_sgf(record: GameRecord, path: str | os.PathLike | None = None) -> bytes:
    """Serialises a game record with sgfmill, optionally to a file.

    Args:
      record: the game.
      path: if given, the SGF is written there atomically (a temporary file in
        the same directory, then ``os.replace``), creating parent directories.
        A reader never sees a partial file.

    Returns:
      The SGF bytes (UTF-8).
    """
    n = record.size
    game = sgf.Sgf_game(size=n)
    root = game.get_root()
    root.set("AP", ("saijax", __version__))
    root.set("KM", record.komi)
    root.set("RU", record.rules)
    if record.handicap >= 2:
        root.set("HA", record.handicap)
    root.set_setup_stones(
        [_to_sgfmill(n, p) for p in record.setup_black],
        [_to_sgfmill(n, p) for p in record.setup_white],
    )
    if record.first_player == -1 or record.handicap >= 2:
        root.set("PL", _SGF_COLOUR[record.first_player])
    if record.result is not None:
        root.set("RE", record.result)
    if record.black_name is not None:
        root.set("PB", record.black_name)
    if record.white_name is not None:
        root.set("PW", record.white_name)
    if record.root_comment is not None:
        root.set("C", record.root_comment)
    for i, (colour, action) in enumerate(zip(record.colours, record.moves)):
        node = game.extend_main_sequence()
        if action == n * n:
            # sgfmill would write the FF[3] "tt"; FF[4]'s pass is the empty value.
            node.set_raw(_COLOUR_LETTER[colour], b"")
        else:
            node.set_move(_SGF_COLOUR[colour], _to_sgfmill(n, action))
        if record.comments is not None and record.comments[i] is not None:
            node.set("C", record.comments[i])
    data = game.serialise()
    if path is not None:
        _atomic_write(os.fspath(path), data)
    return data


def _atomic_write(path: str, data: bytes) -> None:
    directory = os.path.dirname(os.path.abspath(path))
    os.makedirs(directory, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=directory, prefix=".tmp-", suffix=".sgf")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


# ---------------------------------------------------------------------------
# Reading.


def read_sgf(source: str | os.PathLike | bytes | bytearray, *, check: bool = True) -> GameRecord:
    """Reads the main line of an SGF game with sgfmill.

    The start position is the root's AB/AW (minus AE). If HA >= 2 is given
    without any setup stones, the GTP fixed-handicap stones are assumed. The
    first player is the colour of the first move; with no moves it is PL, or
    White in a handicap game, else Black. Nodes without a move are skipped.

    Args:
      source: a file path, or the SGF data itself as bytes. A str is always
        a path.
      check: replay the game under the saijax rules and reject illegal moves
        (occupied point, suicide, superko, moves after the game ended).

    Returns:
      The game record.

    Raises:
      SgfError: naming the file (or "<sgf bytes>") and the problem, for data
        sgfmill cannot parse, a non-Go game, a board size outside 2..19,
        malformed KM/HA/setup, moves off the board, colours that do not
        alternate, setup stones after the root node, and illegal moves.
      OSError: when the file cannot be read.
    """
    if isinstance(source, (bytes, bytearray, memoryview)):
        data, name = bytes(source), "<sgf bytes>"
    else:
        name = os.fspath(source)
        with open(name, "rb") as f:
            data = f.read()

    def fail(problem):
        return SgfError(f"{name}: {problem}")

    try:
        game = sgf.Sgf_game.from_bytes(data)
    except ValueError as e:  # includes UnicodeDecodeError
        if str(e).startswith(("size out of range", "bad SZ property")):
            raise fail(f"board size is not usable ({e}); saijax needs SZ in 2..19") from e
        raise fail(f"not a valid SGF file ({e})") from e
    root = game.get_root()

    def root_value(ident, what, problem=None):
        if not root.has_property(ident):
            return None
        try:
            return root.get(ident)
        except ValueError as e:
            raw = b"][".join(root.get_raw_list(ident)).decode("latin-1")
            if problem is None:
                problem = f"is malformed ({e})" if str(e) else "is malformed"
            raise fail(f"{what} {ident}[{raw}] {problem}") from e

    gm = root_value("GM", "game type")
    if gm is not None and gm != 1:
        raise fail(f"GM[{gm}] is not a Go game (GM[1])")
    size = game.get_size()
    if not 2 <= size <= 19:
        raise fail(f"board size SZ[{size}] is outside 2..19")
    komi = root_value("KM", "komi", "is not a number")
    handicap = root_value("HA", "handicap", "is not an integer") or 0
    if handicap < 0:
        raise fail(f"handicap HA[{handicap}] is negative")
    try:
        ab, aw, ae = root.get_setup_stones()
    except ValueError as e:
        raise fail(f"setup stones (AB/AW/AE) are malformed or off the {size}x{size} board") from e
    ab, aw = set(ab) - set(ae), set(aw) - set(ae)
    if ab & aw:
        raise fail("setup stones AB and AW share a point")
    if ab or aw:
        if not boards.Board(size).apply_setup(ab, aw, ()):
            raise fail("the setup position (AB/AW) has stones without liberties")
    to_play = root_value("PL", "player to move")

    moves, colours, comments = [], [], []
    for k, node in enumerate(game.get_main_sequence()):
        colour, raw = node.get_raw_move()
        if k > 0 and node.has_setup_stones():
            raise fail(f"setup stones (AB/AW/AE) after the root node (node {k}) are not supported")
        if colour is None:
            continue
        number = len(moves) + 1
        if k == 0 and (ab or aw):
            raise fail("the root node mixes setup stones and a move")
        try:
            point = sgf_properties.interpret_go_point(raw, size)
        except ValueError as e:
            raw_text = raw.decode("latin-1")
            raise fail(f"move {number} ({colour.upper()}[{raw_text}]) is off the {size}x{size} board") from e
        moves.append(_from_sgfmill(size, point))
        colours.append(1 if colour == "b" else -1)
        try:
            comments.append(node.get("C") if (k > 0 and node.has_property("C")) else None)
        except ValueError as e:
            raise fail(f"the comment of move {number} cannot be decoded ({e})") from e

    if colours:
        first_player = colours[0]
    elif to_play is not None:
        first_player = 1 if to_play == "b" else -1
    else:
        first_player = None
    for i, colour in enumerate(colours):
        expected = first_player * (1 if i % 2 == 0 else -1)
        if colour != expected:
            rules = go.GoRules(size)
            raise fail(
                f"move {i + 1} ({_COLOUR_LETTER[colour]} {go.to_gtp(rules, moves[i])}) is out of turn: "
                f"{_COLOUR_LETTER[expected]} is to play, and saijax records need alternating colours"
            )

    def text(ident):
        return root_value(ident, "text property")

    try:
        record = GameRecord(
            size=size,
            komi=0.0 if komi is None else komi,
            moves=tuple(moves),
            handicap=handicap,
            setup_black=tuple(_from_sgfmill(size, p) for p in ab),
            setup_white=tuple(_from_sgfmill(size, p) for p in aw),
            first_player=first_player,
            result=text("RE"),
            black_name=text("PB"),
            white_name=text("PW"),
            comments=tuple(comments) if any(c is not None for c in comments) else None,
            root_comment=text("C"),
            rules=text("RU") or DEFAULT_RULES,
        )
    except ValueError as e:
        raise fail(str(e)) from e
    if check:
        try:
            replay(record)
        except ValueError as e:
            raise fail(str(e)) from e
    return record


# ---------------------------------------------------------------------------
# Replay.


def replay(record: GameRecord, *, rules: go.GoRules | None = None) -> list[go.GoState]:
    """Plays a record through with :func:`saijax.core.go.play`.

    Args:
      record: the game.
      rules: static rules; default ``go.GoRules(record.size)`` (move cap 2·N²).
        Pass the rules a game was played with if they had another cap.

    Returns:
      ``len(record.moves) + 1`` states: the start position, then the position
      after each move.

    Raises:
      ValueError: on an illegal move, as "move 12 (W D4) is illegal: <why>",
        where <why> is an occupied point, suicide, positional superko or a
        game that had already ended.
    """
    if rules is None:
        rules = go.GoRules(record.size)
    elif rules.size != record.size:
        raise ValueError(f"rules are for {rules.size}x{rules.size} but the record is {record.size}x{record.size}")
    if not record.setup_black and not record.setup_white and record.first_player == 1:
        state = go.init(rules, record.komi)
    else:
        state = go.setup(
            rules, record.komi, black=record.setup_black, white=record.setup_white, to_play=record.first_player
        )
    states = [state]
    for i, (colour, action) in enumerate(zip(record.colours, record.moves)):
        try:
            state = go.play(rules, state, action)
        except ValueError as e:
            why = _why_illegal(rules, state, action)
            label = f"{_COLOUR_LETTER[colour]} {go.to_gtp(rules, action)}"
            raise ValueError(f"move {i + 1} ({label}) is illegal: {why}") from e
        states.append(state)
    return states


def _why_illegal(rules: go.GoRules, state: go.GoState, action: int) -> str:
    """Names the reason a move :func:`go.play` refused is illegal."""
    if bool(state.terminated):
        if int(state.passes) >= 2:
            return "the game had already ended after two consecutive passes"
        return f"the game had already ended at the move cap of {rules.max_moves} moves"
    board = np.asarray(state.board)
    if board[action] != 0:
        return "the point is occupied"
    # An independent board (sgfmill's) tells suicide apart from superko.
    n = rules.size
    sgf_board = boards.Board(n)
    sgf_board.apply_setup(
        [_to_sgfmill(n, p) for p in np.flatnonzero(board == 1)],
        [_to_sgfmill(n, p) for p in np.flatnonzero(board == -1)],
        (),
    )
    row, col = _to_sgfmill(n, action)
    sgf_board.play(row, col, _SGF_COLOUR[int(state.to_play)])
    if sgf_board.get(row, col) is None:
        return "suicide"
    return "it repeats an earlier whole-board position (positional superko)"


# ---------------------------------------------------------------------------
# Per-move analysis comments.

_KEY_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_.\-]*$")
_INT_KEYS = frozenset({"visits"})
_FLOAT_KEYS = frozenset({"alpha", "beta", "winrate"})


def _format_value(value: Any) -> str:
    if not isinstance(value, str) and np.ndim(value) == 0:
        value = np.asarray(value).item()  # numpy and JAX scalars to Python
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return f"{value:.4g}"
    text = str(value)
    if not text or any(ch.isspace() for ch in text) or "=" in text:
        raise ValueError(f"comment value {value!r} must be a number or a word without spaces or '='")
    return text


def move_comment(
    alpha: float | None = None,
    beta: float | None = None,
    winrate: float | None = None,
    visits: int | None = None,
    extra: Mapping[str, Any] | None = None,
) -> str:
    """A move's analysis as one line of ``key=value`` pairs, for the SGF C property.

    Floats keep 4 significant digits, so the text is stable across runs of the
    same numbers; :func:`parse_move_comment` reads it back. Keys appear in the
    order alpha, beta, winrate, visits, then ``extra`` in its own order.

    Args:
      alpha: the sigmoid's α (score lead estimate, in points, for the player
        who made the move).
      beta: the sigmoid's β.
      winrate: the searched winrate of the move, in [0, 1].
      visits: root visits of the search.
      extra: further values, e.g. ``{"lambda": 0.5, "mu": 0}``. Keys are
        identifiers; values are numbers or single words.

    Returns:
      e.g. ``"alpha=3.21 beta=0.124 winrate=0.612 visits=64"``.
    """
    items: list[tuple[str, Any]] = []
    for key, value in (("alpha", alpha), ("beta", beta), ("winrate", winrate)):
        if value is not None:
            items.append((key, float(value)))
    if visits is not None:
        items.append(("visits", int(visits)))
    for key, value in (extra or {}).items():
        if not _KEY_RE.match(str(key)):
            raise ValueError(f"comment key {key!r} must be an identifier")
        if key in ("alpha", "beta", "winrate", "visits"):
            raise ValueError(f"comment key {key!r} is a named argument of move_comment")
        items.append((str(key), value))
    return " ".join(f"{key}={_format_value(value)}" for key, value in items)


def parse_move_comment(text: str | None) -> dict[str, Any]:
    """Reads the ``key=value`` pairs of a :func:`move_comment` string.

    Whitespace-separated tokens that are not ``key=value`` are ignored, so a
    comment may also hold free text. ``visits`` and integer-looking values
    become ints, other numbers floats, ``true``/``false`` bools, and anything
    else stays a string.

    Args:
      text: the comment, or None.

    Returns:
      A dict in the order the keys appear.
    """
    out: dict[str, Any] = {}
    for token in (text or "").split():
        key, sep, value = token.partition("=")
        if not sep or not value or not _KEY_RE.match(key):
            continue
        out[key] = _parse_value(key, value)
    return out


def _parse_value(key: str, value: str) -> Any:
    if value in ("true", "false"):
        return value == "true"
    for kind in (int, float):
        try:
            number = kind(value)
        except ValueError:
            continue
        if key in _FLOAT_KEYS:
            return float(number)
        if key in _INT_KEYS:
            return int(number)
        return number
    return value


# ---------------------------------------------------------------------------
# Results.


class GameResult(NamedTuple):
    """A parsed SGF RE value.

    Attributes:
      winner: +1 black, -1 white, 0 draw, None for void or unknown.
      margin: the winning margin in points (0.0 for a draw), or None when the
        game was not decided by a count.
      resigned: True when the loser resigned.
    """

    winner: int | None
    margin: float | None
    resigned: bool


def _format_margin(margin: float) -> str:
    if margin == int(margin):
        return str(int(margin))
    return repr(float(margin))


def game_result_string(winner: int, margin: float | None = None, resigned: bool = False) -> str:
    """The SGF FF[4] RE value for a finished game.

    Args:
      winner: +1 black, -1 white, 0 draw (a numpy/JAX scalar is fine).
      margin: the size of the win in points, komi included: either the
        winner's positive margin or the signed black-minus-white score (which
        is negative when White wins). A negative margin with Black winning
        raises. None writes "B+" (a win without a count).
      resigned: the loser resigned; writes "B+R"/"W+R" and ignores margin.

    Returns:
      "B+3.5", "W+R", "B+", or "0" for a draw (FF[4] allows "0" or "Draw";
      "0" is the shorter and more widely written form).
    """
    winner = int(winner)
    if winner not in (1, 0, -1):
        raise ValueError(f"winner must be +1, 0 or -1, got {winner}")
    if winner == 0:
        if resigned:
            raise ValueError("a draw cannot be by resignation")
        if margin is not None and float(margin) != 0.0:
            raise ValueError(f"a draw must have margin 0, got {margin}")
        return "0"
    letter = _COLOUR_LETTER[winner]
    if resigned:
        return f"{letter}+R"
    if margin is None:
        return f"{letter}+"
    margin = float(margin)
    if not math.isfinite(margin) or margin == 0.0:
        raise ValueError(f"a win needs a finite non-zero margin, got {margin}")
    if margin < 0 and winner == 1:
        raise ValueError(f"winner is Black but margin {margin} is negative")
    return f"{letter}+{_format_margin(abs(margin))}"


_RESULT_RE = re.compile(r"^([BW])\+(.*)$", re.IGNORECASE)


def parse_result(result: str | None) -> GameResult:
    """Parses an SGF RE value (the inverse of :func:`game_result_string`).

    Accepts "B+3.5", "W+R"/"W+Resign", "B+T"/"B+F" (time, forfeit), "B+",
    "0"/"Draw"/"Jigo", and "Void"/"?"/None/"" as no result.

    Raises:
      ValueError: for anything else.
    """
    text = (result or "").strip()
    if text.lower() in ("", "void", "?"):
        return GameResult(None, None, False)
    if text.lower() in ("0", "draw", "jigo"):
        return GameResult(0, 0.0, False)
    m = _RESULT_RE.match(text)
    if not m:
        raise ValueError(f"unrecognised SGF result RE[{result}]")
    winner = 1 if m.group(1).upper() == "B" else -1
    rest = m.group(2).strip()
    if rest.lower() in ("r", "resign"):
        return GameResult(winner, None, True)
    if rest.lower() in ("", "t", "time", "f", "forfeit"):
        return GameResult(winner, None, False)
    try:
        margin = float(rest)
    except ValueError:
        raise ValueError(f"unrecognised SGF result RE[{result}]") from None
    if not math.isfinite(margin) or margin <= 0:
        raise ValueError(f"SGF result RE[{result}] needs a positive margin")
    return GameResult(winner, margin, False)
