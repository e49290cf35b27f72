"""experiments/elo_curve/zoo_select.py: S1–S3 from an Elo curve, W1–W3 by measured win rate, export to a zoo."""

import os

import jax
import optax
import pytest
from experiments_configs_test import configured

from experiments import run
from experiments.elo_curve import zoo_select
from experiments.lib import common
from saijax import zoo
from saijax.core import checkpoints, networks
from saijax.learn import training


def test_elo_gap_is_the_logistic_gap():
    assert zoo_select.elo_gap(0.5) == 0.0
    assert zoo_select.elo_gap(0.72) == pytest.approx(164.0, abs=0.5)
    assert zoo_select.elo_gap(0.85) == pytest.approx(301.2, abs=0.5)
    assert zoo_select.elo_gap(0.97) == pytest.approx(603.9, abs=0.5)
    with pytest.raises(ValueError, match="not 1.0"):
        zoo_select.elo_gap(1.0)


def _rows(elos):
    return [{"generation": g, "elo": e, "elo_lo": e - 50, "elo_hi": e + 50} for g, e in elos.items()]


def test_strong_nets_and_candidates_come_from_the_curve():
    rows = _rows({0: 0, 10: 500, 20: 800, 30: 950, 40: 1100, 50: 1250, 60: 1400, 70: 1390, 80: 1410})
    strong = zoo_select.strongest(rows)
    assert [s["generation"] for s in strong] == [80, 60, 70]  # mean 1400
    cands = zoo_select.candidates(rows, strong, [0.72, 0.85, 0.97], per_target=2)
    # gaps 164, 301, 602 below 1400: 1236, 1099, 798
    picked = [(c["generation"], c["target"]) for c in cands]
    assert picked == [(50, 0.72), (40, 0.72), (30, 0.85), (20, 0.85), (10, 0.97), (0, 0.97)]
    assert cands[0]["elo_gap"] == 150.0
    more = zoo_select.candidates(rows, strong, [0.72, 0.85, 0.97], per_target=1, extra=[0, 50])
    assert [(c["generation"], c["target"]) for c in more] == [(50, 0.72), (40, 0.85), (20, 0.97), (0, 0.97)]
    with pytest.raises(ValueError, match="--extra generation 5 is not rated"):
        zoo_select.candidates(rows, strong, [0.72], per_target=1, extra=[5])


def test_weak_nets_are_chosen_by_their_measured_rate():
    cal = [
        {"generation": 50, "games": 60, "strong_rate": 0.60},
        {"generation": 40, "games": 60, "strong_rate": 0.74},
        {"generation": 30, "games": 60, "strong_rate": 0.80},
        {"generation": 20, "games": 60, "strong_rate": 0.95},
        {"generation": 10, "games": 0, "strong_rate": float("nan")},
    ]
    chosen = zoo_select.choose_weak(cal, [0.72, 0.85, 0.97])
    assert [c["generation"] for c in chosen] == [40, 30, 20]
    assert [c["target"] for c in chosen] == [0.72, 0.85, 0.97]
    # Rates rise from W1 to W3 even where a greedy nearest-first pick would not.
    cal2 = [
        {"generation": 45, "games": 60, "strong_rate": 0.700},
        {"generation": 10, "games": 60, "strong_rate": 0.917},
        {"generation": 15, "games": 60, "strong_rate": 0.783},
    ]
    assert [c["generation"] for c in zoo_select.choose_weak(cal2, [0.72, 0.85, 0.97])] == [45, 15, 10]
    with pytest.raises(ValueError, match="no measured candidate left for target 0.5"):
        zoo_select.choose_weak(cal[:1], [0.72, 0.5])


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory):
    """A fake run: tiny 5×5 checkpoints at generations 0..4 and its elo.csv."""
    root = tmp_path_factory.mktemp("zoo_select")
    workdir = str(root / "run")
    spec = networks.NetworkSpec(board_size=5, blocks=1, filters=8)
    with checkpoints.Checkpointer(workdir, max_to_keep=5) as ckpt:
        for g in range(5):
            state = training.create_train_state(spec.build(), optax.sgd(0.1), jax.random.PRNGKey(g))
            ckpt.save(g, state=state, rng_key=jax.random.PRNGKey(0), network=spec, replay_dir=workdir)
    elo = str(root / "elo.csv")
    rows = [{"net": "random", "generation": "", "elo": 0, "elo_lo": 0, "elo_hi": 0}]
    for g in range(5):
        rows.append({"net": f"gen{g}", "generation": g, "elo": 100 * g, "elo_lo": 100 * g - 80, "elo_hi": 100 * g + 80})
    common.write_csv(elo, rows)
    return workdir, elo


def test_zoo_select_measures_candidates_and_exports_six_nets(run_dir, tmp_path, capsys):
    workdir, elo = run_dir
    out, zoo_dir = str(tmp_path / "out"), str(tmp_path / "zoo")
    argv = [f"--workdir={workdir}", f"--elo={elo}", f"--outdir={out}", "--visits=2", "--games=2"]
    argv += ["--komi=0.5", "--candidates=1", "--targets=0.6,0.7,0.8"]
    assert zoo_select.main([*argv, f"--export={zoo_dir}", "--prefix=t-"]) == 2
    cal = common.read_csv(os.path.join(out, "calibration.csv"))
    # strong: 4, 3, 2 (mean 300); candidates: 1 (gap 200) and 0 (gap 300) for the first two targets, none left
    assert [int(r["generation"]) for r in cal] == [1, 0]
    assert all(int(r["games"]) == 6 for r in cal)  # 2 games against each strong net
    assert len(common.read_csv(os.path.join(out, "games.csv"))) == 12
    assert "no measured candidate left for target 0.8" in capsys.readouterr().err
    assert not os.path.exists(zoo_dir)  # nothing exported


def test_zoo_select_exports_with_two_targets(run_dir, tmp_path):
    workdir, elo = run_dir
    out, zoo_dir = str(tmp_path / "out"), str(tmp_path / "zoo")
    argv = [f"--workdir={workdir}", f"--elo={elo}", f"--outdir={out}", "--visits=2", "--games=2"]
    argv += ["--komi=0.5", "--candidates=1", "--targets=0.6,0.7", f"--export={zoo_dir}", "--prefix=t-"]
    assert zoo_select.main(argv) == 0
    selection = common.read_csv(os.path.join(out, "selection.csv"))
    assert [r["role"] for r in selection] == ["S1", "S2", "S3", "W1", "W2"]
    assert [int(r["generation"]) for r in selection][:3] == [4, 3, 2]
    records = zoo.entries(zoo_dir)
    assert sorted(records) == ["t-S1", "t-S2", "t-S3", "t-W1", "t-W2"]
    assert records["t-S1"].generation == 4 and records["t-S1"].dtype == "float16"
    assert records["t-S1"].elo == 400.0 and records["t-S1"].elo_ci == (320.0, 480.0)
    assert "weak: S1–S3 win" in records["t-W1"].notes and "2 visits" in records["t-W1"].notes
    # A rerun resumes the played games instead of replaying them.
    before = os.path.getmtime(os.path.join(out, "games.csv"))
    assert zoo_select.main(argv) == 0
    assert len(common.read_csv(os.path.join(out, "games.csv"))) == 12
    assert os.path.getmtime(os.path.join(out, "games.csv")) >= before


def test_an_elo_csv_rating_unkept_generations_is_an_error(run_dir, tmp_path, capsys):
    workdir, _ = run_dir
    elo = str(tmp_path / "elo.csv")
    common.write_csv(elo, [{"generation": g, "elo": g, "elo_lo": g, "elo_hi": g} for g in (0, 1, 2, 9)])
    argv = [f"--workdir={workdir}", f"--elo={elo}", f"--outdir={tmp_path}", "--visits=2"]
    assert zoo_select.main(argv) == 2
    assert "rates generations [9]" in capsys.readouterr().err


def test_elo_curve_rates_kept_generations_and_resumes(run_dir, tmp_path, capsys):
    """experiments/elo_curve/elo_curve.py on a run's checkpoints, through its config at a tiny size; a longer list plays
    only the new pairings."""
    from experiments.elo_curve import elo_curve

    workdir, _ = run_dir
    settings = dict(workdir=workdir, generations=[0, 1, 2], komi=0.5, neighbours=1, random_pairings=1)
    config = configured("elo_curve", tmp_path, play=True, match=dict(visits=2, games=2), runs=dict(main=settings))
    assert run.run(config) == []  # an Elo fit, no tests
    out = str(tmp_path / "main")
    argv = [f"--workdir={workdir}", f"--outdir={out}", "--visits=2", "--games=2", "--komi=0.5", "--neighbours=1"]
    argv += ["--random_pairings=1"]
    assert len(common.read_csv(os.path.join(out, "games.csv"))) == 6  # 0-1, 1-2, random-0
    rows = common.read_csv(os.path.join(out, "elo.csv"))
    assert [r["net"] for r in rows] == ["random", "gen0", "gen1", "gen2"]
    capsys.readouterr()
    assert elo_curve.main([*argv, "--generations=0,1,2,3"]) == 0
    assert "4 cells of 2 games (3 already played)" in capsys.readouterr().out  # only gen2-gen3 is new
    assert len(common.read_csv(os.path.join(out, "games.csv"))) == 8
    assert [r["net"] for r in common.read_csv(os.path.join(out, "elo.csv"))][-1] == "gen3"


def test_an_archived_run_is_rated_and_its_zoo_copied_byte_for_byte(run_dir, tmp_path, capsys):
    """A run in legs: its kept checkpoints archived (python -m saijax.zoo archive), the workdir gone; the Elo curve
    and the selection play the archived bytes, and the exported zoo entries are those bytes."""
    from experiments.elo_curve import elo_curve
    from saijax.cli import zoo as zoo_cli

    workdir, elo = run_dir
    archive = str(tmp_path / "nets")
    argv = [f"--workdir={workdir}", f"--directory={archive}", "--every=2", "--generations=1,3", "--run=fake"]
    assert zoo_cli.main(["archive", *argv]) == 0
    assert "5 added, 5 in all" in capsys.readouterr().out
    assert zoo_cli.main(["archive", *argv]) == 0  # nothing new: archived bytes never change
    assert "0 added, 5 in all" in capsys.readouterr().out
    assert sorted(zoo.archived_generations(archive)) == [0, 1, 2, 3, 4]
    assert zoo.entry("gen3", archive).dtype == "float16" and zoo.entry("gen3", archive).generation == 3
    gone = str(tmp_path / "fresh_leg")  # a later session's workdir: no old checkpoints
    os.makedirs(gone)
    out = str(tmp_path / "elo")
    curve = [f"--workdir={gone}", f"--archive={archive}", f"--outdir={out}", "--visits=2", "--games=2"]
    assert elo_curve.main([*curve, "--komi=0.5", "--neighbours=1", "--random_pairings=1"]) == 0
    assert [r["net"] for r in common.read_csv(os.path.join(out, "elo.csv"))] == [
        "random",
        *(f"gen{g}" for g in range(5)),
    ]
    zoo_dir = str(tmp_path / "zoo")
    select = [f"--workdir={gone}", f"--archive={archive}", f"--elo={elo}", f"--outdir={tmp_path / 'sel'}"]
    select += ["--visits=2", "--games=2", "--komi=0.5", "--candidates=1", "--targets=0.6,0.7", f"--export={zoo_dir}"]
    assert zoo_select.main([*select, "--prefix=t-"]) == 0
    for role, record in zoo.entries(zoo_dir).items():
        source = zoo.entry(f"gen{record.generation}", archive)
        assert record.sha256 == source.sha256 and record.alpha_empty == source.alpha_empty, role
        assert record.run == "fresh_leg" and record.elo is not None
    assert zoo.entries(zoo_dir)["t-S1"].generation == 4
    # Without the archive, the fresh workdir holds nothing to rate.
    assert zoo_select.main([f"--workdir={gone}", f"--elo={elo}", f"--outdir={tmp_path}", "--visits=2"]) == 2
    assert "no kept checkpoints and no archived generations" in capsys.readouterr().err


def test_archive_errors_name_the_generation_and_the_field(run_dir, tmp_path, capsys):
    from saijax.cli import zoo as zoo_cli

    workdir, _ = run_dir
    with pytest.raises(ValueError, match=r"generations \[9\] are not kept"):
        zoo.archive(workdir, str(tmp_path / "a"), generations=(9,))
    with pytest.raises(ValueError, match="every must be at least 1"):
        zoo.archive(workdir, str(tmp_path / "a"), every=0)
    assert zoo_cli.main(["archive", f"--workdir={workdir}", f"--directory={tmp_path}", "--generations=x"]) == 2
    assert "--generations='x'" in capsys.readouterr().err
    zoo.archive(workdir, str(tmp_path / "a"), generations=(2,))
    with pytest.raises(ValueError, match="cannot set generation"):
        zoo.copy_entry("gen2", str(tmp_path / "a"), "copy", directory=str(tmp_path / "b"), generation=5)
    with pytest.raises(KeyError, match="no zoo entry 'gen7'"):
        zoo.copy_entry("gen7", str(tmp_path / "a"), "copy", directory=str(tmp_path / "b"))
