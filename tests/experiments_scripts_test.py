"""Every experiments/ science module: its typed settings, its command line where people run it alone (--help,
the README's commands), and a tiny run into tmp_path.

The tiny runs play 5×5 games between ``uniform`` players (random legal
moves, no network to initialise; 2 visits, 2 games per cell) in this
process, through each module's ``run(settings)`` (a claim's config through
experiments/run.py): every match has the same shape, so the modules share
compiled searches. The modules that play GNU Go are marked slow.
"""

import dataclasses
import importlib
import inspect
import os
import pathlib
import re
import shlex
import shutil

import matplotlib.colors
import matplotlib.image
import numpy as np
import pytest
from experiments_configs_test import configured

from experiments import run
from experiments.lib import common

REPO = pathlib.Path(__file__).resolve().parents[1]
# Every science module, experiments/<claim>/<module>.py, and its claim.
HOME = {p.stem: p.parent.name for p in (REPO / "experiments").glob("*/*.py")
        if p.parent.name != "lib" and p.stem not in ("__init__", "config")}  # fmt: skip
SCRIPTS = sorted(HOME)
# The twelve experiment scripts (besides others, e.g. reanalysis.py, with their own tests).
EXPERIMENTS = (
    "baselines",
    "elo_curve",
    "gnugo_strength",
    "handicap",
    "position_control",
    "recovery",
    "score_estimation",
    "score_targeting",
    "score_vs_winrate",
    "sigmoid_figures",
    "styles",
    "suboptimal_moves",
)
TINY = dict(board_size=5, visits=2)  # tiny nets' settings (a claim config's match settings)
# The modules people run alone, with the command lines of README.md and experiments/README.md.
COMMAND_LINES = {"catch_up", "elo_curve", "gnugo_strength", "gtp_fair_komi", "handicap", "opening_spread",
                 "position_control", "reanalysis", "recovery", "score_estimation", "score_stability",
                 "score_targeting", "suboptimal_moves", "zoo_select"}  # fmt: skip


def _script(name):
    return importlib.import_module(f"experiments.{HOME[name]}.{name}")


def _readme_commands():
    """(script, argv) of every ``python experiments/<claim>/<script>.py ...`` command in the experiments' READMEs
    and journals."""
    docs = sorted((REPO / "experiments").glob("*.md")) + sorted((REPO / "experiments").glob("*/*.md"))
    text = "\n".join(p.read_text(encoding="utf-8") for p in docs).replace("\\\n", " ")
    out = []
    for line in text.splitlines():
        found = re.search(r"python experiments/\w+/(\w+)\.py\s+(.*)", line)
        if found and found[1] in SCRIPTS:
            argv = shlex.split(found[2].split("  #")[0].split("`")[0], comments=True)
            out.append((found[1], argv))
    return out


@pytest.mark.parametrize("name", SCRIPTS)
def test_every_module_runs_from_typed_settings(name):
    """A frozen settings dataclass (every field typed, its default stated once) and ``run(settings)``; a command
    line only where people run the module alone, its flags made from the fields (no argv parser of its own)."""
    module = _script(name)
    assert dataclasses.is_dataclass(module.Settings) and issubclass(module.Settings, common.Settings)
    assert module.Settings.__dataclass_params__.frozen and callable(module.run)
    assert not hasattr(module, "parse_args") and "add_argument" not in inspect.getsource(module)
    assert hasattr(module, "main") == (name in COMMAND_LINES)


@pytest.mark.parametrize("name", sorted(COMMAND_LINES))
def test_help(name, capsys):
    with pytest.raises(SystemExit) as e:
        _script(name).main(["--help"])
    assert e.value.code == 0
    out = capsys.readouterr().out
    assert out.startswith(f"usage: experiments.{HOME[name]}.{name}") and "--outdir" in out


def test_every_script_is_tested():
    assert set(SCRIPTS) >= set(EXPERIMENTS)
    assert not (REPO / "experiments" / "nets.py").exists(), "nets.py went into experiments/lib/common.py"


def test_the_modules_with_a_command_line_are_those_the_readme_runs():
    assert {name for name, _ in _readme_commands()} == COMMAND_LINES


@pytest.mark.parametrize("name, argv", _readme_commands(), ids=lambda x: x if isinstance(x, str) else "cmd")
def test_readme_commands_parse(name, argv):
    settings = common.parse(_script(name), argv)
    assert isinstance(settings, _script(name).Settings) and settings.outdir


@pytest.mark.parametrize(
    "name", ["handicap", "recovery", "score_targeting", "score_estimation", "suboptimal_moves", "elo_curve"]
)
def test_gumbel_scale_is_a_player_flag_and_zero_by_default(name):
    required = ["--workdir=w"] if name == "elo_curve" else []
    assert common.parse(_script(name), ["--outdir=x", *required]).gumbel_scale == 0.0
    assert common.parse(_script(name), ["--outdir=x", "--gumbel_scale=1", *required]).gumbel_scale == 1.0
    assert _script(name).Settings(outdir="x").gumbel_scale == 0.0


def test_gnugo_scripts_need_their_nets():
    with pytest.raises(SystemExit):
        common.parse(_script("gnugo_strength"), ["--outdir=x"])  # neither --nets nor --workdir
    with pytest.raises(ValueError, match="give exactly one of nets and workdir"):
        _script("gnugo_strength").Settings(outdir="x")


def _run(name, **settings):
    """The module's run on ``settings`` (TINY's nets), as the runner and the command line run it."""
    module = _script(name)
    return common.perform(module.run, module.Settings(**{**TINY, **settings}))


def _files(path):
    return sorted(os.listdir(path))


# --------------------------------------------------------------------------
# Tiny runs: no nets.


def test_sigmoid_figures_config_draws(tmp_path):
    run.run(configured("sigmoid_figures", tmp_path, play=True))  # the whole config: nothing to shrink
    out = tmp_path / "main"
    assert {"fig1_sigmoids.png", "fig1_sigmoids.csv", "ecai_fig1_interval_average.csv"} <= set(_files(out))
    rows = common.read_csv(out / "ecai_fig1_interval_average.csv")
    assert rows[0] == {"quantity": "root_alpha", "value": "20.0"}


def test_score_vs_winrate_config_computes(tmp_path):
    config = configured("score_vs_winrate", tmp_path, play=True)
    with config.unlocked():
        config.runs.main.update(num_mdps=10, depth=3, num_bins=5)
    run.run(config)
    for stem in ("prop1_bandit", "fig3_outcome_loss_by_level", "fig4_variance_log_ratio"):
        assert (tmp_path / "main" / f"{stem}.png").exists() and (tmp_path / "main" / f"{stem}.csv").exists()
    assert len(common.read_csv(tmp_path / "main" / "fig3_outcome_loss_by_level.csv")) == 4  # levels 0..3


def test_baselines_config_redraws_the_shipped_tables(tmp_path):
    for name in ("elo.csv", "curves.csv", "gnugo.csv", "calibration.csv", "calibration_moves.csv"):
        shutil.copy(REPO / "experiments" / "baselines" / "results" / "main" / name, tmp_path)
    _redraw(configured("baselines", tmp_path / "out"), dict(main=tmp_path))  # the plot stage: nothing trained
    summary = common.read_csv(tmp_path / "summary.csv")
    assert summary[0]["arm"] == "SAI"
    image = _figure(tmp_path / "baselines.png", inches=(11, 8))  # baselines.plot's four panels
    assert _pixels_of(image, "tab:blue") > 0  # the first arm's curve is drawn


def test_elo_curve_config_redraws_the_shipped_tables(tmp_path):
    for name in ("elo.csv", "learning_curve.csv"):
        shutil.copy(REPO / "experiments" / "elo_curve" / "results" / "main" / name, tmp_path)
    _redraw(configured("elo_curve", tmp_path / "out"), dict(main=tmp_path))
    image = _figure(tmp_path / "elo_curve.png", inches=(7, 6))  # elo_curve.plot's two panels
    assert _pixels_of(image, "tab:blue") > 0 and _pixels_of(image, "tab:red") > 0  # Elo above, α_∅ below


def _figure(path, inches):
    """The PNG at ``path``, decoded (RGBA floats), checked to be a figure of ``inches`` at common.DPI."""
    image = matplotlib.image.imread(path)
    width, height = inches
    assert image.shape == (round(height * common.DPI), round(width * common.DPI), 4), image.shape
    return image


def _pixels_of(image, colour, tolerance=0.03):
    """How many of ``image``'s pixels are ``colour`` (a matplotlib colour name), within ``tolerance``."""
    rgb = np.array(matplotlib.colors.to_rgb(colour))
    return int(np.sum(np.all(np.abs(image[..., :3] - rgb) <= tolerance, axis=-1)))


def test_a_missing_table_is_one_error_line(tmp_path, capsys):
    assert _script("elo_curve").main(["--plot_only", "--outdir", str(tmp_path)]) == 2
    assert capsys.readouterr().err.startswith("experiments.elo_curve.elo_curve: error: ")


# --------------------------------------------------------------------------
# Tiny runs: uniform players on 5×5.


def _redraw(config, folders):
    """The config's shipped-games path on ``folders`` (run -> folder) with ``--config.redraw=True``."""
    with config.unlocked():
        config.play, config.redraw, config.shipped = False, True, {k: str(v) for k, v in folders.items()}
    return run.run(config)


def test_handicap_config_plays_resumes_and_redraws(tmp_path):
    runs = dict(main=dict(strong=["S=uniform"], weak=["W=uniform"], games=2, score_visits=2, maluses=[0.0],
                          target_rates=[0.5], h1_komis=[0.5], h2_komis=[]))  # fmt: skip
    config = configured("handicap", tmp_path, play=True, match=dict(TINY, komi=0.5), runs=runs,
                        figures=dict(main=["fig3_handicap_by_komi.png", "fig4_handicap_by_stones.png"]))  # fmt: skip
    h = tmp_path / "main"
    assert run.run(config) == []  # no claim_tests: the script's own tests
    assert {"games.csv", "conditions.csv", "fig3_summary.csv", "fig4_summary.csv", "start_positions.csv",
            "maluses.csv", "fig3_tests.csv", "fig3_handicap_by_komi.png",
            "fig4_handicap_by_stones.png", "sgf.tar.xz"} <= set(_files(h))  # fmt: skip
    fig3 = common.read_csv(h / "fig3_summary.csv", text=("figure", "strong", "opponent", "strong_colour"))
    assert {r["opponent"] for r in fig3} == {"itself", "W"} and all(r["games"] in (1, 2) for r in fig3)
    chosen = common.read_csv(h / "maluses.csv", text=("opponent",))
    assert {r["opponent"] for r in chosen} == {"itself", "W"} and all(r["margins"] == 2 for r in chosen)
    assert {r["malus"] for r in fig3} == {0.0} | {r["malus"] for r in chosen}
    games = (h / "games.csv").read_text()
    run.run(config)  # a rerun resumes every cell: nothing is played again
    assert (h / "games.csv").read_text() == games
    os.remove(h / "fig3_handicap_by_komi.png")
    _redraw(config, dict(main=h))
    assert (h / "fig3_handicap_by_komi.png").exists() and (h / "games.csv").read_text() == games


def test_recovery_run(tmp_path):
    settings = dict(games=2, score_visits=2, strong=["S=uniform"], opponent="W=uniform", lambdas=[0.0, 1.0], mu=0.0,
                    h1_maluses=[0.0], h2_maluses=[], outdir=str(tmp_path / "r"))  # fmt: skip
    _run("recovery", **settings)
    rows = common.read_csv(tmp_path / "r" / "fig7_summary.csv")
    assert (
        sorted(float(r["lambda"]) for r in rows) == [0.0, 1.0]
        and {float(r["mu"]) for r in rows} == {0.0}
        and (tmp_path / "r" / "fig7_recovery.png").exists()
    )
    tests = common.read_csv(tmp_path / "r" / "fig7_tests.csv")
    assert [(float(r["lambda"]), int(r["games"]), int(r["base_games"])) for r in tests] == [(1.0, 2, 2)]
    games = (tmp_path / "r" / "games.csv").read_text()
    _run("recovery", **settings)  # resumed: nothing is played again
    assert (tmp_path / "r" / "games.csv").read_text() == games


def test_score_targeting_runs_and_resumes(tmp_path, capsys):
    settings = dict(games=2, strong=["S=uniform"], weak=["W=uniform"], komi=0.5, figures=["5"], lambdas=[1.0],
                    mu_fractions=[0.0], outdir=str(tmp_path))  # fmt: skip
    _run("score_targeting", **settings)
    assert {"games.csv", "cells.csv", "table1.csv", "fig5_score_targeting.png"} <= set(_files(tmp_path))
    assert "4 cells of 2 games (0 already played)" in capsys.readouterr().out
    _run("score_targeting", **settings, resume=True)
    assert "4 cells of 2 games (4 already played)" in capsys.readouterr().out


def test_score_estimation_run(tmp_path):
    _run("score_estimation", games=2, strong="S=uniform", opponents=["W=uniform"], scorer="uniform",
         score_visits_list=[2], komi=0.5, resign_threshold=0.5, outdir=str(tmp_path))  # fmt: skip
    assert {"games.csv", "summary.csv", "score_estimation.png"} <= set(_files(tmp_path))
    assert [r["estimator"] for r in common.read_csv(tmp_path / "summary.csv")] == ["scorer 2 visits", "own search"]


def test_suboptimal_moves_run(tmp_path):
    _run("suboptimal_moves", games=4, strong="S=uniform", opponent="W=uniform", scorer="random", agents=["0:0", "1:0"],
         winrate_net="A=uniform", head_to_head=2, score_visits=2, komi=0.5, opening_moves=0,
         outdir=str(tmp_path))  # fmt: skip
    assert {"games.csv", "moves.csv", "summary.csv", "tests.csv", "head_to_head.csv", "suboptimal_moves.png"} <= set(
        _files(tmp_path)
    )
    names = [r["condition"] for r in common.read_csv(tmp_path / "summary.csv", text=("condition",))]
    assert len(names) == 3 and names[-1] == "A"
    tests = common.read_csv(tmp_path / "tests.csv", text=("condition", "baseline"))
    # Every SAI agent against the winrate net (the paper's pair), then λ = 1 against λ = 0.
    assert [(t["condition"], t["baseline"]) for t in tests] == [(names[0], "A"), (names[1], "A"), (names[1], names[0])]
    for t in tests:
        assert t["games"] == t["base_games"] == 4
        assert 0 <= t["won_with_none"] <= t["won"] == t["wins"]
        assert t["p_with_none_more"] <= t["p_with_none_more_holm"] <= 1
    (h2h,) = common.read_csv(tmp_path / "head_to_head.csv", text=("player", "opponent"))
    assert (h2h["player"], h2h["opponent"], h2h["games"]) == (names[0], "A", 2)
    with pytest.raises(ValueError, match="head_to_head=4: needs a winrate_net"):
        _script("suboptimal_moves").Settings(outdir="x", head_to_head=4)  # no winrate net to play
    # The tables rebuild from games.csv and moves.csv alone.
    summary, tests = (tmp_path / "summary.csv").read_text(), (tmp_path / "tests.csv").read_text()
    os.remove(tmp_path / "summary.csv")
    _run("suboptimal_moves", summarize_only=True, winrate_net="A=uniform", outdir=str(tmp_path))
    assert (tmp_path / "summary.csv").read_text() == summary and (tmp_path / "tests.csv").read_text() == tests
    with pytest.raises(ValueError, match="no condition 'B'"):
        _run("suboptimal_moves", summarize_only=True, winrate_net="B=uniform", outdir=str(tmp_path))


def test_opening_spread_config_plays_and_redraws(tmp_path):
    runs = dict(main=dict(net="uniform", games=6, random_moves=2, batch=4, komi=0.5))
    config = configured("opening_spread", tmp_path, play=True, match=TINY, runs=runs,
                        figures=dict(main=["opening_spread.png"]))  # fmt: skip
    run.run(config)
    out = tmp_path / "main"
    assert {"games.csv", "summary.csv", "tests.csv", "opening_spread.png"} <= set(_files(out))
    summary = common.read_csv(out / "summary.csv")
    assert [r["opening_policy"] for r in summary] == ["visits", "improved"]
    games = common.read_csv(out / "games.csv")
    assert len(games) == 12 and all(float(g["komi"]) == 0.5 for g in games)
    for r in summary:
        margins = [float(g["board_margin"]) for g in games if g["opening_policy"] == r["opening_policy"]]
        assert float(r["mean_board_margin"]) == pytest.approx(sum(margins) / 6, abs=1e-3)
    tables = [(out / name).read_text() for name in ("games.csv", "summary.csv", "tests.csv")]
    for name in ("summary.csv", "tests.csv", "opening_spread.png"):
        os.remove(out / name)
    _redraw(config, dict(main=out))  # the tables again from games.csv, as played
    assert [(out / name).read_text() for name in ("games.csv", "summary.csv", "tests.csv")] == tables


def test_gtp_fair_komi_config_asks_an_engine(tmp_path):
    """A real engine process through a pipe, asked as Lizzie asks."""
    config = configured("gtp_fair_komi", tmp_path, play=True, match=dict(TINY, komis=[0.5, 1.5]),
                        runs=dict(main=dict(nets=["random"])), figures=dict(main=["gtp_fair_komi.png"]))  # fmt: skip
    run.run(config)
    out = tmp_path / "main"
    assert {"fair_komi.csv", "summary.csv", "gtp_fair_komi.png"} <= set(_files(out))
    rows = common.read_csv(out / "fair_komi.csv")
    assert [float(r["komi"]) for r in rows] == [0.5, 1.5]
    assert all(0.0 <= float(r["winrate"]) <= 1.0 for r in rows)
    (summary,) = common.read_csv(out / "summary.csv")
    assert float(summary["drop"]) == pytest.approx(float(rows[0]["winrate"]) - float(rows[1]["winrate"]), abs=1e-3)
    os.remove(out / "gtp_fair_komi.png")
    _redraw(config, dict(main=out))  # from summary.csv: no engine
    assert (out / "gtp_fair_komi.png").exists()


def test_gtp_fair_komi_reads_the_order_0_move():
    reply = (
        "info move D3 visits 3 winrate 0.30 scoreLead 0.6 order 1 pv D3 "
        "info move C3 visits 15 utility 0.6 winrate 0.8146 scoreMean 0.61 scoreLead 0.6125 order 0 pv C3 pass"
    )
    parsed = _script("gtp_fair_komi").parse_analysis(reply)
    assert parsed == {"move": "C3", "visits": 15, "winrate": 0.8146, "score_lead": 0.6125}
    with pytest.raises(ValueError, match="order 0"):
        _script("gtp_fair_komi").parse_analysis("play C3")
    # The engine's search: Gumbel by default, PUCT (SAI's) for nets trained under it; nothing else.
    settings = _script("gtp_fair_komi").Settings
    assert settings(nets=("random",)).algorithm == "gumbel"
    assert settings(nets=("random",), algorithm="puct").algorithm == "puct"
    with pytest.raises(ValueError, match="algorithm='mcts': one of gumbel, puct"):
        settings(nets=("random",), algorithm="mcts")


def test_gnugo_strength_reads_the_lost_games_move_by_move(tmp_path, capsys):
    """losses.csv from a folder's games.csv and its packed SGFs: where each lost game turned, the same lines once."""
    from saijax.core import go, sgf

    rules = go.GoRules(size=5)
    moves = [go.from_gtp(rules, v) for v in ("C3", "B2", "D4", "C2", "B3", "D2")]
    comments = [
        "engine's random opening move",
        "alpha=-2 beta=1 winrate=0.7 visits=8",
        None,
        "alpha=-1 beta=1 winrate=0.65 visits=8",
        None,
        "alpha=-9 beta=1 winrate=0.1 visits=8",
    ]
    record = sgf.GameRecord(size=5, komi=0.5, moves=tuple(moves), comments=tuple(comments), result="B+9.5")
    net_dir = tmp_path / "sgf" / "my-net-white"
    net_dir.mkdir(parents=True)
    games = []
    for game, winner in ((0, "black"), (1, "white"), (2, "black")):
        sgf.write_sgf(record, net_dir / f"game_{game}.sgf")
        path = f"elsewhere/sgf/my-net-white/game_{game}.sgf"  # written where the folder was: read from its archive
        games.append(dict(black="gnugo-l1", white="my-net", winner=winner, margin=9.5, game=game, sgf=path))
    common.write_csv(tmp_path / "games.csv", games)
    common.write_csv(tmp_path / "summary.csv", [dict(net="my-net")])
    common.pack_sgfs(tmp_path)
    shutil.rmtree(tmp_path / "sgf")
    _script("gnugo_strength").run(_script("gnugo_strength").Settings(outdir=str(tmp_path), losses_only=True))
    rows = common.read_csv(tmp_path / "losses.csv")
    assert [(r["game"], r["same_as"]) for r in rows] == [("0", ""), ("2", "0")]
    row = rows[0]
    assert (row["net"], row["colour"], row["engine_opening_moves"], row["last_move_at_half"]) == (
        "my-net",
        "white",
        "1",
        "4",
    )
    assert (row["turn_move"], row["turn_vertex"], row["reply_move"], row["reply_vertex"]) == ("4", "C2", "5", "B3")
    assert (float(row["first_winrate"]), float(row["peak_winrate"]), float(row["drop"])) == (0.7, 0.7, 0.55)
    assert float(row["last_winrate"]) == 0.1
    assert "2 lost, 1 distinct games, 1 of them after a winrate of 0.5 or more" in capsys.readouterr().out
    with pytest.raises(ValueError, match="not <net>-<colour>"):
        _script("gnugo_strength")._net_side("x/sgf/net/game_0.sgf")


# --------------------------------------------------------------------------
# Tiny runs against GNU Go (slow: a GTP process per game).

_GNUGO = dict(reason="GNU Go is not installed")


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("gnugo") is None and not os.path.exists("/usr/games/gnugo"), **_GNUGO)
@pytest.mark.parametrize(
    "claim, name, settings, outputs",
    [
        ("gnugo_strength", "go5", dict(nets=["uniform"], games=1, black_komi=0.5, white_komi=0.5,
                                       engine_opening_moves=1), {"summary.csv", "gnugo_strength.png"}),
        ("position_control", "main", dict(net="uniform", opponent="gnugo", games=2, methods=["none", "C:2.5"],
                                          black_komi=0.5, white_komi=0.5),
         {"summary.csv", "games.csv", "position_control.png"}),
        ("styles", "main", dict(net="uniform", games=2, players=["plain", "online-centre"], black_komi=0.5,
                                white_komi=0.5), {"summary.csv", "moves.csv", "styles.png"}),
    ],
)  # fmt: skip
def test_gnugo_configs_play_and_redraw(claim, name, settings, outputs, tmp_path, monkeypatch):
    """The config's run ``name`` played by a uniform player against GNU Go level 1 on 5×5, then redrawn."""
    if shutil.which("gnugo") is None:
        monkeypatch.setenv("PATH", os.environ["PATH"] + os.pathsep + "/usr/games")
    config = configured(claim, tmp_path, play=True, match=dict(TINY, level=1), runs={name: settings})
    with config.unlocked():
        config.figures = {name: list(config.figures[name])}
    assert run.run(config) == []  # the script's own tests, no paired ones
    out = tmp_path / name
    assert outputs <= set(_files(out))
    figure = out / config.figures[name][0]
    os.remove(figure)
    _redraw(config, {name: out})  # from the tables: nothing played again
    assert figure.exists()


@pytest.mark.slow
def test_score_stability_config_plays_and_resumes(tmp_path, capsys):
    runs = dict(main=dict(strong="S=uniform", opponents=["W=uniform"], scorer="uniform", games=2,
                          score_visits_list=[1, 2], continuation_visits=2, resign_threshold=0.9))  # fmt: skip
    config = configured("score_stability", tmp_path, play=True, match=TINY, runs=runs)
    run.run(config)
    out = tmp_path / "main"
    assert {"games.csv", "positions.csv", "resign_points.csv", "summary.csv", "tests.csv",
            "score_stability.png"} <= set(_files(out))  # fmt: skip
    summary = common.read_csv(out / "summary.csv", text=("estimator",))
    assert [r["estimator"] for r in summary] == ["root α", "median 1", "median 2"]
    run.run(config)
    assert "2 games already played" in capsys.readouterr().out
