"""The stability of SAI's score estimate, as SAI 9×9 paper §3.6 states it.

    python -m experiments.run --config=experiments/score_stability/config.py  # the shipped run
    python experiments/score_stability/score_stability.py --strong=zoo:go7-S1 \\
        --opponents=zoo:go7-W1,zoo:go7-W2,zoo:go7-W3 \\
        --scorer=zoo:go7-S2 --games=40 --visits=128 --score_visits_list=1,100,400,1000 --outdir=/tmp/score_stability

The papers score a game that ended by resignation with a fixed strong net:
the plain α_s + k of the resign position is "fairly unstable, in particular
when β_s is low", so they take the median of α + k over the nodes of a
1,000-visit search, "stable when based on 1,000 visits". That is a claim
about **stability**, tested here as such, with the accuracy beside it:

1. ``--strong`` plays each of ``--opponents`` ``--games`` games
   (deterministic search at ``--visits``, colours alternating, the first
   ``--opening_moves`` moves of each game pair at random, komi ``--komi``,
   played out, no resignation); every game's SGF is kept.
2. The **resign point** of a game is its first ply from N²/4 on where the
   player to move, by the scorer's own evaluation (its network's win
   probability at the real komi), has less than ``--resign_threshold``.
   Games where that never happens have no resign point and are left out
   (counted).
3. The **estimators**, each Black minus White, on every position within
   ``--window`` plies of the resign point (the neighbouring positions of the
   same game): ``root α`` (the scorer's α_s + k of the position itself, no
   search) and ``median v`` (the median of α + k over the nodes of the
   scorer's search of v visits, for each v of ``--score_visits_list``).
4. The **reference** is not the players' own continuation (a weak player's
   blunders after the resign point would be charged to the estimate): from
   the resign point the scorer plays both sides with deterministic search
   at ``--continuation_visits`` to the end, and its Tromp–Taylor count is
   the "true" margin.

Reported per estimator, over the games with a resign point: **neighbour
change**, the mean over consecutive plies of the window of |e(p+1) − e(p)|
(how much the estimate moves between neighbouring positions); **visit
change**, |e(r) − median(max v)(r)| at the resign point r (how much it moves
with the search); and **accuracy**, the error e(r) − reference (mean, sd,
mean absolute error with a 95% t interval, the share on the reference's
winning side). Each estimator is compared with the median at the largest v,
per game (paired): Wilcoxon signed-rank tests, one-sided (the other
estimator moves more between neighbours; its absolute error is larger), with
Holm and BH adjustments over the table. The paper's claim holds if the root
α moves clearly more than the 1,000-visit median.

7×7 translation: komi 9.5 (7.5 on 9×9, fair komi 9 against 7), resign
threshold 10% (the nets' self-play resigned at 5–10%), resign points from
move N²/4 = 12 on.

Outputs in ``--outdir``: ``games.csv`` (every game, a rerun resumes the
opponents already played in full; ``--restart`` replays), ``sgf/`` (packed into ``sgf.tar.xz``),
``positions.csv`` (every window position: game, ply, offset from the resign
point, estimator, estimate), ``resign_points.csv`` (per game: resign ply,
the players' final margin, the reference margin), ``summary.csv`` (per
estimator), ``tests.csv`` and ``score_stability.png``.
"""

from __future__ import annotations

import dataclasses
import os
import statistics
import time

import jax
import jax.numpy as jnp
import numpy as np
import scipy.stats

from experiments.lib import common, stat_tables
from experiments.lib.common import setting
from saijax.analysis import results, stats
from saijax.core import go, sgf
from saijax.play import arena, match, players

ROOT = "root α"
BATCH = 64  # positions per search call (padded: one compiled shape per visit count)


@dataclasses.dataclass(frozen=True, kw_only=True)
class Settings(common.MatchSettings):
    """The settings (the module docstring)."""

    games: int = setting(40, "games per opponent, colours alternating")
    visits: int = 128
    strong: str = setting("zoo:go7-S1", "[NAME=]SPEC of the net that plays every match")
    opponents: tuple[str, ...] = ("zoo:go7-W1", "zoo:go7-W2", "zoo:go7-W3")
    scorer: str = setting("zoo:go7-S1", "the fixed scorer net (λ = μ = 0); it also continues")
    score_visits_list: tuple[int, ...] = (1, 100, 400, 1000)
    resign_threshold: float = 0.1
    komi: float = 9.5
    opening_moves: int = 2
    restart: bool = setting(False, "replay every match (default: resume games.csv)")
    continuation_visits: int = setting(256, "the reference continuation's visits")
    window: int = setting(4, "plies either side of the resign point")
    summarize_only: bool = setting(
        False, "rebuild summary.csv, tests.csv and the PNG from positions.csv and resign_points.csv"
    )

    def check(self) -> None:
        super().check()
        if self.games < 2 or self.games % 2:
            raise self.error("games", "needs an even number >= 2 (colours alternate)")
        if not 0 < self.resign_threshold < 1:
            raise self.error("resign_threshold", "needs a number in (0, 1)")
        for field in ("window", "continuation_visits"):
            if getattr(self, field) < 1:
                raise self.error(field, "needs an int >= 1")
        if not self.score_visits_list or min(self.score_visits_list) < 1:
            raise self.error("score_visits_list", "needs a non-empty list of ints >= 1")


# --------------------------------------------------------------------------
# Searches on lists of positions.


def _stack(states: list[go.GoState]) -> go.GoState:
    return jax.tree_util.tree_map(lambda *xs: jnp.stack(xs), *states)


def _batches(states: list[go.GoState]):
    """(start, padded stacked batch of BATCH, real count) over ``states``."""
    for start in range(0, len(states), BATCH):
        chunk = states[start : start + BATCH]
        yield start, _stack(chunk + [chunk[0]] * (BATCH - len(chunk))), len(chunk)


def _search(player: players.Player, rules: go.GoRules, visits: int):
    return match.search_fn(player.evaluator, rules, dataclasses.replace(player.config, num_simulations=int(visits)))


def evaluate(scorer: players.Player, rules: go.GoRules, states: list[go.GoState], visits: int, seed: int) -> dict:
    """The scorer's view of each position, Black minus White: its median at ``visits`` and its root α + k.

    Returns arrays: ``median`` (the search's median of α + k), ``root``
    (the network's α_s + k of the position), ``winrate`` (the player to
    move's win probability at the real komi, by the network) and
    ``to_play`` (+1 Black).
    """
    fn = _search(scorer, rules, visits)
    out = {k: np.zeros(len(states)) for k in ("median", "root", "winrate", "to_play")}
    for start, batch, n in _batches(states):
        keys = match.game_keys(jax.random.PRNGKey(seed), jnp.arange(start, start + BATCH), jnp.int32(visits))
        res = fn(scorer.variables, keys, batch, scorer.agent.params())
        est, alpha, win, to_play, komi = jax.device_get(
            (res.score_estimate, res.root_alpha, res.root_winrate, batch.to_play, batch.komi)
        )
        sign = np.asarray(to_play, np.float32)
        out["median"][start : start + n] = (np.asarray(est) * sign)[:n]
        out["root"][start : start + n] = (sign * np.asarray(alpha) - np.asarray(komi))[:n]
        out["winrate"][start : start + n] = np.asarray(win)[:n]
        out["to_play"][start : start + n] = sign[:n]
    return out


def continue_games(player: players.Player, rules: go.GoRules, states: list[go.GoState], seed: int) -> np.ndarray:
    """Black-minus-White Tromp–Taylor margins after ``player`` plays both sides of each position to the end.

    Deterministic search at the player's own visits (its config), in
    lockstep batches; :func:`saijax.core.go.step` leaves a finished game as it
    is, so every game of a batch runs until the longest ends.
    """
    fn = match.search_fn(player.evaluator, rules, player.config)
    step = jax.jit(jax.vmap(lambda s, a: go.step(rules, s, a)))
    margin = match.margin_fn(rules)
    out = np.zeros(len(states))
    for start, batch, n in _batches(states):
        for ply in range(rules.max_moves):
            if bool(np.all(jax.device_get(batch.terminated))):
                break
            keys = match.game_keys(jax.random.PRNGKey(seed), jnp.arange(start, start + BATCH), jnp.int32(ply))
            res = fn(player.variables, keys, batch, player.agent.params())
            batch = step(batch, res.action)
        out[start : start + n] = np.asarray(jax.device_get(margin(batch)))[:n]
    return out


def resign_ply(winrate: np.ndarray, terminated: np.ndarray, threshold: float, first: int) -> int | None:
    """The first ply from ``first`` on where the player to move's win rate is below ``threshold``."""
    for ply in range(first, len(winrate)):
        if not terminated[ply] and winrate[ply] < threshold:
            return ply
    return None


# --------------------------------------------------------------------------
# The experiment.


def play_games(settings: Settings, strong: players.Player, opponents: list[players.Player]) -> list[results.GameResult]:
    """Plays (or resumes) every match; returns every game, each with its SGF."""
    path = common.games_path(settings.outdir)
    if settings.restart:
        common.reset_games(path)
    kept = results.read_results(path) if os.path.exists(path) else []
    games = []
    for k, opponent in enumerate(opponents):
        mine = [g for g in kept if {g.black, g.white} == {strong.name, opponent.name}]
        if len(mine) >= settings.games and all(g.sgf and os.path.exists(g.sgf) for g in mine):
            games += mine[: settings.games]
            print(f"{strong.name} vs {opponent.name}: {settings.games} games already played", flush=True)
            continue
        if mine:  # a cut-short match: played again whole
            kept = [g for g in kept if g not in mine]
            common.rewrite_games(path, kept)
        t0 = time.time()
        match_settings = match.MatchSettings(
            games=settings.games,
            komi=settings.komi,
            seed=settings.seed * 1009 + k,
            opening_moves=settings.opening_moves,
            sgf_dir=os.path.join(settings.outdir, "sgf", opponent.name),
            results_path=path,
        )
        new = arena.play_match(strong, opponent, match_settings)
        wins = sum(g.winner == ("black" if g.black == strong.name else "white") for g in new)
        print(f"{strong.name} vs {opponent.name}: {len(new)} games, {strong.name} won {wins} ({time.time() - t0:.0f}s)",
              flush=True)  # fmt: skip
        games += new
    return games


def write_tables(out: str, position_rows: list[dict], point_rows: list[dict], visits: list[int], games: int) -> dict:
    """summary.csv, tests.csv and the PNG from the positions' estimates and the resign points."""
    summary, tests = summarize(position_rows, point_rows, visits)
    common.write_csv(os.path.join(out, "summary.csv"), summary, digits=4)
    common.write_csv(os.path.join(out, "tests.csv"), tests, digits=6)
    plot(position_rows, summary, os.path.join(out, "score_stability.png"))
    print(format_table(summary, games))
    return {"positions": position_rows, "points": point_rows, "summary": summary, "tests": tests}


def summarize_only(settings: Settings) -> dict[str, list[dict]]:
    """Rebuilds the tables from ``positions.csv`` and ``resign_points.csv`` of ``--outdir``."""
    paths = [os.path.join(settings.outdir, name) for name in ("positions.csv", "resign_points.csv")]
    for path in paths:
        if not os.path.exists(path):
            raise ValueError(f"--summarize_only: {path} does not exist (run the experiment first)")
    positions = common.read_csv(paths[0], text=("estimator",))
    points = common.read_csv(paths[1], text=("black", "white", "sgf"))
    visits = sorted({int(r["estimator"].split()[1]) for r in positions if r["estimator"] != ROOT})
    games_path = os.path.join(settings.outdir, "games.csv")
    games = len(common.read_csv(games_path)) if os.path.exists(games_path) else len(points)
    return write_tables(settings.outdir, positions, points, visits, games)


def run(settings: Settings) -> dict[str, list[dict]]:
    """Plays (or resumes) the matches, finds and scores the resign points and writes the tables and the PNG (with
    ``summarize_only``: rebuilds the tables from ``outdir``'s positions.csv and resign_points.csv)."""
    if settings.summarize_only:
        return summarize_only(settings)
    rules = go.GoRules(settings.board_size)
    nets = dict(board_size=settings.board_size, options=settings.player_options(), seed=settings.seed)
    (strong,) = common.load_nets(settings.strong, **nets)
    opponents = common.load_nets(settings.opponents, **nets)
    opponents = [o.replace(name=f"{o.name}-copy") if o.name == strong.name else o for o in opponents]
    plain = settings.player_options(lambda_=0.0, mu=0.0, threshold=0.0)
    (scorer,) = common.load_nets([("scorer", settings.scorer)], board_size=settings.board_size, options=plain)
    continuer = scorer.replace(
        config=dataclasses.replace(scorer.config, num_simulations=settings.continuation_visits, gumbel_scale=0.0)
    )
    visits = list(settings.score_visits_list)
    pairs = settings.games * len(opponents)
    print(
        f"power: {pairs} games, each estimator paired with the {max(visits)}-visit median on the same resign point, "
        f"detect a mean per-game difference of {stats.detectable_paired_shift(pairs, alternative='greater'):.2f} sd "
        "of the differences (Wilcoxon signed-rank, one-sided α 0.05, power 0.8; fewer if some games have no "
        "resign point)",
        flush=True,
    )
    games = play_games(settings, strong, opponents)

    # Resign points: the scorer's network (1 visit) on every position of every game.
    t0 = time.time()
    replays = [sgf.replay(sgf.read_sgf(g.sgf), rules=rules) for g in games]
    flat = [s for states in replays for s in states]
    view = evaluate(scorer, rules, flat, 1, settings.seed)
    points, offset = [], 0
    for g, states in zip(games, replays):
        n = len(states)
        terminated = np.array([bool(s.terminated) for s in states])
        r = resign_ply(view["winrate"][offset : offset + n], terminated, settings.resign_threshold, rules.size**2 // 4)
        offset += n
        if r is not None:
            window = [
                p for p in range(r - settings.window, r + settings.window + 1) if 0 <= p < n and not terminated[p]
            ]
            points.append(dict(game=g, states=states, ply=r, window=window))
    print(f"resign points in {len(points)} of {len(games)} games ({time.time() - t0:.0f}s)", flush=True)
    if not points:
        raise ValueError("no game reached the resign threshold: nothing to estimate (raise --resign_threshold)")

    # Every estimator on every window position.
    positions = [(i, p) for i, pt in enumerate(points) for p in pt["window"]]
    states = [points[i]["states"][p] for i, p in positions]
    estimates: dict[str, np.ndarray] = {}
    for v in visits:
        t0 = time.time()
        view = evaluate(scorer, rules, states, v, settings.seed + v)
        estimates[f"median {v}"] = view["median"]
        if v == min(visits):
            estimates[ROOT] = view["root"]
        print(f"scored {len(states)} positions at {v} visits ({time.time() - t0:.0f}s)", flush=True)
    t0 = time.time()
    reference = continue_games(continuer, rules, [pt["states"][pt["ply"]] for pt in points], settings.seed)
    print(
        f"continued {len(points)} games at {settings.continuation_visits} visits ({time.time() - t0:.0f}s)", flush=True
    )

    position_rows = []
    for k, (i, p) in enumerate(positions):
        for name, values in estimates.items():
            position_rows.append(dict(game=i, ply=p, offset=p - points[i]["ply"], estimator=name,
                                      estimate=round(float(values[k]), 3)))  # fmt: skip
    point_rows = []
    for i, pt in enumerate(points):
        g = pt["game"]
        point_rows.append(dict(game=i, black=g.black, white=g.white, sgf=g.sgf, resign_ply=pt["ply"],
                               moves=g.moves, final_margin=g.margin, reference_margin=float(reference[i])))  # fmt: skip
    common.write_csv(os.path.join(settings.outdir, "positions.csv"), position_rows)
    common.write_csv(os.path.join(settings.outdir, "resign_points.csv"), point_rows)
    return write_tables(settings.outdir, position_rows, point_rows, visits, len(games))


# --------------------------------------------------------------------------
# Tables.


def per_game(position_rows: list[dict], point_rows: list[dict], estimator: str, best: str) -> dict[str, np.ndarray]:
    """Per game with a resign point: the estimator's neighbour change, visit change and error."""
    by: dict[tuple[int, str], dict[int, float]] = {}
    for r in position_rows:
        by.setdefault((int(r["game"]), r["estimator"]), {})[int(r["offset"])] = float(r["estimate"])
    neighbour, visit, error = [], [], []
    for pt in point_rows:
        i = int(pt["game"])
        mine, top = by.get((i, estimator), {}), by.get((i, best), {})
        offsets = sorted(mine)
        steps = [abs(mine[b] - mine[a]) for a, b in zip(offsets, offsets[1:]) if b == a + 1]
        neighbour.append(statistics.fmean(steps) if steps else np.nan)
        visit.append(abs(mine[0] - top[0]) if 0 in mine and 0 in top else np.nan)
        error.append(mine[0] - float(pt["reference_margin"]) if 0 in mine else np.nan)
    return {"neighbour": np.array(neighbour), "visit": np.array(visit), "error": np.array(error)}


def _detectable(name: str, differences: np.ndarray) -> dict[str, float]:
    """The per-game differences' sd and the smallest mean difference, in
    points, a one-sided signed-rank test on them detects (power 0.8)."""
    d = differences[np.isfinite(differences)]
    sd = float(d.std(ddof=1)) if d.size > 1 else np.nan
    shift = stats.detectable_paired_shift(d.size, sd, alternative="greater") if d.size > 1 and sd > 0 else np.nan
    return {f"sd_{name}_difference": sd, f"detectable_{name}_difference": shift}


def _wilcoxon_less(a: np.ndarray, b: np.ndarray) -> float:
    """Wilcoxon signed-rank p that ``a`` is smaller than ``b`` (paired, one-sided; the opposite direction)."""
    return _wilcoxon_greater(b, a)


def _wilcoxon_greater(a: np.ndarray, b: np.ndarray) -> float:
    ok = np.isfinite(a) & np.isfinite(b)
    if ok.sum() < 2 or np.allclose(a[ok], b[ok]):
        return float("nan")
    return float(scipy.stats.wilcoxon(a[ok], b[ok], alternative="greater").pvalue)


def summarize(position_rows: list[dict], point_rows: list[dict], visits: list[int]):
    """(summary rows per estimator, test rows against the median at the most visits)."""
    estimators = [ROOT, *[f"median {v}" for v in visits]]
    best = f"median {max(visits)}"
    data = {e: per_game(position_rows, point_rows, e, best) for e in estimators}
    reference = np.array([float(pt["reference_margin"]) for pt in point_rows])
    summary = []
    for e in estimators:
        d = data[e]
        err = d["error"][np.isfinite(d["error"])]
        mae, half = stats.mean_interval(np.abs(err), t=True) if err.size > 1 else (np.nan, np.nan)
        lo, hi = mae - half, mae + half
        estimate = d["error"] + reference
        same_side = np.mean(np.sign(estimate) == np.sign(reference)) if len(reference) else np.nan
        summary.append({
            "estimator": e,
            "games": int(np.isfinite(d["neighbour"]).sum()),
            "neighbour_change": float(np.nanmean(d["neighbour"])),
            "neighbour_change_median": float(np.nanmedian(d["neighbour"])),
            "visit_change": float(np.nanmean(d["visit"])),
            "mean_error": float(err.mean()) if err.size else np.nan,
            "sd_error": float(err.std(ddof=1)) if err.size > 1 else np.nan,
            "mean_abs_error": float(np.abs(err).mean()) if err.size else np.nan,
            "mae_lo": lo,
            "mae_hi": hi,
            "winner_side": float(same_side),
        })  # fmt: skip
    tests = []
    for e in estimators:
        if e == best:
            continue
        tests.append({
            "estimator": e,
            "against": best,
            "games": int(np.isfinite(data[e]["neighbour"]).sum()),
            "neighbour_change": float(np.nanmean(data[e]["neighbour"])),
            "against_neighbour_change": float(np.nanmean(data[best]["neighbour"])),
            "p_neighbour_greater": _wilcoxon_greater(data[e]["neighbour"], data[best]["neighbour"]),
            "p_neighbour_less": _wilcoxon_less(data[e]["neighbour"], data[best]["neighbour"]),
            "mean_abs_error": float(np.nanmean(np.abs(data[e]["error"]))),
            "against_mean_abs_error": float(np.nanmean(np.abs(data[best]["error"]))),
            "p_abs_error_greater": _wilcoxon_greater(np.abs(data[e]["error"]), np.abs(data[best]["error"])),
            **_detectable("neighbour", data[e]["neighbour"] - data[best]["neighbour"]),
            **_detectable("abs_error", np.abs(data[e]["error"]) - np.abs(data[best]["error"])),
        })  # fmt: skip
    return summary, stat_tables.correct(tests, "p_neighbour_greater", "p_neighbour_less", "p_abs_error_greater")


def format_table(summary: list[dict], games: int) -> str:
    header = ["estimator", "games", "neighbour change", "visit change", "mean error ± sd", "MAE [95% t]", "winner side"]
    rows = [
        [
            r["estimator"],
            f"{r['games']}/{games}",
            f"{r['neighbour_change']:.2f}",
            f"{r['visit_change']:.2f}",
            f"{r['mean_error']:+.2f} ± {r['sd_error']:.2f}",
            f"{r['mean_abs_error']:.2f} [{r['mae_lo']:.2f}, {r['mae_hi']:.2f}]",
            f"{100 * r['winner_side']:.0f}%",
        ]
        for r in summary
    ]
    return common.markdown_table(header, rows)


def plot(position_rows: list[dict], summary: list[dict], path: str) -> str:
    """Left: each estimator's mean |change| from the resign point by offset; right: neighbour change and MAE."""
    plt = common.pyplot()
    fig, (ax, bx) = plt.subplots(1, 2, figsize=(11, 4))
    estimators = [r["estimator"] for r in summary]
    at_zero = {(int(r["game"]), r["estimator"]): float(r["estimate"]) for r in position_rows if int(r["offset"]) == 0}
    for e in estimators:
        by_offset: dict[int, list[float]] = {}
        for r in position_rows:
            if r["estimator"] == e and (int(r["game"]), e) in at_zero:
                by_offset.setdefault(int(r["offset"]), []).append(
                    abs(float(r["estimate"]) - at_zero[int(r["game"]), e])
                )
        xs = sorted(by_offset)
        ax.plot(xs, [np.mean(by_offset[x]) for x in xs], "o-", label=e)
    ax.set_xlabel("plies from the resign point")
    ax.set_ylabel("mean |estimate − estimate at the resign point| (points)")
    ax.set_title("how far each estimate moves in the same game")
    ax.legend(fontsize=8)
    x = np.arange(len(summary))
    bx.bar(x - 0.2, [r["neighbour_change"] for r in summary], 0.4, label="neighbour change")
    mae = np.array([r["mean_abs_error"] for r in summary])
    err = np.array([[m - r["mae_lo"], r["mae_hi"] - m] for m, r in zip(mae, summary)]).T
    bx.bar(x + 0.2, mae, 0.4, yerr=err, capsize=3, label="|error| vs strong continuation")
    bx.set_xticks(x, estimators, rotation=20)
    bx.set_ylabel("points")
    bx.set_title("stability and accuracy at the resign point")
    bx.legend(fontsize=8)
    fig.tight_layout()
    return common.save_figure(fig, path)


def main(argv=None, *, exit_on_error: bool = False) -> int:
    """The command line: a flag per field of :class:`Settings`."""
    return common.main(__name__, argv, exit_on_error=exit_on_error)


if __name__ == "__main__":
    raise SystemExit(main(exit_on_error=True))
