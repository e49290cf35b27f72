"""``python -m saijax.analysis_engine``: KataGo's analysis protocol, or a batch analysis of SGF files.

Two modes over the same engine (:class:`saijax.gtp.kata_engine.AnalysisEngine`):

* without ``--sgf``: JSON queries on stdin, JSON replies on stdout (KataGo's
  analysis engine protocol; KaTrain, scripts, analysis servers);
* ``--sgf=DIR_OR_FILE[,...] --out=DIR``: every position of every game,
  analysed in batches, written as a CSV and an annotated SGF per game
  (:mod:`saijax.gtp.batch_analysis`), with a progress bar.

The net and how it searches are the GTP engine's flags (:mod:`saijax.cli.gtp`:
``--checkpoint``, ``--visits`` (one round's simulations), ``--algorithm``,
``--lambda``, ...); ``--batch`` is the most positions searched together,
``--max_visits`` a query's visits when it names none. A flag that cannot be
used is one ``saijax.analysis_engine: error:`` line on stderr and exit code 2.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from saijax.cli import common
from saijax.cli import gtp as gtp_cli
from saijax.gtp import batch_analysis, kata_engine, kata_query

__all__ = ["main"]

_PROG = "saijax.analysis_engine"


def _parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog=f"python -m {_PROG}",
        description="KataGo's JSON analysis protocol for saijax networks (KaTrain), or batch analysis of SGF files.",
    )
    gtp_cli.add_net_flags(parser)
    engine = parser.add_argument_group("analysis engine")
    engine.add_argument("--batch", type=int, default=16, help="most positions searched together (default 16)")
    engine.add_argument(
        "--min_batch",
        type=int,
        default=1,
        help="fewest positions a search is padded to (powers of two from it up to --batch each compile once)",
    )
    engine.add_argument(
        "--max_visits",
        type=int,
        default=None,
        help="visits per position when a query sets no maxVisits (default: one round, --visits)",
    )
    engine.add_argument(
        "--report_as",
        default="BLACK",
        choices=kata_query.REPORT_AS,
        help="default reportAnalysisWinratesAs (default BLACK)",
    )
    engine.add_argument("--seed", type=int, default=0, help="PRNG seed (random net and the rounds' keys)")
    batch = parser.add_argument_group("batch analysis of SGF files")
    batch.add_argument("--sgf", default=None, help="SGF files or directories, comma-separated: analyse them")
    batch.add_argument("--out", default=None, help="with --sgf: the directory of the CSVs and annotated SGFs")
    batch.add_argument("--no_progress", action="store_true", help="with --sgf: no progress bar")
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None, *, exit_on_error: bool = False) -> int:
    """Runs the analysis engine on stdin/stdout, or the batch analysis; returns the exit code."""
    args = _parse_args(argv)
    out = getattr(sys.stdout, "buffer", sys.stdout)
    # Only protocol replies go to the real stdout; stray prints go to stderr.
    saved_stdout, sys.stdout = sys.stdout, sys.stderr
    try:
        try:
            if args.sgf is not None and not args.out:
                raise ValueError("--sgf needs --out=DIR")
            if args.out and args.sgf is None:
                raise ValueError("--out needs --sgf")
            if args.max_visits is not None and not 1 <= args.max_visits <= kata_query.MAX_QUERY_VISITS:
                raise ValueError(f"--max_visits must be in 1..{kata_query.MAX_QUERY_VISITS}, got {args.max_visits}")
            paths = batch_analysis.sgf_paths(args.sgf.split(",")) if args.sgf is not None else None
            gtp_engine = gtp_cli.build_engine(args)

            def factory(emit):
                return kata_engine.AnalysisEngine(
                    gtp_engine,
                    emit=emit,
                    batch=args.batch,
                    min_batch=args.min_batch,
                    max_visits=args.max_visits,
                    report_as=args.report_as,
                    seed=args.seed,
                )

            engine = factory(lambda reply: None)
        except (ValueError, OSError) as e:
            return common.report_error(f"{_PROG}: error: {e}", 2, exit_now=exit_on_error)
        print(f"{_PROG}: {gtp_engine.player.description}", file=sys.stderr, flush=True)
        if paths is not None:
            written = batch_analysis.analyse_games(engine, paths, args.out, progress=not args.no_progress)
            print(f"{_PROG}: wrote {len(written)} of {len(paths)} games to {args.out}", file=sys.stderr)
            return 0 if written or not paths else 1
        return kata_engine.serve(factory, sys.stdin.buffer, out)
    finally:
        sys.stdout = saved_stdout
