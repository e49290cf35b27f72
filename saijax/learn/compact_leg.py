"""A run's newest checkpoint as a compact leg (README, "Long runs in legs").

    python -m saijax.compact_leg WORKDIR LEG_DIR [--weights_dtype=bfloat16]

(:mod:`saijax.cli.compact_leg`) writes into the new folder LEG_DIR what the next leg needs, as
`pipeline.leg_files` lists it (the newest checkpoint, `metrics.jsonl`,
`config.json`), with the checkpoint in the compact form of
`checkpoints.write_compact`: no optimizer state (Adam's moments, SGD's
momentum), the weights in float32 (default) or bfloat16. A run resumed from
LEG_DIR (`--workdir` on a copy of it) logs "compact leg ...: the optimizer's
state ... restarted from zero" and goes on; the step, the learning-rate
schedule, the PRNG key, the weight average and a gated run's promoted net
are kept. Prints the sizes of both forms.
"""

from __future__ import annotations

import os
import shutil

from saijax.core import checkpoints

__all__ = ["folder_bytes", "write_leg"]


def folder_bytes(path: str) -> int:
    """The bytes of a file, or of every file under a folder."""
    if os.path.isfile(path):
        return os.path.getsize(path)
    return sum(os.path.getsize(os.path.join(d, f)) for d, _, files in os.walk(path) for f in files)


def write_leg(workdir: str, leg_dir: str, *, weights_dtype: str = "float32") -> tuple[int, str]:
    """The compact leg of `workdir`'s newest checkpoint into the new folder
    `leg_dir`; returns (its generation, its step directory).

    Raises:
        FileExistsError: if `leg_dir` exists and is not empty.
        FileNotFoundError: if `workdir` has no checkpoint, or no
            `metrics.jsonl` or `config.json`.
        checkpoints.CheckpointError: naming the step directory, if the
            checkpoint is corrupt.
    """
    workdir, leg_dir = os.path.abspath(workdir), os.path.abspath(leg_dir)
    if os.path.exists(leg_dir) and os.listdir(leg_dir):
        raise FileExistsError(f"{leg_dir} exists and is not empty: a compact leg goes into a new folder")
    # Both files are needed to resume: check before writing anything.
    rest = [os.path.join(workdir, name) for name in ("metrics.jsonl", "config.json")]
    missing = [p for p in rest if not os.path.isfile(p)]
    if missing:
        raise FileNotFoundError(f"{workdir} is no run's workdir: missing {', '.join(missing)}")
    step_dir = checkpoints.write_compact(workdir, leg_dir, weights_dtype=weights_dtype)
    for path in rest:
        shutil.copy2(path, leg_dir)
    return int(os.path.basename(step_dir)), step_dir
