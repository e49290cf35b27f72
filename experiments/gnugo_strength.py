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

import dataclasses
import os
import time

import numpy as np

from experiments import common, matches
from experiments.common import setting
from saijax.cli import player as player_cli
from saijax.core import sgf
from saijax.play import gtp_match, match


@dataclasses.dataclass(frozen=True, kw_only=True)
class Settings(common.MatchSettings):
    """The settings (the module docstring): the nets are ``nets`` or ``workdir``'s kept generations."""

    games: int = setting(20, "games per net and colour")
    visits: int = 64
    nets: tuple[str, ...] = ()
    workdir: str = setting("", "or: a run's workdir (its kept checkpoints)")
    every: int = setting(1, "with --workdir: every k-th kept generation")
    zoo_dir: str = ""
    level: int = 10
    black_komi: float = 8.5
    white_komi: float = 9.5
    resign_threshold: float | None = setting(None, "let the net resign (default: never)")
    engine_opening_moves: int = setting(
        0,
        "GNU Go's first this-many moves drawn at random among those it rates at least half its best "
        "(variety for a deterministic net; the net's moves stay its own)",
    )
    timeout: float = 120.0
    plot_only: bool = setting(False, "redraw the PNG from --outdir's summary.csv")

    def check(self) -> None:
        super().check()
        if not self.plot_only:
            common.check_nets(self)


def run(settings: Settings) -> list[dict]:
    """Plays every net against GNU Go and writes the tables and the PNG (with ``plot_only``: redraws the PNG
    from ``outdir``'s summary.csv; a shipped folder's SGFs stay as they are); returns the summary rows."""
    if settings.plot_only:
        replot(settings.outdir)
        return common.read_csv(os.path.join(settings.outdir, "summary.csv"))
    games_path = common.games_path(settings.outdir)
    common.reset_games(games_path)
    argv = player_cli.engine_argv(f"gnugo:{settings.level}", never_resign=True)
    rows = []
    nets = [(label, spec) for label, spec, _ in common.net_list(settings)]
    options = settings.player_options()
    loaded = common.load_nets(
        nets, board_size=settings.board_size, options=options, seed=settings.seed, zoo_dir=settings.zoo_dir
    )
    for (label, _), player in zip(nets, loaded):
        for colour, komi in (("black", settings.black_komi), ("white", settings.white_komi)):
            t0 = time.time()
            sgf_dir = os.path.join(settings.outdir, "sgf", f"{label}-{colour}")
            match_settings = match.MatchSettings(
                games=settings.games,
                komi=komi,
                colours="a_black" if colour == "black" else "a_white",
                seed=settings.seed,
                resign_threshold=settings.resign_threshold,
                engine_opening_moves=settings.engine_opening_moves,
                sgf_dir=sgf_dir,
                results_path=games_path,
            )
            games = gtp_match.play_gtp_match(player, argv, match_settings, timeout=settings.timeout)
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
                    "level": settings.level,
                    "visits": settings.visits,
                    **matches.colour_record(games, label, colour),
                    "counted_by_gnugo": len(agree),
                    "engine_opening_moves": settings.engine_opening_moves,
                    "distinct_games": distinct,
                    "distinct_up_to_symmetry": distinct_sym,
                    "seconds": round(time.time() - t0, 1),
                }
            )
            r = rows[-1]
            print(
                f"{label:>10s} as {colour} (komi {komi:g}) vs GNU Go level {settings.level}: "
                f"{r['wins']}/{r['games']} wins, {100 * r['win_rate']:.0f}% "
                f"[{100 * r['wilson_lo']:.0f}%, {100 * r['wilson_hi']:.0f}%], mean margin {r['mean_margin']:+.1f}, "
                f"{distinct} distinct games ({distinct_sym} up to symmetry) ({r['seconds']:.0f}s)",
                flush=True,
            )
    common.write_csv(os.path.join(settings.outdir, "summary.csv"), rows)
    plot(rows, os.path.join(settings.outdir, "gnugo_strength.png"), level=settings.level, games=settings.games)
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


def main(argv=None, *, exit_on_error: bool = False) -> int:
    """The command line: a flag per field of :class:`Settings`."""
    return common.main(__name__, argv, exit_on_error=exit_on_error)


if __name__ == "__main__":
    raise SystemExit(main(exit_on_error=True))
