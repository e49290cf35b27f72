"""The sharp recipe from random weights (configs/go7_sharp.py, issue 63).

* The config is one flat file over ``default.py``: no chain of variants, no
  checkpoint to start from, the self-play rules the sharp-value experiment
  measured.
* PUCT self-play with ``noise_moves = random_moves``: every root of the
  random opening gets Dirichlet noise and no root after it does (a spy on
  the search records each move's noise scale and move number).
* The recipe runs from an empty workdir (slow), and each seed's shipped
  leg resumes (slow).
"""

import ast
import json
import os
import pathlib
import shutil

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from saijax.core import checkpoints, go, search
from saijax.learn import config as config_lib
from saijax.learn import pipeline, selfplay

REPO = pathlib.Path(__file__).resolve().parents[1]
RECIPE = REPO / "configs" / "go7_sharp.py"
LEGS = REPO / "experiments" / "legs"

RULES = go.GoRules(5, max_moves=30)
ALPHA_EMPTY, BETA_EMPTY = 0.5, 1.0


def oracle(params, states):
    """Uniform prior, α from the area margin for the player to move."""
    del params
    area = jax.vmap(lambda s: go.area_score(RULES, s))(states)
    alpha = 0.6 * area * states.to_play.astype(jnp.float32) + 0.2
    return jnp.zeros(states.legal.shape, jnp.float32), alpha, jnp.full_like(alpha, 0.5)


# ---------------------------------------------------------------------------
# The config.


def test_the_recipe_is_one_flat_file_over_default_from_random_weights():
    tree = ast.parse(RECIPE.read_text())
    loaded = [
        node.args[0].args[-1].value
        for node in ast.walk(tree)
        if isinstance(node, ast.Call) and getattr(node.func, "attr", "") == "load_config"
    ]
    assert loaded == ["default.py"], loaded
    docstring = ast.get_docstring(tree)
    assert docstring.startswith("python -m saijax.train --config=configs/go7_sharp.py")
    assert len(docstring.splitlines()) <= 40
    config = config_lib.load_config(str(RECIPE))
    config_lib.validate(config)
    assert config.init_checkpoint == ""
    assert config.board_size == 7 and (config.network.blocks, config.network.filters) == (3, 32)
    # Every move a full PUCT search; the visits rise to SAI's 250 or so.
    assert config.search.algorithm == "puct"
    assert config.selfplay.fast_simulations == 0 and config.selfplay.full_search_prob == 1.0
    assert config_lib.num_simulations(config, 0) == 64 and config_lib.num_simulations(config, config.generations) == 256
    # SAI's opening with Dirichlet noise on it only.
    assert config.selfplay.noise_moves == config.selfplay.random_moves == 4
    assert config.search.dirichlet_fraction == 0.25 and config.search.noisy_root_fpu_reduction == 0.0
    assert config.selfplay.random_takeback and config.selfplay.random_min_visits == 2
    assert config.selfplay.komi_mode == "sample" and config.selfplay.fixed_komi_share == 0.0
    assert config.training.samples_per_new_row == 32.0


# ---------------------------------------------------------------------------
# Dirichlet noise on the opening only.


def _spied_chunk(config, search_config, seed):
    """One chunk of PUCT self-play; returns [(move_count [B], noise [B], active [B]), ...] per move."""
    calls = []

    def record(move_count, noise, terminated):
        calls.append((np.asarray(move_count), np.asarray(noise), ~np.asarray(terminated)))

    def spy(evaluator, params, keys, states, **kwargs):
        jax.debug.callback(record, states.move_count, kwargs["noise_scale"], states.terminated, ordered=True)
        return search.run_search(evaluator, params, keys, states, **kwargs)

    chunk = selfplay.make_chunk_fn(oracle, RULES, search_config, config, run_search=spy)
    sp = selfplay.init_selfplay(RULES, config, jax.random.PRNGKey(seed), ALPHA_EMPTY, BETA_EMPTY)
    sp, records = chunk(None, sp, jax.random.PRNGKey(seed + 1), jnp.float32(ALPHA_EMPTY), jnp.float32(BETA_EMPTY))
    jax.block_until_ready(records)
    return calls, records


@pytest.mark.parametrize("random_moves", [2, 4])
def test_puct_self_play_noise_is_on_the_random_opening_moves_only(random_moves):
    config = selfplay.SelfPlayConfig(
        batch_size=8,
        chunk_moves=24,
        komi_mode="fixed",
        komi=0.5,
        branch_prob=0.1,  # branches restart at later moves: their count is from the empty board
        branch_queue_capacity=8,
        random_moves=random_moves,
        noise_moves=random_moves,
        resign_threshold=-1.0,
    )
    search_config = search.SearchConfig(algorithm="puct", num_simulations=8, dirichlet_fraction=0.25)
    calls, records = _spied_chunk(config, search_config, seed=3)
    assert len(calls) == config.chunk_moves
    moves = np.concatenate([m[a] for m, _, a in calls])
    noise = np.concatenate([n[a] for _, n, a in calls])
    assert (moves < random_moves).any() and (moves >= random_moves).any()
    # Noise at full weight on every opening root, none after: neither longer nor shorter.
    np.testing.assert_array_equal(noise[moves < random_moves], 1.0)
    np.testing.assert_array_equal(noise[moves >= random_moves], 0.0)
    # The spy saw the positions self-play recorded.
    recorded = np.asarray(records.move_number)[np.asarray(records.active)]
    assert sorted(recorded.tolist()) == sorted(moves.tolist())


def ranked_oracle(params, states):
    """``oracle`` with a prior that ranks every action apart (no ties for the keys to break)."""
    logits, alpha, beta = oracle(params, states)
    return logits + 0.3 * jnp.arange(logits.shape[-1], dtype=jnp.float32), alpha, beta


def test_the_noise_scale_self_play_passes_switches_pucts_dirichlet_noise():
    """Identical roots under different keys part under a scale of 1 and
    search alike under 0 (PUCT; the prior has no ties, which the keys would
    break)."""
    n = 8
    states = jax.tree_util.tree_map(lambda x: jnp.broadcast_to(x, (n,) + x.shape), go.init(RULES, 0.5))
    keys = jax.random.split(jax.random.PRNGKey(7), n)
    search_config = search.SearchConfig(algorithm="puct", num_simulations=16, dirichlet_fraction=0.25)
    searched = jax.jit(
        lambda noise: search.run_search(
            ranked_oracle, None, keys, states, rules=RULES, config=search_config, noise_scale=noise
        )
    )
    noisy, quiet = searched(jnp.ones(n)), searched(jnp.zeros(n))
    assert len({tuple(v) for v in np.asarray(noisy.visit_counts).tolist()}) > 1
    assert len({tuple(v) for v in np.asarray(quiet.visit_counts).tolist()}) == 1


# ---------------------------------------------------------------------------
# Whole runs (slow).


def _small(config, **fields):
    """The recipe with its sizes made small; fields: ``section__field=value``."""
    with config.unlocked():
        config.selfplay.batch_size = config.selfplay.games_per_generation = 8
        config.selfplay.branch_queue_capacity = 32
        config.schedules.visits = ((0, 4),)
        config.training.batch_size = 16
        config.training.samples_per_new_row = 1.0
        for name, value in fields.items():
            section, field = name.split("__")
            setattr(config[section], field, value)
    return config


@pytest.mark.slow
def test_the_recipe_runs_from_an_empty_workdir(tmp_path):
    config = config_lib.load_config(str(RECIPE))
    with config.unlocked():
        config.generations = 1
        config.network.blocks, config.network.filters = 1, 8
    _small(config)
    log = []
    summary = pipeline.train_and_evaluate(config, str(tmp_path / "run"), progress=False, log=log.append)
    text = "\n".join(str(line) for line in log)
    assert summary["generation"] == 0
    assert "resuming" not in text and "starting from" not in text  # random weights, no checkpoint
    (metrics,) = [json.loads(line) for line in open(tmp_path / "run" / "metrics.jsonl")]
    assert metrics["generation"] == 0 and metrics["simulations"] == 4 and metrics["selfplay_evaluations"] > 0
    written = json.load(open(tmp_path / "run" / "config.json"))
    assert written["init_checkpoint"] == "" and written["selfplay"]["noise_moves"] == 4
    assert written["search"]["algorithm"] == "puct"


@pytest.mark.slow
@pytest.mark.parametrize("seed", [0, 1])
def test_each_seeds_shipped_leg_resumes(seed, tmp_path):
    leg = LEGS / f"sharp_s{seed}" / "leg"
    shipped = json.load(open(leg / "config.json"))
    assert shipped["seed"] == seed and shipped["init_checkpoint"] == ""
    rows = [json.loads(line) for line in open(leg / "metrics.jsonl")]
    last = rows[-1]["generation"]
    assert [r["generation"] for r in rows] == list(range(last + 1))
    work = tmp_path / "run"
    shutil.copytree(leg, work)
    config = config_lib.load_config(str(RECIPE))
    with config.unlocked():
        config.seed = seed
        config.generations = last + 2
    _small(config)
    log = []
    summary = pipeline.train_and_evaluate(config, str(work), progress=False, log=log.append)
    text = "\n".join(str(line) for line in log)
    assert summary["generation"] == last + 1
    assert f"generation {last} done, continuing at {last + 1}" in text
    assert "compact leg" in text
    with checkpoints.Checkpointer(work) as ckpt:
        assert ckpt.latest_generation() == last + 1


def test_each_seed_ships_a_compact_leg_of_the_recipe():
    for seed in (0, 1):
        leg = LEGS / f"sharp_s{seed}" / "leg"
        assert sorted(os.listdir(leg)) == ["checkpoints", "config.json", "metrics.jsonl"], leg
        shipped = json.load(open(leg / "config.json"))
        recipe = config_lib.load_config(str(RECIPE)).to_dict()
        recipe["seed"] = seed
        for key in ("time_limit_minutes", "generations"):
            shipped.pop(key, None), recipe.pop(key, None)
        assert _jsonable(recipe) == _jsonable(shipped), leg


def _jsonable(value):
    return json.loads(json.dumps(value, default=list))


# ---------------------------------------------------------------------------
# The claim's tables (experiments/sharp_recipe/recipe.py).


def _write_run(path, alphas, betas, first="D4"):
    os.makedirs(path, exist_ok=True)
    with open(os.path.join(path, "metrics.jsonl"), "w") as f:
        for g, (a, b) in enumerate(zip(alphas, betas, strict=True)):
            row = dict(generation=g, alpha_empty=a, beta_empty=b, first_move=first, selfplay_evaluations=2_000_000,
                       seconds=100.0, selfplay_seconds=60.0, train_seconds=30.0, simulations=256)  # fmt: skip
            f.write(json.dumps(row) + "\n")


def test_the_claims_tables_report_each_target_over_the_last_generations(tmp_path):
    from experiments.sharp_recipe import recipe  # noqa: PLC0415

    _write_run(tmp_path / "s0", [1.0] * 5 + [9.2] * 10, [0.1] * 5 + [2.5] * 10)
    _write_run(tmp_path / "s1", [1.0] * 5 + [8.0] * 10, [0.1] * 5 + [3.0] * 10, first="C4")
    checks = tmp_path / "end_checks.csv"
    checks.write_text("seed,target,figure,interval,met\nseed 0,gtp_gap,0.6,0.5-0.7,True\n")
    settings = recipe.Settings(runs=(str(tmp_path / "s0"), str(tmp_path / "s1")), outdir=str(tmp_path / "out"),
                               end_checks=str(checks))  # fmt: skip
    out = recipe.run(settings)
    met = {(r["seed"], r["target"]): r["met"] for r in out["targets"]}
    assert met[("seed 0", "alpha_empty in 9 +- 0.5")] and met[("seed 0", "beta_empty >= 2")]
    assert not met[("seed 1", "alpha_empty in 9 +- 0.5")] and met[("seed 1", "beta_empty >= 2")]
    assert met[("seed 0", "first move D4")] and not met[("seed 1", "first move D4")]
    assert not met[("seed 0", "<= 200 M evaluations")]  # 30 M, but the end checks are not all measured
    assert met[("seed 0", "gtp_gap")] and not met[("seed 1", "gtp_gap")]
    figure = {(r["seed"], r["target"]): r["figure"] for r in out["targets"]}
    assert figure[("seed 0", "alpha_empty in 9 +- 0.5")] == pytest.approx(9.2)
    assert figure[("seed 1", "gnugo_black_wins_komi_8.5")] == "not measured"
    (timing0, _) = out["timing"]
    assert timing0["evaluations_m"] == 30.0 and timing0["selfplay_evaluations_per_s"] == pytest.approx(2e6 / 60, abs=1)
    assert timing0["train_share"] == 0.3
    for name in ("curves.csv", "targets.csv", "timing.csv", "sharp_recipe.png"):
        assert (tmp_path / "out" / name).stat().st_size > 0


def test_the_claim_refuses_a_run_that_is_not_from_generation_0(tmp_path):
    from experiments.sharp_recipe import recipe  # noqa: PLC0415

    _write_run(tmp_path / "s0", [1.0] * 3, [0.1] * 3)
    lines = (tmp_path / "s0" / "metrics.jsonl").read_text().splitlines()
    (tmp_path / "s0" / "metrics.jsonl").write_text("\n".join(lines[1:]) + "\n")  # generation 0 lost
    settings = recipe.Settings(runs=(str(tmp_path / "s0"),), names=("seed 0",), outdir=str(tmp_path / "out"))
    with pytest.raises(ValueError, match="missing \\[0\\]"):
        recipe.run(settings)
    with pytest.raises(ValueError, match="names"):
        recipe.Settings(runs=(str(tmp_path / "s0"),), outdir=str(tmp_path / "out"))
