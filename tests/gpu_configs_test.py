"""The GPU runs of issue 33 on the CPU: configs/go7_gpu.py, configs/go9_gpu.py
and the leg script benchmarks/gpu_leg.py.

Each config is loaded from its file and runs one generation through
``pipeline.train_and_evaluate`` with only its sizes made small (board, net,
slots, games, simulations, training batch and steps); bfloat16 self-play,
the 8-minute limit and the compilation cache stay as the file sets them.
Those generations are slow tests (``make test-slow``): 70–90 s each on the
2 shared cores, nearly all of it compiling; what the configs contain, and
the leg script's packing, are checked in seconds.

What one small generation can show about the 9×9 pass collapse (issue 32,
docs/design.md §6): with a fresh net at 8 PUCT simulations, go9_gpu.py's
pass rules (inherited from default.py) hold back a game's first pass to
about move 70 (70.7–75.7 over seeds 0–2, 32 games), where without them it
comes at about move 40 (35.2–41.4), and the run does not warn. The collapse
itself grew over generations of training on those games (the net's first
move became pass at generation 1–5), which one generation cannot show; the
5×5 run of several generations in ``make test-slow``
(tests/selfplay_passes_test.py) and the GPU legs' own metrics are where
that is watched.
"""

import csv
import importlib.util
import json
import os
import subprocess
import sys

import pytest
from conftest import REPO

from saijax.core import search
from saijax.learn import config as config_lib
from saijax.learn import pipeline

GO7 = os.path.join(REPO, "configs", "go7.py")
GO7_GPU = os.path.join(REPO, "configs", "go7_gpu.py")
GO9_GPU = os.path.join(REPO, "configs", "go9_gpu.py")
GO7_SHARP = os.path.join(REPO, "configs", "go7_sharp.py")
GO7_SHARP_GPU = os.path.join(REPO, "configs", "go7_sharp_gpu.py")
DEFAULT = os.path.join(REPO, "configs", "default.py")


def _flat(config) -> dict:
    out = {}

    def walk(prefix, node):
        for key, value in node.items():
            if isinstance(value, dict):
                walk(f"{prefix}{key}.", value)
            else:
                out[prefix + key] = value

    walk("", config.to_dict())
    return out


def _changed(config, base) -> set:
    a, b = _flat(config), _flat(base)
    assert set(a) == set(b)
    return {k for k in a if a[k] != b[k]}


def _module():
    spec = importlib.util.spec_from_file_location("_gpu_leg", os.path.join(REPO, "benchmarks", "gpu_leg.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


# ---------------------------------------------------------------------------
# The configs themselves.


def test_go7_gpu_is_go7_with_the_gpu_switches_and_a_4x64_net():
    config = config_lib.load_config(GO7_GPU)
    config_lib.validate(config)
    assert _changed(config, config_lib.load_config(GO7)) == {
        "generations",
        "time_limit_minutes",
        "precision",
        "network.blocks",
        "network.filters",
        "selfplay.batch_size",
        "selfplay.games_per_generation",
        "selfplay.branch_queue_capacity",
        "schedules.visits",
        "search.num_simulations",
        "schedules.window",
        "training.batch_size",
        "training.lr_boundaries",
    }
    assert config.precision == "bfloat16" and config.time_limit_minutes == 8 and config.compilation_cache
    assert config.selfplay.batch_size >= 1024 and (config.network.blocks, config.network.filters) == (4, 64)
    # go7.py's ablation switches are all still on.
    assert config.network.ownership_head and config.network.global_pooling and config.network.opponent_policy_head
    assert config.training.ema_decay > 0 and config.training.samples_per_new_row == 4.0
    assert config_lib.num_simulations(config, 0) == config_lib.num_simulations(config, 179) == 64


def test_go7_sharp_gpu_is_the_recipe_from_random_weights_with_the_gpu_switches():
    config = config_lib.load_config(GO7_SHARP_GPU)
    config_lib.validate(config)
    sharp = config_lib.load_config(GO7_SHARP)
    assert _changed(config, sharp) == {
        "generations",
        "keep_checkpoint_every",
        "time_limit_minutes",
        "precision",
        "selfplay.batch_size",
        "selfplay.games_per_generation",
        "selfplay.branch_queue_capacity",
        "schedules.visits",
        "schedules.window",
        "training.lr_boundaries",
        "training.batch_size",
    }
    assert config.init_checkpoint == "" and (config.network.blocks, config.network.filters) == (3, 32)
    assert config.precision == "bfloat16" and config.time_limit_minutes == 8 and config.compilation_cache
    assert config.selfplay.batch_size == config.selfplay.games_per_generation >= 1024
    # The schedules keyed by generation are the CPU recipe's, in games: a GPU
    # generation is `ratio` of the CPU's.
    ratio = config.selfplay.games_per_generation // sharp.selfplay.games_per_generation
    assert ratio == 8

    def steps(schedule):
        return [(int(g), int(v)) for g, v in schedule]

    gpu, cpu = steps(config.schedules.visits), steps(sharp.schedules.visits)
    assert [v for _, v in gpu] == [v for _, v in cpu]
    assert all(abs(g * ratio - c) < ratio for (g, _), (c, _) in zip(gpu, cpu, strict=True))
    (gpu_lr,), (cpu_lr,) = config.training.lr_boundaries, sharp.training.lr_boundaries
    assert abs(gpu_lr * ratio - cpu_lr) < ratio and config.training.lr_values == sharp.training.lr_values
    assert config.generations * ratio >= sharp.generations
    # The recipe itself is untouched: PUCT full searches, noise on the opening only, 32 samples per new row.
    assert config.search.algorithm == "puct" and config.selfplay.fast_simulations == 0
    assert config.selfplay.noise_moves == config.selfplay.random_moves == 4
    assert config.training.samples_per_new_row == sharp.training.samples_per_new_row == 32.0


def test_go9_gpu_is_default_with_the_gpu_switches_and_keeps_the_pass_fixes():
    config = config_lib.load_config(GO9_GPU)
    config_lib.validate(config)
    assert _changed(config, config_lib.load_config(DEFAULT)) == {
        "time_limit_minutes",
        "precision",
        "selfplay.batch_size",
        "selfplay.branch_queue_capacity",
    }
    assert config.precision == "bfloat16" and config.time_limit_minutes == 8 and config.compilation_cache
    assert config.selfplay.batch_size >= 1024
    # The fixes of the 9×9 pass collapse (issue 32), inherited from default.py.
    assert config.search.algorithm == "puct"
    assert config.search.noisy_root_fpu_reduction == 0.0
    assert config.search.pass_answer_prior > 0
    assert config.search.root_pass_rule == "leela"
    assert config.selfplay.random_min_visits >= 1 and config.selfplay.random_losing_threshold > 0


@pytest.mark.parametrize("path", [DEFAULT, GO9_GPU])
def test_the_9x9_configs_carry_the_sharp_recipes_self_play_rules(path):
    """default.py and go9_gpu.py self-play as configs/go7_sharp.py does, scaled to 9×9."""
    config = config_lib.load_config(path)
    config_lib.validate(config)
    sharp = config_lib.load_config(GO7_SHARP)
    assert config.board_size == 9 and config.selfplay.komi == 7.5
    # Every move a full PUCT search.
    assert config.search.algorithm == sharp.search.algorithm == "puct"
    assert config.selfplay.fast_simulations == 0 and config.selfplay.full_search_prob == 1.0
    # SAI's opening with noise on its random moves only (9×9: the paper's 25), then the best move.
    assert config.selfplay.random_moves == 25 and config.selfplay.noise_moves == config.selfplay.random_moves
    assert config.search.dirichlet_fraction == sharp.search.dirichlet_fraction > 0
    opening = ("opening_policy", "random_temperature", "random_min_visits", "random_losing_threshold")
    opening += ("random_takeback",)
    for field in opening:
        assert config.selfplay[field] == sharp.selfplay[field], field
    assert config.selfplay.komi_mode == sharp.selfplay.komi_mode == "sample"
    assert config.training.samples_per_new_row == sharp.training.samples_per_new_row == 32.0
    # SAI's 9×9 visits and nets (run 1), not the 7×7 recipe's.
    assert config_lib.num_simulations(config, 0) == 100 and config_lib.num_simulations(config, 200) == 850
    assert config_lib.network_shape(config, 0) == (4, 128)


# ---------------------------------------------------------------------------
# One generation of each on the CPU, sizes overridden.


def _small(path, *, board, slots, simulations, **fields):
    """The config file with its sizes made small: a 1×8 net, ``slots`` games
    in lockstep and per generation, ``simulations``, a training batch of 16;
    one generation. ``fields``: more sizes, ``section__field=value``."""
    config = config_lib.load_config(path)
    with config.unlocked():
        config.board_size = board
        config.generations = 1
        config.network.blocks, config.network.filters = 1, 8
        config.schedules.network = ()
        config.selfplay.batch_size = config.selfplay.games_per_generation = slots
        config.selfplay.branch_queue_capacity = 4 * slots
        config.schedules.visits = ((0, simulations),)
        config.training.batch_size = 16
        for name, value in fields.items():
            section, field = name.split("__")
            setattr(config[section], field, value)
    return config


def _one_generation(config, workdir, monkeypatch):
    precisions = []
    make = search.make_network_evaluator

    def spy(*args, **kwargs):
        precisions.append(kwargs.get("precision"))
        return make(*args, **kwargs)

    monkeypatch.setattr(search, "make_network_evaluator", spy)
    log = []
    summary = pipeline.train_and_evaluate(config, str(workdir), progress=False, log=log.append)
    with open(workdir / "metrics.jsonl") as f:
        (metrics,) = [json.loads(line) for line in f]
    with open(workdir / "config.json") as f:
        written = json.load(f)
    warnings = [str(line) for line in log if str(line).startswith("warning")]
    return summary, metrics, written, precisions, warnings


@pytest.mark.slow
def test_go7_gpu_runs_a_generation_in_bfloat16_under_its_time_limit(tmp_path, monkeypatch):
    config = _small(
        GO7_GPU,
        board=7,
        slots=16,
        simulations=4,
        search__max_num_considered_actions=4,
        selfplay__fast_simulations=2,
    )
    summary, metrics, written, precisions, _ = _one_generation(config, tmp_path / "go7_gpu", monkeypatch)
    assert written["precision"] == "bfloat16" and written["time_limit_minutes"] == 8.0
    assert precisions and set(precisions) == {"bfloat16"}
    assert summary["generation"] == 0 and not summary.get("stopped_by_time_limit")
    assert metrics["network"] == "1x8" and metrics["simulations"] == 4
    assert metrics["selfplay_evaluations"] > 0 and metrics["train_steps"] > 0
    assert metrics["compilation_cache_bytes"] > 0  # the cache is on, in <workdir>/compilation_cache
    assert 0 < metrics["selfplay_full_search_fraction"] < 1  # go7.py's playout caps


# 2N²/3 on 9×9: between the first pass's mean move with the pass rules
# (70.7–75.7 over seeds 0–2) and without them (35.2–41.4), at these sizes.
FIRST_PASS_MOVE = 54


def _go9(tmp_path, monkeypatch, **fields):
    fields = {"training__steps_per_generation": 4, "training__samples_per_new_row": 0.0, **fields}  # 4 steps
    config = _small(GO9_GPU, board=9, slots=32, simulations=8, **fields)
    with config.unlocked():
        config.selfplay.sgf_games_per_generation = 0
    return _one_generation(config, tmp_path / "go9_gpu", monkeypatch)


@pytest.mark.slow
def test_go9_gpu_runs_a_generation_whose_first_passes_come_late(tmp_path, monkeypatch):
    summary, m, written, precisions, warnings = _go9(tmp_path, monkeypatch)
    assert written["precision"] == "bfloat16" and written["time_limit_minutes"] == 8.0
    assert set(precisions) == {"bfloat16"} and summary["generation"] == 0
    assert m["network"] == "1x8" and m["simulations"] == 8
    assert not warnings, warnings
    assert pipeline.collapse_warning(9, m) is None
    assert m["first_move"] != "pass"
    assert m["first_pass_move"] > FIRST_PASS_MOVE
    assert m["avg_game_length"] >= 81 / 2 and m["median_game_length"] >= 81 / 2
    # A share of the complete games (branches apart), 0.38–0.59 at these sizes with or without the rules:
    # some games played out to two passes, the others ended by resignation or the move cap.
    ended = m["pass_ended_games"] * m["complete_games"]
    assert ended == pytest.approx(round(ended)) and 0 < round(ended) < m["complete_games"]


@pytest.mark.slow
def test_without_default_pys_pass_rules_the_first_passes_come_early(tmp_path, monkeypatch):
    """The control: the check above tells the rules from their absence."""
    _, m, _, _, _ = _go9(
        tmp_path,
        monkeypatch,
        search__noisy_root_fpu_reduction=0.25,
        search__pass_answer_prior=0.0,
        search__root_pass_rule="search",
        selfplay__random_min_visits=0,
        selfplay__random_losing_threshold=0.0,
    )
    assert m["first_pass_move"] < FIRST_PASS_MOVE


# ---------------------------------------------------------------------------
# benchmarks/gpu_leg.py


def test_the_leg_script_keeps_what_pipeline_says_a_leg_needs(tmp_path):
    leg = _module()
    assert leg.leg_paths(str(tmp_path), 7) == pipeline.leg_files(str(tmp_path), 7)
    assert leg.committed_leg("go7_gpu") == os.path.join(REPO, "experiments", "legs", "go7_gpu_run", "leg")


def _fake_run(workdir):
    """A workdir as a run leaves it: two checkpoints, metrics, config, SGFs, replay."""
    for g in (4, 5):
        os.makedirs(workdir / "checkpoints" / str(g) / "state")
        (workdir / "checkpoints" / str(g) / "state" / "data").write_bytes(os.urandom(50_000))
    os.makedirs(workdir / "checkpoints" / "6.orbax-checkpoint-tmp-1")  # an unfinished save
    lines = [
        {"generation": g, "selfplay_evaluations": 1000 * (g + 1), "selfplay_seconds": 2.0, "seconds": 3.0}
        for g in range(6)
    ]
    (workdir / "metrics.jsonl").write_text("".join(json.dumps(m) + "\n" for m in lines))
    (workdir / "config.json").write_text("{}")
    os.makedirs(workdir / "sgf")
    (workdir / "sgf" / "gen_5_0.sgf").write_text("(;GM[1])")
    os.makedirs(workdir / "replay")
    (workdir / "replay" / "gen_000005.npz").write_bytes(b"not kept")


def test_pack_splits_a_large_leg_and_unpack_joins_and_checks_it(tmp_path, monkeypatch):
    leg = _module()
    work, out, committed = tmp_path / "work", tmp_path / "out", tmp_path / "committed"
    _fake_run(work)
    os.makedirs(out)
    monkeypatch.setattr(leg, "PART_BYTES", 20_000)
    args = leg.parse_args(["run", "go7_gpu", "--out", str(out), "--workdir", str(work)])
    args.workdir = str(work)
    info = leg.pack(args, resumed_after=2, rc=0, wall=100.0, log=lambda message: None)
    assert info["generation"] == 5 and info["generations_this_leg"] == 3 and info["first_generation_this_leg"] == 3
    assert info["selfplay_evaluations_this_leg"] == 4000 + 5000 + 6000
    assert info["selfplay_evaluations_per_second"] == (5000 + 6000) / 4.0  # after the leg's first generation
    assert len(info["parts"]) >= 3 and all(os.path.getsize(out / p) <= 20_000 for p in info["parts"])
    assert (out / "go7_gpu_sgf.tar.gz").exists() and (out / "leg.json").exists()

    committed.mkdir()
    (committed / "old").write_text("the last leg")
    assert leg.main(["unpack", "go7_gpu", "--from", str(out), "--leg_dir", str(committed)]) == 0
    assert sorted(os.listdir(committed)) == ["checkpoints", "config.json", "metrics.jsonl"]
    assert os.listdir(committed / "checkpoints") == ["5"]
    assert (committed / "checkpoints/5/state/data").read_bytes() == (work / "checkpoints/5/state/data").read_bytes()
    # The run's learning curve beside the leg, every generation in metrics.jsonl, evaluations cumulated.
    with open(tmp_path / "learning_curve.csv") as f:
        curve = list(csv.DictReader(f))
    assert [int(r["generation"]) for r in curve] == list(range(6))
    assert float(curve[-1]["evaluations_m"]) == pytest.approx(sum(1000 * (g + 1) for g in range(6)) / 1e6)

    with open(out / info["parts"][-1], "ab") as f:
        f.write(b"x")
    with pytest.raises(SystemExit, match="sha256"):
        leg.main(["unpack", "go7_gpu", "--from", str(out), "--leg_dir", str(committed)])
    with pytest.raises(SystemExit, match="go7_gpu, not go9_gpu"):
        leg.main(["unpack", "go9_gpu", "--from", str(out), "--leg_dir", str(committed)])


# The dry run's sizes for go7_gpu.py (docs/performance.md, "The GPU lane").
DRY_RUN_SIZES = [
    "--config.network.blocks=1",
    "--config.network.filters=8",
    "--config.selfplay.batch_size=16",
    "--config.selfplay.games_per_generation=16",
    "--config.selfplay.branch_queue_capacity=64",
    "--config.search.num_simulations=4",
    "--config.search.max_num_considered_actions=4",
    "--config.selfplay.fast_simulations=2",
    "--config.training.batch_size=16",
]


@pytest.mark.slow
def test_a_dry_run_leg_on_the_cpu_then_a_leg_resumed_from_it(tmp_path):
    """The script as the GPU runs it, on the CPU at tiny sizes: leg 1 from
    scratch stops on its time limit after one generation; its files,
    unpacked as if committed, start leg 2 on a fresh workdir."""
    script = os.path.join(REPO, "benchmarks", "gpu_leg.py")
    committed = tmp_path / "committed"

    def leg(n):
        command = [sys.executable, script, "run", "go7_gpu", "--out", str(tmp_path / f"out{n}"), "--platform=cpu"]
        command += ["--minutes=0.01", f"--leg_dir={committed}", f"--workdir={tmp_path / f'w{n}'}", "--wheels="]
        out = subprocess.run([*command, "--", *DRY_RUN_SIZES], cwd=REPO, capture_output=True, text=True, timeout=600)
        assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-3000:]
        with open(tmp_path / f"out{n}" / "leg.json") as f:
            return out.stdout, json.load(f)

    stdout, first = leg(1)
    assert "from scratch" in stdout and "leg size:" in stdout
    assert first["generation"] == 0 and first["resumed_after"] is None and first["exit_status"] == 0
    assert leg_unpacked(committed, tmp_path / "out1")
    stdout, second = leg(2)
    assert f"resuming from the committed leg {committed}" in stdout
    assert second["resumed_after"] == 0 and second["generation"] == 1 and second["generations_this_leg"] == 1
    assert (
        "stopped at --config.time_limit_minutes=0.01 after generation 1"
        in (tmp_path / "out2" / "train.log").read_text()
    )


def leg_unpacked(committed, source) -> bool:
    command = [sys.executable, os.path.join(REPO, "benchmarks", "gpu_leg.py"), "unpack", "go7_gpu"]
    out = subprocess.run([*command, "--from", str(source), "--leg_dir", str(committed)], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    return (committed / "checkpoints" / "0").is_dir()
