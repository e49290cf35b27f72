"""One run over two processes: `python -m saijax.train` with jax.distributed.

The slow tests start two real processes on this CPU, talking through a
coordinator on localhost and gloo collectives, each with two fake devices
(`XLA_FLAGS=--xla_force_host_platform_device_count=2`). They train
configs/tiny.py for two generations, restart both processes for a third, and
then kill one process of a third pair to see the other stop. `make
test-multihost` runs them (CI does, after `make test`). The fast tests check
the flags' errors and the single-process behaviour of `saijax.learn.distributed`.
"""

import hashlib
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import time

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from conftest import REPO, fake_device_env, train_command

from saijax.core import checkpoints
from saijax.learn import distributed

# Seconds without a heartbeat after which a process counts as dead. Generous,
# so that a slow compile on a busy 2-core machine is not taken for a death.
HEARTBEAT = 60
# Seconds for one pair of processes to finish (a few minutes on an idle
# 2-core machine); raise it on a busy one.
RUN_TIMEOUT = float(os.environ.get("SAIJAX_MULTIHOST_TIMEOUT", 1200))
ROWS_RE = re.compile(r"generation (\d+): self-play rows per process \[(\d+), (\d+)\], (\d+) in all")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("localhost", 0))
        return s.getsockname()[1]


def _env(cache_dir=None):
    env = fake_device_env(2)
    for name in (distributed.COORDINATOR_ENV, distributed.NUM_PROCESSES_ENV, distributed.PROCESS_ID_ENV):
        env.pop(name, None)
    if cache_dir is not None:
        # The restarted pairs load the first pair's compiled programs.
        env["JAX_COMPILATION_CACHE_DIR"] = str(cache_dir)
    return env


def _command(workdir, port, process_id, *overrides):
    return train_command(
        workdir,
        f"--coordinator_address=localhost:{port}",
        "--num_processes=2",
        f"--process_id={process_id}",
        f"--heartbeat_timeout={HEARTBEAT}",
        *overrides,
    )


def _start_pair(workdir, logs, *overrides):
    """Both processes of a run, each writing its output to logs[i]."""
    port = _free_port()
    cache_dir = os.path.join(os.path.dirname(workdir), "jax_cache")
    processes = []
    for i in (0, 1):
        with open(logs[i], "w") as out:
            processes.append(
                subprocess.Popen(
                    _command(workdir, port, i, *overrides),
                    cwd=REPO,
                    env=_env(cache_dir),
                    stdout=out,
                    stderr=subprocess.STDOUT,
                )
            )
    return processes


def _stop(processes):
    for process in processes:
        if process.poll() is None:
            process.kill()
        process.wait()


def _run_pair(tmp_path, name, workdir, *overrides):
    """Runs both processes to the end; returns their outputs."""
    logs = [tmp_path / f"{name}.{i}.log" for i in (0, 1)]
    processes = _start_pair(workdir, logs, *overrides)
    try:
        deadline = time.time() + RUN_TIMEOUT
        for process in processes:
            process.wait(timeout=max(deadline - time.time(), 1))
    finally:
        _stop(processes)
    outputs = [log.read_text() for log in logs]
    for i, (process, output) in enumerate(zip(processes, outputs)):
        assert process.returncode == 0, f"process {i} failed:\n{output[-4000:]}"
    return outputs


def _digest(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def _metrics(workdir):
    with open(os.path.join(workdir, "metrics.jsonl")) as f:
        return [json.loads(line) for line in f]


@pytest.fixture(scope="module")
def two_process_run(tmp_path_factory):
    """Two generations on two processes, then both restarted for a third."""
    tmp_path = tmp_path_factory.mktemp("multihost")
    workdir = tmp_path / "run"
    started = time.time()
    first = _run_pair(tmp_path, "first", workdir, "--config.generations=2")
    first_seconds = time.time() - started
    replay_before = {g: _digest(workdir / "replay" / f"gen_{g:06d}.npz") for g in (0, 1)}
    metrics_before = _metrics(workdir)
    started = time.time()
    second = _run_pair(tmp_path, "second", workdir, "--config.generations=3")
    print(f"two-process run: {first_seconds:.0f}s for 2 generations, {time.time() - started:.0f}s to resume for 1 more")
    return {
        "tmp_path": tmp_path,
        "workdir": workdir,
        "first": first,
        "second": second,
        "replay_before": replay_before,
        "metrics_before": metrics_before,
    }


@pytest.mark.slow
def test_only_process_0_logs_and_writes_metrics(two_process_run):
    first = two_process_run["first"]
    for gen in (0, 1):
        assert re.search(rf"^gen +{gen} \|", first[0], re.M), first[0][-3000:]
        assert not re.search(rf"^gen +{gen} \|", first[1], re.M), first[1][-3000:]
    report = "the net's view of the empty board"  # train.py's final printout
    assert report in first[0] and report not in first[1]
    # One metrics line per generation: written once, by process 0.
    assert [m["generation"] for m in two_process_run["metrics_before"]] == [0, 1]


@pytest.mark.slow
def test_replay_window_holds_the_rows_of_both_processes(two_process_run):
    workdir, first = two_process_run["workdir"], two_process_run["first"]
    logged = {int(m[0]): tuple(map(int, m[1:])) for m in ROWS_RE.findall(first[0])}
    assert sorted(logged) == [0, 1], first[0][-3000:]
    metrics = {m["generation"]: m for m in two_process_run["metrics_before"]}
    window = 0
    for gen, (rows0, rows1, total) in logged.items():
        assert rows0 > 0 and rows1 > 0 and rows0 + rows1 == total
        with np.load(workdir / "replay" / f"gen_{gen:06d}.npz") as data:
            game_id, move = data["game_id"], data["move_number"]
        # Process p's game g is game g·2 + p: every row of both processes is
        # there, once.
        assert len(game_id) == total
        assert np.sum(game_id % 2 == 0) == rows0 and np.sum(game_id % 2 == 1) == rows1
        assert len(set(zip(game_id.tolist(), move.tolist()))) == total  # no duplicates
        assert metrics[gen]["rows_per_process"] == [rows0, rows1]
        window += total
        assert metrics[gen]["window_rows"] == window  # the window (2 generations) trains on both
    assert metrics[0]["games"] >= 16  # both shares of games_per_generation


@pytest.mark.slow
def test_checkpoints_are_written_once(two_process_run):
    directory = two_process_run["workdir"] / "checkpoints"
    # One orbax save per generation, by both processes together: one step
    # directory, one metadata file, committed once.
    assert sorted(os.listdir(directory)) == ["0", "1", "2"]
    for gen in ("0", "1", "2"):
        assert os.path.isfile(directory / gen / "commit_success.txt")
        assert sorted(os.listdir(directory / gen / "meta")) == ["commit_success.txt", "metadata"]
    with checkpoints.Checkpointer(two_process_run["workdir"]) as ckpt:
        assert ckpt.all_generations() == [0, 1, 2]
        assert ckpt.read_metadata(2)["generation"] == 2
    network = checkpoints.load_network(directory / "2")
    assert all(np.all(np.isfinite(x)) for x in jax.tree_util.tree_leaves(network.variables))


@pytest.mark.slow
def test_restart_of_both_processes_resumes(two_process_run):
    workdir, second = two_process_run["workdir"], two_process_run["second"]
    assert f"resuming from {workdir}/checkpoints/1: generation 1 done, continuing at 2" in second[0], second[0][-3000:]
    assert re.search(r"^gen +2 \|", second[0], re.M)
    assert not re.search(r"^gen +[01] \|", second[0], re.M)  # nothing replayed
    assert [m["generation"] for m in _metrics(workdir)] == [0, 1, 2]
    for gen, digest in two_process_run["replay_before"].items():
        assert _digest(workdir / "replay" / f"gen_{gen:06d}.npz") == digest
    assert sorted(os.listdir(workdir / "replay")) == [f"gen_{g:06d}.npz" for g in range(3)]


@pytest.mark.slow
def test_killing_one_process_stops_the_other(two_process_run):
    tmp_path = two_process_run["tmp_path"]
    workdir = tmp_path / "killed"
    shutil.copytree(two_process_run["workdir"], workdir)
    logs = [tmp_path / f"killed.{i}.log" for i in (0, 1)]
    # Gated, so that the run also shows the gate's decision taken once for
    # both processes.
    processes = _start_pair(workdir, logs, "--config.generations=20", "--config.gating.enabled=true")
    try:
        # Running: generation 3 is done (checkpoint and metrics line).
        deadline = time.time() + RUN_TIMEOUT
        while 3 not in [m["generation"] for m in _metrics(workdir)]:
            assert all(p.poll() is None for p in processes), logs[0].read_text()[-3000:]
            assert time.time() < deadline, "generation 3 did not finish"
            time.sleep(0.2)
        processes[1].send_signal(signal.SIGKILL)
        killed = time.time()
        processes[0].wait(timeout=HEARTBEAT + 120)
        stopped = time.time() - killed
    finally:
        _stop(processes)
    gated = [m for m in _metrics(workdir) if m["generation"] == 3][0]
    assert len(gated["gating_scores"]) == 2 and "gating_promoted" in gated
    output = logs[0].read_text()
    assert processes[0].returncode != 0, output[-3000:]
    assert stopped < HEARTBEAT + 60, stopped
    assert (
        "another process has probably died" in output  # a collective failed: our one-line error
        or "another task died" in output  # the coordination service's heartbeat check
    ), output[-3000:]
    print(f"process 0 stopped {stopped:.1f}s after process 1 was killed")


def _run_cli(*flags):
    return subprocess.run(
        train_command("/nonexistent/never", *flags),
        cwd=REPO,
        env=_env(),
        capture_output=True,
        text=True,
        timeout=300,
    )


@pytest.mark.parametrize(
    "flags, named",
    [
        (["--coordinator_address=localhost:1", "--num_processes=2", "--process_id=2"], "--process_id"),
        (["--coordinator_address=localhost", "--num_processes=2", "--process_id=0"], "--coordinator_address"),
        (["--coordinator_address=localhost:1", "--num_processes=0", "--process_id=0"], "--num_processes"),
    ],
)
def test_bad_distributed_flags_are_one_line_errors_naming_the_flag(flags, named):
    result = _run_cli(*flags)
    assert result.returncode != 0
    last = result.stderr.strip().splitlines()[-1]
    assert last.startswith("error: ") and named in last, result.stderr[-2000:]
    assert "Traceback" not in result.stderr


def test_a_bad_config_field_fails_before_connecting():
    """Process 1 of a pair whose coordinator never comes: the config's bad
    field is the error, at once, not a wait for the other process."""
    start = time.time()
    result = _run_cli("--coordinator_address=localhost:1", "--num_processes=2", "--process_id=1", "--config.seed=-1")
    assert result.returncode != 0
    last = result.stderr.strip().splitlines()[-1]
    assert last.startswith("error: seed") and "Traceback" not in result.stderr, result.stderr[-2000:]
    assert time.time() - start < 120


def test_single_process_helpers_are_the_identity():
    tree = {"w": jnp.arange(4.0)}
    mesh = distributed.local_mesh()
    assert distributed.to_local(tree, mesh) is tree
    assert distributed.allgather({"a": 1}) == [{"a": 1}]
    assert distributed.agree(7) == 7
    assert distributed.process_share(16) == 16
    key = jax.random.PRNGKey(3)
    assert distributed.process_key(key) is key
    assert distributed.is_primary()
    distributed.barrier("nothing to wait for")
