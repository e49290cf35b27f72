"""Strength against GNU Go, played out: win rates by colour with Wilson intervals.

    python experiments/gnugo_strength.py --nets=zoo:go7-S1 --board_size=7 --level=10 \\
        --games=20 --black_komi=8.5 --white_komi=9.5 --outdir=experiments/results/go7_gnugo
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

Outputs in ``--outdir``: ``games.csv`` (every game, the results table),
``summary.csv`` (net, generation, colour, komi, games, wins, draws, win
rate, 95% Wilson interval, mean margin from the net's side, GNU Go's count
agreement) and ``gnugo_strength.png`` (win rate by net and colour with
intervals).
"""

from __future__ import annotations

import argparse
import csv
import os
import sys
import time

import numpy as np

from saijax import arena, gtp_match, players, results, search


def _nets(args) -> list[tuple[str, str]]:
    """(label, checkpoint spec) of the nets to test."""
    if args.nets:
        return [
            (spec.split("/")[-1] if not spec.startswith("zoo:") else spec[4:], spec) for spec in args.nets.split(",")
        ]
    directory = os.path.join(args.workdir, "checkpoints")
    gens = sorted(int(d) for d in os.listdir(directory) if d.isdecimal())[:: args.every]
    return [(f"gen{g}", os.path.join(directory, str(g))) for g in gens]


def colour_record(games: list[results.GameResult], player: str, colour: str) -> dict:
    """A player's record with one colour over a one-colour match: games, wins,
    draws, win rate with its 95% Wilson interval, mean margin."""
    s = results.summarize(games, player)
    stats = s.black if colour == "black" else s.white
    return {
        "games": stats.games,
        "wins": stats.wins,
        "draws": stats.draws,
        "win_rate": round(stats.win_rate, 4),
        "wilson_lo": round(s.wilson[0], 4),
        "wilson_hi": round(s.wilson[1], 4),
        "mean_margin": round(stats.mean_margin, 2),
    }


def run(args) -> list[dict]:
    os.makedirs(args.outdir, exist_ok=True)
    games_path = os.path.join(args.outdir, "games.csv")
    if os.path.exists(games_path):
        os.remove(games_path)
    argv = gtp_match.gnugo_arena_argv(args.level, never_resign=True)
    config = search.SearchConfig(num_simulations=args.visits)
    rows = []
    for label, spec in _nets(args):
        player = players.load_player(spec, board_size=args.board_size, name=label, config=config)
        for colour, komi in (("black", args.black_komi), ("white", args.white_komi)):
            t0 = time.time()
            settings = arena.MatchSettings(
                games=args.games,
                komi=komi,
                colours="a_black" if colour == "black" else "a_white",
                seed=args.seed,
                resign_threshold=args.resign_threshold,
                results_path=games_path,
            )
            games = gtp_match.play_gtp_match(player, argv, settings, timeout=args.timeout)
            agree = [g for g in games if g.engine_score and not g.engine_dead and not g.engine_score.startswith("?")]
            rows.append(
                {
                    "net": label,
                    "generation": "" if player.generation is None else player.generation,
                    "colour": colour,
                    "komi": komi,
                    "level": args.level,
                    "visits": args.visits,
                    **colour_record(games, label, colour),
                    "counted_by_gnugo": len(agree),
                    "seconds": round(time.time() - t0, 1),
                }
            )
            r = rows[-1]
            print(
                f"{label:>10s} as {colour} (komi {komi:g}) vs GNU Go level {args.level}: "
                f"{r['wins']}/{r['games']} wins, {100 * r['win_rate']:.0f}% "
                f"[{100 * r['wilson_lo']:.0f}%, {100 * r['wilson_hi']:.0f}%], mean margin {r['mean_margin']:+.1f} "
                f"({r['seconds']:.0f}s)",
                flush=True,
            )
    with open(os.path.join(args.outdir, "summary.csv"), "w", newline="", encoding="utf-8") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    plot(rows, os.path.join(args.outdir, "gnugo_strength.png"), args)
    return rows


def plot(rows: list[dict], path: str, args) -> None:
    import matplotlib  # noqa: PLC0415

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt  # noqa: PLC0415

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
    ax.set_title(f"vs GNU Go level {args.level} (never resigns), {args.games} games per point")
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--nets", default="", help="comma-separated checkpoints or zoo:<name>")
    p.add_argument("--workdir", default="", help="or: a run's workdir (its kept checkpoints)")
    p.add_argument("--every", type=int, default=1, help="with --workdir: every k-th kept generation")
    p.add_argument("--board_size", type=int, default=7)
    p.add_argument("--level", type=int, default=10)
    p.add_argument("--games", type=int, default=20, help="games per net and colour")
    p.add_argument("--black_komi", type=float, default=8.5)
    p.add_argument("--white_komi", type=float, default=9.5)
    p.add_argument("--visits", type=int, default=64)
    p.add_argument("--resign_threshold", type=float, default=None, help="let the net resign (default: never)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--timeout", type=float, default=120.0, help="seconds per GTP command")
    p.add_argument("--outdir", required=True)
    args = p.parse_args(argv)
    if bool(args.nets) == bool(args.workdir):
        print("gnugo_strength: error: give exactly one of --nets and --workdir", file=sys.stderr)
        return 2
    try:
        run(args)
    except (ValueError, OSError) as e:
        print(f"gnugo_strength: error: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
