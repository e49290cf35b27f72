"""Training's pace against its compute: the pipeline's training loop, step by
step and in blocks of steps, against the same steps' compute alone.

    python benchmarks/training.py --config=configs/go7_gpu.py [--config.<field>=<value> ...]
        [--steps 256] [--rounds 3] [--block 32] [--rows 65536] [--json PATH]

It builds what the pipeline builds for training (``run_setup.setup`` and
``RunSetup.build``, the run's own: the network of the config's schedule at
generation 0, its optimizer and train step, the weight average if the
config has one) and a window of
``--rows`` random rows with the targets the config trains (ownership,
opponent replies), loaded as the pipeline loads one (``ReplayBuffer``).
Then it alternates ``--rounds`` rounds of ``--steps`` steps each of

* step by step: ``training.train_on_window`` with ``steps_per_call=1``, the
  pipeline's loop before blocks (each step dispatches a sample and a step,
  and reads the step before's metrics back);
* blocks: the same with ``steps_per_call=--block`` (``train_step.block``:
  ``--block`` steps as one ``lax.scan`` that samples its batches on the
  device);
* compute: ``train_step.block`` on one fixed batch (a sampler that returns
  it whatever the key), nothing read back until the round's end: the
  steps' arithmetic and little else, the ceiling.

and prints steps/s for each (median over the rounds, with the spread), the
ratios step-by-step/compute and blocks/compute, and the sampling's share
(blocks against compute). A ratio well under 1 means the host, not the
device, sets training's pace. Compilation is timed apart. The last line is
``training blocks/compute ratio R``.
"""

from __future__ import annotations

import json
import statistics
import sys
import tempfile
import time
from typing import Any

import jax
import numpy as np

from saijax.core import features
from saijax.learn import config as config_lib
from saijax.learn import replay, run_setup, training


def random_rows(config, count: int, seed: int = 0) -> replay.TrainingRows:
    """``count`` rows of random positions and targets, with the target
    fields the config trains (ownership, opponent policy)."""
    n = int(config.board_size)
    rng = np.random.default_rng(seed)
    planes = (rng.random((count, n, n, 17)) < 0.3).astype(np.float32)
    planes[..., 16] = 1.0
    policy = rng.random((count, n * n + 1)).astype(np.float32)
    policy /= policy.sum(axis=1, keepdims=True)
    extra: dict[str, Any] = {}
    if config_lib.records_ownership(config):
        extra["ownership"] = rng.choice(np.array([1, -1, 0], np.int8), (count, n * n))
        extra["ownership_mask"] = rng.random(count) < 0.5
    if config_lib.records_opponent_policy(config):
        extra["opponent_policy"] = np.roll(policy, 1, axis=0)
    return replay.TrainingRows(
        planes=np.asarray(features.pack_planes(planes)),
        to_play=rng.choice(np.array([1, -1], np.int8), count),
        policy=policy,
        signed_komi=rng.choice([-7.5, 7.5, 0.5], count).astype(np.float32),
        z=rng.choice([0.0, 0.5, 1.0], count).astype(np.float32),
        margin=rng.normal(0, 5, count).astype(np.float32),
        game_id=(np.arange(count) // 40).astype(np.int32),
        move_number=(np.arange(count) % 40).astype(np.int32),
        is_branch=np.zeros((count,), bool),
        generation=np.zeros((count,), np.int32),
        valid=np.ones((count,), bool),
        **extra,
    )


class FixedBatch:
    """A sampler that training can fuse and that returns one fixed batch
    whatever the key: the compute reference."""

    def __init__(self, batch: dict[str, jax.Array]):
        self.batch = batch
        self.spec = ("fixed", tuple(sorted((k, v.shape) for k, v in batch.items())))

    @staticmethod
    def pure(batch, key):
        del key
        return batch

    def args(self):
        return (self.batch,)

    def __call__(self, key):
        return self.pure(*self.args(), key)


def build(config, rows: int, workdir: str) -> dict[str, Any]:
    """The pipeline's train step, a fresh state and a loaded window."""
    run = run_setup.setup(config)
    built = run.build(run.settings.network_spec(0))
    state = training.create_train_state(built.net, built.optimizer, jax.random.key(0), ema=run.settings.training.ema)
    buffer = replay.ReplayBuffer(workdir, int(config.board_size))
    buffer.write_generation(0, random_rows(config, rows))
    buffer.load_window(0, 1)
    sampler = buffer.sampler(run.settings.training.batch_size, run.settings.network.value_head)
    return dict(built=built, state=state, sampler=sampler, fixed=FixedBatch(sampler(jax.random.key(1))))


def measure(bench: dict[str, Any], *, steps: int, rounds: int, block: int) -> dict[str, Any]:
    """Compiles, then alternates the three ways over ``rounds`` rounds."""
    train_step = bench["built"].train_step
    if not training.can_fuse(train_step, bench["sampler"]):
        raise ValueError("blocks of steps need one process and one device (training.can_fuse)")
    if steps % block:
        raise ValueError(f"--steps ({steps}) must be a multiple of --block ({block})")
    state = bench["state"]

    def loop(state, sampler, per_call, key):
        return training.train_on_window(state, train_step, sampler, steps, key, steps_per_call=per_call)[0]

    def compute(state, key):
        keys = jax.random.split(key, block)
        for _ in range(steps // block):
            state, _ = train_step.block(state, bench["fixed"], keys)
        return state

    # Compile each program once (one call of each), timed.
    compile_seconds = {}
    t = time.perf_counter()
    state = training.train_on_window(state, train_step, bench["sampler"], 1, jax.random.key(3))[0]
    jax.block_until_ready(state)
    compile_seconds["step"] = time.perf_counter() - t
    t = time.perf_counter()
    state = training.train_on_window(
        state, train_step, bench["sampler"], block, jax.random.key(4), steps_per_call=block
    )[0]
    jax.block_until_ready(state)
    compile_seconds["block"] = time.perf_counter() - t
    t = time.perf_counter()
    state, _ = train_step.block(state, bench["fixed"], jax.random.split(jax.random.key(5), block))
    jax.block_until_ready(state)
    compile_seconds["compute"] = time.perf_counter() - t

    rates: dict[str, list[float]] = {"step_by_step": [], "blocks": [], "compute": []}
    for r in range(rounds):
        for name in rates:
            key = jax.random.key(100 + r)
            t = time.perf_counter()
            if name == "step_by_step":
                state = loop(state, bench["sampler"], 1, key)
            elif name == "blocks":
                state = loop(state, bench["sampler"], block, key)
            else:
                state = compute(state, key)
            jax.block_until_ready(state)
            rates[name].append(steps / (time.perf_counter() - t))
        print(
            f"round {r + 1}/{rounds}: "
            + " | ".join(f"{name} {values[-1]:,.1f} steps/s" for name, values in rates.items()),
            flush=True,
        )
    medians = {name: statistics.median(values) for name, values in rates.items()}
    return {
        "steps_per_second": medians,
        "spread": {name: [min(v), max(v)] for name, v in rates.items()},
        "step_by_step_over_compute": medians["step_by_step"] / medians["compute"],
        "blocks_over_compute": medians["blocks"] / medians["compute"],
        "blocks_over_step_by_step": medians["blocks"] / medians["step_by_step"],
        "compile_seconds": compile_seconds,
        "steps": steps,
        "rounds": rounds,
        "block": block,
    }


def _main(argv):
    import provenance  # benchmarks/provenance.py, beside this script
    from absl import flags, logging
    from ml_collections import config_flags

    del argv
    logging.set_verbosity(logging.WARNING)
    config = _CONFIG.value
    f = flags.FLAGS
    filename = config_flags.get_config_filename(f["config"])
    with tempfile.TemporaryDirectory(prefix="training_bench_") as work:
        bench = build(config, f.rows, work)
        spec = training.network_spec(config, 0)
        print(
            f"jax {jax.__version__} on {jax.devices()[0].platform}; {filename}: {spec.board_size}x{spec.board_size} "
            f"{spec.blocks}x{spec.filters} {spec.value_head} net, {config.training.optimizer}, batch "
            f"{config.training.batch_size}, weight average {'on' if config.training.get('ema_decay', 0) else 'off'}, "
            f"a window of {f.rows:,} random rows",
            flush=True,
        )
        try:
            result = measure(bench, steps=f.steps, rounds=f.rounds, block=f.block)
        except ValueError as e:
            raise SystemExit(f"error: {e}") from None
    sps, spread = result["steps_per_second"], result["spread"]
    batch = int(config.training.batch_size)
    lines = [
        "compile: "
        + ", ".join(f"{name} {seconds:.1f} s" for name, seconds in result["compile_seconds"].items())
        + "; not in the rates",
        *(
            f"{name}: {sps[name]:,.1f} steps/s ({sps[name] * batch:,.0f} positions/s; "
            f"spread {spread[name][0]:,.1f}-{spread[name][1]:,.1f}), {1000 / sps[name]:.2f} ms a step"
            for name in sps
        ),
        f"step by step / compute {result['step_by_step_over_compute']:.3f}; blocks of {f.block} / compute "
        f"{result['blocks_over_compute']:.3f} (the rest: sampling on the device and the readback); "
        f"blocks / step by step {result['blocks_over_step_by_step']:.2f}x",
        f"training blocks/compute ratio {result['blocks_over_compute']:.3f}",
    ]
    if f.json:
        with open(f.json, "w") as out:
            # benchmarks/provenance.py, beside this script: the device and the versions.
            json.dump({"config": filename, **result, "provenance": provenance.describe()}, out, indent=2)
    print("\n".join(lines), flush=True)


if __name__ == "__main__":
    from absl import app, flags
    from ml_collections import config_flags

    _CONFIG = config_flags.DEFINE_config_file("config", None, "Run config file (configs/*.py).", lock_config=True)
    flags.DEFINE_integer("steps", 256, "Training steps per way per round (a multiple of --block).")
    flags.DEFINE_integer("rounds", 3, "Alternating rounds (at least 3 for a ratio worth quoting).")
    flags.DEFINE_integer("block", 32, "Steps per program for the blocks (training.steps_per_call).")
    flags.DEFINE_integer("rows", 65536, "Random rows in the window.")
    flags.DEFINE_string("json", None, "Also write the result as JSON to this file.")
    flags.mark_flags_as_required(["config"])
    sys.exit(app.run(_main))
