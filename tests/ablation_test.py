"""experiments/ablation/ablation.py: learning curves, the exported nets, the round robin, resuming and adding an arm."""

import json
import os

import jax
import optax
import pytest
from experiments_configs_test import configured

from experiments import run
from experiments.ablation import ablation, catch_up
from experiments.lib import common
from saijax.analysis import stats
from saijax.core import checkpoints, networks
from saijax.learn import training


def _arm(root, name, seed, first_moves):
    """A fake run: one tiny 5×5 checkpoint and a metrics.jsonl with one line per generation."""
    workdir = os.path.join(root, name)
    spec = networks.NetworkSpec(board_size=5, blocks=1, filters=8)
    state = training.create_train_state(spec.build(), optax.sgd(0.1), jax.random.PRNGKey(seed))
    with checkpoints.Checkpointer(workdir) as ckpt:
        ckpt.save(len(first_moves) - 1, state=state, rng_key=jax.random.PRNGKey(0), network=spec, replay_dir=workdir)
    with open(os.path.join(workdir, "metrics.jsonl"), "w") as f:
        for g, move in enumerate(first_moves):
            line = {"generation": g, "selfplay_evaluations": 1e6, "seconds": 60.0, "first_move": move}
            line |= {"alpha_empty": float(g), "beta_empty": 0.1 * (g + 1), "score_error": 10.0 - g}
            f.write(json.dumps(line) + "\n")
    return workdir


@pytest.fixture(scope="module")
def arms(tmp_path_factory):
    root = str(tmp_path_factory.mktemp("arms"))
    return {
        "base": _arm(root, "base", 1, ["C2", "C3", "B2", "C3"]),
        "noise": _arm(root, "noise", 2, ["C3", "C3", "C3"]),
    }


def test_d4_from_is_where_the_first_move_settles():
    curve = [{"generation": g, "first_move": m} for g, m in enumerate(["D4", "C4", "D4", "D4"])]
    assert ablation.d4_from(curve) == 2
    assert ablation.d4_from(curve, "C4") == ""


def _settings(outdir, **changes):
    """experiments/ablation/ablation.py's settings at a tiny size (5×5, 2 visits) into ``outdir``."""
    return ablation.Settings(board_size=5, visits=2, outdir=str(outdir), **changes)


def test_arms_need_names_and_workdirs(tmp_path):
    with pytest.raises(ValueError, match="NAME=WORKDIR"):
        ablation.parse_arms(str(tmp_path))
    with pytest.raises(FileNotFoundError, match="no workdir"):
        ablation.parse_arms(f"x={tmp_path}/missing")


def _tiny(tmp_path, **main):
    """experiments/ablation/config.py at a tiny size (5×5, 2 visits, 2 games a pairing), played into tmp_path."""
    return configured("ablation", tmp_path, play=True, match=dict(board_size=5, visits=2, games=2, seed=0),
                      runs=dict(main=dict(opening_moves=2, komi=0.5, **main)))  # fmt: skip


def test_ablation_rates_arms_and_adds_a_later_one(arms, tmp_path, capsys):
    out = str(tmp_path / "main")
    tiny = dict(games=2, opening_moves=2, komi=0.5)
    assert run.run(_tiny(tmp_path, arms=[f"base={arms['base']}"])) == []  # the config's run, its own tests
    rows = common.read_csv(os.path.join(out, "arms.csv"))
    assert [r["arm"] for r in rows] == ["base"]
    assert float(rows[0]["evaluations_m"]) == 4.0 and float(rows[0]["minutes"]) == 4.0
    assert rows[0]["d4_from"] == ""  # never D4
    assert float(rows[0]["alpha_empty"]) == pytest.approx(1.5)  # mean of 0..3 with the default --last 10

    # A later session adds an arm: the first arm's curve and net are kept, every pair is rated.
    run.run(_tiny(tmp_path, arms=[f"noise={arms['noise']}"], last=2))
    rows = {r["arm"]: r for r in common.read_csv(os.path.join(out, "arms.csv"))}
    assert set(rows) == {"base", "noise"}
    assert float(rows["base"]["alpha_empty"]) == pytest.approx(2.5)  # last 2 generations: 2, 3
    assert float(rows["base"]["elo"]) == 0.0  # the anchor: the first arm of curves.csv
    games = common.read_csv(os.path.join(out, "games.csv"))
    assert len(games) == 2 and {games[0]["black"], games[0]["white"]} == {"base", "noise"}
    (pairing,) = common.read_csv(os.path.join(out, "pairings.csv"))
    assert (pairing["first"], pairing["second"], int(pairing["games"])) == ("base", "noise", 2)
    wins = float(pairing["first_wins"])
    assert float(pairing["first_rate"]) == pytest.approx(wins / 2)
    assert float(pairing["p"]) == pytest.approx(stats.binomial_test(wins, 2), abs=1e-4)
    assert float(pairing["p_holm"]) == pytest.approx(float(pairing["p"]), abs=1e-4)  # one test: no correction
    assert os.path.exists(os.path.join(out, "ablation.png"))
    assert "| noise |" in capsys.readouterr().out

    # Resuming plays nothing again; plot_only redraws from the tables.
    common.perform(ablation.run, _settings(out, **tiny))
    assert len(common.read_csv(os.path.join(out, "games.csv"))) == 2
    os.remove(os.path.join(out, "ablation.png"))
    common.perform(ablation.run, _settings(out, **tiny, plot_only=True))
    assert os.path.exists(os.path.join(out, "ablation.png"))


def test_a_bad_anchor_is_an_error_naming_it(arms, tmp_path):
    ablation.run(_settings(tmp_path, arms=(f"base={arms['base']}",), games=0))
    ablation.run(_settings(tmp_path, games=2, anchor="nope"))  # one arm only: nothing to rate
    with pytest.raises(ValueError, match="anchor 'nope' is not an arm"):
        ablation.run(_settings(tmp_path, arms=(f"noise={arms['noise']}",), games=2, anchor="nope"))


def test_games_0_adds_an_arm_unrated_and_keeps_the_ratings(arms, tmp_path):
    """An arm added with games=0 (a session that cannot play its pairings) is listed
    without a rating; the arms already played keep theirs, from games.csv."""
    out = str(tmp_path / "out")
    tiny = dict(opening_moves=2, komi=0.5)
    ablation.run(_settings(out, arms=(f"base={arms['base']}", f"noise={arms['noise']}"), games=2, **tiny))
    before = {r["arm"]: r["elo"] for r in common.read_csv(os.path.join(out, "elo.csv"))}
    ablation.run(_settings(out, arms=(f"late={arms['base']}",), games=0, **tiny))
    rows = {r["arm"]: r for r in common.read_csv(os.path.join(out, "arms.csv"))}
    assert set(rows) == {"base", "noise", "late"} and rows["late"].get("elo", "") == ""
    assert {r["arm"]: r["elo"] for r in common.read_csv(os.path.join(out, "elo.csv"))} == before
    assert len(common.read_csv(os.path.join(out, "games.csv"))) == 2  # nothing played


def test_an_arm_can_be_the_first_generations_of_a_longer_run(arms, tmp_path):
    """``NAME=WORKDIR@G``: the run up to generation G, its checkpoint G."""
    workdir = arms["base"]  # checkpoint 3 kept, metrics for 0..3
    assert ablation.parse_arms(f"early={workdir}@3") == [("early", workdir, 3)]
    with pytest.raises(ValueError, match="after '@'"):
        ablation.parse_arms(f"early={workdir}@x")
    curve = ablation.learning_curve("early", workdir, 1)
    assert [r["generation"] for r in curve] == [0, 1] and curve[-1]["evaluations_m"] == 2.0
    with pytest.raises(ValueError, match="no metrics for generation 9"):
        ablation.learning_curve("early", workdir, 9)
    with pytest.raises(ValueError, match="keeps no checkpoint 1"):
        ablation.export_arm("early", workdir, str(tmp_path / "nets"), 1)
    entry = ablation.export_arm("early", workdir, str(tmp_path / "nets"), 3)
    assert entry.generation == 3
    # The exported net plays from the private zoo (e.g. against GNU Go: gnugo_strength.py --zoo_dir).
    (player,) = common.load_nets("zoo:early", board_size=None, zoo_dir=str(tmp_path / "nets"))
    assert player.name == "early" and player.board_size == 5


@pytest.mark.slow
def test_catch_up_rates_generations_against_a_reference(tmp_path):
    """experiments/ablation/catch_up.py: kept generations of a run against a reference net, and the crossing of ½."""
    root = str(tmp_path)
    workdir = _arm(root, "run", 3, ["C3", "C3"])  # checkpoint 1 kept, metrics for 0, 1
    ref = _arm(root, "ref", 4, ["C3"])
    nets = str(tmp_path / "nets")
    ablation.export_arm("ref", ref, nets)
    out = str(tmp_path / "out")
    argv = [f"--workdir={workdir}", "--reference=zoo:ref", f"--zoo_dir={nets}", "--generations=1"]
    argv += ["--board_size=5", "--visits=2", "--games=4", "--opening_moves=2", "--komi=0.5", f"--outdir={out}"]
    assert catch_up.main(argv) == 0
    (row,) = common.read_csv(os.path.join(out, "summary.csv"))
    assert (int(row["generation"]), float(row["evaluations_m"]), int(row["games"])) == (1, 2.0, 4)
    assert len(common.read_csv(os.path.join(out, "games.csv"))) == 4
    assert catch_up.main([*argv[:3], "--generations=0", *argv[4:]]) == 2  # generation 0 was not kept


def test_catch_up_interpolates_the_crossing_of_half():
    rows = [{"evaluations_m": 1.0, "score": 0.3}, {"evaluations_m": 3.0, "score": 0.7}]
    assert catch_up.crossing(rows) == pytest.approx(2.0)
    assert catch_up.crossing(rows[:1]) is None
