"""Tests for saijax.learn.config and configs/*.py: every config validates, and each
bad field gives one error that names it."""

import glob
import json
import os
import re

import ml_collections
import pytest

from saijax.learn import config as config_lib
from saijax.learn import training

_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_CONFIGS = sorted(glob.glob(os.path.join(_ROOT, "configs", "*.py")))
_NAMES = [os.path.basename(p) for p in _CONFIGS]


def _default():
    return config_lib.load_config(os.path.join(_ROOT, "configs", "default.py"))


def test_all_expected_configs_exist():
    assert {"default.py", "go7.py", "go5.py", "tiny.py", "lzs.py", "alphazero.py"} <= set(_NAMES)


@pytest.mark.parametrize("path", _CONFIGS, ids=_NAMES)
def test_config_loads_and_validates(path):
    config = config_lib.load_config(path)
    # Batch sizes must suit the usual device counts, not just this machine.
    for devices in (1, 8):
        config_lib.validate(config, device_count=devices)
    with open(path) as f:
        source = f.read()
    name = os.path.basename(path)
    command = f"python -m saijax.train --config=configs/{name} --workdir="
    docstring = re.match(r'\s*"""(.*?)"""', source, re.S)
    assert docstring and docstring.group(1).startswith(command), (
        f"{name} docstring must open with the command that runs it"
    )


def test_default_documents_every_field():
    with open(os.path.join(_ROOT, "configs", "default.py")) as f:
        lines = f.read().splitlines()
    config = _default()
    for section, value in config.items():
        names = value.keys() if hasattr(value, "keys") else [None]
        for name in names:
            field = f"config.{section}" + (f".{name}" if name else "")
            index = next(i for i, line in enumerate(lines) if line.strip().startswith(field + " ="))
            line = lines[index]
            previous = lines[index - 1].strip()
            assert "#" in line or previous.startswith("#"), f"{field} has no comment in configs/default.py"


def test_variant_specifics():
    load = lambda name: config_lib.load_config(  # noqa: E731
        os.path.join(_ROOT, "configs", name)
    )
    lzs = load("lzs.py")
    assert lzs.network.value_head == "score"
    assert lzs.search.value_mode == "score"
    assert lzs.search.algorithm == "puct" and lzs.search.c_puct == 1.5
    assert lzs.selfplay.resign_threshold < 0
    assert lzs.selfplay.komi_mode == "fixed" and lzs.selfplay.lzs_pass_rule
    assert lzs.training.score_weight == 20.0
    az = load("alphazero.py")
    assert az.network.value_head == "winrate"
    assert az.selfplay.komi_mode == "fixed" and az.selfplay.branch_prob == 0
    tiny = load("tiny.py")
    assert tiny.network.blocks * tiny.network.filters <= 16
    assert tiny.generations <= 2 and tiny.selfplay.batch_size <= 8


def _shipped_leg_config() -> dict:
    """The sharp value's round 16 as run: the shipped compact leg's config.json (experiments/legs/sharp_noise4/)."""
    with open(os.path.join(_ROOT, "experiments", "legs", "sharp_noise4", "leg", "config.json")) as f:
        return json.load(f)


def test_the_sharp_values_rounds_read_from_the_shipped_leg():
    """Round 16's config (the shipped leg's config.json) is rounds 3–8's recipe (go7.py with SAI's opening from
    go7-S1, 256 visits, every search full, 128 games a generation, 32 samples per new row) with round 8's PUCT
    search and round 16's one flag, root noise on the opening's 4 random moves only; it validates as a config.
    The rounds' configs, docstrings and code, are in experiments/sharp_value/journal.md."""
    shipped = _shipped_leg_config()
    config_lib.validate(ml_collections.ConfigDict(shipped))
    go7 = config_lib.load_config(os.path.join(_ROOT, "configs", "go7.py"))
    assert shipped["init_checkpoint"] == "zoo:go7-S1" and shipped["network"]["filters"] == go7.network.filters
    assert shipped["selfplay"]["opening_policy"] == "improved" and shipped["selfplay"]["random_moves"] == 4
    assert shipped["selfplay"]["random_full_search_only"] and shipped["selfplay"]["random_takeback"]
    # rounds 3-8's recipe (the old configs/go7_sharp.py)
    assert shipped["schedules"]["visits"] == [[0, 256]] and shipped["selfplay"]["full_search_prob"] == 1.0
    assert shipped["selfplay"]["fast_simulations"] == 0 and shipped["selfplay"]["games_per_generation"] == 128
    assert shipped["training"]["samples_per_new_row"] == 32.0
    # round 8: SAI's search in self-play; round 16: its root noise on the opening's 4 random moves only
    assert shipped["search"]["algorithm"] == "puct" and shipped["search"]["c_puct"] == 0.8
    assert shipped["search"]["dirichlet_fraction"] == 0.25 and shipped["search"]["noisy_root_fpu_reduction"] == 0.0
    assert shipped["selfplay"]["noise_moves"] == 4


def test_helpers():
    config = _default()
    assert config_lib.effective_max_moves(config) == 162
    assert config_lib.dirichlet_alpha(config) == pytest.approx(0.03 * 361 / 81)
    assert training.network_spec(config, 0).beta_scale == pytest.approx(10 / 81)
    config.max_moves = 100
    config.search.dirichlet_alpha = 0.3
    assert config_lib.effective_max_moves(config) == 100
    assert config_lib.dirichlet_alpha(config) == 0.3

    schedule = [[0, 16], [10, 32], [20, 64]]
    assert config_lib.schedule_value(schedule, 0) == 16
    assert config_lib.schedule_value(schedule, 9) == 16
    assert config_lib.schedule_value(schedule, 10) == 32
    assert config_lib.schedule_value(schedule, 1000) == 64
    assert config_lib.schedule_value([[0, 2, 32], [5, 4, 64]], 7) == (4, 64)
    with pytest.raises(ValueError):
        config_lib.schedule_value([], 3)

    config.schedules.network = []
    config.network.blocks, config.network.filters = 3, 48
    assert config_lib.network_shape(config, 500) == (3, 48)
    config.schedules.visits = []
    config.search.num_simulations = 7
    assert config_lib.num_simulations(config, 500) == 7
    assert config_lib.window_size(config, 0) == 4


def _bad(mutate, *, device_count=1):
    config = _default()
    mutate(config)
    with pytest.raises(ValueError) as info:
        config_lib.validate(config, device_count=device_count)
    return str(info.value)


def _set(path, value):
    def mutate(config):
        *parents, last = path.split(".")
        node = config
        for p in parents:
            node = node[p]
        node[last] = value

    return mutate


def test_lambda_below_mu_names_both():
    def mutate(config):
        config.search.lambda_ = 0.2
        config.search.mu = 0.5

    message = _bad(mutate)
    assert "search.lambda_" in message and "search.mu" in message
    assert "0.2" in message and "0.5" in message


@pytest.mark.parametrize(
    "path,value,expected",
    [
        ("board_size", 25, ["board_size", "25"]),
        ("board_size", 1, ["board_size", "1"]),
        ("search.lambda_", 1.5, ["search.lambda_", "1.5"]),
        ("search.mu", -0.1, ["search.mu", "-0.1"]),
        ("search.threshold", 2.0, ["search.threshold", "2.0"]),
        ("search.num_simulations", 0, ["search.num_simulations", "0"]),
        ("search.gumbel_scale", -1.0, ["search.gumbel_scale", "-1.0"]),
        ("search.beta_terminal", 0.0, ["search.beta_terminal", "0.0"]),
        ("search.pass_answer_prior", 1.5, ["search.pass_answer_prior", "1.5"]),
        ("search.root_pass_rule", "never", ["search.root_pass_rule", "'never'"]),
        ("network.value_head", "tanh", ["network.value_head", "'tanh'"]),
        ("search.algorithm", "alphabeta", ["search.algorithm", "'alphabeta'"]),
        ("training.optimizer", "rmsprop", ["training.optimizer", "'rmsprop'"]),
        ("selfplay.komi_mode", "random", ["selfplay.komi_mode", "'random'"]),
        ("selfplay.games_per_generation", 0, ["selfplay.games_per_generation", "0"]),
        ("training.steps_per_generation", -5, ["training.steps_per_generation", "-5"]),
        ("training.steps_per_call", -1, ["training.steps_per_call", "-1"]),
        ("network.filters", 0, ["network.filters", "0"]),
        ("selfplay.komi", 7.25, ["selfplay.komi", "7.25"]),
        ("selfplay.komi", float("nan"), ["selfplay.komi", "multiple of 0.5", "nan"]),
        ("selfplay.komi", 20000.5, ["selfplay.komi", "20000.5"]),
        ("search.value_mode", "winrate", ["search.value_mode", "'winrate'"]),
        ("search.walk", "up", ["search.walk", "'up'", "parents"]),
        ("training.lr_schedule", "step", ["training.lr_schedule", "'step'"]),
        ("gating.threshold", 1.5, ["gating.threshold", "1.5"]),
        ("precision", "float16", ["precision", "'float16'"]),
        ("selfplay.noise_moves", -2, ["selfplay.noise_moves", "-2"]),
        ("selfplay.fast_simulations", -1, ["selfplay.fast_simulations", "-1"]),
        ("selfplay.opening_policy", "policy", ["selfplay.opening_policy", "'policy'"]),
        ("selfplay.full_search_prob", 0.0, ["selfplay.full_search_prob", "0.0"]),
        ("selfplay.full_search_prob", 1.25, ["selfplay.full_search_prob", "1.25"]),
        ("selfplay.fixed_komi_share", 1.5, ["selfplay.fixed_komi_share", "1.5"]),
        ("selfplay.fixed_komi_share", -0.1, ["selfplay.fixed_komi_share", "-0.1"]),
        ("selfplay.blunder_reference", "first", ["selfplay.blunder_reference", "'first'", "search_move"]),
        ("selfplay.blunders_allowed_mean", float("inf"), ["selfplay.blunders_allowed_mean", "inf"]),
    ],
)
def test_bad_field_is_named(path, value, expected):
    message = _bad(_set(path, value))
    for text in expected:
        assert text in message, message


def test_batch_not_divisible_by_devices():
    message = _bad(_set("training.batch_size", 100), device_count=8)
    assert "training.batch_size" in message and "100" in message
    assert "8" in message
    message = _bad(_set("selfplay.batch_size", 12), device_count=8)
    assert "selfplay.batch_size" in message and "12" in message


@pytest.mark.parametrize(
    "schedule",
    [
        [[0, 100], [50, 200], [20, 400]],  # unsorted
        [[0, 100], [50, 200], [50, 400]],  # repeated generation
        [[5, 100], [50, 200]],  # does not start at 0
        [[0, 100], [10]],  # malformed entry
        [[0, 0]],  # non-positive visits
    ],
)
def test_bad_visits_schedule_is_named(schedule):
    message = _bad(_set("schedules.visits", schedule))
    assert "schedules.visits" in message


def test_bad_network_and_window_schedules():
    message = _bad(_set("schedules.network", [[0, 4, 128], [10, 6]]))
    assert "schedules.network" in message
    message = _bad(_set("schedules.network", [[0, 4, 0]]))
    assert "schedules.network" in message
    message = _bad(_set("schedules.window", []))
    assert "schedules.window" in message
    message = _bad(_set("schedules.window", [[0, 4], [3, 8], [2, 12]]))
    assert "schedules.window" in message and "sorted" in message


def test_cross_field_rules():
    # A score head has no sigmoid, a winrate head has no score.
    def score_head_sigmoid(config):
        config.network.value_head = "score"
        config.selfplay.komi_mode = "fixed"
        config.selfplay.branch_prob = 0.0

    message = _bad(score_head_sigmoid)
    assert "search.value_mode" in message
    # Komi sampling and branching need the SAI head.
    message = _bad(_set("network.value_head", "winrate"))
    assert "selfplay.komi_mode" in message

    # A fixed-komi share needs sampled komi to share with.
    def fixed_share(config):
        config.selfplay.komi_mode = "fixed"
        config.selfplay.fixed_komi_share = 0.3

    message = _bad(fixed_share)
    assert "selfplay.fixed_komi_share" in message and "komi_mode" in message

    # Piecewise learning rates need one value per boundary.
    def piecewise(config):
        config.training.lr_schedule = "piecewise"
        config.training.lr_boundaries = [10, 20]
        config.training.lr_values = [0.01]

    message = _bad(piecewise)
    assert "training.lr_values" in message


def test_missing_field_is_named():
    def drop(config):
        del config.search["mu"]

    message = _bad(drop)
    assert "search.mu" in message
