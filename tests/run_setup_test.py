"""saijax.learn.run_setup: the config read once into typed settings gives what the
config's own functions give, generation by generation, for every shipped config."""

import glob
import os

import pytest
from conftest import REPO, TINY

from saijax.learn import config as config_lib
from saijax.learn import legs, pipeline, run_metrics, run_selfplay, run_setup, training

CONFIGS = sorted(glob.glob(os.path.join(REPO, "configs", "*.py")))


@pytest.mark.parametrize("path", CONFIGS, ids=os.path.basename)
def test_the_settings_are_the_configs_generation_by_generation(path):
    config = config_lib.load_config(path)
    settings = run_setup.RunSettings.from_config(config)
    last = int(config.generations)
    for gen in sorted({0, 1, 2, last // 3, last // 2, last - 1, last, last + 5}):
        assert settings.network_spec(gen) == training.network_spec(config, gen), gen
        assert settings.schedules.simulations(gen) == config_lib.num_simulations(config, gen), gen
        assert settings.schedules.window_size(gen) == config_lib.window_size(config, gen), gen
        assert settings.search_config(gen) == pipeline.search_config(config, gen), gen
    assert settings.selfplay.config == pipeline.selfplay_config(config)
    assert settings.selfplay.agent == pipeline.selfplay_agent(config)
    assert settings.selfplay.ownership == config_lib.records_ownership(config)
    assert settings.selfplay.opponent_policy == config_lib.records_opponent_policy(config)
    assert settings.training.steps_per_call == config_lib.steps_per_call(config)
    assert settings.rules.max_moves == config_lib.effective_max_moves(config)


def test_training_steps_follow_the_new_rows_only_with_a_ratio():
    config = config_lib.load_config(TINY)  # 4 steps of 16
    assert run_setup.TrainSettings.from_config(config).steps(1000) == 4
    with config.unlocked():
        config.training.samples_per_new_row = 2.0
    train = run_setup.TrainSettings.from_config(config)
    assert train.by_generation and train.steps(1000) == 125 and train.steps(1) == 1


def test_the_generations_keys_are_folded_from_the_runs():
    import jax
    import numpy as np

    keys = run_setup.RunKeys.from_seed(3)
    gen = keys.generation(7)
    base = jax.random.PRNGKey(3)
    key = jax.random.fold_in(base, 7)
    pairs = [
        (keys.init, jax.random.fold_in(base, 10**6)),
        (keys.checkpoint(7), jax.random.fold_in(base, 8)),
        (gen.key, key),
        (gen.growth, jax.random.fold_in(key, 1)),
        (gen.slots, jax.random.fold_in(key, 2)),
        (gen.train, jax.random.fold_in(key, 3)),
        (gen.chunk(4), jax.random.fold_in(key, 104)),
    ]
    for got, want in pairs:
        np.testing.assert_array_equal(np.asarray(got), np.asarray(want))


def test_pipeline_re_exports_its_public_names_from_their_modules():
    assert pipeline.play_chunks is run_selfplay.play_chunks and pipeline.ChunkLoop is run_selfplay.ChunkLoop
    assert pipeline.MetricsWriter is run_metrics.MetricsWriter
    assert pipeline.collapse_warning is run_metrics.collapse_warning
    assert pipeline.leg_files is legs.leg_files and pipeline.use_compilation_cache is legs.use_compilation_cache
    assert pipeline.search_config is run_setup.search_config
    for name in pipeline.__all__:
        assert hasattr(pipeline, name), name


def test_the_visits_schedule_is_read_in_one_place(monkeypatch):
    """The settings read ``schedules.visits`` (or the constant
    ``search.num_simulations``) once, through ``config_lib.visits_schedule``,
    and generation 0's search is that schedule's first entry."""
    config = config_lib.load_config(TINY)
    with config.unlocked():
        config.search.num_simulations = 3  # not the schedule's: must not be read
        config.schedules.visits = ((0, 12), (4, 20))
    reads = []
    visits_schedule = config_lib.visits_schedule
    monkeypatch.setattr(config_lib, "visits_schedule", lambda c: reads.append(1) or visits_schedule(c))
    settings = run_setup.RunSettings.from_config(config)
    assert len(reads) == 1
    assert settings.schedules.visits == ((0, 12), (4, 20))
    assert settings.search.num_simulations == 12
    assert [settings.search_config(g).num_simulations for g in (0, 3, 4, 9)] == [12, 12, 20, 20]
    with config.unlocked():
        config.schedules.visits = ()
    assert run_setup.RunSettings.from_config(config).schedules.visits == ((0, 3),)  # the constant
    assert config_lib.num_simulations(config, 7) == 3


class _Stop(Exception):
    pass


def _count_validation(monkeypatch, order):
    """Records config validation and connecting in ``order``; the run stops at its setup."""
    validate, sharding = config_lib.validate, config_lib.validate_sharding
    monkeypatch.setattr(config_lib, "validate", lambda c, **kw: order.append(("validate", kw)) or validate(c, **kw))
    monkeypatch.setattr(
        config_lib, "validate_sharding", lambda c, *a: order.append(("validate_sharding", a)) or sharding(c, *a)
    )

    def stop(config):
        order.append(("setup", {}))
        raise _Stop

    monkeypatch.setattr(run_setup, "setup", stop)


@pytest.mark.parametrize("multihost", [False, True])
def test_the_config_is_validated_once_before_the_run_is_set_up(monkeypatch, tmp_path, multihost):
    config = config_lib.load_config(TINY)
    with config.unlocked():
        config.multihost = multihost
        config.compilation_cache = False
    order = []
    _count_validation(monkeypatch, order)
    with pytest.raises(_Stop):
        pipeline.train_and_evaluate(
            config, str(tmp_path), progress=False, log=lambda *_: None, connect=lambda: order.append(("connect", {}))
        )
    steps = [step for step, _ in order]
    if multihost:
        # Every field before connecting, the batches against all devices after.
        assert steps == ["validate", "connect", "validate_sharding", "setup"]
        assert order[0][1] == {"device_count": 1}
    else:
        assert steps == ["validate", "setup"]


def test_a_bad_field_of_a_multihost_run_fails_before_it_connects(tmp_path):
    config = config_lib.load_config(TINY)
    with config.unlocked():
        config.multihost = True
        config.training.batch_size = 0
    connected = []
    with pytest.raises(ValueError, match=r"training\.batch_size"):
        pipeline.train_and_evaluate(config, str(tmp_path), progress=False, connect=lambda: connected.append(1))
    assert not connected and not os.listdir(tmp_path)


def test_the_batches_are_checked_against_every_processs_devices_once_connected():
    """Before connecting a multihost run checks every field but the batches'
    divisibility (``device_count=1``); ``validate_sharding`` checks that with
    the devices of all processes."""
    config = config_lib.load_config(TINY)
    batch = int(config.selfplay.batch_size)
    assert int(config.training.batch_size) % (batch + 1)  # neither batch shards over batch + 1 devices
    config_lib.validate(config, device_count=1)
    config_lib.validate_sharding(config, batch)
    message = rf"selfplay\.batch_size \({batch}\) must be divisible by the device count \({batch + 1}\)"
    for check in (config_lib.validate_sharding, lambda c, n: config_lib.validate(c, device_count=n)):
        with pytest.raises(ValueError, match=message):
            check(config, batch + 1)
