"""The sharp recipe's end checks on one seed's net: the fair komi through GTP, and GNU Go level 10.

    python experiments/sharp_recipe/end_checks.py --net=experiments/legs/sharp_s0/leg --seed_name="seed 0" \\
        --outdir=experiments/sharp_recipe/results/main/end_checks/seed0 \\
        --table=experiments/sharp_recipe/results/main/end_checks.csv

Issue 63's play targets for a seed that has reached α_∅ ≈ 9 and β_∅ ≥ 2,
measured as the sharp value's round 16 measured `go7-sharp`
(experiments/sharp_value/README.md, "the end checks"):

* **GTP** (``gtp_fair_komi``, the engine through a real pipe, λ = μ = 0,
  ``--gtp_visits`` 64, the engine's default search unless
  ``--gtp_algorithm``): Black's empty-board win rate at komi 8.5 and 9.5;
  the targets ≥ 0.5, ≤ 0.5 and a gap of at least 0.4. One deterministic
  search each: a measurement, without an interval.
* **GNU Go level 10** (``gnugo_strength``: ``--never-resign``, played out,
  Tromp–Taylor, GNU Go's first ``--engine_opening_moves`` moves drawn among
  those it rates at least half as high as its best, the net deterministic):
  ``--games`` games as Black at komi 8.5 and as White at 9.5, PUCT at
  ``--gnugo_visits`` 256 (the visits the README states for play on 7×7);
  the targets 38 of 40 each, with a 95% Wilson interval.

``--net`` is a checkpoint, a workdir or a leg (its newest generation), or
``zoo:NAME``. The games and answers go to ``--outdir`` (``gtp/``,
``gnugo/``); the five rows (seed, target, figure, interval, met, generation,
net) are merged into ``--table`` (rows of other seeds kept, this seed's
replaced), which ``experiments/sharp_recipe/config.py`` reads as
``end_checks``.
"""

from __future__ import annotations

import dataclasses
import os

from experiments.gnugo_strength import gnugo_strength
from experiments.gtp_fair_komi import gtp_fair_komi
from experiments.lib import common
from experiments.lib.common import setting
from saijax.analysis import stats

KOMIS = (8.5, 9.5)
WINS_NEEDED = 38  # of 40 games a colour


@dataclasses.dataclass(frozen=True, kw_only=True)
class Settings(common.Settings):
    """The settings (the module docstring)."""

    outdir: str = "end_checks"
    net: str = setting(help="the seed's net: a checkpoint, workdir or leg (newest generation), or zoo:NAME")
    seed_name: str = setting("seed 0", "the seed's name in the targets table (recipe.py's names)")
    table: str = setting("", "the end-checks CSV to merge this seed's rows into (default: <outdir>/end_checks.csv)")
    seed: int = 0
    board_size: int = 7
    gtp_visits: int = 64
    gtp_algorithm: str = setting("gumbel", "the GTP engine's search (its default; go7-sharp's figures)")
    gnugo_visits: int = 256
    games: int = setting(40, "games against GNU Go a colour")
    level: int = 10
    engine_opening_moves: int = 4
    skip_gnugo: bool = setting(False, "only the GTP check")

    def check(self) -> None:
        super().check()
        if self.games < 1:
            raise self.error("games", "needs an int >= 1")
        if self.gtp_algorithm not in ("gumbel", "puct"):
            raise self.error("gtp_algorithm", "use gumbel or puct")


def _checkpoint(net: str) -> tuple[str, int | str]:
    """(player spec, generation) of ``--net``: a leg or workdir is its newest kept generation."""
    if net.startswith("zoo:") or not os.path.isdir(os.path.join(net, "checkpoints")):
        return net, ""
    generation = common.kept_generations(net)[-1]
    return os.path.join(net, "checkpoints", str(generation)), generation


def rows_from(seed: str, gtp: dict, gnugo: list[dict], generation, net: str) -> list[dict]:
    """The end-check rows of one seed from gtp_fair_komi's summary row and gnugo_strength's summary rows."""
    low, high = gtp[f"black_winrate_{KOMIS[0]:g}"], gtp[f"black_winrate_{KOMIS[1]:g}"]
    one = "one deterministic search"
    out = [
        dict(target="gtp_black_winrate_komi_8.5", figure=round(low, 3), interval=one, met=low >= 0.5),
        dict(target="gtp_black_winrate_komi_9.5", figure=round(high, 3), interval=one, met=high <= 0.5),
        dict(target="gtp_gap", figure=round(low - high, 3), interval=one, met=low - high >= gtp_fair_komi.TARGET_DROP),
    ]
    for colour, komi in (("black", KOMIS[0]), ("white", KOMIS[1])):
        row = next((r for r in gnugo if r["colour"] == colour and float(r["komi"]) == komi), None)
        if row is None:
            continue
        wins, games = float(row["wins"]), int(row["games"])
        lo, hi = stats.wilson_interval(wins, games)
        out.append(
            dict(target=f"gnugo_{colour}_wins_komi_{komi:g}", figure=f"{wins:g}/{games}",
                 interval=f"{lo:.2f}-{hi:.2f} (Wilson 95%)", met=wins >= WINS_NEEDED * games / 40)
        )  # fmt: skip
    return [dict(seed=seed, **r, generation=generation, net=net) for r in out]


def merge(path: str, seed: str, rows: list[dict]) -> list[dict]:
    """``path``'s rows of the other seeds, then ``rows``; written back to ``path``."""
    kept = [r for r in common.read_csv(path, text=("seed", "target", "figure", "interval", "met", "net"))
            if r["seed"] != seed] if os.path.exists(path) else []  # fmt: skip
    merged = kept + rows
    common.write_csv(path, merged)
    return merged


def run(settings: Settings) -> list[dict]:
    """Plays the end checks of one seed's net and merges its rows into the table; returns them."""
    spec, generation = _checkpoint(settings.net)
    common_fields = dict(seed=settings.seed, board_size=settings.board_size)
    gtp = gtp_fair_komi.run(
        gtp_fair_komi.Settings(outdir=os.path.join(settings.outdir, "gtp"), nets=(f"net={spec}",), komis=KOMIS,
                               visits=settings.gtp_visits, algorithm=settings.gtp_algorithm, **common_fields)
    )[0]  # fmt: skip
    gnugo = []
    if not settings.skip_gnugo:
        gnugo = gnugo_strength.run(
            gnugo_strength.Settings(
                outdir=os.path.join(settings.outdir, "gnugo"), nets=(f"net={spec}",), games=settings.games,
                visits=settings.gnugo_visits, algorithm="puct", gumbel_scale=0.0, level=settings.level,
                black_komi=KOMIS[0], white_komi=KOMIS[1], engine_opening_moves=settings.engine_opening_moves,
                **common_fields)
        )  # fmt: skip
    rows = rows_from(settings.seed_name, gtp, gnugo, generation, settings.net)
    table = settings.table or os.path.join(settings.outdir, "end_checks.csv")
    merge(table, settings.seed_name, rows)
    for r in rows:
        print(f"{r['seed']}: {r['target']} {r['figure']} ({r['interval']}): {'met' if r['met'] else 'not met'}")
    print(f"wrote {table}")
    return rows


def main(argv=None, *, exit_on_error: bool = False) -> int:
    """The command line: a flag per field of :class:`Settings`."""
    return common.main(__name__, argv, exit_on_error=exit_on_error)


if __name__ == "__main__":
    raise SystemExit(main(exit_on_error=True))
