"""Learning curves of training runs for the claims that compare runs (the ablation, the sharp value).

A run is ``NAME=WORKDIR[@GENERATION]`` (:func:`parse_arms`); its curve is one row per generation of its
``metrics.jsonl`` (:func:`learning_curve`), kept in a CSV so that it outlives the workdir.
"""

from __future__ import annotations

import os
from collections.abc import Collection, Sequence

from experiments.lib import common

__all__ = ["CURVE_KEYS", "d4_from", "learning_curve", "parse_arms"]

CURVE_KEYS = (
    "alpha_empty",
    "beta_empty",
    "score_error",
    "score_error_late",
    "beta_late",
    "sharp_late_fraction",
    "score_error_sharp_late",
    "first_move",
    "black_winrate",
    "avg_game_length",
    "resignations",
    "games",
    "train_policy_loss",
    "train_value_loss",
    "train_ownership_loss",
)


def parse_arms(text: str | Sequence[str], *, may_be_gone: Collection[str] = ()) -> list[tuple[str, str, int | None]]:
    """``"NAME=WORKDIR[@GENERATION],..."`` (or a sequence of those) as (name, workdir, generation) triples.

    Every arm needs a name. ``@G`` takes the run up to generation G (its
    curve and its checkpoint G, which must be kept), e.g. the first 36
    generations of a longer run as an arm at the ablation's budget; without
    it, the whole run and its newest checkpoint. Every WORKDIR must exist,
    except those of the arms named in ``may_be_gone`` (the caller keeps what
    it has of them).
    """
    arms = []
    for name, spec in common.parse_nets(text):
        if not name:
            raise ValueError(f"arms: give each arm as NAME=WORKDIR, got {spec!r}")
        workdir, at, generation = spec.rpartition("@") if "@" in spec else (spec, "", "")
        if at and not generation.isdigit():
            raise ValueError(f"arms: arm {name!r}: the generation after '@' must be an int >= 0, got {generation!r}")
        if not os.path.isdir(workdir) and name not in may_be_gone:
            raise FileNotFoundError(f"arms: arm {name!r}: no workdir {workdir}")
        arms.append((name, workdir, int(generation) if at else None))
    return arms


def learning_curve(name: str, workdir: str, upto: int | None = None, keys=CURVE_KEYS) -> list[dict]:
    """One row per generation of a run (up to ``upto``): cumulative evaluations (M), minutes and the
    metrics ``keys``."""
    metrics = common.read_metrics(workdir)
    if not metrics:
        raise ValueError(f"arm {name!r}: {workdir} has no metrics.jsonl lines")
    if upto is not None and upto not in metrics:
        raise ValueError(f"arm {name!r}: {workdir} has no metrics for generation {upto}")
    return [{"arm": name} | row for row in common.learning_curve(metrics, keys, upto)]


def d4_from(curve: list[dict], move: str = "D4") -> int | str:
    """The first generation from which the net's first move stays ``move`` ("" if it never settles)."""
    since = ""
    for r in curve:
        if r["first_move"] == move:
            since = r["generation"] if since == "" else since
        else:
            since = ""
    return since
