"""Arena tests: lockstep net vs net, match settings, resignation, the CLI.

Every test uses the same tiny network architecture (1 block × 8 filters) on
5×5 and the same search config, so the arena's cached search functions are
compiled once per batch shape for the whole module (batch 4 for the 8-game
lockstep matches).
"""

import dataclasses
import json
import math
import os
import subprocess
import sys

import jax
import numpy as np
import pytest

from saijax.analysis import elo, results
from saijax.cli import arena as arena_cli
from saijax.core import go, networks, search, sgf
from saijax.play import arena, control, match, match_loop, players, styles

R5 = go.GoRules(5)
VISITS = 8
CONFIG = search.SearchConfig(num_simulations=VISITS)


@pytest.fixture(scope="module")
def net():
    return networks.make_network(5, blocks=1, filters=8)


def _player(net, name, seed, **agent):
    variables = networks.init_network(net, jax.random.PRNGKey(seed))
    return players.Player.from_network(name, net, variables, config=CONFIG, agent=search.Agent(**agent))


def _replayed_margin(path):
    """Black-minus-White Tromp–Taylor margin of an SGF's final position."""
    record = sgf.read_sgf(path)
    final = sgf.replay(record)[-1]
    return float(go.area_score(R5, final)) - record.komi, record


def test_lockstep_match_with_different_agents(net, tmp_path):
    side_a = _player(net, "lam0", 0, lambda_=0.0, mu=0.0)
    side_b = _player(net, "lam0.5", 1, lambda_=0.5, mu=0.0)
    path = tmp_path / "results.jsonl"
    settings = match.MatchSettings(games=8, komi=7.5, seed=3, sgf_dir=tmp_path / "sgf", results_path=path)
    compiled = match_loop.advance_fn(R5)._cache_size()  # other tests' matches may have compiled other shapes
    games = arena.play_match(side_a, side_b, settings)
    rows = results.read_results(path)
    assert len(rows) == 8
    with open(path) as f:
        raw = [json.loads(line) for line in f]
    assert sorted(r["game"] for r in raw) == list(range(8))
    assert all(list(r) == [f.name for f in dataclasses.fields(results.GameResult)] for r in raw)
    for r in games:
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
    assert match_loop.advance_fn(R5)._cache_size() - compiled <= 1
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
    settings = match.MatchSettings(
        games=8, komi=7.5, seed=1, resign_threshold=0.999, score_visits=VISITS, sgf_dir=tmp_path / "sgf"
    )
    games = arena.play_match(side_a, side_b, settings)
    resign_after = R5.num_points // 4
    for r in games:
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
    assert len({r.score_estimate for r in games}) > 1
    # A fixed scorer estimates every resigned game instead of the resigning net.
    scorer = _player(net, "scorer", 7)
    scored = arena.play_match(side_a, side_b, settings, scorer=scorer)
    assert [r.moves for r in scored] == [r.moves for r in games]
    assert [r.score_estimate for r in scored] != [r.score_estimate for r in games]


def test_cli_net_vs_net(net, tmp_path, capsys):
    del net
    path = tmp_path / "cli.csv"
    code = arena_cli.main(
        [
            "--player=random",
            "--opponent=random",
            "--opponent_lambda_=0.5",
            "--blocks=1",
            "--filters=8",
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
    rows = results.read_results(path)
    assert len(rows) == 8 and {r.komi for r in rows} == {6.5}
    assert {r.black for r in rows} == {"random", "random[l=0.5,m=0]"}
    # Deterministic players (gumbel_scale 0 by default): the games differ by
    # their random openings (4 moves by default), the same within a colour pair.
    assert len({(r.margin, r.moves) for r in rows}) > 1


@pytest.mark.slow  # about 40-65 s: in `make test-slow` (CI runs both)
def test_cli_player_defaults_and_opponent_fallback(monkeypatch, capsys):
    seen = {}

    def fake_match(a, b, settings, **kwargs):
        seen["match"] = (a, b, settings)
        return [results.GameResult(black=a.name, white=b.name, winner="black", margin=1.0, moves=1, komi=7.5, game=0)]

    monkeypatch.setattr(arena, "play_match", fake_match)
    argv = ["--player=random", "--opponent=random", "--games=2", "--board_size=5", "--blocks=1", "--filters=8"]
    assert arena_cli.main([*argv, "--quiet"]) == 0
    me, them, settings = seen["match"]
    assert me.config == search.SearchConfig(num_simulations=128, gumbel_scale=0.0)
    assert me.agent == search.Agent() and them.agent == search.Agent()
    assert settings.opening_moves == 4 and them.name == "random-2"
    flags = ["--visits=16", "--lambda_=0.5", "--gumbel_scale=1", "--opponent_mu=0.25", "--opening_moves=0"]
    assert arena_cli.main([*argv, *flags, "--quiet"]) == 0
    me, them, settings = seen["match"]
    assert me.config.num_simulations == them.config.num_simulations == 16
    assert me.config.gumbel_scale == them.config.gumbel_scale == 1.0
    assert me.agent == search.Agent(0.5, 0.0) and them.agent == search.Agent(0.5, 0.25)
    assert (me.name, them.name) == ("random[l=0.5,m=0]", "random[l=0.5,m=0.25]")
    assert settings.opening_moves == 0
    capsys.readouterr()
    for flags, words in [
        (["--opponent_visits=0"], "--opponent_visits=0"),
        (["--gumbel_scale=-1"], "--gumbel_scale=-1"),
        (["--opponent_mu=0.5"], "--opponent_mu=0.5"),
        (["--player=gnugo:5"], "an engine can only be the opponent"),
        (["--opponent=gnugo:x"], "gnugo:x"),
    ]:
        assert arena_cli.main([*argv, *flags]) == 2
        assert words in capsys.readouterr().err


def test_cli_sets_position_control_for_either_side(monkeypatch, capsys):
    seen = {}

    def fake_match(a, b, settings, **kwargs):
        seen["players"] = (a, b)
        return [results.GameResult(black=a.name, white=b.name, winner="black", margin=1.0, moves=1, komi=7.5, game=0)]

    monkeypatch.setattr(arena, "play_match", fake_match)
    argv = ["--player=random", "--opponent=random", "--games=2", "--board_size=5", f"--visits={VISITS}", "--quiet"]
    argv += ["--blocks=1", "--filters=8"]
    code = arena_cli.main([*argv, "--control=C", "--control_option=gentleness=1", "--opponent_control=endgame"])
    assert code == 0
    me, them = seen["players"]
    assert me.control == control.ControlConfig(method="C", gentleness=1.0) and me.name == "random[C]"
    assert me.config == search.SearchConfig(num_simulations=VISITS, algorithm="puct", c_puct=10.0, gumbel_scale=0.0)
    assert them.control == control.ControlConfig(method="endgame") and them.name == "random[endgame]"
    # The endgame keeps the search; the opponent's control is its own, not the player's.
    assert them.config == search.SearchConfig(num_simulations=VISITS, gumbel_scale=0.0)
    capsys.readouterr()
    for flags, word in [
        (["--control=C", "--control_option=gentleness=0"], "gentleness"),
        (["--control=E"], "method"),
        (["--opponent_control=B", "--opponent_control_option=gamma=x"], "gamma"),
    ]:
        assert arena_cli.main([*argv, *flags]) == 2
        assert word in capsys.readouterr().err
    assert arena_cli.main([*argv[:1], "--opponent=uniform", *argv[2:], "--opponent_control=C"]) == 2
    assert "--opponent_control needs a net opponent" in capsys.readouterr().err


def test_bad_settings_are_rejected(net):
    a, b = _player(net, "same", 0), _player(net, "same", 1)
    with pytest.raises(ValueError, match="distinct names"):
        arena.play_match(a, b, match.MatchSettings(games=2))
    b = b.replace(name="other")
    with pytest.raises(ValueError, match="komi has 3 values"):
        match.MatchSettings(games=2, komi=[7.5, 6.5, 5.5])
    with pytest.raises(ValueError, match="handicap=2 is not available"):
        arena.play_match(a, b, match.MatchSettings(games=2, handicap=2))
    with pytest.raises(ValueError, match="resign_threshold"):
        match.MatchSettings(games=2, resign_threshold=1.5)
    for komi in (7.3, float("nan"), float("inf"), 20000.5, "7.5", True, (7.5, 6.3)):
        with pytest.raises(ValueError, match="MatchSettings.komi must be"):
            match.MatchSettings(games=2, komi=komi)
    assert match.MatchSettings(games=2, komi=(-3, 6.5)).komis() == (-3.0, 6.5)
    with pytest.raises(ValueError, match="MatchSettings.handicap"):
        match.MatchSettings(games=2, handicap=(0, -1))
    with pytest.raises(ValueError, match="MatchSettings.games"):
        match.MatchSettings(games=0)
    with pytest.raises(ValueError, match="lambda"):
        _player(net, "bad", 0, lambda_=0.2, mu=0.5)
    other = players.random_player(7, blocks=1, filters=8)
    with pytest.raises(ValueError, match="7x7"):
        arena.play_match(a, other, match.MatchSettings(games=2))


def test_colour_relative_komi_and_per_game_handicap(net, tmp_path):
    settings = match.MatchSettings(games=4)
    assert settings.side_a_black().tolist() == [True, False, True, False]
    komi = match.colour_relative_komi(7.5, 3.0, settings.side_a_black())
    assert komi == (10.5, 4.5, 10.5, 4.5)
    assert match.MatchSettings(games=2, handicap=(0, 1)).komis() == (7.5, 0.5)
    # Groups: (A Black, B Black) x (Black first, White first), sorted by handicap.
    mixed = match.MatchSettings(games=6, handicap=(2, 0, 3, 2, 0, 1))
    groups = [g.tolist() for g in match_loop.lockstep_groups(mixed)]
    assert groups == [[4], [0, 2], [1, 5], [3]]
    # Per-game komi and handicap in one lockstep match, each side with its own agent.
    strong = _player(net, "strong", 0, lambda_=0.5)
    weak = _player(net, "weak", 1)
    settings = match.MatchSettings(
        games=8,
        komi=match.colour_relative_komi(0.5, 2.0, [True, False] * 4),
        handicap=(0, 0, 1, 1, 0, 0, 1, 1),
        sgf_dir=tmp_path,
    )
    games = arena.play_match(strong, weak, settings)
    assert [r.komi for r in games] == [2.5, -1.5] * 4
    assert [r.handicap for r in games] == [0, 0, 1, 1, 0, 0, 1, 1]
    assert [r.black for r in games] == ["strong", "weak"] * 4
    for r in games:
        margin, record = _replayed_margin(r.sgf)
        assert margin == pytest.approx(r.margin)
        assert record.komi == r.komi
    # The strong side's agent is in its SGF description; the weak side's is plain.
    root = sgf.read_sgf(games[0].sgf).root_comment
    assert "strong: gumbel 8 visits, lambda=0.5" in root and "weak: gumbel 8 visits, lambda=0 " in root


def test_random_openings_differ_by_pair_and_repeat_within_it(net, tmp_path):
    deterministic = dataclasses.replace(CONFIG, gumbel_scale=0.0)
    a = _player(net, "a", 0).replace(config=deterministic)
    b = _player(net, "b", 1).replace(config=deterministic)
    settings = match.MatchSettings(games=8, komi=7.5, opening_moves=3, max_moves=10, sgf_dir=tmp_path)
    games = arena.play_match(a, b, settings)
    openings = [tuple(sgf.read_sgf(r.sgf).moves[:3]) for r in games]
    # Each colour pair plays one opening with both colours; the pairs differ.
    assert all(openings[2 * j] == openings[2 * j + 1] for j in range(4))
    assert len(set(openings)) > 1
    assert all(R5.pass_action not in o for o in openings)
    comments = sgf.read_sgf(games[0].sgf).comments
    assert comments[:3] == ("random opening move",) * 3 and "visits" in comments[3]
    # Without openings, deterministic players repeat the same game in every pair.
    plain = arena.play_match(a, b, dataclasses.replace(settings, opening_moves=0, sgf_dir=None))
    assert len({(r.margin, r.moves) for r in plain[::2]}) == 1


def test_mixed_style_plays_the_biased_move_only_where_acceptable(net):
    """match.choose_moves with Player.mixed: every move is the biased search's
    pick among acceptable moves, or the player's own most visited move."""
    normal = _player(net, "normal", 0)
    biased = _player(net, "biased", 1)
    mixed = normal.replace(name="mixed", mixed=styles.MixedStyle(biased, w_diff=0.05, p_th=0.1))
    assert "mixed style with biased" in mixed.describe()
    states = match_loop.initial_states(R5, match.MatchSettings(games=4, komi=7.5), np.arange(4))
    keys = match.game_keys(jax.random.PRNGKey(0), jax.numpy.arange(4), 0)
    out, action = match.choose_moves(mixed, R5, states, keys, -np.ones((4, 1), np.int32), 0)
    biased_out, _ = match.choose_moves(biased, R5, states, keys, -np.ones((4, 1), np.int32), 0)
    want = styles.mixed_select(out, biased_out, w_diff=0.05, p_th=0.1)
    assert np.asarray(action).tolist() == np.asarray(want).tolist()
    with pytest.raises(ValueError, match="position control and the mixed style"):
        mixed.replace(control=control.ControlConfig())


def test_play_out_records_where_the_resign_rule_fires(net, tmp_path):
    """MatchSettings.play_out: same moves as the resigning match up to the
    resignation, then the game goes on to the count; the row keeps the ply
    and the estimates of the moment the rule fired."""
    side_a = _player(net, "a", 0)
    side_b = _player(net, "b", 1)
    base = dict(games=8, komi=7.5, seed=1, resign_threshold=0.999, score_visits=VISITS)
    resigned = arena.play_match(side_a, side_b, match.MatchSettings(**base, sgf_dir=tmp_path / "resigned"))
    played = arena.play_match(side_a, side_b, match.MatchSettings(**base, play_out=True, sgf_dir=tmp_path / "sgf"))
    for r, p in zip(resigned, played, strict=True):
        assert r.resigned and r.resign_ply == r.moves and r.resign_estimate == r.score_estimate
        assert not p.resigned and p.end in ("passes", "cap") and p.moves > r.moves
        assert p.resign_ply == r.resign_ply
        assert p.resign_estimate == pytest.approx(r.score_estimate)
        assert p.resign_own_estimate is not None and math.isfinite(p.resign_own_estimate)
        margin, record = _replayed_margin(p.sgf)
        assert margin == pytest.approx(p.margin)
        assert record.moves[: r.moves] == sgf.read_sgf(r.sgf).moves
    with pytest.raises(ValueError, match="play_out"):
        match.MatchSettings(games=2, play_out=True)


def test_python_m_saijax_arena_runs_the_cli_of_arena_cli():
    """The command line lives in saijax.cli.arena; ``python -m saijax.arena`` still
    runs it, with the same program name and error lines."""
    env = {**os.environ, "JAX_PLATFORMS": "cpu"}
    repo = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

    def run(*argv):
        return subprocess.run(
            [sys.executable, "-m", "saijax.arena", *argv], cwd=repo, env=env, capture_output=True, text=True
        )

    shown = run("--help")
    assert shown.returncode == 0 and shown.stdout.startswith("usage: python -m saijax.arena")
    assert "--opponent_visits" in shown.stdout and "--gnugo_may_resign" in shown.stdout
    failed = run("--player=gnugo:1", "--opponent=random", "--board_size=5")
    assert failed.returncode == 2
    assert failed.stderr.strip().splitlines()[-1] == (
        "saijax.arena: error: --player=gnugo:1: an engine can only be the opponent"
    )
