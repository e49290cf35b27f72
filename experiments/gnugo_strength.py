"""Strength against GNU Go, played out: win rates by colour with Wilson intervals.

    python -m experiments.run --config=experiments/configs/gnugo_strength.py  # the shipped runs (--config.play=True)
    python experiments/gnugo_strength.py --nets=zoo:go7-S1 --board_size=7 --level=10 \\
        --games=20 --black_komi=8.5 --white_komi=9.5 --outdir=/tmp/gnugo
    python experiments/gnugo_strength.py --workdir=runs/go7 --every=4 ...   # every kept generation

Each net plays GNU Go (``--level``, Chinese rules, positional superko,
``--capture-all-dead``) with GNU Go **not allowed to resign**
(``--never-resign``): every game is played out to two passes (or the move
cap) and counted Tromp–Taylor by saijax. The net does not resign either
(``--resign_threshold`` to allow it). Two conditions per net:

* the net as Black at ``--black_komi`` (7×7: 8.5, Black must win by 9 = the
  perfect-play margin),
* the net as White at ``--white_komi`` (7×7: 9.5, White wins if Black does
  not make 10).

The net plays its search's best move (no root noise unless
``--gumbel_scale`` asks for it); ``--engine_opening_moves=k`` varies the
games from GNU Go's side only: its first k moves are drawn at random among
the moves it rates (``top_moves``) at least half as high as its best.

Outputs in ``--outdir``: ``games.csv`` (every game, the results table),
``sgf/<net>-<colour>/`` (every game; packed into ``sgf.tar.xz``), ``summary.csv`` (net, generation,
colour, komi, games, wins, draws, win rate, 95% Wilson interval, mean
margin from the net's side, GNU Go's count agreement, the number of
distinct games and of games distinct up to the board's symmetries) and
``gnugo_strength.png`` (win rate by net and colour with intervals).
``--plot_only`` redraws the PNG from ``--outdir``'s ``summary.csv`` (nothing
played).
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np

from experiments import common, matches
from saijax import gtp_match, match, player_cli, sgf


def run(args) -> list[dict]:
    games_path = common.games_path(args.outdir)
    common.reset_games(games_path)
    argv = player_cli.engine_argv(f"gnugo:{args.level}", never_resign=True)
    rows = []
    nets = [(label, spec) for label, spec, _ in common.nets_from_flags(args)]
    loaded = common.load_nets(
        nets, board_size=args.board_size, options=common.player_options(args), seed=args.seed, zoo_dir=args.zoo_dir
    )
    for (label, _), player in zip(nets, loaded):
        for colour, komi in (("black", args.black_komi), ("white", args.white_komi)):
            t0 = time.time()
            sgf_dir = os.path.join(args.outdir, "sgf", f"{label}-{colour}")
            settings = match.MatchSettings(
                games=args.games,
                komi=komi,
                colours="a_black" if colour == "black" else "a_white",
                seed=args.seed,
                resign_threshold=args.resign_threshold,
                engine_opening_moves=args.engine_opening_moves,
                sgf_dir=sgf_dir,
                results_path=games_path,
            )
            games = gtp_match.play_gtp_match(player, argv, settings, timeout=args.timeout)
            distinct, distinct_sym = matches.distinct_games(
                [sgf.read_sgf(g.sgf).moves for g in games], player.board_size
            )
            agree = [g for g in games if g.engine_score and not g.engine_dead and not g.engine_score.startswith("?")]
            rows.append(
                {
                    "net": label,
                    "generation": "" if player.generation is None else player.generation,
                    "colour": colour,
                    "komi": komi,
                    "level": args.level,
                    "visits": args.visits,
                    **matches.colour_record(games, label, colour),
                    "counted_by_gnugo": len(agree),
                    "engine_opening_moves": args.engine_opening_moves,
                    "distinct_games": distinct,
                    "distinct_up_to_symmetry": distinct_sym,
                    "seconds": round(time.time() - t0, 1),
                }
            )
            r = rows[-1]
            print(
                f"{label:>10s} as {colour} (komi {komi:g}) vs GNU Go level {args.level}: "
                f"{r['wins']}/{r['games']} wins, {100 * r['win_rate']:.0f}% "
                f"[{100 * r['wilson_lo']:.0f}%, {100 * r['wilson_hi']:.0f}%], mean margin {r['mean_margin']:+.1f}, "
                f"{distinct} distinct games ({distinct_sym} up to symmetry) ({r['seconds']:.0f}s)",
                flush=True,
            )
    common.write_csv(os.path.join(args.outdir, "summary.csv"), rows)
    plot(rows, os.path.join(args.outdir, "gnugo_strength.png"), level=args.level, games=args.games)
    return rows


def plot(rows: list[dict], path: str, *, level: int, games: int) -> str:
    """Win rate by net and colour with 95% Wilson intervals; returns the PNG's path."""
    plt = common.pyplot()
    nets = list(dict.fromkeys(r["net"] for r in rows))
    fig, ax = plt.subplots(figsize=(max(5, 0.8 * len(nets) + 2), 4))
    for k, (colour, marker) in enumerate((("black", "o"), ("white", "s"))):
        sel = [next(r for r in rows if r["net"] == n and r["colour"] == colour) for n in nets]
        x = np.arange(len(nets)) + (k - 0.5) * 0.15
        y = np.array([r["win_rate"] for r in sel])
        lo = np.array([r["wilson_lo"] for r in sel])
        hi = np.array([r["wilson_hi"] for r in sel])
        label = f"as {colour}, komi {sel[0]['komi']:g}"
        ax.errorbar(x, y, yerr=[y - lo, hi - y], fmt=marker, capsize=3, label=label)
    ax.axhline(0.9, color="grey", ls=":", lw=0.8)
    ax.set_xticks(np.arange(len(nets)), nets, rotation=45, ha="right")
    ax.set_ylim(-0.02, 1.02)
    ax.set_ylabel("win rate (95% Wilson)")
    ax.set_title(f"vs GNU Go level {level} (never resigns), {games} games per point")
    ax.legend()
    fig.tight_layout()
    return common.save_figure(fig, path)


def replot(outdir: str) -> str:
    """Redraws ``gnugo_strength.png`` from ``outdir``'s ``summary.csv``; returns the PNG's path."""
    rows = common.read_csv(os.path.join(outdir, "summary.csv"), text=("net", "colour"))
    games = int(max(r["games"] for r in rows))
    return plot(rows, os.path.join(outdir, "gnugo_strength.png"), level=int(rows[0]["level"]), games=games)


def parse_args(argv=None) -> argparse.Namespace:
    p = common.make_parser(__file__, __doc__, games=20, games_help="games per net and colour", visits=64, zoo_dir="",
                           level=10, black_komi=8.5, white_komi=9.5, resign_threshold=common.Default.NONE,
                           timeout=120.0, plot_only="redraw the PNG from --outdir's summary.csv",
                           helps={"resign_threshold": "let the net resign (default: never)"})  # fmt: skip
    common.add_nets_flags(p)
    p.add_argument(
        "--engine_opening_moves",
        type=int,
        default=0,
        help="GNU Go's first this-many moves drawn at random among those it rates at least half its best "
        "(variety for a deterministic net; the net's moves stay its own)",
    )
    args = p.parse_args(argv)
    if not args.plot_only:
        common.check_nets_flags(p, args)
    return args


def main(argv=None, *, exit_on_error: bool = False) -> int:
    args = parse_args(argv)
    if args.plot_only:  # a shipped folder's SGFs stay as they are: nothing is packed
        return common.run_main(__file__, lambda: replot(args.outdir), exit_on_error=exit_on_error)
    return common.run_main(__file__, lambda: run(args), exit_on_error=exit_on_error, outdir=args.outdir)


if __name__ == "__main__":
    raise SystemExit(main(exit_on_error=True))
