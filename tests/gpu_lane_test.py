"""The GPU lane's commands, checked on the CPU (docs/performance.md, "The GPU lane").

benchmarks/selfplay.py and benchmarks/gpu.py run as subprocesses at tiny
sizes (gpu.py with every section is a slow test: about a minute and a half
here); the Makefile's GPU targets are checked dry (``make -n``): they run the
Python that is there, with no venv and no install.
"""

import importlib.metadata
import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import time
import types

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from conftest import REPO, TINY

from saijax.core import go
from saijax.learn import config as config_lib
from saijax.learn import pipeline

BENCHMARKS = os.path.join(REPO, "benchmarks")
SECTIONS = ["versions", "forward", "selfplay", "env", "anchor", "training"]
# A ratio against the forward-pass ceiling, or a share of a time, above 1 means the benchmark is wrong
# (benchmarks/selfplay.py); a single round of these tiny runs on a shared CPU is allowed this much noise.
TIMING_TOLERANCE = 0.05


def _env():
    path = os.environ.get("PYTHONPATH")
    return dict(os.environ, JAX_PLATFORMS="cpu", PYTHONPATH=REPO + (os.pathsep + path if path else ""))


def _run(args, timeout=600):
    out = subprocess.run([sys.executable, *args], cwd=REPO, env=_env(), capture_output=True, text=True, timeout=timeout)
    assert out.returncode == 0, out.stdout[-2000:] + out.stderr[-3000:]
    return out.stdout


def _module(name):
    spec = importlib.util.spec_from_file_location(f"_bench_{name}", os.path.join(BENCHMARKS, f"{name}.py"))
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up
    sys.path.insert(0, BENCHMARKS)
    try:
        spec.loader.exec_module(module)
    finally:
        sys.path.remove(BENCHMARKS)
    return module


# ---------------------------------------------------------------------------
# benchmarks/selfplay.py


@pytest.mark.slow  # about 40-65 s: in `make test-slow` (CI runs both)
def test_selfplay_benchmark_ends_with_its_ratio(tmp_path):
    result = tmp_path / "result.json"
    stdout = _run(
        [
            "benchmarks/selfplay.py",
            f"--config={TINY}",
            "--config.selfplay.chunk_moves=4",
            "--rounds=1",
            "--chunks=2",
            "--forward_passes=2",
            "--check_pipeline=1",
            f"--json={result}",
        ]
    )
    lines = stdout.strip().splitlines()
    match = re.fullmatch(r"selfplay/forward ratio (\d+\.\d+)", lines[-1])
    assert match, lines[-3:]
    ratio = float(match.group(1))
    assert 0 < ratio <= 1 + TIMING_TOLERANCE
    assert any("waiting for the device" in line and "host collection" in line for line in lines)
    assert any(line.startswith("compile: self-play chunk") for line in lines)
    search_line = next(line for line in lines if line.startswith("the search alone"))
    assert "self-play/search" in search_line and "tree work" in search_line and "around the search" in search_line
    assert any(line.startswith("a real run, generation 0 of 1") for line in lines)
    data = json.loads(result.read_text())
    assert data["pipeline_check"]["selfplay_evals_per_s"] > 0 and data["search_ratio"] > 0
    # Shares of the search's and of self-play's time: tree work near all of it for tiny.py, whose net
    # costs little; a chunk with a free search takes less than the real one.
    assert 0 < data["tree_work_share"] <= 1 + TIMING_TOLERANCE
    assert 0 < data["outside_search_share"] < 1
    assert data["ratio"] == pytest.approx(ratio, abs=5e-4)
    assert data["config"] == TINY and data["generation"] == 0
    _check_provenance(data["provenance"])
    # tiny.py: 8 slots, 4 simulations and no playout caps, so every move of
    # the 2 chunks of 4 moves costs 8 * (4 + 1) evaluations.
    (first,) = data["per_round"]
    assert first["evaluations"] == 2 * 4 * 8 * 5
    assert first["full_search_fraction"] == 1.0


@pytest.mark.slow  # about 40 s
def test_tree_walk_benchmark_times_both_walks():
    stdout = _run(["benchmarks/tree_walk.py", f"--config={TINY}", "--generation=0", "--net=", "--simulations=2,4",
                   "--rounds=1", "--moves=1"])  # fmt: skip
    lines = stdout.strip().splitlines()
    assert re.fullmatch(r"path/parents search time ratio \d+\.\d+", lines[-1]), lines[-3:]
    rows = [line for line in lines if line.startswith("| network |") or line.startswith("| tree work alone |")]
    assert len(rows) == 4 and all(float(r.split("|")[3]) > 0 < float(r.split("|")[4]) for r in rows)


def _free_network(rules):
    """A network that costs nothing: flat policy logits, α = 0, β = 1 for every position (kept
    data-dependent on the positions, so that nothing upstream is dead code)."""

    def evaluate(params, states):
        del params
        zero = 0.0 * states.to_play.astype(jnp.float32)
        return jnp.zeros((zero.shape[0], rules.num_points + 1), jnp.float32) + zero[:, None], zero, zero + 1.0

    return evaluate


def test_forward_harness_times_over_the_duration_asked():
    """measure() times the ceiling over as long as the self-play it is compared with."""
    bench = _module("selfplay")
    rules = go.GoRules(5)
    states = jax.vmap(lambda k: go.init(rules, 7.5))(jnp.arange(4))
    harness = bench.ForwardHarness(_free_network(rules), None, states, passes=2)
    start = time.perf_counter()
    wall, cpu = harness.time(0.3)
    assert time.perf_counter() - start >= 0.3
    assert 0 < wall < 0.3 and cpu >= 0  # per pass, over many calls


@pytest.mark.slow  # about 60 s
def test_tree_work_is_timed_on_the_networks_own_trees():
    """SearchHarness(replay=True) searches with the network's outputs looked up, not computed: its
    searches are the network's, visit counts equal and policies and root α within rounding, element
    by element; and it has checked so itself, so a table that misses a position is an error."""
    bench = _module("selfplay")
    config = config_lib.load_config(TINY)
    b = bench.build(config, generation=0)
    real, replayed = bench.SearchHarness(b, moves=2), bench.SearchHarness(b, moves=2, replay=True)
    for mine, theirs in zip(real.outputs(), replayed.outputs(), strict=True):
        assert mine["visit_counts"].shape == (2, b.selfplay_config.batch_size, b.rules.num_actions)
        assert mine["visit_counts"].sum() == 2 * b.selfplay_config.batch_size * b.search_config.num_simulations
        np.testing.assert_array_equal(theirs["visit_counts"], mine["visit_counts"])
        for name in ("policy", "root_alpha"):
            np.testing.assert_allclose(theirs[name], mine[name], rtol=0, atol=bench.REPLAY_TOLERANCE)
    # Each slot's table holds 2 moves x (S + 1) nodes.
    (table,) = replayed._params
    assert table["key"].shape == (b.selfplay_config.batch_size, 2 * (b.search_config.num_simulations + 1), 2)
    replayed._params = [dict(table, key=table["key"] ^ jnp.uint32(1))]  # no position has its key now
    with pytest.raises(ValueError, match="missing from the table"):
        replayed.outputs()
    replayed._params = [table]
    assert 0 < replayed.rate(0.0) and 0 < real.rate(0.0)


def _states_by_two_orders(rules):
    """Two states on one board with one Zobrist hash and player to move, reached by two move orders
    (A then B, against B then A), so their past boards differ; and a third at another board."""

    def play(moves):
        state = go.init(rules, 7.5)
        for move in moves:
            state = go.step(rules, state, move)
        return state

    states = [play([0, 24, 6, 18]), play([6, 18, 0, 24]), play([0, 24, 6, 12])]
    return jax.tree_util.tree_map(lambda *x: jnp.stack(x), *states)


def test_the_replay_table_is_keyed_on_what_the_network_reads():
    """benchmarks/selfplay.input_key: one board by two histories is two keys (the network reads the past
    boards), the same state one key; replay_evaluator reports a state missing from its table."""
    bench = _module("selfplay")
    rules = go.GoRules(5)
    states = _states_by_two_orders(rules)
    assert bool(jnp.all(states.board[0] == states.board[1])) and bool(jnp.all(states.hash[0] == states.hash[1]))
    assert int(states.to_play[0]) == int(states.to_play[1])
    key_of = bench.input_key
    keys = np.asarray(key_of(states))
    assert keys.shape == (3, 2) and keys.dtype == np.uint32
    assert len({tuple(k) for k in keys}) == 3
    np.testing.assert_array_equal(np.asarray(key_of(states)), keys)  # a function of the state alone
    # A table of each slot's own state (slot i holds state i) with outputs that name the slot.
    n = 3
    table = {
        "key": jnp.asarray(keys)[:, None, :],  # [B, 1, 2]
        "logits": jnp.arange(n, dtype=jnp.float32)[:, None, None] + jnp.zeros((n, 1, rules.num_actions)),
        "alpha": jnp.arange(n, dtype=jnp.float32)[:, None],
        "beta": jnp.ones((n, 1)),
    }
    misses = []
    evaluate = jax.jit(bench.replay_evaluator(key_of, on_miss=misses.append))
    _, alpha, _ = evaluate(table, states)
    jax.effects_barrier()
    assert alpha.tolist() == [0.0, 1.0, 2.0] and misses == [0]
    swapped = jax.tree_util.tree_map(lambda x: x[jnp.array([1, 0, 2])], states)  # slots 0 and 1: the other history
    evaluate(table, swapped)
    jax.effects_barrier()
    assert misses == [0, 2]


def test_a_replay_without_a_cpu_device_is_a_clear_error(monkeypatch):
    """JAX_PLATFORMS=cuda alone leaves no device for the checked replay's host callback (the first H200
    run): the harness says so and names the fix, before any search."""
    bench = _module("selfplay")

    def no_cpu(backend=None):
        raise RuntimeError(f"Backend '{backend}' is not in the list of known backends: cuda.")

    monkeypatch.setattr(bench.jax, "devices", no_cpu)
    monkeypatch.setenv("JAX_PLATFORMS", "cuda")
    with pytest.raises(RuntimeError, match=r"JAX_PLATFORMS='cuda'.*JAX_PLATFORMS=cuda,cpu"):
        bench._require_host_callbacks()


def test_a_replay_that_is_not_the_network_s_search_is_an_error():
    """_check_replay compares every element: a policy 0.58 apart with the same checksum, or one visit moved,
    raise; outputs equal within rounding pass."""
    bench = _module("selfplay")
    real = {
        "policy": np.array([[[0.2, 0.8, 0.0], [0.5, 0.5, 0.0]]], np.float32),
        "visit_counts": np.array([[[1, 3, 0], [2, 2, 0]]], np.int32),
        "root_alpha": np.array([[0.25, -1.0]], np.float32),
    }
    bench._check_replay(real, {k: v.copy() for k, v in real.items()}, 4)
    close = dict(real, policy=real["policy"] + bench.REPLAY_TOLERANCE / 2)
    bench._check_replay(real, close, 4)
    same_sums = dict(real, policy=real["policy"][:, :, [1, 0, 2]])  # sums and α unchanged, 0.6 apart
    with pytest.raises(ValueError, match="policy up to 0.6"):
        bench._check_replay(real, same_sums, 4)
    moved = dict(real, visit_counts=real["visit_counts"][:, :, [1, 0, 2]])
    with pytest.raises(ValueError, match="visit counts differ in 2 of 6"):
        bench._check_replay(real, moved, 4)


def test_selfplay_benchmark_counts_evaluations_as_the_pipeline_does():
    """With playout caps, a cheap search costs its own simulations + 1 (the
    arithmetic of pipeline.train_and_evaluate's selfplay_evaluations)."""
    bench = _module("selfplay")
    config = config_lib.load_config(os.path.join(REPO, "configs", "go7.py"))
    fake = types.SimpleNamespace(
        search_config=pipeline.search_config(config, 60),  # 64 simulations
        selfplay_config=pipeline.selfplay_config(config),  # 8 on the cheap moves
    )
    moves = fake.selfplay_config.chunk_moves
    batch = fake.selfplay_config.batch_size
    assert bench.evaluations(fake, 3, 5) == (5 * 65 + (3 * moves - 5) * 9) * batch


# ---------------------------------------------------------------------------
# benchmarks/gpu.py


def _check_section_files(out, sections=SECTIONS):
    """Every section's JSON and Markdown exist and are well formed; returns the JSON."""
    found = {}
    for i, name in enumerate(sections, start=1):
        data = json.loads((out / f"{i}_{name}.json").read_text())
        assert data["section"] == name and data["index"] == i
        assert data["status"] in ("done", "partial", "skipped"), data
        if data["status"] == "skipped":
            assert data["reason"]
        _check_provenance(data["provenance"])
        md = (out / f"{i}_{name}.md").read_text()
        assert md.startswith(f"## {i}. ")
        _check_tables(md)
        found[name] = data
    summary = (out / "summary.md").read_text()
    _check_tables(summary)
    assert [line for line in summary.splitlines() if line.startswith("## ")] == [
        f"## {d['index']}. {d['title']}" for d in found.values()
    ]
    return found


def _check_provenance(found):
    """A result's device and versions (benchmarks/provenance.py), as this process sees them."""
    assert found["device"]["backend"] == "cpu" and found["device"]["devices"].startswith(f"{jax.device_count()} x ")
    assert found["versions"]["jax"] == jax.__version__ and found["versions"]["python"] == sys.version.split()[0]
    assert found["versions"]["jaxlib"] == importlib.metadata.version("jaxlib")


def _check_tables(md):
    """Each Markdown table: a header, a separator, rows with as many cells."""
    lines = md.splitlines()
    for i, line in enumerate(lines):
        if line.startswith("|") and (i == 0 or not lines[i - 1].startswith("|")):
            width = line.count("|")
            assert re.fullmatch(r"\|(---\|)+", lines[i + 1]) and lines[i + 1].count("|") == width, lines[i : i + 2]
            j = i + 2
            while j < len(lines) and lines[j].startswith("|"):
                assert lines[j].count("|") == width, lines[j]
                j += 1


def test_gpu_benchmark_writes_the_sections_it_measures(tmp_path):
    """The forward pass alone, two rows: each measured row in the files."""
    out = tmp_path / "bench"
    args = ["--small", "--sections", "versions,forward", "--forward_nets", "1x8", "--forward_batches", "8"]
    stdout = _run(["benchmarks/gpu.py", *args, "--budget_s", "600", "--out", str(out)])
    assert "wrote 2 sections" in stdout
    found = _check_section_files(out, ["versions", "forward"])
    assert not (out / "3_selfplay.json").exists()
    assert [d["status"] for d in found.values()] == ["done", "done"]
    rows = found["forward"]["rows"]
    assert [(r["net"], r["batch"], r["precision"]) for r in rows] == [(("1x8", 8, p)) for p in ("float32", "bfloat16")]
    assert all(r["evals_per_s"] > 0 and r["compile_s"] > 0 for r in rows)
    assert "| 1x8 | 8 | bfloat16 |" in (out / "2_forward.md").read_text()


def test_a_section_cap_keeps_its_first_row_and_skips_the_rest(tmp_path):
    """--caps forward=0: the section's first row still runs (its estimate rests on priors), the
    next ones are skipped for the cap, not the run's budget."""
    out = tmp_path / "bench"
    args = ["--small", "--sections", "versions,forward", "--forward_nets", "1x8", "--forward_batches", "8"]
    _run(["benchmarks/gpu.py", *args, "--caps", "forward=0", "--budget_s", "600", "--out", str(out)])
    found = _check_section_files(out, ["versions", "forward"])
    first, second = found["forward"]["rows"]
    assert "skipped" not in first and first["evals_per_s"] > 0
    assert "of the section's 0 s" in second["skipped"] and found["forward"]["status"] == "partial"
    assert {"name": "section caps, s", "value": "forward 0"} in found["versions"]["rows"]


def test_selfplay_rows_name_their_search():
    """--selfplay: PUCT unless a row names its algorithm; the GPU run's rows include Gumbel at the anchor's shape."""
    gpu = _module("gpu")
    assert gpu._selfplay_specs("4x128@4096,6x128@1024:gumbel") == [(4, 128, 4096, "puct"), (6, 128, 1024, "gumbel")]
    args = gpu.parse_args(["--out", "x", "--budget_s", "1"])
    assert (6, 128, 1024, "gumbel") in gpu._selfplay_specs(args.selfplay)
    assert (*gpu._nets(args.anchor_net)[0], args.anchor_batch) == (6, 128, 1024)
    config = gpu.selfplay_config(args, 6, 128, 1024, "path", "gumbel")
    assert (config.search.algorithm, config.search.walk, config.selfplay.batch_size) == ("gumbel", "path", 1024)


@pytest.mark.parametrize("caps", ["forward", "nosuch=5", "forward=soon"])
def test_a_bad_cap_is_a_usage_error_naming_it(caps):
    out = subprocess.run(
        [sys.executable, "benchmarks/gpu.py", "--small", "--caps", caps, "--budget_s", "1", "--out", "/nonexistent/x"],
        cwd=REPO,
        env=_env(),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 2 and f"--caps: {caps!r}" in out.stderr, out.stderr


@pytest.mark.slow
def test_gpu_benchmark_small_measures_every_section(tmp_path):
    out = tmp_path / "bench"
    # Self-play at the anchor's (small) shape only, with both walks: two rows, each beside the anchor.
    args = ["--small", "--selfplay", "1x8@8:gumbel", "--walks", "path,parents", "--budget_s", "900"]
    stdout = _run(["benchmarks/gpu.py", *args, "--out", str(out)], timeout=900)
    assert "wrote 6 sections" in stdout
    found = _check_section_files(out)
    assert all(d["status"] == "done" for d in found.values()), {n: d["reason"] for n, d in found.items()}
    assert {r["name"] for r in found["versions"]["rows"]} >= {"jax", "backend", "devices"}
    assert len(found["forward"]["rows"]) == 8 and all(r["evals_per_s"] > 0 for r in found["forward"]["rows"])
    rows = found["selfplay"]["rows"]  # a row per tree walk (search.walk)
    assert [(r["algorithm"], r["walk"]) for r in rows] == [("gumbel", "path"), ("gumbel", "parents")]
    assert all(0 < r["ratio"] <= 1 + TIMING_TOLERANCE and r["compile_s"] > 0 for r in rows)
    assert all(0 < r["tree_work_share"] <= 1 + TIMING_TOLERANCE for r in rows)
    assert [r["env"] for r in found["env"]["rows"]] == ["saijax", "pgx go_9x9"]
    anchor = {r["what"]: r for r in found["anchor"]["rows"]}
    assert 0 < anchor["self-play"]["ratio"] <= 1 + TIMING_TOLERANCE and anchor["forward pass alone"]["evals_per_s"] > 0
    # saijax's Gumbel rows at the anchor's shape, beside it, as a multiple of its rate.
    beside = [r for what, r in anchor.items() if what.startswith("saijax at this shape")]
    assert len(beside) == 2
    gumbel = {r["walk"]: r["selfplay_evals_per_s"] for r in rows if r["algorithm"] == "gumbel"}
    for r in beside:
        walk = r["what"].split("walk ")[1].split(",")[0]
        assert r["evals_per_s"] == gumbel[walk]
        assert r["saijax_over_anchor"] == pytest.approx(gumbel[walk] / anchor["self-play"]["evals_per_s"])
    (tr,) = found["training"]["rows"]
    assert tr["config"] == "go7_gpu" and min(tr["step_by_step"], tr["blocks"], tr["compute"]) > 0
    assert tr["blocks_over_compute"] > 0 and tr["compile_s"] > 0


def test_gpu_benchmark_skips_what_the_budget_cannot_hold(tmp_path):
    out = tmp_path / "bench"
    _run(["benchmarks/gpu.py", "--small", "--budget_s", "0", "--out", str(out)])
    found = _check_section_files(out)
    assert found["versions"]["status"] == "done"
    for name in SECTIONS[1:]:
        assert found[name]["status"] == "skipped" and "budget" in found[name]["reason"], found[name]
    assert "*Skipped: " in (out / "3_selfplay.md").read_text()


# ---------------------------------------------------------------------------
# The Makefile's GPU targets and the repository's size.


def _dry_run(*targets, **variables):
    if shutil.which("make") is None:
        pytest.skip("make is not installed")
    extra = [f"{k}={v}" for k, v in variables.items()]
    # --no-print-directory: under `make test` (a make inside make) the
    # output would gain "Entering directory" lines.
    command = ["make", "--no-print-directory", "-n", *extra, *targets]
    out = subprocess.run(command, cwd=REPO, capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    return out.stdout


def test_gpu_targets_use_the_python_that_is_there():
    commands = _dry_run("test-gpu", "bench-gpu", PYTHON="/opt/python3").strip().splitlines()
    assert len(commands) == 2
    for command in commands:
        assert not re.search(r"\bpip\b|venv", command), command
        # The GPU by default, and a CPU device for host callbacks (the replayed search's check).
        assert "JAX_PLATFORMS=cuda,cpu" in command and "XLA_PYTHON_CLIENT_PREALLOCATE=false" in command
        assert " /opt/python3 " in command
    test, bench = commands
    assert "-m pytest" in test and re.search(r" -n \d+ ", test)
    assert "benchmarks/gpu.py --out " in bench and "--budget_s " in bench
    # Every test file and test the target names exists.
    for path in re.findall(r"tests/\S+", test):
        file, _, name = path.partition("::")
        assert os.path.exists(os.path.join(REPO, file)), file
        if name:
            with open(os.path.join(REPO, file)) as f:
                assert f"def {name}(" in f.read(), path


def test_the_lane_script_stops_the_tests_on_time_and_leaves_few_files(tmp_path):
    """benchmarks/gpu_lane.sh with 1 s for the tests and no time for the bench: pytest is stopped,
    test-gpu.txt says so, and what comes back fits the device tool's 8 files."""
    if shutil.which("make") is None:
        pytest.skip("make is not installed")
    out = tmp_path / "out"
    env = dict(_env(), PYTHON=sys.executable, GPU_PLATFORM="cpu")
    done = subprocess.run(
        ["sh", "benchmarks/gpu_lane.sh", str(out), "20", "1"],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert (out / "test-gpu.txt").read_text().startswith("stopped at 1 s: ")
    assert "test-gpu" in (out / "test-gpu.log").read_text()
    assert not (out / "bench.tar.gz").exists()  # 20 s leave the bench no time
    assert len(list(out.iterdir())) <= 8


def test_the_recipe_script_stops_on_time_and_packs_what_comes_back(tmp_path):
    """benchmarks/gpu_recipe.sh (issue 63's GPU minutes) dry, with 1 s for the tests and no minutes for the
    legs: pytest is stopped, neither leg starts, and the logs come back packed, within the device's 8 files."""
    if shutil.which("make") is None:
        pytest.skip("make is not installed")
    out = tmp_path / "out"
    env = dict(_env(), PYTHON=sys.executable, DRY="1")
    done = subprocess.run(["sh", "benchmarks/gpu_recipe.sh", str(out), "20", "1", "0"], cwd=REPO, env=env,
                          capture_output=True, text=True, timeout=120)  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    files = [p for p in out.rglob("*") if p.is_file()]
    assert [p.name for p in files] == ["logs.tar.gz"] and len(files) <= 8
    with tarfile.open(out / "logs.tar.gz") as tar:
        log = tar.extractfile("logs/gpu_recipe.log").read().decode()
        assert tar.extractfile("logs/test-gpu.txt").read().decode().startswith("stopped at 1 s: ")
    assert "go7_sharp_gpu: GO7_MIN=0, not started" in log and "go9_gpu: " in log and "not started" in log


def test_the_repository_stays_under_50_mb():
    """A GPU run starts from a copy of the checkout (docs/performance.md)."""
    if shutil.which("git") is None or not os.path.exists(os.path.join(REPO, ".git")):
        pytest.skip("not a git checkout")
    files = subprocess.run(["git", "ls-files", "-z"], cwd=REPO, capture_output=True, timeout=60).stdout
    total = sum(
        os.path.getsize(os.path.join(REPO, p))
        for p in files.decode().split("\0")
        if p and os.path.isfile(os.path.join(REPO, p))
    )
    assert total < 50e6, f"tracked files hold {total / 1e6:.1f} MB"
