"""Arena tests: net vs GNU Go, lockstep net vs net, resignation, reports.

Every test uses the same tiny network architecture (1 block × 8 filters) on
5×5 and the same search config, so the arena's cached search functions are
compiled once per batch shape for the whole module (batch 1 for the GTP
games, batch 4 for the 8-game lockstep matches).
"""

import dataclasses
import json
import math

import jax
import pytest

from saijax import arena, elo, go, networks, search, sgf

R5 = go.GoRules(5)
VISITS = 8
CONFIG = search.SearchConfig(num_simulations=VISITS)


@pytest.fixture(scope="module")
def net():
    return networks.make_network(5, blocks=1, filters=8)


def _player(net, name, seed, **agent):
    variables = networks.init_network(net, jax.random.PRNGKey(seed))
    return arena.ArenaPlayer.from_network(name, net, variables, R5, CONFIG, **agent)


def _replayed_margin(path):
    """Black-minus-White Tromp–Taylor margin of an SGF's final position."""
    record = sgf.read_sgf(path)
    final = sgf.replay(record)[-1]
    return float(go.area_score(R5, final)) - record.komi, record


def test_game_against_gnugo_agrees_with_its_count(net, gnugo_path, tmp_path):
    del gnugo_path  # skip/fail logic only
    player = _player(net, "random", 0)
    results = arena.play_gtp_match(
        R5,
        player,
        arena.gnugo_arena_argv(level=1),
        games=2,
        komi=7.5,
        seed=0,
        resign_threshold=None,
        sgf_dir=tmp_path / "sgf",
        results_path=tmp_path / "gnugo.jsonl",
    )
    assert [r.black for r in results] == ["random", "gnugo-l1"]
    assert [r.white for r in results] == ["gnugo-l1", "random"]
    assert not any(r.resigned for r in results)
    finished = [r for r in results if r.end == "passes" and not r.engine_dead]
    assert finished, f"no game ended by two passes with nothing dead: {results}"
    for r in finished:
        engine = sgf.parse_result(r.engine_score)
        ours = {"black": 1, "white": -1, "draw": 0}[r.winner]
        assert engine.winner == ours, r
        assert engine.margin == pytest.approx(abs(r.margin)), r
    for r in results:
        # The SGF replays under saijax's rules to the recorded count.
        margin, record = _replayed_margin(r.sgf)
        assert margin == pytest.approx(r.margin)
        assert len(record.moves) == r.moves
        assert record.black_name == r.black and record.white_name == r.white
        net_moves = [c for c, colour in zip(record.comments, record.colours) if (colour == 1) == (r.black == "random")]
        assert net_moves and all(sgf.parse_move_comment(c)["visits"] == VISITS for c in net_moves)
    rows = elo.load_results(tmp_path / "gnugo.jsonl")
    assert [row["engine_score"] for row in rows] == [r.engine_score for r in results]


def test_lockstep_match_with_different_agents(net, tmp_path):
    side_a = _player(net, "lam0", 0, lambda_=0.0, mu=0.0)
    side_b = _player(net, "lam0.5", 1, lambda_=0.5, mu=0.0)
    path = tmp_path / "results.jsonl"
    results = arena.play_match(
        R5, side_a, side_b, games=8, komi=7.5, seed=3, sgf_dir=tmp_path / "sgf", results_path=path
    )
    rows = elo.load_results(path)
    assert len(rows) == 8
    with open(path) as f:
        raw = [json.loads(line) for line in f]
    assert sorted(r["game"] for r in raw) == list(range(8))
    assert all(list(r) == [f.name for f in dataclasses.fields(arena.GameResult)] for r in raw)
    for r in results:
        assert r.black == ("lam0" if r.game % 2 == 0 else "lam0.5")
        assert r.white == ("lam0.5" if r.game % 2 == 0 else "lam0")
        assert r.end in ("passes", "cap") and not r.resigned
        assert 1 <= r.moves <= R5.max_moves and (r.end == "passes" or r.moves == R5.max_moves)
        expected = "black" if r.margin > 0 else ("white" if r.margin < 0 else "draw")
        assert r.winner == expected
        margin, record = _replayed_margin(r.sgf)
        assert margin == pytest.approx(r.margin)
        assert record.result == sgf.game_result_string({"black": 1, "white": -1, "draw": 0}[r.winner], r.margin)
    # One compiled step for the whole match: both groups have 4 games.
    assert arena._advance_fn(R5)._cache_size() == 1
    try:
        fit = elo.fit_elo(rows)
    except ValueError as e:  # only the documented failure modes are acceptable
        assert "connected" in str(e) or "exist" in str(e) or "identif" in str(e), e
    else:
        assert set(fit.ratings) == {"lam0", "lam0.5"}
        assert all(math.isfinite(v) for v in fit.ratings.values())


def test_resignation_uses_the_score_estimate(net, tmp_path):
    side_a = _player(net, "a", 0)
    side_b = _player(net, "b", 1)
    results = arena.play_match(
        R5,
        side_a,
        side_b,
        games=8,
        komi=7.5,
        seed=1,
        resign_threshold=0.999,
        score_visits=VISITS,
        sgf_dir=tmp_path / "sgf",
    )
    resign_after = R5.num_points // 4
    for r in results:
        assert r.resigned and r.end == "resign"
        # Black is to move at ply 6 and is far from a 99.9% win at komi 7.5.
        assert r.moves == resign_after and r.winner == "white"
        assert math.isfinite(r.margin) and r.margin < 0
        assert r.score_estimate is not None and math.isfinite(r.score_estimate)
        if r.score_estimate < 0:
            assert r.margin == r.score_estimate
        else:
            assert r.margin == -0.5
        assert sgf.read_sgf(r.sgf).result == "W+R"
    # The estimates come from the trees, not a constant.
    assert len({r.score_estimate for r in results}) > 1


def test_cli_net_vs_net(net, tmp_path, capsys):
    del net
    path = tmp_path / "cli.csv"
    code = arena.main(
        [
            "--player=random",
            "--opponent=random",
            "--opponent_lambda_=0.5",
            "--games=8",
            "--board_size=5",
            f"--visits={VISITS}",
            "--komi=6.5",
            "--max_moves=50",
            f"--results={path}",
            "--quiet",
        ]
    )
    assert code == 0
    out = capsys.readouterr().out
    assert "random vs random[l=0.5,m=0]: 8 games" in out
    rows = elo.load_results(path)
    assert len(rows) == 8 and {r["komi"] for r in rows} == {6.5}
    assert {r["black"] for r in rows} == {"random", "random[l=0.5,m=0]"}


def _row(black, white, winner, margin, resigned=False):
    return {"black": black, "white": white, "winner": winner, "margin": margin, "resigned": resigned, "moves": 30}


def test_intervals_known_values():
    assert arena.wilson_interval(5, 10) == pytest.approx((0.2366, 0.7634), abs=1e-4)
    assert arena.clopper_pearson_interval(5, 10) == pytest.approx((0.1871, 0.8129), abs=1e-4)
    lo, hi = arena.clopper_pearson_interval(10, 10)
    assert hi == 1.0 and lo == pytest.approx(0.025 ** (1 / 10))
    lo, hi = arena.wilson_interval(0, 10)
    assert lo == 0.0 and hi == pytest.approx(0.2775, abs=1e-4)
    assert arena.wilson_interval(0, 0) == (0.0, 1.0)


def test_summarize_hand_made_table():
    games = [
        # A as black: 4 wins (by 3.5, 5.5, 0.5, R 2.0), 1 loss.
        _row("A", "B", "black", 3.5),
        _row("A", "B", "black", 5.5),
        _row("A", "B", "black", 0.5),
        _row("A", "B", "black", 2.0, resigned=True),
        _row("A", "B", "white", -1.5),
        # A as white: 2 wins (by 4.5, 6.5), 1 draw, 2 losses.
        _row("B", "A", "white", -4.5),
        _row("B", "A", "white", -6.5),
        _row("B", "A", "draw", 0.0),
        _row("B", "A", "black", 2.5),
        _row("B", "A", "black", 10.5, resigned=True),
        # Not A's games.
        _row("B", "C", "black", 1.5),
    ]
    s = arena.summarize(games, "A")
    assert s.opponents == ("B",)
    assert (s.overall.games, s.overall.wins, s.overall.draws, s.overall.losses) == (10, 6, 1, 3)
    assert s.overall.win_rate == pytest.approx(0.65)
    assert (s.black.wins, s.black.losses, s.black.win_rate) == (4, 1, pytest.approx(0.8))
    assert (s.white.wins, s.white.draws, s.white.losses, s.white.win_rate) == (2, 1, 2, pytest.approx(0.5))
    assert s.black.mean_win_margin == pytest.approx((3.5 + 5.5 + 0.5 + 2.0) / 4)
    assert s.white.mean_win_margin == pytest.approx((4.5 + 6.5) / 2)
    assert s.white.mean_margin == pytest.approx((4.5 + 6.5 + 0 - 2.5 - 10.5) / 5)
    assert s.wilson == pytest.approx(arena.wilson_interval(6.5, 10))
    assert s.wilson[0] < 0.65 < s.wilson[1] and s.clopper_pearson[0] < 0.65 < s.clopper_pearson[1]
    assert (s.resignations, s.counted) == (2, 8)
    b = arena.summarize(games, "B")
    assert b.overall.wins == 3 + 1 and b.overall.losses == 6
    report = arena.format_report(s)
    assert "A vs B: 10 games" in report and "65.0%" in report and "80.0%" in report
    with pytest.raises(ValueError, match="none of the games"):
        arena.summarize(games, "nobody")


def test_results_table_csv_roundtrip_and_header_check(tmp_path):
    rows = [
        arena.GameResult(
            black="x",
            white="y",
            winner=w,
            margin=m,
            resigned=False,
            moves=12,
            komi=7.5,
            handicap=0,
            end="passes",
            score_estimate=None,
            engine_score="",
            engine_dead="",
            sgf="",
            game=i,
            seed=0,
        )
        for i, (w, m) in enumerate([("black", 2.5), ("white", -0.5), ("draw", 0.0)])
    ]
    path = tmp_path / "t.csv"
    arena.append_results(path, rows[:2])
    arena.append_results(path, rows[2:])
    back = elo.load_results(path)
    assert [r["winner"] for r in back] == ["black", "white", "draw"]
    assert [r["margin"] for r in back] == [2.5, -0.5, 0.0] and back[0]["score_estimate"] is None
    assert arena.summarize(back, "x").overall.win_rate == pytest.approx(0.5)
    bad = tmp_path / "bad.csv"
    bad.write_text("black,white,winner\nx,y,black\n")
    with pytest.raises(ValueError, match="header"):
        arena.append_results(bad, rows)


def test_bad_settings_are_rejected(net):
    a, b = _player(net, "same", 0), _player(net, "same", 1)
    with pytest.raises(ValueError, match="distinct names"):
        arena.play_match(R5, a, b, games=2)
    b = dataclasses.replace(b, name="other")
    with pytest.raises(ValueError, match="komi has 3 values"):
        arena.play_match(R5, a, b, games=2, komi=[7.5, 6.5, 5.5])
    with pytest.raises(ValueError, match="handicap=2 is not available"):
        arena.play_match(R5, a, b, games=2, handicap=2)
    with pytest.raises(ValueError, match="resign_threshold"):
        arena.play_match(R5, a, b, games=2, resign_threshold=1.5)
    with pytest.raises(ValueError, match="lambda_ >= mu"):
        _player(net, "c", 0, lambda_=0.2, mu=0.5)


def test_cli_missing_checkpoint_is_one_error_line(tmp_path, capsys):
    missing = tmp_path / "no-run-here"
    for player, opponent in ((missing, "uniform"), ("random", missing)):
        code = arena.main(
            [
                f"--player={player}",
                f"--opponent={opponent}",
                "--games=2",
                "--board_size=5",
                "--blocks=1",
                "--filters=8",
                "--quiet",
            ]
        )
        assert code == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert err[-1].startswith("saijax.arena: error:") and str(missing) in err[-1]
