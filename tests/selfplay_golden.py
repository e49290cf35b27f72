"""The golden self-play of tests/selfplay_loop_test.py: what a fixed-seed run writes.

    python tests/selfplay_golden.py   # rewrites tests/data/selfplay_golden.json and _floats.npz

A 5×5 run of configs/tiny.py with every record a row can carry (ownership
and opponent-policy targets, resignations allowed in a quarter of the games,
branches, blunders), 3 generations with games in flight across each
boundary. The digest is of every replay array, every SGF file and the
metrics that count games, so the test can say that a new self-play loop or
collector leaves the training rows and finished games as they were. Its
games were made by the loop of the commit before issue 34's (a Python loop
per record, each chunk collected before the next was dispatched). Regenerate
it only when self-play is meant to change (and say why in the commit).

What the games decide is compared byte for byte: the SGF files, every
integer and boolean replay array (positions, moves, players, game ids,
ownership), and the metrics that count. What the net computes is compared
element by element to :data:`ARRAY_ATOL` and :data:`ARRAY_RTOL`: XLA's CPU
code differs between processors (AVX-512 or not; on an AVX-512 EPYC the
policy targets moved by about 1e-6 with every game the same), so a float32
search target can move in its last bits on another machine. The float
arrays' values are in :data:`GOLDEN_FLOATS` (``<replay file>:<array>``
keys), their dtype and shape in the JSON.
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
GOLDEN_FLOATS = os.path.join(HERE, "data", "selfplay_golden_floats.npz")
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


# Tolerances for what the net computes. FLOAT_RTOL (with its floor FLOAT_ATOL): the metrics read
# from the net's outputs. ARRAY_ATOL and ARRAY_RTOL: each element of a float replay array (policy
# and opponent-policy targets, resigned games' score estimates). Float32 noise between CPUs is about
# 1e-6; a changed search moves a target by far more.
FLOAT_RTOL = 1e-4
FLOAT_ATOL = 1e-6
ARRAY_ATOL = 1e-4
ARRAY_RTOL = 1e-4


def array_digest(array: np.ndarray):
    """An integer or boolean array's hash, dtype and shape; a float array's dtype, shape and values."""
    if np.issubdtype(array.dtype, np.floating):
        return {"dtype": str(array.dtype), "shape": list(array.shape), "values": np.asarray(array)}
    return (
        hashlib.sha256(np.ascontiguousarray(array).tobytes()).hexdigest()[:16] + f" {array.dtype} {list(array.shape)}"
    )


def _array_mismatch(got, want: np.ndarray, where: str) -> list[str]:
    got = np.asarray(got)
    if got.shape != want.shape:
        return [f"{where}: shape {list(got.shape)}, expected {list(want.shape)}"]
    close = np.isclose(got, want, rtol=ARRAY_RTOL, atol=ARRAY_ATOL, equal_nan=True)
    if close.all():
        return []
    bad = np.argwhere(~close)
    first = tuple(int(i) for i in bad[0])
    worst = float(np.nanmax(np.abs(got.astype(np.float64) - want.astype(np.float64))[~close]))
    return [
        f"{where}: {len(bad)} of {want.size} elements differ beyond atol {ARRAY_ATOL:g} + rtol {ARRAY_RTOL:g} "
        f"(the first at {list(first)}: {got[first]!r}, expected {want[first]!r}; the largest by {worst:.3g})"
    ]


def mismatches(got, want, where: str = "") -> list[str]:
    """Where ``got`` differs from the digest ``want``: float arrays element by
    element beyond ARRAY_ATOL + ARRAY_RTOL, float metrics beyond FLOAT_RTOL,
    anything else at all."""
    if isinstance(want, np.ndarray):
        return _array_mismatch(got, want, where)
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


def save(result: dict, path: str = GOLDEN, floats_path: str = GOLDEN_FLOATS) -> None:
    """Writes a digest: the float arrays' values to ``floats_path``, the rest to ``path`` (JSON)."""
    values, replay = {}, {}
    for file, arrays in result["replay"].items():
        replay[file] = {}
        for name, entry in arrays.items():
            if isinstance(entry, dict):
                values[f"{file}:{name}"] = entry["values"]
                entry = {k: v for k, v in entry.items() if k != "values"}
            replay[file][name] = entry
    with open(path, "w") as f:
        json.dump({**result, "replay": replay}, f, indent=1, sort_keys=True)
        f.write("\n")
    np.savez_compressed(floats_path, **values)


def load(path: str = GOLDEN, floats_path: str = GOLDEN_FLOATS) -> dict:
    """The digest :func:`save` wrote, the float arrays' values back in it."""
    with open(path) as f:
        result = json.load(f)
    with np.load(floats_path) as values:
        keys = set(values.files)
        for file, arrays in result["replay"].items():
            for name, entry in arrays.items():
                if isinstance(entry, dict):
                    entry["values"] = values[f"{file}:{name}"]
                    keys.discard(f"{file}:{name}")
                    if list(entry["values"].shape) != entry["shape"] or str(entry["values"].dtype) != entry["dtype"]:
                        raise ValueError(f"{floats_path}'s {file}:{name} is not the {entry['dtype']} {entry['shape']}")
    if keys:
        raise ValueError(f"{floats_path} has arrays that {path} does not list: {sorted(keys)}")
    return result


def digest(workdir: str) -> dict:
    """Hashes of a run's integer rows and SGFs, its float rows' values, and its game-counting metrics."""
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
    save(result)
    print(f"wrote {GOLDEN} and {GOLDEN_FLOATS}: {len(result['replay'])} replay files, {len(result['sgf'])} SGFs")
    print(json.dumps(result["metrics"], indent=None)[:2000])
