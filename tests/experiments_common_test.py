"""experiments/common.py: flags, nets lists, CSV files, the resumable runner, the error line, figures."""

import math
import os
import subprocess
import sys

import pytest

from experiments import common, matches
from saijax import player_cli, results, stats

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


# --------------------------------------------------------------------------
# Flags.


def test_parser_has_the_common_flags_and_the_player_flags():
    p = common.make_parser(__file__, "A script.\n\nMore.", outdir="runs/x", games=10, visits=32)
    args = p.parse_args([])
    assert (args.outdir, args.seed, args.games, args.board_size, args.visits) == ("runs/x", 0, 10, 7, 32)
    assert p.description == "A script."
    assert p.prog == "experiments.experiments_common_test"
    options = common.player_options(args)
    assert isinstance(options, player_cli.PlayerOptions)
    assert options.visits == 32 and options.gumbel_scale == 0.0, "deterministic play by default"
    args = p.parse_args(["--games=4", "--visits=3", "--gumbel_scale=1", "--lambda_=0.5", "--board_size=5"])
    options = common.player_options(args, mu=0.25)
    assert (args.games, args.board_size) == (4, 5)
    assert (options.visits, options.gumbel_scale, options.lambda_, options.mu) == (3, 1.0, 0.5, 0.25)


def test_parser_without_optional_flags(capsys):
    p = common.make_parser(__file__, None, board_size=None, seed=False, player=False)
    with pytest.raises(SystemExit) as e:
        p.parse_args([])  # --outdir is required without a default
    assert e.value.code == 2
    assert "experiments.experiments_common_test: error:" in capsys.readouterr().err
    args = p.parse_args(["--outdir=/tmp/x"])
    assert vars(args) == {"outdir": "/tmp/x"}


def test_shared_flags_take_the_scripts_defaults_and_one_type(capsys):
    p = common.make_parser(__file__, None, outdir="x", player=False, komi=9.5, opening_moves=2, restart="pairing",
                           plot_only="redraw it", resign_threshold=common.Default.NONE,
                           workdir=common.Default.REQUIRED, helps={"komi": "the pairings' komi"})  # fmt: skip
    args = p.parse_args(["--workdir=w"])
    assert (args.komi, args.opening_moves, args.restart, args.plot_only, args.resign_threshold) == (
        9.5, 2, False, False, None)  # fmt: skip
    args = p.parse_args(["--workdir=w", "--komi=7", "--opening_moves=4", "--restart", "--resign_threshold=0.1"])
    assert (args.komi, args.opening_moves, args.restart, args.resign_threshold) == (7.0, 4, True, 0.1)
    helps = {a.dest: a.help for a in p._actions}
    assert helps["restart"] == "replay every pairing (default: resume games.csv)" and helps["plot_only"] == "redraw it"
    assert helps["komi"] == "the pairings' komi" and helps["opening_moves"] == common.SHARED_FLAGS["opening_moves"].help
    with pytest.raises(SystemExit):
        p.parse_args([])  # --workdir is required
    with pytest.raises(SystemExit):
        p.parse_args(["--workdir=w", "--opening_moves=1.5"])
    capsys.readouterr()
    with pytest.raises(TypeError, match="not a shared flag"):
        common.make_parser(__file__, None, komis=9.5)
    with pytest.raises(TypeError, match="level"):
        common.make_parser(__file__, None, komi=9.5, helps={"level": "GNU Go's level"})
    # --score_visits is one int everywhere; a list of them is --score_visits_list.
    assert common.SHARED_FLAGS["score_visits"].type is int and common.SHARED_FLAGS["score_visits_list"].type is str


def test_bad_player_flag_is_a_value_error():
    args = common.make_parser(__file__, None, outdir="x").parse_args(["--mu=0.5"])  # μ > λ = 0
    with pytest.raises(ValueError, match="mu"):
        common.player_options(args)
    assert common.player_options(args, lambda_=1.0).mu == 0.5, "changes apply before the check"


def test_comma_lists_and_named_nets():
    assert common.parse_list("0, 1.5,,2") == [0.0, 1.5, 2.0]
    assert common.parse_list("", int) == []
    assert common.parse_list("a,b", str) == ["a", "b"]
    assert common.parse_nets("S=zoo:go7-S1, random ,W=runs/x/checkpoints/3") == [
        ("S", "zoo:go7-S1"),
        (None, "random"),
        ("W", "runs/x/checkpoints/3"),
    ]


def test_load_nets_names_and_options():
    options = player_cli.PlayerOptions(visits=3, lambda_=0.5)
    a, b, u = common.load_nets("zoo:go5,Z=zoo:go5,uniform", board_size=5, options=options)
    assert (a.name, b.name, u.name) == ("go5", "Z", "uniform"), "named after the zoo entry, or as given"
    assert a.config.num_simulations == 3 and a.config.gumbel_scale == 0.0 and a.agent.lambda_ == 0.5
    assert a.board_size == 5


# --------------------------------------------------------------------------
# CSV files.


def test_csv_round_trip(tmp_path):
    path = tmp_path / "sub" / "t.csv"
    rows = [
        {"name": "a", "x": 1.234567, "n": 3, "none": None, "nan": math.nan, "_private": [1]},
        {"name": "b", "x": 2.0, "n": 4, "none": 1.5, "nan": 0.5, "extra": "only here"},
    ]
    assert common.write_csv(path, rows, digits=3) == str(path)
    assert not os.path.exists(str(path) + ".tmp")
    text = common.read_csv(path)
    assert list(text[0]) == ["name", "x", "n", "none", "nan", "extra"], "first-seen order, no private keys"
    assert text[0] == {"name": "a", "x": "1.235", "n": "3", "none": "", "nan": "", "extra": ""}
    numbers = common.read_csv(path, text=("name", "extra"))
    assert numbers[1] == {"name": "b", "x": 2.0, "n": 4.0, "none": 1.5, "nan": 0.5, "extra": "only here"}
    assert numbers[0]["none"] == ""
    # Sequences of values with the columns; columns pick and order.
    common.write_csv(path, [(1, "u"), (2, "v")], ("k", "s"))
    assert common.read_csv(path) == [{"k": "1", "s": "u"}, {"k": "2", "s": "v"}]
    common.write_csv(path, rows, ("n", "name"))
    assert common.read_csv(path, text=("name",)) == [{"n": 3.0, "name": "a"}, {"n": 4.0, "name": "b"}]
    with pytest.raises(ValueError, match="t.csv:2"):
        common.read_csv(path, text=())


# --------------------------------------------------------------------------
# The resumable runner.


def _game(cell: str, k: int) -> results.GameResult:
    return results.GameResult(black=f"{cell}-a", white=f"{cell}-b", winner="black", margin=1.5, game=k)


def test_play_cells_skips_the_cells_already_played(tmp_path):
    path = str(tmp_path / "games.csv")
    played = []

    def play(cell, where):
        played.append(cell)
        games = [_game(cell, k) for k in range(2)]
        results.append_results(where, games)
        return games

    kw = dict(path=path, games=2, key=lambda c: c, game_key=lambda g: g.black[:-2], out=lambda line: None)
    table = common.play_cells(["A", "B"], play, **kw)
    assert played == ["A", "B"] and len(table) == 4
    # A killed run: B has one game of two. B is played again whole, A is kept, C is new.
    results.append_results(path, [_game("C", 0)])
    kept = [g for g in results.read_results(path) if g.black != "B-a"] + [_game("B", 0)]
    os.remove(path)
    results.append_results(path, kept)
    played.clear()
    lines = []
    table = common.play_cells(["A", "B", "C"], play, **{**kw, "out": lines.append}, report=lambda c, g: c)
    assert played == ["B", "C"]
    assert sorted(g.black for g in table) == ["A-a", "A-a", "B-a", "B-a", "C-a", "C-a"]
    assert lines[0] == "3 cells of 2 games (1 already played)"
    assert lines[1].startswith("[1/2] B, ")
    # Nothing left to play; then without resume, everything is played afresh.
    played.clear()
    assert len(common.play_cells(["A", "B", "C"], play, **kw)) == 6 and played == []
    table = common.play_cells(["A"], play, **{**kw, "resume": False})
    assert played == ["A"] and len(table) == 2


# --------------------------------------------------------------------------
# Errors and figures.


def test_run_main_turns_errors_into_one_line(capsys):
    def body():
        raise FileNotFoundError("no such table:\n  games.csv")

    assert common.run_main("/x/experiments/some_script.py", body) == 2
    assert capsys.readouterr().err == "experiments.some_script: error: no such table: games.csv\n"
    assert common.run_main("some_script.py", lambda: None) == 0
    with pytest.raises(KeyError):  # not an expected failure: a traceback
        common.run_main("some_script.py", lambda: {}["x"])


@pytest.mark.parametrize("route", ["path", "module"])
def test_a_script_runs_both_ways_and_fails_with_one_line(tmp_path, route):
    blocker = tmp_path / "a_file"
    blocker.write_text("")
    argv = ["--outdir", str(blocker / "out"), "--num_mdps=2", "--depth=2"]
    head = ["experiments/score_vs_winrate.py"] if route == "path" else ["-m", "experiments.score_vs_winrate"]
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    out = subprocess.run(
        [sys.executable, *head, *argv],
        cwd=REPO if route == "path" else tmp_path,
        env=env,
        capture_output=True,
        text=True,
    )
    assert out.returncode == 2, out.stderr
    last = out.stderr.strip().splitlines()[-1]
    assert last.startswith("experiments.score_vs_winrate: error: ") and "a_file" in last


def test_save_figure_writes_a_png(tmp_path):
    import matplotlib

    matplotlib.use("Agg")
    plt = common.pyplot()
    fig, ax = plt.subplots()
    ax.plot([0, 1], [1, 0])
    path = common.save_figure(fig, tmp_path / "d" / "f.png")
    with open(path, "rb") as f:
        assert f.read(8) == b"\x89PNG\r\n\x1a\n"
    assert not plt.fignum_exists(fig.number), "closed"


# --------------------------------------------------------------------------
# The statistics the scripts used to define, now in saijax.results.


def test_statistics_moved_to_results():
    import scipy.stats

    assert stats.binomial_test(3, 10) == pytest.approx(scipy.stats.binomtest(3, 10).pvalue)
    assert stats.binomial_test(3.5, 10, 0.6, alternative="less") == pytest.approx(
        scipy.stats.binomtest(3, 10, 0.6, alternative="less").pvalue
    )
    assert math.isnan(stats.binomial_test(0, 0))
    assert stats.normal_test(1.959963984540054, 1.0) == pytest.approx(0.05)
    assert stats.normal_test(2.0, 1.0, "greater") == pytest.approx(scipy.stats.norm.sf(2.0))
    t, p = stats.paired_t_test([1, 2, 3, 5], [0, 0, 1, 1])
    assert p == pytest.approx(scipy.stats.ttest_rel([1, 2, 3, 5], [0, 0, 1, 1]).pvalue)
    assert math.isnan(stats.paired_t_test([1, 2], [0, 1])[1]), "no spread in the differences"
    # A rate of ½ is closer to ½ than 0.9 (significantly, over 100 games each); 0.9 is not closer than ½.
    assert stats.closer_to_half_test(0.5, 100, 0.9, 100) < 0.001
    assert stats.closer_to_half_test(0.9, 100, 0.5, 100) > 0.999
    assert stats.standard_error([1.0, 3.0, math.nan]) == pytest.approx(1.0)
    mean, half = stats.mean_interval([1.0, 3.0, ""])
    assert (mean, half) == (2.0, pytest.approx(1.959963984540054))
    assert stats.mean_interval([1.0, 3.0], t=True)[1] == pytest.approx(scipy.stats.t.ppf(0.975, 1))
    assert [stats.significance_mark(p) for p in (0.0001, 0.01, 0.2, math.nan)] == ["**", "*", "", ""]


def test_distinct_games_exact_and_up_to_symmetry():
    # 5×5: 12 is the centre; 0 and 4 are corners (a reflection apart).
    games = [[12, 0, 25], [12, 0, 25], [12, 4, 25], [0, 12], [24, 12]]
    assert matches.distinct_games(games, 5) == (4, 2)
    assert matches.distinct_games([], 5) == (0, 0)
