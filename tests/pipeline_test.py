"""End-to-end tests of saijax.learn.pipeline and `python -m saijax.train` with
configs/tiny.py: what a run writes, resuming, a killed run, bad configs and
a corrupt checkpoint.

Compiling self-play and training dominates; the in-process run is shared by
a module-scoped fixture, and a copy of its workdir taken right after the
first two generations serves the tests that need a finished run.
"""

import copy
import csv
import dataclasses
import glob
import hashlib
import json
import math
import os
import shutil
import signal
import subprocess
import time

import jax
import numpy as np
import pytest
from conftest import REPO, TINY, as_format_1, train_command

from saijax import gtp
from saijax.core import checkpoints, features, go, networks, search, sgf
from saijax.learn import config as config_lib
from saijax.learn import pipeline, replay, training
from saijax.play import players

METRIC_KEYS = {
    "generation",
    # The sharp value's diagnostics (issue 43).
    "data_alpha",
    "data_beta",
    "data_beta_se",
    "komi_sd",
    "first_move_shares",
    "first_move_entropy",
    "first_move_centre_share",
    "resigned_row_share",
    "selfplay_waiting_evaluations",
    "games",
    "complete_games",
    "branch_games",
    "moves",
    "rows",
    "black_winrate",
    "white_winrate",
    "draws",
    "resignations",
    "no_resign_games",
    "false_resignations",
    "false_resignation_rate",
    "avg_game_length",
    "avg_komi",
    "komi_histogram",
    "alpha_empty",
    "beta_empty",
    "selfplay_seconds",
    "selfplay_evaluations",
    "train_total_loss",
    "train_policy_loss",
    "train_value_loss",
    "window_rows",
    "train_steps",
    "train_samples_per_new_row",
    "train_seconds",
    "network",
    "simulations",
    "seconds",
}


def _tiny_config(**overrides):
    config = config_lib.load_config(TINY)
    with config.unlocked():
        for name, value in overrides.items():
            setattr(config, name, value)
    return config


def _metrics(workdir):
    with open(os.path.join(workdir, "metrics.jsonl")) as f:
        return [json.loads(line) for line in f]


def _digest(paths):
    """{relative path: sha256} of the files under the given paths."""
    out = {}
    for top in paths:
        files = [top] if os.path.isfile(top) else sorted(glob.glob(os.path.join(top, "**"), recursive=True))
        for path in files:
            if os.path.isfile(path):
                with open(path, "rb") as f:
                    out[path] = hashlib.sha256(f.read()).hexdigest()
    return out


def _equal_trees(a, b):
    leaves_a, tree_a = jax.tree_util.tree_flatten(a)
    leaves_b, tree_b = jax.tree_util.tree_flatten(b)
    assert tree_a == tree_b
    for x, y in zip(leaves_a, leaves_b):
        np.testing.assert_array_equal(np.asarray(x), np.asarray(y))


class _Spy:
    """Records the states the pipeline saves and restores."""

    def __init__(self):
        self.saved, self.restored = {}, []

    def __enter__(self):
        self._patch = pytest.MonkeyPatch()
        save, restore = checkpoints.Checkpointer.save, checkpoints.Checkpointer.restore
        spy = self

        def saving(ckpt, generation, **kwargs):
            spy.saved[generation] = jax.device_get(kwargs["state"])
            return save(ckpt, generation, **kwargs)

        def restoring(ckpt, generation, template, **kwargs):
            payload = restore(ckpt, generation, template, **kwargs)
            spy.restored.append((generation, jax.device_get(payload.state)))
            return payload

        self._patch.setattr(checkpoints.Checkpointer, "save", saving)
        self._patch.setattr(checkpoints.Checkpointer, "restore", restoring)
        return self

    def __exit__(self, *exc):
        self._patch.undo()


@pytest.fixture(scope="module")
def first_run(tmp_path_factory):
    """configs/tiny.py for its 2 generations, in process; plus a copy of the
    workdir as it was right after."""
    base = tmp_path_factory.mktemp("tiny")
    workdir = str(base / "run")
    config = _tiny_config()
    assert config.generations == 2
    log = []
    with _Spy() as spy:
        summary = pipeline.train_and_evaluate(config, workdir, progress=False, log=log.append)
    snapshot = str(base / "after_first_run")
    shutil.copytree(workdir, snapshot)
    return dict(workdir=workdir, snapshot=snapshot, config=config, summary=summary, log=log, spy=spy)


@pytest.fixture(scope="module")
def resumed(first_run):
    """The same workdir again with generations=3."""
    config = copy.deepcopy(first_run["config"])
    with config.unlocked():
        config.generations = 3
    log = []
    with _Spy() as spy:
        summary = pipeline.train_and_evaluate(config, first_run["workdir"], progress=False, log=log.append)
    return dict(config=config, summary=summary, log=log, spy=spy)


def test_two_generations_write_checkpoints_metrics_replay_and_sgf(first_run):
    work = first_run["snapshot"]
    summary = first_run["summary"]
    assert summary["generation"] == 1
    assert summary["checkpoint"] == os.path.join(first_run["workdir"], "checkpoints", "1")
    assert set(first_run["spy"].saved) == {0, 1} and not first_run["spy"].restored

    with checkpoints.Checkpointer(work) as ckpt:
        assert ckpt.all_generations() == [0, 1]
        meta = ckpt.read_metadata(1)
    assert (meta["generation"], meta["blocks"], meta["filters"]) == (1, 1, 8)
    assert (meta["board_size"], meta["value_head"]) == (5, "sai")
    assert meta["beta_scale"] == 10 / 25  # network.beta_scale = 0: the default, recorded

    metrics = _metrics(work)
    assert [m["generation"] for m in metrics] == [0, 1]
    for m in metrics:
        assert METRIC_KEYS <= set(m), METRIC_KEYS - set(m)
        assert m["games"] >= 16
        assert m["games"] == m["complete_games"] + m["branch_games"]
        assert np.isfinite(m["train_total_loss"])
        assert (m["network"], m["simulations"]) == ("1x8", 4)
        assert sum(m["komi_histogram"].values()) == m["games"]
        assert sum(m["first_move_shares"].values()) == pytest.approx(1.0)
        assert 0 <= m["resigned_row_share"] <= 1 and m["selfplay_waiting_evaluations"] == 0  # no caps: none wait
        # Self-play compute: whole chunks of (simulations + root) evaluations on every slot.
        per_chunk = first_run["config"].selfplay.batch_size * first_run["config"].selfplay.chunk_moves * (4 + 1)
        assert m["selfplay_evaluations"] > 0 and m["selfplay_evaluations"] % per_chunk == 0
    assert [line.split("|")[0].split() for line in first_run["log"]] == [["gen", "0"], ["gen", "1"]]

    assert sorted(os.listdir(os.path.join(work, "replay"))) == ["gen_000000.npz", "gen_000001.npz"]
    buffer = replay.ReplayBuffer(os.path.join(work, "replay"), 5)
    for gen in (0, 1):
        rows = buffer.read_generation(gen)
        assert rows.num_rows > 0
        assert set(np.unique(rows.z).tolist()) <= {0.0, 0.5, 1.0}
        assert np.all(rows.generation <= gen)
        np.testing.assert_allclose(rows.policy.sum(-1), 1.0, atol=1e-5)
        np.testing.assert_array_equal(rows.signed_komi * 2, np.round(rows.signed_komi * 2))

    paths = sorted(glob.glob(os.path.join(work, "sgf", "*.sgf")))
    assert len(paths) == 2 * first_run["config"].selfplay.sgf_games_per_generation
    assert {os.path.basename(p)[:9] for p in paths} == {"gen000000", "gen000001"}
    for path in paths:
        record = sgf.read_sgf(path)  # replays the moves under saijax's rules
        assert record.size == 5
        assert record.komi * 2 == round(record.komi * 2)
        assert record.result
        assert record.black_name.startswith("saijax-gen")
    assert os.path.exists(os.path.join(work, "config.json"))


def test_rerun_with_more_generations_resumes(first_run, resumed):
    work = first_run["workdir"]
    # One restore, of generation 1, giving back exactly what was saved.
    assert [g for g, _ in resumed["spy"].restored] == [1]
    _equal_trees(resumed["spy"].restored[0][1], first_run["spy"].saved[1])
    assert any("continuing at 2" in line for line in resumed["log"])
    assert [line.split("|")[0].split() for line in resumed["log"] if line.startswith("gen")] == [["gen", "2"]]
    # Only generation 2 was played and trained, from the restored state.
    assert set(resumed["spy"].saved) == {2}
    steps = first_run["config"].training.steps_per_generation
    assert int(resumed["spy"].saved[2].step) == int(first_run["spy"].saved[1].step) + steps
    assert resumed["summary"]["generation"] == 2

    with checkpoints.Checkpointer(work) as ckpt:
        assert ckpt.all_generations() == [0, 1, 2]
    metrics = _metrics(work)
    assert [m["generation"] for m in metrics] == [0, 1, 2]
    assert metrics[:2] == _metrics(first_run["snapshot"])
    assert "gen_000002.npz" in os.listdir(os.path.join(work, "replay"))
    assert glob.glob(os.path.join(work, "sgf", "gen000002_*.sgf"))


def test_a_leg_resumes_from_a_committed_checkpoint_without_replay(first_run, tmp_path):
    """A run longer than a session goes in legs: what is kept between them
    (committed to git) is the newest checkpoint, ``metrics.jsonl`` and
    ``config.json``, not the replay files. The next leg continues the
    generation numbers, the optimizer state and step count (hence the
    schedules); its replay window refills from the new self-play, whose
    evaluations are counted."""
    work = tmp_path / "leg2"
    (work / "checkpoints").mkdir(parents=True)
    shutil.copytree(os.path.join(first_run["snapshot"], "checkpoints", "1"), work / "checkpoints" / "1")
    for name in ("metrics.jsonl", "config.json"):
        shutil.copy(os.path.join(first_run["snapshot"], name), work / name)
    config = copy.deepcopy(first_run["config"])
    with config.unlocked():
        config.generations = 3
    log = []
    with _Spy() as spy:
        pipeline.train_and_evaluate(config, str(work), progress=False, log=log.append)
    assert [g for g, _ in spy.restored] == [1]
    _equal_trees(spy.restored[0][1], first_run["spy"].saved[1])  # params, optimizer state, step
    steps = config.training.steps_per_generation
    assert int(spy.saved[2].step) == int(first_run["spy"].saved[1].step) + steps
    metrics = _metrics(str(work))
    assert [m["generation"] for m in metrics] == [0, 1, 2]
    assert metrics[:2] == _metrics(first_run["snapshot"])
    leg = metrics[2]
    assert leg["selfplay_evaluations"] > 0 and not leg.get("reused_selfplay")
    assert leg["window_rows"] == leg["rows"]  # the window holds only the new generation's rows
    assert os.listdir(work / "replay") == ["gen_000002.npz"]


def test_a_leg_copied_flat_or_without_its_checkpoint_is_refused(first_run, tmp_path):
    """The kept files of a leg copied wrongly must not restart the run from
    generation 0 under the old metrics: a checkpoint's files loose in
    ``checkpoints/`` (``cp -r .../1 leg/checkpoints`` onto a missing
    directory), or ``metrics.jsonl`` with no checkpoint at all."""
    flat = tmp_path / "flat"
    shutil.copytree(os.path.join(first_run["snapshot"], "checkpoints", "1"), flat / "checkpoints")
    shutil.copy(os.path.join(first_run["snapshot"], "metrics.jsonl"), flat / "metrics.jsonl")
    with pytest.raises(checkpoints.CheckpointError, match=r"checkpoints holds a checkpoint's files \(.*state"):
        pipeline.train_and_evaluate(_tiny_config(), str(flat), progress=False, log=lambda *_: None)
    assert sorted(os.listdir(flat / "checkpoints")) == sorted(
        os.listdir(os.path.join(first_run["snapshot"], "checkpoints", "1"))
    )  # nothing moved or deleted
    assert _metrics(str(flat)) == _metrics(first_run["snapshot"])
    bare = tmp_path / "bare"
    bare.mkdir()
    shutil.copy(os.path.join(first_run["snapshot"], "metrics.jsonl"), bare / "metrics.jsonl")
    message = r"metrics.jsonl has lines for generations 0-1 but .* no checkpoint"
    with pytest.raises(checkpoints.CheckpointError, match=message):
        pipeline.train_and_evaluate(_tiny_config(), str(bare), progress=False, log=lambda *_: None)
    assert _metrics(str(bare)) == _metrics(first_run["snapshot"])


def test_kill_between_checkpoint_and_metrics_keeps_every_metrics_line(first_run, tmp_path):
    work = str(tmp_path / "run")
    shutil.copytree(first_run["snapshot"], work)
    # What a kill right after ckpt.save(1) leaves: checkpoint 1, no line for 1.
    with open(os.path.join(work, "metrics.jsonl")) as f:
        lines = f.readlines()
    with open(os.path.join(work, "metrics.jsonl"), "w") as f:
        f.writelines(lines[:1])
    pipeline.train_and_evaluate(_tiny_config(), work, progress=False, log=lambda *_: None)
    assert [m["generation"] for m in _metrics(work)] == [0, 1]


def test_a_torn_metrics_line_is_dropped_with_a_warning_and_written_again(first_run, tmp_path):
    """A kill while the last line was appended: its last 40 bytes cut. The
    resumed run drops it, names the generation, writes generation 1's line
    again from its checkpoint and goes on; the reading tools name a torn
    line's file and line instead of a raw JSONDecodeError."""
    from experiments.lib import common

    work = str(tmp_path / "run")
    shutil.copytree(first_run["snapshot"], work)
    path = os.path.join(work, "metrics.jsonl")
    with open(path, "rb") as f:
        data = f.read()
    with open(path, "wb") as f:
        f.write(data[:-40])
    with pytest.raises(ValueError, match=r"metrics.jsonl line 2 is not a metrics line"):
        common.read_metrics(work)
    log = []
    pipeline.train_and_evaluate(_tiny_config(generations=3), work, progress=False, log=log.append)
    warnings = [line for line in log if "is torn" in line]
    assert len(warnings) == 1 and "line 2" in warnings[0] and "generation 1's" in warnings[0], log
    metrics = _metrics(work)  # every line parses
    assert [m["generation"] for m in metrics] == [0, 1, 2]
    before = _metrics(first_run["snapshot"])
    assert metrics[0] == before[0]
    # The checkpoint's copy: the generation's self-play and training metrics
    # (the line's timings after the checkpoint are not in it).
    for key in ("games", "alpha_empty", "beta_empty", "data_beta", "train_total_loss", "selfplay_evaluations"):
        assert metrics[1][key] == before[1][key] or (np.isnan(metrics[1][key]) and np.isnan(before[1][key])), key
    assert sorted(common.read_metrics(work)) == [0, 1, 2]


def test_a_kill_that_cut_only_the_final_newline_keeps_every_metrics_line(first_run, tmp_path):
    """A kill that cut exactly the last byte of metrics.jsonl (two lines,
    generations 0 and 1): the last line is whole but unterminated. The
    resumed run gives it its newline, so generation 2's line is not appended
    onto it, and all three generations' lines are there, the first two as
    they were."""
    work = str(tmp_path / "run")
    shutil.copytree(first_run["snapshot"], work)
    path = os.path.join(work, "metrics.jsonl")
    with open(path, "rb") as f:
        data = f.read()
    assert data.count(b"\n") == 2 and data.endswith(b"\n")
    with open(path, "wb") as f:
        f.write(data[:-1])
    log = []
    pipeline.train_and_evaluate(_tiny_config(generations=3), work, progress=False, log=log.append)
    assert [line for line in log if "lacks its newline" in line and "generation 1's" in line], log
    assert not [line for line in log if "is torn" in line], log
    with open(path, "rb") as f:
        after = f.read()
    assert after.startswith(data) and after.endswith(b"\n")  # generations 0 and 1 byte for byte
    assert [m["generation"] for m in _metrics(work)] == [0, 1, 2]


def _run(command, **kwargs):
    return subprocess.run(
        command,
        cwd=REPO,
        env=dict(os.environ, JAX_PLATFORMS="cpu"),
        capture_output=True,
        text=True,
        timeout=600,
        **kwargs,
    )


def _last_line(text):
    return [line for line in text.splitlines() if line.strip()][-1]


@pytest.mark.slow
def test_killed_run_resumes_and_finishes(tmp_path):
    workdir = tmp_path / "run"
    command = train_command(workdir, "--config.generations=4")
    env = dict(os.environ, JAX_PLATFORMS="cpu")
    with open(tmp_path / "first.log", "w") as out:
        process = subprocess.Popen(command, cwd=REPO, env=env, stdout=out, stderr=subprocess.STDOUT)
        try:
            deadline = time.time() + 600
            # Generation 0 done: its checkpoint and its metrics line exist.
            while not (
                os.path.isdir(workdir / "checkpoints" / "0")
                and os.path.exists(workdir / "metrics.jsonl")
                and os.path.getsize(workdir / "metrics.jsonl") > 0
            ):
                assert process.poll() is None, (tmp_path / "first.log").read_text()[-3000:]
                assert time.time() < deadline
                time.sleep(0.02)
            os.kill(process.pid, signal.SIGKILL)  # somewhere in generation 1
        finally:
            process.kill()
            process.wait()
    assert process.returncode == -signal.SIGKILL
    with checkpoints.Checkpointer(workdir) as ckpt:
        assert 3 not in ckpt.all_generations()  # killed mid-run

    second = _run(command)
    assert second.returncode == 0, (second.stdout + second.stderr)[-3000:]
    assert "resuming from" in second.stdout + second.stderr
    config = _tiny_config(generations=4)
    with checkpoints.Checkpointer(workdir) as ckpt:
        assert ckpt.latest_generation() == 3
        net = training.network_spec(config, 3).build()
        template = training.abstract_train_state(net, training.make_optimizer(config.training))
        payload = ckpt.restore_latest(template, expected_shape=(1, 8))
    assert payload.generation == 3
    assert all(np.all(np.isfinite(x)) for x in jax.tree_util.tree_leaves(payload.state.params))
    assert {m["generation"] for m in _metrics(workdir)} == {0, 1, 2, 3}
    assert sorted(os.listdir(workdir / "replay")) == [f"gen_{g:06d}.npz" for g in range(4)]


def test_lambda_below_mu_is_rejected_before_anything_is_written(tmp_path):
    workdir = tmp_path / "run"
    result = _run(train_command(workdir, "--config.search.lambda_=0.1", "--config.search.mu=0.5"))
    assert result.returncode != 0
    message = _last_line(result.stderr)
    assert "search.lambda_" in message and "search.mu" in message, result.stderr[-2000:]
    assert "Traceback" not in result.stderr
    assert not os.path.exists(workdir / "checkpoints")


@pytest.fixture(scope="module")
def unknown_field(tmp_path_factory):
    workdir = tmp_path_factory.mktemp("unknown") / "run"
    return workdir, _run(train_command(workdir, "--config.search.lamda=0.5"))


def test_unknown_config_field_fails(unknown_field):
    workdir, result = unknown_field
    assert result.returncode != 0
    assert "lamda" in _last_line(result.stderr) and "lambda_" in _last_line(result.stderr), result.stderr[-2000:]
    assert not os.path.exists(workdir)


def test_unknown_config_field_is_a_one_line_error(unknown_field):
    _, result = unknown_field
    assert "Traceback" not in result.stderr


def _corrupt(step_dir, what):
    if what == "arrays":
        data = max(glob.glob(os.path.join(step_dir, "state", "ocdbt.process_0", "d", "*")), key=os.path.getsize)
        with open(data, "r+b") as f:
            f.truncate(os.path.getsize(data) // 2)
    else:
        with open(os.path.join(step_dir, "meta", "metadata"), "w") as f:
            f.write('{"generation": 1, "blo')


@pytest.mark.parametrize("what", ["arrays", "metadata"])
def test_corrupt_latest_checkpoint_is_a_clear_error(first_run, tmp_path, what):
    work = str(tmp_path / "run")
    shutil.copytree(first_run["snapshot"], work)
    step_dir = os.path.join(work, "checkpoints", "1")
    _corrupt(step_dir, what)
    kept = [os.path.join(work, name) for name in ("replay", "sgf", "metrics.jsonl")]
    before = _digest(kept)
    with pytest.raises(checkpoints.CheckpointError) as error:
        pipeline.train_and_evaluate(_tiny_config(), work, progress=False, log=lambda *_: None)
    assert step_dir in str(error.value)
    assert "corrupt" in str(error.value)
    assert _digest(kept) == before
    assert sorted(os.listdir(os.path.join(work, "checkpoints"))) == ["0", "1"]


def test_corrupt_checkpoint_from_the_command_line(first_run, tmp_path):
    work = str(tmp_path / "run")
    shutil.copytree(first_run["snapshot"], work)
    step_dir = os.path.join(work, "checkpoints", "1")
    _corrupt(step_dir, "arrays")
    result = _run(train_command(work))
    assert result.returncode != 0
    message = _last_line(result.stderr)
    assert step_dir in message and "corrupt" in message, result.stderr[-2000:]


# ---------------------------------------------------------------------------
# A non-default β scale travels with the checkpoint.


@pytest.fixture(scope="module")
def beta_run(tmp_path_factory):
    """configs/tiny.py with --config.network.beta_scale=0.5, one generation."""
    workdir = str(tmp_path_factory.mktemp("beta") / "run")
    config = _tiny_config(generations=1)
    config.network.beta_scale = 0.5
    pipeline.train_and_evaluate(config, workdir, progress=False, log=lambda *_: None)
    return dict(workdir=workdir, config=config)


def _alpha_beta(net, variables, rules, state):
    """The net's (α, β) on one position, applied directly."""
    planes = features.network_inputs(rules, jax.tree_util.tree_map(lambda x: x[None], state), net.value_head)
    out, _ = networks.apply_network(net, variables, planes)
    return float(out.alpha[0]), float(out.beta[0])


def _restore_trained(config, workdir):
    spec = training.network_spec(config, 0)
    template = training.abstract_train_state(spec.build(), training.make_optimizer(config.training))
    with checkpoints.Checkpointer(workdir) as ckpt:
        return ckpt.restore_latest(template)


def test_gtp_plays_with_the_trained_beta_scale(beta_run):
    config, workdir = beta_run["config"], beta_run["workdir"]
    spec = training.network_spec(config, 0)
    assert spec.beta_scale == 0.5
    payload = _restore_trained(config, workdir)
    assert payload.spec == spec

    engine = gtp.GtpEngine(players.load_player(workdir), visits=2)
    assert engine.player.net.spec == spec
    for move in ("play B c3", "play W b2", "play B d4"):
        assert engine.handle(move) == "=\n\n"
    out = engine.search(engine.state)
    alpha, beta = _alpha_beta(spec.build(), payload.state.variables, engine.rules, engine.state)
    np.testing.assert_allclose([float(out.root_alpha[0]), float(out.root_beta[0])], [alpha, beta], rtol=1e-5)
    # The comparison can tell the scales apart: the default 10/25 gives β · 0.4/0.5.
    default = dataclasses.replace(spec, beta_scale=None)
    _, default_beta = _alpha_beta(default.build(), payload.state.variables, engine.rules, engine.state)
    assert default_beta == pytest.approx(beta * 0.4 / 0.5, rel=1e-5)


def test_resume_with_another_beta_scale_is_refused(beta_run, tmp_path):
    work = str(tmp_path / "run")
    shutil.copytree(beta_run["workdir"], work)
    kept = [os.path.join(work, name) for name in ("checkpoints", "replay", "metrics.jsonl")]
    before = _digest(kept)
    with pytest.raises(checkpoints.CheckpointError, match=r"beta_scale 0\.5.*beta_scale 0\.4") as error:
        pipeline.train_and_evaluate(_tiny_config(generations=1), work, progress=False, log=lambda *_: None)
    assert os.path.join(work, "checkpoints", "0") in str(error.value)
    assert "network.beta_scale" in str(error.value)
    assert _digest(kept) == before


def test_resume_of_a_format_1_checkpoint_takes_the_config_beta_scale(beta_run, tmp_path):
    """Format 1 did not record beta_scale; the run's config says what it was."""
    work = str(tmp_path / "run")
    shutil.copytree(beta_run["workdir"], work)
    as_format_1(work, 0)
    config = beta_run["config"]
    log = []
    summary = pipeline.train_and_evaluate(config, work, progress=False, log=log.append)
    assert any("resuming from" in line for line in log)
    rules = go.GoRules(config.board_size)
    payload = _restore_trained(config, work)
    _, beta = _alpha_beta(training.network_spec(config, 0).build(), payload.state.variables, rules, go.init(rules, 0.0))
    assert summary["beta_empty"] == pytest.approx(beta, rel=1e-5)


def _empty_board(variables, spec):
    rules = go.GoRules(spec.board_size)
    evaluator = search.make_network_evaluator(spec.build(), rules)
    state = jax.tree_util.tree_map(lambda x: x[None], go.init(rules, 0.0))
    _, alpha, beta = jax.jit(evaluator)(variables, state)
    return float(alpha[0]), float(beta[0])


def test_each_generation_logs_its_own_nets_fair_komi(first_run):
    """metrics.jsonl's α_∅ of generation g is checkpoint g's net's, not the net that played g."""
    work = first_run["snapshot"]
    metrics = _metrics(work)
    for m in metrics:
        loaded = checkpoints.load_network(os.path.join(work, "checkpoints", str(m["generation"])))
        alpha, beta = _empty_board(loaded.variables, loaded.spec)
        assert m["alpha_empty"] == pytest.approx(alpha, abs=1e-4)
        assert m["beta_empty"] == pytest.approx(beta, rel=1e-4)
    # Generation 1's self-play was played by generation 0's net.
    assert metrics[1]["selfplay_alpha_empty"] == pytest.approx(metrics[0]["alpha_empty"], abs=1e-4)
    assert metrics[0]["first_move"] and metrics[1]["first_move"]


@pytest.mark.slow  # about 40-65 s: in `make test-slow` (CI runs both)
def test_gating_end_to_end_promotes_the_best_candidate(tmp_path):
    """Real gating matches (no root noise, random openings): the promoted net plays and is what
    checkpoints hold for play; the training chain is saved beside it and a restart resumes."""
    config = _tiny_config(generations=1)
    with config.unlocked():
        config.gating.enabled = True
        config.gating.games = 4
        config.gating.opening_moves = 2
    work = str(tmp_path / "gated")
    with _Spy() as spy:
        pipeline.train_and_evaluate(config, work, progress=False, log=lambda *_: None)
    (m,) = _metrics(work)
    assert len(m["gating_scores"]) == 2 and all(0.0 <= s <= 1.0 for s in m["gating_scores"])
    assert m["gating_promoted"] is True  # threshold 0: the best candidate always wins the gate
    with checkpoints.Checkpointer(work) as ckpt:
        assert ckpt.read_metadata(0)["selfplay_net"] is True
        payload = ckpt.restore(0, spy.saved[0])
    loaded = checkpoints.load_network(work)
    _equal_trees(loaded.variables, jax.device_get(payload.selfplay_variables))
    _equal_trees(payload.state.params, spy.saved[0].params)
    alpha, _ = _empty_board(loaded.variables, loaded.spec)
    assert m["alpha_empty"] == pytest.approx(alpha, abs=1e-4)
    # The restart resumes with the promoted net playing.
    with config.unlocked():
        config.generations = 2
    log = []
    pipeline.train_and_evaluate(config, work, progress=False, log=log.append)
    assert any("resuming from" in line for line in log)
    assert _metrics(work)[1]["selfplay_alpha_empty"] == pytest.approx(m["alpha_empty"], abs=1e-4)


def test_gating_that_rejects_keeps_the_player_and_trains_on(tmp_path, monkeypatch):
    """A rejected candidate's steps are not thrown away: the chain continues from its own weights,
    while the net that plays self-play stays the previous one."""
    from saijax.analysis import results
    from saijax.play import arena

    def every_candidate_loses(side_a, side_b, settings, **kwargs):
        del kwargs
        return [
            results.GameResult(
                black=side_b.name if i % 2 else side_a.name,
                white=side_a.name if i % 2 else side_b.name,
                winner="black" if i % 2 else "white",
            )
            for i in range(settings.games)
        ]

    monkeypatch.setattr(arena, "play_match", every_candidate_loses)
    config = _tiny_config(generations=2)
    with config.unlocked():
        config.gating.enabled = True
        config.gating.threshold = 0.5
    work = str(tmp_path / "rejected")
    with _Spy() as spy:
        pipeline.train_and_evaluate(config, work, progress=False, log=lambda *_: None)
    metrics = _metrics(work)
    assert [m["gating_promoted"] for m in metrics] == [False, False]
    assert all(s == 0.0 for m in metrics for s in m["gating_scores"])
    # The playing net never changed: every generation's α_∅ is the initial net's.
    assert metrics[0]["alpha_empty"] == pytest.approx(metrics[0]["selfplay_alpha_empty"], abs=1e-5)
    assert metrics[1]["alpha_empty"] == pytest.approx(metrics[0]["alpha_empty"], abs=1e-5)
    # ... while the training chain moved on from generation 0's weights.
    p0, p1 = (jax.tree_util.tree_leaves(spy.saved[g].params) for g in (0, 1))
    assert any(not np.array_equal(a, b) for a, b in zip(p0, p1))
    assert int(spy.saved[1].step) == 2 * config.training.steps_per_generation
    loaded = checkpoints.load_network(work)
    assert any(not np.array_equal(a, b) for a, b in zip(jax.tree_util.tree_leaves(loaded.variables["params"]), p1))


@pytest.mark.slow  # about 40-65 s: in `make test-slow` (CI runs both)
def test_network_growth_trains_the_bigger_net_and_checkpoints_its_spec(tmp_path):
    config = _tiny_config(generations=2)
    with config.unlocked():
        config.schedules.network = ((0, 1, 8), (1, 2, 8))
    work = str(tmp_path / "grow")
    log = []
    pipeline.train_and_evaluate(config, work, progress=False, log=log.append)
    assert any("growing the network 1x8 -> 2x8" in line for line in log)
    metrics = _metrics(work)
    assert [m["network"] for m in metrics] == ["1x8", "2x8"]
    assert "growth_total_loss" in metrics[1] and np.isfinite(metrics[1]["growth_total_loss"])
    loaded = checkpoints.load_network(work)
    assert (loaded.spec.blocks, loaded.spec.filters, loaded.generation) == (2, 8, 1)
    alpha, _ = _empty_board(loaded.variables, loaded.spec)
    assert metrics[1]["alpha_empty"] == pytest.approx(alpha, abs=1e-4)


@pytest.mark.slow  # about 40-60 s: in `make test-slow` (CI runs both)
def test_network_growth_by_widening_starts_as_the_old_net(tmp_path):
    """training.growth = 'widen': generation 1's self-play is played by a 1x16
    net whose empty-board α_∅, β_∅ are generation 0's trained 1x8 net's."""
    config = _tiny_config(generations=2)
    with config.unlocked():
        config.schedules.network = ((0, 1, 8), (1, 1, 16))
        config.training.growth = "widen"
    work = str(tmp_path / "widen")
    log = []
    pipeline.train_and_evaluate(config, work, progress=False, log=log.append)
    assert any("growing the network 1x8 -> 1x16 (training.growth widen)" in line for line in log)
    m0, m1 = _metrics(work)
    assert (m0["network"], m1["network"], m1["growth_mode"], m1["growth_from"]) == ("1x8", "1x16", "widen", "1x8")
    assert not any(k.startswith("growth_total") for k in m1)  # no catch-up training
    assert m1["selfplay_alpha_empty"] == pytest.approx(m0["alpha_empty"], abs=1e-4)
    assert m1["selfplay_beta_empty"] == pytest.approx(m0["beta_empty"], rel=1e-4)
    loaded = checkpoints.load_network(work)
    assert (loaded.spec.blocks, loaded.spec.filters, loaded.generation) == (1, 16, 1)


def test_init_checkpoint_and_an_offline_style_fine_tune(first_run, tmp_path):
    """config.init_checkpoint starts generation 0 from a trained net, and
    config.style.centre_bonus scores the run's games with the style's map."""
    start = os.path.join(first_run["snapshot"], "checkpoints", "1")
    config = _tiny_config(generations=1, init_checkpoint=start)
    config.style.centre_bonus = 0.2
    work = str(tmp_path / "styled")
    log = []
    pipeline.train_and_evaluate(config, work, progress=False, log=log.append)
    assert any(line.startswith(f"starting from {start}") for line in log)
    (m,) = _metrics(work)
    # Generation 0's games were played by the starting net.
    assert m["selfplay_alpha_empty"] == pytest.approx(_metrics(first_run["snapshot"])[1]["alpha_empty"], abs=1e-4)
    # Final margins are weighted areas (lines 1 of 5×5 count 0.8, the centre
    # 1.2) minus an integer-or-half komi: not all of them are multiples of 0.5.
    with np.load(os.path.join(work, "replay", os.listdir(os.path.join(work, "replay"))[0])) as data:
        margins = np.unique(data["margin"])
    assert np.any(np.abs(margins * 2 - np.round(margins * 2)) > 0.1)


def test_init_checkpoint_of_another_shape_is_refused(first_run, tmp_path):
    config = _tiny_config(generations=1, init_checkpoint=first_run["snapshot"])
    config.network.filters = 16
    with pytest.raises(ValueError, match=r"init_checkpoint=.* is a 1x8 sai net .* generation-0 net is 1x16"):
        pipeline.train_and_evaluate(config, str(tmp_path / "bad"), progress=False, log=lambda *_: None)
    config = _tiny_config(generations=1, init_checkpoint=str(tmp_path / "missing"))
    with pytest.raises(ValueError, match="init_checkpoint="):
        pipeline.train_and_evaluate(config, str(tmp_path / "bad2"), progress=False, log=lambda *_: None)


def test_final_report_explains_the_empty_board_and_quotes_the_shipped_go5_run():
    """train.py's last printout: what α_∅ and β_∅ mean, how far the run is
    from its config's full run, and, for go5.py, numbers that are those of
    the shipped table experiments/baselines/results/main/curves.csv."""
    from saijax.cli import train

    go5 = os.path.join(REPO, "configs", "go5.py")
    config = _tiny_config(generations=12)
    summary = {"fair_komi": 8.56, "beta_empty": 0.069, "first_move": "C3"}
    report = train._final_report(summary, config, go5)
    assert "after generation 11" in report and "α_∅ = +8.56" in report and "β_∅ = 0.069" in report
    assert "12 of go5.py's 100 generations" in report and "--config.generations=100" in report
    finished = train._final_report(summary, _tiny_config(generations=100), go5)
    assert "of go5.py's" not in finished and "the full configs/go5.py run" in finished
    assert "go5.py" not in train._final_report(summary, config, TINY).split("\n", 1)[1]

    with open(os.path.join(REPO, "experiments", "baselines", "results", "main", "curves.csv")) as f:
        rows = [row for row in csv.DictReader(f) if row["arm"] == "SAI" and row["seed"] == "0"]
    gen = {int(row["generation"]): row for row in rows}
    alpha = lambda g: float(gen[g]["alpha_empty"])  # noqa: E731
    minutes = lambda g: round(float(gen[g]["minutes"]))  # noqa: E731
    first_20 = min(g for g in gen if alpha(g) > 20)
    assert f"α_∅ {alpha(11):+.2f} at generation 11 ({minutes(11)} minutes)" in report
    assert f"first above 20 at generation {first_20}\n  ({minutes(first_20)} minutes)" in report
    assert f"{alpha(27):+.2f} at generation 27 ({minutes(27)} minutes)" in report
    assert {gen[g]["first_move"] for g in gen if g >= 1} == {"C3"} and "first move C3 from generation 1" in report
    with open(os.path.join(REPO, "saijax", "zoo", "index.json")) as f:
        (zoo_go5,) = [e for e in json.load(f)["entries"] if e["name"] == "go5"]
    assert (
        f"(generation {zoo_go5['generation']}): α_∅ {zoo_go5['alpha_empty']:+.2f}, β_∅ {zoo_go5['beta_empty']:.2f}"
        in report
    )


def test_an_undefined_metric_is_nan_in_jsonl_and_left_out_of_tensorboard(tmp_path):
    """A NaN metric (undefined this generation) is kept in metrics.jsonl and not sent to TensorBoard."""
    tensorboardx = pytest.importorskip("tensorboardX")
    del tensorboardx
    writer = pipeline.MetricsWriter(str(tmp_path))
    sent = []
    writer._tb.add_scalar = lambda name, value, step: sent.append(name)
    writer.write(3, {"loss": 0.5, "score_error_sharp_late": float("nan"), "ok": True, "first_move": "D2"})
    writer.close()
    assert sent == ["loss"]
    line = json.loads(open(tmp_path / "metrics.jsonl").read())
    assert line["generation"] == 3 and math.isnan(line["score_error_sharp_late"]) and line["loss"] == 0.5
