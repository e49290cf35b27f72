"""python -m saijax.train --config=configs/<name>.py --workdir=<dir> [--config.field=value ...]

The main job: SAI self-play and training (see ``saijax.pipeline``). Re-running
the same command resumes from the last checkpoint in ``--workdir``.
"""

import os
import sys

from absl import app, flags, logging
from ml_collections import config_flags

from saijax import cli, pipeline

_CONFIG = config_flags.DEFINE_config_file("config", None, "Run config file (configs/*.py).", lock_config=True)
_WORKDIR = flags.DEFINE_string("workdir", None, "Directory for checkpoints, replay data, SGFs and metrics.")
_MULTIHOST = flags.DEFINE_bool("multihost", False, "Call jax.distributed.initialize() (overrides config.multihost).")
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
    if _MULTIHOST.value:
        with config.unlocked():
            config.multihost = True
    try:
        summary = pipeline.train_and_evaluate(config, _WORKDIR.value, progress=_PROGRESS.value)
    except ValueError as e:  # bad config, corrupt checkpoint: one clear line
        cli.exit_with_error(f"error: {e}")
    print()
    print(f"fair komi estimate (α of the empty board): {summary['fair_komi']:+.2f} (β {summary['beta_empty']:.3f})")
    print(f"the net's preferred first move: {summary['first_move']}")
    print(f"checkpoints: {summary['checkpoints']}")
    print(f"self-play SGFs: {summary['sgf_dir']}")
    print(f"metrics: {summary['metrics']} (TensorBoard: {os.path.join(summary['workdir'], 'tensorboard')})")


if __name__ == "__main__":
    app.run(main, flags_parser=_parse_flags)
