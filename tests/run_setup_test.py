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
