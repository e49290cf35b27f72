"""``python -m saijax.compact_leg WORKDIR LEG_DIR``: a run's newest checkpoint as a compact leg.

The leg's contents and form are :mod:`saijax.learn.compact_leg`'s.
"""

from __future__ import annotations

import argparse
import os
import sys

from saijax.core import checkpoints
from saijax.learn import compact_leg

__all__ = ["main"]


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=compact_leg.__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("workdir", help="the run's workdir (its newest checkpoint is used)")
    p.add_argument("leg_dir", help="a new folder for the compact leg")
    p.add_argument("--weights_dtype", default="float32", choices=checkpoints.COMPACT_DTYPES)
    args = p.parse_args(argv)
    try:
        generation, step_dir = compact_leg.write_leg(args.workdir, args.leg_dir, weights_dtype=args.weights_dtype)
    except (OSError, ValueError) as e:  # CheckpointError is a ValueError
        print(f"error: {e}", file=sys.stderr)
        return 1
    full = compact_leg.folder_bytes(os.path.join(os.path.abspath(args.workdir), "checkpoints", str(generation)))
    compact = compact_leg.folder_bytes(step_dir)
    leg = compact_leg.folder_bytes(os.path.abspath(args.leg_dir))
    print(
        f"{args.leg_dir}: compact leg of generation {generation} (weights in {args.weights_dtype}, no optimizer "
        f"state): {leg / 1e6:.2f} MB; checkpoint {compact / 1e6:.2f} MB against {full / 1e6:.2f} MB in full form"
    )
    return 0
