"""What a run reports (docs/design.md §6, §7): the per-generation metrics line
in ``<workdir>/metrics.jsonl`` (and TensorBoard), the generation's log line,
the warning when self-play looks collapsed, and progress bars.

``saijax.learn.pipeline`` re-exports :class:`MetricsWriter`,
:func:`logged_generations`, :func:`collapse_warning` and its thresholds.
"""

from __future__ import annotations

import json
import math
import os
import re
import sys
from typing import Any

import numpy as np

from saijax.analysis import stats

__all__ = [
    "MetricsWriter",
    "logged_generations",
    "jsonable",
    "generation_line",
    "collapse_warning",
    "progress_bar",
    "SHORT_GAME_FRACTION",
    "OPENING_PASS_P",
    "PASS_PRIOR_FRACTION",
]


class MetricsWriter:
    """Per-generation metrics as JSONL (pandas-readable) and TensorBoard events.

    A metric that is undefined in a generation (e.g. ``score_error_sharp_late``
    when no late position had β > 5) is NaN in the JSONL and left out of
    TensorBoard, which would warn about it.
    """

    def __init__(self, workdir: str):
        self.path = os.path.join(workdir, "metrics.jsonl")
        self._tb = None
        try:
            from tensorboardX import SummaryWriter  # no TensorFlow needed

            self._tb = SummaryWriter(os.path.join(workdir, "tensorboard"))
        except ImportError:  # pragma: no cover - optional
            pass

    def generations(self) -> set[int]:
        """Generations that already have a metrics line."""
        return logged_generations(self.path)

    def repair(self, log) -> list[str]:
        """Drops the lines a kill mid-write left torn (not JSON), rewriting the
        file atomically, and warns through ``log`` with the generation each
        was for (read from its first characters when they hold it). The run
        then writes a dropped generation's line again from its checkpoint.

        A kill that cut only the last line's newline leaves a whole line;
        it is kept and given its newline (the file is rewritten the same
        way), so that the next line is not appended onto it. Returns the
        warnings."""
        if not os.path.exists(self.path):
            return []
        with open(self.path, encoding="utf-8", errors="replace") as f:
            lines = f.readlines()
        kept, warnings = [], []
        unterminated = bool(lines) and not lines[-1].endswith("\n")  # the next write would join it
        for number, line in enumerate(lines, 1):
            if not line.strip():
                continue
            try:
                generation = int(json.loads(line)["generation"])
            except (ValueError, KeyError, TypeError):
                found = re.match(r'\s*\{\s*"generation"\s*:\s*(\d+)', line)
                which = f"generation {found.group(1)}'s" if found else "an unreadable"
                warnings.append(
                    f"warning: {self.path} line {number} is torn (a kill while it was written): dropped "
                    f"{which} metrics line ({len(line)} bytes); the checkpoint's copy is written again"
                )
                continue
            if not line.endswith("\n"):  # the last line, whole but for its newline
                warnings.append(
                    f"warning: {self.path} line {number} lacks its newline (a kill while it was written): "
                    f"kept generation {generation}'s line and added the newline"
                )
                line += "\n"
            kept.append(line)
        if warnings or unterminated:
            tmp = self.path + ".tmp"
            with open(tmp, "w", encoding="utf-8") as f:
                f.writelines(kept)
                f.flush()
                os.fsync(f.fileno())
            os.replace(tmp, self.path)
            for w in warnings:
                log(w)
        return warnings

    def write(self, generation: int, metrics: dict[str, Any]):
        with open(self.path, "a") as f:
            f.write(json.dumps({"generation": generation, **metrics}, default=float) + "\n")
            f.flush()
            os.fsync(f.fileno())
        if self._tb is not None:
            for name, value in metrics.items():
                number = isinstance(value, (int, float, np.floating, np.integer)) and not isinstance(value, bool)
                if number and math.isfinite(float(value)):
                    self._tb.add_scalar(name, float(value), generation)
            self._tb.flush()

    def close(self):
        if self._tb is not None:
            self._tb.close()


def logged_generations(path: str) -> set[int]:
    """Generations with a line in a run's ``metrics.jsonl`` (none if it does not exist)."""
    if not os.path.exists(path):
        return set()
    out = set()
    with open(path) as f:
        for line in f:
            try:
                out.add(int(json.loads(line)["generation"]))
            except (ValueError, KeyError, TypeError):
                continue  # a torn last line from a kill mid-write
    return out


def jsonable(metrics: dict[str, Any]) -> dict[str, Any]:
    """``metrics`` as JSON gives them back (numpy numbers as floats): what a checkpoint stores."""
    return json.loads(json.dumps(metrics, default=float))


def progress_bar(total: int, desc: str, enabled: bool):
    """A tqdm bar on stderr, or None when ``enabled`` is False."""
    if not enabled:
        return None
    from tqdm import tqdm

    return tqdm(total=total, desc=desc, leave=False, file=sys.stderr, dynamic_ncols=True)


# Complete self-play games shorter than this fraction of N² on average mean
# self-play has collapsed: healthy runs play 0.8–1.2·N² moves on 9×9 and
# 5×5 and 0.65–0.75·N² on 7×7; collapsed PUCT runs fell to 0.16·N² on 9×9
# and 0.5·N² on 5×5 (docs/design.md §6).
SHORT_GAME_FRACTION = 1 / 2
# Self-play itself passes at the empty board when more complete games open
# with a pass than a uniform first move would, 1/(N² + 1), by a one-sided
# exact binomial test at this level: a random 5×5 net opens 6% of its games
# with a pass (1/26 = 3.8%: not a preference), a collapsing 5×5 run 13%;
# healthy 9×9 runs open with a pass in 0–1% of their games (docs/design.md §6).
OPENING_PASS_P = 0.01
# The net's prior for a pass at the empty board above this is a preference
# for passing, not the largest entry of a near-uniform prior: issue 32's
# 32-simulation run had pass as its argmax at 0.020 (1/82 = 0.012) while no
# search chose it there (docs/design.md §6).
PASS_PRIOR_FRACTION = 0.1


def collapse_warning(board_size: int, m: dict[str, Any]) -> str | None:
    """A warning when self-play looks collapsed into short pass-ended games:
    the complete games' mean length below ``SHORT_GAME_FRACTION``·N², more
    of them opening with a pass than a uniform first move would (one-sided
    exact binomial test against 1/(N² + 1) at ``OPENING_PASS_P``), or the net's
    preferred first move a pass with a prior above ``PASS_PRIOR_FRACTION``
    (``first_move_pass_prior``; without it, any preferred pass). None
    otherwise."""
    problems = []
    length = m.get("avg_game_length", float("nan"))
    if length == length and length < SHORT_GAME_FRACTION * board_size**2:
        ended = m.get("pass_ended_games", float("nan"))
        problems.append(
            f"complete games last {length:.1f} moves on average, under N²/2 = {board_size**2 / 2:g}"
            + (f" ({ended:.0%} ended by two passes)" if ended == ended else "")
        )
    opened = m.get("opening_pass_share", float("nan"))
    games = int(m.get("complete_games", 0) or 0)
    if opened == opened and games > 0:
        uniform = 1.0 / (board_size**2 + 1)
        count = int(m.get("opening_pass_games", round(opened * games)))
        p = stats.binomial_test(count, games, uniform, alternative="greater")
        if p < OPENING_PASS_P:
            problems.append(
                f"{opened:.0%} of the complete games opened with a pass ({count} of {games}; a uniform "
                f"first move: {uniform:.1%}, binomial p = {p:.2g})"
            )
    prior = m.get("first_move_pass_prior", float("nan"))
    if m.get("first_move") == "pass" and not prior <= PASS_PRIOR_FRACTION:
        problems.append(
            "the net's preferred first move is pass"
            + (f" (prior {prior:.2f})" if prior == prior else "")
            + (f"; self-play opened with a pass in {opened:.0%} of its complete games" if opened == opened else "")
        )
    if not problems:
        return None
    return "; ".join(problems) + ": self-play may be collapsing into pass-ended games (docs/design.md §6)"


def generation_line(gen: int, m: dict[str, Any]) -> str:
    """The generation's line in the run's log, from its metrics."""
    if m.get("reused_selfplay"):
        sp = "self-play reused"
    else:
        sp = (
            f"games {m['games']} ({m['branch_games']} branches) moves {m['moves']} "
            f"B-win {m['black_winrate']:.2f} resign {m['resignations']} "
            f"(false {m['false_resignations']}/{m['no_resign_games']}) len {m['avg_game_length']:.1f} "
            f"(pass-ended {m.get('pass_ended_games', float('nan')):.0%}, "
            f"pass-opened {m.get('opening_pass_share', float('nan')):.0%}) "
            f"komi {m['avg_komi']:+.1f} score err {m['score_error']:.1f}"
            f" (late {m.get('score_error_late', float('nan')):.1f}, β {m.get('beta_late', float('nan')):.2f})"
            f" data α {m.get('data_alpha', float('nan')):+.1f} β {m.get('data_beta', float('nan')):.2f}"
            f" opened {m.get('first_move_top') or '-'} {m.get('first_move_top_share', float('nan')):.0%}"
        )
    gate = ""
    if "gating_scores" in m:
        gate = f" | gate {max(m['gating_scores']):.2f} {'promoted' if m['gating_promoted'] else 'kept'}"
    return (
        f"gen {gen:4d} | net {m['network']} sims {m['simulations']} | {sp}{gate} | "
        f"α∅ {m['alpha_empty']:+.2f} β∅ {m['beta_empty']:.3f} first {m['first_move']} "
        f"(pass prior {m.get('first_move_pass_prior', float('nan')):.3f}) | "
        f"loss {m.get('train_total_loss', float('nan')):.3f} (policy {m.get('train_policy_loss', float('nan')):.3f}, "
        f"value {m.get('train_value_loss', float('nan')):.4f}"
        + (f", ownership {m['train_ownership_loss']:.4f}" if "train_ownership_loss" in m else "")
        + f") | {m['seconds']:.0f}s"
    )
