"""python -m saijax.train --config=configs/<name>.py --workdir=<dir> [--config.field=value ...]

The main job: SAI self-play and training (see ``saijax.learn.pipeline``). Re-running
the same command resumes from the last checkpoint in ``--workdir``.

Several hosts run the same command, on a workdir they all see, plus
``--coordinator_address=<host 0>:<port> --num_processes=P --process_id=i``
(or the environment variables ``JAX_COORDINATOR_ADDRESS``,
``JAX_NUM_PROCESSES``, ``JAX_PROCESS_ID``); on a Cloud TPU pod slice, Slurm
or Open MPI, ``--multihost`` alone lets JAX find them (``saijax.learn.distributed``).
"""

import functools
import os

import jax
from absl import app, flags, logging
from ml_collections import config_flags

from saijax.cli import common
from saijax.learn import config as config_lib
from saijax.learn import distributed, pipeline

_CONFIG = config_flags.DEFINE_config_file("config", None, "Run config file (configs/*.py).", lock_config=True)
_WORKDIR = flags.DEFINE_string("workdir", None, "Directory for checkpoints, replay data, SGFs and metrics.")
_MULTIHOST = flags.DEFINE_bool(
    "multihost",
    False,
    "Join a multi-process run through jax.distributed (overrides config.multihost); implied by the three flags below.",
)
_COORDINATOR = flags.DEFINE_string(
    "coordinator_address", None, "host:port of process 0, the same on every process (env JAX_COORDINATOR_ADDRESS)."
)
_NUM_PROCESSES = flags.DEFINE_integer("num_processes", None, "Processes in the run (env JAX_NUM_PROCESSES).")
_PROCESS_ID = flags.DEFINE_integer("process_id", None, "This process's index, 0..num_processes-1 (env JAX_PROCESS_ID).")
_HEARTBEAT = flags.DEFINE_integer(
    "heartbeat_timeout", 100, "Seconds after which a silent process counts as dead and the run stops."
)
_PROGRESS = flags.DEFINE_bool("progress", True, "Show progress bars.")
flags.mark_flags_as_required(["config", "workdir"])


# What the full run of a shipped config reached, for the final printout:
# numbers from shipped tables only. go5.py: experiments/baselines/results/main/
# curves.csv (arm SAI, seed 0: configs/go5.py on 2 CPU cores shared with other
# jobs) and the zoo's `go5` net (saijax/zoo/index.json).
_MEASURED = {
    "go5.py": (
        "the full configs/go5.py run, as measured (experiments/baselines/results/main/curves.csv, SAI seed 0,\n"
        "  2 shared CPU cores): α_∅ +8.35 at generation 11 (5 minutes), first above 20 at generation 20\n"
        "  (8 minutes), +24.69 at generation 27 (11 minutes); first move C3 from generation 1. The zoo's go5\n"
        "  net (generation 50): α_∅ +24.92, β_∅ 3.34. Perfect 5×5 play: komi 25, first move C3."
    ),
}


def _final_report(summary: dict, config, config_file: str | None) -> str:
    """The run's end in words: the empty board's α_∅ and β_∅ and what they
    mean, the first move, and how far this run is from the config's full run
    (and what that reached, where it was measured)."""
    generations = config.generations
    last = summary.get("generation", generations - 1)
    lines = [
        f"the net's view of the empty board after generation {last}:",
        f"  α_∅ = {summary['fair_komi']:+.2f}: its fair komi, the komi at which it thinks the empty board is even",
        f"  β_∅ = {summary['beta_empty']:.3f}: how sure it is; Black's winrate at komi k is σ(β_∅·(α_∅ − k)),",
        "    so with a small β_∅ it stays near 50% whatever the komi",
        "  early in training both are small; as the net learns, α_∅ moves to the board's fair komi and β_∅ grows",
        f"the net's preferred first move: {summary['first_move']}"
        + (
            f" (its prior gives a pass {summary['first_move_pass_prior']:.3f})"
            if "first_move_pass_prior" in summary
            else ""
        ),
    ]
    if config_file:
        name = os.path.basename(config_file)
        try:
            full = config_lib.load_config(config_file).generations
        except Exception:  # the report must not fail a finished run
            full = None
        if summary.get("stopped_by_time_limit"):
            lines.append(
                f"this leg stopped at --config.time_limit_minutes={config.time_limit_minutes:g} after generation "
                f"{last} of {generations}; the same command on a copy of the leg's files (above) goes on"
            )
        elif full is not None and generations < full:
            lines.append(
                f"this run stopped after {generations} of {name}'s {full} generations; to go on from here, run it\n"
                f"  again with the same --workdir and --config.generations={full} (or no --config.generations)"
            )
        if name in _MEASURED:
            lines.append(_MEASURED[name])
    return "\n".join(lines)


def main(argv):
    if len(argv) > 1:
        raise app.UsageError(f"unexpected arguments: {' '.join(argv[1:])}")
    logging.set_verbosity(logging.WARNING)
    config = _CONFIG.value
    distributed_flags = (_COORDINATOR.value, _NUM_PROCESSES.value, _PROCESS_ID.value)
    if _MULTIHOST.value or any(v is not None for v in distributed_flags):
        with config.unlocked():
            config.multihost = True
    # The pipeline validates the config, every field before connecting with these flags.
    connect = functools.partial(distributed.initialize, *distributed_flags, heartbeat_timeout=_HEARTBEAT.value)
    try:
        summary = pipeline.train_and_evaluate(config, _WORKDIR.value, progress=_PROGRESS.value, connect=connect)
    except ValueError as e:  # bad config or flag, corrupt checkpoint: one clear line
        common.exit_with_error(f"error: {e}")
    except jax.errors.JaxRuntimeError as e:
        if jax.process_count() == 1:
            raise
        common.exit_with_error(
            f"error: process {jax.process_index()} of {jax.process_count()}: an exchange with the other "
            f"processes failed; another process has probably died (see its log): {e}"
        )
    if not distributed.is_primary():
        return
    print()
    print(_final_report(summary, config, config_flags.get_config_filename(flags.FLAGS["config"])))
    print(f"checkpoints: {summary['checkpoints']}")
    print(f"self-play SGFs: {summary['sgf_dir']}")
    print(f"metrics: {summary['metrics']} (TensorBoard: {os.path.join(summary['workdir'], 'tensorboard')})")


def run() -> None:
    """Parses the flags (and ``--config.<field>`` overrides) and runs :func:`main`."""
    app.run(main, flags_parser=config_lib.parse_flags)


if __name__ == "__main__":
    run()
