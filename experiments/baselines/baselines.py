"""Equal-compute baselines: SAI vs Leela Zero Score vs AlphaZero, and SAI without branching.

    python -m experiments.run --config=experiments/baselines/config.py  # the shipped run (--config.play=True)
    baselines.run(baselines.Settings(root="runs/baselines", outdir="/tmp/baselines"))
    baselines.run(baselines.Settings(stages=("plot",), outdir="experiments/baselines/results/main"))  # redraw

Seed 004 ([LZS], docs/design.md) reports that a net trained to maximise its
score converges to a much weaker player than SAI; the SAI papers argue that
branching is what makes α and β sharp. This script trains the four arms from
the same seeds and measures them on one scale. It runs on 5×5, not 7×7: eight
7×7 runs of an hour each do not fit the 2-core CPU's session, eight 5×5 runs
of 30 generations take about 40 minutes. The arms share ``configs/go5.py``'s
net (2×32), Gumbel search (16 then 32 simulations), 256 games per generation,
window and optimiser; each changes only what it is about:

* ``SAI``: ``configs/go5.py`` (sigmoid head, komi sampled around α_∅,
  branching with probability 0.02 per move, resignation);
* ``NoBranch``: ``configs/go5_nobranch.py`` (the same, ``branch_prob = 0``);
* ``AlphaZero``: ``configs/go5_alphazero.py`` (tanh winrate head at fixed
  komi 24.5, no branching);
* ``LZS``: ``configs/go5_lzs.py`` (score head and score search at fixed
  komi 24.5, no branching, no resignation, the LZS pass rule, a 55% gate of
  40 games);
* ``LZS-nogate``: ``configs/go5_lzs_nogate.py``, the same without the gate
  (by default one seed: on 5×5 at komi 24.5 the gate seldom passes, see
  that config).

Stages (``stages``, default all, in this order):

* ``train``: ``python -m saijax.train`` for every arm and seed into
  ``<root>/<arm>_s<seed>`` (a killed run resumes where it stopped), with
  ``generations`` and a checkpoint kept every ``every`` generations.
* ``curves``: per run and generation, the self-play compute (network
  evaluations: every self-play search's simulations plus its root, summed;
  the ``selfplay_evaluations`` metric), wall time, α_∅ and β_∅, from each
  run's ``metrics.jsonl`` -> ``curves.csv``.
* ``elo``: one Elo scale for all arms. Nets: every kept generation (a
  multiple of ``every``, and the last) of every run, and the random net
  (Elo 0). Pairings: each net against the next ``neighbours`` nets of its
  own run; each net against the net of every other arm (same seed) whose
  compute is nearest its own; the random net against each run's first
  ``random_pairings`` nets. ``games`` lockstep games per pairing, colours
  alternating, komi ``komi``, ``opening_moves`` random opening moves per
  game pair, ``visits`` simulations, λ = μ = 0. One fit with
  :func:`saijax.analysis.elo.fit_elo` -> ``elo_games.csv``, ``elo.csv``.
* ``gnugo``: each run's last net against GNU Go (``level``, never
  resigning, played out, Tromp–Taylor), as Black at ``komi`` and as White
  at ``gnugo_white_komi`` (default ``komi``), ``gnugo_games`` games
  each -> ``gnugo_games.csv``, ``gnugo.csv``. On 5×5 at komi 24.5 the net
  wins as Black only by taking the whole board (perfect play), and as White
  when GNU Go does not; a White komi of 25.5 or more would be a sure win.
* ``calibration``: the last net of every SAI and NoBranch run plays
  ``calibration_games`` games against itself, played out at ``komi``
  (``opening_moves`` random moves first). At every move, the error of the
  net's predicted final margin, |α + k − final margin| for the player to
  move (k its signed komi), and its β -> ``calibration_moves.csv`` (one row
  per move) and ``calibration.csv`` (mean error and β by move-number bin).
* ``plot``: ``summary.csv`` (one row per arm: final Elo and Elo at equal
  compute with intervals, compute, wall time, GNU Go record, calibration;
  the tests against SAI) and ``baselines.png`` (Elo against compute; α_∅
  against generation; the calibration error and β by move number).

The tests (scipy.stats): an arm's Elo against SAI's at equal compute is a z
test on the two seed-averaged ratings (standard errors from the fit: are
these nets different?), and Welch's t test on the per-seed ratings (seeds as
the unit: are the arms different beyond seed noise?); GNU Go records against SAI's
by Fisher's exact test; calibration errors and late-game β (SAI vs
NoBranch) by Welch's t test on per-game means.
"""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys
import tempfile
import time

import numpy as np

from experiments.lib import common, matches
from experiments.lib.common import setting
from saijax.analysis import elo, results, stats
from saijax.cli import player as player_cli
from saijax.core import sgf, sigmoid
from saijax.play import arena, gtp_match, match, players

read_csv, write_csv = common.read_csv, common.write_csv

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ARMS = {
    "SAI": "configs/go5.py",
    "NoBranch": "configs/go5_nobranch.py",
    "AlphaZero": "configs/go5_alphazero.py",
    "LZS": "configs/go5_lzs.py",
    "LZS-nogate": "configs/go5_lzs_nogate.py",
}
STAGES = ("train", "curves", "elo", "gnugo", "calibration", "plot")
COLOURS = {
    "SAI": "tab:blue",
    "NoBranch": "tab:cyan",
    "AlphaZero": "tab:green",
    "LZS": "tab:red",
    "LZS-nogate": "tab:orange",
}
MOVE_BINS = (0, 5, 10, 15, 20, 30, 1000)


@dataclasses.dataclass(frozen=True)
class Run:
    """One training run: an arm with a seed, in its workdir."""

    arm: str
    seed: int
    workdir: str

    @property
    def label(self) -> str:
        return f"{self.arm}_s{self.seed}"


@dataclasses.dataclass(frozen=True, kw_only=True)
class Settings(common.MatchSettings):
    """The settings (the module docstring); ``stages`` say which parts run."""

    games: int = setting(20, "games per Elo pairing")
    visits: int = 32
    board_size: int | None = setting(None, "the runs' board size (default: the checkpoints')")
    root: str = setting("runs/baselines", "the runs' parent directory (<root>/<arm>_s<seed>)")
    stages: tuple[str, ...] = setting(STAGES, f"of {', '.join(STAGES)}")
    arms: tuple[str, ...] = setting(
        ("SAI", "NoBranch", "AlphaZero", "LZS", "LZS-nogate@0"),
        f"of {', '.join(ARMS)}; ARM@0@2 runs that arm with seeds 0 and 2 only",
    )
    seeds: tuple[int, ...] = setting((0, 1), "training seeds")
    generations: int = setting(30, "generations per run")
    every: int = setting(3, "rate (and keep) every k-th generation")
    neighbours: int = 2
    random_pairings: int = 2
    komi: float = setting(24.5, "Black's komi (5×5: perfect play is B+25)")
    opening_moves: int = 2
    level: int = 10
    gnugo_games: int = setting(10, "GNU Go games per net and colour")
    gnugo_visits: int = setting(64, "the net's visits against GNU Go")
    gnugo_white_komi: float | None = setting(None, "Black's komi when the net is White (default: komi)")
    calibration_games: int = setting(64, "self-play games per SAI/NoBranch net")
    late_move: int = setting(12, "β is compared on moves from this one on")
    fresh: bool = setting(
        False, "replay everything (default: keep the Elo pairings, GNU Go games and calibration nets already played)"
    )

    def check(self) -> None:
        super().check()
        for s in self.stages:
            if s not in STAGES:
                raise self.error("stages", f"unknown stage {s!r} (of {', '.join(STAGES)})")
        for entry in self.arms:
            arm, *seeds = entry.split("@")
            if arm not in ARMS:
                raise self.error("arms", f"unknown arm {arm!r} (of {', '.join(ARMS)})")
            if not all(x.isdecimal() for x in seeds):
                raise self.error("arms", f"{entry!r}: seeds after @ must be integers")
        if self.every < 1:
            raise self.error("every", "needs an int >= 1")

    def arm_seeds(self) -> dict[str, list[int]]:
        """arm -> its training seeds (its own ``ARM@s1@s2`` ones, else ``seeds``), in the order of ``arms``."""
        out = {}
        for entry in self.arms:
            arm, *seeds = entry.split("@")
            out[arm] = [int(x) for x in seeds] if seeds else list(self.seeds)
        return out


def runs(settings: Settings) -> list[Run]:
    """The runs of ``arms`` (each with ``seeds``, or its own ``ARM@s1@s2`` seeds), in that order."""
    return [
        Run(arm, seed, os.path.join(settings.root, f"{arm}_s{seed}"))
        for arm, seeds in settings.arm_seeds().items()
        for seed in seeds
    ]


# ---------------------------------------------------------------------------
# Training.


def train(settings: Settings) -> None:
    """Trains (or resumes) every arm and seed, one after the other."""
    for run in runs(settings):
        os.makedirs(run.workdir, exist_ok=True)
        cmd = [
            sys.executable,
            "-m",
            "saijax.train",
            f"--config={os.path.join(REPO, ARMS[run.arm])}",
            f"--workdir={run.workdir}",
            f"--config.seed={run.seed}",
            f"--config.generations={settings.generations}",
            f"--config.keep_checkpoint_every={settings.every}",
            "--noprogress",
        ]
        t0 = time.time()
        with open(os.path.join(run.workdir, "train.log"), "a", encoding="utf-8") as log:
            code = subprocess.call(cmd, stdout=log, stderr=subprocess.STDOUT)
        if code != 0:
            raise RuntimeError(f"training {run.label} failed (exit {code}); see {run.workdir}/train.log")
        print(f"trained {run.label} in {time.time() - t0:.0f}s", flush=True)


# ---------------------------------------------------------------------------
# Curves: compute, wall time, α_∅ per generation.


def read_metrics(workdir: str) -> dict[int, dict]:
    """generation -> the last ``metrics.jsonl`` line of that generation; an error if the run has none."""
    if not os.path.exists(os.path.join(workdir, "metrics.jsonl")):
        raise FileNotFoundError(f"{workdir} has no metrics.jsonl (train it first: the train stage)")
    return common.read_metrics(workdir)


def curves(settings: Settings) -> list[dict]:
    rows = []
    for run in runs(settings):
        metrics = read_metrics(run.workdir)
        with open(os.path.join(run.workdir, "config.json"), encoding="utf-8") as f:
            gate_games = json.load(f)["gating"]["games"]
        evaluations = minutes = gating = 0.0
        for g, m in sorted(metrics.items()):
            if "selfplay_evaluations" not in m and not m.get("reused_selfplay"):
                raise ValueError(f"{run.workdir}: generation {g} has no selfplay_evaluations metric")
            evaluations += float(m.get("selfplay_evaluations", 0))
            minutes += float(m.get("seconds", 0.0)) / 60.0
            gating += len(m.get("gating_scores", ())) * gate_games
            rows.append(
                {
                    "arm": run.arm,
                    "seed": run.seed,
                    "generation": g,
                    "evaluations": int(evaluations),
                    "minutes": round(minutes, 2),
                    "gating_games": int(gating),
                    "alpha_empty": round(float(m["alpha_empty"]), 3),
                    "beta_empty": round(float(m["beta_empty"]), 4),
                    "first_move": m.get("first_move", ""),
                    "games": m.get("games", ""),
                    "avg_game_length": m.get("avg_game_length", ""),
                    "black_winrate": m.get("black_winrate", ""),
                }
            )
    write_csv(os.path.join(settings.outdir, "curves.csv"), rows)
    return rows


# ---------------------------------------------------------------------------
# One Elo scale.


def kept_generations(workdir: str, every: int) -> list[int]:
    """The generations rated: kept checkpoints at multiples of ``every``, and the last."""
    gens = common.kept_generations(workdir)
    if not gens:
        raise FileNotFoundError(f"{workdir}/checkpoints holds no checkpoint")
    return sorted({g for g in gens if g % every == 0} | {gens[-1]})


def _player(settings: Settings, checkpoint: str, name: str, visits: int) -> players.Player:
    """A checkpoint's net with the player fields, at ``visits`` simulations."""
    options = settings.player_options(visits=visits)
    nets = [(name, checkpoint)]
    return common.load_nets(nets, board_size=settings.board_size, options=options, seed=settings.seed)[0]


def elo_pairings(nets: list[dict], neighbours: int, random_pairings: int) -> list[tuple[str, str]]:
    """The pairing graph over ``nets`` (dicts with run, seed, arm, name, evaluations), in a fixed order."""
    pairs: list[tuple[str, str]] = []
    seen: set[frozenset] = set()

    def add(a, b):
        if a != b and frozenset((a, b)) not in seen:
            seen.add(frozenset((a, b)))
            pairs.append((a, b))

    by_run: dict[str, list[dict]] = {}
    for n in nets:
        by_run.setdefault(n["run"], []).append(n)
    for chain in by_run.values():
        for i, n in enumerate(chain):
            for m in chain[i + 1 : i + 1 + neighbours]:
                add(n["name"], m["name"])
        for n in chain[:random_pairings]:
            add("random", n["name"])
    for n in nets:
        for chain in by_run.values():
            other = chain[0]
            if other["arm"] == n["arm"] or other["seed"] != n["seed"]:
                continue
            nearest = min(chain, key=lambda m: (abs(m["evaluations"] - n["evaluations"]), m["evaluations"]))
            add(n["name"], nearest["name"])
    return pairs


def rated_nets(settings: Settings) -> list[dict]:
    """The nets of the Elo graph: run, arm, seed, generation, name, compute, checkpoint."""
    compute = {}
    for row in read_csv(os.path.join(settings.outdir, "curves.csv")):
        compute[(row["arm"], int(row["seed"]), int(row["generation"]))] = row
    nets = []
    for run in runs(settings):
        for g in kept_generations(run.workdir, settings.every):
            c = compute.get((run.arm, run.seed, g))
            if c is None:
                raise ValueError(f"{run.workdir}: checkpoint {g} has no metrics line (rerun the curves stage)")
            nets.append(
                {
                    "run": run.label,
                    "arm": run.arm,
                    "seed": run.seed,
                    "generation": g,
                    "name": f"{run.label}_g{g}",
                    "evaluations": int(c["evaluations"]),
                    "minutes": float(c["minutes"]),
                    "checkpoint": os.path.join(run.workdir, "checkpoints", str(g)),
                }
            )
    return nets


def rate(settings: Settings) -> list[dict]:
    nets = rated_nets(settings)
    pool = {n["name"]: _player(settings, n["checkpoint"], n["name"], settings.visits) for n in nets}
    spec = next(iter(pool.values())).net.spec
    shape = settings.player_options(blocks=spec.blocks, filters=spec.filters, value_head="sai")
    pool["random"] = common.load_nets("random", board_size=spec.board_size, options=shape, seed=settings.seed)[0]
    pairs = elo_pairings(nets, settings.neighbours, settings.random_pairings)
    wanted = {frozenset(p) for p in pairs}
    t0 = time.time()

    def play(cell, path):
        k, (a, b) = cell
        if k % 20 == 0:
            print(f"elo: pairing {k + 1}/{len(pairs)} ({time.time() - t0:.0f}s)", flush=True)
        return arena.play_match(pool[a], pool[b], matches.pairing_settings(settings, k, path))

    table = common.play_cells(
        list(enumerate(pairs)),
        play,
        path=os.path.join(settings.outdir, "elo_games.csv"),
        games=settings.games,
        key=lambda cell: frozenset(cell[1]),
        game_key=lambda g: frozenset((g.black, g.white)),
        resume=not settings.fresh,
    )
    all_games = [g for g in table if frozenset((g.black, g.white)) in wanted]
    fit = elo.fit_elo(all_games, anchor="random")
    rows = [{"run": "", "arm": "random", "seed": "", "generation": "", "name": "random", "evaluations": 0}]
    rows += [{k: n[k] for k in ("run", "arm", "seed", "generation", "name", "evaluations", "minutes")} for n in nets]
    for r in rows:
        lo, hi = fit.ci[r["name"]]
        r.update(
            elo=round(fit.ratings[r["name"]], 1),
            elo_lo=round(lo, 1),
            elo_hi=round(hi, 1),
            elo_se=round(fit.stderr[r["name"]], 1),
            games=fit.n_games[r["name"]],
        )
    rows[0]["minutes"] = 0
    write_csv(os.path.join(settings.outdir, "elo.csv"), rows)
    print(f"elo: {len(all_games)} games, {len(pairs)} pairings in {time.time() - t0:.0f}s")
    return rows


# ---------------------------------------------------------------------------
# GNU Go.


def gnugo(settings: Settings) -> list[dict]:
    games_path = os.path.join(settings.outdir, "gnugo_games.csv")
    played = []
    if os.path.exists(games_path) and not settings.fresh:
        played = results.read_results(games_path)
    elif os.path.exists(games_path):
        os.remove(games_path)
    argv = player_cli.engine_argv(f"gnugo:{settings.level}", never_resign=True)
    white_komi = settings.komi if settings.gnugo_white_komi is None else settings.gnugo_white_komi
    rows = []
    for run in runs(settings):
        last = kept_generations(run.workdir, settings.every)[-1]
        player = None
        for colour, komi in (("black", settings.komi), ("white", white_komi)):
            games = [g for g in played if getattr(g, colour) == run.label and g.komi == komi]
            if len(games) >= settings.gnugo_games:  # resumed: this condition was played
                games = games[: settings.gnugo_games]
            else:
                if player is None:
                    checkpoint = os.path.join(run.workdir, "checkpoints", str(last))
                    player = _player(settings, checkpoint, run.label, settings.gnugo_visits)
                settings = match.MatchSettings(
                    games=settings.gnugo_games,
                    komi=komi,
                    colours="a_black" if colour == "black" else "a_white",
                    seed=settings.seed,
                    results_path=games_path,
                )
                games = gtp_match.play_gtp_match(player, argv, settings, timeout=120.0)
            rows.append(
                {
                    "arm": run.arm,
                    "seed": run.seed,
                    "generation": last,
                    "colour": colour,
                    "komi": komi,
                    "level": settings.level,
                    "visits": settings.gnugo_visits,
                    **matches.colour_record(games, run.label, colour),
                }
            )
            r = rows[-1]
            print(f"gnugo: {run.label} as {colour} (komi {komi:g}): {r['wins']}/{r['games']}", flush=True)
    write_csv(os.path.join(settings.outdir, "gnugo.csv"), rows)
    return rows


# ---------------------------------------------------------------------------
# Calibration of α and β (SAI vs NoBranch).


def move_errors(record: sgf.GameRecord, margin_black: float) -> list[dict]:
    """Per move of a played-out game: the mover's predicted margin error and β.

    ``margin_black`` is the final Tromp–Taylor margin, Black minus White, komi
    included. Each comment's α is the mover's predicted lead before komi, so
    the prediction of the final margin from the mover's side is α + k with
    k = ``sigmoid.signed_komi(komi, mover)``. Random opening moves (no α) are
    skipped.
    """
    rows = []
    mover = record.first_player
    for t, comment in enumerate(record.comments or ()):
        values = sgf.parse_move_comment(comment)
        if "alpha" in values and "beta" in values:
            predicted = values["alpha"] + float(sigmoid.signed_komi(record.komi, mover))
            actual = margin_black * mover
            rows.append(
                {
                    "move": t,
                    "predicted": round(predicted, 3),
                    "actual": actual,
                    "error": round(abs(predicted - actual), 3),
                    "beta": values["beta"],
                }
            )
        mover = -mover
    return rows


def calibration(settings: Settings) -> list[dict]:
    moves_path = os.path.join(settings.outdir, "calibration_moves.csv")
    earlier = read_csv(moves_path) if os.path.exists(moves_path) and not settings.fresh else []
    move_rows = []
    for run in runs(settings):
        if run.arm not in ("SAI", "NoBranch"):
            continue
        last = kept_generations(run.workdir, settings.every)[-1]
        done = [r for r in earlier if (r["arm"], int(r["seed"]), int(r["generation"])) == (run.arm, run.seed, last)]
        if done:  # resumed: this net was measured
            move_rows += done
            continue
        player = _player(settings, os.path.join(run.workdir, "checkpoints", str(last)), run.label, settings.visits)
        with tempfile.TemporaryDirectory() as sgf_dir:
            settings = match.MatchSettings(
                games=settings.calibration_games,
                komi=settings.komi,
                seed=settings.seed + 7,
                opening_moves=settings.opening_moves,
                score_visits=None,
                sgf_dir=sgf_dir,
            )
            games = arena.play_match(player, player.replace(name=run.label + "'"), settings)
            for g in games:
                record = sgf.read_sgf(g.sgf)
                for r in move_errors(record, float(g.margin)):
                    move_rows.append({"arm": run.arm, "seed": run.seed, "generation": last, "game": g.game, **r})
        print(f"calibration: {run.label} gen {last}: {len(games)} games", flush=True)
    if not move_rows:
        raise ValueError("calibration needs SAI or NoBranch runs (arms)")
    write_csv(moves_path, move_rows)
    rows = calibration_table(move_rows)
    write_csv(os.path.join(settings.outdir, "calibration.csv"), rows)
    return rows


def _bin(move: int) -> str:
    for lo, hi in zip(MOVE_BINS[:-1], MOVE_BINS[1:]):
        if lo <= move < hi:
            return f"{lo}-{hi - 1}" if hi < 1000 else f"{lo}+"
    raise ValueError(move)


def calibration_table(move_rows: list[dict]) -> list[dict]:
    """Mean |error| and β (with standard errors) by arm and move-number bin."""
    groups: dict[tuple[str, str], list[dict]] = {}
    for r in move_rows:
        groups.setdefault((r["arm"], _bin(int(r["move"]))), []).append(r)
    rows = []
    for (arm, b), rs in sorted(groups.items(), key=lambda kv: (kv[0][0], int(kv[0][1].split("-")[0].rstrip("+")))):
        err = np.array([float(r["error"]) for r in rs])
        beta = np.array([float(r["beta"]) for r in rs])
        rows.append(
            {
                "arm": arm,
                "moves": b,
                "positions": len(rs),
                "mean_abs_error": round(float(err.mean()), 3),
                "error_se": round(stats.standard_error(err), 3) if len(err) > 1 else 0.0,
                "mean_beta": round(float(beta.mean()), 4),
                "beta_se": round(stats.standard_error(beta), 4) if len(beta) > 1 else 0.0,
            }
        )
    return rows


# ---------------------------------------------------------------------------
# Summary, tests and figure.


def _per_game(move_rows: list[dict], arm: str, key: str, min_move: int = 0) -> np.ndarray:
    """Per-game means of ``key`` over moves >= ``min_move`` (the unit of the tests)."""
    by_game: dict[tuple, list[float]] = {}
    for r in move_rows:
        if r["arm"] == arm and int(r["move"]) >= min_move:
            by_game.setdefault((r["seed"], r["game"]), []).append(float(r[key]))
    return np.array([np.mean(v) for v in by_game.values()])


def equal_compute(elo_rows: list[dict]) -> dict[str, dict]:
    """Per run, the rated net with the most compute not above the smallest run's total."""
    by_run: dict[str, list[dict]] = {}
    for r in elo_rows:
        if r["run"]:
            by_run.setdefault(r["run"], []).append(r)
    budget = min(max(int(r["evaluations"]) for r in rs) for rs in by_run.values())
    return {
        run: max((r for r in rs if int(r["evaluations"]) <= budget), key=lambda r: int(r["evaluations"]))
        for run, rs in by_run.items()
    }


def _p(p: float) -> float:
    """A p-value to 3 significant digits, as summary.csv shows them."""
    return float(f"{p:.3g}")


def summarize(outdir: str, late_move: int = 12) -> list[dict]:
    """One row per arm from the CSVs in ``outdir`` (the rows of ``summary.csv``), with the tests against SAI."""
    out = outdir
    elo_rows = read_csv(os.path.join(out, "elo.csv"))
    curve_rows = read_csv(os.path.join(out, "curves.csv"))
    gnugo_rows = read_csv(os.path.join(out, "gnugo.csv")) if os.path.exists(os.path.join(out, "gnugo.csv")) else []
    cal_path = os.path.join(out, "calibration_moves.csv")
    move_rows = read_csv(cal_path) if os.path.exists(cal_path) else []
    at_budget = equal_compute(elo_rows)
    last: dict[str, dict] = {}
    for r in elo_rows:
        if r["run"] and (r["run"] not in last or int(r["generation"]) > int(last[r["run"]]["generation"])):
            last[r["run"]] = r
    totals: dict[str, dict] = {}
    for r in curve_rows:
        totals[f"{r['arm']}_s{r['seed']}"] = r  # the last generation's cumulative row

    def arm_runs(arm):
        return sorted(run for run in last if last[run]["arm"] == arm)

    def mean_se(rows):
        e = np.array([float(r["elo"]) for r in rows])
        se = np.array([float(r["elo_se"]) for r in rows])
        return float(e.mean()), float(np.sqrt((se**2).sum()) / len(se)), float(e.max() - e.min())

    arms = [a for a in ARMS if arm_runs(a)]
    sai_eq = mean_se([at_budget[r] for r in arm_runs("SAI")]) if "SAI" in arms else None
    sai_gnugo = [r for r in gnugo_rows if r["arm"] == "SAI"]
    rows = []
    for arm in arms:
        rs = arm_runs(arm)
        final = mean_se([last[r] for r in rs])
        eq = mean_se([at_budget[r] for r in rs])
        row = {
            "arm": arm,
            "seeds": len(rs),
            "generations": ";".join(str(last[r]["generation"]) for r in rs),
            "final_elo": round(final[0], 0),
            "final_elo_se": round(final[1], 0),
            "final_elo_per_seed": ";".join(f"{float(last[r]['elo']):.0f}" for r in rs),
            "equal_compute_evaluations": ";".join(str(at_budget[r]["evaluations"]) for r in rs),
            "equal_compute_elo": round(eq[0], 0),
            "equal_compute_elo_se": round(eq[1], 0),
            "equal_compute_elo_per_seed": ";".join(f"{float(at_budget[r]['elo']):.0f}" for r in rs),
            "seed_spread": round(eq[2], 0),
            "evaluations_total": ";".join(totals[r]["evaluations"] for r in rs),
            "minutes": ";".join(totals[r]["minutes"] for r in rs),
            "gating_games": ";".join(totals[r]["gating_games"] for r in rs),
        }
        if sai_eq is not None and arm != "SAI":
            row["elo_vs_sai"] = round(eq[0] - sai_eq[0], 0)
            row["elo_vs_sai_p"] = _p(stats.normal_test(eq[0] - sai_eq[0], float(np.hypot(eq[1], sai_eq[1]))))
            # Seeds as the unit: Welch's t on the per-seed ratings (needs 2 seeds a side).
            mine = [float(at_budget[r]["elo"]) for r in rs]
            sai = [float(at_budget[r]["elo"]) for r in arm_runs("SAI")]
            if len(mine) > 1 and len(sai) > 1:
                row["elo_vs_sai_seed_p"] = _p(stats.welch_t_test(mine, sai)[1])
        g = [r for r in gnugo_rows if r["arm"] == arm]
        if g:
            wins, n = sum(int(r["wins"]) for r in g), sum(int(r["games"]) for r in g)
            for colour in ("black", "white"):
                c = [r for r in g if r["colour"] == colour]
                row[f"gnugo_{colour}"] = f"{sum(int(r['wins']) for r in c)}/{sum(int(r['games']) for r in c)}"
            if sai_gnugo and arm != "SAI":
                sw, sn = sum(int(r["wins"]) for r in sai_gnugo), sum(int(r["games"]) for r in sai_gnugo)
                row["gnugo_vs_sai_p"] = _p(stats.fisher_win_test(wins, n, sw, sn))
        if move_rows and arm in ("SAI", "NoBranch"):
            err = _per_game(move_rows, arm, "error")
            late_beta = _per_game(move_rows, arm, "beta", min_move=late_move)
            row["calibration_games"] = len(err)
            row["mean_abs_error"] = round(float(err.mean()), 2)
            row[f"beta_from_move_{late_move}"] = round(float(late_beta.mean()), 3)
            if arm == "NoBranch" and any(r["arm"] == "SAI" for r in move_rows):
                row["error_vs_sai_p"] = _p(stats.welch_t_test(err, _per_game(move_rows, "SAI", "error"))[1])
                sai_beta = _per_game(move_rows, "SAI", "beta", min_move=late_move)
                row["beta_vs_sai_p"] = _p(stats.welch_t_test(late_beta, sai_beta)[1])
        rows.append(row)
    keys = list(dict.fromkeys(k for r in rows for k in r))
    return [{k: r.get(k, "") for k in keys} for r in rows]


def plot(outdir: str, path: str | None = None) -> str:
    """baselines.png from the CSVs in ``outdir``: Elo vs compute, α_∅, calibration."""
    plt = common.pyplot()
    elo_rows = [r for r in read_csv(os.path.join(outdir, "elo.csv")) if r["run"]]
    curve_rows = read_csv(os.path.join(outdir, "curves.csv"))
    cal_path = os.path.join(outdir, "calibration.csv")
    cal_rows = read_csv(cal_path) if os.path.exists(cal_path) else []
    fig, axes = plt.subplots(2, 2, figsize=(11, 8))
    ax = axes[0, 0]
    for run in dict.fromkeys(r["run"] for r in elo_rows):
        rs = sorted((r for r in elo_rows if r["run"] == run), key=lambda r: int(r["evaluations"]))
        x = np.array([int(r["evaluations"]) for r in rs]) / 1e6
        y = np.array([float(r["elo"]) for r in rs])
        err = [y - np.array([float(r["elo_lo"]) for r in rs]), np.array([float(r["elo_hi"]) for r in rs]) - y]
        arm = rs[0]["arm"]
        ax.errorbar(x, y, yerr=err, fmt="o-" if rs[0]["seed"] == "0" else "s--", ms=3, capsize=2, lw=1,
                    color=COLOURS.get(arm), label=run)  # fmt: skip
    ax.set_xlabel("self-play network evaluations (millions)")
    ax.set_ylabel("Elo (random net = 0)")
    ax.set_title("One Elo scale for all arms")
    ax.legend(fontsize=7, ncol=2)
    ax = axes[0, 1]
    for run in dict.fromkeys(f"{r['arm']}_s{r['seed']}" for r in curve_rows):
        rs = [r for r in curve_rows if f"{r['arm']}_s{r['seed']}" == run and r["arm"] in ("SAI", "NoBranch")]
        if rs:
            ax.plot([int(r["generation"]) for r in rs], [float(r["alpha_empty"]) for r in rs],
                    "-" if rs[0]["seed"] == "0" else "--", color=COLOURS[rs[0]["arm"]], label=run)  # fmt: skip
    ax.axhline(25, color="grey", lw=0.8, ls=":", label="perfect play (B+25)")
    ax.set_xlabel("generation")
    ax.set_ylabel("α_∅ (fair komi)")
    ax.set_title("Fair komi of the empty board")
    ax.legend(fontsize=7)
    for ax, key, label in (
        (axes[1, 0], "mean_abs_error", "mean |α + k − final margin|"),
        (axes[1, 1], "mean_beta", "mean β"),
    ):
        for arm in dict.fromkeys(r["arm"] for r in cal_rows):
            rs = [r for r in cal_rows if r["arm"] == arm]
            se = "error_se" if key == "mean_abs_error" else "beta_se"
            ax.errorbar(range(len(rs)), [float(r[key]) for r in rs], yerr=[float(r[se]) for r in rs],
                        fmt="o-", capsize=2, color=COLOURS.get(arm), label=arm)  # fmt: skip
            ax.set_xticks(range(len(rs)), [r["moves"] for r in rs])
        ax.set_xlabel("move number")
        ax.set_ylabel(label)
        ax.set_title("Calibration on played-out self-play games" if key == "mean_abs_error" else "Sharpness β")
        if cal_rows:
            ax.legend(fontsize=7)
    fig.tight_layout()
    return common.save_figure(fig, path or os.path.join(outdir, "baselines.png"))


def format_summary(rows: list[dict]) -> str:
    """The summary table as text."""
    lines = []
    for r in rows:
        line = (
            f"{r['arm']:>9s}: final Elo {r['final_elo']} ± {r['final_elo_se']} (seeds {r['final_elo_per_seed']}), "
            f"at equal compute {r['equal_compute_elo']} ± {r['equal_compute_elo_se']} "
            f"(seeds {r['equal_compute_elo_per_seed']}, spread {r['seed_spread']})"
        )
        if r.get("elo_vs_sai") not in ("", None):
            line += f", vs SAI {r['elo_vs_sai']:+} (z test p {r['elo_vs_sai_p']}"
            if r.get("elo_vs_sai_seed_p") not in ("", None):
                line += f", seeds' t test p {r['elo_vs_sai_seed_p']}"
            line += ")"
        if r.get("gnugo_black") not in ("", None):
            line += f"; GNU Go B {r['gnugo_black']} W {r['gnugo_white']}"
        lines.append(line)
    return "\n".join(lines)


# ---------------------------------------------------------------------------


def run(settings: Settings) -> list[dict]:
    """Runs the ``stages`` in order; returns the summary rows (of the ``plot`` stage)."""
    os.makedirs(settings.outdir, exist_ok=True)
    if "train" in settings.stages:
        train(settings)
    if "curves" in settings.stages:
        curves(settings)
    if "elo" in settings.stages:
        rate(settings)
    if "gnugo" in settings.stages:
        gnugo(settings)
    if "calibration" in settings.stages:
        calibration(settings)
    rows = []
    if "plot" in settings.stages:
        rows = summarize(settings.outdir, settings.late_move)
        write_csv(os.path.join(settings.outdir, "summary.csv"), rows)
        print(format_summary(rows))
        print(f"wrote {plot(settings.outdir)}")
    return rows
