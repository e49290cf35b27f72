"""Picks a run's zoo nets: S1–S3 the strongest, W1–W3 at the papers' calibration gaps, measured.

    python experiments/elo_curve/zoo_select.py --workdir=runs/go7 --elo=experiments/elo_curve/results/main/elo.csv \\
        --outdir=experiments/elo_curve/results/zoo --visits=128 --games=20 --export=saijax/zoo

The SAI papers' experiments (SAI 9×9 paper §4.1) pair strong nets S1–S3
with weak nets W1–W3 chosen so that the strong nets win about 72%, 85% and
97% of their games against them. An Elo curve (``experiments/elo_curve/elo_curve.py``)
only estimates those gaps, at its own visits and from neighbouring
generations; here they are measured as the experiments play:

* S1–S3: the three best-rated generations of ``--elo`` (``elo_curve``'s
  ``elo.csv``);
* candidates: for each target win rate (``--targets``, default 0.72, 0.85,
  0.97), the ``--candidates`` generations whose Elo gap below the strong
  nets' mean is nearest the gap that win rate implies (400·log10(p/(1−p)):
  164, 301 and 604 Elo);
* each candidate plays each strong net ``--games`` games: deterministic
  search at ``--visits`` (the experiments' visits), colours alternating,
  the first ``--opening_moves`` moves of each game pair at random, komi
  ``--komi``; the strong nets' pooled win rate (draws ½) with its Wilson
  interval is the candidate's measured calibration;
* W1, W2, W3: the measured candidates assigned one to each target so that
  their measured rates rise from W1 to W3 and the summed distance to the
  targets is smallest. The Elo curve's gaps are measured at its own
  visits and between neighbours; where they miss at the experiments'
  visits, ``--extra`` adds generations to measure (a rerun plays only
  their games).

Outputs in ``--outdir``: ``games.csv`` (every game; a rerun resumes it),
``sgf/`` (one SGF per game; packed into ``sgf.tar.xz``), ``calibration.csv``
(per candidate: generation, Elo gap, games, the strong
nets' wins and rate with its interval, the target it was drawn for, and
the distinct games) and ``selection.csv`` (the six nets: role, generation,
Elo, measured rate). ``--export=DIR`` writes the six nets into the zoo
directory ``DIR`` as ``<--prefix>S1`` ... (float16 weights, half the size;
the record notes how each was chosen).

A tool over one training run, not a claim with a config
(``experiments/<claim>/config.py``): it picks the nets the claims then play, from
the run's kept checkpoints (``--workdir``, not shipped) and its Elo curve;
its results stay in the run's folder (``elo_curve/results/zoo/``).
"""

from __future__ import annotations

import dataclasses
import itertools
import math
import os
from collections.abc import Sequence

from experiments.lib import common, matches
from experiments.lib.common import setting
from saijax import zoo
from saijax.analysis import results, stats

DEFAULT_TARGETS = (0.72, 0.85, 0.97)


@dataclasses.dataclass(frozen=True, kw_only=True)
class Settings(common.MatchSettings):
    """The settings (the module docstring)."""

    games: int = setting(20, "games per (strong net, candidate)")
    visits: int = 128
    board_size: int | None = setting(None, "the checkpoints' board size (default: theirs)")
    workdir: str = setting(help="the run's workdir (its kept checkpoints, its config.json)")
    archive: str = setting("", "a zoo directory of the run's generations (python -m saijax.zoo archive), used first")
    elo: str = setting(help="the run's elo.csv (experiments/elo_curve/elo_curve.py)")
    targets: tuple[float, ...] = setting(DEFAULT_TARGETS, "the strong nets' target win rates against W1, W2, ...")
    candidates: int = setting(2, "candidate generations measured per target")
    extra: tuple[int, ...] = setting((), "more candidate generations, e.g. where the curve's gaps miss")
    komi: float = 9.5
    opening_moves: int = 2
    restart: bool = setting(False, "replay every pairing (default: resume games.csv)")
    export: str = setting("", "zoo directory to write the six nets to (e.g. saijax/zoo)")
    prefix: str = setting("go7-", "the exported entries' name prefix")
    dtype: str = setting("float16", f"the exported weights' storage: {', '.join(zoo.STORAGE_DTYPES)}")
    run: str = setting("", "the run's name in the records (default: the workdir's name)")
    train_command: str = setting("", "the command that trains the run, for the records")
    run_seed: int = setting(0, "the run's seed, for the records")

    def check(self) -> None:
        super().check()
        if self.dtype not in zoo.STORAGE_DTYPES:
            raise self.error("dtype", f"use one of {', '.join(zoo.STORAGE_DTYPES)}")


def elo_gap(rate: float) -> float:
    """The Elo difference at which the stronger side scores ``rate``: 400·log10(p / (1 − p))."""
    if not 0.0 < rate < 1.0:
        raise ValueError(f"a target win rate is in (0, 1), not {rate}")
    return 400.0 * math.log10(rate / (1.0 - rate))


def rated_generations(rows: list[dict]) -> list[dict]:
    """The rows of an ``elo.csv`` that are a run's generations (not the random net), as numbers."""
    out = []
    for r in rows:
        if str(r.get("generation", "")) == "":
            continue
        out.append(
            {
                "generation": int(float(r["generation"])),
                "elo": float(r["elo"]),
                "elo_lo": float(r["elo_lo"]),
                "elo_hi": float(r["elo_hi"]),
            }
        )
    if len(out) < 4:
        raise ValueError(f"an elo.csv needs at least 4 rated generations (S1–S3 and a weak net), found {len(out)}")
    return out


def strongest(rows: list[dict], k: int = 3) -> list[dict]:
    """The k best-rated generations, best first (ties: the later generation)."""
    return sorted(rows, key=lambda r: (-r["elo"], -r["generation"]))[:k]


def candidates(
    rows: list[dict], strong: list[dict], targets: list[float], per_target: int, extra: Sequence[int] = ()
) -> list[dict]:
    """For each target, the ``per_target`` generations (not strong) whose gap below the strong
    mean is nearest that target's Elo gap; each generation appears once (first target wins).
    ``extra`` generations are added after them, each for the target whose gap is nearest its own."""
    mean = sum(r["elo"] for r in strong) / len(strong)
    taken = {r["generation"] for r in strong}
    out = []
    for target in targets:
        want = elo_gap(target)
        pool = [r for r in rows if r["generation"] not in taken]
        pool.sort(key=lambda r: (abs((mean - r["elo"]) - want), r["generation"]))
        for r in pool[:per_target]:
            taken.add(r["generation"])
            out.append(r | {"target": target, "elo_gap": round(mean - r["elo"], 1)})
    by_gen = {r["generation"]: r for r in rows}
    for g in extra:
        if g not in by_gen:
            raise ValueError(f"--extra generation {g} is not rated in the Elo curve")
        if g in taken:
            continue
        r = by_gen[g]
        gap = mean - r["elo"]
        target = min(targets, key=lambda t: abs(gap - elo_gap(t)))
        taken.add(g)
        out.append(r | {"target": target, "elo_gap": round(gap, 1)})
    return out


def calibration_rows(
    cands: list[dict], strong: list[dict], games: list[results.GameResult], board_size: int | None = None
):
    """Per candidate: the strong nets' pooled wins (draws ½) against it, rate, Wilson interval, distinct games
    (from the SGFs, on their board size unless ``board_size``; :data:`experiments.lib.matches.NO_SGFS` without them)."""
    strong_names = {f"gen{r['generation']}" for r in strong}
    rows = []
    for c in cands:
        name = f"gen{c['generation']}"
        played = [g for g in games if name in (g.black, g.white) and ({g.black, g.white} - {name}) <= strong_names]
        wins = 0.0
        for g in played:
            other = g.white if g.black == name else g.black
            wins += results.summarize([g], other).overall.win_rate
        n = len(played)
        lo, hi = stats.wilson_interval(wins, n) if n else (float("nan"), float("nan"))
        exact = matches.distinct_sgf_games([g.sgf for g in played], board_size) if n else 0
        rows.append(
            {
                "generation": c["generation"],
                "elo": c["elo"],
                "elo_lo": c["elo_lo"],
                "elo_hi": c["elo_hi"],
                "elo_gap": c["elo_gap"],
                "target": c["target"],
                "games": n,
                "strong_wins": wins,
                "strong_rate": wins / n if n else float("nan"),
                "wilson_lo": lo,
                "wilson_hi": hi,
                "distinct_games": exact,
            }
        )
    return rows


def choose_weak(calibration: list[dict], targets: list[float]) -> list[dict]:
    """W1, W2, ...: the measured candidates assigned to the targets, one each, so that their
    measured rates rise with the targets (W1 the closest game, the last the most lopsided)
    and the summed distance |rate − target| is smallest; if no such rising assignment
    exists, the smallest summed distance without it."""
    pool = [r for r in calibration if r["games"] > 0]
    if len(pool) < len(targets):
        raise ValueError(
            f"no measured candidate left for target {targets[len(pool)]}: "
            f"{len(pool)} measured candidates for {len(targets)} targets"
        )

    def cost(assignment):
        return sum(abs(r["strong_rate"] - t) for r, t in zip(assignment, targets))

    def rising(assignment):
        return all(a["strong_rate"] <= b["strong_rate"] for a, b in zip(assignment, assignment[1:]))

    options = list(itertools.permutations(pool, len(targets)))
    ordered = [a for a in options if rising(a)]
    best = min(ordered or options, key=lambda a: (cost(a), [r["generation"] for r in a]))
    return [r | {"target": t} for r, t in zip(best, targets)]


def play(settings: Settings, strong: list[dict], cands: list[dict]) -> list[results.GameResult]:
    """Every (strong net, candidate) pairing, ``settings.games`` games each, resuming ``games.csv``."""
    gens = sorted({r["generation"] for r in strong} | {c["generation"] for c in cands})
    nets = common.run_nets(settings.workdir, settings.archive)
    specs = [(f"gen{g}", nets[g]) for g in gens]
    loaded = common.load_nets(
        specs, board_size=settings.board_size, options=settings.player_options(), zoo_dir=settings.archive or None
    )
    nets = {p.name: p for p in loaded}
    pairs = [(f"gen{s['generation']}", f"gen{c['generation']}") for c in cands for s in strong]

    return matches.play_pairings(nets, pairs, settings, sgf_root=os.path.join(settings.outdir, "sgf"))


def selection_rows(strong: list[dict], weak: list[dict]) -> list[dict]:
    keys = ("generation", "elo", "elo_lo", "elo_hi")
    rows = [
        {"role": f"S{i + 1}", **{k: r[k] for k in keys}, "target": "", "strong_rate": ""} for i, r in enumerate(strong)
    ]
    for i, w in enumerate(weak):
        rows.append(
            {
                "role": f"W{i + 1}",
                "generation": w["generation"],
                "elo": w["elo"],
                "elo_lo": w["elo_lo"],
                "elo_hi": w["elo_hi"],
                "target": w["target"],
                "strong_rate": w["strong_rate"],
            }
        )
    return rows


def export(settings: Settings, selection: list[dict], elo_rows: list[dict], calibration: list[dict]) -> None:
    """The six nets into the zoo directory ``settings.export`` (float16), named ``<prefix><role>``."""
    by_gen = {r["generation"]: r for r in elo_rows}
    cal = {r["generation"]: r for r in calibration}
    config = os.path.join(settings.workdir, "config.json")
    nets = common.run_nets(settings.workdir, settings.archive)
    for row in selection:
        g = row["generation"]
        e = by_gen[g]
        if row["role"].startswith("S"):
            notes = f"strong: rank {row['role'][1:]} of the Elo curve {settings.elo}"
        else:
            c = cal[g]
            interval = f"[{100 * c['wilson_lo']:.0f}, {100 * c['wilson_hi']:.0f}]"
            notes = (
                f"weak: S1–S3 win {100 * c['strong_rate']:.1f}% {interval} "
                f"of {c['games']} games against it (target {100 * row['target']:.0f}%; deterministic, "
                f"{settings.visits} visits, komi {settings.komi}, {settings.opening_moves} random opening moves; "
                f"{os.path.join(settings.outdir, 'calibration.csv')})"
            )
        fields = dict(
            elo=e["elo"],
            elo_ci=(e["elo_lo"], e["elo_hi"]),
            run=settings.run or os.path.basename(os.path.normpath(settings.workdir)),
            command=settings.train_command or f"see {config}",
            seed=settings.run_seed,
            notes=notes,
        )
        name = f"{settings.prefix}{row['role']}"
        if nets[g].startswith(zoo.PREFIX):  # archived: the very bytes the games were played with
            record = zoo.copy_entry(
                nets[g][len(zoo.PREFIX) :], settings.archive, name, directory=settings.export, **fields
            )
        else:
            record = zoo.export(nets[g], name, directory=settings.export, dtype=settings.dtype, **fields)
        print(f"exported {record.name}: generation {g}, α_∅ {record.alpha_empty:+.2f}, β_∅ {record.beta_empty:.3f}")


def run(settings: Settings) -> dict:
    """Plays the candidates against the strong nets, chooses W1–W3 and writes the tables (and with ``export``
    the six nets); returns them."""
    targets = list(settings.targets)
    for t in targets:
        elo_gap(t)
    rows = rated_generations(common.read_csv(settings.elo))
    kept = set(common.run_nets(settings.workdir, settings.archive))
    missing = [r["generation"] for r in rows if r["generation"] not in kept]
    if missing:
        where = settings.workdir + (f" or {settings.archive}" if settings.archive else "")
        raise ValueError(f"--elo={settings.elo} rates generations {missing} that {where} does not keep")
    strong = strongest(rows)
    cands = candidates(rows, strong, targets, settings.candidates, list(settings.extra))
    print("strong:", ", ".join(f"gen{s['generation']} ({s['elo']:.0f})" for s in strong))
    print("candidates:", ", ".join(f"gen{c['generation']} (gap {c['elo_gap']:.0f}, for {c['target']})" for c in cands))
    games = play(settings, strong, cands)
    calibration = calibration_rows(cands, strong, games)
    common.write_csv(os.path.join(settings.outdir, "calibration.csv"), calibration, digits=4)
    weak = choose_weak(calibration, targets)
    selection = selection_rows(strong, weak)
    common.write_csv(os.path.join(settings.outdir, "selection.csv"), selection, digits=4)
    print(
        common.markdown_table(
            ["gen", "Elo gap", "target", "games", "S wins", "rate [95%]", "distinct"],
            [
                (
                    r["generation"],
                    f"{r['elo_gap']:.0f}",
                    r["target"],
                    r["games"],
                    r["strong_wins"],
                    f"{100 * r['strong_rate']:.1f}% [{100 * r['wilson_lo']:.0f}, {100 * r['wilson_hi']:.0f}]",
                    r["distinct_games"],
                )
                for r in calibration
            ],
        )
    )
    print("chosen:", ", ".join(f"{r['role']} = gen{r['generation']}" for r in selection))
    if settings.export:
        export(settings, selection, rows, calibration)
    return {"strong": strong, "calibration": calibration, "selection": selection}


def main(argv=None, *, exit_on_error: bool = False) -> int:
    """The command line: a flag per field of :class:`Settings`."""
    return common.main(__name__, argv, exit_on_error=exit_on_error)


if __name__ == "__main__":
    raise SystemExit(main(exit_on_error=True))
