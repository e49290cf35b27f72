"""Tests for weight averaging (`training.ema_decay`) and the training reuse
ratio (`train_samples_per_new_row`, `training.samples_per_new_row`).

The one-generation pipeline run with both switches on is
tests/ownership_test.py::test_pipeline_generation_with_the_learning_switches.
"""

import gc
import json
import os

import jax
import numpy as np
import pytest
from conftest import TINY, training_config
from training_test import _batch as training_batch

from saijax.core import checkpoints, networks
from saijax.learn import config as config_lib
from saijax.learn import pipeline, run_setup, training

N = 5
A = N * N + 1
DECAY = 0.9
SPEC = networks.NetworkSpec(board_size=N, blocks=1, filters=8)

pytestmark = pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")


@pytest.fixture(scope="module", autouse=True)
def _collect_orbax_leftovers():
    yield
    gc.collect()


def _batch(seed=0, batch=8):
    return training_batch("sai", seed, batch)


@pytest.fixture(scope="module")
def setup():
    """(net, optimizer, EMA train step, plain train step), compiled once."""
    net = SPEC.build()
    config = training_config(batch_size=8, ema_decay=DECAY)
    tx = training.make_optimizer(config)
    ema_step = training.make_train_step(net, N, config, optimizer=tx)
    plain_step = training.make_train_step(net, N, training_config(batch_size=8), optimizer=tx)
    return net, tx, ema_step, plain_step


def _host(tree):
    return jax.tree_util.tree_map(lambda x: np.array(x, copy=True), jax.device_get(tree))


def _assert_tree_equal(a, b):
    assert jax.tree_util.tree_structure(a) == jax.tree_util.tree_structure(b)
    for x, y in zip(jax.tree_util.tree_leaves(a), jax.tree_util.tree_leaves(b)):
        np.testing.assert_array_equal(np.asarray(x), np.asarray(y))


def _ema_state(setup, seed=0):
    net, tx, _, _ = setup
    return training.create_train_state(net, tx, jax.random.key(seed), ema=True)


def _save(ckpt, generation, state):
    return ckpt.save(generation, state=state, rng_key=jax.random.key(generation), network=SPEC, replay_dir="/tmp/r")


def test_one_step_updates_the_average_by_the_formula(setup):
    _, _, ema_step, _ = setup
    state = _ema_state(setup)
    assert isinstance(state, training.EmaTrainState)
    _assert_tree_equal(state.ema, state.variables)  # the average starts at the live weights
    old = _host(state.ema)
    state, _ = ema_step(state, _batch())
    live, ema = _host(state.variables), _host(state.ema)
    d = np.float32(DECAY)
    for o, n, e in zip(*(jax.tree_util.tree_leaves(t) for t in (old, live, ema))):
        np.testing.assert_allclose(e, d * o + np.float32(1 - DECAY) * n, rtol=1e-6, atol=1e-7)
    # Params and BN running stats both averaged; the live net moved on.
    assert set(ema) == {"params", "batch_stats"} and jax.tree_util.tree_leaves(ema["batch_stats"])
    leaves = zip(jax.tree_util.tree_leaves(old), jax.tree_util.tree_leaves(live))
    assert any(not np.array_equal(o, n) for o, n in leaves)
    _assert_tree_equal(state.playing_variables, state.ema)


def test_ema_step_needs_an_ema_state(setup):
    net, tx, ema_step, _ = setup
    with pytest.raises(TypeError, match="ema_decay"):
        ema_step(training.create_train_state(net, tx, jax.random.key(0)), _batch())


def test_default_state_and_checkpoint_are_unchanged(setup, tmp_path):
    net, tx, _, plain_step = setup
    state = training.create_train_state(net, tx, jax.random.key(0))
    assert type(state) is training.TrainState and state.live() is state
    assert [f.name for f in training.TrainState.__dataclass_fields__.values()] == [
        "step",
        "params",
        "batch_stats",
        "opt_state",
    ]
    assert jax.tree_util.tree_structure(state) == jax.tree_util.tree_structure(training.abstract_train_state(net, tx))
    state, _ = plain_step(state, _batch())
    assert type(state) is training.TrainState
    with checkpoints.Checkpointer(tmp_path) as ckpt:
        step_dir = _save(ckpt, 0, state)
    with open(os.path.join(step_dir, "meta", "metadata")) as f:
        assert "ema_net" not in json.load(f)
    with open(os.path.join(step_dir, "state", "_METADATA")) as f:
        assert "ema" not in f.read()


def test_round_trip_and_resume_continue_the_average(setup, tmp_path):
    net, tx, ema_step, _ = setup
    batches = [_batch(seed) for seed in range(3)]
    # Uninterrupted: three steps.
    straight = _ema_state(setup)
    for b in batches:
        straight, _ = ema_step(straight, b)
    # Two steps, a checkpoint, a "kill", a resume, the third step.
    state = _ema_state(setup)
    for b in batches[:2]:
        state, _ = ema_step(state, b)
    saved_ema, saved_live = _host(state.ema), _host(state.variables)
    with checkpoints.Checkpointer(tmp_path) as ckpt:
        _save(ckpt, 0, state)
    del state
    with checkpoints.Checkpointer(tmp_path) as ckpt:
        assert ckpt.read_metadata(0)["ema_net"] is True
        payload = ckpt.restore(0, training.abstract_train_state(net, tx))
    assert type(payload.state) is training.TrainState
    _assert_tree_equal(_host(payload.ema), saved_ema)
    _assert_tree_equal(_host(payload.state.variables), saved_live)
    resumed, _ = ema_step(training.start_ema(payload.state, payload.ema), batches[2])
    for a, b in zip(jax.tree_util.tree_leaves(_host(resumed)), jax.tree_util.tree_leaves(_host(straight))):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
    # The playing net of the checkpoint is the average.
    loaded = checkpoints.load_network(tmp_path)
    _assert_tree_equal(_host(loaded.variables), saved_ema)


def test_old_checkpoint_starts_the_average_and_decay_zero_drops_it(tmp_path):
    """Resuming a finished run (no generation left to play) only restores."""
    config = config_lib.load_config(TINY)
    config.generations = 1
    spec = training.network_spec(config, 0)
    net = spec.build()
    tx = training.make_optimizer(config.training)
    state = training.create_train_state(net, tx, jax.random.key(0))
    workdir = str(tmp_path / "run")
    with checkpoints.Checkpointer(workdir) as ckpt:  # a checkpoint from before EMA
        ckpt.save(0, state=state, rng_key=jax.random.key(1), network=spec, replay_dir=os.path.join(workdir, "replay"))
    config.training.ema_decay = 0.5
    log = []
    pipeline.train_and_evaluate(config, workdir, progress=False, log=log.append)
    assert any("no weight average: starting it from the live weights" in line for line in log)
    # An EMA checkpoint resumed with ema_decay 0: the average is dropped, said so.
    workdir = str(tmp_path / "ema_run")
    with checkpoints.Checkpointer(workdir) as ckpt:
        ckpt.save(
            0,
            state=training.start_ema(state),
            rng_key=jax.random.key(1),
            network=spec,
            replay_dir=os.path.join(workdir, "replay"),
        )
    config.training.ema_decay = 0.0
    log = []
    pipeline.train_and_evaluate(config, workdir, progress=False, log=log.append)
    assert any("ema_decay is 0 but the checkpoint has a weight average: dropping it" in line for line in log)


def test_config_validation_names_the_fields():
    config = config_lib.load_config(TINY)
    assert config.training.ema_decay == 0.0 and config.training.samples_per_new_row == 0.0
    for good in (0.0, 0.5, 0.999):
        config.training.ema_decay = good
        config_lib.validate(config, device_count=1)
    for bad in (1.0, 1.5, -0.1):
        config.training.ema_decay = bad
        with pytest.raises(ValueError, match=r"training\.ema_decay"):
            config_lib.validate(config, device_count=1)
    config.training.ema_decay = 0.0
    config.training.samples_per_new_row = 4.0
    config_lib.validate(config, device_count=1)
    config.training.samples_per_new_row = -1.0
    with pytest.raises(ValueError, match=r"training\.samples_per_new_row"):
        config_lib.validate(config, device_count=1)
    # Older configs without the fields still validate (both off).
    del config.training["ema_decay"], config.training["samples_per_new_row"]
    config_lib.validate(config, device_count=1)


def test_reuse_ratio_and_steps_from_new_rows():
    # configs/go7.py-like: 200 steps of 128 on 6,400 new rows trains each row 4 times.
    assert training.samples_per_new_row(200, 128, 6400) == 4.0
    assert training.samples_per_new_row(4, 16, 48) == pytest.approx(4 / 3)
    assert training.samples_per_new_row(4, 16, 0) is None
    config = config_lib.load_config(TINY)  # 4 steps of 16
    assert run_setup.TrainSettings.from_config(config).steps(1000) == 4  # off: steps_per_generation
    config.training.samples_per_new_row = 4.0
    assert run_setup.TrainSettings.from_config(config).steps(1000) == 250  # 4 · 1000 / 16
    assert run_setup.TrainSettings.from_config(config).steps(1002) == 250  # round(250.5): banker's rounding
    assert run_setup.TrainSettings.from_config(config).steps(3) == 1  # at least one step
