"""Tests for the KataGo-protocol analysis engine (saijax.gtp.kata_engine, kata_query, batch_analysis).

Most checks run one in-process engine over the 5×5 zoo net ``go5`` (no
ownership head), shared by the module so its search compiles once; two slow
checks compile their own: the ownership fields on ``go7-sharp`` (which has
the head), and bad and good lines piped through the real command line. The real-client tests with
KaTrain are in ``tests/katrain_engine_test.py``.
"""

import json
import math
import os
import random
import re
import subprocess
import sys

import numpy as np
import pytest

from saijax.cli import analysis_engine as analysis_cli
from saijax.cli import player as player_cli
from saijax.core import go, sgf
from saijax.gtp import batch_analysis, kata_engine
from saijax.gtp.engine import GtpEngine

VISITS = 8
BATCH = 4
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


@pytest.fixture(scope="module")
def go5():
    return player_cli.load_player("zoo:go5", board_size=None)


class Replies:
    """An engine with its replies kept in a list."""

    def __init__(self, player, **kwargs):
        self.replies = []
        self.engine = kata_engine.AnalysisEngine(GtpEngine(player, visits=VISITS), emit=self.replies.append, **kwargs)

    def send(self, obj) -> list[dict]:
        """Handles one line (a dict is sent as JSON); returns the replies it gave at once."""
        start = len(self.replies)
        self.engine.handle_line(obj if isinstance(obj, str) else json.dumps(obj))
        return self.replies[start:]

    def run(self) -> list[dict]:
        start = len(self.replies)
        self.engine.run_pending()
        return self.replies[start:]


@pytest.fixture(scope="module")
def shared_engine(go5):
    return Replies(go5, batch=BATCH, min_batch=BATCH)


@pytest.fixture
def engine(shared_engine):
    yield shared_engine
    # A failed test must not leave a long search pending for the next one.
    shared_engine.send({"id": "cleanup", "action": "terminate_all"})


def query(**fields):
    base = {"id": "q", "moves": [], "komi": 7.5, "boardXSize": 5, "boardYSize": 5, "rules": "tromp-taylor"}
    base["rules"] = {"koRule": "POSITIONAL", "scoringRule": "AREA", "multiStoneSuicideLegal": False}
    base.update(fields)
    return base


def finals(replies, query_id=None):
    return {
        r["turnNumber"]: r
        for r in replies
        if "turnNumber" in r and not r["isDuringSearch"] and (query_id is None or r["id"] == query_id)
    }


def test_fields_of_a_reply(engine):
    moves = [["B", "C3"], ["W", "D4"]]
    q = query(
        id="f", moves=moves, analyzeTurns=[0, 1, 2], maxVisits=2 * VISITS, includePolicy=True, includePVVisits=True
    )
    assert engine.send(q) == []  # the exact rules object: no warning
    got = finals(engine.run(), "f")
    assert sorted(got) == [0, 1, 2]
    for turn, reply in got.items():
        root = reply["rootInfo"]
        assert root["currentPlayer"] == ("B" if turn % 2 == 0 else "W")
        assert root["visits"] == 2 * VISITS == sum(m["visits"] for m in reply["moveInfos"])
        assert [m["order"] for m in reply["moveInfos"]] == list(range(len(reply["moveInfos"])))
        for m in reply["moveInfos"]:
            assert 0 <= m["winrate"] <= 1 and 0 <= m["lcb"] <= m["winrate"] + 1e-12 and 0 <= m["prior"] <= 1
            assert m["scoreMean"] == m["scoreLead"] and m["utility"] == pytest.approx(2 * m["winrate"] - 1)
            assert m["pv"][0] == m["move"] and len(m["pvVisits"]) == len(m["pv"]) and m["pvVisits"][0] <= m["visits"]
            assert m["scoreStdev"] > 0
        policy = np.asarray(reply["policy"])
        assert policy.shape == (26,)
        assert sum(policy >= 0) == 26 - turn  # the stones' points are -1
        assert policy[policy >= 0].sum() == pytest.approx(1.0, abs=1e-4)
        # SAI's sigmoid: the fair komi is where the win-rate curve crosses 1/2, Black's α.
        assert root["saiFairKomi"] == pytest.approx(root["saiAlpha"])
        curve = root["saiWinrateByKomi"]
        assert curve and all(b[0] - a[0] == pytest.approx(0.5) for a, b in zip(curve, curve[1:]))
        assert all(a[1] >= b[1] for a, b in zip(curve, curve[1:]))  # Black's win rate falls with the komi
        for komi, w in curve:
            z = root["saiBeta"] * (root["saiAlpha"] - komi)
            assert w == pytest.approx(1 / (1 + math.exp(-z)))
    # The policy's -1 entries are the occupied points, C3 and D4 after turn 2.
    policy = got[2]["policy"]
    rules = go.GoRules(5)
    assert [go.to_gtp(rules, i) for i, p in enumerate(policy) if p < 0] == ["D4", "C3"]


def test_views_flip_winrate_lead_and_alpha(engine):
    q = query(id="b", moves=[["B", "C3"]], maxVisits=VISITS)
    engine.send(q)
    black = finals(engine.run(), "b")[1]
    engine.send({**q, "id": "s", "overrideSettings": {"reportAnalysisWinratesAs": "SIDETOMOVE"}})
    side = finals(engine.run(), "s")[1]
    assert black["rootInfo"]["currentPlayer"] == "W"
    assert black["rootInfo"]["winrate"] == pytest.approx(1 - side["rootInfo"]["winrate"])
    assert black["rootInfo"]["scoreLead"] == pytest.approx(-side["rootInfo"]["scoreLead"])
    assert black["rootInfo"]["saiAlpha"] == pytest.approx(-side["rootInfo"]["saiAlpha"])
    assert black["rootInfo"]["saiFairKomi"] == pytest.approx(side["rootInfo"]["saiFairKomi"])
    for a, b in zip(black["moveInfos"], side["moveInfos"]):
        assert a["move"] == b["move"] and a["winrate"] == pytest.approx(1 - b["winrate"])


def _kata_info(line: str) -> dict[str, dict]:
    moves = {}
    for part in re.split(r"(?=\binfo move )", line.strip()):
        if not part.startswith("info move"):
            continue
        tokens = part.split()
        fields = dict(zip(tokens[1:-1:2], tokens[2::2]))
        pv = tokens[tokens.index("pv") + 1 :]
        moves[fields["move"]] = {k: fields[k] for k in ("visits", "winrate", "scoreLead", "prior", "order")}
        moves[fields["move"]]["pv"] = pv
    return moves


def test_same_root_values_as_gtp_kata_analyze(go5, engine):
    """A position analysed in a batch with others gives kata-analyze's numbers for the same seed and visits."""
    gtp = GtpEngine(go5, visits=VISITS, seed=0, komi=7.5)
    for line in ("play B C3", "play W D4", "play B D3"):
        assert gtp.handle(line).startswith("=")
    chunks = gtp.analysis_rounds("kata-analyze 0", max_rounds=2)
    want = _kata_info(chunks[2])  # the info line after round 2: both rounds pooled
    fresh = Replies(go5, batch=BATCH, min_batch=BATCH, seed=0)
    moves = [["B", "C3"], ["W", "D4"], ["B", "D3"]]
    fresh.send(
        query(
            id="k",
            moves=moves,
            analyzeTurns=[0, 1, 2, 3],
            maxVisits=2 * VISITS,
            overrideSettings={"reportAnalysisWinratesAs": "SIDETOMOVE"},
        )
    )
    got = finals(fresh.run(), "k")[3]
    assert {m["move"] for m in got["moveInfos"]} == set(want)
    for m in got["moveInfos"]:
        w = want[m["move"]]
        assert m["visits"] == int(w["visits"]) and m["order"] == int(w["order"])
        assert m["winrate"] == pytest.approx(float(w["winrate"]), abs=2e-6)
        assert m["scoreLead"] == pytest.approx(float(w["scoreLead"]), abs=2e-5)
        assert m["prior"] == pytest.approx(float(w["prior"]), abs=2e-6)
        assert m["pv"] == w["pv"]
    # And the root's sigmoid is the GTP engine's root evaluation of that position.
    out = gtp.search(gtp.state)
    assert got["rootInfo"]["saiAlpha"] == pytest.approx(float(out.root_alpha[0]), abs=1e-5)
    assert got["rootInfo"]["saiBeta"] == pytest.approx(float(out.root_beta[0]), abs=1e-5)
    assert got["rootInfo"]["rawWinrate"] == pytest.approx(float(out.root_winrate[0]), abs=1e-6)


def test_bad_input_gets_one_reply_and_the_engine_goes_on(engine):
    cases = [
        ("this is not json", None, None),
        ('{"id": "t", "moves": [', None, None),
        ("[1, 2, 3]", None, "a query must be a JSON object"),
        (json.dumps(query(id=None) | {"id": 3}), "id", "id must be a string"),
        (json.dumps({k: v for k, v in query().items() if k != "id"}), "id", '"id"'),
        (json.dumps(query(id="m", moves=[["B", "C3"], ["W", "C3"]])), "moves", "Illegal move at turn 1: W C3"),
        (json.dumps(query(id="z", moves=[["B", "Z9"]])), "moves", "'Z9'"),
        (json.dumps(query(id="x", boardXSize=19)), "boardXSize", "board size 5, got 19"),
        (json.dumps(query(id="v", maxVisits=0)), "maxVisits", "maxVisits"),
        (json.dumps(query(id="v2", maxVisits=-3)), "maxVisits", "maxVisits"),
        (json.dumps(query(id="v3", maxVisits=2.5)), "maxVisits", "maxVisits"),
        ('{"id":"k","moves":[],"boardXSize":5,"boardYSize":5,"komi":NaN}', "komi", "finite"),
        ('{"id":"k2","moves":[],"boardXSize":5,"boardYSize":5,"komi":1e999}', "komi", "finite"),
        (json.dumps(query(id="k3", komi=6.3)), "komi", "6.3"),
        (json.dumps(query(id="k4", komi=1e308)), "komi", "1e+308"),
        (json.dumps(query(id="r", rules="klingon")), "rules", "klingon"),
        (json.dumps(query(id="t", analyzeTurns=[5])), "analyzeTurns", "turn 5"),
        (json.dumps(query(id="a", avoidMoves=[{"player": "B", "moves": ["C3"]}])), "avoidMoves", "untilDepth"),
        (json.dumps(query(id="o", overrideSettings={"lambda": 2.0})), "overrideSettings", "lambda"),
        (json.dumps(query(id="o2", overrideSettings={"algorithm": "alphabeta"})), "overrideSettings", "algorithm"),
        (json.dumps({"id": "u", "action": "explode"}), "action", "explode"),
        (json.dumps({"id": "u2", "action": "terminate"}), "terminateId", "terminateId"),
    ]
    for line, field, words in cases:
        replies = engine.send(line)
        assert len(replies) == 1, (line, replies)
        assert "error" in replies[0] and "internal error" not in replies[0]["error"], replies
        assert replies[0].get("field") == field, (line, replies)
        if words:
            assert words in replies[0]["error"], (line, replies)
        assert engine.engine.pending == 0
    # An unknown field is a warning naming it; the query still runs.
    replies = engine.send(query(id="w", colour_of_the_sky="blue"))
    assert replies == [
        {"warning": "Unexpected or unused field 'colour_of_the_sky'", "field": "colour_of_the_sky", "id": "w"}
    ]
    assert list(finals(engine.run(), "w")) == [0]


def test_rules_saijax_cannot_play_are_named_and_played_as_saijax(engine):
    replies = engine.send(query(id="j", rules="japanese"))
    warnings = [r["warning"] for r in replies]
    assert all(r["field"] == "rules" and r["id"] == "j" for r in replies)
    assert any("scoringRule TERRITORY" in w and "AREA" in w for w in warnings)
    assert any("koRule SIMPLE" in w and "POSITIONAL" in w for w in warnings)
    assert list(finals(engine.run(), "j")) == [0]
    assert engine.send(query(id="ogs", rules="chinese-ogs")) == []  # no handicap: the bonus does not apply
    # The 5x5 net has no ownership head: a warning naming the field, and the field left out.
    warnings = engine.send(query(id="noown", includeOwnership=True))
    assert [(w["field"], w["id"]) for w in warnings] == [("includeOwnership", "noown")]
    assert "no ownership head" in warnings[0]["warning"]
    assert "ownership" not in finals(engine.run(), "noown")[0]
    warnings = engine.send(query(id="h", rules="chinese-ogs", initialStones=[["B", "C3"]], initialPlayer="W"))
    assert [w["field"] for w in warnings] == ["rules"] and "whiteHandicapBonus N" in warnings[0]["warning"]
    engine.run()


def test_priority_first_and_reports_during_search_then_terminate(engine):
    low = query(id="low", moves=[["B", "C3"], ["W", "D4"], ["B", "D3"]], analyzeTurns=[0, 1, 2, 3], maxVisits=VISITS)
    high = query(id="high", moves=[["B", "B2"]], analyzeTurns=[0, 1], maxVisits=VISITS, priority=5)
    engine.send(low)
    engine.send(high)
    order = [(r["id"], r["turnNumber"]) for r in engine.run() if "turnNumber" in r]
    assert order[:2] == [("high", 0), ("high", 1)] and sorted(order[2:]) == [("low", t) for t in range(4)]

    ponder = query(id="p", moves=[["B", "C3"]], maxVisits=10_000_000, reportDuringSearchEvery=1e-6)
    engine.send(ponder)
    assert engine.engine.step() and engine.engine.step()
    partial = [r for r in engine.replies[-2:] if r.get("isDuringSearch")]
    assert [r["rootInfo"]["visits"] for r in partial] == [VISITS, 2 * VISITS]  # one report a round
    replies = engine.send({"id": "stop", "action": "terminate", "terminateId": "p"})
    assert replies[0] == {"id": "stop", "action": "terminate", "terminateId": "p"}
    assert (
        len(replies) == 2 and replies[1]["isDuringSearch"] is False and replies[1]["rootInfo"]["visits"] >= 2 * VISITS
    )
    assert engine.engine.pending == 0
    # Terminated before any round: noResults, as KataGo.
    engine.send(query(id="n1", analyzeTurns=[0]))
    engine.send(query(id="n2", moves=[["B", "C3"]], analyzeTurns=[0, 1]))
    replies = engine.send({"id": "all", "action": "terminate_all", "turnNumbers": [0]})
    assert replies[0]["action"] == "terminate_all"
    assert sorted((r["id"], r["turnNumber"]) for r in replies[1:]) == [("n1", 0), ("n2", 0)]
    assert all(r["noResults"] and not r["isDuringSearch"] for r in replies[1:])
    assert list(finals(engine.run(), "n2")) == [1]
    # maxTime ends a position's search after its first round that passes it.
    engine.send(query(id="t", maxVisits=10_000_000, overrideSettings={"maxTime": 1e-6}))
    assert finals(engine.run(), "t")[0]["rootInfo"]["visits"] == VISITS
    assert engine.send({"id": "ver", "action": "query_version"})[0]["version"]
    assert engine.send({"id": "cc", "action": "clear_cache"}) == [{"id": "cc", "action": "clear_cache"}]


def test_avoid_and_allow_moves_restrict_the_root(engine):
    everything_but = [m for m in ("C3", "B3", "D3", "C2", "C4")]
    engine.send(query(id="av", avoidMoves=[{"player": "B", "moves": everything_but, "untilDepth": 1}], maxVisits=16))
    engine.send(query(id="al", allowMoves=[{"player": "B", "moves": ["B2", "pass"], "untilDepth": 1}], maxVisits=16))
    engine.send(query(id="other", avoidMoves=[{"player": "W", "moves": ["C3"], "untilDepth": 1}], maxVisits=16))
    got = finals(engine.run(), None)
    replies = {r["id"]: r for r in engine.replies if r.get("id") in ("av", "al", "other") and "moveInfos" in r}
    assert not {m["move"] for m in replies["av"]["moveInfos"]} & set(everything_but)
    assert {m["move"] for m in replies["al"]["moveInfos"]} <= {"B2", "pass"}
    assert "C3" in {m["move"] for m in replies["other"]["moveInfos"]}  # White's list: not the root's player
    assert got


def test_fuzz_random_and_truncated_lines(engine):
    """Random, truncated and mutated lines: one error at most per line, never an internal error, and
    every accepted query ends with one final reply per turn."""
    rng = random.Random(66)
    good = json.dumps(query(id="g", moves=[["B", "C3"], ["W", "D4"]], maxVisits=VISITS))
    values = [None, True, -1, 0, 2.5, 1e308, "", "B", "pass", "C3", [], [[]], [["B"]], {}, {"a": 1}, [["W", "A1"]]]
    fields = list(json.loads(good)) + ["analyzeTurns", "avoidMoves", "allowMoves", "priority", "overrideSettings"]
    fields += ["initialStones", "initialPlayer", "includeOwnership", "reportDuringSearchEvery", "action"]
    accepted = {}
    for i in range(300):
        kind = i % 3
        if kind == 0:
            line = good[: rng.randrange(len(good))]
        elif kind == 1:
            line = "".join(chr(rng.randrange(1, 0x250)) for _ in range(rng.randrange(1, 40)))
        else:
            obj = json.loads(good)
            obj["id"] = f"fz{i}"
            for _ in range(rng.randrange(1, 3)):
                obj[rng.choice(fields)] = rng.choice(values)
            if obj.get("action") is not None:
                obj["action"] = rng.choice(["terminate", "query_version", "nope", 3])
            line = json.dumps(obj)
        pending = engine.engine.pending
        replies = engine.send(line)
        errors = [r for r in replies if "error" in r]
        assert len(errors) <= 1, (line, replies)
        assert not any("internal error" in r["error"] for r in errors), (line, errors)
        if kind != 2:
            assert len(errors) == 1 or line.strip() == "", (line, replies)
        if errors:
            assert engine.engine.pending <= pending
        elif kind == 2 and "action" not in json.loads(line):
            accepted[json.loads(line)["id"]] = engine.engine.pending - pending
    done = finals(engine.run())
    assert engine.engine.pending == 0
    ends = {}
    for r in engine.replies:
        if str(r.get("id", "")).startswith("fz") and "turnNumber" in r and not r["isDuringSearch"]:
            ends[r["id"]] = ends.get(r["id"], 0) + 1
    assert accepted and all(ends.get(k, 0) == n for k, n in accepted.items() if n), (accepted, ends)
    assert done is not None


def test_sgf_batch_analysis_writes_csv_and_annotated_sgf(engine, tmp_path):
    rules = go.GoRules(5)
    games = tmp_path / "games"
    games.mkdir()
    moves = [go.from_gtp(rules, v) for v in ("C3", "C4", "D4", "B3", "pass", "pass")]
    sgf.write_sgf(sgf.GameRecord(size=5, komi=7.5, moves=tuple(moves)), games / "one.sgf")
    sgf.write_sgf(sgf.GameRecord(size=5, komi=0.5, moves=tuple(moves[:3])), games / "two.sgf")
    (games / "broken.sgf").write_text("(;GM[1]SZ[5];B[cc];W[cc])")
    out = tmp_path / "out"
    written = batch_analysis.analyse_games(engine.engine, batch_analysis.sgf_paths([str(games)]), str(out))
    assert sorted(written) == ["one", "two"]
    import csv

    rows = list(csv.DictReader(open(out / "one.csv")))
    assert [r["move"] for r in rows] == [str(i) for i in range(1, 7)]
    assert [r["played"] for r in rows] == ["C3", "C4", "D4", "B3", "pass", "pass"]
    assert tuple(rows[0]) == batch_analysis.CSV_COLUMNS
    for r in rows:
        assert r["best"] and 0 <= float(r["winrate_before"]) <= 1
        lead_b, lead_a = float(r["lead_before"]), float(r["lead_after"])
        sign = 1 if r["colour"] == "B" else -1
        assert float(r["point_loss"]) == pytest.approx(sign * (lead_b - lead_a), abs=1e-6)
        assert float(r["fair_komi"]) == pytest.approx(float(r["alpha"]))
    for a, b in zip(rows, rows[1:]):
        assert a["winrate_after"] == b["winrate_before"]
    record = sgf.read_sgf(str(out / "one.sgf"))
    assert record.moves == tuple(moves)
    assert all(c and c.startswith("saijax: ") for c in record.comments)
    assert f"point loss {float(rows[1]['point_loss']):+.1f}" in record.comments[1]
    assert not (out / "broken.csv").exists()


def test_command_line_flags_that_cannot_be_used(tmp_path):
    # One error line, exit code 2, before anything is loaded or compiled.
    assert analysis_cli.main(["--sgf", str(tmp_path)]) == 2
    assert analysis_cli.main(["--checkpoint=zoo:go5", "--sgf", str(tmp_path / "none"), "--out", str(tmp_path)]) == 2
    assert analysis_cli.main(["--checkpoint=zoo:go5", "--max_visits=0"]) == 2


@pytest.mark.slow  # a process of its own: loads the net and compiles its search again
def test_command_line_pipe_bad_lines_and_end_of_input():
    lines = [
        "garbage",
        json.dumps(query(id="bad", moves=[["B", "C3"], ["W", "C3"]])),
        json.dumps(query(id="ok", moves=[["B", "C3"]], analyzeTurns=[0, 1], maxVisits=VISITS)),
        json.dumps({"id": "ver", "action": "query_version"}),
    ]
    argv = [
        sys.executable,
        "-m",
        "saijax.analysis_engine",
        "--checkpoint=zoo:go5",
        f"--visits={VISITS}",
        "--batch=2",
        "--min_batch=2",
    ]
    proc = subprocess.run(
        argv, input="\n".join(lines) + "\n", capture_output=True, text=True, cwd=ROOT, timeout=600, check=False
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    replies = [json.loads(line) for line in proc.stdout.splitlines()]
    assert sum("error" in r for r in replies) == 2
    assert [r for r in replies if r.get("id") == "bad"][0]["field"] == "moves"
    assert sorted(r["turnNumber"] for r in replies if r.get("id") == "ok") == [0, 1]
    assert "saijax.analysis_engine: zoo entry go5" in proc.stderr


@pytest.mark.slow  # compiles go7-sharp's search and its ownership head
def test_ownership_fields_with_go7_sharp():
    player = player_cli.load_player("zoo:go7-sharp", board_size=None)
    kept = Replies(player, batch=4, min_batch=4)
    q = {
        "id": "own",
        "moves": [["B", "D4"], ["W", "C3"]],
        "komi": 8.5,
        "boardXSize": 7,
        "boardYSize": 7,
        "analyzeTurns": [2],
        "maxVisits": VISITS,
        "includeOwnership": True,
        "includeMovesOwnership": True,
    }
    assert kept.send(q) == []
    kept.send({**q, "id": "side", "overrideSettings": {"reportAnalysisWinratesAs": "SIDETOMOVE"}})
    kept.send({**q, "id": "w", "analyzeTurns": [1]})
    got = {r["id"]: r for r in kept.run()}
    black, side = got["own"], got["side"]
    own = np.asarray(black["ownership"])
    assert own.shape == (49,) and np.all(np.abs(own) <= 1)
    np.testing.assert_allclose(own, side["ownership"])  # Black to move at turn 2: the same view
    d4 = 3 * 7 + 3  # row 3 from the top, column D: Black's stone
    assert own[d4] > 0.5
    white_view = np.asarray(got["w"]["ownership"])  # turn 1: White to move, reported for Black
    assert white_view[d4] > 0.5
    for m in black["moveInfos"]:
        if m["move"] != "pass":
            assert len(m["ownership"]) == 49
