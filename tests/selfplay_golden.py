"""The golden self-play of tests/selfplay_loop_test.py: what a fixed-seed run writes.

    python tests/selfplay_golden.py   # rewrites tests/data/selfplay_golden.json

A 5×5 run of configs/tiny.py with every record a row can carry (ownership
and opponent-policy targets, resignations allowed in a quarter of the games,
branches, blunders), 3 generations with games in flight across each
boundary. The digest is of every replay array, every SGF file and the
metrics that count games, so the test can say that a new self-play loop or
collector leaves the training rows and finished games as they were. It was
made from the loop of the commit before issue 34's (a Python loop per
record, each chunk collected before the next was dispatched). Regenerate it
only when self-play is meant to change (and say why in the commit).

What the games decide is compared byte for byte: the SGF files, every
integer and boolean replay array (positions, moves, players, game ids,
ownership), and the metrics that count. What the net computes is compared to
:data:`FLOAT_RTOL`: XLA's CPU code differs between processors (AVX-512 or
not), so a float32 search target can move in its last bits on another
machine while every game stays the same. A float array is digested by its
shape and three sums (:func:`float_sums`), not by its bytes.
"""

from __future__ import annotations

import glob
import hashlib
import json
import os
import sys
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
GOLDEN = os.path.join(HERE, "data", "selfplay_golden.json")
TINY = os.path.join(os.path.dirname(HERE), "configs", "tiny.py")

# metrics.jsonl fields that the finished games and rows decide.
GAME_METRICS = (
    "games",
    "complete_games",
    "branch_games",
    "moves",
    "rows",
    "black_winrate",
    "draws",
    "resignations",
    "no_resign_games",
    "false_resignations",
    "avg_game_length",
    "avg_komi",
    "komi_histogram",
    "score_error",
    "score_error_positions",
    "score_error_late",
    "beta_late",
    "pass_ended_games",
    "first_pass_move",
    "median_game_length",
    "selfplay_evaluations",
    "games_in_flight",
    "branches_dropped",
    "branch_queue_size",
)


def golden_config():
    from saijax.learn import config as config_lib

    config = config_lib.load_config(TINY)
    config.generations = 3
    config.network.ownership_head = True
    config.network.opponent_policy_head = True
    config.training.ownership_weight = 1.0
    config.training.opponent_policy_weight = 0.15
    config.selfplay.games_per_generation = 12
    config.selfplay.no_resign_fraction = 0.25
    config.selfplay.resign_threshold = 0.3  # a 1×8 net's values sit near ½: some resign
    config.selfplay.sgf_games_per_generation = 4
    config.compilation_cache = False
    return config


def _round(value):
    if isinstance(value, float):
        return None if value != value else round(value, 9)
    if isinstance(value, dict):
        return {k: _round(v) for k, v in value.items()}
    return value


# Relative tolerance (and its absolute floor) for what the net computes: policy targets, resigned
# games' score estimates, and the metrics read from the net's outputs. Float32 noise between CPUs is
# about 1e-6 relative; a changed game moves these sums by far more.
FLOAT_RTOL = 1e-4
FLOAT_ATOL = 1e-6


def float_sums(array: np.ndarray) -> list[float]:
    """A float array's sum, absolute sum and position-weighted sum (weights 1..7 cycling), in float64."""
    x = np.asarray(array, np.float64).ravel()
    weights = np.arange(x.size) % 7 + 1
    return [_round(float(v)) for v in (x.sum(), np.abs(x).sum(), (x * weights).sum())]


def array_digest(array: np.ndarray):
    if np.issubdtype(array.dtype, np.floating):
        return {"dtype": str(array.dtype), "shape": list(array.shape), "sums": float_sums(array)}
    return (
        hashlib.sha256(np.ascontiguousarray(array).tobytes()).hexdigest()[:16] + f" {array.dtype} {list(array.shape)}"
    )


def mismatches(got, want, where: str = "") -> list[str]:
    """Where ``got`` differs from the digest ``want``: floats beyond FLOAT_RTOL, anything else at all."""
    if isinstance(want, dict) and isinstance(got, dict):
        out = [f"{where}/{k}: missing" for k in sorted(set(want) - set(got))]
        out += [f"{where}/{k}: unexpected" for k in sorted(set(got) - set(want))]
        for k in sorted(set(want) & set(got)):
            out += mismatches(got[k], want[k], f"{where}/{k}")
        return out
    if isinstance(want, list) and isinstance(got, list):
        if len(got) != len(want):
            return [f"{where}: {len(got)} items, expected {len(want)}"]
        return [m for i, (g, w) in enumerate(zip(got, want)) for m in mismatches(g, w, f"{where}[{i}]")]
    if isinstance(want, float) and isinstance(got, (int, float)) and not isinstance(got, bool):
        if abs(got - want) <= FLOAT_ATOL + FLOAT_RTOL * abs(want):
            return []
    elif got == want and type(got) is type(want):
        return []
    return [f"{where}: {got!r}, expected {want!r}"]


def digest(workdir: str) -> dict:
    """Hashes of a run's integer rows and SGFs, sums of its float rows, and its game-counting metrics."""
    out = {"replay": {}, "sgf": {}, "metrics": []}
    for path in sorted(glob.glob(os.path.join(workdir, "replay", "gen_*.npz"))):
        with np.load(path) as data:
            out["replay"][os.path.basename(path)] = {name: array_digest(data[name]) for name in sorted(data.files)}
    for path in sorted(glob.glob(os.path.join(workdir, "sgf", "**", "*.sgf"), recursive=True)):
        with open(path, "rb") as f:
            out["sgf"][os.path.relpath(path, workdir)] = hashlib.sha256(f.read()).hexdigest()[:16]
    with open(os.path.join(workdir, "metrics.jsonl")) as f:
        for line in f:
            m = json.loads(line)
            out["metrics"].append({k: _round(m.get(k)) for k in ("generation",) + GAME_METRICS})
    return out


def run(workdir: str, walk: str = "auto") -> dict:
    """The golden run in ``workdir`` (its search's ``walk``: the games must not depend on it); its digest."""
    from saijax.learn import pipeline

    config = golden_config()
    config.search.walk = walk
    pipeline.train_and_evaluate(config, workdir, progress=False, log=lambda *_: None)
    return digest(workdir)


if __name__ == "__main__":
    sys.path.insert(0, os.path.dirname(HERE))
    with tempfile.TemporaryDirectory() as tmp:
        result = run(tmp)
    with open(GOLDEN, "w") as f:
        json.dump(result, f, indent=1, sort_keys=True)
        f.write("\n")
    print(f"wrote {GOLDEN}: {len(result['replay'])} replay files, {len(result['sgf'])} SGFs")
    print(json.dumps(result["metrics"], indent=None)[:2000])
