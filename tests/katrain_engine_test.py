"""KaTrain drives saijax's analysis engine: its own KataGoEngine and its own AI, headless.

KaTrain (``pip install katrain``, in the ``test`` extra) starts the engine
as its "custom" backend, the ``altcommand`` the README gives, here on the 5×5
zoo net. One test analyses a short game through KaTrain's ``Game`` (every
node's analysis arrives and KaTrain computes its point losses from it) and
ponders a position, then stops pondering; the other has KaTrain's default AI
play a whole game, both sides, with saijax as its analyser. Without KaTrain
the module is skipped, saying so.
"""

import json
import os
import shlex
import sys
import tempfile
import threading
import time

import pytest

# Kivy (KaTrain's GUI toolkit) must not parse pytest's command line, log to the
# console or write into the home directory; nothing here opens a window.
os.environ.setdefault("KIVY_NO_ARGS", "1")
os.environ.setdefault("KIVY_NO_CONSOLELOG", "1")
os.environ.setdefault("KIVY_NO_FILELOG", "1")
os.environ.setdefault("KIVY_HOME", tempfile.mkdtemp(prefix="kivy-home-"))

pytest.importorskip("katrain", reason="KaTrain is not installed: pip install katrain (the test extra has it)")

from katrain.core.ai import generate_ai_move  # noqa: E402
from katrain.core.base_katrain import KaTrainBase  # noqa: E402
from katrain.core.constants import AI_DEFAULT, OUTPUT_DEBUG  # noqa: E402
from katrain.core.engine import KataGoEngine  # noqa: E402
from katrain.core.game import Game  # noqa: E402
from pysgf import Move  # noqa: E402

from saijax.core import go  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
N = 5
VISITS = 8
# The README's rules for KaTrain: saijax's own, so no rules warning.
RULES = json.dumps({"scoringRule": "AREA", "koRule": "POSITIONAL", "multiStoneSuicideLegal": False})
TIMEOUT = 600.0  # the engine compiles its search on the first query, on a busy machine


class HeadlessKaTrain(KaTrainBase):
    """KaTrain's settings and logging without its GUI, keeping every log line."""

    def __init__(self):
        self.messages = []
        super().__init__(force_package_config=True, debug_level=OUTPUT_DEBUG)

    def log(self, message, level=0):
        self.messages.append((level, str(message)))


def altcommand() -> str:
    """What the README tells KaTrain users to put in its engine settings (a shell command)."""
    argv = [sys.executable, "-m", "saijax.analysis_engine", "--checkpoint=zoo:go5", f"--visits={VISITS}"]
    argv += ["--batch=4", "--min_batch=4"]
    return f"cd {shlex.quote(ROOT)} && exec {' '.join(shlex.quote(a) for a in argv)}"


@pytest.fixture(scope="module")
def katrain():
    return HeadlessKaTrain()


@pytest.fixture(scope="module")
def engine(katrain):
    config = dict(katrain.config("engine"))
    # max_time generous: KaTrain's default 8 s would cut a search that includes the first compile.
    config.update(altcommand=altcommand(), max_visits=2 * VISITS, fast_visits=VISITS, max_time=TIMEOUT)
    config.update(allow_recovery=False)
    engine = KataGoEngine(katrain, config)
    yield engine
    engine.shutdown(finish=False)


def wait_for(condition, what: str, engine):
    deadline = time.monotonic() + TIMEOUT
    while not condition():
        assert engine.check_alive(), f"the engine died while waiting for {what}"
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.05)


def new_game(katrain, engine) -> Game:
    return Game(katrain, engine, game_properties={"SZ": N, "KM": 7.5, "RU": RULES})


def test_katrain_analyses_a_game_and_ponders(katrain, engine):
    game = new_game(katrain, engine)
    for vertex in ("C3", "C4", "D4", "B3", "D2"):
        game.play(Move.from_gtp(vertex, player=game.current_node.next_player))
    nodes = list(game.root.nodes_in_tree)
    assert len(nodes) == 6
    wait_for(lambda: all(n.analysis_complete for n in nodes), "every node's analysis", engine)
    rules = go.GoRules(N)
    for node in nodes:
        root = node.analysis["root"]
        assert root["visits"] == 2 * VISITS and 0 <= root["winrate"] <= 1
        assert root["currentPlayer"] == node.next_player
        assert root["saiFairKomi"] == pytest.approx(root["saiAlpha"])  # Black's view, as KaTrain asks
        candidates = node.candidate_moves
        assert candidates and candidates[0]["order"] == 0
        for c in candidates:
            go.from_gtp(rules, c["move"])  # a vertex of the 5x5 board
            assert isinstance(c["pointsLost"], float) and 0 <= c["winrate"] <= 1
        assert len(node.policy) == N * N + 1
    # KaTrain reads the played moves' point losses from consecutive nodes.
    for node in nodes[1:]:
        assert node.points_lost is not None
    errors = [m for level, m in katrain.messages if "'error'" in m or "ERROR" in m]
    assert not errors, errors
    rule_warnings = [m for _, m in katrain.messages if "'warning'" in m and "'field': 'rules'" in m]
    assert not rule_warnings, rule_warnings

    # Pondering: many visits, partial reports, then KaTrain's terminate and the final reply.
    got = []
    engine.request_analysis(
        game.current_node, callback=lambda a, partial: got.append((partial, a["rootInfo"]["visits"])), ponder=True
    )
    wait_for(lambda: any(partial for partial, _ in got), "a partial ponder report", engine)
    engine.stop_pondering()
    wait_for(lambda: any(not partial for partial, _ in got), "the terminated ponder's final reply", engine)
    final = [v for partial, v in got if not partial]
    assert len(final) == 1 and final[0] >= max(v for partial, v in got if partial)
    wait_for(engine.is_idle, "an idle engine", engine)


def test_katrain_ai_plays_a_whole_game_with_saijax(katrain, engine):
    game = new_game(katrain, engine)
    settings = katrain.config(f"ai/{AI_DEFAULT}")
    played = []
    failure = []

    def play():
        try:
            passes = 0
            while passes < 2 and len(played) < 40:  # two passes end the game; 2·N² moves would end it at 50
                move, node = generate_ai_move(game, AI_DEFAULT, settings)
                assert node is game.current_node
                played.append(move.gtp())
                passes = passes + 1 if move.is_pass else 0
        except Exception as e:  # noqa: BLE001 - reported by the test below
            failure.append(e)

    thread = threading.Thread(target=play, daemon=True)
    thread.start()
    thread.join(TIMEOUT)
    assert not thread.is_alive(), f"KaTrain's AI did not finish its game: {played}"
    assert not failure, failure
    assert len(played) >= 4
    # Every move KaTrain played is legal under saijax's rules, in turn.
    rules = go.GoRules(N)
    state = go.init(rules, 7.5)
    for vertex in played:
        state = go.play(rules, state, vertex)
    assert played[-2:] == ["pass", "pass"] or len(played) == 40
