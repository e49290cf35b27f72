"""The vectorised collector and the dispatch-ahead loop play and record what the old ones did (issue 34).

Two checks: the collector against the one it replaced (kept below, verbatim),
record by record over chunks of a real self-play run with games pending across
chunks and generations; and a fixed-seed 3-generation run of the pipeline
against the digest of what the old loop wrote (tests/selfplay_golden.py).
"""

from __future__ import annotations

import collections
import dataclasses
import json
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import selfplay_golden

from saijax.core import go
from saijax.learn import config as config_lib
from saijax.learn import pipeline, replay, run_setup, selfplay, training


class ReferenceCollector:
    """The collector before issue 34, verbatim: a Python loop and a dict per record.

    Records of unfinished games are held until the game ends, possibly in a
    later generation; rows are tagged with the generation whose net played
    the move. With ``opponent_policy`` the rows carry opponent-reply targets
    (``TrainingRows.opponent_policy``: the next position's policy, zeros at
    a game's last position).
    """

    def __init__(self, rules: go.GoRules, *, opponent_policy: bool = False):
        self.rules = rules
        self.opponent_policy = bool(opponent_policy)
        self._pending: dict[int, list[dict[str, Any]]] = collections.defaultdict(list)

    def add_chunk(self, records: selfplay.StepRecord, generation: int):
        """Consumes a [T, B] chunk; returns (rows as TrainingRows or None, [FinishedGame])."""
        rec = jax.device_get(records)
        t_len, b = rec.active.shape
        rows: list[dict[str, Any]] = []
        finished: list[selfplay.FinishedGame] = []
        for t in range(t_len):
            for i in range(b):
                if not rec.active[t, i]:
                    continue
                gid = int(rec.game_id[t, i])
                self._pending[gid].append(
                    {
                        "planes": rec.planes[t, i],
                        "to_play": int(rec.to_play[t, i]),
                        "signed_komi": float(rec.signed_komi[t, i]),
                        "policy": rec.policy[t, i],
                        "move_number": int(rec.move_number[t, i]),
                        "is_branch": bool(rec.is_branch[t, i]),
                        "action": int(rec.action[t, i]),
                        "blunder": bool(rec.blunder[t, i]),
                        "root_alpha": float(rec.root_alpha[t, i]),
                        "root_beta": float("nan") if rec.root_beta is None else float(rec.root_beta[t, i]),
                        "generation": generation,
                    }
                )
                if rec.finished[t, i]:
                    game, game_rows = self._finish(gid, rec, t, i)
                    finished.append(game)
                    rows.extend(game_rows)
        return (self._to_rows(rows) if rows else None), finished

    def _finish(self, gid, rec, t, i):
        moves = self._pending.pop(gid)
        winner = int(rec.winner[t, i])
        margin = float(rec.margin[t, i])
        # Ownership targets: the final Tromp–Taylor owner of each point, for
        # games played out (two passes or the move cap). A resigned game's
        # final ownership is unknown: its rows get zeros and mask False.
        final_own = None
        if rec.final_ownership is not None:
            final_own = np.asarray(rec.final_ownership[t, i], np.int8)
            played_out = not bool(rec.resigned[t, i])
            if not played_out:
                final_own = np.zeros_like(final_own)
        blunders = [m["move_number"] for m in moves if m["blunder"]]
        last_blunder = max(blunders) if blunders else -1
        out = []
        for j, m in enumerate(moves):
            if m["move_number"] <= last_blunder:
                continue
            p = m["to_play"]
            opponent = {}
            if self.opponent_policy:
                # The next recorded position of this game is the one after
                # m's move (one record per move, in order); none after the
                # game's last move (passes, move cap, or a resignation).
                following = moves[j + 1] if j + 1 < len(moves) else None
                if following is not None and following["move_number"] == m["move_number"] + 1:
                    opponent = {"opponent_policy": following["policy"]}
                else:
                    opponent = {"opponent_policy": np.zeros_like(m["policy"])}
            out.append(
                {
                    "planes": m["planes"],
                    "to_play": p,
                    "policy": m["policy"],
                    "signed_komi": m["signed_komi"],
                    "z": (winner * p + 1) / 2.0,
                    "margin": margin * p,
                    "game_id": gid,
                    "move_number": m["move_number"],
                    "is_branch": m["is_branch"],
                    "generation": m["generation"],
                    **(
                        {} if final_own is None else {"ownership": final_own * np.int8(p), "ownership_mask": played_out}
                    ),
                    **opponent,
                }
            )
        game = selfplay.FinishedGame(
            game_id=gid,
            is_branch=bool(rec.is_branch[t, i]),
            komi=float(rec.komi[t, i]),
            winner=winner,
            margin=margin,
            resigned=bool(rec.resigned[t, i]),
            may_resign=bool(rec.may_resign[t, i]),
            would_resign=int(rec.would_resign[t, i]),
            length=int(rec.length[t, i]),
            start_move=moves[0]["move_number"],
            actions=tuple(m["action"] for m in moves),
            start_planes=moves[0]["planes"],
            start_to_play=moves[0]["to_play"],
            blunder_move=last_blunder,
            rows=len(out),
            # The score estimate α + k_s of every position against the final
            # Tromp–Taylor margin from its player's view (counted games only:
            # a resigned game's margin is itself an estimate).
            score_errors=()
            if bool(rec.resigned[t, i])
            else tuple(abs(m["root_alpha"] + m["signed_komi"] - margin * m["to_play"]) for m in moves),
            score_betas=() if bool(rec.resigned[t, i]) else tuple(m["root_beta"] for m in moves),
        )
        return game, out

    def _to_rows(self, rows):
        def col(name, dtype):
            return np.asarray([r[name] for r in rows], dtype=dtype)

        return replay.TrainingRows(
            planes=np.stack([r["planes"] for r in rows]).astype(np.uint8),
            to_play=col("to_play", np.int8),
            policy=np.stack([r["policy"] for r in rows]).astype(np.float32),
            signed_komi=col("signed_komi", np.float32),
            z=col("z", np.float32),
            margin=col("margin", np.float32),
            game_id=col("game_id", np.int32),
            move_number=col("move_number", np.int32),
            is_branch=col("is_branch", np.bool_),
            generation=col("generation", np.int32),
            valid=np.ones(len(rows), np.bool_),
            **(
                {
                    "ownership": np.stack([r["ownership"] for r in rows]).astype(np.int8),
                    "ownership_mask": col("ownership_mask", np.bool_),
                }
                if all("ownership" in r for r in rows)
                else {}
            ),
            **(
                {"opponent_policy": np.stack([r["opponent_policy"] for r in rows]).astype(np.float32)}
                if all("opponent_policy" in r for r in rows)
                else {}
            ),
        )

    @property
    def pending_games(self) -> int:
        return len(self._pending)


def _chunks(n_chunks=9):
    """Records of a tiny real run: 5×5, ownership and opponent-policy targets, resignations."""
    config = selfplay_golden.golden_config()
    rules = go.GoRules(5, config_lib.effective_max_moves(config))
    spec = training.network_spec(config, 0)
    built = run_setup.setup(config).build(spec)
    state = training.create_train_state(built.net, built.optimizer, jax.random.PRNGKey(1), mesh=training.make_mesh())
    variables = state.playing_variables
    sp_cfg = pipeline.selfplay_config(config)
    chunk = selfplay.make_chunk_fn(
        built.evaluator,
        rules,
        pipeline.search_config(config, 0),
        sp_cfg,
        agent=pipeline.selfplay_agent(config),
        ownership=True,
    )
    sp = selfplay.init_selfplay(rules, sp_cfg, jax.random.PRNGKey(2), 0.0, 0.3)
    out = []
    for i in range(n_chunks):
        sp, records = chunk(variables, sp, jax.random.PRNGKey(100 + i), jnp.float32(0.0), jnp.float32(0.3))
        out.append(jax.device_get(records))
    return rules, out


def _assert_rows_equal(new, old):
    assert (new is None) == (old is None)
    if new is None:
        return
    for field in dataclasses.fields(old):
        a, b = getattr(new, field.name), getattr(old, field.name)
        assert (a is None) == (b is None), field.name
        if a is not None:
            a, b = np.asarray(a), np.asarray(b)
            assert a.dtype == b.dtype and a.shape == b.shape, field.name
            assert a.tobytes() == b.tobytes(), field.name


def _assert_games_equal(new, old):
    assert len(new) == len(old)
    for x, y in zip(new, old):
        for field in dataclasses.fields(y):
            a, b = getattr(x, field.name), getattr(y, field.name)
            if isinstance(b, np.ndarray):
                assert a.dtype == b.dtype and a.tobytes() == b.tobytes(), field.name
            else:
                np.testing.assert_equal(a, b, err_msg=field.name)


@pytest.mark.slow  # about 40-65 s: in `make test-slow` (CI runs both)
def test_collector_matches_the_old_one_record_by_record():
    rules, chunks = _chunks()
    new = selfplay.GameCollector(rules, opponent_policy=True)
    old = ReferenceCollector(rules, opponent_policy=True)
    finished = 0
    for i, records in enumerate(chunks):
        generation = i // 3  # generations change with games in flight
        rows_new, games_new = new.add_chunk(records, generation)
        rows_old, games_old = old.add_chunk(records, generation)
        _assert_rows_equal(rows_new, rows_old)
        _assert_games_equal(games_new, games_old)
        assert new.pending_games == old.pending_games
        finished += len(games_old)
    assert finished >= 8 and old.pending_games > 0


@pytest.mark.skipif(jax.default_backend() != "cpu", reason="the golden digest was made on the CPU")
@pytest.mark.parametrize("walk", ["auto", pytest.param("path", marks=pytest.mark.slow)])
def test_pipeline_plays_and_records_the_golden_games(tmp_path, walk):
    golden = selfplay_golden.load()
    got = selfplay_golden.run(str(tmp_path), walk)
    assert got["sgf"] == golden["sgf"]  # the games, byte for byte
    assert selfplay_golden.mismatches(got["replay"], golden["replay"], "replay") == []
    assert selfplay_golden.mismatches(got["metrics"], golden["metrics"], "metrics") == []


def test_golden_digest_tells_float_noise_from_a_changed_game():
    digest = selfplay_golden.array_digest
    policy = np.random.default_rng(0).dirichlet(np.ones(26), size=40).astype(np.float32)
    moves = np.arange(40, dtype=np.int32)
    want = {"policy": digest(policy), "moves": digest(moves)}
    noisy = policy * (1 + 1e-6 * np.random.default_rng(1).standard_normal(policy.shape)).astype(np.float32)
    assert selfplay_golden.mismatches({"policy": digest(noisy), "moves": digest(moves)}, want) == []
    # Half of a row's first entry moved to its eighth: the row's sum, the absolute sum and the
    # position-weighted sum (weights 1..7 cycling) that the digest once compared all stay as they were.
    shifted = policy.copy()
    moved = shifted[5, 0] / 2
    shifted[5, 0] -= moved
    shifted[5, 7] += moved
    changed_moves = moves.copy()
    changed_moves[7] = 0
    for changed in ({"policy": digest(shifted), "moves": digest(moves)}, {"policy": digest(policy[::-1].copy())}):
        found = selfplay_golden.mismatches({"moves": digest(moves), **changed}, want)
        assert [m.split(":")[0] for m in found] == ["/policy/values"], found
    assert "2 of 1040 elements differ" in selfplay_golden.mismatches(digest(shifted), want["policy"])[0]
    found = selfplay_golden.mismatches({"policy": digest(policy), "moves": digest(changed_moves)}, want)
    assert [m.split(":")[0] for m in found] == ["/moves"]
    assert selfplay_golden.mismatches(digest(policy[:39]), want["policy"])[0].startswith("/shape")
    assert selfplay_golden.mismatches({"n": 3}, {"n": 3.0}) == []  # a float metric that came out whole
    assert selfplay_golden.mismatches({"n": 3.0}, {"n": 3}) != []  # a count must stay an int


def test_golden_digest_saves_the_float_values_beside_the_json(tmp_path):
    margin = np.array([0.5, np.nan, -3.25], np.float32)
    result = {
        "replay": {"gen_000000.npz": {"margin": selfplay_golden.array_digest(margin), "moves": "abc int32 [3]"}},
        "sgf": {},
        "metrics": [{"generation": 0, "games": 3}],
    }
    path, floats = str(tmp_path / "golden.json"), str(tmp_path / "golden_floats.npz")
    selfplay_golden.save(result, path, floats)
    with open(path) as f:
        assert json.load(f)["replay"]["gen_000000.npz"]["margin"] == {"dtype": "float32", "shape": [3]}
    loaded = selfplay_golden.load(path, floats)
    assert selfplay_golden.mismatches(result, loaded) == []  # NaN equals NaN
    np.testing.assert_array_equal(loaded["replay"]["gen_000000.npz"]["margin"]["values"], margin)


def test_the_shipped_golden_digest_loads_with_every_float_array():
    golden = selfplay_golden.load()
    entries = [e for arrays in golden["replay"].values() for e in arrays.values() if isinstance(e, dict)]
    assert len(entries) == 3 * 5 and all(e["values"].size for e in entries)
