"""python -m saijax.train --config=configs/<name>.py --workdir=<dir> [--config.field=value ...]

The main job: SAI self-play and training (see ``saijax.pipeline``). Re-running
the same command resumes from the last checkpoint in ``--workdir``.

Several hosts run the same command, on a workdir they all see, plus
``--coordinator_address=<host 0>:<port> --num_processes=P --process_id=i``
(or the environment variables ``JAX_COORDINATOR_ADDRESS``,
``JAX_NUM_PROCESSES``, ``JAX_PROCESS_ID``); on a Cloud TPU pod slice, Slurm
or Open MPI, ``--multihost`` alone lets JAX find them (``saijax.distributed``).
"""

import os
import sys

import jax
from absl import app, flags, logging
from ml_collections import config_flags

from saijax import cli, distributed, pipeline
from saijax import config as config_lib

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


def _parse_flags(argv):
    """absl's flag parsing, but a bad --config override is one clear line."""
    try:
        return flags.FLAGS(argv)
    except (flags.Error, AttributeError, KeyError, TypeError, ValueError) as e:
        chain, cause = [], e
        while cause is not None and len(chain) < 10:
            is_key = isinstance(cause, KeyError) and cause.args
            chain.append(str(cause.args[0]) if is_key else str(cause))
            cause = cause.__cause__ or cause.__context__
        hints = [m for m in chain if "Did you mean" in m]
        if hints:
            hint = " ".join(hints[0].replace("\\n", " ").split())
            message = "unknown config field: " + hint[hint.find("Did you mean") :].rstrip("'\"")
        else:
            message = " ".join(chain[0].split()) or repr(e)
        sys.stderr.write(f"error: {message}\n")
        sys.exit(2)


def main(argv):
    if len(argv) > 1:
        raise app.UsageError(f"unexpected arguments: {' '.join(argv[1:])}")
    logging.set_verbosity(logging.WARNING)
    config = _CONFIG.value
    distributed_flags = (_COORDINATOR.value, _NUM_PROCESSES.value, _PROCESS_ID.value)
    if _MULTIHOST.value or any(v is not None for v in distributed_flags):
        with config.unlocked():
            config.multihost = True
    try:
        if config.multihost:
            config_lib.validate(config, device_count=1)  # a bad field fails before connecting
            distributed.initialize(*distributed_flags, heartbeat_timeout=_HEARTBEAT.value)
        summary = pipeline.train_and_evaluate(config, _WORKDIR.value, progress=_PROGRESS.value)
    except ValueError as e:  # bad config or flag, corrupt checkpoint: one clear line
        cli.exit_with_error(f"error: {e}")
    except jax.errors.JaxRuntimeError as e:
        if jax.process_count() == 1:
            raise
        cli.exit_with_error(
            f"error: process {jax.process_index()} of {jax.process_count()}: an exchange with the other "
            f"processes failed; another process has probably died (see its log): {e}"
        )
    if not distributed.is_primary():
        return
    print()
    print(f"fair komi estimate (α of the empty board): {summary['fair_komi']:+.2f} (β {summary['beta_empty']:.3f})")
    print(f"the net's preferred first move: {summary['first_move']}")
    print(f"checkpoints: {summary['checkpoints']}")
    print(f"self-play SGFs: {summary['sgf_dir']}")
    print(f"metrics: {summary['metrics']} (TensorBoard: {os.path.join(summary['workdir'], 'tensorboard')})")


if __name__ == "__main__":
    app.run(main, flags_parser=_parse_flags)
