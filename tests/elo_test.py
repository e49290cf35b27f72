"""Tests for saijax.elo: recovery of known ratings, exact small cases, CLI (the table reader is in results_test)."""

import itertools
import json
import math
import os
import subprocess
import sys

import numpy as np
import pytest
import scipy.optimize
from hypothesis import given, settings
from hypothesis import strategies as st

from saijax.analysis import elo, results
from saijax.cli import elo as elo_cli

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

TRUE = {"random": 0.0, "gen1": 100.0, "gen2": 250.0, "gen3": 400.0, "gen4": 600.0}
TRUE_DRAW = 80.0
TRUE_ADVANTAGE = 40.0


def _f(z):
    return 1.0 / (1.0 + 10.0 ** (-np.asarray(z) / 400.0))


def _sample_games(ratings, *, games_per_colour, draw, advantage, seed, pairs=None):
    """Samples games from the Rao–Kupper model the fit assumes."""
    rng = np.random.default_rng(seed)
    names = list(ratings)
    if pairs is None:
        pairs = list(itertools.combinations(names, 2))
    games = []
    for a, b in pairs:
        for black, white in ((a, b), (b, a)):
            x = ratings[black] - ratings[white] + advantage
            p_black, p_white = _f(x - draw), 1.0 - _f(x + draw)
            u = rng.random(games_per_colour)
            for v in u:
                winner = "black" if v < p_black else "white" if v < p_black + p_white else "draw"
                games.append({"black": black, "white": white, "winner": winner})
    return games


@pytest.fixture(scope="module")
def synthetic_games():
    return _sample_games(TRUE, games_per_colour=200, draw=TRUE_DRAW, advantage=TRUE_ADVANTAGE, seed=1234)


@pytest.fixture(scope="module")
def synthetic_fit(synthetic_games):
    return elo.fit_elo(synthetic_games)


def test_recovers_known_ratings(synthetic_fit):
    fit = synthetic_fit
    assert fit.anchor == "random"
    assert fit.ratings["random"] == 0.0
    assert fit.total_games == 10 * 400
    covered = 0
    for name, true in TRUE.items():
        # Within ~30 Elo, or 3 standard errors for the far-off top player.
        tolerance = max(30.0, 3 * fit.stderr[name])
        assert abs(fit.ratings[name] - true) < tolerance, (name, fit.ratings[name])
        lo, hi = fit.ci[name]
        covered += lo <= true <= hi
        if name != "random":
            # Several hundred games per pair: intervals of a few tens of Elo.
            assert 5 < fit.stderr[name] < 30
    assert covered >= 4  # the anchor plus at least 3 of the 4 others


def test_recovers_draw_parameter_and_advantage(synthetic_fit):
    fit = synthetic_fit
    assert abs(fit.draw_elo - TRUE_DRAW) < 15
    assert fit.draw_elo_ci[0] <= TRUE_DRAW <= fit.draw_elo_ci[1]
    assert abs(fit.advantage - TRUE_ADVANTAGE) < 25
    assert fit.advantage_ci[0] <= TRUE_ADVANTAGE <= fit.advantage_ci[1]


def test_records_and_game_counts(synthetic_games, synthetic_fit):
    fit = synthetic_fit
    for name in TRUE:
        wins = sum(
            (g["black"] == name and g["winner"] == "black") or (g["white"] == name and g["winner"] == "white")
            for g in synthetic_games
        )
        draws = sum(name in (g["black"], g["white"]) and g["winner"] == "draw" for g in synthetic_games)
        assert fit.record[name][:2] == (wins, draws)
        assert fit.n_games[name] == sum(fit.record[name]) == 4 * 400


def test_constant_prior_barely_moves_well_sampled_ratings(synthetic_games, synthetic_fit):
    with_prior = elo.fit_elo(synthetic_games, prior_draws=1.0)
    assert len(with_prior.prior_pairs) == 10
    for name in TRUE:
        assert abs(with_prior.ratings[name] - synthetic_fit.ratings[name]) < 5
    # The prior is colourless and drawless: adv and d come from the games.
    assert abs(with_prior.advantage - synthetic_fit.advantage) < 2
    assert abs(with_prior.draw_elo - synthetic_fit.draw_elo) < 2


def test_bootstrap_intervals_agree_with_hessian_intervals():
    games = _sample_games(TRUE, games_per_colour=40, draw=TRUE_DRAW, advantage=TRUE_ADVANTAGE, seed=7)
    fit = elo.fit_elo(games, bootstrap=60, seed=3)
    assert fit.bootstrap_samples == 60
    assert fit.bootstrap_ci["random"] == (0.0, 0.0)
    for name in TRUE:
        if name == "random":
            continue
        lo, hi = fit.bootstrap_ci[name]
        assert lo < fit.ratings[name] < hi
        wald = fit.ci[name][1] - fit.ci[name][0]
        assert 0.6 < (hi - lo) / wald < 1.6, name
    assert fit.bootstrap_ci == elo.fit_elo(games, bootstrap=60, seed=3).bootstrap_ci


def _two_player_games(a_wins, draws, b_wins):
    games = []
    for k, winner in enumerate(["A"] * a_wins + ["draw"] * draws + ["B"] * b_wins):
        black, white = ("A", "B") if k % 2 else ("B", "A")
        games.append(
            {
                "black": black,
                "white": white,
                "winner": "draw" if winner == "draw" else ("black" if winner == black else "white"),
            }
        )
    return games


def test_two_players_with_draws_matches_closed_form():
    # Without colour advantage the two-player Rao–Kupper model is saturated:
    # F(Δ - d) = p_win and F(-Δ - d) = p_loss exactly at the MLE.
    a_wins, draws, b_wins = 30, 10, 20
    n = a_wins + draws + b_wins
    fit = elo.fit_elo(_two_player_games(a_wins, draws, b_wins), first_move_advantage=False, prior_draws=0)

    def logit10(p):
        return 400 * math.log10(p / (1 - p))

    lw, ll = logit10(a_wins / n), logit10(b_wins / n)
    assert fit.anchor == "A"
    assert fit.ratings["B"] == pytest.approx(-(lw - ll) / 2, abs=1e-4)
    assert fit.draw_elo == pytest.approx(-(lw + ll) / 2, abs=1e-4)
    assert fit.advantage == 0.0


def test_two_players_without_draws_is_bradley_terry():
    fit = elo.fit_elo(_two_player_games(30, 0, 10), first_move_advantage=False, prior_draws=0, anchor="B")
    assert fit.ratings["A"] == pytest.approx(400 * math.log10(3), abs=1e-4)
    assert fit.draw_elo == 0.0
    # Fisher information of a binomial logit: n p (1 - p) per unit² of logit.
    se = 400 / math.log(10) / math.sqrt(40 * 0.75 * 0.25)
    assert fit.stderr["A"] == pytest.approx(se, rel=1e-4)


def test_gradient_and_hessian_match_finite_differences():
    games = _sample_games({"a": 0, "b": 150, "c": 300}, games_per_colour=10, draw=60, advantage=30, seed=5)
    players = ["a", "b", "c"]
    counts = elo._tally(games)
    cells = np.array([[players.index(b), players.index(w), *c] for (b, w), c in counts.items()])
    pairs = np.array([[0, 1], [0, 2], [1, 2]])
    prob = elo._build_problem(players, "a", cells, pairs, fit_advantage=True, prior_draws=0.7)
    theta = np.array([0.4, -0.3, 0.2, 0.5])  # r_b, r_c, adv, d (natural units)

    def value(t):
        return elo._value_grad_hess(t, prob)[0]

    def grad(t):
        return elo._value_grad_hess(t, prob)[1]

    _, g, h = elo._value_grad_hess(theta, prob)
    np.testing.assert_allclose(g, scipy.optimize.approx_fprime(theta, value, 1e-7), rtol=1e-4, atol=1e-4)
    h_num = np.stack([scipy.optimize.approx_fprime(theta, lambda t: grad(t)[k], 1e-7) for k in range(4)])
    np.testing.assert_allclose(h, h_num, rtol=1e-4, atol=1e-3)
    # Concave: the negated Hessian is positive definite.
    assert np.all(np.linalg.eigvalsh(-h) > 0)


def test_disconnected_graph_names_the_components():
    games = [
        {"black": "random", "white": "gen1", "winner": "white"},
        {"black": "gen1", "white": "random", "winner": "black"},
        {"black": "gen7", "white": "gen8", "winner": "draw"},
        {"black": "gen8", "white": "gen9", "winner": "black"},
    ]
    with pytest.raises(ValueError, match="disconnected") as info:
        elo.fit_elo(games)
    message = str(info.value)
    assert "2 components" in message
    assert "gen1, random" in message and "gen7, gen8, gen9" in message
    assert "anchor" in message


def test_unbeaten_player_is_finite_with_default_prior():
    games = _sample_games({"random": 0, "mid": 200, "top": 400}, games_per_colour=20, draw=50, advantage=0, seed=11)
    games += [
        {"black": "champ", "white": "top", "winner": "black"},
        {"black": "top", "white": "champ", "winner": "white"},
    ] * 5
    games += [{"black": "champ", "white": "mid", "winner": "black"}] * 3
    fit = elo.fit_elo(games)
    # Only the one-sided pairings get virtual draws.
    assert sorted(fit.prior_pairs) == [("champ", "mid"), ("champ", "top")]
    assert fit.ratings["champ"] > fit.ratings["top"] + 100
    assert np.isfinite(fit.ratings["champ"])
    assert fit.stderr["champ"] > 2 * fit.stderr["top"]
    with pytest.raises(ValueError, match="does not exist.*champ"):
        elo.fit_elo(games, prior_draws=0)


def test_no_draws_means_zero_draw_parameter():
    games = _sample_games({"x": 0, "y": 100}, games_per_colour=50, draw=0, advantage=0, seed=3)
    assert not any(g["winner"] == "draw" for g in games)
    fit = elo.fit_elo(games)
    assert fit.draw_elo == 0.0 and fit.draw_elo_ci == (0.0, 0.0)


def test_unidentifiable_advantage_is_reported():
    games = [{"black": "A", "white": "B", "winner": w} for w in ("black", "white", "black")]
    with pytest.raises(ValueError, match="not identifiable"):
        elo.fit_elo(games, prior_draws=0)
    fit = elo.fit_elo(games, first_move_advantage=False, prior_draws=0)
    assert fit.ratings["A"] == 0.0 and fit.ratings["B"] < 0


def test_anchor_choice():
    games = [
        {"black": "zeta", "white": "alpha", "winner": "black"},
        {"black": "alpha", "white": "zeta", "winner": "draw"},
        {"black": "alpha", "white": "zeta", "winner": "white"},
    ]
    assert elo.fit_elo(games).anchor == "alpha"
    with pytest.raises(ValueError, match="anchor 'nobody'"):
        elo.fit_elo(games, anchor="nobody")
    with pytest.raises(ValueError, match="no games"):
        elo.fit_elo([])
    with pytest.raises(ValueError, match="winner"):
        elo.fit_elo([{"black": "a", "white": "b", "winner": "B+R"}])


@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 2**31 - 1), anchor=st.sampled_from(["p0", "p1", "p2", "p3"]))
def test_anchor_only_shifts_ratings(seed, anchor):
    ratings = {"p0": 0, "p1": 80, "p2": 160, "p3": 240}
    games = _sample_games(ratings, games_per_colour=4, draw=60, advantage=20, seed=seed)
    base = elo.fit_elo(games, anchor="p0", prior_draws=0.5)
    moved = elo.fit_elo(games, anchor=anchor, prior_draws=0.5)
    assert moved.ratings[anchor] == 0.0
    shift = base.ratings[anchor]
    for name in ratings:
        assert moved.ratings[name] == pytest.approx(base.ratings[name] - shift, abs=1e-3)
    assert moved.draw_elo == pytest.approx(base.draw_elo, abs=1e-3)
    assert moved.advantage == pytest.approx(base.advantage, abs=1e-3)
    assert moved.log_likelihood == pytest.approx(base.log_likelihood, abs=1e-6)


def test_format_table_lists_players_strongest_first(synthetic_fit):
    table = elo.format_table(synthetic_fit)
    rows = [
        line.split()[1]
        for line in table.splitlines()
        if line.strip()[:1].isdigit() and len(line.split()) > 2 and line.split()[1] in TRUE
    ]
    assert rows == ["gen4", "gen3", "gen2", "gen1", "random"]
    assert "draw parameter" in table and "black advantage" in table


def test_fits_rows_read_from_a_results_table(tmp_path):
    games = _sample_games({"random": 0, "7": 150, "gen2": 300}, games_per_colour=10, draw=60, advantage=30, seed=4)
    path = tmp_path / "table.csv"
    results.append_results(path, [results.GameResult(**g) for g in games])
    rows = results.read_results(path)
    assert rows[0].black == "random" and {r.white for r in rows} >= {"7"}
    assert elo.fit_elo(rows).ratings == pytest.approx(elo.fit_elo(games).ratings)
    with pytest.raises(ValueError, match="game 1: player 'a' plays itself"):
        elo.fit_elo([rows[0], results.GameResult(black="a", white="a", winner="draw")])


@pytest.fixture()
def small_results(tmp_path):
    games = _sample_games(
        {"random": 0, "gen1": 150, "gen2": 300, "gen3": 500}, games_per_colour=15, draw=60, advantage=30, seed=2
    )
    path = tmp_path / "results.jsonl"
    path.write_text("".join(json.dumps(g) + "\n" for g in games))
    return path


def test_cli_prints_table_and_writes_plot(small_results, tmp_path, capsys):
    plot = tmp_path / "elo.png"
    assert elo_cli.main([str(small_results), "--plot", str(plot), "--bootstrap", "5"]) == 0
    out = capsys.readouterr().out
    for name in ("random", "gen1", "gen2", "gen3"):
        assert name in out
    assert "bootstrap 95%" in out
    assert plot.stat().st_size > 1000
    with open(plot, "rb") as f:
        assert f.read(8) == b"\x89PNG\r\n\x1a\n"


def test_cli_as_module(small_results, tmp_path):
    plot = tmp_path / "sorted.png"
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "saijax.elo",
            str(small_results),
            "--anchor",
            "gen1",
            "--no-advantage",
            "--plot",
            str(plot),
        ],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert "anchor 'gen1' = 0" in result.stdout
    assert "black advantage" not in result.stdout
    assert plot.exists()
    bad = subprocess.run(
        [sys.executable, "-m", "saijax.elo", str(tmp_path / "nope.jsonl")],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert bad.returncode == 1 and "error:" in bad.stderr


def test_plot_without_generation_numbers(synthetic_games, tmp_path):
    renamed = [
        {"black": g["black"].replace("gen", "net-"), "white": g["white"].replace("gen", "net-"), "winner": g["winner"]}
        for g in synthetic_games[:600]
    ]
    for g in renamed:
        for side in ("black", "white"):
            g[side] = {"net-1": "alice", "net-2": "bob"}.get(g[side], g[side])
    fit = elo.fit_elo(renamed)
    path = tmp_path / "players.png"
    elo.plot_ratings(fit, path)
    assert path.stat().st_size > 1000


def test_default_prior_falls_back_when_the_advantage_runs_off():
    # Ford's condition holds (alpha drew with zeta), but the draw can be put
    # down to black's advantage, letting zeta's rating and adv run off together.
    games = [
        {"black": "zeta", "white": "alpha", "winner": "black"},
        {"black": "alpha", "white": "zeta", "winner": "draw"},
        {"black": "alpha", "white": "zeta", "winner": "white"},
    ]
    fit = elo.fit_elo(games)
    assert fit.prior_pairs == (("alpha", "zeta"),) and fit.prior_draws == 1.0
    assert fit.ratings["zeta"] > 0
    with pytest.raises(ValueError, match="does not exist.*zeta.*advantage"):
        elo.fit_elo(games, prior_draws=0)


def test_black_winning_everything_has_no_advantage_estimate():
    games = [{"black": "a", "white": "b", "winner": "black"}, {"black": "b", "white": "a", "winner": "black"}] * 3
    with pytest.raises(ValueError, match="first-move advantage can grow"):
        elo.fit_elo(games)
    fit = elo.fit_elo(games, first_move_advantage=False)
    assert fit.ratings["b"] == pytest.approx(0.0, abs=1e-6)
