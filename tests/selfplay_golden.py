"""The golden self-play of tests/selfplay_loop_test.py: what a fixed-seed run writes.

    python tests/selfplay_golden.py   # rewrites tests/data/selfplay_golden.json

A 5×5 run of configs/tiny.py with every record a row can carry (ownership
and opponent-policy targets, resignations allowed in a quarter of the games,
branches, blunders), 3 generations with games in flight across each
boundary. The digest is of every replay array, every SGF file and the
metrics that count games, so the test can say that a new self-play loop or
collector leaves the training rows and finished games byte for byte as they
were. It was made from the loop of the commit before issue 34's (a Python
loop per record, each chunk collected before the next was dispatched).
Regenerate it only when self-play is meant to change (and say why in the
commit).
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


def digest(workdir: str) -> dict:
    """Hashes of a run's rows and SGFs, and its game-counting metrics."""
    out = {"replay": {}, "sgf": {}, "metrics": []}
    for path in sorted(glob.glob(os.path.join(workdir, "replay", "gen_*.npz"))):
        with np.load(path) as data:
            out["replay"][os.path.basename(path)] = {
                name: hashlib.sha256(np.ascontiguousarray(data[name]).tobytes()).hexdigest()[:16]
                + f" {data[name].dtype} {list(data[name].shape)}"
                for name in sorted(data.files)
            }
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
