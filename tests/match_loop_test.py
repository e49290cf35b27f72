"""The one match loop over opponents: scripted opponents, nets, a scripted GTP engine, import isolation.

The golden digests are of games played by the two match loops that came
before :mod:`saijax.play.match_loop` (``arena.play_match``'s lockstep loop and
``gtp_match.play_gtp_match``'s game-by-game loop, at the commit before issue
45's): every result row and SGF, so the one loop is shown to play the same
games bit for bit. They were made on the CPU.
"""

import dataclasses
import hashlib
import json
import os
import re
import subprocess
import sys

import jax
import numpy as np
import pytest

from saijax.analysis import results
from saijax.core import go, networks, search, sgf
from saijax.play import arena, gtp_match, gtp_opponent, match, match_loop, opponents, players, styles

R5 = go.GoRules(5)
VISITS = 8
CONFIG = search.SearchConfig(num_simulations=VISITS)
REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# A GTP engine that passes N times per game (N = its first argument), then resigns.
FAKE_ENGINE = """
import sys

n = int(sys.argv[1]) if len(sys.argv) > 1 else 2
count = 0
cmds = ["protocol_version", "name", "version", "list_commands", "known_command", "boardsize", "clear_board",
        "komi", "play", "genmove", "quit"]
for line in sys.stdin:
    words = line.split()
    if not words:
        continue
    c = words[0]
    out = ""
    if c == "list_commands":
        out = "\\n".join(cmds)
    elif c == "clear_board":
        count = 0
    elif c == "genmove":
        count += 1
        out = "resign" if count > n else "pass"
    elif c == "name":
        out = "fake"
    sys.stdout.write(f"= {out}\\n\\n")
    sys.stdout.flush()
    if c == "quit":
        break
"""


class Scripted(opponents.Opponent):
    """Plays the same list of GTP vertices in every game (then passes, or resigns), and
    records every call of the protocol."""

    def __init__(self, name, moves, *, lockstep=True, resign_after=None, count=""):
        self.name, self.moves, self.lockstep = name, list(moves), lockstep
        self.resign_after, self.count = resign_after, count
        self.events = []
        self.cursor = {}

    def start_match(self, info):
        self.rules = info.rules
        self.events.append(("match", info.rules.size, info.settings.games))

    def start_game(self, setup):
        self.cursor[setup.game] = 0
        self.events.append(("game", setup.game, setup.colour, setup.komi))

    def choose(self, turn):
        actions, comments, resigns = [], [], []
        for i, active in zip(turn.games.tolist(), turn.active):
            k = self.cursor[i]
            self.cursor[i] += int(active)
            vertex = self.moves[k] if k < len(self.moves) else "pass"
            actions.append(go.from_gtp(self.rules, vertex))
            comments.append(f"scripted move {k}")
            resigns.append(self.resign_after is not None and k >= self.resign_after)
        self.events.append(("choose", turn.ply, turn.colour, turn.games.tolist()))
        return opponents.Choice(actions=np.array(actions), comments=comments, resigns=np.array(resigns))

    def play(self, games, colour, actions):
        self.events.append(("told", games.tolist(), colour, [go.to_gtp(self.rules, int(a)) for a in actions]))

    def end_game(self, game, resigned):
        self.events.append(("end", game, resigned))
        return opponents.FinalCount(score=self.count)

    def end_match(self):
        self.events.append(("close",))


def test_scripted_opponents_play_their_moves_in_lockstep(tmp_path):
    a = Scripted("a", ["C3", "pass"], count="a-count")
    b = Scripted("b", ["pass", "pass"], count="b-count")
    settings = match.MatchSettings(games=2, komi=7.5, sgf_dir=tmp_path, results_path=tmp_path / "r.jsonl")
    with pytest.raises(ValueError, match="board_size"):
        match_loop.play_games(a, b, settings)
    lines = []
    games = match_loop.play_games(a, b, settings, board_size=5, log=lines.append)
    # Game 0: a (Black) C3, b passes, a passes. Game 1: b (Black) passes, a C3, b and a pass.
    assert [(g.black, g.white, g.moves, g.end) for g in games] == [("a", "b", 3, "passes"), ("b", "a", 4, "passes")]
    assert [(g.winner, g.margin) for g in games] == [("black", 25 - 7.5), ("white", -25 - 7.5)]
    # Each side's own count, Black's first; no player: no search settings in the row.
    assert [g.engine_score for g in games] == ["a-count; b-count", "b-count; a-count"]
    assert {(g.visits, g.gumbel_scale, g.precision) for g in games} == {("-", "-", "-")}
    assert len(lines) == 2 and [r.game for r in results.read_results(tmp_path / "r.jsonl")] == [0, 1]
    record = sgf.read_sgf(games[1].sgf)
    assert [go.to_gtp(R5, m) for m in record.moves] == ["pass", "C3", "pass", "pass"]
    assert record.comments == ("scripted move 0", "scripted move 0", "scripted move 1", "scripted move 1")
    assert "Black b. White a." in record.root_comment
    # Lockstep: both games are set up before the first move; each side is told the other's moves.
    assert a.events[:3] == [("match", 5, 2), ("game", 0, 1, 7.5), ("game", 1, -1, 7.5)]
    assert ("told", [0], -1, ["pass"]) in a.events and ("told", [1], 1, ["pass"]) in a.events
    assert ("told", [0], 1, ["C3"]) in b.events and ("told", [1], -1, ["C3"]) in b.events
    assert ("choose", 0, 1, [0]) in a.events and ("choose", 0, 1, [1]) in b.events
    assert a.events[-1] == ("close",) and ("end", 0, False) in a.events


def test_an_opponent_that_holds_one_game_plays_the_games_one_at_a_time(tmp_path):
    a = Scripted("a", ["C3", "pass"])
    b = Scripted("b", ["pass", "pass"], lockstep=False)
    games = match_loop.play_games(a, b, match.MatchSettings(games=3, komi=7.5), board_size=5)
    assert [g.moves for g in games] == [3, 4, 3]
    kinds = [(e[0], e[1]) for e in b.events if e[0] in ("game", "end")]
    assert kinds == [("game", 0), ("end", 0), ("game", 1), ("end", 1), ("game", 2), ("end", 2)]


def test_resignations_and_illegal_moves_of_an_opponent(tmp_path):
    # b resigns at its second move; nobody can estimate the score: the smallest win.
    a = Scripted("a", ["C3", "B2"])
    b = Scripted("b", ["pass"], resign_after=1)
    games = match_loop.play_games(a, b, match.MatchSettings(games=2, komi=7.5), board_size=5)
    assert [(g.end, g.winner, g.margin, g.moves, g.score_estimate) for g in games] == [
        ("resign", "black", 0.5, 3, None),
        ("resign", "white", -0.5, 2, None),
    ]
    assert ("end", 0, True) in a.events
    # An occupied point: go.play's message, with the game and move.
    a = Scripted("a", ["C3"])
    b = Scripted("b", ["C3"])
    with pytest.raises(ValueError, match=r"game 0, move 2: illegal move C3 for white: occupied"):
        match_loop.play_games(a, b, match.MatchSettings(games=2, komi=7.5), board_size=5)
    assert a.events[-1] == b.events[-1] == ("close",)
    with pytest.raises(ValueError, match="distinct names"):
        match_loop.play_games(Scripted("a", []), Scripted("a", []), match.MatchSettings(games=2), board_size=5)


def test_a_gtp_engine_against_a_scripted_opponent(tmp_path):
    """Any two opponents meet: here a scripted GTP engine (pass, then resign) and a script,
    without a net to estimate the resigned game's score. The engine is closed at the end,
    also when it refuses the match."""
    script = tmp_path / "fake_engine.py"
    script.write_text(FAKE_ENGINE)
    engine = gtp_opponent.GtpOpponent([sys.executable, str(script), "1"], name="fake", timeout=30)
    s = Scripted("s", ["C3"])
    games = match_loop.play_games(s, engine, match.MatchSettings(games=2, komi=7.5, sgf_dir=tmp_path), board_size=5)
    assert [(g.black, g.end, g.winner, g.margin, g.moves) for g in games] == [
        ("s", "passes", "black", 17.5, 3),
        ("fake", "resign", "white", -0.5, 2),
    ]
    assert ("told", [1], 1, ["pass"]) in s.events and not engine.client.alive
    assert "Black fake: GTP engine " in sgf.read_sgf(games[1].sgf).root_comment
    engine = gtp_opponent.GtpOpponent([sys.executable, str(script), "1"], name="fake", timeout=30)
    with pytest.raises(ValueError, match="top_moves"):
        match_loop.play_games(s, engine, match.MatchSettings(games=2, engine_opening_moves=1), board_size=5)
    assert not engine.client.alive


def _player(name, seed, **agent):
    net = networks.make_network(5, blocks=1, filters=8)
    variables = networks.init_network(net, jax.random.PRNGKey(seed))
    return players.Player.from_network(name, net, variables, config=CONFIG, agent=search.Agent(**agent))


def _digest(games):
    """sha256 of every row and SGF (an engine's command line left out of the SGF)."""
    items = []
    for g in games:
        row = dataclasses.asdict(g)
        with open(row.pop("sgf")) as f:
            items.append([row, re.sub(r"Engine: [^\n]*\.\n", "Engine: <argv>.\n", f.read())])
    return hashlib.sha256(json.dumps(items, sort_keys=True).encode()).hexdigest()


@pytest.mark.skipif(jax.default_backend() != "cpu", reason="the golden digests were made on the CPU")
def test_net_opponents_play_the_old_arenas_games(tmp_path):
    a, b = _player("a", 0), _player("b", 1, lambda_=0.5)
    plain = match.MatchSettings(games=8, komi=7.5, seed=3, sgf_dir=tmp_path / "plain")
    games = match_loop.play_games(opponents.NetOpponent(a), opponents.NetOpponent(b), plain)
    assert _digest(games) == "15f1dc33eb8588f9d4e48b7c445ecffe3fa0f29dd18e244c7f9bcb93da34bd8d"
    resign = dict(games=8, komi=7.5, seed=1, resign_threshold=0.999, score_visits=VISITS)
    games = arena.play_match(a, b, match.MatchSettings(**resign, sgf_dir=tmp_path / "resign"))
    assert _digest(games) == "6a3f47fe37011d1c4aa1a20702f5c00ee3fead6f661007d64a364f38e5e65dd8"


@pytest.mark.skipif(jax.default_backend() != "cpu", reason="the golden digests were made on the CPU")
def test_a_resigning_gtp_engine_plays_the_old_engine_matchs_games(tmp_path):
    """The engine resigns: its game's score is the net's move search's (score_visits None) or the
    mixed player's own 8-visit search; the rows and SGFs are the old engine loop's."""
    script = tmp_path / "fake_engine.py"
    script.write_text(FAKE_ENGINE)
    engine = [sys.executable, str(script), "2"]
    a = _player("a", 0)
    settings = match.MatchSettings(games=2, komi=7.5, seed=1, score_visits=None, sgf_dir=tmp_path / "own")
    games = gtp_match.play_gtp_match(a, engine, settings, engine_name="fake")
    assert [(g.end, g.winner) for g in games] == [("passes", "black"), ("resign", "white")]
    assert _digest(games) == "79d472a193cc940b1398492c8ad08d39a39a129e9c8b86b7eac9823bf7178109"

    mixed = _player("b", 1, lambda_=0.5).replace(
        name="mixed", mixed=styles.MixedStyle(_player("biased", 3), w_diff=0.05, p_th=0.1)
    )
    settings = match.MatchSettings(
        games=2, komi=7.5, seed=1, score_visits=VISITS, opening_moves=2, sgf_dir=tmp_path / "mixed"
    )
    games = gtp_match.play_gtp_match(mixed, engine, settings, engine_name="fake")
    assert _digest(games) == "9052a82ddf46fc61b533b29ffd6bd926043f404716006895b4dd22134e923b62"


def _modules_loaded_by(module):
    code = f"import {module}, sys; print(sorted(m for m in sys.modules if 'gtp' in m or m.startswith('saijax.cli')))"
    env = {**os.environ, "JAX_PLATFORMS": "cpu"}
    out = subprocess.run([sys.executable, "-c", code], cwd=REPO, env=env, capture_output=True, text=True, check=True)
    return out.stdout.strip()


def test_the_arena_library_and_training_load_no_gtp_module():
    """Training's gating plays through saijax.play.arena: neither loads a GTP module or the command lines."""
    assert _modules_loaded_by("saijax.play.arena") == "[]"
    assert _modules_loaded_by("saijax.learn.pipeline") == "[]"
    assert _modules_loaded_by("saijax.play.match_loop") == "[]"
