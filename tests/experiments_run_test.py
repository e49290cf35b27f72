"""experiments/run.py: every claim config at a tiny size (5×5, uniform players), and the shipped verdicts."""

import os
import shutil
import subprocess
import sys

import pytest

from experiments import run
from experiments.lib import common
from saijax.learn import config as config_lib

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CLAIMS = ("score_targeting", "recovery", "suboptimal_moves")
TINY_MATCH = dict(games=2, visits=2, board_size=5, seed=0)


def _config(claim, outdir, **changes):
    config = config_lib.load_config(os.path.join(REPO, "experiments", claim, "config.py"))
    with config.unlocked():
        config.outdir = str(outdir)
        for key, value in changes.items():
            config[key] = value
    return config


def _tiny(claim, outdir):
    """The claim's config played by uniform players on 5×5, two or four games a cell, its families resized."""
    if claim == "score_targeting":
        nets = dict(strong=["S=uniform"], weak=["W=uniform"], komi=0.5, openings="shared", resume=True)
        runs = dict(main=dict(nets, figures=["5", "6"], fig5_agents=["1:1"], variable_agents=["1:0.5"],
                              thresholds=[0.5]),
                    v1000=dict(nets, figures=["5"], fig5_agents=["1:1"], visits=3))  # fmt: skip
        sizes = dict(fig5_wins=4, fig5_win_margin=8, table1_wins=2, table1_win_margin=4, v1000_wins=2,
                     v1000_win_margin=4, v1000_vs_128_wins=4, v1000_vs_128_margin=4)  # fmt: skip
        config = _config(claim, outdir, match=dict(TINY_MATCH, opening_moves=2), runs=runs)
    elif claim == "recovery":
        runs = dict(main=dict(strong=["S=uniform", "T=uniform"], opponent="W=uniform", lambdas=[0.0, 0.5, 1.0],
                              h1_komi=0.5, h1_maluses=[0.0], h2_maluses=[], score_visits=2))  # fmt: skip
        sizes = dict(fig7_wins=2, fig7_margin=2, fig7_lambda1_wins=1)
        config = _config(claim, outdir, match=dict(TINY_MATCH, opening_moves=2), runs=runs)
    else:
        runs = dict(main=dict(strong="S=uniform", agents=["0:0", "1:0"], winrate_net="A=uniform", opponent="W=uniform",
                              scorer="random", score_visits=2, head_to_head=0, komi=0.5))  # fmt: skip
        sizes = {}
        config = _config(claim, outdir, match=dict(TINY_MATCH, opening_moves=0), runs=runs,
                         figures=dict(main=["suboptimal_moves.png"]))  # fmt: skip
        with config.unlocked():  # main's families only: judge_gpu is main judged by another net
            config.families = {k: f for k, f in config.families.items() if f.where.run == "main"}
    with config.unlocked():
        config.play = True
        for name, size in sizes.items():
            config.families[name].size = size
    return config


@pytest.mark.parametrize("claim", CLAIMS)
def test_every_config_plays_at_a_tiny_size(claim, tmp_path):
    config = _tiny(claim, tmp_path)
    rows = run.run(config)
    assert os.path.exists(tmp_path / "paired_tests.csv") and not os.path.exists(tmp_path / "verdicts.csv")
    for name, files in config.figures.items():
        assert all(os.path.exists(tmp_path / name / f) for f in files)
    assert {r["family"] for r in rows} - {""} == set(config.families)
    assert all(r["p_holm"] == "" for r in rows if not r["family"])
    if claim == "score_targeting":  # shared openings: the agents pair with λ = μ = 0 against W
        tests = [r for r in rows if r["run"] == "main" and r["opponent"] == "W" and r["measure"] == "wins"]
        assert {r["test"] for r in tests} == {"McNemar"}
    with config.unlocked():
        config.families[next(iter(config.families))].size += 1
    with pytest.raises(ValueError, match="declare the family again before the games"):
        run.run(config)  # resumed, nothing played: the tests alone are refused


def test_the_configs_entries_are_their_modules_settings():
    for claim in CLAIMS:
        config = _config(claim, "x")
        for name, entries in config.runs.items():
            settings = run.settings(config, name, outdir="x")
            assert isinstance(settings, run.science(config).Settings) and settings.outdir == "x"
            assert settings.games == entries.get("games", config.match["games"])


@pytest.mark.parametrize(
    "where, key, expected",
    [
        (
            "match",
            "gamez",
            r"match: 'gamez' is not a setting of experiments.recovery.recovery \(did you mean 'games'\?\)",
        ),
        (
            "runs",
            "nonesuch",
            r"runs.main: 'nonesuch' is not a setting of experiments.recovery.recovery; its fields are ",
        ),
    ],
)
def test_an_unknown_settings_key_names_the_key_and_the_module(where, key, expected, tmp_path):
    """A config entry that is not a field of the science module's settings is refused before anything is played."""
    config = _config("recovery", tmp_path, play=True)
    with config.unlocked():
        (config.match if where == "match" else config.runs.main)[key] = 3
    with pytest.raises(ValueError, match=expected):
        run.run(config)
    assert not os.path.exists(tmp_path / "main")


def test_a_bad_settings_value_names_the_run_the_field_and_the_value(tmp_path):
    config = _config("recovery", tmp_path, play=True)
    with config.unlocked():
        config.runs.main.lambdas = ("x",)
    with pytest.raises(ValueError, match=r"runs.main: recovery.Settings.lambdas=\('x',\): needs a tuple"):
        run.settings(config, "main", outdir=str(tmp_path))


@pytest.fixture(scope="module")
def shipped(tmp_path_factory):
    out = {}
    for claim in CLAIMS:
        outdir = tmp_path_factory.mktemp(claim)
        run.run(_config(claim, outdir))
        out[claim] = {v["id"]: v for v in common.read_csv(outdir / "verdicts.csv")}
        with (
            open(outdir / "paired_tests.csv", encoding="utf-8") as f,
            open(
                os.path.join(REPO, "experiments", claim, "results", "paired_tests.csv"), encoding="utf-8"
            ) as shipped_file,
        ):
            assert f.read() == shipped_file.read(), f"results/{claim}/paired_tests.csv is not what its config gives"
    return out


def test_the_shipped_verdicts_old_and_new(shipped):
    st = shipped["score_targeting"]
    assert float(st["v1000_itself_white"]["new_raw_p"]) == pytest.approx(67 / 2048)  # was Fisher 0.0048
    changed = {k for claim in shipped.values() for k, v in claim.items() if v["changes"] == "True"}
    assert changed == {"fig5_itself_11_black", "fig5_w1_105_black", "table1_loss",
                       "s44_judge_gpu_none", "s44_judge_gpu_lambda_none"}  # fmt: skip
    judged = shipped["suboptimal_moves"]  # an independent judge: fewer moves per win holds, more games with none not
    assert float(judged["s44_judge_gpu_moves"]["new_p"]) < 0.05 < float(judged["s44_judge_gpu_none"]["new_p"])
    assert shipped["recovery"]["fig7_h1_05"]["new_below_005_without_capped"] == "0/1"
    assert float(shipped["recovery"]["fig7_h1_05"]["new_p"]) == pytest.approx(0.0177, abs=1e-4)


def test_redraw_rebuilds_the_shipped_figures_without_playing(tmp_path):
    for name in ("games.csv", "conditions.csv", "fig7_summary.csv"):
        shutil.copy(os.path.join(REPO, "experiments", "recovery", "results", "main", name), tmp_path)
    config = _config("recovery", tmp_path / "out", redraw=True, shipped=dict(main=str(tmp_path)), verdicts=[])
    run.run(config)
    assert (tmp_path / "fig7_recovery.png").exists() and (tmp_path / "out" / "paired_tests.csv").exists()


@pytest.mark.parametrize(
    "override, expected",
    [
        ("--config.match.gamez=3", 'unknown config field: Did you mean "games" instead of "gamez"?'),
        ("--config.nonesuch=3", "unknown config field 'nonesuch' in --config.nonesuch"),
    ],
)
def test_an_unknown_config_field_is_one_line(override, expected):
    """A bad override of a claim's config is one line naming the field, exit status 2, nothing written."""
    result = subprocess.run(
        [sys.executable, "-m", "experiments.run", "--config=experiments/recovery/config.py", override],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 2
    assert result.stderr.strip().splitlines()[-1] == f"error: {expected}"
    assert "Traceback" not in result.stderr


def test_only_plays_the_named_runs_and_names_an_unknown_one(tmp_path, monkeypatch):
    """``--config.only`` plays the runs it names (the others' shipped folders are tested beside them); a name
    that is not a run is refused before anything is played, naming the field and the runs."""
    played = []
    monkeypatch.setattr(run, "_perform", lambda module, settings: played.append(settings.outdir))
    config = _config("gnugo_strength", tmp_path, play=True, only="go7")
    dirs = run.play(config)
    assert played == [str(tmp_path / "go7")]
    assert dirs["go7"] == str(tmp_path / "go7") and dirs["go5"] == config.shipped["go5"]
    assert run.selected(_config("gnugo_strength", tmp_path)) == list(config.runs)
    with pytest.raises(ValueError, match=r"only: no run 'go8'; the runs are go5, go7, go7_gpu"):
        run.play(_config("gnugo_strength", tmp_path, play=True, only="go7,go8"))
    assert played == [str(tmp_path / "go7")]


def test_a_claim_is_played_on_another_zoo_into_its_own_folder(tmp_path):
    """--config.zoo=sharp: the flat zoo's nets renamed (here to 5×5 zoo nets standing in for the sharp ones), the
    results in <outdir>/sharp/<run>/, the families kept; zoo=flat is the config itself."""
    config = _tiny("recovery", tmp_path)
    with config.unlocked():
        config.runs.main.strong = ["zoo:go7-S1", "zoo:go7-S2"]
        config.runs.main.opponent = "zoo:go7-W1"
    assert run.for_zoo(config) is config  # flat: nothing renamed, the shipped folders as they are
    with config.unlocked():
        config.zoo = "sharp"
        config.zoos.sharp.names = {"go7-S1": "go5", "go7-S2": "go5-sai", "go7-W1": "go5-weak"}
    rows = run.run(config)
    games = common.read_csv(tmp_path / "sharp" / "main" / "games.csv")
    players = {g[colour].partition("[")[0] for g in games for colour in ("black", "white")}  # go5[l=1,m=0]: its agent
    assert players == {"go5", "go5-sai", "go5-weak"}
    assert (tmp_path / "sharp" / "paired_tests.csv").exists() and not (tmp_path / "main").exists()
    assert {r["family"] for r in rows} - {""} == set(config.families)
    # Read back from the zoo's own shipped folder, as --config.zoo=sharp does without play.
    with config.unlocked():
        config.play, config.verdicts = False, []  # the tiny runs play no H2, which the verdicts need
    assert len(run.run(config)) == len(rows)


def test_another_zoo_refuses_an_unknown_zoo_a_missing_net_and_missing_games(tmp_path, monkeypatch):
    monkeypatch.chdir(REPO)
    config = _config("handicap", tmp_path, zoo="round")
    with pytest.raises(ValueError, match=r"zoo: 'round' is not a zoo of this claim; use one of flat, sharp"):
        run.run(config)
    with config.unlocked():
        config.zoo, config.play = "sharp", True
        config.zoos.sharp.names = {"go7-S2": "go7-S2"}  # one stand-in is there; the rest are not
    with pytest.raises(ValueError, match=r"zoo=sharp: the model zoo has no go7-sharp-S1, go7-sharp-S3, go7-sharp-W1"):
        run.run(config)
    with config.unlocked():
        config.play = False
    with pytest.raises(ValueError, match=r"run 'main' has no shipped games in .*sharp/main; play them"):
        run.run(config)
    config = _config("styles", tmp_path, zoo="sharp")
    with pytest.raises(ValueError, match="no run of experiments.styles.styles plays a net of the sharp zoo"):
        run.run(config)
