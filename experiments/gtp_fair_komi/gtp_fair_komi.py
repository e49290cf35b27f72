"""Does the net know the fair komi? Black's empty-board win rate through GTP, as Lizzie asks.

    python experiments/gtp_fair_komi/gtp_fair_komi.py --nets=zoo:go7-S1,zoo:go5 --komis=8.5,9.5 --visits=64
    python experiments/gtp_fair_komi/gtp_fair_komi.py --workdir=runs/go7 --every=2 \\
        --outdir=experiments/gtp_fair_komi/results/main

For each net this starts the GTP engine as a GUI would
(``python -m saijax.gtp --player=SPEC --visits=V``, through a real pipe),
sets the board size and each komi of ``--komis`` in turn on the empty
board, and asks ``kata-genmove_analyze b``: the win rate and score lead
it reports for its chosen move (the ``order 0`` line) are what Lizzie or
Sabaki would show. λ = μ = 0 and deterministic search (the engine's
defaults); the search is Gumbel unless ``--algorithm=puct`` (SAI's, for
nets trained under it). 7×7's fair komi is 9 (perfect play: Black by 9), so a net
that knows it gives Black at least ½ at komi 8.5 and at most ½ at 9.5,
and (SAI's β_∅ > 2) a drop of at least 0.4 between them.

Outputs in ``--outdir``: ``fair_komi.csv`` (net, generation, komi, Black's
win rate, score lead, chosen move), ``summary.csv`` (per net: the win rates
at the first two komis, their drop, and whether each of the three targets
is met) and ``gtp_fair_komi.png`` (win rate against generation or net).
``--plot_only`` redraws the PNG from ``summary.csv`` (at ``--komis``).
"""

from __future__ import annotations

import dataclasses
import os
import sys

from experiments.lib import common
from experiments.lib.common import setting
from saijax.core import search
from saijax.play import gtp_client

TARGET_DROP = 0.4


@dataclasses.dataclass(frozen=True, kw_only=True)
class Settings(common.Settings):
    """The settings (the module docstring): the nets are ``nets`` or ``workdir``'s kept generations."""

    outdir: str = "gtp_fair_komi"
    seed: int = 0
    board_size: int = 7
    nets: tuple[str, ...] = ()
    workdir: str = setting("", "or: a run's workdir (its kept checkpoints)")
    every: int = setting(1, "with --workdir: every k-th kept generation")
    komis: tuple[float, ...] = setting((8.5, 9.5), "Black's komis (the first two are compared)")
    visits: int = setting(64, "the engine's --visits")
    algorithm: str = setting("gumbel", "the engine's --algorithm: gumbel or puct (SAI's)")
    timeout: float = 300.0
    plot_only: bool = setting(False, "redraw the PNG from --outdir's summary.csv")

    def check(self) -> None:
        super().check()
        if len(self.komis) < 2:
            raise self.error("komis", "give at least two komis")
        if self.algorithm not in search.ALGORITHMS:
            raise self.error("algorithm", f"one of {', '.join(search.ALGORITHMS)}")
        if not self.plot_only:
            common.check_nets(self)


def parse_analysis(reply: str) -> dict:
    """The ``order 0`` move of a ``kata-genmove_analyze`` answer: move, visits, winrate, scoreLead."""
    for chunk in reply.split("info ")[1:]:
        tokens = chunk.split()
        fields = dict(zip(tokens[0::2], tokens[1::2]))
        if fields.get("order") == "0":
            return {
                "move": fields["move"],
                "visits": int(fields["visits"]),
                "winrate": float(fields["winrate"]),
                "score_lead": float(fields["scoreLead"]),
            }
    raise ValueError(f"no 'order 0' move in the analysis answer {reply[:200]!r}")


def ask(spec: str, komis: list[float], settings: Settings) -> list[dict]:
    """Black's win rate and score lead on the empty board at each komi, from one GTP engine process."""
    argv = [sys.executable, "-m", "saijax.gtp", f"--player={spec}", f"--visits={settings.visits}"]
    argv += [f"--algorithm={settings.algorithm}"]
    argv += [f"--board_size={settings.board_size}", f"--seed={settings.seed}"]
    rows = []
    with gtp_client.GtpClient(argv, timeout=settings.timeout) as engine:
        engine.send(f"boardsize {settings.board_size}")
        for komi in komis:
            engine.send("clear_board")
            engine.send(f"komi {komi:g}")
            rows.append({"komi": komi, **parse_analysis(engine.send("kata-genmove_analyze b"))})
    return rows


def summary_row(label: str, generation, rows: list[dict], komis: list[float]) -> dict:
    low, high = (next(r for r in rows if r["komi"] == k) for k in komis[:2])
    drop = low["winrate"] - high["winrate"]
    return {
        "net": label,
        "generation": generation,
        f"black_winrate_{komis[0]:g}": low["winrate"],
        f"black_winrate_{komis[1]:g}": high["winrate"],
        "drop": drop,
        "score_lead": low["score_lead"],
        "low_komi_target": low["winrate"] >= 0.5,
        "high_komi_target": high["winrate"] <= 0.5,
        "drop_target": drop >= TARGET_DROP,
    }


def plot(summary: list[dict], komis: list[float], path: str) -> str:
    plt = common.pyplot()
    fig, ax = plt.subplots(figsize=(max(5, 0.35 * len(summary) + 2), 3.8))
    numeric = all(r["generation"] != "" for r in summary)
    x = [r["generation"] for r in summary] if numeric else list(range(len(summary)))
    for komi, marker in zip(komis[:2], "os"):
        ax.plot(x, [r[f"black_winrate_{komi:g}"] for r in summary], marker=marker, label=f"komi {komi:g}")
    ax.axhline(0.5, color="grey", ls=":", lw=0.8)
    ax.set_ylim(0, 1)
    ax.set_ylabel("Black's win rate (GTP, empty board)")
    if numeric:
        ax.set_xlabel("generation")
    else:
        ax.set_xticks(x, [r["net"] for r in summary], rotation=30, ha="right")
    ax.legend(fontsize=8)
    fig.tight_layout()
    return common.save_figure(fig, path)


def run(settings: Settings) -> list[dict]:
    """Asks every net and writes the tables and the PNG (with ``plot_only``: redraws the PNG from
    ``outdir``'s summary.csv); returns the summary rows."""
    komis = list(settings.komis)
    if settings.plot_only:
        path = os.path.join(settings.outdir, "summary.csv")
        if not os.path.exists(path):
            raise ValueError(f"--plot_only: {path} does not exist (run the experiment first)")
        summary = common.read_csv(path, text=("net", "low_komi_target", "high_komi_target", "drop_target"))
        plot(summary, komis, os.path.join(settings.outdir, "gtp_fair_komi.png"))
        return summary
    rows, summary = [], []
    for label, spec, generation in common.net_list(settings):
        asked = ask(spec, komis, settings)
        rows += [{"net": label, "generation": generation, **r} for r in asked]
        summary.append(summary_row(label, generation, asked, komis))
        s = summary[-1]
        print(
            f"{label}: Black {100 * s[f'black_winrate_{komis[0]:g}']:.1f}% at komi {komis[0]:g}, "
            f"{100 * s[f'black_winrate_{komis[1]:g}']:.1f}% at {komis[1]:g} (drop {s['drop']:+.3f})",
            flush=True,
        )
    common.write_csv(os.path.join(settings.outdir, "fair_komi.csv"), rows, digits=4)
    common.write_csv(os.path.join(settings.outdir, "summary.csv"), summary, digits=4)
    plot(summary, komis, os.path.join(settings.outdir, "gtp_fair_komi.png"))
    return summary


def main(argv=None, *, exit_on_error: bool = False) -> int:
    """The command line: a flag per field of :class:`Settings`."""
    return common.main(__name__, argv, exit_on_error=exit_on_error)


if __name__ == "__main__":
    raise SystemExit(main(exit_on_error=True))
