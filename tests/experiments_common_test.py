"""experiments/lib/common.py: settings and their command line, nets lists, CSV files, the resumable runner, the error
line, figures."""

import dataclasses
import io
import math
import os
import subprocess
import sys
import types
from typing import Literal

import numpy as np
import pytest

from experiments.lib import common, matches
from saijax.analysis import results, stats
from saijax.cli import player as player_cli

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


# --------------------------------------------------------------------------
# Settings and their command line.


@dataclasses.dataclass(frozen=True, kw_only=True)
class _Settings(common.MatchSettings):
    """A script.

    More."""

    outdir: str = "runs/x"
    games: int = common.setting(10, "games per pairing")
    visits: int = 32
    komi: float = 9.5
    opening_moves: int = 2
    komis: tuple[float, ...] = common.setting((8.5, 9.5), "the komis")
    nets: tuple[str, ...] = ()
    resign_threshold: float | None = None
    tie_break: Literal["first", "last"] = "first"
    workdir: str = common.setting(help="the run")
    restart: bool = False
    itself: bool = common.setting(True, "also play itself")


def _module(tmp_path, cls=_Settings):
    """A stand-in science module with ``cls`` as its settings."""
    module = types.ModuleType("experiments.fake_script")
    module.__file__, module.__doc__, module.Settings = str(tmp_path / "fake_script.py"), cls.__doc__, cls
    module.run = lambda settings: settings
    return module


def test_settings_are_typed_frozen_and_have_the_player_fields():
    s = _Settings(workdir="w", komi=7, komis=[1, 2.5], nets=["a=zoo:x"], games=4, gumbel_scale=1, lambda_=0.5)
    assert (s.outdir, s.seed, s.games, s.board_size, s.visits) == ("runs/x", 0, 4, 7, 32)
    assert s.komi == 7.0 and isinstance(s.komi, float) and s.komis == (1.0, 2.5) and s.nets == ("a=zoo:x",)
    with pytest.raises(dataclasses.FrozenInstanceError):
        s.games = 5
    options = s.player_options(mu=0.25)
    assert isinstance(options, player_cli.PlayerOptions)
    assert (options.visits, options.gumbel_scale, options.lambda_, options.mu) == (32, 1.0, 0.5, 0.25)
    assert _Settings(workdir="w").player_options().gumbel_scale == 0.0, "deterministic play by default"
    defaults = {f.name: f.default for f in dataclasses.fields(common.MatchSettings)}
    assert {k: defaults[k] for k in common.PLAYER_FIELDS} == dataclasses.asdict(player_cli.PlayerOptions())
    assert s.replace(games=6).games == 6 and s.replace(games=6).komis == s.komis


@pytest.mark.parametrize(
    "changes, message",
    [
        (dict(games="4"), "_Settings.games='4': needs an int"),
        (dict(games=True), "_Settings.games=True: needs an int"),
        (dict(komis="8.5,9.5"), "_Settings.komis='8.5,9.5': needs a tuple (or list) of numbers"),
        (dict(komis=(8.5, "x")), "_Settings.komis=(8.5, 'x'): needs a tuple (or list) of numbers"),
        (dict(resign_threshold="x"), "_Settings.resign_threshold='x': needs a number or None"),
        (dict(tie_break="middle"), "_Settings.tie_break='middle': needs one of 'first', 'last'"),
        (dict(mu=0.5), "_Settings.mu=0.5: "),  # μ > λ = 0
        (dict(visits=0), "_Settings.visits=0: "),  # PlayerOptions says why
        (dict(games=-1), "_Settings.games=-1: needs an int >= 0"),
    ],
)
def test_a_bad_setting_names_the_field_and_the_value(changes, message):
    with pytest.raises(common.SettingsError) as e:
        _Settings(workdir="w", **changes)
    assert str(e.value).startswith("experiments_common_test." + message), str(e.value)
    with pytest.raises(TypeError, match="workdir"):
        _Settings()  # a field without a default is required


def test_the_command_line_is_made_from_the_fields(tmp_path, capsys):
    module = _module(tmp_path)
    p = common.parser(_Settings, module.__file__, module.__doc__)
    assert p.description == "A script." and p.prog == "experiments.fake_script"
    s = common.parse(module, ["--workdir=w"])
    assert s == _Settings(workdir="w")
    argv = ["--workdir=w", "--games=4", "--komi=7", "--komis=1,2.5", "--nets=a=zoo:x,zoo:y", "--resign_threshold=0.1",
            "--tie_break=last", "--restart", "--no-itself", "--visits=3", "--gumbel_scale=1", "--board_size=5",
            "--control=C", "--control_option=gentleness=2", "--control_option=lead_band=-6,-2"]  # fmt: skip
    s = common.parse(module, argv)
    assert (s.games, s.komi, s.komis, s.nets, s.resign_threshold, s.tie_break, s.restart, s.itself) == (
        4, 7.0, (1.0, 2.5), ("a=zoo:x", "zoo:y"), 0.1, "last", True, False)  # fmt: skip
    assert (s.visits, s.gumbel_scale, s.board_size) == (3, 1.0, 5)
    assert s.control_options == ("gentleness=2", "lead_band=-6,-2")
    assert common.parse(module, ["--workdir=w", "--komis="]).komis == ()
    helps = {a.dest: a.help for a in p._actions}
    assert helps["games"] == "games per pairing" and helps["komi"] == common.HELP["komi"]
    assert helps["opening_moves"] == common.HELP["opening_moves"]
    capsys.readouterr()
    for argv, flag in ((["--workdir=w", "--games=x"], "--games"), (["--workdir=w", "--komis=1,x"], "--komis=1,x"),
                       (["--workdir=w", "--mu=0.5"], "--mu=0.5"), ([], "--workdir"),
                       (["--workdir=w", "--tie_break=middle"], "--tie_break")):  # fmt: skip
        with pytest.raises(SystemExit) as e:
            common.parse(module, argv)
        assert e.value.code == 2
        err = capsys.readouterr().err
        assert "experiments.fake_script: error:" in err and flag in err, err


def test_main_runs_the_module_and_reports_an_error_in_one_line(tmp_path, capsys):
    module = _module(tmp_path)
    seen = []
    module.run = seen.append
    assert common.main(module, ["--workdir=w", f"--outdir={tmp_path / 'out'}"]) == 0
    assert seen == [_Settings(workdir="w", outdir=str(tmp_path / "out"))]

    def fail(settings):
        raise FileNotFoundError(f"no such table:\n  {settings.workdir}/games.csv")

    module.run = fail
    assert common.main(module, ["--workdir=w"]) == 2
    assert capsys.readouterr().err == "experiments.fake_script: error: no such table: w/games.csv\n"


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
    argv = ["--outdir", str(blocker / "out"), "--plot_only"]
    module = "experiments.gtp_fair_komi.gtp_fair_komi"
    head = ["experiments/gtp_fair_komi/gtp_fair_komi.py"] if route == "path" else ["-m", module]
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
    assert last.startswith("experiments.gtp_fair_komi.gtp_fair_komi: error: ") and "a_file" in last


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


def test_figures_are_palette_pngs_that_keep_their_colours_and_transparency(tmp_path):
    import matplotlib
    from PIL import Image

    matplotlib.use("Agg")
    plt = common.pyplot()

    def drawn(**savefig):
        fig, ax = plt.subplots(figsize=(3, 2))
        ax.plot([0, 1], [1, 0], color="tab:blue", lw=4)
        ax.plot([0, 1], [0, 1], color="tab:red", lw=4)
        buffer = io.BytesIO()
        fig.savefig(buffer, dpi=common.DPI, format="png", **savefig)
        plt.close(fig)
        return buffer.getvalue()

    for transparent in (False, True):
        rgba = drawn(transparent=transparent)
        palette = common.palette_png(rgba)
        image = Image.open(io.BytesIO(palette))
        assert image.mode == "P" and len(image.getcolors()) <= common.PNG_COLOURS
        before = np.asarray(Image.open(io.BytesIO(rgba)).convert("RGBA")).astype(int)
        after = np.asarray(image.convert("RGBA")).astype(int)
        assert before.shape == after.shape
        assert np.array_equal(before[..., 3] == 0, after[..., 3] == 0), "transparent pixels stay transparent"
        error = np.abs(before - after)[before[..., 3] == 255].max(axis=-1)  # opaque pixels' worst channel
        # a palette's rounding, not a different picture: a few rare blends move by more
        assert error.mean() <= 3 and np.percentile(error, 99.9) <= 8, (error.mean(), np.percentile(error, 99.9))
        for colour in ("tab:blue", "tab:red"):
            rgb = np.round(np.array(matplotlib.colors.to_rgb(colour)) * 255)
            assert np.sum(np.all(np.abs(after[..., :3] - rgb) <= 2, axis=-1)) > 100, colour
        assert len(palette) < len(rgba)
        assert common.palette_png(palette) == palette  # already a palette PNG: unchanged


# --------------------------------------------------------------------------
# The statistics the scripts used to define, now in saijax.analysis.results.


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
