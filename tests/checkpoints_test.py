"""Tests for saijax.core.checkpoints: round trip, atomicity under SIGKILL, and
clear errors for corrupt or incompatible checkpoints."""

import gc
import glob
import json
import logging
import os
import signal
import subprocess
import sys
import textwrap
import time

import jax
import numpy as np
import pytest
from conftest import as_format_1, training_config

from saijax.core import checkpoints, networks
from saijax.learn import training

N = 5

# After a failed restore, orbax's reader leaves a callback for its closed
# event loop; Python reports it (harmlessly) when it is collected.
pytestmark = pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")


@pytest.fixture(scope="module", autouse=True)
def _collect_orbax_leftovers():
    yield
    gc.collect()  # so the report above lands in this module, not the next


@pytest.fixture(scope="module")
def setup():
    net = networks.make_network(N, blocks=1, filters=8)
    optimizer = training.make_optimizer(training_config(batch_size=8, optimizer="sgd", learning_rate=0.01))
    state = training.create_train_state(net, optimizer, jax.random.key(0), step=123)
    # Make every leaf distinctive, so a mix-up would show.
    state = jax.tree_util.tree_map(lambda x: x + np.asarray(0.5, x.dtype) if x.dtype.kind == "f" else x, state)
    return net, optimizer, state


SPEC = networks.NetworkSpec(board_size=N, blocks=1, filters=8)


def _save(ckpt, generation, state, key=None, **kw):
    kw = dict(dict(network=SPEC, replay_dir="/tmp/run/replay"), **kw)
    return ckpt.save(generation, state=state, rng_key=jax.random.key(generation) if key is None else key, **kw)


def _step_dir(tmp_path, generation):
    return os.path.join(str(tmp_path), "checkpoints", str(generation))


def test_round_trip(tmp_path, setup):
    net, optimizer, state = setup
    with checkpoints.Checkpointer(tmp_path, max_to_keep=3) as ckpt:
        assert ckpt.latest_generation() is None
        assert ckpt.restore_latest(training.abstract_train_state(net, optimizer)) is None
        for g in range(5):
            _save(ckpt, g, state, extra={"loss": 1.5 + g})
        assert ckpt.all_generations() == [2, 3, 4]
        assert ckpt.latest_generation() == 4

    # A new process (here: a new manager) resumes from the same directory.
    with checkpoints.Checkpointer(tmp_path) as ckpt:
        payload = ckpt.restore_latest(
            lambda meta: training.abstract_train_state(
                networks.make_network(meta["board_size"], blocks=meta["blocks"], filters=meta["filters"]), optimizer
            ),
            expected_shape=(1, 8),
        )
    assert payload.generation == 4
    assert (payload.spec.blocks, payload.spec.filters) == (1, 8)
    assert payload.spec.value_head == "sai" and payload.spec.board_size == N
    assert payload.spec == SPEC
    assert payload.replay_dir == "/tmp/run/replay"
    assert payload.extra == {"loss": 5.5}
    assert payload.directory == _step_dir(tmp_path, 4)
    np.testing.assert_array_equal(jax.random.key_data(payload.rng_key), jax.random.key_data(jax.random.key(4)))
    assert jax.tree_util.tree_structure(payload.state) == jax.tree_util.tree_structure(state)
    for a, b in zip(jax.tree_util.tree_leaves(payload.state), jax.tree_util.tree_leaves(state)):
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b))
    assert int(payload.state.step) == 123


def test_legacy_uint32_key_round_trip(tmp_path, setup):
    net, optimizer, state = setup
    with checkpoints.Checkpointer(tmp_path) as ckpt:
        _save(ckpt, 0, state, key=jax.random.PRNGKey(9))
        payload = ckpt.restore_latest(training.abstract_train_state(net, optimizer))
    np.testing.assert_array_equal(payload.rng_key, jax.random.PRNGKey(9))


def test_orbax_info_logging_is_quiet(tmp_path, setup, caplog):
    _, _, state = setup
    with caplog.at_level(logging.DEBUG):
        with checkpoints.Checkpointer(tmp_path) as ckpt:
            _save(ckpt, 0, state)
    noisy = [r for r in caplog.records if "/orbax/" in r.pathname and r.levelno < logging.WARNING]
    assert not noisy, noisy[:3]


def test_resume_does_not_warn_about_items_it_skips(tmp_path, setup, caplog):
    """A resume restores the metadata alone, then the state alone: orbax's warning
    about each skipped item is dropped; its other warnings are kept."""
    net, optimizer, state = setup
    with checkpoints.Checkpointer(tmp_path) as ckpt:
        _save(ckpt, 0, state)
    with caplog.at_level(logging.WARNING):
        with checkpoints.Checkpointer(tmp_path) as ckpt:
            assert ckpt.read_metadata()["blocks"] == 1
            assert ckpt.restore_latest(training.abstract_train_state(net, optimizer)).generation == 0
    skipped = [r for r in caplog.records if "could not be restored" in r.getMessage()]
    assert not skipped, skipped[:2]

    def orbax_record(level, msg):
        return logging.LogRecord("absl", level, "/x/orbax/checkpoint/handler.py", 1, msg, None, None)

    quiet = checkpoints._QuietOrbax()
    assert quiet.filter(orbax_record(logging.WARNING, "disk is full"))
    assert not quiet.filter(orbax_record(logging.WARNING, f'Item "state" {checkpoints._SKIPPED_ITEM_WARNING}.'))
    assert not quiet.filter(orbax_record(logging.INFO, "saved"))
    assert quiet.filter(logging.LogRecord("absl", logging.INFO, "/x/saijax/train.py", 1, "ours", None, None))


def test_truncated_array_file_names_checkpoint(tmp_path, setup):
    net, optimizer, state = setup
    with checkpoints.Checkpointer(tmp_path) as ckpt:
        _save(ckpt, 0, state)
        _save(ckpt, 1, state)
        files = [
            f
            for f in glob.glob(os.path.join(_step_dir(tmp_path, 1), "state", "**", "d", "*"), recursive=True)
            if os.path.isfile(f)
        ]
        assert files
        for f in files:
            with open(f, "r+b") as handle:
                handle.truncate(os.path.getsize(f) // 2)
        with pytest.raises(checkpoints.CheckpointError) as info:
            ckpt.restore_latest(training.abstract_train_state(net, optimizer))
    message = str(info.value)
    assert _step_dir(tmp_path, 1) in message
    assert "corrupt" in message and "generation 0" in message
    # Nothing was deleted: the earlier checkpoint is still there.
    assert os.path.isdir(_step_dir(tmp_path, 0))


def test_corrupt_metadata_names_checkpoint(tmp_path, setup):
    net, optimizer, state = setup
    with checkpoints.Checkpointer(tmp_path) as ckpt:
        _save(ckpt, 3, state)
    meta = glob.glob(os.path.join(_step_dir(tmp_path, 3), "meta", "*"))
    for f in meta:
        if os.path.isfile(f):
            with open(f, "w") as handle:
                handle.write('{"generation": 3, trunc')
    with checkpoints.Checkpointer(tmp_path) as ckpt:
        with pytest.raises(checkpoints.CheckpointError) as info:
            ckpt.restore_latest(training.abstract_train_state(net, optimizer))
    assert _step_dir(tmp_path, 3) in str(info.value)


def test_incompatible_shape_is_a_clear_error(tmp_path, setup):
    net, optimizer, state = setup
    bigger = networks.make_network(N, blocks=1, filters=16)
    deeper = networks.make_network(N, blocks=2, filters=8)
    with checkpoints.Checkpointer(tmp_path) as ckpt:
        _save(ckpt, 0, state)
        with pytest.raises(checkpoints.CheckpointError) as info:
            ckpt.restore_latest(training.abstract_train_state(bigger, optimizer))
        message = str(info.value)
        assert _step_dir(tmp_path, 0) in message
        assert "stored (3, 3, 8, 8), expected (3, 3, 16, 16)" in message
        with pytest.raises(checkpoints.CheckpointError, match="block_1"):
            ckpt.restore_latest(training.abstract_train_state(deeper, optimizer))
        with pytest.raises(checkpoints.CheckpointError, match="holds a 1x8 network.*expects 2x8"):
            ckpt.restore_latest(training.abstract_train_state(net, optimizer), expected_shape=(2, 8))


def test_leftover_temporary_directory_is_ignored(tmp_path, setup):
    """What a kill in the middle of a save leaves behind."""
    net, optimizer, state = setup
    with checkpoints.Checkpointer(tmp_path) as ckpt:
        _save(ckpt, 5, state)
    tmp = os.path.join(str(tmp_path), "checkpoints", "6.orbax-checkpoint-tmp-1234567")
    os.makedirs(os.path.join(tmp, "state"))
    with open(os.path.join(tmp, "state", "_METADATA"), "w") as f:
        f.write('{"half')
    with checkpoints.Checkpointer(tmp_path) as ckpt:
        assert ckpt.latest_generation() == 5
        payload = ckpt.restore_latest(training.abstract_train_state(net, optimizer))
    assert payload.generation == 5
    assert not os.path.exists(tmp)


_SAVER = textwrap.dedent("""
    import sys
    import jax, jax.numpy as jnp
    from saijax.core import checkpoints, networks
    with checkpoints.Checkpointer({workdir!r}, max_to_keep=2) as ckpt:
        for g in range(10 ** 6):
            state = {{'w': jnp.full((64, 1024), float(g)),
                      'step': jnp.asarray(g)}}
            ckpt.save(g, state=state, rng_key=jax.random.key(g),
                      network=networks.NetworkSpec(5, 1, 8),
                      replay_dir='/tmp/r')
            print(g, flush=True)
""")


@pytest.mark.parametrize("delay", [0.0, 0.05, 0.137, 0.29])
def test_sigkill_during_saves_leaves_a_readable_checkpoint(tmp_path, delay):
    process = subprocess.Popen(
        [sys.executable, "-c", _SAVER.format(workdir=str(tmp_path))],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=dict(os.environ, JAX_PLATFORMS="cpu"),
    )
    try:
        for _ in range(3):  # wait until a few saves are done
            line = process.stdout.readline()
            assert line, process.stderr.read()[-2000:]
        time.sleep(delay)
        os.kill(process.pid, signal.SIGKILL)
    finally:
        process.kill()
        process.communicate()
    template = {"w": jax.ShapeDtypeStruct((64, 1024), np.float32), "step": jax.ShapeDtypeStruct((), np.int32)}
    with checkpoints.Checkpointer(tmp_path) as ckpt:
        generation = ckpt.latest_generation()
        assert generation is not None and generation >= 2
        payload = ckpt.restore_latest(template)
    assert payload.generation == generation
    np.testing.assert_array_equal(payload.state["w"], float(generation))
    assert int(payload.state["step"]) == generation
    meta = os.path.join(_step_dir(tmp_path, generation), "meta", "metadata")
    with open(meta) as f:
        assert json.load(f)["generation"] == generation


# ---------------------------------------------------------------------------
# The network spec in the metadata, and the read-only loader.


def _metadata_file(workdir, generation):
    return os.path.join(_step_dir(workdir, generation), "meta", "metadata")


def _assert_same_variables(state, variables):
    assert set(variables) == {"params", "batch_stats"}
    want = {"params": state.params, "batch_stats": state.batch_stats}
    assert jax.tree_util.tree_structure(variables) == jax.tree_util.tree_structure(want)
    for a, b in zip(jax.tree_util.tree_leaves(want), jax.tree_util.tree_leaves(variables)):
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b))


def test_metadata_round_trips_the_spec(tmp_path, setup):
    net, optimizer, state = setup
    spec = networks.NetworkSpec(board_size=N, blocks=1, filters=8, beta_scale=0.5)
    with checkpoints.Checkpointer(tmp_path) as ckpt:
        _save(ckpt, 2, state, network=spec, extra={"note": "x"})
        meta = ckpt.read_metadata()
        payload = ckpt.restore_latest(training.abstract_train_state(spec.build(), optimizer))
        with pytest.raises(TypeError, match="NetworkSpec"):
            ckpt.save(3, state=state, rng_key=jax.random.key(3), network=net, replay_dir="/tmp/r")
    with open(_metadata_file(tmp_path, 2)) as f:
        stored = json.load(f)
    assert stored["format_version"] == 2
    assert {k: stored[k] for k in spec.to_dict()} == {
        "board_size": N,
        "blocks": 1,
        "filters": 8,
        "value_head": "sai",
        "beta_scale": 0.5,
    }
    assert networks.NetworkSpec.from_dict(meta) == spec
    assert payload.spec == spec

    for path in [tmp_path, tmp_path / "checkpoints", tmp_path / "checkpoints" / "2"]:
        loaded = checkpoints.load_network(path)
        assert loaded.spec == spec and loaded.spec.build().effective_beta_scale == 0.5
        assert loaded.generation == 2 and loaded.directory == _step_dir(tmp_path, 2)
        assert loaded.metadata["extra"] == {"note": "x"}
        _assert_same_variables(state, loaded.variables)


def test_old_format_without_beta_scale_still_loads(tmp_path, setup):
    """Format 1 (before the spec) did not record beta_scale: it reads as the
    default 10/N²."""
    _, optimizer, state = setup
    with checkpoints.Checkpointer(tmp_path) as ckpt:
        _save(ckpt, 0, state)
    as_format_1(tmp_path, 0)

    with checkpoints.Checkpointer(tmp_path) as ckpt:
        assert ckpt.read_metadata(0)["beta_scale"] is None
        payload = ckpt.restore(0, training.abstract_train_state(SPEC.build(), optimizer), expected_shape=(1, 8))
    assert payload.spec == SPEC and payload.spec.beta_scale == 10 / N**2
    loaded = checkpoints.load_network(tmp_path)
    assert loaded.spec == SPEC
    _assert_same_variables(state, loaded.variables)


@pytest.mark.parametrize(
    "change, match",
    [
        (dict(format_version=3), "metadata format 3"),
        (dict(beta_scale=-1.0), "no valid network.*beta_scale"),
        (dict(blocks=None), "incomplete metadata"),
    ],
)
def test_bad_metadata_names_the_checkpoint(tmp_path, setup, change, match):
    _, _, state = setup
    with checkpoints.Checkpointer(tmp_path) as ckpt:
        _save(ckpt, 1, state)
    path = _metadata_file(tmp_path, 1)
    with open(path) as f:
        meta = json.load(f)
    meta.update(change)
    if change.get("blocks", 0) is None:
        del meta["blocks"]
    with open(path, "w") as f:
        json.dump(meta, f)
    with pytest.raises(checkpoints.CheckpointError, match=match) as info:
        checkpoints.load_network(tmp_path)
    assert _step_dir(tmp_path, 1) in str(info.value)
    with checkpoints.Checkpointer(tmp_path) as ckpt:
        with pytest.raises(checkpoints.CheckpointError, match=match):
            ckpt.read_metadata(1)


def test_load_network_is_read_only(tmp_path, setup):
    """A live run's save in progress (a temporary directory) survives."""
    _, _, state = setup
    with checkpoints.Checkpointer(tmp_path) as ckpt:
        _save(ckpt, 0, state)
    tmp = os.path.join(str(tmp_path), "checkpoints", "1.orbax-checkpoint-tmp-1234567")
    os.makedirs(os.path.join(tmp, "state"))
    assert checkpoints.load_network(tmp_path).generation == 0
    assert os.path.isdir(tmp)
    with pytest.raises(FileNotFoundError, match="5 does not exist"):
        checkpoints.load_network(tmp_path / "checkpoints" / "5")
    (tmp_path / "checkpoints" / "5").mkdir()
    with pytest.raises(checkpoints.CheckpointError, match=str(tmp_path / "checkpoints" / "5")):
        checkpoints.load_network(tmp_path / "checkpoints" / "5")
    with pytest.raises(FileNotFoundError, match="does not exist"):
        checkpoints.load_network(tmp_path / "missing")
