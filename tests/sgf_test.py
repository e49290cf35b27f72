"""Tests for saijax.core.sgf: SGF round trips checked with sgfmill, and bad files."""

import os

import jax
import numpy as np
import pytest
from sgfmill import sgf, sgf_moves

from saijax.core import go
from saijax.core import sgf as sgf_io

RULES_7 = go.GoRules(7)
RULES_9 = go.GoRules(9)


def _random_game(rules, komi, handicap, seed, num_moves):
    """A random legal game through go.play, ended by two passes.

    A few single passes are mixed in so pass moves are written mid-game.
    Returns (moves, states) with states[0] the start position.
    """
    rng = np.random.default_rng(seed)
    state = go.init(rules, komi, handicap)
    states, moves = [state], []
    while not bool(state.terminated):
        legal = np.flatnonzero(np.asarray(state.legal)[:-1])
        want_pass = len(moves) >= num_moves or (int(state.passes) == 0 and rng.random() < 0.05)
        action = rules.pass_action if want_pass or legal.size == 0 else int(rng.choice(legal))
        state = go.play(rules, state, action)
        moves.append(action)
        states.append(state)
    return moves, states


def _comments(moves, seed):
    rng = np.random.default_rng(seed)
    out = []
    for i in range(len(moves)):
        if i == 3:
            out.append(None)  # a move without a comment
        else:
            out.append(
                sgf_io.move_comment(
                    alpha=rng.normal(0, 10),
                    beta=rng.uniform(0.05, 1.0),
                    winrate=rng.uniform(),
                    visits=int(rng.integers(1, 800)),
                )
            )
    return tuple(out)


@pytest.fixture(scope="module")
def even_game():
    moves, states = _random_game(RULES_7, komi=7.5, handicap=0, seed=1, num_moves=60)
    record = sgf_io.GameRecord(
        size=7,
        komi=7.5,
        moves=moves,
        result=sgf_io.game_result_string(
            int(go.outcome(RULES_7, states[-1])), float(go.area_score(RULES_7, states[-1]) - 7.5)
        ),
        black_name="saijax gen 3",
        white_name="saijax gen 2 (λ=0.5)",
        comments=_comments(moves, seed=2),
        root_comment="self-play; komi sampled from N(7.5, 1)",
    )
    return record, states


@pytest.fixture(scope="module")
def handicap_game():
    moves, states = _random_game(RULES_9, komi=0.5, handicap=2, seed=3, num_moves=50)
    record = sgf_io.GameRecord(
        size=9,
        komi=0.5,
        handicap=2,
        moves=moves,
        result="W+R",
        black_name="B",
        white_name="W",
        comments=_comments(moves, seed=4),
    )
    return record, states


def _sgfmill_final_board(game):
    """Plays the main line on sgfmill's own board (an independent implementation)."""
    board, plays = sgf_moves.get_setup_and_moves(game)
    for colour, move in plays:
        if move is not None:
            board.play(move[0], move[1], colour)
    n = game.get_size()
    out = np.zeros(n * n, np.int8)
    for colour, (row, col) in board.list_occupied_points():
        out[(n - 1 - row) * n + col] = 1 if colour == "b" else -1
    return out


def _assert_states_equal(a, b):
    jax.tree_util.tree_map(np.testing.assert_array_equal, a, b)


# ---------------------------------------------------------------------------
# Round trips.


@pytest.mark.parametrize("which", ["even_game", "handicap_game"])
def test_round_trip(which, request, tmp_path):
    record, states = request.getfixturevalue(which)
    n = record.size
    path = tmp_path / "games" / f"{which}.sgf"
    data = sgf_io.write_sgf(record, path)
    assert path.read_bytes() == data
    assert os.listdir(path.parent) == [path.name]  # no temporary file left behind

    # sgfmill reads what we wrote.
    game = sgf.Sgf_game.from_bytes(data)
    root = game.get_root()
    assert game.get_size() == n
    assert game.get_komi() == record.komi
    assert game.get_player_name("b") == record.black_name
    assert game.get_player_name("w") == record.white_name
    assert root.get("RE") == record.result
    assert root.get("RU") == "Tromp-Taylor"
    assert root.get("C") == record.root_comment if record.root_comment else not root.has_property("C")
    nodes = game.get_main_sequence()[1:]
    assert len(nodes) == len(record.moves)
    for node, comment, action, colour in zip(nodes, record.comments, record.moves, record.colours):
        assert node.get("C") == comment if comment is not None else not node.has_property("C")
        got_colour, point = node.get_move()
        assert got_colour == ("b" if colour == 1 else "w")
        if action == n * n:
            assert point is None and node.get_raw_move()[1] == b""  # FF[4] pass
        else:
            assert point == (n - 1 - action // n, action % n)
    assert np.array_equal(_sgfmill_final_board(game), np.asarray(states[-1].board))

    # read_sgf and replay give back the same record and the same game.
    assert sgf_io.read_sgf(path) == record
    assert sgf_io.read_sgf(data, check=False) == record
    replayed = sgf_io.replay(record)
    assert len(replayed) == len(states)
    for got, want in zip(replayed, states):
        np.testing.assert_array_equal(got.board, want.board)
    _assert_states_equal(replayed[-1], states[-1])
    assert bool(replayed[-1].terminated)


def test_even_game_properties(even_game):
    record, states = even_game
    assert any(a == RULES_7.pass_action for a in record.moves[:-2])  # a mid-game pass
    stone_moves = sum(a != RULES_7.pass_action for a in record.moves)
    assert np.count_nonzero(np.asarray(states[-1].board)) < stone_moves  # some captures
    root = sgf.Sgf_game.from_bytes(sgf_io.write_sgf(record)).get_root()
    assert not root.has_property("HA")
    assert not root.has_property("AB") and not root.has_property("AW")
    assert not root.has_property("PL")  # Black first is the default
    assert sgf_io.parse_result(record.result).winner == int(go.outcome(RULES_7, states[-1]))


def test_handicap_game_properties(handicap_game):
    record, states = handicap_game
    assert record.first_player == -1
    assert record.setup_black == tuple(sorted(go.handicap_points(RULES_9, 2)))
    game = sgf.Sgf_game.from_bytes(sgf_io.write_sgf(record))
    root = game.get_root()
    assert game.get_handicap() == 2
    assert root.get("AB") == {(2, 2), (6, 6)}  # C3 and G7
    assert not root.has_property("AW")
    assert root.get("PL") == "w"
    assert game.get_main_sequence()[1].get_move()[0] == "w"
    np.testing.assert_array_equal(states[0].board, go.init(RULES_9, 0.5, 2).board)


def test_read_accepts_tt_passes_and_setup():
    game = sgf.Sgf_game(7)
    root = game.get_root()
    root.set("KM", 6)
    root.set_setup_stones({(0, 0)}, {(6, 6)})  # A1 black, G7 white
    root.set("PL", "w")
    for colour, move in [("w", (3, 3)), ("b", None), ("w", None)]:
        game.extend_main_sequence().set_move(colour, move)  # sgfmill writes passes as tt
    record = sgf_io.read_sgf(game.serialise())
    assert record.moves == (3 * 7 + 3, 49, 49)
    assert record.setup_black == (42,) and record.setup_white == (6,)
    assert record.first_player == -1 and record.komi == 6.0
    assert record.comments is None and record.result is None
    states = sgf_io.replay(record)
    assert bool(states[-1].terminated)
    assert int(np.asarray(states[-1].board)[42]) == 1


def test_write_overwrites_atomically(tmp_path, even_game):
    record, _ = even_game
    path = tmp_path / "g.sgf"
    path.write_bytes(b"old contents")
    sgf_io.write_sgf(record, str(path))
    assert sgf_io.read_sgf(str(path)) == record
    assert os.listdir(tmp_path) == ["g.sgf"]


# ---------------------------------------------------------------------------
# Bad files.


@pytest.mark.parametrize(
    "data, match",
    [
        (b"\x00\xff\xfe garbage bytes", r"not a valid SGF file"),
        (b"(;FF[4]GM[1]SZ[7]KM[7.5];B[dd];W[", r"not a valid SGF file \(unexpected end"),
        (b"(;FF[4]GM[1]SZ[25]KM[7.5])", r"board size SZ\[25\] is outside 2\.\.19"),
        (b"(;FF[4]GM[1]SZ[1])", r"board size SZ\[1\] is outside 2\.\.19"),
        (b"(;FF[4]GM[1]SZ[30])", r"board size"),
        (b"(;FF[4]GM[1]SZ[9:13])", r"board size"),
        (b"(;FF[4]GM[1]SZ[7]KM[abc])", r"komi KM\[abc\] is not a number"),
        (b"(;FF[4]GM[1]SZ[7]HA[two])", r"handicap HA\[two\] is not an integer"),
        (b"(;FF[4]GM[2]SZ[7])", r"not a Go game"),
        (b"(;FF[4]GM[1]SZ[7];B[dd];W[hh])", r"move 2 \(W\[hh\]\) is off the 7x7 board"),
        (b"(;FF[4]GM[1]SZ[7]AB[zz])", r"setup stones .* off the 7x7 board"),
        (b"(;FF[4]GM[1]SZ[7];B[dd];W[ee];B[dd])", r"move 3 \(B D4\) is illegal: the point is occupied"),
        (b"(;FF[4]GM[1]SZ[7]AW[ba][ab];B[aa])", r"move 1 \(B A7\) is illegal: suicide"),
        (
            # Black takes the ko at C6; White retakes at once on B6.
            b"(;FF[4]GM[1]SZ[7]AB[ba][ab][bc]AW[bb][ca][cc][db];B[cb];W[bb])",
            r"move 2 \(W B6\) is illegal: .*positional superko",
        ),
        (
            b"(;FF[4]GM[1]SZ[7];B[aa];W[];B[];W[bb])",
            r"move 4 \(W B6\) is illegal: .*ended after two consecutive passes",
        ),
        (b"(;FF[4]GM[1]SZ[7];B[aa];B[bb])", r"move 2 \(B B6\) is out of turn"),
        (b"(;FF[4]GM[1]SZ[7]AB[ab][ba]AW[aa])", r"stones without liberties"),
        (b"(;FF[4]GM[1]SZ[7];B[aa];AB[cc];W[bb])", r"setup stones .* after the root node"),
        (b"(;FF[4]GM[1]SZ[7]HA[5])", r"handicap=5 is not available on 7x7"),
    ],
)
def test_malformed(data, match):
    with pytest.raises(sgf_io.SgfError, match=match) as info:
        sgf_io.read_sgf(data)
    assert isinstance(info.value, ValueError)
    assert str(info.value).startswith("<sgf bytes>: ")


def test_error_names_the_file(tmp_path):
    path = tmp_path / "broken.sgf"
    path.write_bytes(b"(;FF[4]GM[1]SZ[7];B[dd];W[dd])")
    with pytest.raises(sgf_io.SgfError, match=r"broken\.sgf: move 2 \(W D4\) is illegal: the point is occupied"):
        sgf_io.read_sgf(path)
    # Unchecked reading skips the replay.
    assert sgf_io.read_sgf(path, check=False).moves == (24, 24)


def test_replay_error_names_the_move():
    record = sgf_io.GameRecord(size=7, komi=7.5, moves=(24, 25, 26, 24))
    with pytest.raises(ValueError, match=r"^move 4 \(W D4\) is illegal: the point is occupied$"):
        sgf_io.replay(record)


@pytest.mark.parametrize(
    "kwargs, match",
    [
        (dict(size=25, komi=7.5), r"size must be in 2\.\.19"),
        (dict(size=7, komi=float("nan")), r"komi must be finite"),
        (dict(size=7, komi=7.5, moves=(50,)), r"moves has 50, outside 0\.\.49"),
        (dict(size=7, komi=7.5, setup_black=(3,), setup_white=(3,)), r"both colours on D7"),
        (dict(size=7, komi=7.5, first_player=0), r"first_player must be \+1 or -1"),
        (dict(size=7, komi=7.5, moves=(1, 2), comments=("a",)), r"1 entries for 2 moves"),
    ],
)
def test_game_record_validation(kwargs, match):
    with pytest.raises(ValueError, match=match):
        sgf_io.GameRecord(**kwargs)


# ---------------------------------------------------------------------------
# Comments and results.


def test_move_comment_round_trip():
    text = sgf_io.move_comment(
        alpha=3.2104, beta=0.12401, winrate=0.6123, visits=64, extra={"lambda": 0.5, "mu": 0, "agent": "sai"}
    )
    assert text == "alpha=3.21 beta=0.124 winrate=0.6123 visits=64 lambda=0.5 mu=0 agent=sai"
    parsed = sgf_io.parse_move_comment(text)
    assert parsed == {
        "alpha": 3.21,
        "beta": 0.124,
        "winrate": 0.6123,
        "visits": 64,
        "lambda": 0.5,
        "mu": 0,
        "agent": "sai",
    }
    assert list(parsed) == ["alpha", "beta", "winrate", "visits", "lambda", "mu", "agent"]
    assert isinstance(parsed["visits"], int) and isinstance(parsed["alpha"], float)
    # numpy scalars format like Python numbers; free text around pairs is ignored.
    assert sgf_io.move_comment(alpha=np.float32(-1.5), visits=np.int64(7)) == "alpha=-1.5 visits=7"
    assert sgf_io.parse_move_comment("resigns here alpha=-20 visits=1") == {"alpha": -20.0, "visits": 1}
    assert sgf_io.parse_move_comment(None) == {} and sgf_io.move_comment() == ""
    rng = np.random.default_rng(0)
    for _ in range(50):
        values = dict(alpha=rng.normal(0, 30), beta=rng.uniform(0, 2), winrate=rng.uniform())
        parsed = sgf_io.parse_move_comment(sgf_io.move_comment(**values))
        for key, value in values.items():
            assert parsed[key] == pytest.approx(value, rel=1e-3, abs=1e-12)
    with pytest.raises(ValueError, match="identifier"):
        sgf_io.move_comment(extra={"two words": 1})
    with pytest.raises(ValueError, match="without spaces"):
        sgf_io.move_comment(extra={"note": "two words"})


@pytest.mark.parametrize(
    "args, text",
    [
        ((1, 3.5), "B+3.5"),
        ((-1, 12.0), "W+12"),
        ((-1, -0.5), "W+0.5"),  # a black-minus-white score is accepted too
        ((1, None, True), "B+R"),
        ((-1, None, True), "W+R"),
        ((0, 0.0), "0"),
        ((1,), "B+"),
    ],
)
def test_game_result_string(args, text):
    assert sgf_io.game_result_string(*args) == text
    parsed = sgf_io.parse_result(text)
    assert parsed.winner == args[0]
    assert parsed.resigned == (len(args) == 3)
    if len(args) > 1 and args[1] is not None:
        assert parsed.margin == abs(args[1])


def test_result_errors_and_aliases():
    with pytest.raises(ValueError, match="negative"):
        sgf_io.game_result_string(1, -2.5)
    with pytest.raises(ValueError, match="draw must have margin 0"):
        sgf_io.game_result_string(0, 1.0)
    with pytest.raises(ValueError, match="unrecognised"):
        sgf_io.parse_result("Black wins")
    assert sgf_io.parse_result("Draw") == (0, 0.0, False)
    assert sgf_io.parse_result("W+Resign") == (-1, None, True)
    assert sgf_io.parse_result("B+T") == (1, None, False)
    assert sgf_io.parse_result("Void") == (None, None, False)
    assert sgf_io.parse_result(None) == (None, None, False)
