"""How sharply self-play's outcomes depend on komi: Δ, the quantity that sets β_∅.

    python -m experiments.run --config=experiments/opening_spread/config.py  # the shipped runs
    python experiments/opening_spread/opening_spread.py --net=zoo:go7-S1 --games=256 --visits=32 \\
        --opening_policies=visits,improved --outdir=/tmp/opening_spread

SAI's net learns β from game outcomes at the sampled komi, so the β_∅ it
learns follows how much its own self-play's win rate changes with komi at
the empty board. Call Δ the drop in Black's win rate from the komi half a
point below the fair komi to the one half a point above (7×7: 8.5 and 9.5;
5×5: 24.5 and 25.5). A logistic σ(β(α + k)) centred between them gives
σ(β/2) − σ(−β/2) = tanh(β/4), so β ≈ 4·atanh Δ. Measured, the nets'
learned β_∅ is of the order of 4·atanh Δ from their own self-play (go5:
3.34 against 2.6–3.1; go7-S1: 0.23 against 0.31–0.50; generation 46 of
configs/go7_gpu.py: 0.24 against 0.56; issue 43).

An earlier version of this script argued instead from the spread of the
final margins: if Black's board margin were logistic with standard
deviation sd, β_∅ would be π / (√3 · sd), so β_∅ ≥ 2 would need margins
that spread by less than a point. That measured the wrong thing. The
margins' sd (22.6 for go5, 29–31 for the 7×7 nets) is dominated by
collapses to ±49 (±25 on 5×5): with λ = 0 the side that is losing at the
komi gives the board away, which does not change who wins. go5 learned
β_∅ 3.34 from margins with sd 22.6. ``summary.csv`` keeps that number
as ``implied_beta``, the β a logistic spread of the margins would give,
not what the net learns.

This script plays ``--games`` self-play games with the run's own
self-play machinery from the empty board at a fixed komi (no branches,
no resignation, games played out), the first ``--random_moves`` moves
sampled, the rest the search's best move, once per opening policy of
``--opening_policies`` (``selfplay.opening_policy``: ``visits`` draws the
opening moves ∝ the root's visit counts, SAI's rule; ``improved`` ∝ the
search's policy target). Root noise is on the random moves only (as
``selfplay.noise_moves``), or on every move with ``--noise_every_root`` (as
the sharp value's PUCT self-play); Gumbel's noise is always there,
PUCT's Dirichlet noise only with ``--dirichlet_fraction`` > 0 (the recipe's
self-play: 0.25), since a played net searches without it: with PUCT and
the default 0 the random moves are drawn from noiseless searches. Without
``--noise_every_root`` every move after the opening is deterministic, so
distinct openings, not games, are the sample. The games are played at the
one komi ``--komi`` and scored at both of Δ's komis from the same board
margins, so Δ here is the share of games that end exactly at the fair
komi's margin (margins are integers). Play depends on the komi, so games
played at each komi (two runs, ``--komi=8.5`` and ``--komi=9.5``) can
give a different Δ: for go7-S1 they gave 0.12, against 0.078 from scoring
the committed ``S1_r8_v64`` (played at 9.5) at both komis (issue 43).

Outputs in ``--outdir``: ``games.csv`` (policy, game, komi, Black's board
margin, moves, the first moves), ``summary.csv`` (per policy: games, mean
and sd of the board margin, ``implied_beta`` = π / (√3 · sd), Black's win
rate at komi 8.5 and 9.5 with Wilson intervals, distinct openings of the
random moves, Δ's komis ``delta_komi_lo`` and ``delta_komi_hi``,
``delta`` and ``delta_beta`` = 4·atanh Δ), ``tests.csv``
(two policies: Welch's t-test on the mean margins, Levene's test on their
spreads) and ``opening_spread.png`` (the margin histograms). The search is
the player flags' (``--visits``, Gumbel by default), both sides with its λ/μ agent (``--lambda_``,
``--mu``, ``--threshold``). ``--plot_only`` rebuilds the summary, the tests
and the PNG from ``games.csv`` (with the flags' ``--random_moves``,
``--visits``, ``--komi`` and ``--delta_komis``).
"""

from __future__ import annotations

import dataclasses
import math
import os

import jax
import jax.numpy as jnp
import numpy as np
import scipy.stats

from experiments.lib import common
from experiments.lib.common import setting
from saijax.analysis import stats
from saijax.cli import player as player_cli
from saijax.core import go
from saijax.learn import selfplay

POLICIES = ("visits", "improved")
# Black's board margin under perfect play from the empty board (area scoring), by board size: the fair komi.
FAIR_KOMI = {5: 25.0, 7: 9.0}


@dataclasses.dataclass(frozen=True, kw_only=True)
class Settings(common.MatchSettings):
    """The settings (the module docstring)."""

    games: int = setting(128, "games per opening policy")
    visits: int = 32
    net: str = setting("", "zoo:<name>, a checkpoint, or an entry of --zoo_dir (required)")
    zoo_dir: str = setting("", "a private zoo directory (e.g. an ablation's nets/)")
    komi: float = 9.5
    opening_policies: tuple[str, ...] = setting(POLICIES, "the opening policies: visits, improved")
    random_moves: int = setting(8, "sampled opening moves (configs/go7.py: 8)")
    batch: int = setting(64, "games in lockstep")
    delta_komis: tuple[float, ...] = setting(
        (),
        "the two komis Δ is taken between, as lo,hi (default: the board's fair komi ± 0.5, 8.5,9.5 on 7×7 and "
        "24.5,25.5 on 5×5; else --komi − 1 and --komi)",
    )
    noise_every_root: bool = setting(
        False,
        "root noise at every move, as the sharp value's PUCT self-play of rounds 8-15 (selfplay.noise_moves=-1); "
        "default: on the random opening moves only",
    )
    dirichlet_fraction: float = setting(
        0.0,
        "PUCT's root noise weight where root noise applies (the recipe's self-play: 0.25; default 0: PUCT plays "
        "without root noise, Gumbel always with its Gumbel noise there)",
    )
    plot_only: bool = setting(False, "rebuild the tables and PNG from --outdir's games.csv")

    def check(self) -> None:
        super().check()
        if not self.net and not self.plot_only:
            raise self.error("net", "is required (unless plot_only)")
        for policy in self.opening_policies:
            if policy not in POLICIES:
                raise self.error("opening_policies", f"{policy!r} is not one of {POLICIES}")
        if len(self.delta_komis) not in (0, 2):
            raise self.error("delta_komis", "needs two komis, lo,hi")
        if not 0.0 <= self.dirichlet_fraction <= 1.0:
            raise self.error("dirichlet_fraction", f"{self.dirichlet_fraction} is not in [0, 1]")
        if self.player_options().control_config() is not None:
            raise self.error("control", "self-play's games play the search's own move: position control cannot be used")


def delta_komis(settings: Settings) -> tuple[float, float]:
    """The two komis Δ is taken between: ``delta_komis``, else the board's fair komi ± ½ (else ``komi`` − 1
    and ``komi``)."""
    if settings.delta_komis:
        return settings.delta_komis[0], settings.delta_komis[1]
    fair = FAIR_KOMI.get(settings.board_size)
    return (fair - 0.5, fair + 0.5) if fair is not None else (settings.komi - 1.0, settings.komi)


def delta_beta(delta: float) -> float:
    """4·atanh Δ: the β of a logistic σ(β(α + k)) whose win rate drops by Δ over the point of komi around α.

    From σ(β/2) − σ(−β/2) = tanh(β/4). Δ ≤ 0 gives 0 or a negative β; |Δ| = 1 gives ±inf; NaN stays NaN.
    """
    if math.isnan(delta):
        return math.nan
    if abs(delta) >= 1.0:
        return math.copysign(math.inf, delta)
    return 4.0 * math.atanh(delta)


def load_net(spec: str, zoo_dir: str, options: player_cli.PlayerOptions, board_size: int):
    """The player of ``--net``: an entry of ``--zoo_dir`` if given, else any player spec."""
    if zoo_dir and not spec.startswith("zoo:"):
        spec = f"zoo:{spec}"
    (player,) = common.load_nets([(None, spec)], board_size=board_size, options=options, zoo_dir=zoo_dir or None)
    return player


def play_games(player, policy: str, settings: Settings) -> list[selfplay.FinishedGame]:
    """``settings.games`` played-out self-play games of ``player`` from the empty board, both sides searching
    with its settings and its λ/μ agent. A mixed style (a second net's search) is refused: self-play's games
    play one search's move."""
    if player.mixed is not None:
        raise ValueError(f"{player.name} plays a mixed style (Player.mixed), which self-play's games cannot play")
    rules = go.GoRules(player.board_size)
    config = selfplay.SelfPlayConfig(
        batch_size=min(settings.batch, settings.games),
        chunk_moves=8,
        komi_mode="fixed",
        komi=settings.komi,
        branch_prob=0.0,
        random_moves=settings.random_moves,
        opening_policy=policy,
        noise_moves=-1 if settings.noise_every_root else settings.random_moves,
        resign_threshold=-1.0,
        no_resign_fraction=0.0,
    )
    search_config = dataclasses.replace(player.config, gumbel_scale=1.0, dirichlet_fraction=settings.dirichlet_fraction)
    chunk = selfplay.make_chunk_fn(player.evaluator, rules, search_config, config, player.agent)
    key = jax.random.PRNGKey(settings.seed)
    sp = selfplay.init_selfplay(rules, config, jax.random.fold_in(key, 0), 0.0, 1.0)
    collector = selfplay.GameCollector(rules)
    games, i = [], 0
    while len(games) < settings.games:
        sp, records = chunk(player.variables, sp, jax.random.fold_in(key, 1 + i), jnp.float32(0), jnp.float32(1))
        games.extend(collector.add_chunk(records, 0)[1])
        i += 1
    return sorted(games, key=lambda g: g.game_id)[: settings.games]


def summarise(policy: str, board_margins: list[float], openings: list[tuple], settings: Settings) -> dict:
    """One policy's row of ``summary.csv``: Black's board margins (komi left out) and each game's random moves.

    ``implied_beta`` is π / (√3 · sd), the β a logistic spread of the margins would give; it is not what the net
    learns, since the sd is dominated by collapses that do not change who wins (the module docstring).
    ``delta_beta`` is 4·atanh Δ, Δ Black's win rate at ``delta_komi_lo`` less that at ``delta_komi_hi``, both
    scored from the same games (played at ``--komi``).
    """
    board = np.asarray(board_margins, np.float64)
    sd = float(np.std(board, ddof=1)) if len(board) > 1 else math.nan
    row = {
        "opening_policy": policy,
        "games": len(board),
        "random_moves": settings.random_moves,
        "visits": settings.visits,
        "komi": settings.komi,
        "mean_board_margin": float(board.mean()),
        "sd_board_margin": sd,
        "implied_beta": math.pi / (math.sqrt(3.0) * sd) if sd > 0 else math.inf,
        "distinct_openings": len(set(openings)),
    }
    for komi in (8.5, 9.5):
        wins = int(np.sum(board > komi))
        lo, hi = stats.wilson_interval(wins, len(board))
        row |= {f"black_wins_{komi:g}": wins, f"black_rate_{komi:g}": wins / len(board)}
        row |= {f"black_rate_{komi:g}_lo": lo, f"black_rate_{komi:g}_hi": hi}
    lo_komi, hi_komi = delta_komis(settings)
    delta = float(np.mean(board > lo_komi) - np.mean(board > hi_komi)) if len(board) else math.nan
    row |= {"delta_komi_lo": lo_komi, "delta_komi_hi": hi_komi, "delta": delta, "delta_beta": delta_beta(delta)}
    return row


def compare(game_rows: list[dict], a: str, b: str) -> dict:
    """Two opening policies' board margins: Welch's t-test on the means, Levene's test on the spreads."""
    x = [float(r["board_margin"]) for r in game_rows if r["opening_policy"] == a]
    y = [float(r["board_margin"]) for r in game_rows if r["opening_policy"] == b]
    welch = scipy.stats.ttest_ind(x, y, equal_var=False)
    levene = scipy.stats.levene(x, y)
    return {"a": a, "b": b, "welch_t": welch.statistic, "welch_p": welch.pvalue, "levene_p": levene.pvalue}


def plot(games_rows: list[dict], path: str) -> str:
    plt = common.pyplot()
    fig, ax = plt.subplots(figsize=(6, 3.8))
    for policy in dict.fromkeys(r["opening_policy"] for r in games_rows):
        margins = [float(r["board_margin"]) for r in games_rows if r["opening_policy"] == policy]
        bins = np.arange(min(margins) - 0.5, max(margins) + 1.5, 1.0)
        ax.hist(margins, bins=bins, alpha=0.5, label=f"{policy} (sd {np.std(margins, ddof=1):.1f})")
    ax.axvline(9.0, color="grey", ls=":", lw=0.8)
    ax.set_xlabel("Black's board margin (komi left out); 7×7 perfect play: 9")
    ax.set_ylabel("games")
    ax.legend(fontsize=8)
    fig.tight_layout()
    return common.save_figure(fig, path)


def run(settings: Settings) -> list[dict]:
    """Plays the self-play games of every opening policy and writes the tables and the PNG (with ``plot_only``:
    rebuilds them from ``outdir``'s games.csv); returns the summary."""
    if settings.plot_only:
        return plot_only(settings)
    player = load_net(settings.net, settings.zoo_dir, settings.player_options(), settings.board_size)
    summary, game_rows = [], []
    for policy in settings.opening_policies:
        games = play_games(player, policy, settings)
        for g in games:
            game_rows.append(
                {
                    "opening_policy": policy,
                    "game": g.game_id,
                    "komi": g.komi,
                    "board_margin": g.margin + g.komi,
                    "moves": g.length,
                    "opening": " ".join(go.to_gtp(go.GoRules(player.board_size), a) for a in g.actions[:8]),
                }
            )
        summary.append(summarise(policy, [g.margin + g.komi for g in games],
                                 [g.actions[: settings.random_moves] for g in games], settings))  # fmt: skip
        _print_row(summary[-1])
    common.write_csv(os.path.join(settings.outdir, "games.csv"), game_rows)
    return write_tables(game_rows, summary, settings)


def _print_row(r: dict) -> None:
    print(
        f"{r['opening_policy']:>8s}: {r['games']} games, Black's board margin {r['mean_board_margin']:+.1f} "
        f"± {r['sd_board_margin']:.1f}, "
        f"Black wins at 8.5: {100 * r['black_rate_8.5']:.0f}%, at 9.5: {100 * r['black_rate_9.5']:.0f}%, "
        f"Δ({r['delta_komi_lo']:g}, {r['delta_komi_hi']:g}) {r['delta']:.3f} (4·atanh Δ {r['delta_beta']:.2f}), "
        f"{r['distinct_openings']} distinct openings",
        flush=True,
    )


def write_tables(game_rows: list[dict], summary: list[dict], settings: Settings) -> list[dict]:
    """Writes ``summary.csv``, ``tests.csv`` (two policies) and the PNG; returns the summary."""
    if len(summary) == 2:
        tests = compare(game_rows, *(r["opening_policy"] for r in summary))
        common.write_csv(os.path.join(settings.outdir, "tests.csv"), [tests], digits=4)
        print(
            f"{tests['a']} vs {tests['b']}: mean margin Welch p = {tests['welch_p']:.3g}, "
            f"spread Levene p = {tests['levene_p']:.3g}"
        )
    common.write_csv(os.path.join(settings.outdir, "summary.csv"), summary, digits=4)
    plot(game_rows, os.path.join(settings.outdir, "opening_spread.png"))
    return summary


def plot_only(settings: Settings) -> list[dict]:
    """Rebuilds ``summary.csv``, ``tests.csv`` and the PNG from ``--outdir``'s ``games.csv`` (its ``opening``
    column holds the first 8 moves, so ``--random_moves`` up to 8), with the flags' random moves and visits."""
    path = os.path.join(settings.outdir, "games.csv")
    if not os.path.exists(path):
        raise ValueError(f"--plot_only: {path} does not exist (run the experiment first)")
    if settings.random_moves > 8:
        raise ValueError(f"--plot_only: games.csv keeps 8 opening moves, not --random_moves={settings.random_moves}")
    game_rows = common.read_csv(path, text=("opening_policy", "opening"))
    summary = []
    for policy in dict.fromkeys(r["opening_policy"] for r in game_rows):
        rows = [r for r in game_rows if r["opening_policy"] == policy]
        openings = [tuple(r["opening"].split()[: settings.random_moves]) for r in rows]
        summary.append(summarise(policy, [float(r["board_margin"]) for r in rows], openings, settings))
        _print_row(summary[-1])
    return write_tables(game_rows, summary, settings)


def main(argv=None, *, exit_on_error: bool = False) -> int:
    """The command line: a flag per field of :class:`Settings`."""
    return common.main(__name__, argv, exit_on_error=exit_on_error)


if __name__ == "__main__":
    raise SystemExit(main(exit_on_error=True))
