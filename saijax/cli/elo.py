"""``python -m saijax.elo RESULTS``: Elo ratings from a results table (:mod:`saijax.analysis.elo`)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from saijax.analysis import elo, results

__all__ = ["main"]


def main(argv: Sequence[str] | None = None) -> int:
    """CLI: fits a results table and prints the rating table.

    Args:
      argv: command-line arguments without the program name (default
        ``sys.argv[1:]``).

    Returns:
      The process exit status.
    """
    parser = argparse.ArgumentParser(
        prog="python -m saijax.elo", description="Maximum-likelihood Elo ratings (with draws) from arena results."
    )
    parser.add_argument("results", help="results table (.jsonl or .csv)")
    parser.add_argument("--anchor", help="player rated 0 (default: 'random' or the alphabetically first player)")
    parser.add_argument("--plot", help="write a ratings plot to this file")
    parser.add_argument("--no-advantage", action="store_true", help="do not fit a first-move (black) advantage")
    parser.add_argument(
        "--prior-draws",
        type=float,
        default=None,
        help="virtual draws on every pairing (default: plain MLE, virtual draws only where it would be infinite)",
    )
    parser.add_argument("--bootstrap", type=int, default=0, help="bootstrap resamples for percentile intervals")
    parser.add_argument("--seed", type=int, default=0, help="bootstrap seed")
    args = parser.parse_args(argv)
    try:
        fit = elo.fit_elo(
            results.read_results(args.results),
            anchor=args.anchor,
            first_move_advantage=not args.no_advantage,
            prior_draws=args.prior_draws,
            bootstrap=args.bootstrap,
            seed=args.seed,
        )
    except (OSError, ValueError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    print(elo.format_table(fit))
    if args.plot:
        elo.plot_ratings(fit, args.plot)
        print(f"plot written to {args.plot}")
    return 0
