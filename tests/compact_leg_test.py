"""Compact legs (checkpoints.write_compact, python -m saijax.compact_leg):
a checkpoint without the optimizer's state, its weights in float32 or
bfloat16, that a run resumes from with a fresh optimizer state."""

import gc
import glob
import importlib.util
import json
import os
import shutil

import jax
import ml_dtypes
import numpy as np
import pytest
from conftest import REPO, TINY, training_config

from saijax.cli import compact_leg as compact_leg_cli
from saijax.core import checkpoints, networks
from saijax.learn import compact_leg, pipeline, training
from saijax.learn import config as config_lib

N = 5
SPEC = networks.NetworkSpec(board_size=N, blocks=1, filters=8)

pytestmark = pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")


@pytest.fixture(scope="module", autouse=True)
def _collect_orbax_leftovers():
    yield
    gc.collect()


@pytest.fixture(scope="module")
def full(tmp_path_factory):
    """A full checkpoint of an Adam state with a weight average and a
    promoted net, every leaf distinctive, as a run's workdir."""
    net = SPEC.build()
    optimizer = training.make_optimizer(training_config())
    state = training.create_train_state(net, optimizer, jax.random.key(0), step=77, ema=True)
    state = jax.tree_util.tree_map(lambda x: x + np.asarray(0.123, x.dtype) if x.dtype.kind == "f" else x, state)
    selfplay = jax.tree_util.tree_map(lambda x: x * 2, state.live().variables)
    workdir = tmp_path_factory.mktemp("full")
    with checkpoints.Checkpointer(workdir) as ckpt:
        ckpt.save(
            4,
            state=state,
            rng_key=jax.random.key(9),
            network=SPEC,
            replay_dir="/tmp/replay",
            extra={"metrics": {"x": 1}},
            selfplay_variables=selfplay,
        )
    (workdir / "metrics.jsonl").write_text(json.dumps({"generation": 4, "seconds": 1.0}) + "\n")
    (workdir / "config.json").write_text("{}\n")
    return dict(net=net, optimizer=optimizer, state=state, selfplay=selfplay, workdir=str(workdir))


def _restore(directory, full):
    with checkpoints.Checkpointer(directory) as ckpt:
        return ckpt.restore_latest(training.abstract_train_state(full["net"], full["optimizer"]))


def _stored(step_dir):
    """The paths of the arrays a checkpoint stores (from orbax's metadata)."""
    with open(os.path.join(step_dir, "state", "_METADATA")) as f:
        return set(json.load(f)["tree_metadata"])


def _equal(a, b):
    for x, y in zip(jax.tree_util.tree_leaves(a), jax.tree_util.tree_leaves(b), strict=True):
        np.testing.assert_array_equal(np.asarray(x), np.asarray(y))


def test_a_full_checkpoint_still_restores_with_its_optimizer_state(full):
    payload = _restore(full["workdir"], full)
    assert payload.optimizer_state and payload.weights_dtype == "float32"
    _equal(payload.state.opt_state, full["state"].opt_state)


def test_a_float32_compact_leg_keeps_everything_but_the_optimizer_state_and_is_smaller(full, tmp_path):
    generation, step_dir = compact_leg.write_leg(full["workdir"], str(tmp_path / "leg"))
    assert generation == 4 and step_dir == str(tmp_path / "leg" / "checkpoints" / "4")
    assert sorted(os.listdir(tmp_path / "leg")) == ["checkpoints", "config.json", "metrics.jsonl"]
    # The live, averaged and promoted weights are stored; Adam's moments are not.
    stored, before = _stored(step_dir), _stored(os.path.join(full["workdir"], "checkpoints", "4"))
    assert stored == {p for p in before if "opt_state" not in p} and len(stored) < len(before)
    payload = _restore(str(tmp_path / "leg"), full)
    assert not payload.optimizer_state and payload.state.opt_state is None
    state = full["state"]
    _equal(
        [payload.state.step, payload.state.params, payload.state.batch_stats],
        [state.step, state.params, state.batch_stats],
    )
    _equal(payload.ema, state.ema)
    _equal(payload.selfplay_variables, full["selfplay"])
    _equal(jax.random.key_data(payload.rng_key), jax.random.key_data(jax.random.key(9)))
    assert payload.extra == {"metrics": {"x": 1}} and payload.spec == SPEC
    # The resume's fresh optimizer state: optax's init, the step kept.
    restarted = training.restart_optimizer(payload.state, full["optimizer"])
    _equal(restarted.opt_state, full["optimizer"].init(state.params))
    assert int(restarted.step) == 77
    # What GTP and the arena read: the promoted net.
    _equal(checkpoints.load_network(str(tmp_path / "leg")).variables, full["selfplay"])


def test_a_bfloat16_compact_leg_restores_its_rounded_weights_as_float32(full, tmp_path):
    _, step_dir = compact_leg.write_leg(full["workdir"], str(tmp_path / "leg"), weights_dtype="bfloat16")
    _, f32_dir = compact_leg.write_leg(full["workdir"], str(tmp_path / "f32"))
    assert _stored(step_dir) == _stored(f32_dir)
    payload = _restore(str(tmp_path / "leg"), full)
    assert payload.weights_dtype == "bfloat16"

    def rounded(tree):
        return jax.tree_util.tree_map(lambda x: np.asarray(x).astype(ml_dtypes.bfloat16).astype(np.float32), tree)

    for got, want in ((payload.state.params, full["state"].params), (payload.ema, full["state"].ema)):
        assert {x.dtype for x in jax.tree_util.tree_leaves(got)} == {np.dtype(np.float32)}
        _equal(got, rounded(want))
    assert int(payload.state.step) == 77


def test_bad_input_is_a_clear_error_naming_the_file(full, tmp_path, capsys):
    with pytest.raises(FileNotFoundError, match="nowhere"):
        compact_leg.write_leg(str(tmp_path / "nowhere"), str(tmp_path / "leg"))
    assert compact_leg_cli.main([str(tmp_path / "nowhere"), str(tmp_path / "leg")]) == 1
    assert "nowhere" in capsys.readouterr().err
    with pytest.raises(ValueError, match="weights_dtype"):
        checkpoints.write_compact(full["workdir"], str(tmp_path / "leg"), weights_dtype="float16")
    # A damaged copy: its arrays truncated.
    broken = tmp_path / "broken"
    shutil.copytree(full["workdir"], broken)
    for path in glob.glob(str(broken / "checkpoints" / "4" / "state" / "**" / "d" / "*"), recursive=True):
        with open(path, "r+b") as f:
            f.truncate(8)
    with pytest.raises(checkpoints.CheckpointError, match=str(broken / "checkpoints" / "4")):
        compact_leg.write_leg(str(broken), str(tmp_path / "leg2"))
    # A leg folder in use is never overwritten.
    compact_leg.write_leg(full["workdir"], str(tmp_path / "leg3"))
    with pytest.raises(FileExistsError, match="leg3"):
        compact_leg.write_leg(full["workdir"], str(tmp_path / "leg3"))


def test_a_run_resumes_from_a_compact_leg_with_a_fresh_optimizer(tmp_path):
    config = config_lib.load_config(TINY)
    with config.unlocked():
        config.generations = 1
    pipeline.train_and_evaluate(config, str(tmp_path / "run"), progress=False, log=lambda *_: None)
    compact_leg.write_leg(str(tmp_path / "run"), str(tmp_path / "leg"))
    with config.unlocked():
        config.generations = 2
    log = []
    summary = pipeline.train_and_evaluate(config, str(tmp_path / "leg"), progress=False, log=log.append)
    text = "\n".join(str(line) for line in log)
    assert summary["generation"] == 1
    assert "compact leg (weights stored in float32): the optimizer's state (adam's moments) restarted" in text
    # The next checkpoint is full again.
    with checkpoints.Checkpointer(tmp_path / "leg") as ckpt:
        assert ckpt.read_metadata()["optimizer_state"] is True and ckpt.latest_generation() == 1


def test_gpu_leg_packs_a_compact_leg_that_unpacks_and_restores(full, tmp_path):
    spec = importlib.util.spec_from_file_location("_gpu_leg", os.path.join(REPO, "benchmarks", "gpu_leg.py"))
    leg = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(leg)
    work, out = tmp_path / "work", tmp_path / "out"
    shutil.copytree(full["workdir"], work)
    os.makedirs(out)
    args = leg.parse_args(["run", "go7_gpu", "--out", str(out), "--workdir", str(work), "--leg_form", "compact"])
    info = leg.pack(args, resumed_after=None, rc=0, wall=1.0, log=lambda message: None)
    assert info["leg_form"] == "compact" and info["generation"] == 4
    assert leg.main(["unpack", "go7_gpu", "--from", str(out), "--leg_dir", str(tmp_path / "committed")]) == 0
    payload = _restore(str(tmp_path / "committed"), full)
    assert not payload.optimizer_state and payload.generation == 4
