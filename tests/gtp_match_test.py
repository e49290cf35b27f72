"""Matches against a GTP engine: a tiny net against GNU Go, counted as GNU Go counts."""

import jax
import numpy as np
import pytest

from saijax.analysis import results
from saijax.core import go, networks, search, sgf
from saijax.play import control, gtp_match, gtp_opponent, match, players

R5 = go.GoRules(5)
VISITS = 8


@pytest.fixture(scope="module")
def player():
    net = networks.make_network(5, blocks=1, filters=8)
    variables = networks.init_network(net, jax.random.PRNGKey(0))
    return players.Player.from_network("random", net, variables, config=search.SearchConfig(num_simulations=VISITS))


def _replayed_margin(path):
    """Black-minus-White Tromp–Taylor margin of an SGF's final position."""
    record = sgf.read_sgf(path)
    final = sgf.replay(record)[-1]
    return float(go.area_score(R5, final)) - record.komi, record


def test_gnugo_argv_forbids_resignation(gnugo_path):
    argv = gtp_match.gnugo_arena_argv(level=10)
    assert argv[0] == gnugo_path or argv[0].endswith("gnugo")
    assert "--never-resign" in argv and "--capture-all-dead" in argv and "--level" in argv
    assert "--never-resign" not in gtp_match.gnugo_arena_argv(level=10, never_resign=False)
    assert gtp_match.default_engine_name(argv) == "gnugo-l10"


def test_game_against_gnugo_agrees_with_its_count(player, gnugo_path, tmp_path):
    del gnugo_path  # skip/fail logic only
    settings = match.MatchSettings(
        games=2,
        komi=7.5,
        seed=0,
        resign_threshold=None,
        sgf_dir=tmp_path / "sgf",
        results_path=tmp_path / "gnugo.jsonl",
    )
    games = gtp_match.play_gtp_match(player, gtp_match.gnugo_arena_argv(level=1), settings)
    assert [r.black for r in games] == ["random", "gnugo-l1"]
    assert [r.white for r in games] == ["gnugo-l1", "random"]
    # The engine's side has no visits, Gumbel scale or precision.
    assert [(r.visits, r.gumbel_scale, r.precision) for r in games] == [
        (f"{VISITS}/-", "1/-", "float32/-"),
        (f"-/{VISITS}", "-/1", "-/float32"),
    ]
    # GNU Go may not resign and the net's resignation is off: every game is played out.
    assert not any(r.resigned for r in games)
    finished = [r for r in games if r.end == "passes" and not r.engine_dead]
    assert finished, f"no game ended by two passes with nothing dead: {games}"
    for r in finished:
        engine = sgf.parse_result(r.engine_score)
        ours = {"black": 1, "white": -1, "draw": 0}[r.winner]
        assert engine.winner == ours, r
        assert engine.margin == pytest.approx(abs(r.margin)), r
    for r in games:
        # The SGF replays under saijax's rules to the recorded count.
        margin, record = _replayed_margin(r.sgf)
        assert margin == pytest.approx(r.margin)
        assert len(record.moves) == r.moves
        assert record.black_name == r.black and record.white_name == r.white
        net_moves = [c for c, colour in zip(record.comments, record.colours) if (colour == 1) == (r.black == "random")]
        assert net_moves and all(sgf.parse_move_comment(c)["visits"] == VISITS for c in net_moves)
    rows = results.read_results(tmp_path / "gnugo.jsonl")
    assert [row.engine_score for row in rows] == [r.engine_score for r in games]


def test_per_game_komi_reaches_the_engine(player, gnugo_path, tmp_path):
    del gnugo_path
    settings = match.MatchSettings(games=2, komi=(3.5, -2.5), max_moves=6, sgf_dir=tmp_path)
    games = gtp_match.play_gtp_match(player, gtp_match.gnugo_arena_argv(level=1), settings)
    assert [r.komi for r in games] == [3.5, -2.5]
    for r in games:
        assert r.end in ("cap", "passes")
        margin, record = _replayed_margin(r.sgf)
        assert record.komi == r.komi and margin == pytest.approx(r.margin)


def test_position_control_picks_the_move_against_gnugo(player, gnugo_path, monkeypatch, tmp_path):
    """The controlled player's moves are control.select's, given GNU Go's last move."""
    del gnugo_path
    config = control.ControlConfig(method="B")
    controlled = player.replace(name="ctl", control=config, config=config.search_config(player.config))
    calls = []
    jitted = control.select_fn

    def recording(cfg):
        fn = jitted(cfg)

        def select(out, states, last, key):
            action = fn(out, states, last, key)
            calls.append((cfg, out, states, np.asarray(last), int(action[0])))
            return action

        return select

    monkeypatch.setattr(control, "select_fn", recording)
    settings = match.MatchSettings(games=2, komi=7.5, max_moves=8, sgf_dir=tmp_path)
    games = gtp_match.play_gtp_match(controlled, gtp_match.gnugo_arena_argv(level=1), settings)
    played = []
    for g in games:
        record = sgf.read_sgf(g.sgf)
        colour = 1 if g.black == "ctl" else -1
        moves = list(record.moves)
        for ply, (c, a) in enumerate(zip(record.colours, moves)):
            if c == colour:
                played.append((a, moves[ply - 1] if ply else -1))
    assert [(c[4], int(c[3][0, 0])) for c in calls] == played  # the selected move, after GNU Go's last one
    for cfg, out, states, last, action in calls:
        assert cfg == config and np.asarray(control.candidates(cfg, out, states, last))[0, action]
    with pytest.raises(ValueError, match="value_mode"):
        gtp_match.play_gtp_match(controlled.replace(config=search.SearchConfig(value_mode="score")), ["true"], settings)


def test_engine_opening_moves_vary_the_engines_moves_only(player, gnugo_path, tmp_path):
    """``engine_opening_moves``: the engine's first moves are random draws
    among the moves it rates at least half as high as its best; the net's
    moves stay its search's (deterministic here: no root noise), and the
    draws repeat with the seed."""
    del gnugo_path
    argv = gtp_match.gnugo_arena_argv(level=1)

    def play(seed, directory):
        settings = match.MatchSettings(
            games=4, komi=7.5, colours="a_white", seed=seed, max_moves=8, engine_opening_moves=2, sgf_dir=directory
        )
        games = gtp_match.play_gtp_match(player, argv, settings)
        return [sgf.read_sgf(g.sgf) for g in games]

    records = play(0, tmp_path / "a")
    for record in records:
        engine = [c for c, colour in zip(record.comments, record.colours) if colour == 1]
        assert engine[:2] == ["engine's random opening move"] * 2
        net = [c for c, colour in zip(record.comments, record.colours) if colour == -1]
        assert all(sgf.parse_move_comment(c)["visits"] == VISITS for c in net)
    openings = {tuple(r.moves[:3]) for r in records}
    assert len(openings) > 1  # the engine's draws differ between games
    assert [r.moves for r in play(0, tmp_path / "b")] == [r.moves for r in records]


def test_random_rated_move_keeps_the_moves_rated_at_least_half_the_best():
    rng = np.random.default_rng(0)
    answer = "D4 45.00 E3 23.95 C3 23.95 C4 3.01".split()
    rules = go.GoRules(7)
    drawn = {gtp_opponent._random_rated_move(rules, answer, rng) for _ in range(200)}
    assert {go.to_gtp(rules, a) for a in drawn} == {"D4", "E3", "C3"}
    assert gtp_opponent._random_rated_move(rules, [], rng) is None
    with pytest.raises(ValueError):
        match.MatchSettings(games=1, engine_opening_moves=-1)
