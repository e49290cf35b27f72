"""Tests for the GTP engine (saijax.gtp) and player loading (saijax.play.players).

Most checks go through a real pipe to ``python -m saijax.gtp`` on a 5×5
board with a 1×8 random net, shared by the module so the search compiles
once; the rest use one in-process engine. An optional slow test drives the
engine with Sabaki's own GTP library (``@sabaki/gtp``, installed with npm).
"""

import dataclasses
import functools
import json
import math
import os
import queue
import re
import shutil
import subprocess
import sys
import tempfile
import threading

import jax
import numpy as np
import optax
import pytest

import saijax
from saijax import gtp
from saijax.cli import gtp as gtp_cli
from saijax.core import checkpoints, go, networks, search
from saijax.gtp import server
from saijax.learn import training
from saijax.play import control, players, styles

N = 5
VISITS = 4
ENGINE_ARGV = [
    sys.executable,
    "-m",
    "saijax.gtp",
    f"--board_size={N}",
    f"--visits={VISITS}",
    "--blocks=1",
    "--filters=8",
    "--komi=0.5",
    "--seed=0",
]
# Generous: the first genmove compiles the search, and the test machine may
# be busy with other processes.
TIMEOUT = 300.0

# After a failed restore, orbax's reader leaves a callback for its closed
# event loop; Python reports it (harmlessly) when it is collected.
pytestmark = pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")


class PipedEngine:
    """``python -m saijax.gtp`` behind real pipes, read line by line with a timeout."""

    def __init__(self, argv, cwd=None):
        self._stderr = tempfile.TemporaryFile()
        self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self._stderr, cwd=cwd)
        self._lines: queue.Queue = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self):
        for raw in iter(self.proc.stdout.readline, b""):
            self._lines.put(raw.decode("utf-8"))
        self._lines.put(None)

    def stderr(self) -> str:
        self._stderr.seek(0)
        return self._stderr.read().decode("utf-8", errors="replace")[-3000:]

    def write(self, text: str) -> None:
        self.proc.stdin.write(text.encode("utf-8"))
        self.proc.stdin.flush()

    def read_line(self) -> str:
        try:
            line = self._lines.get(timeout=TIMEOUT)
        except queue.Empty:
            raise AssertionError(f"engine silent for {TIMEOUT}s; stderr:\n{self.stderr()}") from None
        if line is None:
            raise AssertionError(f"engine closed its output; stderr:\n{self.stderr()}")
        return line

    def read_response(self) -> str:
        lines = [self.read_line()]
        while lines[-1] != "\n":
            lines.append(self.read_line())
        return "".join(lines)

    def send(self, line: str) -> str:
        self.write(line + "\n")
        return self.read_response()

    def close(self) -> int:
        if self.proc.poll() is None:
            try:
                self.write("quit\n")
                self.proc.stdin.close()
                self.proc.wait(timeout=60)
            except (OSError, subprocess.TimeoutExpired):
                self.proc.kill()
                self.proc.wait()
        self._stderr.close()
        return self.proc.returncode


@pytest.fixture(scope="module")
def piped(tmp_path_factory):
    engine = PipedEngine(ENGINE_ARGV, cwd=str(tmp_path_factory.mktemp("gtp_cwd")))
    yield engine
    engine.close()


@pytest.fixture(scope="module")
def player():
    return players.load_player(None, board_size=N, blocks=1, filters=8, seed=0)


@pytest.fixture(scope="module")
def engine(player):
    return gtp.GtpEngine(player, visits=VISITS, komi=0.5, seed=0)


# ---------------------------------------------------------------------------
# Parsing analysis output.

LZ_KEYS = ["move", "visits", "winrate", "prior", "lcb", "order"]
KATA_KEYS = ["move", "visits", "utility", "winrate", "scoreMean", "scoreStdev", "scoreLead", "prior", "lcb", "order"]
_VERTEX_RE = re.compile(r"^(pass|[A-HJ-T](1[0-9]|[1-9]))$")


def parse_info_line(line: str, keys: list[str]) -> list[dict]:
    """Parses one analysis line into per-move dicts, checking the field order."""
    assert line.endswith("\n") and line.startswith("info move "), repr(line)
    entries = line.rstrip("\n").split(" info ")
    entries[0] = entries[0][len("info ") :]
    moves = []
    for entry in entries:
        tokens = entry.split(" ")
        assert "pv" in tokens, entry
        cut = tokens.index("pv")
        head, pv = tokens[:cut], tokens[cut + 1 :]
        assert len(head) % 2 == 0, entry
        fields = dict(zip(head[0::2], head[1::2]))
        assert head[0::2] == keys, entry  # every field, in order, and pv last
        assert pv and all(_VERTEX_RE.match(v) for v in pv), entry
        assert pv[0] == fields["move"], entry
        fields["pv"] = pv
        moves.append(fields)
    assert [int(m["order"]) for m in moves] == list(range(len(moves)))
    return moves


def check_lz_line(line: str) -> list[dict]:
    moves = parse_info_line(line, LZ_KEYS)
    for m in moves:
        assert _VERTEX_RE.match(m["move"])
        assert re.fullmatch(r"[0-9]+", m["visits"]) and int(m["visits"]) >= 1
        for key in ("winrate", "prior", "lcb"):
            assert re.fullmatch(r"[0-9]+", m[key]), m  # integers ×10000
            assert 0 <= int(m[key]) <= 10000, m
        assert int(m["lcb"]) <= int(m["winrate"])
    visits = [int(m["visits"]) for m in moves]
    assert visits == sorted(visits, reverse=True)
    return moves


def check_kata_line(line: str) -> list[dict]:
    moves = parse_info_line(line, KATA_KEYS)
    for m in moves:
        assert re.fullmatch(r"[0-9]+", m["visits"]) and re.fullmatch(r"[0-9]+", m["order"])
        values = {k: float(m[k]) for k in KATA_KEYS if k not in ("move", "visits", "order")}
        for k, v in values.items():
            assert math.isfinite(v) and "." in m[k], (k, m[k])  # floats, not ×10000 integers
        for k in ("winrate", "prior", "lcb"):
            assert 0.0 <= values[k] <= 1.0, m
        assert values["lcb"] <= values["winrate"] + 1e-6
        assert values["utility"] == pytest.approx(2 * values["winrate"] - 1, abs=2e-6)
        assert values["scoreMean"] == values["scoreLead"]
        assert values["scoreStdev"] >= 0
    return moves


# ---------------------------------------------------------------------------
# The piped engine.

_WALL = [
    ("b", "C1"),
    ("w", "D1"),
    ("b", "C2"),
    ("w", "D2"),
    ("b", "C3"),
    ("w", "D3"),
    ("b", "C4"),
    ("w", "D4"),
    ("b", "C5"),
    ("w", "D5"),
]
_WALL_BOARD = (
    "= \n"
    "   A B C D E\n"
    " 5 . . X O .  5\n"
    " 4 . . X O .  4\n"
    " 3 . . X O .  3\n"
    " 2 . . X O .  2\n"
    " 1 . . X O .  1\n"
    "   A B C D E\n"
    "Black to play, move 10, komi 0.5\n\n"
)

OK = "=\n\n"
TRANSCRIPT = [
    ("1 name", "=1 saijax\n\n"),
    ("protocol_version", "= 2\n\n"),
    ("version", f"= {saijax.__version__}\n\n"),
    ("# a comment line gets no response", None),
    ("", None),
    ("   \t  ", None),
    ("  # an indented comment", None),
    ("known_command lz-analyze", "= true\n\n"),
    ("known_command frobnicate", "= false\n\n"),
    ("frobnicate", "? unknown command\n\n"),
    ("42 frobnicate 1 2", "?42 unknown command\n\n"),
    ("2 boardsize 9", "?2 unacceptable size\n\n"),
    ("boardsize 7", "? unacceptable size\n\n"),
    ("boardsize 5 5", "? syntax error\n\n"),
    ("boardsize five", "? syntax error\n\n"),
    ("boardsize 5", OK),
    ("clear_board", OK),
    ("komi abc", "? komi must be a number, got 'abc'\n\n"),
    ("komi nan", "? komi must be a number, got 'nan'\n\n"),
    ("komi 6.3", "? komi must be a multiple of 0.5 from -10000 to 10000, got 6.3\n\n"),
    ("komi 0.5", OK),
    # 9×9's handicap cannot even be reached (boardsize 9 failed above), and
    # 5×5 has no fixed handicap points.
    ("fixed_handicap 2", "? invalid handicap\n\n"),
    ("fixed_handicap 1", "? invalid handicap\n\n"),
    ("3 play black C3", "=3\n\n"),
    ("play white C3", "? illegal move\n\n"),
    ("5 play white C3", "?5 illegal move\n\n"),
    ("play X C3", "? syntax error\n\n"),
    ("play white", "? syntax error\n\n"),
    ("play purple D4", "? syntax error\n\n"),
    ("play white I3", "? syntax error\n\n"),
    ("play white Z9", "? illegal move\n\n"),  # well formed, off the board
    ("fixed_handicap 2", "? board not empty\n\n"),
    ("play w d3 # a trailing comment", OK),
    ("\tplay\tB\tb3\r", OK),  # tabs are spaces, CR is dropped
    ("4 undo", "=4\n\n"),
    ("undo", OK),
    ("undo", OK),
    ("undo", "? cannot undo\n\n"),
    ("\x01na\x7fme\x02", "= saijax\n\n"),  # control characters are removed
    *[(f"play {c} {v}", OK) for c, v in _WALL],
    ("showboard", _WALL_BOARD),
    ("final_score", "= B+4.5\n\n"),  # 15 - 10 - 0.5
    ("final_status_list dead", OK),
    ("final_status_list alive", "= C5 C4 C3 C2 C1\nD5 D4 D3 D2 D1\n\n"),
    ("komi 5", OK),
    ("final_score", "= 0\n\n"),
    ("komi 7.5", OK),
    ("final_score", "= W+2.5\n\n"),
    ("play b B3", OK),  # inside Black's area: the score does not change
    ("final_score", "= W+2.5\n\n"),
    ("clear_board", OK),
    ("final_score", "= W+7.5\n\n"),
    ("komi 0.5", OK),
    ("place_free_handicap 1", "? invalid handicap\n\n"),
    ("place_free_handicap 2", "= A5 C3\n\n"),
    ("set_free_handicap B2 D4", "? board not empty\n\n"),
    ("undo", "? cannot undo\n\n"),
    ("clear_board", OK),
    ("set_free_handicap B2 B2", "? bad vertex list\n\n"),
    ("set_free_handicap B2", "? bad vertex list\n\n"),
    ("set_free_handicap B2 D4", OK),
    ("play w C3", OK),
    ("play w E5", OK),  # White again: Black's turn is recorded as a pass
    ("undo", OK),
    ("time_settings 300 30 5", OK),
    ("time_settings 300 x 5", "? syntax error\n\n"),
    ("time_left b 290 0", OK),
    ("lz-setoption name lambda value 0.25", OK),
    ("lz-setoption name lambda value x", "? syntax error\n\n"),
    ("lz-setoption name frobnicate value 1", "? unknown option frobnicate\n\n"),
    ("lz-analyze B nonsense", "? syntax error\n\n"),
    ("loadsgf /nonexistent/game.sgf", "? cannot load file\n\n"),
    ("7", "?7 missing command\n\n"),
    ("clear_board", OK),
]


def test_transcript(piped):
    """Every line of a scripted session, sent at once, with exact responses."""
    script = "".join(line + "\n" for line, _ in TRANSCRIPT)
    piped.write(script)
    for line, expected in TRANSCRIPT:
        if expected is None:
            continue
        assert piped.read_response() == expected, f"after {line!r}"
    assert piped.send("name") == "= saijax\n\n"


def test_list_commands(piped):
    response = piped.send("list_commands")
    assert response.startswith("= ") and response.endswith("\n\n")
    names = response[2:].split()
    for name in [
        "protocol_version",
        "name",
        "version",
        "known_command",
        "list_commands",
        "quit",
        "boardsize",
        "clear_board",
        "komi",
        "play",
        "genmove",
        "undo",
        "showboard",
        "final_score",
        "fixed_handicap",
        "set_free_handicap",
        "place_free_handicap",
        "loadsgf",
        "printsgf",
        "time_settings",
        "time_left",
        "lz-analyze",
        "kata-analyze",
        "lz-genmove_analyze",
        "lz-setoption",
    ]:
        assert name in names
        assert piped.send(f"known_command {name}") == "= true\n\n"


def test_genmove_plays_a_legal_move(piped):
    assert piped.send("clear_board") == OK
    assert piped.send("play b C3") == OK
    response = piped.send("12 genmove w")
    match = re.fullmatch(r"=12 ([A-E][1-5]|pass)\n\n", response)
    assert match, response
    vertex = match.group(1)
    assert vertex != "C3"
    board = piped.send("showboard")
    if vertex != "pass":
        rules = go.GoRules(N)
        row, col = divmod(go.from_gtp(rules, vertex), N)
        board_rows = board.split("\n")[2 : 2 + N]
        assert board_rows[row].split()[1 + col] == "O", board
        # The point is now occupied, whoever plays there.
        assert piped.send(f"play b {vertex}") == "? illegal move\n\n"
    assert "Black to play, move 2" in board


def test_lz_analyze_streams_until_next_command(piped):
    assert piped.send("clear_board") == OK
    piped.write("lz-analyze 10\n")
    assert piped.read_line() == "=\n"
    first = piped.read_line()
    moves = check_lz_line(first)
    assert moves and all(int(m["visits"]) >= 1 for m in moves)
    piped.write("8 name\n")
    # More rounds may have been written before the engine saw "name".
    while True:
        line = piped.read_line()
        if line == "\n":
            break
        check_lz_line(line)
    assert piped.read_response() == "=8 saijax\n\n"


def test_lz_analyze_argument_forms(piped):
    assert piped.send("clear_board") == OK
    for command in ["lz-analyze B 10", "lz-analyze interval 10", "lz-analyze w interval 10 maxmoves 2"]:
        piped.write(command + "\n")
        assert piped.read_line() == "=\n"
        moves = check_lz_line(piped.read_line())
        if "maxmoves" in command:
            assert len(moves) <= 2
        piped.write("name\n")
        while piped.read_line() != "\n":
            pass
        assert piped.read_response() == "= saijax\n\n"


def test_kata_analyze_format(piped):
    assert piped.send("clear_board") == OK
    assert piped.send("play b C3") == OK
    piped.write("kata-analyze W interval 10 ownership true\n")
    assert piped.read_line() == "=\n"
    line = piped.read_line()
    moves = check_kata_line(line)
    assert "C3" not in [m["move"] for m in moves]
    piped.write("name\n")
    while True:
        extra = piped.read_line()
        if extra == "\n":
            break
        check_kata_line(extra)
    assert piped.read_response() == "= saijax\n\n"


def test_lz_genmove_analyze(piped):
    assert piped.send("clear_board") == OK
    piped.write("lz-genmove_analyze b 10\n")
    assert piped.read_line() == "=\n"
    lines = []
    while True:
        line = piped.read_line()
        if line.startswith("play "):
            break
        lines.append(line)
        check_lz_line(line)
    vertex = line.split()[1]
    assert _VERTEX_RE.match(vertex), line
    assert piped.read_line() == "\n"
    assert lines, "no info line before the move"
    if vertex != "pass":
        assert piped.send(f"play w {vertex}") == "? illegal move\n\n"
    assert "White to play, move 1" in piped.send("showboard")


def test_setoption_over_the_pipe(piped):
    assert piped.send("lz-setoption name lambda value 0.3") == OK
    response = piped.send("lz-setoption name mu value 0.5")
    assert response.startswith("? ") and "lambda=0.3" in response and "mu=0.5" in response
    assert piped.send("lz-setoption name mu value 0.3") == OK
    assert piped.send("lz-setoption name lambda_ value 0.5") == OK


# ---------------------------------------------------------------------------
# The in-process engine.


def test_analysis_rounds_pool_visits(engine):
    assert engine.handle("clear_board") == OK
    chunks = engine.analysis_rounds("3 lz-analyze 50", max_rounds=2)
    assert chunks[0] == "=3\n" and chunks[-1] == "\n" and len(chunks) == 4
    first, second = (check_lz_line(c) for c in chunks[1:3])
    assert sum(int(m["visits"]) for m in first) == VISITS
    assert sum(int(m["visits"]) for m in second) == 2 * VISITS
    # The whole response through handle() is one framed block.
    text = engine.handle("kata-analyze b 50")
    assert text.startswith("=\ninfo move ") and text.endswith("\n\n") and text.count("\n\n") == 1
    check_kata_line(text[2:-1])


def test_kata_scores_come_from_the_search(engine):
    """scoreLead is the mover's α + k of the child and scoreStdev π/(√3 β)."""
    assert engine.handle("clear_board") == OK
    result = engine._search_round(engine._history[-1])
    for move in result.moves:
        assert math.isfinite(move["score_lead"]) and move["beta"] > 0
    analysis = engine.begin("kata-analyze")
    line = next(analysis.rounds(max_rounds=1))
    analysis.finish()
    for m in check_kata_line(line):
        assert float(m["scoreStdev"]) > 0


def test_genmove_analyze_in_process(engine):
    assert engine.handle("clear_board") == OK
    chunks = engine.analysis_rounds("kata-genmove_analyze w", max_rounds=1)
    assert chunks[0] == "=\n"
    check_kata_line(chunks[1])
    match = re.fullmatch(r"play ([A-E][1-5]|pass)\n\n", chunks[-1])
    assert match, chunks
    # White moved (Black's turn was recorded as a pass first).
    assert int(engine.state.to_play) == 1 and int(engine.state.move_count) == 2


def test_setoption_changes_the_agent(engine):
    before = engine.agent
    assert engine.handle("lz-setoption name lambda value 0.3") == OK
    assert engine.agent == search.Agent(0.3, before.mu, before.threshold)
    assert engine.handle("lz-setoption name mu value 0.2") == OK
    assert engine.handle("lz-setoption name threshold value 0.6") == OK
    assert engine.agent == search.Agent(0.3, 0.2, 0.6)
    for bad in [
        "lz-setoption name mu value 0.5",
        "lz-setoption name lambda value 1.5",
        "lz-setoption name lambda value -0.1",
        "lz-setoption name threshold value 2",
    ]:
        response = engine.handle(bad)
        assert response.startswith("? ") and response.endswith("\n\n"), response
        assert engine.agent == search.Agent(0.3, 0.2, 0.6)
    assert engine.handle("lz-setoption name lambda_ value 1") == OK
    assert engine.handle("lz-setoption name mu value 1") == OK
    assert engine.agent == search.Agent(1.0, 1.0, 0.6)
    # The search runs with the new agent: λ = μ = 1 anchors the root at 1/2.
    engine.handle("lz-setoption name threshold value 0")
    engine.handle("clear_board")
    out = engine.search(engine.state, VISITS)
    alpha = float(out.root_alpha[0])
    assert float(out.x_lambda[0]) == pytest.approx(-alpha, abs=1e-4)
    assert float(out.x_mu[0]) == pytest.approx(-alpha, abs=1e-4)
    engine.player = engine.player.with_agent(before)


def test_genmove_resigns_below_threshold(engine):
    engine.handle("clear_board")
    for c, v in _WALL[:7]:  # past the opening: move >= N²/4
        assert engine.handle(f"play {c} {v}") == OK
    state = engine.state
    assert engine.handle("lz-setoption name resign_threshold value 1") == OK
    assert engine.handle("genmove w") == "= resign\n\n"
    assert engine.state is state  # resigning plays nothing
    assert engine.handle("lz-setoption name resign_threshold value -1") == OK
    assert re.fullmatch(r"= ([A-E][1-5]|pass)\n\n", engine.handle("genmove w"))
    engine.handle("lz-setoption name resign_threshold value 0.05")


def test_genmove_after_the_game_ended_passes(engine):
    engine.handle("clear_board")
    assert engine.handle("play b pass") == OK
    assert engine.handle("play w pass") == OK
    assert bool(engine.state.terminated)
    assert engine.handle("genmove b") == "= pass\n\n"
    assert engine.handle("play b C3") == "? illegal move\n\n"
    assert engine.handle("lz-analyze 10") == "=\n\n"  # nothing to analyse
    assert engine.handle("undo") == OK
    assert not bool(engine.state.terminated)


def test_a_failing_command_leaves_the_state_alone(engine, monkeypatch):
    engine.handle("clear_board")
    engine.handle("play b C3")
    state, komi = engine.state, engine.komi

    def broken(*args, **kwargs):
        raise RuntimeError("search exploded\n\nbadly")

    monkeypatch.setattr(engine, "search", broken)
    assert engine.handle("9 genmove b") == "?9 search exploded badly\n\n"  # one line, no blank line
    assert engine.state is state and engine.komi == komi
    # A stream that already answered "=" ends cleanly, with no info line.
    assert engine.handle("lz-analyze 10") == OK
    assert engine.handle("lz-genmove_analyze b") == OK
    assert engine.state is state
    monkeypatch.undo()
    assert engine.handle("name") == "= saijax\n\n"
    assert re.fullmatch(r"= ([A-E][1-5]|pass)\n\n", engine.handle("genmove w"))


def test_printsgf_and_loadsgf_round_trip(engine, tmp_path):
    engine.handle("clear_board")
    engine.handle("komi 2.5")
    for line in ["play b C3", "play w D3", "play w D4", "play b pass", "play w B2"]:
        assert engine.handle(line) == OK, line
    board = engine.handle("showboard")
    text = engine.handle("printsgf")
    assert text.startswith("= (;") and "KM[2.5]" in text and "SZ[5]" in text
    path = tmp_path / "game.sgf"
    assert engine.handle(f"printsgf {path}") == OK
    engine.handle("clear_board")
    engine.handle("komi 0.5")
    assert engine.handle(f"loadsgf {path}") == OK
    assert engine.handle("showboard") == board
    assert engine.komi == 2.5
    # The position before move 2: only Black's C3.
    assert engine.handle(f"loadsgf {path} 2") == OK
    assert "White to play, move 1" in engine.handle("showboard")
    assert engine.handle("undo") == OK and engine.handle("undo") == "? cannot undo\n\n"
    # A 9×9 game is the wrong size for this net.
    nine = tmp_path / "nine.sgf"
    nine.write_text("(;GM[1]FF[4]SZ[9]KM[7.5];B[ee])")
    assert engine.handle(f"loadsgf {nine}") == "? unacceptable size\n\n"
    junk = tmp_path / "junk.sgf"
    junk.write_text("this is not sgf")
    assert engine.handle(f"loadsgf {junk}").startswith("? cannot load file")
    engine.handle("komi 0.5")


def test_bad_komi_is_an_error_naming_it_and_keeps_the_komi(engine):
    engine.handle("clear_board")
    assert engine.handle("komi 2.5") == OK
    for text in ("6.3", "nan", "abc", "inf", "-0.25", "20000"):
        response = engine.handle(f"komi {text}")
        assert response.startswith("? komi must be") and text in response, (text, response)
        assert engine.komi == 2.5 and float(engine.state.komi) == 2.5
    assert engine.handle("komi -3") == OK and engine.komi == -3.0
    engine.handle("komi 0.5")


def test_loadsgf_rejects_a_komi_the_rules_do_not_allow(engine, tmp_path):
    path = tmp_path / "odd.sgf"
    path.write_text("(;GM[1]FF[4]SZ[5]KM[6.3];B[cc])")
    response = engine.handle(f"loadsgf {path}")
    assert response.startswith("? cannot load file: komi must be") and "6.3" in response, response


@pytest.mark.parametrize(
    "flags,word",
    [
        (["--komi=6.3"], "--komi must be a multiple of 0.5"),
        (["--komi=nan"], "--komi"),
        (["--gumbel_scale=-1"], "--gumbel_scale"),
        (["--gumbel_scale=inf"], "--gumbel_scale"),
    ],
)
def test_main_rejects_bad_komi_and_gumbel_scale(flags, word, capsys):
    assert gtp_cli.main(["--board_size=5", "--blocks=1", "--filters=8", *flags]) == 2
    err = capsys.readouterr().err.strip().splitlines()[-1]
    assert err.startswith("saijax.gtp: error:") and word in err, err


def test_genmove_is_deterministic_by_default(engine, player):
    """gumbel_scale 0: the search's best move, whatever the seed."""
    other = gtp.GtpEngine(player, visits=VISITS, komi=0.5, seed=1)
    assert engine.gumbel_scale == other.gumbel_scale == 0.0
    assert engine.search_config().gumbel_scale == 0.0
    # Analysis rounds still draw noise, so that pooled rounds differ.
    assert engine.search_config(analysis=True).gumbel_scale == 1.0
    moves = []
    for e in (engine, other, engine):
        e.handle("clear_board")
        e.handle("play b C3")
        moves.append(e.handle("genmove w"))
    assert re.fullmatch(r"= ([A-E][1-5]|pass)\n\n", moves[0]) and moves[0] == moves[1] == moves[2], moves


def test_gumbel_scale_option(engine):
    engine.handle("clear_board")
    base = engine.search_config()
    assert engine.handle("lz-setoption name gumbel_scale value 0.5") == OK
    assert engine.gumbel_scale == 0.5 and engine.search_config() == dataclasses.replace(base, gumbel_scale=0.5)
    assert engine.search_config(analysis=True).gumbel_scale == 0.5
    assert re.fullmatch(r"= ([A-E][1-5]|pass)\n\n", engine.handle("genmove b"))
    compiled = set(engine._search_fns)
    assert dataclasses.replace(base, gumbel_scale=0.5) in compiled
    for text in ("-1", "nan", "inf", "x", "-0.1"):
        response = engine.handle(f"lz-setoption name gumbel_scale value {text}")
        assert response.startswith("? gumbel_scale must be") and text in response, (text, response)
        assert engine.gumbel_scale == 0.5
    # Back to 0 reuses the compiled deterministic search, and so does 0.5 again.
    assert engine.handle("lz-setoption name gumbel_scale value 0") == OK
    assert engine.search_config() == base
    engine.handle("genmove w")
    assert engine.handle("lz-setoption name gumbel_scale value 0.5") == OK
    engine.handle("genmove b")
    assert set(engine._search_fns) == compiled | {base}
    assert engine.handle("lz-setoption name gumbel_scale value 0") == OK
    with pytest.raises(ValueError, match="gumbel_scale"):
        gtp.GtpEngine(engine.player, gumbel_scale=-1.0)


# ---------------------------------------------------------------------------
# Players.


def _save_checkpoint(workdir, net, generation=4, seed=1):
    variables = jax.jit(functools.partial(networks.init_network, net))(jax.random.PRNGKey(seed))
    state = training.TrainState(
        step=np.int32(77),
        params=variables["params"],
        batch_stats=variables["batch_stats"],
        opt_state=optax.adam(1e-3).init(variables["params"]),
    )
    with checkpoints.Checkpointer(workdir) as ckpt:
        ckpt.save(
            generation,
            state=state,
            rng_key=jax.random.key(0),
            network=net.spec,
            replay_dir=os.path.join(workdir, "replay"),
        )
    return variables


def test_random_player(player):
    assert player.board_sizes == (N,) and player.value_head == "sai" and player.generation is None
    assert "random" in player.description
    with pytest.raises(ValueError, match="board_size"):
        players.load_player(None)


def test_load_player_from_checkpoint(tmp_path):
    net = networks.make_network(N, blocks=1, filters=8)
    variables = _save_checkpoint(str(tmp_path), net)
    for path in [tmp_path, tmp_path / "checkpoints", tmp_path / "checkpoints" / "4"]:
        loaded = players.load_player(str(path))
        assert loaded.generation == 4 and loaded.board_sizes == (N,) and loaded.name == "gen4"
        assert (loaded.net.blocks, loaded.net.filters, loaded.value_head) == (1, 8, "sai")
        for want, got in zip(jax.tree_util.tree_leaves(variables), jax.tree_util.tree_leaves(loaded.variables)):
            np.testing.assert_array_equal(np.asarray(want), np.asarray(got))
    with pytest.raises(ValueError, match="9x9"):
        players.load_player(str(tmp_path), board_size=9)

    engine = gtp.GtpEngine(loaded, visits=2)
    assert engine.handle("boardsize 5") == OK
    assert engine.handle("boardsize 9") == "? unacceptable size\n\n"
    assert engine.handle("boardsize 19") == "? unacceptable size\n\n"


def test_load_player_errors_name_the_path(tmp_path):
    missing = tmp_path / "missing"
    with pytest.raises(FileNotFoundError, match=str(missing)):
        players.load_player(str(missing))
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(FileNotFoundError, match=str(empty)):
        players.load_player(str(empty))
    assert not (empty / "checkpoints").exists()  # never created by a reader
    (empty / "checkpoints").mkdir()
    with pytest.raises(FileNotFoundError, match="no finished checkpoint"):
        players.load_player(str(empty))

    corrupt = tmp_path / "corrupt"
    net = networks.make_network(N, blocks=1, filters=8)
    _save_checkpoint(str(corrupt), net, generation=2)
    for root, _, files in os.walk(corrupt / "checkpoints" / "2" / "state"):
        for name in files:
            if "manifest" in name:
                with open(os.path.join(root, name), "wb") as f:
                    f.write(b"garbage")
    with pytest.raises(checkpoints.CheckpointError, match=re.escape(str(corrupt / "checkpoints" / "2"))):
        players.load_player(str(corrupt))

    # From the command line: exit code 2 and the error is stderr's last line.
    result = subprocess.run(
        [sys.executable, "-m", "saijax.gtp", f"--checkpoint={corrupt}"],
        input=b"name\n",
        capture_output=True,
        timeout=120,
    )
    assert result.returncode == 2 and result.stdout == b""
    last = result.stderr.decode().strip().splitlines()[-1]
    assert last.startswith("saijax.gtp: error:") and str(corrupt / "checkpoints" / "2") in last, last


def test_main_reports_a_bad_checkpoint(tmp_path, capsys):
    missing = tmp_path / "nothing-here"
    assert gtp_cli.main([f"--checkpoint={missing}"]) == 2
    assert str(missing) in capsys.readouterr().err


# ---------------------------------------------------------------------------
# Position control (docs/design.md §8): agent settings of the engine.

R5 = go.GoRules(N)


def _fake_output(visits, q, prior):
    """A one-game SearchOutput on 5×5 from {vertex: value} dicts; the search's own move is the most visited."""
    actions = R5.num_actions

    def row(values, fill, dtype=np.float32):
        x = np.full((1, actions), fill, dtype)
        for v, value in values.items():
            x[0, go.from_gtp(R5, v)] = value
        return jax.numpy.asarray(x)

    counts = row(visits, 0, np.int32)
    zeros = jax.numpy.zeros(1, jax.numpy.float32)
    return search.SearchOutput(
        action=jax.numpy.argmax(counts, axis=1).astype(jax.numpy.int32),
        visit_counts=counts,
        policy=jax.numpy.zeros((1, actions)),
        root_alpha=zeros,
        root_beta=zeros + 1,
        root_winrate=zeros + 0.9,
        root_value=zeros + 0.9,
        x_lambda=zeros,
        x_mu=zeros,
        child_visits=counts,
        child_q=row(q, np.nan),
        child_prior=row(prior, 0.0),
        child_score_lead=row({}, 0.0),
        child_beta=row({}, 1.0),
        child_pv=jax.numpy.full((1, actions, 1), -1, jax.numpy.int32),
        pv=jax.numpy.full((1, 1), -1, jax.numpy.int32),
        best_value=zeros + 0.9,
        score_estimate=zeros,
    )


# Black to move after B E1, W D2. The search's own move is A5 (w 0.9); E2 and
# A3 lose 0.05 (< 0.03·2.5) but have prior 0.04 < 0.05, so Ikeda and Viennot's
# M⁺ is {A5}, unless Method B reweights E2: it is next to White's last move D2,
# which attacks Black's E1 (×1.5 → 0.06 > 0.05), so B and C play E2 (C: 0.85 −
# 0.25·0.06 < 0.9 − 0.25·0.1). A3 is 3.2 from D2 (×1.0) and never qualifies.
# Methods A and naive (nearest ½) play B5 (w 0.6).
_KNOWN = _fake_output(
    visits={"A5": 300, "E2": 60, "A3": 60, "B5": 60},
    q={"A5": 0.9, "E2": 0.85, "A3": 0.85, "B5": 0.6},
    prior={"A5": 0.1, "E2": 0.04, "A3": 0.04, "B5": 0.02},
)


@pytest.fixture
def controlled(engine, monkeypatch):
    """The shared engine with a fake search that returns ``_KNOWN``; control reset after."""
    monkeypatch.setattr(engine, "search", lambda state, visits=None, analysis=False: _KNOWN)
    assert engine.handle("clear_board") == OK
    yield engine
    assert engine.handle("lz-setoption name control value off") == OK
    engine._control_settings = control.ControlConfig()


@pytest.mark.parametrize(
    "setting,white,expected",
    [
        ("off", "D2", "A5"),  # the search's own move
        ("B", "D2", "E2"),  # the opponent's last move, next to Black's stone, pulls B to E2
        ("C", "D2", "E2"),
        ("B", "A4", "A5"),  # far from E1, the last move does not attack: weights 1, M⁺ = {A5}
        ("A", "D2", "B5"),
        ("naive", "D2", "B5"),
    ],
)
def test_genmove_honours_position_control(controlled, setting, white, expected):
    assert controlled.handle(f"lz-setoption name control value {setting}") == OK
    assert controlled.handle("play b E1") == OK
    assert controlled.handle(f"play w {white}") == OK
    assert controlled.handle("genmove b") == f"= {expected}\n\n"
    # lz-genmove_analyze plays the same move, after the search's info line.
    assert controlled.handle("undo") == OK
    chunks = controlled.analysis_rounds("lz-genmove_analyze b", max_rounds=1)
    assert chunks[1].startswith("info move A5 ") and chunks[-1] == f"play {expected}\n\n"


def test_position_control_reads_the_last_moves_from_the_game_record(controlled):
    assert controlled.handle("lz-setoption name control value B") == OK
    for line in ("play b E1", "play w D2", "play b E4", "play w A4"):
        assert controlled.handle(line) == OK
    assert controlled.handle("genmove b") == "= A5\n\n"  # White's latest move is far from Black's stones
    assert controlled.handle("undo") == OK
    # With White's last two moves, D2 counts again (the nearest attacking one).
    assert controlled.handle("lz-setoption name control opponent_moves value 2") == OK
    assert controlled.handle("genmove b") == "= E2\n\n"
    assert controlled.handle("undo") == OK
    # Black twice in a row: White's turn is recorded as a pass, which is no move.
    assert controlled.handle("lz-setoption name control opponent_moves value 1") == OK
    assert controlled.handle("play w D1") == OK  # White twice: Black's turn is a pass
    assert controlled.handle("genmove b") == "= E2\n\n"
    assert controlled.handle("play b C1") == OK
    assert controlled.handle("genmove b") == "= A5\n\n"


def test_control_options_are_validated_and_kept_while_off(engine):
    engine.handle("lz-setoption name control value off")
    before = engine.control
    assert before is None
    assert engine.handle("lz-setoption name control gentleness value 1") == OK
    assert engine.control is None  # still off; the setting waits
    assert engine.handle("lz-setoption name control value c") == OK  # any case
    assert engine.control == control.ControlConfig(method="C", gentleness=1.0)
    assert engine.handle("lz-setoption name control gamma value 2") == OK
    assert engine.handle("lz-setoption name control lead_band value -8,-2") == OK
    assert engine.handle("lz-setoption name control min_visit_share value 0.5") == OK
    good = control.ControlConfig(method="C", gentleness=1.0, gamma=2.0, lead_band=(-8, -2), min_visit_share=0.5)
    assert engine.control == good
    bad = {
        "lz-setoption name control value D": "method",
        "lz-setoption name control value 1": "method",
        "lz-setoption name control gentleness value 0": "gentleness",
        "lz-setoption name control gentleness value x": "gentleness",
        "lz-setoption name control gamma value 0.5": "gamma",
        "lz-setoption name control top_moves value 2.5": "top_moves",
        "lz-setoption name control lead_band value -2,-8": "lead_band",
        "lz-setoption name control frobnicate value 1": "frobnicate",
        "lz-setoption name control gentleness extra value 1": "control gentleness extra",
        "lz-setoption name control value": "syntax error",
    }
    for line, word in bad.items():
        response = engine.handle(line)
        assert response.startswith("? ") and word in response, (line, response)
        assert engine.control == good and engine._control_settings == good
    assert engine.handle("lz-setoption name control value off") == OK
    assert engine.control is None and engine._control_settings == good
    engine._control_settings = control.ControlConfig()


def test_control_search_is_method_a_and_compiled_once_per_config(engine):
    engine.handle("clear_board")
    engine.handle("lz-setoption name control value off")
    base = engine.search_config()
    assert engine.handle("lz-setoption name control value C") == OK
    assert engine.search_config() == dataclasses.replace(base, algorithm="puct", c_puct=10.0)
    assert engine.handle("lz-setoption name control value endgame") == OK
    assert engine.search_config() == base  # the endgame reads priors and score leads: the engine's search
    assert engine.handle("lz-setoption name control value A") == OK
    move = engine.handle("genmove b")
    assert re.fullmatch(r"= ([A-E][1-5]|pass)\n\n", move), move
    compiled = set(engine._search_fns)
    assert dataclasses.replace(base, algorithm="puct", c_puct=10.0) in compiled
    # Changing a selection parameter reuses the compiled search.
    assert engine.handle("lz-setoption name control gentleness value 1.5") == OK
    assert engine.handle("lz-setoption name control value B") == OK
    assert re.fullmatch(r"= ([A-E][1-5]|pass)\n\n", engine.handle("genmove w"))
    assert set(engine._search_fns) == compiled
    engine.handle("lz-setoption name control value off")
    engine._control_settings = control.ControlConfig()


@pytest.mark.parametrize(
    "flags,word",
    [
        (["--control=Q"], "method"),
        (["--control=C", "--control_option", "gentleness=-1"], "gentleness"),
        (["--control=C", "--control_option", "gentleness"], "field=value"),
        (["--control=B", "--control_option", "frobnicate=1"], "frobnicate"),
        (["--control_option", "gamma=0"], "gamma"),  # checked even with control off
    ],
)
def test_main_rejects_bad_control_flags(flags, word, capsys):
    assert gtp_cli.main(["--board_size=5", "--blocks=1", "--filters=8", *flags]) == 2
    err = capsys.readouterr().err.strip().splitlines()[-1]
    assert err.startswith("saijax.gtp: error:") and word in err, err


def test_control_flags_set_the_engine(monkeypatch):
    seen = {}
    monkeypatch.setattr(server, "serve", lambda engine, stdin, stdout: seen.__setitem__("engine", engine))
    argv = ["--board_size=5", "--blocks=1", "--filters=8", "--control=endgame"]
    assert gtp_cli.main([*argv, "--control_option", "gamma=2", "--control_option=lead_band=-6,-2"]) == 0
    assert seen["engine"].control == control.ControlConfig(method="endgame", gamma=2.0, lead_band=(-6, -2))
    assert seen["engine"].gumbel_scale == 0.0 and seen["engine"].komi == 7.5
    assert gtp_cli.main([*argv, "--gumbel_scale=0.25", "--komi=-2"]) == 0
    assert seen["engine"].gumbel_scale == 0.25 and seen["engine"].komi == -2.0


# ---------------------------------------------------------------------------
# Sabaki's GTP library.

_SABAKI_SCRIPT = r"""
const {Controller} = require('@sabaki/gtp')

async function main() {
  const [command, ...args] = JSON.parse(process.argv[2])
  const engine = new Controller(command, args)
  engine.start()
  const out = {}
  const send = (name, args = []) => engine.sendCommand({name, args})
  out.name = await send('name')
  out.version = await send('version')
  out.boardsize9 = await send('boardsize', ['9'])
  out.boardsize = await send('boardsize', ['5'])
  out.clear = await send('clear_board')
  out.komi = await send('komi', ['0.5'])
  out.play = await send('play', ['B', 'C3'])
  out.illegal = await send('play', ['W', 'C3'])
  out.genmove = await send('genmove', ['W'])
  // Analysis as Sabaki runs it: the next command ends the stream.
  for (const name of ['lz-analyze', 'kata-analyze']) {
    const infos = []
    let next = null
    const analysis = engine.sendCommand({name, args: ['B', '10']}, ({line}) => {
      if (line.startsWith('info')) {
        infos.push(line)
        if (next == null) next = engine.sendCommand({name: 'protocol_version'})
      }
    })
    out[name] = {response: await analysis, infos, next: await next}
  }
  out.showboard = await send('showboard')
  await engine.stop()
  console.log(JSON.stringify(out))
}

main().catch(err => { console.error(err); process.exit(1) })
"""


@pytest.mark.slow
def test_sabaki_gtp_controller(tmp_path):
    """Sabaki's own GTP library (@sabaki/gtp) drives the engine."""
    node, npm = shutil.which("node"), shutil.which("npm")
    if not node or not npm:
        pytest.skip("node/npm not installed: needed for @sabaki/gtp")
    try:
        install = subprocess.run(
            [npm, "install", "--no-audit", "--no-fund", "--prefix", str(tmp_path), "@sabaki/gtp@3.0.0"],
            capture_output=True,
            text=True,
            timeout=300,
        )
    except subprocess.TimeoutExpired:
        pytest.skip("npm install @sabaki/gtp timed out (registry unreachable?)")
    if install.returncode != 0 or not (tmp_path / "node_modules" / "@sabaki" / "gtp").is_dir():
        pytest.skip(f"npm install @sabaki/gtp failed: {install.stderr[-500:]}")
    script = tmp_path / "drive.js"
    script.write_text(_SABAKI_SCRIPT)
    run = subprocess.run(
        [node, str(script), json.dumps(ENGINE_ARGV)], capture_output=True, text=True, timeout=900, cwd=str(tmp_path)
    )
    assert run.returncode == 0, run.stderr[-3000:]
    out = json.loads(run.stdout.strip().splitlines()[-1])
    assert out["name"] == {"id": None, "content": "saijax", "error": False}
    assert out["version"]["content"] == saijax.__version__
    assert out["boardsize9"] == {"id": None, "content": "unacceptable size", "error": True}
    assert not out["boardsize"]["error"] and not out["play"]["error"]
    assert out["illegal"] == {"id": None, "content": "illegal move", "error": True}
    assert re.fullmatch(r"[A-E][1-5]|pass", out["genmove"]["content"]), out["genmove"]
    for name, check in (("lz-analyze", check_lz_line), ("kata-analyze", check_kata_line)):
        result = out[name]
        assert not result["response"]["error"] and result["infos"], result
        for info in result["infos"]:
            check(info + "\n")
        assert result["next"] == {"id": None, "content": "2", "error": False}
    assert "Black to play, move 2" in out["showboard"]["content"]


def test_style_option_sets_the_online_root_prior(engine):
    engine.handle("clear_board")
    assert engine.handle("lz-setoption name style value center") == OK
    assert engine.search_config().root_prior == styles.OnlineStyle("centre")
    assert re.fullmatch(r"= ([A-E][1-5]|pass)\n\n", engine.handle("genmove b"))
    response = engine.handle("lz-setoption name style value diagonal")
    assert response.startswith("? ") and "unknown style" in response
    assert engine.search_config().root_prior == styles.OnlineStyle("centre")
    assert engine.handle("lz-setoption name style value off") == OK
    assert engine.search_config().root_prior is None
