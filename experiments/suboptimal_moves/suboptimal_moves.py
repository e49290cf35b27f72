"""Fewer point-losing moves when winning (SAI 9×9 paper, §4.4), automated.

    python -m experiments.run --config=experiments/suboptimal_moves/config.py  # the shipped runs
    python experiments/suboptimal_moves/suboptimal_moves.py --strong=zoo:go7-S1 --opponent=zoo:go7-W3 \\
        --agents=0:0,1:0 --games=100 --visits=32 --score_visits=64 --outdir=/tmp/suboptimal_moves
    # with a winrate-head (AlphaZero-config) net of similar strength:
    python experiments/suboptimal_moves/suboptimal_moves.py ... --winrate_net=AZ=runs/go7-az

AlphaGo-style nets, trained only to win, play "suboptimal moves in the
endgame" once the game is won: moves that give away points without risking
the win. The paper shows SAI with λ > 0 keeps its winning margins high
(Table 1, Fig. 5) and an expert judged its won games. Here both are
measured, on games played out to the count (nobody resigns):

* **Winning margins.** The strong net with each ``--agents`` (λ:μ) pair, and
  optionally a winrate-head net (λ = 0 by nature), each play ``--opponent``
  (the paper's W3) with colours alternating at komi 9.5. The final
  Tromp–Taylor margins of their wins are compared (tests below).
* **Point-losing moves.** In every won game, every position is scored by a
  fixed judge (``--scorer``, at λ = μ = 0; the median of α + k over a
  ``--score_visits`` search, the papers' estimator). The judge must not be
  one of the compared nets (a net judging its own moves agrees with
  itself): by default another strong net of the zoo, go7-S2. A move of
  the winner "loses points" when the scorer's estimate from the winner's
  side drops by more than ``--loss`` (1) point over that move (the final
  position is scored by its count); the ``--opening_moves`` random opening
  moves are not the winner's choice and are not counted. Reported: such
  moves per won game, and the share after the game was decided (the
  scorer's estimate for the winner already above ``--decided`` points),
  and the won games with none.

7×7 translation: komi 9.5 (7.5 on 9×9, fair komi 9 against 7), the papers'
W3 is the zoo's go7-W3, and 1,000 visits become ``--visits``.

**The tests** (``tests.csv``), one-sided in the paper's direction, Holm
and BH beside each p column over the table: each SAI agent against the
winrate net when there is one (the paper's comparison), and each further
agent against the first (``--agents``' λ > 0 against λ = 0). Per pair:
winning margins (Welch and Mann–Whitney, larger), point-losing moves per
won game (Mann–Whitney, fewer), won games with none (Fisher, more), and
the win rates against the opponent (Fisher, two-sided: the nets should be
of similar strength), with the smallest margin difference the wins can
detect. Before it plays the script prints what ``--games`` can detect.
``--head_to_head N`` also plays the first SAI agent against the winrate
net directly, N games with colours alternating (``head_to_head.csv``: the
SAI net's win rate, Wilson interval, exact binomial test against ½).

Outputs in ``--outdir``: ``games.csv`` (every game), ``moves.csv`` (every
move of every won game: the scorer's estimate before and after, the loss),
``summary.csv``, ``tests.csv``, ``head_to_head.csv`` (with
``--head_to_head``) and ``suboptimal_moves.png``.
"""

from __future__ import annotations

import dataclasses
import os
import time

import jax
import jax.numpy as jnp
import numpy as np

from experiments.lib import claims, common, matches, paired, stat_tables
from experiments.lib.common import setting
from saijax.analysis import stats
from saijax.core import go, search, sgf
from saijax.play import arena, match, players


@dataclasses.dataclass(frozen=True, kw_only=True)
class Settings(common.MatchSettings):
    """§4.4's settings (the module docstring)."""

    games: int = setting(100, "games per condition, colours alternating")
    visits: int = 32
    strong: str = setting("zoo:go7-S1", "[NAME=]SPEC of the SAI net")
    agents: tuple[str, ...] = setting(("0:0", "1:0"), "lambda:mu of each agent of the SAI net")
    winrate_net: str = setting("", "[NAME=]SPEC of a winrate-head net of similar strength")
    opponent: str = "zoo:go7-W3"
    scorer: str = setting("zoo:go7-S2", "the fixed judge (λ = μ = 0): a net that is not one of the compared")
    score_visits: int = 64
    komi: float = 9.5
    opening_moves: int = 2
    loss: float = setting(1.0, "points a move must lose to count")
    decided: float = setting(5.0, "the winner's estimated lead that decides a game")
    summarize_only: bool = setting(
        False, "rebuild summary.csv, tests.csv and the PNG from --outdir's games.csv and moves.csv (no play)"
    )
    head_to_head: int = setting(0, "also play the first SAI agent against --winrate_net, this many games (0: none)")

    def check(self) -> None:
        super().check()
        for field in ("games", "visits", "score_visits"):
            if getattr(self, field) < 1:
                raise self.error(field, "needs an int >= 1")
        if self.head_to_head < 0 or (self.head_to_head and not self.winrate_net):
            raise self.error("head_to_head", "needs a winrate_net and a count >= 0")
        scorer = common.parse_nets(self.scorer)[0][1] if self.scorer else ""
        compared = {spec for _, spec in common.parse_nets([x for x in (self.strong, self.winrate_net) if x])}
        if scorer in compared:
            raise self.error("scorer", "is one of the compared nets; the judge of point-losing moves must be "
                                       "independent of them (another net, e.g. zoo:go7-S2)")  # fmt: skip
        for item in self.agents:
            lam, sep, mu = item.partition(":")
            try:
                search.Agent(float(lam), float(mu) if sep else 0.0)
            except ValueError as e:
                raise self.error("agents", f"{item!r}: {e}") from None


MOVE_COLUMNS = ("condition", "game", "ply", "move", "before", "after", "loss", "decided")


def conditions(settings: Settings) -> list[players.Player]:
    """The players compared: the SAI net with each agent, then the winrate net."""
    nets = dict(board_size=settings.board_size, options=settings.player_options(), seed=settings.seed)
    (strong,) = common.load_nets(settings.strong, **nets)
    out = []
    for item in settings.agents:
        lam, _, mu = item.partition(":")
        out.append(strong.with_agent(lambda_=float(lam), mu=float(mu or 0.0), rename=True))
    if settings.winrate_net:
        (az,) = common.load_nets(settings.winrate_net, **nets)
        if az.value_head != "winrate":
            print(f"note: --winrate_net {az.name} has a {az.value_head!r} head", flush=True)
        out.append(az)
    return out


def _scorer_fn(scorer: players.Player, rules: go.GoRules, visits: int):
    config = dataclasses.replace(scorer.config, num_simulations=int(visits))
    return match.search_fn(scorer.evaluator, rules, config)


def score_positions(scorer: players.Player, rules: go.GoRules, states: list[go.GoState], visits: int, seed: int):
    """Black-minus-White estimates of positions (a finished one: its count), batched by 64."""
    fn = _scorer_fn(scorer, rules, visits)
    margin = match.margin_fn(rules)
    out = np.zeros(len(states))
    batch = 64
    for start in range(0, len(states), batch):
        chunk = states[start : start + batch]
        pad = chunk + [chunk[0]] * (batch - len(chunk))
        stacked = jax.tree_util.tree_map(lambda *xs: jnp.stack(xs), *pad)
        keys = match.game_keys(jax.random.PRNGKey(seed), jnp.arange(start, start + batch), jnp.int32(0))
        res = fn(scorer.variables, keys, stacked, scorer.agent.params())
        est, to_play, done, final = jax.device_get(
            (res.score_estimate, stacked.to_play, stacked.terminated, margin(stacked))
        )
        values = np.where(done, final, np.asarray(est) * np.asarray(to_play, np.float32))
        out[start : start + len(chunk)] = values[: len(chunk)]
    return out


def winner_plies(num_moves: int, moves_first: bool, opening_moves: int) -> range:
    """The plies of the winner's own moves: its parity, after the random opening.

    The first ``opening_moves`` moves of a game are drawn at random by the
    arena (:class:`saijax.play.match.MatchSettings`), not chosen by the players,
    so they are not the winner's to count.
    """
    start = 0 if moves_first else 1
    if start < opening_moves:
        start += 2 * ((opening_moves - start + 1) // 2)
    return range(start, num_moves, 2)


def run(settings: Settings) -> dict[str, list[dict]]:
    """Plays the conditions and judges their won games (with ``summarize_only``: rebuilds the tables from
    ``outdir``'s games.csv and moves.csv); writes the tables and the PNG, returns them."""
    if settings.summarize_only:
        return summarize_only(settings)
    rules = go.GoRules(settings.board_size)
    plain = settings.player_options(lambda_=0.0, mu=0.0, threshold=0.0)
    (opponent,) = common.load_nets(settings.opponent, board_size=settings.board_size, options=plain, seed=settings.seed)
    (scorer,) = common.load_nets([("scorer", settings.scorer)], board_size=settings.board_size, options=plain)
    compared = conditions(settings)
    print(power_lines(settings.games), flush=True)
    game_rows, move_rows = [], []
    for player in compared:
        t0 = time.time()
        match_settings = match.MatchSettings(
            games=settings.games,
            komi=settings.komi,
            seed=settings.seed,
            opening_moves=settings.opening_moves,
            sgf_dir=os.path.join(settings.outdir, "sgf", player.name),
        )
        games = arena.play_match(player, opponent, match_settings)
        for g in games:
            game_rows.append({"condition": player.name, **dataclasses.asdict(g)})
        won = [g for g in games if (g.winner == "black") == (g.black == player.name) and g.winner != "draw"]
        for g in won:
            record = sgf.read_sgf(g.sgf)
            states = sgf.replay(record, rules=rules)
            est = score_positions(scorer, rules, states, settings.score_visits, settings.seed + g.game)
            sign = 1.0 if g.black == player.name else -1.0
            moves_first = (g.black == player.name) == (record.first_player == 1)
            for ply in winner_plies(len(record.moves), moves_first, settings.opening_moves):
                before, after = sign * est[ply], sign * est[ply + 1]
                move_rows.append(
                    {
                        "condition": player.name,
                        "game": g.game,
                        "ply": ply,
                        "move": go.to_gtp(rules, record.moves[ply]),
                        "before": round(float(before), 3),
                        "after": round(float(after), 3),
                        "loss": round(float(before - after), 3),
                        "decided": bool(before > settings.decided),
                    }
                )
        print(f"{player.name}: {len(won)}/{len(games)} won vs {opponent.name} ({time.time() - t0:.0f}s)", flush=True)
    common.write_csv(os.path.join(settings.outdir, "games.csv"), game_rows)
    common.write_csv(os.path.join(settings.outdir, "moves.csv"), move_rows, MOVE_COLUMNS)
    out = write_tables(settings, game_rows, move_rows, compared[-1].name if settings.winrate_net else None)
    if settings.head_to_head:
        out["head_to_head"] = head_to_head(settings, compared[0], compared[-1])
    return out


def write_tables(settings: Settings, game_rows: list[dict], move_rows: list[dict], winrate_net: str | None) -> dict:
    """summary.csv, tests.csv and the PNG from the games and the judged moves."""
    summary = summarize(game_rows, move_rows, settings)
    common.write_csv(os.path.join(settings.outdir, "summary.csv"), summary)
    print(format_table(summary))
    tests = compare(game_rows, move_rows, settings, winrate_net=winrate_net)
    common.write_csv(os.path.join(settings.outdir, "tests.csv"), tests, digits=6)
    print(format_tests(tests))
    plot(game_rows, summary, os.path.join(settings.outdir, "suboptimal_moves.png"))
    return {"games": game_rows, "moves": move_rows, "summary": summary, "tests": tests}


def net_name(text: str) -> str:
    """The name ``[NAME=]SPEC`` gets in the tables, as :func:`experiments.lib.common.load_nets` names it."""
    name, spec = common.parse_nets(text)[0]
    return name or common._default_name(spec) or spec


def read_tables(outdir: str) -> tuple[list[dict], list[dict]]:
    """``games.csv`` and ``moves.csv`` of ``outdir`` (strings, but the numbers the tables read)."""
    paths = [os.path.join(outdir, name) for name in ("games.csv", "moves.csv")]
    for path in paths:
        if not os.path.exists(path):
            raise ValueError(f"--summarize_only: {path} does not exist (run the experiment first)")
    game_rows = common.read_csv(paths[0])
    for g in game_rows:
        g["game"], g["margin"] = int(g["game"]), float(g["margin"])
    move_rows = common.read_csv(paths[1], text=("condition", "move", "decided"))
    for m in move_rows:
        m["game"], m["decided"] = int(m["game"]), m["decided"] == "True"
    return game_rows, move_rows


def claim_tests(dirs: dict[str, str], config) -> list[dict]:
    """experiments/run.py's tests: :func:`paired_tests` of each run's games.csv and moves.csv."""
    out = []
    for run, d in dirs.items():
        settings = claims.settings(config, run, outdir=d)
        winrate = net_name(settings.winrate_net) if settings.winrate_net else None
        out += paired_tests(*read_tables(d), winrate, loss=settings.loss, run=run)
    return out


def summarize_only(settings: Settings) -> dict[str, list[dict]]:
    """Rebuilds the tables from ``--outdir``'s ``games.csv`` and ``moves.csv``: the winrate net is the
    condition named by ``--winrate_net`` (or, without it, none)."""
    game_rows, move_rows = read_tables(settings.outdir)
    winrate_net = None
    if settings.winrate_net:
        winrate_net = net_name(settings.winrate_net)
        names = set(g["condition"] for g in game_rows)
        if winrate_net not in names:
            raise ValueError(f"--winrate_net {settings.winrate_net!r}: no condition {winrate_net!r} in "
                             f"{settings.outdir} (conditions: {', '.join(sorted(names))})")  # fmt: skip
    return write_tables(settings, game_rows, move_rows, winrate_net)


def power_lines(games: int) -> str:
    """What ``games`` per condition can detect, printed before playing (wins assumed 90% of the games)."""
    wins = max(2, round(0.9 * games))
    none = stat_tables.detectable_line(wins, "won games, about 90% of each condition's", (0.55, 0.75), "higher")
    margin = stats.detectable_mean_difference(1.0, wins, 1.0, wins, alternative="greater")
    return (
        "power (one-sided α 0.05, power 0.8):\n"
        f"  won games with no point-losing move: {none}\n"
        f"  winning margins (Welch): a difference of {margin:.2f} sd of the margins "
        f"({margin * 18:.1f} points at the first round's sd of 18)"
    )


def head_to_head(settings: Settings, sai: players.Player, winrate: players.Player) -> dict:
    """The SAI net against the winrate net: similar strength, as the paper's comparison assumes."""
    match_settings = match.MatchSettings(
        games=settings.head_to_head,
        komi=settings.komi,
        seed=settings.seed + 7919,
        opening_moves=settings.opening_moves,
        sgf_dir=os.path.join(settings.outdir, "sgf", "head_to_head"),
    )
    t0 = time.time()
    games = arena.play_match(sai, winrate, match_settings)
    wins = sum(g.winner == ("black" if g.black == sai.name else "white") for g in games)
    draws = sum(g.winner == "draw" for g in games)
    n = len(games)
    lo, hi = stats.wilson_interval(wins + 0.5 * draws, n)
    row = {
        "player": sai.name,
        "opponent": winrate.name,
        "games": n,
        "wins": wins,
        "draws": draws,
        "win_rate": (wins + 0.5 * draws) / n,
        "wilson_lo": lo,
        "wilson_hi": hi,
        "p_binomial_half": stats.binomial_test(wins + 0.5 * draws, n, 0.5),
        "wins_as_black": sum(g.black == sai.name and g.winner == "black" for g in games),
        "games_as_black": sum(g.black == sai.name for g in games),
    }
    common.write_csv(os.path.join(settings.outdir, "head_to_head.csv"), [row], digits=6)
    print(f"{sai.name} vs {winrate.name}: {wins}/{n} ({100 * row['win_rate']:.1f}% [{100 * lo:.0f}, {100 * hi:.0f}]), "
          f"binomial p against ½ {row['p_binomial_half']:.3g} ({time.time() - t0:.0f}s)", flush=True)  # fmt: skip
    return row


def summarize(game_rows: list[dict], move_rows: list[dict], settings: Settings) -> list[dict]:
    """One row per condition: games, distinct games, wins, winning margins and point-losing moves.

    The tests between conditions are :func:`compare`'s (``tests.csv``).
    """
    out = []
    for name in dict.fromkeys(g["condition"] for g in game_rows):
        games, margins, counts = stat_tables.point_losing_outcomes(game_rows, move_rows, name, loss=settings.loss)
        _, _, decided = stat_tables.point_losing_outcomes(
            game_rows, move_rows, name, loss=settings.loss, decided_only=True
        )
        out.append({
            "condition": name,
            "games": games,
            "distinct_games": matches.distinct_sgf_games([g.get("sgf") for g in game_rows if g["condition"] == name]),
            "wins": len(counts),
            "mean_win_margin": round(float(np.mean(margins)), 2) if margins else "",
            "sd_win_margin": round(float(np.std(margins, ddof=1)), 2) if len(margins) > 1 else "",
            "losing_moves_per_win": round(float(np.mean(counts)), 3) if counts else "",
            "losing_moves_when_decided": round(float(np.mean(decided)), 3) if decided else "",
            "won_games_with_none": sum(c == 0 for c in counts),
            "won_games_with_none_decided": sum(c == 0 for c in decided),
        })  # fmt: skip
    return out


def _pairs(names: list[str], winrate_net: str | None) -> list[tuple[str, str]]:
    """(condition, baseline): every SAI agent against the winrate net, then every further agent against the first."""
    sai = [n for n in names if n != winrate_net]
    out = [(n, winrate_net) for n in sai] if winrate_net in names else []
    return out + [(n, sai[0]) for n in sai[1:]]


def compare(game_rows: list[dict], move_rows: list[dict], settings: Settings, winrate_net: str | None) -> list[dict]:
    """The test table (:func:`experiments.lib.stat_tables.compare_point_losing` per pair), Holm/BH per column."""
    names = list(dict.fromkeys(g["condition"] for g in game_rows))
    rows = [
        stat_tables.compare_point_losing(game_rows, move_rows, name, base, loss=settings.loss)
        for name, base in _pairs(names, winrate_net)
    ]
    return stat_tables.correct(rows, *stat_tables.POINT_LOSING_TESTS, "p_fisher_two")


TEST_KEYS = ("run", "condition", "baseline", "measure")


def paired_tests(game_rows: list[dict], move_rows: list[dict], winrate_net: str | None, *, loss: float = 1.0,
                 run: str = "main") -> list[dict]:  # fmt: skip
    """The pairs of :func:`compare`, paired by game: every condition played the same seed, so game i of one
    had the same opening and colours as game i of another.

    Wins against the opponent: McNemar, two-sided (similar strength). Over
    the games both won: winning margins (Wilcoxon, larger), point-losing
    moves (Wilcoxon, fewer) and won without one (McNemar, more).
    """
    names = list(dict.fromkeys(g["condition"] for g in game_rows))
    rows = []
    for name, base in _pairs(names, winrate_net):
        (_, arm), (_, other) = (stat_tables.point_losing_by_game(game_rows, move_rows, n, loss=loss)
                                for n in (name, base))  # fmt: skip
        wins = [{int(float(g["game"])): (float(int(float(g["game"])) in won), g.get("end") == "cap")
                 for g in game_rows if g["condition"] == n} for n, won in ((name, arm), (base, other))]  # fmt: skip
        key = dict(run=run, condition=name, baseline=base)
        rows.append(dict(key, measure="wins", **paired.mcnemar(*wins)))
        for measure, value, test, alternative in (
            ("win_margin", lambda w: w["margin"], paired.wilcoxon, "greater"),
            ("losing_moves", lambda w: w["moves"], paired.wilcoxon, "less"),
            ("won_with_none", lambda w: float(w["moves"] == 0), paired.mcnemar, "greater"),
        ):
            a, b = ({k: (value(w), w["end"] == "cap") for k, w in s.items() if k in arm and k in other}
                    for s in (arm, other))  # fmt: skip
            rows.append(dict(key, measure=measure, **test(a, b, alternative)))
    return rows


def format_tests(tests: list[dict]) -> str:
    """The test table as Markdown (raw p, Holm in brackets)."""

    def p(row, col):
        return f"{row[col]:.2g} ({row[col + '_holm']:.2g})"

    header = ("condition", "against", "Δ win margin", "Welch p (Holm)", "point-losing moves per win",
              "Mann–Whitney p (Holm)", "won with none", "Fisher p (Holm)", "win rates (two-sided p)")  # fmt: skip
    return common.markdown_table(
        header,
        (
            (r["condition"], r["baseline"], f"{r['margin_diff']:+.1f}", p(r, "margin_p_welch_greater"),
             f"{r['losing_moves_per_win']:.2f} vs {r['base_losing_moves_per_win']:.2f}", p(r, "p_losing_moves_fewer"),
             f"{r['won_with_none']}/{r['won']} vs {r['base_won_with_none']}/{r['base_won']}", p(r, "p_with_none_more"),
             f"{100 * r['win_rate']:.0f}% vs {100 * r['base_win_rate']:.0f}% ({r['p_fisher_two']:.2g})")
            for r in tests
        ),
    )  # fmt: skip


def format_table(summary: list[dict]) -> str:
    """The summary as a Markdown table."""
    header = ("condition", "wins/games", "mean win margin (sd)", "point-losing moves per win",
              "of them once decided", "won games with none")  # fmt: skip
    return common.markdown_table(
        header,
        (
            (r["condition"], f"{r['wins']}/{r['games']}", f"{r['mean_win_margin']} ({r['sd_win_margin']})",
             r["losing_moves_per_win"], r["losing_moves_when_decided"], r["won_games_with_none"])
            for r in summary
        ),
    )  # fmt: skip


def plot(game_rows: list[dict], summary: list[dict], path: str) -> str:
    """Winning margins and point-losing moves per condition; returns the PNG's path."""
    plt = common.pyplot()
    names = [r["condition"] for r in summary]
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(9, 3.8))
    data = [stat_tables.point_losing_outcomes(game_rows, [], n)[1] for n in names]
    ax1.boxplot([d if len(d) else [np.nan] for d in data], showmeans=True)
    ax1.set_xticks(range(1, len(names) + 1), names, rotation=30, ha="right")
    ax1.set_ylabel("final margin of wins (points)")
    y = [r["losing_moves_per_win"] or 0 for r in summary]
    z = [r["losing_moves_when_decided"] or 0 for r in summary]
    x = np.arange(len(names))
    ax2.bar(x - 0.2, y, 0.4, label="all moves")
    ax2.bar(x + 0.2, z, 0.4, label="once decided")
    ax2.set_xticks(x, names, rotation=30, ha="right")
    ax2.set_ylabel("point-losing moves per won game")
    ax2.legend()
    fig.tight_layout()
    return common.save_figure(fig, path)


def main(argv=None, *, exit_on_error: bool = False) -> int:
    """The command line: a flag per field of :class:`Settings`."""
    return common.main(__name__, argv, exit_on_error=exit_on_error)


if __name__ == "__main__":
    raise SystemExit(main(exit_on_error=True))
