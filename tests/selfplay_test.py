"""Tests for saijax.learn.selfplay: branching, the 2:1 refill ratio, komi sampling,
data hygiene (blunder truncation, outcomes and margins per player, draws),
resignation accounting, and 1-vs-8-device agreement.

Real self-play uses an oracle evaluator (uniform prior, α from the
Tromp–Taylor area), 2 simulations and a 5×5 board with a short move cap, so
one compiled chunk function serves every test. Every recorded game is then
replayed on the host with ``go.step`` as an independent check: the recorded
planes must be those of the replayed position, branch games must start from
the replayed position they were queued from, and finished games must have
the replayed result at their own komi.
"""

import collections
import dataclasses
import textwrap

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from conftest import TESTS, empty_step_fields

from saijax.core import features, go, search
from saijax.learn import replay, selfplay, selfplay_stats

RULES = go.GoRules(5, max_moves=16)
BATCH = 8  # divisible by the 8 fake devices of the sharding test
ALPHA_EMPTY, BETA_EMPTY = 0.3, 1.0
ORACLE_BETA = 0.5
MIN_GAMES = 160
SEARCH_CONFIG = search.SearchConfig(num_simulations=2, max_num_considered_actions=4)
SELFPLAY_CONFIG = selfplay.SelfPlayConfig(
    batch_size=BATCH,
    chunk_moves=16,
    komi_mode="sample",
    branch_prob=0.3,  # the queue never runs dry, so refills follow 2:1 exactly
    branch_queue_capacity=64,
    games_per_branch=2,
    random_moves=4,
    random_temperature=1.0,
    blunder_threshold=0.05,
    resign_threshold=0.2,  # aggressive: many games resign
    no_resign_fraction=0.5,
)
SHARD_KEYS = (11, 12, 13)  # init key, then one key per chunk


def oracle(params, states):
    """Uniform prior; α = 0.6·(area margin for the player to move) + 0.2.

    The affine map makes α non-integer, so rounding to ½ℤ matters for the
    fair komi of branches.
    """
    del params
    area = jax.vmap(lambda s: go.area_score(RULES, s))(states)
    alpha = 0.6 * area * states.to_play.astype(jnp.float32) + 0.2
    logits = jnp.zeros(states.legal.shape, jnp.float32)
    return logits, alpha, jnp.full_like(alpha, ORACLE_BETA)


def make_chunk():
    return selfplay.make_chunk_fn(oracle, RULES, SEARCH_CONFIG, SELFPLAY_CONFIG)


def init_state(seed):
    return selfplay.init_selfplay(RULES, SELFPLAY_CONFIG, jax.random.PRNGKey(seed), ALPHA_EMPTY, BETA_EMPTY)


def run_chunk(chunk, sp, seed):
    return chunk(None, sp, jax.random.PRNGKey(seed), jnp.float32(ALPHA_EMPTY), jnp.float32(BETA_EMPTY))


def _as_numpy(tree):
    return jax.tree_util.tree_map(np.array, jax.device_get(tree))


# ---------------------------------------------------------------------------
# The 8-device run, started first so it overlaps the single-device tests.

_SHARDED_SCRIPT = textwrap.dedent(
    """
    import sys
    sys.path.insert(0, {tests!r})
    import jax
    import numpy as np
    import selfplay_test as t
    from saijax.learn import run_selfplay, training

    assert jax.device_count() == 8, jax.devices()
    sp = t.init_state({init_seed})
    sp = run_selfplay.shard_selfplay(sp, training.make_mesh())
    assert len(sp.games.board.sharding.device_set) == 8
    assert not sp.games.board.sharding.is_fully_replicated
    chunk = t.make_chunk()
    records = []
    for seed in {chunk_seeds!r}:
        sp, rec = t.run_chunk(chunk, sp, seed)
        records.append(rec)
    np.savez({path!r}, **t.flatten_for_comparison(sp, records))
    """
)


def flatten_for_comparison(sp, records):
    """Named numpy arrays of the final self-play state and all records."""
    out = {}
    for prefix, tree in [("state", sp)] + [(f"rec{i}", r) for i, r in enumerate(records)]:
        leaves = jax.tree_util.tree_flatten_with_path(jax.device_get(tree))[0]
        for path, leaf in leaves:
            out[prefix + jax.tree_util.keystr(path)] = np.asarray(leaf)
    return out


@pytest.fixture(scope="module")
def eight_device_run(tmp_path_factory, fake_devices):
    path = str(tmp_path_factory.mktemp("sharded") / "sharded.npz")
    script = _SHARDED_SCRIPT.format(
        tests=TESTS,
        init_seed=SHARD_KEYS[0],
        chunk_seeds=list(SHARD_KEYS[1:]),
        path=path,
    )
    # On a loaded 2-core machine one of the 8 device threads can reach a
    # collective more than XLA's default 40 s after the others, which aborts
    # the process; allow for that.
    flags = (
        "--xla_cpu_collective_call_warn_stuck_timeout_seconds=600",
        "--xla_cpu_collective_call_terminate_timeout_seconds=900",
    )
    return fake_devices(script, devices=8, xla_flags=flags), path


# ---------------------------------------------------------------------------
# Real self-play, shared by the tests below.


@pytest.fixture(scope="module")
def chunk(eight_device_run):
    del eight_device_run  # only to start it before compiling here
    return make_chunk()


@pytest.fixture(scope="module")
def played(chunk):
    """Runs chunks from a fresh state until MIN_GAMES games have finished.

    Returns a dict with the raw records concatenated to [T, B] (numpy), the
    final state, the collector's rows and finished games.
    """
    sp = init_state(0)
    collector = selfplay.GameCollector(RULES)
    parts, rows, games = [], [], []
    i = 0
    while len(games) < MIN_GAMES:
        assert i < 60, f"only {len(games)} games after {i} chunks"
        sp, rec = run_chunk(chunk, sp, 1000 + i)
        parts.append(_as_numpy(rec))
        r, finished = collector.add_chunk(rec, generation=0)
        if r is not None:
            rows.append(r)
        games.extend(finished)
        i += 1
    records = jax.tree_util.tree_map(lambda *xs: np.concatenate(xs), *parts)
    return {
        "records": records,
        "state": sp,
        "rows": replay.concatenate_rows(rows),
        "games": games,
        "collector": collector,
        "chunks": i,
    }


def _replay_move(state, action):
    """Plays one row of moves for all slots; action -1 resigns."""
    played = jax.vmap(lambda s, a: go.step(RULES, s, a))(state, jnp.maximum(action, 0))
    resigned = jax.vmap(go.resign)(state)
    pick = lambda r, p: jnp.where((action < 0).reshape((-1,) + (1,) * (r.ndim - 1)), r, p)
    return jax.tree_util.tree_map(pick, resigned, played)


@pytest.fixture(scope="module")
def replayed(played):
    """Replays every recorded game on the host and cross-checks the records.

    The B slots are replayed in lockstep, like the records. Complete games
    start from the empty board at their recorded komi. The queue is modelled
    as a FIFO of the replayed states before the moves whose ``branched`` flag
    is set, with the fair komi (P's signed komi = -α_s rounded to ½ℤ,
    computed here with numpy), that drops its oldest entry when a push
    overflows its capacity; each branch game resumes the oldest live entry.
    """
    cap = SELFPLAY_CONFIG.branch_queue_capacity
    rec = played["records"]
    move = jax.jit(_replay_move)
    packed = jax.jit(jax.vmap(lambda s: features.pack_planes(go.features(RULES, s))))
    area = jax.jit(jax.vmap(lambda s: go.area_score(RULES, s)))
    init = jax.jit(lambda k: go.init(RULES, k))

    t_len, b = rec.active.shape
    assert rec.active.all()  # finished slots are refilled at once
    state = None  # [B] numpy GoState before row t
    slot_game = [None] * b
    queued = []  # (source row, numpy state with fair komi) in push order
    live = collections.deque()  # indices into queued still in the queue, oldest first
    dropped = 0
    branch_starts = []  # (game id, index into queued, first row)
    finals = {}  # game id -> (move count, area) of the replayed final position
    resigners = {}  # game id -> colour that resigned
    for t in range(t_len):
        for i in range(b):
            gid = int(rec.game_id[t, i])
            if gid == slot_game[i]:
                continue
            assert slot_game[i] is None or slot_game[i] in finals, (t, i)
            if rec.is_branch[t, i]:
                branch_starts.append((gid, live.popleft(), (t, i)))
                start = queued[branch_starts[-1][1]][1]
            else:
                start = _as_numpy(init(jnp.float32(rec.komi[t, i])))
            if state is None:
                state = jax.tree_util.tree_map(lambda x: np.stack([x] * b), start)
            for dst, src in zip(jax.tree_util.tree_leaves(state), jax.tree_util.tree_leaves(start)):
                dst[i] = src
            slot_game[i] = gid
        where = f"row {t}"
        np.testing.assert_array_equal(np.asarray(packed(state)), rec.planes[t], err_msg=where)
        np.testing.assert_array_equal(state.to_play, rec.to_play[t], err_msg=where)
        np.testing.assert_array_equal(state.move_count, rec.move_number[t], err_msg=where)
        np.testing.assert_array_equal(state.komi, rec.komi[t], err_msg=where)
        np.testing.assert_array_equal(rec.signed_komi[t], -rec.komi[t] * rec.to_play[t], err_msg=where)
        for i in np.flatnonzero(rec.branched[t]):
            fair_signed = np.round(-rec.root_alpha[t, i] * 2.0) / 2.0
            entry = jax.tree_util.tree_map(lambda x: x[i].copy(), state)
            queued.append(((t, i), entry.replace(komi=np.float32(-fair_signed * rec.to_play[t, i]))))
            live.append(len(queued) - 1)
            if len(live) > cap:
                live.popleft()
                dropped += 1
        action = rec.action[t]
        assert np.all(state.legal[np.arange(b), np.maximum(action, 0)] | (action < 0)), where
        for i in np.flatnonzero(action < 0):
            resigners[int(rec.game_id[t, i])] = int(state.to_play[i])
        state = _as_numpy(move(state, action))
        np.testing.assert_array_equal(state.terminated, rec.finished[t], err_msg=where)
        if rec.finished[t].any():
            scores = np.asarray(area(state))
            for i in np.flatnonzero(rec.finished[t]):
                finals[int(rec.game_id[t, i])] = (int(state.move_count[i]), float(scores[i]))
    current = {g for g in slot_game if g not in finals}
    return {
        "queued": queued,
        "live": list(live),
        "dropped": dropped,
        "branch_starts": branch_starts,
        "finals": finals,
        "resigners": resigners,
        "current": current,
    }


def test_chunk_compiles_once(played, chunk):
    assert played["chunks"] > 1
    assert chunk._cache_size() == 1


def test_replayed_games_match_the_records(played, replayed):
    # The replay itself asserts planes, player, move number and komi of every
    # row; here: every finished game ended as the replay says.
    games = played["games"]
    assert len(games) >= MIN_GAMES
    for g in games:
        moves, area = replayed["finals"][g.game_id]
        assert g.length == moves
        if g.resigned:
            assert g.winner == -replayed["resigners"][g.game_id]
        else:
            assert g.winner == int(np.sign(area - g.komi)), g
            assert g.margin == pytest.approx(area - g.komi), g
    # Every game id handed out is finished, in progress, or just refilled.
    slots = set(np.asarray(played["state"].game_id).tolist())
    assert set(replayed["current"]) <= slots
    finished = {g.game_id for g in games}
    assert len(finished) == len(games)
    assert finished | slots == set(range(int(played["state"].next_game_id)))
    assert played["collector"].pending_games == len(replayed["current"])


def test_refills_alternate_two_complete_games_and_one_branch(played):
    games = played["games"]
    branch = np.array([g.is_branch for g in games])
    assert 0.27 <= branch.mean() <= 0.39, branch.mean()
    # Refill index i = game id - B; with a non-empty queue, exactly every
    # third refill is a branch.
    for g in games:
        if g.game_id < BATCH:
            assert not g.is_branch, g.game_id
        else:
            assert g.is_branch == ((g.game_id - BATCH) % 3 == 2), g.game_id


def test_branch_starts_at_queued_position_with_fair_komi(played, replayed):
    rec = played["records"]
    starts = replayed["branch_starts"]
    assert len(starts) >= 40
    ids = [gid for gid, _, _ in starts]
    assert ids == sorted(ids)  # ids in refill order
    ks = [k for _, k, _ in starts]
    assert ks == sorted(ks)  # FIFO: branches start in push order
    for gid, k, (t, i) in starts:
        (ts, is_) = replayed["queued"][k][0]
        assert ts < t
        # Same position: planes (history included), move number, player.
        np.testing.assert_array_equal(rec.planes[t, i], rec.planes[ts, is_])
        assert rec.move_number[t, i] == rec.move_number[ts, is_]
        assert rec.to_play[t, i] == rec.to_play[ts, is_]
        # Fair komi: P's signed komi is -α_s rounded to ½ℤ.
        alpha = float(rec.root_alpha[ts, is_])
        expected = np.round(-alpha * 2.0) / 2.0
        assert rec.signed_komi[t, i] == expected, (gid, alpha, rec.signed_komi[t, i])
        assert rec.is_branch[t, i]
    # Rounding was exercised (α is never a multiple of ½ for this oracle).
    alphas = [float(rec.root_alpha[replayed["queued"][k][0]]) for _, k, _ in starts]
    assert any(a * 2 != round(a * 2) for a in alphas)
    assert any(rec.move_number[row] > 0 for _, _, row in starts)


def test_queued_positions_keep_history_and_superko_record(played, replayed):
    sp = played["state"]
    queue = _as_numpy(sp.queue)
    size, head = int(sp.queue_size), int(sp.queue_head)
    cap = SELFPLAY_CONFIG.branch_queue_capacity
    queued = replayed["queued"]
    # Pops: branch games seen in the records, plus branch games refilled at
    # the very last move, which have no row yet.
    seen = set(np.unique(played["records"].game_id).tolist())
    fresh = [i for i, g in enumerate(np.asarray(sp.game_id)) if int(g) not in seen]
    pops = int(np.sum(np.asarray(sp.is_branch)[fresh]))
    live = replayed["live"]
    assert size == len(live) - pops
    assert size > 0
    assert int(sp.queue_dropped) == replayed["dropped"]
    deep = 0
    for j in range(size):
        entry = jax.tree_util.tree_map(lambda x: x[(head + j) % cap], queue)
        _, want = queued[live[pops + j]]
        want = _as_numpy(want)
        for name in want.__dataclass_fields__:
            np.testing.assert_array_equal(getattr(entry, name), getattr(want, name), err_msg=name)
        deep += int(want.move_count) >= 3
    assert deep > 0  # some entries carry a real history


def test_complete_game_komi_is_sampled_in_half_integers(played):
    komis = np.array([g.komi for g in played["games"] if not g.is_branch])
    np.testing.assert_array_equal(komis * 2, np.round(komis * 2))
    assert len(set(komis.tolist())) >= 3
    assert abs(np.median(komis) - ALPHA_EMPTY) <= 1.0


def test_rows_drop_positions_up_to_the_last_blunder(played):
    rec, rows = played["records"], played["rows"]
    games = {g.game_id: g for g in played["games"]}
    blunders = 0
    for gid, g in games.items():
        mine = rec.game_id == gid
        moves = rec.move_number[mine]
        blunder_moves = moves[rec.blunder[mine]]
        blunders += len(blunder_moves)
        last = int(blunder_moves.max()) if len(blunder_moves) else -1
        assert g.blunder_move == last
        kept = np.sort(rows.move_number[rows.game_id == gid])
        np.testing.assert_array_equal(kept, np.sort(moves[moves > last]))
        assert g.rows == len(kept)
        # Blunders only happen in the opening (the first R moves).
        assert last < SELFPLAY_CONFIG.random_moves
    assert blunders > 0


def test_rows_have_outcome_and_margin_for_the_player_to_move(played):
    rows = played["rows"]
    games = {g.game_id: g for g in played["games"]}
    seen = set()
    for r in range(rows.num_rows):
        g = games[int(rows.game_id[r])]
        p = int(rows.to_play[r])
        seen.add((g.winner, p))
        assert rows.z[r] == (g.winner * p + 1) / 2
        assert rows.margin[r] == pytest.approx(g.margin * p)
        assert rows.signed_komi[r] == -g.komi * p
        assert rows.is_branch[r] == g.is_branch
    assert {(1, 1), (1, -1), (-1, 1), (-1, -1)} <= seen
    z = np.asarray(rows.z)
    assert set(np.unique(z).tolist()) <= {0.0, 0.5, 1.0}
    draws = [g for g in games.values() if g.winner == 0]
    assert draws  # integer komi and an even area happen on 5×5
    for g in draws:
        assert g.komi == int(g.komi) and g.margin == 0.0
        assert np.all(z[rows.game_id == g.game_id] == 0.5)


def test_resignation_accounting(played):
    games = played["games"]
    resigned = [g for g in games if g.resigned]
    assert len(resigned) >= 10
    for g in resigned:
        assert g.may_resign
        assert g.length >= RULES.num_points // 4  # allowed after N²/4 moves
        # The margin is the search's score estimate for the resigner, which
        # agrees with the result here: with 2 simulations and a threshold
        # below ¼, a resigning root sees only losing children.
        assert np.isfinite(g.margin) and np.sign(g.margin) == g.winner, g
    no_resign = [g for g in games if not g.may_resign]
    assert 0.3 <= len(no_resign) / len(games) <= 0.7
    assert all(not g.resigned for g in no_resign)
    assert any(g.would_resign != 0 for g in no_resign)
    assert all(g.would_resign == 0 for g in games if g.may_resign)
    stats = selfplay_stats.generation_stats(games, ALPHA_EMPTY, BETA_EMPTY)
    wished = [g for g in no_resign if g.would_resign != 0]
    false = [g for g in wished if g.winner == g.would_resign]
    assert stats["resignations"] == len(resigned)
    assert stats["no_resign_games"] == len(no_resign)
    assert stats["false_resignations"] == len(false)
    assert stats["false_resignation_rate"] == pytest.approx(len(false) / len(wished))


# ---------------------------------------------------------------------------
# Hand-made records for GameCollector.

N_A = RULES.num_actions


def _records(rows, t_len, b):
    """A [t_len, b] StepRecord with the given rows {(t, i): {field: value}}.

    Unlisted slots are inactive. Each row's planes are filled with its
    move number so kept rows can be identified.
    """

    fields = empty_step_fields(t_len, b, 5)
    for (t, i), values in rows.items():
        fields["active"][t, i] = True
        fields["planes"][t, i] = values["move_number"]
        for name, value in values.items():
            fields[name][t, i] = value
    return selfplay.StepRecord(**fields)


def _game(gid, moves, *, komi, winner, margin, blunders=(), is_branch=False, start=0):
    """Per-move row dicts of one game; the last move finishes it."""
    out = []
    for m in range(start, start + moves):
        p = 1 if m % 2 == 0 else -1
        last = m == start + moves - 1
        out.append(
            dict(
                game_id=gid,
                move_number=m,
                to_play=p,
                komi=komi,
                signed_komi=-komi * p,
                action=m,
                blunder=m in blunders,
                is_branch=is_branch,
                may_resign=True,
                finished=last,
                winner=winner if last else 0,
                margin=margin if last else 0.0,
                length=start + moves,
            )
        )
    return out


def test_collector_truncates_at_last_blunder_across_chunks():
    # Slot 0: game 5 over two chunks of 4 moves, blunders at moves 1 and 4.
    # Slot 1: game 6, no blunder, finishes in chunk 1; then inactive.
    g5 = _game(5, 8, komi=3.5, winner=-1, margin=-3.5, blunders=(1, 4))
    g6 = _game(6, 3, komi=-2.5, winner=1, margin=4.5)
    chunk1 = _records({**{(t, 0): g5[t] for t in range(4)}, **{(t, 1): g6[t] for t in range(3)}}, 4, 2)
    chunk2 = _records({(t, 0): g5[4 + t] for t in range(4)}, 4, 2)
    collector = selfplay.GameCollector(RULES)

    rows, games = collector.add_chunk(chunk1, generation=3)
    assert [g.game_id for g in games] == [6]
    assert collector.pending_games == 1
    np.testing.assert_array_equal(rows.move_number, [0, 1, 2])
    assert games[0].blunder_move == -1 and games[0].rows == 3

    rows, games = collector.add_chunk(chunk2, generation=4)
    assert collector.pending_games == 0
    (g,) = games
    assert (g.game_id, g.blunder_move, g.rows, g.start_move, g.length) == (5, 4, 3, 0, 8)
    assert g.actions == tuple(range(8))
    np.testing.assert_array_equal(rows.move_number, [5, 6, 7])
    np.testing.assert_array_equal(rows.planes[:, 0, 0, 0], [5, 6, 7])
    np.testing.assert_array_equal(rows.generation, [4, 4, 4])  # the net that played each move
    # White won by 3.5 at komi 3.5: z and margin from each row's player.
    np.testing.assert_array_equal(rows.to_play, [-1, 1, -1])
    np.testing.assert_array_equal(rows.z, [1.0, 0.0, 1.0])
    np.testing.assert_array_equal(rows.margin, [3.5, -3.5, 3.5])
    np.testing.assert_array_equal(rows.signed_komi, [3.5, -3.5, 3.5])


def test_collector_blunder_on_last_move_keeps_no_rows():
    g = _game(9, 3, komi=0.5, winner=1, margin=0.5, blunders=(2,))
    rows, games = selfplay.GameCollector(RULES).add_chunk(_records({(t, 0): g[t] for t in range(3)}, 3, 1), 0)
    assert rows is None
    assert games[0].rows == 0 and games[0].blunder_move == 2


def test_collector_draw_at_integer_komi_gives_half_to_both_players():
    g = _game(2, 4, komi=2.0, winner=0, margin=0.0, is_branch=True, start=6)
    rows, games = selfplay.GameCollector(RULES).add_chunk(_records({(t, 0): g[t] for t in range(4)}, 4, 1), 0)
    np.testing.assert_array_equal(rows.to_play, [1, -1, 1, -1])
    np.testing.assert_array_equal(rows.z, [0.5] * 4)
    np.testing.assert_array_equal(rows.margin, [0.0] * 4)
    assert rows.is_branch.all()
    assert games[0].start_move == 6 and games[0].length == 10
    stats = selfplay_stats.generation_stats(games, 0.0, 1.0)
    assert stats["draws"] == 1 and stats["branch_games"] == 1


def _finished(gid, *, winner, may_resign=True, would_resign=0, resigned=False, is_branch=False, komi=7.0, length=20):
    return selfplay.FinishedGame(
        game_id=gid,
        is_branch=is_branch,
        komi=komi,
        winner=winner,
        margin=float(winner) * 3.0,
        resigned=resigned,
        may_resign=may_resign,
        would_resign=would_resign,
        length=length,
        start_move=4 if is_branch else 0,
        actions=(),
        start_planes=np.zeros((5, 5, 2), np.uint8),
        start_to_play=1,
        blunder_move=-1,
        rows=length,
    )


def test_generation_stats_counts_false_resignations():
    games = [
        _finished(0, winner=1, may_resign=False, would_resign=1),  # false: black would have resigned, won
        _finished(1, winner=1, may_resign=False, would_resign=-1),  # white would have resigned, lost
        _finished(2, winner=-1, may_resign=False, would_resign=-1),  # false
        _finished(3, winner=-1, may_resign=False, would_resign=0),  # never wanted to
        _finished(4, winner=-1, may_resign=True, resigned=True, length=10),
        _finished(5, winner=0, is_branch=True, komi=1.0, length=12),
    ]
    stats = selfplay_stats.generation_stats(games, 0.25, 0.5)
    assert stats["games"] == 6
    assert stats["complete_games"] == 5 and stats["branch_games"] == 1
    assert stats["resignations"] == 1
    assert stats["no_resign_games"] == 4
    assert stats["false_resignations"] == 2
    assert stats["false_resignation_rate"] == pytest.approx(2 / 3)
    assert stats["draws"] == 1
    assert stats["black_winrate"] == pytest.approx(2 / 6)
    assert stats["white_winrate"] == pytest.approx(3 / 6)
    assert stats["avg_game_length"] == pytest.approx((20 * 4 + 10) / 5)
    assert stats["moves"] == 20 * 4 + 10 + (12 - 4)
    assert stats["komi_histogram"] == {"1.0": 1, "7.0": 5}
    assert stats["avg_komi"] == pytest.approx(36 / 6)
    assert (stats["alpha_empty"], stats["beta_empty"]) == (0.25, 0.5)
    none = selfplay_stats.generation_stats(games[4:], 0.0, 1.0)
    assert none["false_resignations"] == 0 and none["false_resignation_rate"] == 0.0


# ---------------------------------------------------------------------------
# Komi.


def test_round_half_and_fair_komi():
    x = jnp.array([0.24, 0.26, -0.26, -0.2, 1.74, -3.3, 0.0])
    np.testing.assert_array_equal(selfplay.round_half(x), [0.0, 0.5, -0.5, 0.0, 1.5, -3.5, 0.0])
    assert not np.signbit(np.asarray(selfplay.round_half(jnp.float32(-0.1))))
    alpha = jnp.array([2.3, 2.3, -0.8, -0.8])
    to_play = jnp.array([1, -1, 1, -1], jnp.int8)
    komi = selfplay.fair_komi(alpha, to_play)
    # P's signed komi -komi·to_play is -α rounded to ½ℤ.
    np.testing.assert_array_equal(-komi * to_play, [-2.5, -2.5, 1.0, 1.0])
    np.testing.assert_array_equal(komi, [2.5, -2.5, -1.0, 1.0])


def test_fair_komi_has_no_negative_zero():
    for fair in (selfplay.fair_komi, jax.jit(selfplay.fair_komi), jax.jit(lambda a, p: selfplay.fair_komi(a, p, 81.0))):
        komi = fair(jnp.array([0.2, 0.2, -0.1]), jnp.array([1, -1, 1], jnp.int8))
        np.testing.assert_array_equal(komi, [0.0, 0.0, 0.0])
        assert not np.any(np.signbit(np.asarray(komi)))  # -0.0 under jit too (XLA drops "+ 0.0")
    sampled = jax.jit(lambda k: selfplay.sample_komi(k, 0.0, 100.0, 1.0, (64,), bound=25.0))(jax.random.PRNGKey(0))
    assert np.all(np.asarray(sampled) == 0) and not np.any(np.signbit(np.asarray(sampled)))


@pytest.mark.parametrize("alpha,beta,temperature", [(1.3, 0.4, 1.5), (-6.0, 2.0, 1.0)])
def test_sample_komi_is_the_rounded_logistic(alpha, beta, temperature):
    n = 200_000
    k = np.asarray(selfplay.sample_komi(jax.random.PRNGKey(7), alpha, beta, temperature, (n,)))
    np.testing.assert_array_equal(k * 2, np.round(k * 2))
    # Rounding to the nearest ½: P(k <= x) = P(y < x + ¼) for x in ½ℤ, with y
    # logistic (mean α, scale T/β).
    scale = temperature / beta
    grid = np.arange(k.min(), k.max() + 0.5, 0.5)
    empirical = np.searchsorted(np.sort(k), grid, side="right") / n
    model = 1.0 / (1.0 + np.exp(-(grid + 0.25 - alpha) / scale))
    assert np.max(np.abs(empirical - model)) < 1.63 / np.sqrt(n)  # KS at 1%
    assert abs(k.mean() - alpha) < 5 * scale * np.pi / np.sqrt(3 * n)
    again = np.asarray(selfplay.sample_komi(jax.random.PRNGKey(7), alpha, beta, temperature, (n,)))
    np.testing.assert_array_equal(k, again)


def test_fixed_komi_mode():
    config = selfplay.SelfPlayConfig(batch_size=4, komi_mode="fixed", komi=7.5, branch_queue_capacity=2)
    sp = selfplay.init_selfplay(RULES, config, jax.random.PRNGKey(0), 3.0, 0.5)
    np.testing.assert_array_equal(sp.games.komi, [7.5] * 4)
    sampled = selfplay.init_selfplay(RULES, SELFPLAY_CONFIG, jax.random.PRNGKey(0), 3.0, 0.5)
    assert len(set(np.asarray(sampled.games.komi).tolist())) > 1


# ---------------------------------------------------------------------------
# Sharding.


def test_sharded_chunk_matches_single_device(eight_device_run, chunk):
    run, path = eight_device_run
    sp = init_state(SHARD_KEYS[0])
    records = []
    for seed in SHARD_KEYS[1:]:
        sp, rec = run_chunk(chunk, sp, seed)
        records.append(rec)
    single = flatten_for_comparison(sp, records)
    run.wait(timeout=900)
    with np.load(path) as data:
        sharded = dict(data)
    assert sharded.keys() == single.keys()
    floats = ("policy", "root_alpha", "margin")
    for name, want in single.items():
        got = sharded[name]
        if any(f in name for f in floats):
            np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5, err_msg=name)
        else:
            np.testing.assert_array_equal(got, want, err_msg=name)
    # The comparison covered refills and branches, not just opening moves.
    assert any(np.any(single[f"rec{i}.finished"]) for i in range(len(records)))
    assert any(np.any(single[f"rec{i}.branched"]) for i in range(len(records)))


def test_a_game_queues_at_most_max_branches(played):
    rec = played["records"]
    per_game = collections.Counter(np.asarray(rec.game_id)[np.asarray(rec.branched)].tolist())
    cap = SELFPLAY_CONFIG.max_branches_per_game
    assert max(per_game.values()) == cap  # the cap binds here (branch_prob 0.3)
    # Every position after a game's cap is reached is left alone.
    for gid, count in per_game.items():
        assert count <= cap, gid


def test_a_full_queue_drops_its_oldest_branches():
    """Capacity 4, every position pushed, no pops: the queue ends holding the last 4 pushes."""
    config = dataclasses.replace(
        SELFPLAY_CONFIG, branch_prob=1.0, branch_queue_capacity=4, games_per_branch=10_000, max_branches_per_game=0
    )
    chunk = selfplay.make_chunk_fn(oracle, RULES, SEARCH_CONFIG, config)
    sp = selfplay.init_selfplay(RULES, config, jax.random.PRNGKey(5), ALPHA_EMPTY, BETA_EMPTY)
    sp, rec = chunk(None, sp, jax.random.PRNGKey(6), jnp.float32(ALPHA_EMPTY), jnp.float32(BETA_EMPTY))
    rec = _as_numpy(rec)
    pushed = [(t, i) for t in range(rec.active.shape[0]) for i in np.flatnonzero(rec.branched[t])]
    # Every active position tried to queue; all but the last 4 were dropped
    # (a step's pushes beyond the capacity never enter the queue at all).
    assert int(sp.queue_size) == 4 and int(sp.queue_dropped) == int(rec.active.sum()) - 4
    assert all(rec.branched[t].sum() == 4 for t in range(rec.active.shape[0]))
    queue, head = _as_numpy(sp.queue), int(sp.queue_head)
    planes = np.asarray(jax.vmap(lambda s: features.pack_planes(go.features(RULES, s)))(sp.queue))
    for j, (t, i) in enumerate(pushed[-4:]):
        slot = (head + j) % 4
        np.testing.assert_array_equal(planes[slot], rec.planes[t, i])
        assert queue.move_count[slot] == rec.move_number[t, i]


def test_refresh_gives_queued_branches_the_current_nets_fair_komi(played):
    sp = played["state"]

    def shifted(params, states):  # a "newer net": α larger by 3.3 everywhere
        logits, alpha, beta = oracle(params, states)
        return logits, alpha + 3.3, beta

    fresh = selfplay.make_refresh_fn(shifted)(None, sp)
    _, alpha, _ = shifted(None, sp.queue)
    to_play = np.asarray(sp.queue.to_play, np.float32)
    want = -np.round(-np.asarray(alpha) * 2.0) / 2.0 * to_play  # black's komi for P's signed komi −α
    np.testing.assert_array_equal(np.asarray(fresh.queue.komi), want.astype(np.float32))
    assert not np.array_equal(np.asarray(fresh.queue.komi), np.asarray(sp.queue.komi))
    # Nothing else in the queue changes.
    np.testing.assert_array_equal(np.asarray(fresh.queue.board), np.asarray(sp.queue.board))


def test_score_estimate_statistics(played):
    games = played["games"]
    counted = [g for g in games if not g.resigned]
    resigned = [g for g in games if g.resigned]
    assert counted and resigned
    assert all(g.score_errors == () for g in resigned)
    assert all(len(g.score_errors) == len(g.actions) for g in counted)
    stats = selfplay_stats.generation_stats(games, 0.0, 1.0)
    errors = [e for g in counted for e in g.score_errors]
    assert stats["score_error_positions"] == len(errors)
    assert stats["score_error"] == pytest.approx(np.mean(errors))
    assert stats["resign_score_estimate"] == pytest.approx(np.mean([g.margin * g.winner for g in resigned]))
    # Recomputed from the records for the counted games that started in them.
    rec = played["records"]
    game_ids = np.asarray(rec.game_id)
    checked = 0
    for g in counted:
        rows = np.argwhere((game_ids == g.game_id) & np.asarray(rec.active))
        if len(rows) != len(g.actions):
            continue  # started before the recorded chunks
        want = [abs(rec.root_alpha[t, i] + rec.signed_komi[t, i] - g.margin * rec.to_play[t, i]) for t, i in rows]
        np.testing.assert_allclose(g.score_errors, want, rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(g.score_betas, [rec.root_beta[t, i] for t, i in rows], rtol=1e-6)
        checked += 1
    assert checked > 10
    # Final and nearly final positions: the last quarter of each counted game.
    late = [e for g in counted for e in g.score_errors[(3 * len(g.score_errors)) // 4 :]]
    assert stats["score_error_late"] == pytest.approx(np.mean(late))
    assert stats["beta_late"] == pytest.approx(ORACLE_BETA)  # the oracle's constant β
    assert stats["sharp_late_fraction"] == 0.0 and np.isnan(stats["score_error_sharp_late"])


def test_late_score_stats_pick_the_last_quarter_and_sharp_positions():
    def game(errors, betas):
        return selfplay.FinishedGame(
            game_id=0, is_branch=False, komi=7.0, winner=1, margin=1.0, resigned=False, may_resign=True,
            would_resign=0, length=len(errors), start_move=0, actions=tuple(range(len(errors))),
            start_planes=np.zeros((5, 5, 2), np.uint8), start_to_play=1, blunder_move=-1, rows=len(errors),
            score_errors=tuple(errors), score_betas=tuple(betas),
        )  # fmt: skip

    games = [
        game([9.0] * 6 + [2.0, 0.5], [0.2] * 6 + [3.0, 8.0]),  # last quarter: the last 2 positions
        game([7.0, 7.0, 7.0, 1.0], [0.1, 0.1, 0.1, 6.0]),  # the last one
        game([], []),  # resigned: nothing counted
    ]
    stats = selfplay_stats.late_score_stats(games)
    assert stats["score_error_late"] == pytest.approx((2.0 + 0.5 + 1.0) / 3)
    assert stats["beta_late"] == pytest.approx(6.0)
    assert stats["sharp_late_fraction"] == pytest.approx(2 / 3)
    assert stats["score_error_sharp_late"] == pytest.approx(0.75)
    assert np.isnan(selfplay_stats.late_score_stats([])["score_error_late"])


@pytest.mark.parametrize("noise_moves", [0, 3])
def test_noise_moves_keeps_root_noise_to_the_opening(noise_moves):
    """Identical slots (empty board, fixed komi, no sampled opening, no
    branches or resignation) differ at move 0 only through root noise: with
    ``noise_moves = 0`` they play the same game, move for move; with noise on
    the opening they part at once. (That the noise stops after
    ``noise_moves`` is the ``noise_scale`` test below: the slots' positions
    differ by then.)"""
    config = dataclasses.replace(
        SELFPLAY_CONFIG,
        komi_mode="fixed",
        komi=0.5,
        branch_prob=0.0,
        random_moves=0,
        resign_threshold=-1.0,
        noise_moves=noise_moves,
    )
    search_config = dataclasses.replace(SEARCH_CONFIG, num_simulations=4)
    chunk = selfplay.make_chunk_fn(oracle, RULES, search_config, config)
    sp = selfplay.init_selfplay(RULES, config, jax.random.PRNGKey(0), ALPHA_EMPTY, BETA_EMPTY)
    _, records = chunk(None, sp, jax.random.PRNGKey(1), jnp.float32(ALPHA_EMPTY), jnp.float32(BETA_EMPTY))
    actions = np.asarray(records.action)  # [T, B]
    move = np.asarray(records.move_number)
    first_game = np.asarray(records.game_id) < BATCH
    for t in range(actions.shape[0]):
        rows = first_game[t] & np.asarray(records.active)[t]
        if not rows.all():
            break  # a game ended; refills start new games at other moves
        same = len(set(actions[t].tolist())) == 1
        if noise_moves == 0:
            assert same, f"move {move[t, 0]}: {actions[t]} should be identical without noise"
        if move[t, 0] == 0 and noise_moves != 0:
            # A uniform prior: only the Gumbel noise tells the slots apart.
            assert not same, f"move 0: {actions[t]} should differ with noise"


def test_zero_noise_scale_makes_the_search_deterministic():
    states = jax.tree_util.tree_map(lambda x: jnp.broadcast_to(x, (4,) + x.shape), go.init(RULES, 0.5))
    keys = jax.random.split(jax.random.PRNGKey(3), 4)
    searched = jax.jit(
        lambda noise: search.run_search(
            oracle, None, keys, states, rules=RULES, config=SEARCH_CONFIG, noise_scale=noise
        )
    )
    noisy, quiet = searched(jnp.ones(4)), searched(jnp.zeros(4))  # one compile: the scale is traced
    assert len(set(np.asarray(noisy.action).tolist())) > 1
    assert len(set(np.asarray(quiet.action).tolist())) == 1
    np.testing.assert_allclose(np.asarray(noisy.policy).sum(-1), 1.0, rtol=1e-5)


@pytest.mark.parametrize("opening_policy", ["visits", "improved"])
def test_opening_moves_are_drawn_from_the_chosen_policy(opening_policy):
    """``opening_policy`` picks the distribution of the sampled opening moves:
    the root's visit counts (SAI) or the search's improved policy. Here the
    visits are flat over four moves and the improved policy is peaked, as
    Gumbel's sequential halving leaves them at a few simulations; the
    empirical frequencies of many draws must follow the chosen one."""
    n = 4000
    states = jax.tree_util.tree_map(lambda x: jnp.broadcast_to(x, (n,) + x.shape), go.init(RULES, 0.5))
    keys = jax.random.split(jax.random.PRNGKey(5), n)
    out = search.run_search(oracle, None, keys, states, rules=RULES, config=SEARCH_CONFIG, noise_scale=jnp.zeros(n))
    a = RULES.num_actions
    visits = np.zeros(a, np.int32)
    visits[[0, 6, 12, 18]] = 2
    policy = np.zeros(a, np.float32)
    policy[[0, 6, 12, 18]] = [0.7, 0.2, 0.08, 0.02]
    out = out.replace(
        visit_counts=jnp.broadcast_to(jnp.asarray(visits), (n, a)),
        policy=jnp.broadcast_to(jnp.asarray(policy), (n, a)),
        child_q=jnp.zeros((n, a), jnp.float32),
        best_value=jnp.zeros((n,), jnp.float32),
    )
    config = dataclasses.replace(SELFPLAY_CONFIG, opening_policy=opening_policy, lzs_pass_rule=False)
    action, _ = selfplay._choose_moves(RULES, config, jax.random.PRNGKey(6), states, out)
    freq = np.bincount(np.asarray(action), minlength=a)[[0, 6, 12, 18]] / n
    want = policy[[0, 6, 12, 18]] if opening_policy == "improved" else np.full(4, 0.25)
    np.testing.assert_allclose(freq, want, atol=0.03)
    assert np.bincount(np.asarray(action), minlength=a).sum() == n


@pytest.mark.parametrize("alpha,beta", [(0.3, 0.008), (-70.0, 0.05), (2.0, 1.0)])
def test_sample_komi_truncated_to_the_board(alpha, beta):
    # Within [−N², N²] the truncated draw is the logistic conditioned on the
    # range (inverse CDF between the ends); nothing falls outside.
    n, bound = 200_000, 81.0
    k = np.asarray(selfplay.sample_komi(jax.random.PRNGKey(3), alpha, beta, 1.0, (n,), bound=bound))
    assert k.min() >= -bound and k.max() <= bound
    np.testing.assert_array_equal(k * 2, np.round(k * 2))
    cdf = lambda x: 1.0 / (1.0 + np.exp(-(x - alpha) * beta))
    grid = np.arange(-bound, bound, 0.5)
    lo, hi = cdf(-bound - 0.25), cdf(bound + 0.25)
    model = (cdf(grid + 0.25) - lo) / (hi - lo)
    empirical = np.searchsorted(np.sort(k), grid, side="right") / n
    assert np.max(np.abs(empirical - model)) < 1.63 / np.sqrt(n)
    if beta >= 1.0:  # the tails are negligible: the same draws as without a bound
        free = np.asarray(selfplay.sample_komi(jax.random.PRNGKey(3), alpha, beta, 1.0, (n,)))
        assert np.mean(free == k) > 0.999


def test_fair_komi_is_clipped_to_the_board():
    komi = selfplay.fair_komi(jnp.array([200.0, -200.0, 3.2]), jnp.array([1, 1, -1], jnp.int8), 81.0)
    np.testing.assert_array_equal(komi, [81.0, -81.0, -3.0])
