"""Strength against GNU Go, played out: win rates by colour with Wilson intervals.

    python -m experiments.run --config=experiments/gnugo_strength/config.py  # the shipped runs (--config.play=True)
    python experiments/gnugo_strength/gnugo_strength.py --nets=zoo:go7-S1 --board_size=7 --level=10 \\
        --games=20 --black_komi=8.5 --white_komi=9.5 --outdir=/tmp/gnugo
    python experiments/gnugo_strength/gnugo_strength.py --workdir=runs/go7 --every=4 ...   # every kept generation

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

``losses.csv`` reads every game the net lost move by move, from the search's
winrate that each of the net's moves carries in its SGF comment (the net's
side): its first, highest and last winrate (a last one still high: the net
did not see the loss coming, e.g. it passed with stones it thought dead
that Tromp–Taylor counts), the last of its moves at 0.5 or more,
and the largest fall between two of its moves in a row, with the net's move
before the fall and GNU Go's reply after it (GTP vertices and move numbers).
It is written with the tables, and ``--losses_only`` writes it from
``--outdir``'s ``games.csv`` and SGFs (or ``sgf.tar.xz``), playing nothing.
"""

from __future__ import annotations

import dataclasses
import itertools
import os
import pathlib
import time

import numpy as np

from experiments.lib import common, matches
from experiments.lib.common import setting
from saijax.cli import player as player_cli
from saijax.core import go, sgf
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
    losses_only: bool = setting(False, "only write losses.csv from --outdir's games.csv and SGFs")

    def check(self) -> None:
        super().check()
        if not (self.plot_only or self.losses_only):
            common.check_nets(self)

    def redraws(self) -> bool:
        return super().redraws() or self.losses_only


def run(settings: Settings) -> list[dict]:
    """Plays every net against GNU Go and writes the tables and the PNG (with ``plot_only``: redraws the PNG
    from ``outdir``'s summary.csv; a shipped folder's SGFs stay as they are); returns the summary rows."""
    if settings.plot_only:
        replot(settings.outdir)
        return common.read_csv(os.path.join(settings.outdir, "summary.csv"))
    if settings.losses_only:
        write_losses(settings.outdir)
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
    write_losses(settings.outdir)
    return rows


# --------------------------------------------------------------------------
# The lost games, move by move.

LOSS_COLUMNS = (
    "net", "colour", "komi", "game", "margin", "moves", "engine_opening_moves", "first_winrate", "peak_winrate",
    "last_winrate", "last_move_at_half", "turn_move", "turn_vertex", "reply_move", "reply_vertex", "winrate_before",
    "winrate_after", "drop", "same_as", "sgf",
)  # fmt: skip


def _net_side(sgf_path: str) -> tuple[str, str]:
    """The net and its colour from a game's folder, ``sgf/<net>-<colour>/`` (as :func:`run` writes them)."""
    folder = os.path.basename(os.path.dirname(sgf_path))
    net, _, colour = folder.rpartition("-")
    if colour not in ("black", "white") or not net:
        raise ValueError(f"{sgf_path}: the game's folder is not <net>-<colour> (black or white)")
    return net, colour


def loss_row(record: sgf.GameRecord, *, net: str, colour: str) -> dict:
    """Where a game the net (playing ``colour``) lost turned, from its moves' SGF comments.

    Move numbers count from 1 over the whole game. The winrate is the net's
    search's, for the net's side, stored with each of its moves; ``drop`` is the
    largest fall from one of the net's moves to its next (``turn_move``: the move
    before the fall; ``reply_move``: the opponent's move in between). A game
    whose net moves carry no winrate gives empty cells.
    """
    rules = go.GoRules(size=record.size)
    first = 0 if (record.first_player == 1) == (colour == "black") else 1
    comments = record.comments or (None,) * len(record.moves)
    rates = []  # (move index, winrate) of the net's moves
    for i in range(first, len(record.moves), 2):
        rate = sgf.parse_move_comment(comments[i]).get("winrate")
        if isinstance(rate, (int, float)):
            rates.append((i, float(rate)))
    opening = sum(1 for c in comments if c and "random opening move" in c)
    row = {"net": net, "colour": colour, "komi": record.komi, "moves": len(record.moves)}
    row["engine_opening_moves"] = opening
    if not rates:
        return row
    at_half = [i for i, r in rates if r >= 0.5]
    row.update(
        first_winrate=rates[0][1],
        peak_winrate=max(r for _, r in rates),
        last_winrate=rates[-1][1],
        last_move_at_half=at_half[-1] + 1 if at_half else "",
    )
    if len(rates) >= 2:
        k = max(range(len(rates) - 1), key=lambda k: rates[k][1] - rates[k + 1][1])
        (i, before), (_, after) = rates[k], rates[k + 1]
        row.update(
            turn_move=i + 1,
            turn_vertex=go.to_gtp(rules, record.moves[i]),
            reply_move=i + 2,
            reply_vertex=go.to_gtp(rules, record.moves[i + 1]),
            winrate_before=before,
            winrate_after=after,
            drop=round(before - after, 4),
        )
    return row


def losses(outdir: str) -> list[dict]:
    """A :func:`loss_row` for every game the net lost in ``outdir``'s ``games.csv`` (SGFs from the files or the
    folder's ``sgf.tar.xz``), with the game's number, margin and SGF path, and ``same_as``: the first lost game
    of the same net and colour with the same moves (a deterministic net replays GNU Go's lines), else empty."""
    rows, seen = [], {}
    for g in common.read_csv(os.path.join(outdir, "games.csv")):
        path = g["sgf"]
        if not os.path.exists(path) and "sgf" in pathlib.PurePath(path).parts[:-1]:
            parts = pathlib.PurePath(path).parts
            below = max(i for i, part in enumerate(parts[:-1]) if part == "sgf")
            path = os.path.join(outdir, *parts[below:])  # the folder moved: its own sgf/ (or archive)
        net, colour = _net_side(path)
        if g["winner"] == colour:
            continue
        data = common.sgf_bytes(path)
        if data is None:
            raise FileNotFoundError(f"{outdir}: game {g['game']}'s SGF {path} is neither a file nor in the archive")
        record = sgf.read_sgf(data, check=False)
        same = seen.setdefault((net, colour, record.moves), int(g["game"]))
        row = loss_row(record, net=net, colour=colour)
        rows.append(
            {
                **row,
                "game": int(g["game"]),
                "margin": g["margin"],
                "same_as": "" if same == int(g["game"]) else same,
                "sgf": g["sgf"],
            }
        )
    return rows


def write_losses(outdir: str) -> str:
    """Writes ``losses.csv`` (:func:`losses`) in ``outdir`` and prints how the lost games turned; returns its path."""
    rows = losses(outdir)
    path = common.write_csv(os.path.join(outdir, "losses.csv"), rows, LOSS_COLUMNS)
    for (net, colour), group in itertools.groupby(rows, key=lambda r: (r["net"], r["colour"])):
        group = list(group)
        distinct = [r for r in group if r["same_as"] == ""]
        ahead = [r for r in distinct if r.get("peak_winrate", 0) >= 0.5]
        falls = ", ".join(
            f"game {r['game']} after move {r['turn_move']} {r['turn_vertex']}, reply {r['reply_vertex']}: "
            f"{r['winrate_before']:.2f} -> {r['winrate_after']:.2f}"
            for r in distinct
            if "drop" in r
        )
        print(
            f"{net:>10s} as {colour}: {len(group)} lost, {len(distinct)} distinct games, {len(ahead)} of them after "
            f"a winrate of 0.5 or more; the largest falls: {falls or 'none'}",
            flush=True,
        )
    return path


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
