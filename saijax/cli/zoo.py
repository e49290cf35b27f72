"""``python -m saijax.zoo list|add|archive``: list the model zoo, add a checkpoint to it, or archive a run's
kept checkpoints into a zoo directory of its own (:mod:`saijax.zoo`)."""

from __future__ import annotations

import argparse
from collections.abc import Sequence

from saijax import zoo
from saijax.cli import common

__all__ = ["main"]


def main(argv: Sequence[str] | None = None, *, exit_on_error: bool = False) -> int:
    """``python -m saijax.zoo list|add``."""
    p = argparse.ArgumentParser(prog="python -m saijax.zoo", description="List or add model zoo entries.")
    sub = p.add_subparsers(dest="command", required=True)
    ls = sub.add_parser("list", help="the entries and their records")
    ls.add_argument("--directory", default=None, help="zoo directory (default the shipped one)")
    add = sub.add_parser("add", help="export a checkpoint as a zoo entry")
    add.add_argument("--checkpoint", required=True, help="a step directory <workdir>/checkpoints/<generation>")
    add.add_argument("--name", required=True)
    add.add_argument("--elo", type=float, default=None)
    add.add_argument("--elo_lo", type=float, default=None)
    add.add_argument("--elo_hi", type=float, default=None)
    add.add_argument("--run", default="")
    add.add_argument("--train_command", default="")
    add.add_argument("--seed", type=int, default=0)
    add.add_argument("--notes", default="")
    add.add_argument(
        "--dtype", default="float32", choices=zoo.STORAGE_DTYPES, help="the weights' storage (float16: half the size)"
    )
    add.add_argument("--directory", default=None, help="zoo directory (default the shipped one)")
    arc = sub.add_parser("archive", help="a run's kept checkpoints as entries gen<G> of a zoo directory")
    arc.add_argument("--workdir", required=True, help="the run's workdir")
    arc.add_argument(
        "--directory", required=True, help="the archive (a zoo directory), e.g. experiments/legs/<run>/nets"
    )
    arc.add_argument("--every", type=int, default=1, help="archive the kept generations that are multiples of this")
    arc.add_argument("--generations", default="", help="and these, comma-separated (e.g. a leg's newest)")
    arc.add_argument("--run", default="")
    arc.add_argument("--train_command", default="")
    arc.add_argument("--seed", type=int, default=0)
    arc.add_argument("--dtype", default="float16", choices=zoo.STORAGE_DTYPES)
    p.set_defaults(directory=None)
    args = p.parse_args(argv)
    try:
        if args.command == "archive":
            try:
                gens = tuple(int(g) for g in args.generations.split(",") if g.strip())
            except ValueError:
                raise ValueError(f"--generations={args.generations!r}: a comma-separated list of integers") from None
            added = zoo.archive(
                args.workdir,
                args.directory,
                every=args.every,
                generations=gens,
                dtype=args.dtype,
                run=args.run,
                command=args.train_command,
                seed=args.seed,
            )
            for e in added:
                print(f"archived {e.name}: alpha_empty {e.alpha_empty:+.2f}, beta_empty {e.beta_empty:.3f}")
            print(f"{args.directory}: {len(added)} added, {len(zoo.archived_generations(args.directory))} in all")
            return 0
        if args.command == "list":
            for name, e in sorted(zoo.entries(args.directory).items()):
                elo = "-" if e.elo is None else f"{e.elo:.0f}"
                print(
                    f"{name:12s} {e.spec.board_size}x{e.spec.board_size} {e.spec.blocks}x{e.spec.filters} "
                    f"gen {e.generation:4d} Elo {elo:>5s} "
                    f"alpha_empty {e.alpha_empty:+.2f} beta_empty {e.beta_empty:.3f}"
                )
            return 0
        ci = None if args.elo_lo is None or args.elo_hi is None else (args.elo_lo, args.elo_hi)
        e = zoo.export(
            args.checkpoint,
            args.name,
            directory=args.directory,
            elo=args.elo,
            elo_ci=ci,
            run=args.run,
            command=args.train_command,
            seed=args.seed,
            notes=args.notes,
            dtype=args.dtype,
        )
    except (ValueError, OSError, KeyError) as e:
        return common.report_error(f"saijax.zoo: error: {e}", 2, exit_now=exit_on_error)
    print(
        f"added {e.name}: generation {e.generation}, alpha_empty {e.alpha_empty:+.2f}, "
        f"beta_empty {e.beta_empty:.3f}, file {e.file} ({e.dtype})"
    )
    return 0
