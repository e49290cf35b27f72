"""Validating SAI's score estimate of resigned games (SAI 9×9 paper, §3.6).

    python experiments/score_stability/score_estimation.py --strong=zoo:go7-S1 \\
        --opponents=zoo:go7-S1,zoo:go7-W1,zoo:go7-W2,zoo:go7-W3 --scorer=zoo:go7-S1 \\
        --games=100 --visits=32 --score_visits_list=1,100,1000 --resign_threshold=0.1 \\
        --outdir=/tmp/score_estimation

The papers score a game that ends by resignation with a fixed strong net
(S1, λ = μ = 0): the median of α + k over the nodes of a 1,000-visit search
from the position of the resignation. They found the plain α_s of that
position "fairly unstable, in particular when β_s is low" and validated the
median "by an expert player on a set of 20 games". Here the check is
automated: the strong net plays each opponent with the resign rule armed but
never obeyed (``MatchSettings.play_out``); where it first fires, the
scorer's estimate is recorded, the game goes on to two passes, and the
estimate is compared with the final Tromp–Taylor margin.

Estimators compared, on the same games (the scorer does not change the moves,
so every ``--score_visits_list`` value replays identical games):

* the scorer's median over a search of ``v`` visits, for each ``v`` of
  ``--score_visits_list`` (``v = 1`` is close to the plain α_s + k of the
  position: the root and one child);
* the resigning player's own move search (its median over ``--visits``
  visits), what saijax used before the fixed scorer.

Reported per estimator: the games where the rule fired, the mean error
(estimate − final margin, Black minus White), its standard deviation, the
mean absolute error with a 95% t interval, the share of estimates on the
winner's side (the resignation was right), and a paired t-test of the
absolute errors against the largest ``v``.

7×7 translation: komi 9.5 (9×9 used 7.5 with fair komi 7), the resign
threshold 10% (SAI's self-play used 5%–10%; in matches the paper's nets
resigned at 5%), resignation allowed from move N²/4 = 12 on.

Outputs in ``--outdir``: ``games.csv`` (every game and estimate),
``summary.csv`` and ``score_estimation.png`` (estimate against final margin).
"""

from __future__ import annotations

import dataclasses
import os
import time

import numpy as np

from experiments.lib import common
from experiments.lib.common import setting
from saijax.analysis import stats
from saijax.play import arena, match

OWN = "own search"


@dataclasses.dataclass(frozen=True, kw_only=True)
class Settings(common.MatchSettings):
    """The settings (the module docstring)."""

    games: int = setting(100, "games per opponent, colours alternating")
    visits: int = 32
    strong: str = setting("zoo:go7-S1", "[NAME=]SPEC of the net that plays every match")
    opponents: tuple[str, ...] = ("zoo:go7-S1", "zoo:go7-W1", "zoo:go7-W2", "zoo:go7-W3")
    scorer: str = "zoo:go7-S1"
    score_visits_list: tuple[int, ...] = (1, 100, 1000)
    resign_threshold: float = 0.1
    komi: float = 9.5
    opening_moves: int = setting(2, "random first moves per colour pair")

    def check(self) -> None:
        super().check()
        if self.games < 1:
            raise self.error("games", "needs an int >= 1")
        if not 0 < self.resign_threshold < 1:
            raise self.error("resign_threshold", "needs a number in (0, 1)")
        if not self.score_visits_list or min(self.score_visits_list) < 1:
            raise self.error("score_visits_list", "needs a non-empty list of ints >= 1")


def run(settings: Settings) -> dict[str, list[dict]]:
    """Plays every match at every scorer's visits and writes the tables and the PNG; returns them."""
    nets = dict(board_size=settings.board_size, options=settings.player_options(), seed=settings.seed)
    (strong,) = common.load_nets(settings.strong, **nets)
    opponents = common.load_nets(settings.opponents, **nets)
    plain = settings.player_options(lambda_=0.0, mu=0.0, threshold=0.0)
    (scorer,) = common.load_nets([("scorer", settings.scorer)], board_size=settings.board_size, options=plain)
    score_visits = list(settings.score_visits_list)
    rows = []
    for opponent in opponents:
        if opponent.name == strong.name:
            opponent = opponent.replace(name=f"{opponent.name}'")
        for v in score_visits:
            t0 = time.time()
            match_settings = match.MatchSettings(
                games=settings.games,
                komi=settings.komi,
                seed=settings.seed,
                resign_threshold=settings.resign_threshold,
                play_out=True,
                score_visits=v,
                opening_moves=settings.opening_moves,
            )
            games = arena.play_match(strong, opponent, match_settings, scorer=scorer)
            for g in games:
                rows.append({"opponent": opponent.name, "score_visits": v, **dataclasses.asdict(g)})
            fired = sum(g.resign_ply is not None for g in games)
            print(
                f"{strong.name} vs {opponent.name}, scorer {v} visits: rule fired in {fired}/{len(games)} games "
                f"({time.time() - t0:.0f}s)",
                flush=True,
            )
    common.write_csv(os.path.join(settings.outdir, "games.csv"), rows)
    summary = summarize(rows, score_visits)
    common.write_csv(os.path.join(settings.outdir, "summary.csv"), summary)
    print(format_table(summary))
    plot(rows, score_visits, os.path.join(settings.outdir, "score_estimation.png"))
    return {"games": rows, "summary": summary}


def _errors(rows: list[dict], visits: int, estimator: str) -> tuple[np.ndarray, np.ndarray]:
    """(estimates, final margins) of the games where the rule fired."""
    sel = [r for r in rows if r["score_visits"] == visits and r["resign_ply"] is not None]
    key = "resign_own_estimate" if estimator == OWN else "resign_estimate"
    sel = [r for r in sel if r[key] is not None and r["margin"] is not None]
    return np.array([r[key] for r in sel], float), np.array([r["margin"] for r in sel], float)


def summarize(rows: list[dict], score_visits: list[int]) -> list[dict]:
    """One row per estimator: error statistics and the paired test against the largest scorer."""
    ref_visits = max(score_visits)
    estimators = [(f"scorer {v} visits", v, "scorer") for v in score_visits]
    estimators.append((OWN, ref_visits, OWN))
    ref_est, ref_final = _errors(rows, ref_visits, "scorer")
    out = []
    for label, v, kind in estimators:
        est, final = _errors(rows, v, kind)
        err = est - final
        n = len(err)
        mae, half = stats.mean_interval(np.abs(err), t=True)
        row = {
            "estimator": label,
            "games": n,
            "mean_error": round(float(np.mean(err)), 3) if n else "",
            "sd_error": round(float(np.std(err, ddof=1)), 3) if n > 1 else "",
            "mean_abs_error": round(mae, 3),
            "mae_ci_lo": round(mae - half, 3),
            "mae_ci_hi": round(mae + half, 3),
            "winner_side": round(float(np.mean(np.sign(est) == np.sign(final))), 4) if n else "",
            "p_vs_reference": "",
        }
        same_games = n == len(ref_est) and n > 1 and np.array_equal(final, ref_final)
        if (label, kind) != (f"scorer {ref_visits} visits", "scorer") and same_games:
            row["p_vs_reference"] = round(stats.paired_t_test(np.abs(err), np.abs(ref_est - ref_final))[1], 5)
        out.append(row)
    return out


def format_table(summary: list[dict]) -> str:
    """The summary as a Markdown table."""
    header = ("estimator", "games", "mean error", "sd", "mean abs error [95%]", "on the winner's side", "paired t p")
    return common.markdown_table(
        header,
        (
            (r["estimator"], r["games"], r["mean_error"], r["sd_error"],
             f"{r['mean_abs_error']} [{r['mae_ci_lo']}, {r['mae_ci_hi']}]", r["winner_side"], r["p_vs_reference"])
            for r in summary
        ),
    )  # fmt: skip


def plot(rows: list[dict], score_visits: list[int], path: str) -> str:
    """Each estimator's estimates against the final margins; returns the PNG's path."""
    plt = common.pyplot()
    panels = [(f"scorer, {v} visits", v, "scorer") for v in score_visits] + [(OWN, max(score_visits), OWN)]
    fig, axes = plt.subplots(1, len(panels), figsize=(3.6 * len(panels), 3.6), squeeze=False)
    for ax, (title, v, kind) in zip(axes[0], panels, strict=True):
        est, final = _errors(rows, v, kind)
        ax.scatter(final, est, s=8, alpha=0.6)
        lim = max(10.0, float(np.max(np.abs(np.concatenate([est, final])))) if len(est) else 10.0)
        ax.plot([-lim, lim], [-lim, lim], color="grey", lw=0.8)
        ax.set_xlim(-lim, lim)
        ax.set_ylim(-lim, lim)
        ax.set_xlabel("final Tromp–Taylor margin (B−W)")
        ax.set_title(title)
    axes[0][0].set_ylabel("estimate where the rule fired (B−W)")
    fig.tight_layout()
    return common.save_figure(fig, path)


def main(argv=None, *, exit_on_error: bool = False) -> int:
    """The command line: a flag per field of :class:`Settings`."""
    return common.main(__name__, argv, exit_on_error=exit_on_error)


if __name__ == "__main__":
    raise SystemExit(main(exit_on_error=True))
