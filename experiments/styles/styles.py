"""Playing styles against GNU Go: where each style plays, and what it costs.

    python -m experiments.run --config=experiments/styles/config.py  # the shipped run (--config.play=True)
    styles.run(styles.Settings(net="zoo:go7-base-S1", level=10, games=40, visits=64, outdir="/tmp/styles"))

The paper (Shi et al., JISE 2021, §4.4 and §6) produces centre- and
edge/corner-oriented play in three ways (saijax.play.styles):

* ``online-centre`` / ``online-edge``: the strong net with the root prior
  reweighted by line and by Method B's distance to the opponent's last
  move (§4.4.1);
* ``offline-centre`` / ``offline-edge``: nets fine-tuned on a weighted
  score (edge points 1 − b, centre points 1 + b, b = ±0.2 as the paper's
  β; §4.4.2), playing alone (the paper's Net_center and Net_edge);
* ``mixed-centre`` / ``mixed-edge``: the strong net and an offline net
  together; the biased move is played when the strong net's win rate for
  it is within ``w_diff`` (0.05) of its best and the biased prior is at
  least ``p_th`` (0.1) (§6.2.2);

and ``plain``, the strong net itself. Each plays GNU Go (``level``, not
allowed to resign, games played out and counted Tromp–Taylor), colours
alternating, at a komi that the net's side wins under perfect play (7×7:
8.5 when the net has Black, 9.5 when it has White).

Measurements per player (the paper had human judges; these are the
automated counterparts):

* the share of the player's moves on lines 1–2 against lines 3+, over the
  opening (the paper showed its judges the first 40 moves of 13×13 games,
  169 points; 40·49/169 ≈ 12 moves of both colours on 7×7, ``opening``)
  and over whole games, with Fisher's exact test against ``plain``;
* the win rate against GNU Go with a 95% Wilson interval, and Fisher's
  exact test against ``plain`` (the paper: the mixed players won 135 and
  129 of 300 games against normal Leela, and the pure nets none of 60).

Outputs in ``outdir``: ``games.csv`` (every game), ``moves.csv`` (every
move of the styled side: game, ply, action, line), ``summary.csv`` and
``styles.png`` (line shares and win rates by player). ``plot_only``
redraws the PNG from ``outdir``'s ``summary.csv`` (nothing played).
"""

from __future__ import annotations

import dataclasses
import os
import time

import numpy as np

from experiments.lib import common
from experiments.lib.common import setting
from saijax.analysis import results, stats
from saijax.cli import player as player_cli
from saijax.core import sgf
from saijax.play import gtp_match, match, players, styles

ALL_PLAYERS = ("plain", "online-centre", "online-edge", "offline-centre", "offline-edge", "mixed-centre", "mixed-edge")


@dataclasses.dataclass(frozen=True, kw_only=True)
class Settings(common.MatchSettings):
    """The settings (the module docstring)."""

    games: int = setting(40, "games per player, colours alternating")
    visits: int = 64
    net: str = setting("zoo:go7-base-S1", "the plain net the style nets were fine-tuned from")
    centre_net: str = setting("zoo:go7-centre", "the offline centre-style net")
    edge_net: str = setting("zoo:go7-edge", "the offline edge-style net")
    players: tuple[str, ...] = setting(ALL_PLAYERS, f"the players, of {', '.join(ALL_PLAYERS)}")
    level: int = 10
    black_komi: float = setting(8.5, "komi when the styled side has Black")
    white_komi: float = setting(9.5, "komi when the styled side has White")
    timeout: float = 120.0
    opening: int = setting(12, "plies counted as the opening")
    w_diff: float = setting(0.05, "mixed: acceptable win-rate loss")
    p_th: float = setting(0.1, "mixed: the biased prior a move needs")
    plot_only: bool = setting(False, "redraw styles.png from outdir's summary.csv")

    def check(self) -> None:
        super().check()
        if self.games < 1:
            raise self.error("games", "needs an int >= 1")
        unknown = sorted(set(self.players) - set(ALL_PLAYERS))
        if unknown:
            raise self.error("players", f"unknown {unknown}; choose from {ALL_PLAYERS}")


def make_players(settings: Settings) -> dict[str, players.Player]:
    """The styled players of ``settings.players`` (see the module docstring)."""
    options = settings.player_options()
    wanted = list(settings.players)
    nets = dict(board_size=settings.board_size, options=options, seed=settings.seed)
    (strong,) = common.load_nets([("plain", settings.net)], **nets)
    config = strong.config
    biased = {}
    for style, spec in (("centre", settings.centre_net), ("edge", settings.edge_net)):
        if spec and any(p.endswith(style) and not p.startswith("online") for p in wanted):
            (biased[style],) = common.load_nets([(f"offline-{style}", spec)], **nets)
    out = {}
    for name in wanted:
        kind, _, style = name.partition("-")
        if kind == "plain":
            out[name] = strong
        elif kind == "online":
            cfg = dataclasses.replace(config, root_prior=styles.OnlineStyle(style))
            out[name] = strong.replace(name=name, config=cfg)
        elif style not in biased:
            raise ValueError(f"players={name} needs {style}_net")
        elif kind == "offline":
            out[name] = biased[style]
        else:
            mixed = styles.MixedStyle(biased[style], w_diff=settings.w_diff, p_th=settings.p_th)
            out[name] = strong.replace(name=name, mixed=mixed)
    return out


def _styled_moves(game: results.GameResult, name: str, size: int) -> list[tuple[int, int]]:
    """(ply, action) of the named player's moves in a game, read back from its SGF."""
    record = sgf.read_sgf(game.sgf)
    colour_first = 0 if game.black == name else 1
    if game.handicap >= 2:
        colour_first = 1 - colour_first  # White moves first after fixed handicap stones
    return [(ply, a) for ply, a in enumerate(record.moves) if ply % 2 == colour_first and a < size * size]


def run(settings: Settings) -> list[dict]:
    """Plays every player against GNU Go and writes the tables and the PNG (with ``plot_only``: redraws the PNG
    from ``outdir``'s summary.csv; a shipped folder's SGFs stay as they are); returns the summary."""
    if settings.plot_only:
        replot(settings)
        return common.read_csv(os.path.join(settings.outdir, "summary.csv"), text=("player",))
    games_path = common.games_path(settings.outdir)
    common.reset_games(games_path)
    argv = player_cli.engine_argv(f"gnugo:{settings.level}", never_resign=True)
    size = settings.board_size
    lines = styles.line_numbers(size)
    summary, move_rows = [], []
    for name, player in make_players(settings).items():
        t0 = time.time()
        a_black = [i % 2 == 0 for i in range(settings.games)]
        match_settings = match.MatchSettings(
            games=settings.games,
            komi=tuple(settings.black_komi if b else settings.white_komi for b in a_black),
            colours="alternate",
            seed=settings.seed,
            results_path=games_path,
            sgf_dir=os.path.join(settings.outdir, "sgf", name),
        )
        games = gtp_match.play_gtp_match(player, argv, match_settings, timeout=settings.timeout)
        counts = {"open_low": 0, "open_all": 0, "low": 0, "all": 0}
        for g in games:
            for ply, action in _styled_moves(g, name, size):
                line = int(lines[action])
                move_rows.append({"player": name, "game": g.game, "ply": ply, "action": action, "line": line})
                counts["all"] += 1
                counts["low"] += line <= 2
                if ply < settings.opening:
                    counts["open_all"] += 1
                    counts["open_low"] += line <= 2
        s = results.summarize(games, name)
        row = {
            "player": name,
            "games": s.overall.games,
            "wins": s.overall.wins,
            "win_rate": round(s.overall.win_rate, 4),
            "wilson_lo": round(s.wilson[0], 4),
            "wilson_hi": round(s.wilson[1], 4),
            "mean_margin": round(s.overall.mean_margin, 2),
            "opening_moves": counts["open_all"],
            "opening_lines_1_2": round(counts["open_low"] / max(counts["open_all"], 1), 4),
            "moves": counts["all"],
            "lines_1_2": round(counts["low"] / max(counts["all"], 1), 4),
            "_counts": counts,
            "seconds": round(time.time() - t0, 1),
        }
        summary.append(row)
        print(
            f"{name:>15s}: {row['wins']}/{row['games']} wins vs GNU Go level {settings.level} "
            f"[{100 * row['wilson_lo']:.0f}%, {100 * row['wilson_hi']:.0f}%], lines 1-2: "
            f"{100 * row['opening_lines_1_2']:.0f}% of opening moves, {100 * row['lines_1_2']:.0f}% of all "
            f"({row['seconds']:.0f}s)",
            flush=True,
        )
    _tests(summary)
    common.write_csv(os.path.join(settings.outdir, "moves.csv"), move_rows, ("player", "game", "ply", "action", "line"))
    common.write_csv(os.path.join(settings.outdir, "summary.csv"), summary)
    plot(
        summary,
        os.path.join(settings.outdir, "styles.png"),
        opening=settings.opening,
        level=settings.level,
        games=settings.games,
    )
    print(format_table(summary))
    return summary


def _tests(summary: list[dict]) -> None:
    """Fisher's exact tests against ``plain``: line shares (opening, all) and wins (two-sided)."""
    plain = next((r for r in summary if r["player"] == "plain"), None)
    for row in summary:
        for key, low, total in (
            ("p_opening_lines", "open_low", "open_all"),
            ("p_all_lines", "low", "all"),
        ):
            row[key] = ""
            if plain is not None and row is not plain and row["_counts"][total] and plain["_counts"][total]:
                a, b = row["_counts"], plain["_counts"]
                row[key] = round(stats.fisher_win_test(a[low], a[total], b[low], b[total]), 5)
        row["p_wins"] = ""
        if plain is not None and row is not plain:
            row["p_wins"] = round(stats.fisher_win_test(row["wins"], row["games"], plain["wins"], plain["games"]), 5)


def format_table(summary: list[dict]) -> str:
    """The summary as a Markdown table."""
    header = ("player", "wins/games [95% Wilson]", "mean margin", "lines 1–2, opening (p vs plain)",
              "lines 1–2, all moves (p vs plain)", "p (wins vs plain)")  # fmt: skip
    return common.markdown_table(
        header,
        (
            (
                r["player"],
                f"{r['wins']}/{r['games']} [{100 * r['wilson_lo']:.0f}, {100 * r['wilson_hi']:.0f}]",
                f"{r['mean_margin']:+.1f}",
                f"{100 * r['opening_lines_1_2']:.0f}% ({r['p_opening_lines']})",
                f"{100 * r['lines_1_2']:.0f}% ({r['p_all_lines']})",
                r["p_wins"],
            )
            for r in summary
        ),
    )


def plot(summary: list[dict], path: str, *, opening: int, level: int, games: int) -> str:
    """Line shares and win rates by player; returns the PNG's path."""
    plt = common.pyplot()
    names = [r["player"] for r in summary]
    x = np.arange(len(names))
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(max(8, 1.6 * len(names)), 4))
    ax1.bar(x - 0.2, [r["opening_lines_1_2"] for r in summary], 0.4, label=f"first {opening} plies")
    ax1.bar(x + 0.2, [r["lines_1_2"] for r in summary], 0.4, label="whole game")
    ax1.set_xticks(x, names, rotation=45, ha="right")
    ax1.set_ylabel("share of moves on lines 1-2")
    ax1.set_ylim(0, 1)
    ax1.legend()
    y = np.array([r["win_rate"] for r in summary])
    lo = np.array([r["wilson_lo"] for r in summary])
    hi = np.array([r["wilson_hi"] for r in summary])
    ax2.errorbar(x, y, yerr=[y - lo, hi - y], fmt="o", capsize=3)
    ax2.set_xticks(x, names, rotation=45, ha="right")
    ax2.set_ylim(-0.02, 1.02)
    ax2.set_ylabel("win rate vs GNU Go (95% Wilson)")
    ax2.set_title(f"GNU Go level {level}, {games} games each")
    fig.tight_layout()
    return common.save_figure(fig, path)


def replot(settings: Settings) -> str:
    """Redraws ``styles.png`` from ``settings.outdir``'s ``summary.csv``; returns the PNG's path."""
    summary = common.read_csv(os.path.join(settings.outdir, "summary.csv"), text=("player",))
    games = int(max(r["games"] for r in summary))
    return plot(
        summary,
        os.path.join(settings.outdir, "styles.png"),
        opening=settings.opening,
        level=settings.level,
        games=games,
    )
