"""SAI's self-play rules as switches (issue 43) and the per-generation
diagnostics that say whether the value's targets are sharp.

* ``selfplay.random_full_search_only``: under playout caps, random opening
  moves come from full searches only; a slot in its opening waits through
  cheap searches.
* ``selfplay.random_takeback``: a random move whose value would make its
  player resign is taken back (SAI's ``get_best_move``).
* ``selfplay.fixed_komi_share``: a share of complete games at the board's
  komi (SAI's server, 30%).
* ``selfplay.blunder_reference`` and ``selfplay.blunders_allowed_mean``:
  SAI's engine's blunders (the drop from the searched move's value, and a
  Poisson-drawn allowance a game, after which random moves are drawn among
  the non-blunders only).
* ``komi_curve_fit`` / ``komi_curve_stats``, ``opening_stats`` and
  ``resigned_row_share`` in :func:`selfplay_stats.generation_stats`.
"""

import collections
import dataclasses
import json
import pathlib

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from saijax.core import go, search
from saijax.learn import config as config_lib
from saijax.learn import pipeline, selfplay, selfplay_stats

TINY = pathlib.Path(__file__).resolve().parents[1] / "configs" / "tiny.py"

RULES = go.GoRules(5, max_moves=20)
ALPHA_EMPTY, BETA_EMPTY = 0.5, 1.0


def oracle(params, states):
    """Uniform prior, α from the area margin for the player to move."""
    del params
    area = jax.vmap(lambda s: go.area_score(RULES, s))(states)
    alpha = 0.6 * area * states.to_play.astype(jnp.float32) + 0.2
    return jnp.zeros(states.legal.shape, jnp.float32), alpha, jnp.full_like(alpha, 0.5)


CAPPED = selfplay.SelfPlayConfig(
    batch_size=8,
    chunk_moves=24,
    komi_mode="fixed",
    komi=0.5,
    branch_prob=0.0,
    branch_queue_capacity=4,
    random_moves=3,
    fast_simulations=1,
    full_search_prob=0.4,
    resign_threshold=-1.0,
)
SEARCH = search.SearchConfig(num_simulations=4, max_num_considered_actions=4)


def _play(config, seed=0, chunks=2):
    chunk = selfplay.make_chunk_fn(oracle, RULES, SEARCH, config)
    sp = selfplay.init_selfplay(RULES, config, jax.random.PRNGKey(seed), ALPHA_EMPTY, BETA_EMPTY)
    out = []
    for i in range(chunks):
        sp, rec = chunk(None, sp, jax.random.PRNGKey(100 + i), jnp.float32(ALPHA_EMPTY), jnp.float32(BETA_EMPTY))
        out.append(jax.device_get(rec))
    return jax.tree_util.tree_map(lambda *xs: np.concatenate(xs, axis=0), *out)


@pytest.fixture(scope="module")
def capped_games():
    return {flag: _play(dataclasses.replace(CAPPED, random_full_search_only=flag)) for flag in (False, True)}


def test_opening_moves_come_from_full_searches_only(capped_games):
    rec = capped_games[True]
    active = np.asarray(rec.active)
    opening = active & (np.asarray(rec.move_number) < CAPPED.random_moves)
    full = np.asarray(rec.full_search)
    assert opening.sum() > 20
    assert np.all(full[opening]), "an opening move was played on a cheap search"
    # Past the opening, cheap searches move the games as before.
    later = active & ~opening
    assert (~full[later]).sum() > 20
    # Without the switch, opening moves are also played on cheap searches.
    off = capped_games[False]
    off_opening = np.asarray(off.active) & (np.asarray(off.move_number) < CAPPED.random_moves)
    assert (~np.asarray(off.full_search)[off_opening]).sum() > 5


def test_a_waiting_slot_keeps_its_position_and_records_each_move_once(capped_games):
    """Each game's records are its moves 0, 1, 2, … once each, and each
    recorded position is the previous one stepped by the recorded move: a
    slot that waited through a cheap search neither moved nor recorded."""
    rec = capped_games[True]
    active = np.asarray(rec.active)
    t_idx, b_idx = np.nonzero(active)
    games = collections.defaultdict(list)
    for t, b in zip(t_idx, b_idx):
        games[int(rec.game_id[t, b])].append((int(rec.move_number[t, b]), int(rec.action[t, b]), t, b))
    waited = 0
    for gid, moves in games.items():
        numbers = [m for m, *_ in moves]
        assert numbers == list(range(numbers[0], numbers[0] + len(numbers))), (gid, numbers)
        state = go.init(RULES, CAPPED.komi)
        for number, action, t, b in moves:
            packed = np.asarray(selfplay.features_lib.pack_planes(go.features(RULES, state)[None]))[0]
            np.testing.assert_array_equal(packed, np.asarray(rec.planes[t, b]), err_msg=f"game {gid} move {number}")
            state = go.step(RULES, state, action)
        # Rows of one game more than one lockstep move apart: it waited.
        ts = [t for *_, t, _ in moves]
        waited += sum(b - a > 1 for a, b in zip(ts, ts[1:]))
    assert waited > 0, "no slot ever waited for a full search"


def test_full_search_only_is_a_no_op_without_playout_caps():
    uncapped = dataclasses.replace(CAPPED, fast_simulations=0, full_search_prob=1.0)
    a = _play(uncapped, chunks=1)
    b = _play(dataclasses.replace(uncapped, random_full_search_only=True), chunks=1)
    for name in ("action", "active", "game_id", "move_number"):
        np.testing.assert_array_equal(getattr(a, name), getattr(b, name))


def _search_output(n, q_bad, visits_bad=2):
    """n identical roots: move 0 best (value 0.9), move 6 visited with value ``q_bad``."""
    states = jax.tree_util.tree_map(lambda x: jnp.broadcast_to(x, (n,) + x.shape), go.init(RULES, 0.5))
    keys = jax.random.split(jax.random.PRNGKey(5), n)
    out = search.run_search(oracle, None, keys, states, rules=RULES, config=SEARCH, noise_scale=jnp.zeros(n))
    a = RULES.num_actions
    visits = np.zeros(a, np.int32)
    visits[[0, 6]] = [2, visits_bad]
    q = np.full(a, np.nan, np.float32)
    q[[0, 6]] = [0.9, q_bad]
    out = out.replace(
        visit_counts=jnp.broadcast_to(jnp.asarray(visits), (n, a)),
        child_q=jnp.broadcast_to(jnp.asarray(q), (n, a)),
        action=jnp.zeros((n,), jnp.int32),
        best_value=jnp.full((n,), 0.9, jnp.float32),
    )
    return states, out


@pytest.mark.parametrize("move_count", [0, 8])
def test_takeback_replaces_a_random_move_that_would_resign(move_count):
    n = 2000
    states, out = _search_output(n, q_bad=0.01)
    states = states.replace(move_count=jnp.full((n,), move_count, jnp.int32))
    config = selfplay.SelfPlayConfig(
        random_moves=20, random_min_visits=0, random_losing_threshold=0.0, resign_threshold=0.05,
        blunder_threshold=0.15, random_takeback=True,
    )  # fmt: skip
    may = jnp.arange(n) % 2 == 0
    action, blunder = selfplay._choose_moves(RULES, config, jax.random.PRNGKey(1), states, out, may)
    action, blunder, may = np.asarray(action), np.asarray(blunder), np.asarray(may)
    after = move_count >= search.default_resign_after(RULES)  # 25 // 4 = 6
    if after:
        # Games that may resign never keep the losing draw; the others do, as blunders.
        assert np.all(action[may] == 0) and not blunder[may].any()
        assert 0.4 < np.mean(action[~may] == 6) < 0.6
        assert np.all(blunder[action == 6])
    else:
        # Before resignation is allowed nothing would resign: SAI's rule keeps the draw.
        assert 0.4 < np.mean(action[may] == 6) < 0.6
    off = dataclasses.replace(config, random_takeback=False)
    drawn, _ = selfplay._choose_moves(RULES, off, jax.random.PRNGKey(1), states, out, jnp.asarray(may))
    assert 0.4 < np.mean(np.asarray(drawn)[may] == 6) < 0.6
    # A draw above the resign threshold is never taken back.
    states_ok, out_ok = _search_output(n, q_bad=0.3)
    states_ok = states_ok.replace(move_count=jnp.full((n,), move_count, jnp.int32))
    kept, _ = selfplay._choose_moves(RULES, config, jax.random.PRNGKey(1), states_ok, out_ok, jnp.asarray(may))
    assert 0.4 < np.mean(np.asarray(kept)[may] == 6) < 0.6


def _three_moves(n):
    """n identical roots: move 0 the searched move (most visits, value 0.8), move 3 a lightly visited best
    value (0.95), move 6 visited with value 0.72."""
    states, out = _search_output(n, q_bad=0.72)
    a = RULES.num_actions
    visits = np.zeros(a, np.int32)
    visits[[0, 3, 6]] = [6, 1, 3]
    q = np.full(a, np.nan, np.float32)
    q[[0, 3, 6]] = [0.8, 0.95, 0.72]
    out = out.replace(
        visit_counts=jnp.broadcast_to(jnp.asarray(visits), (n, a)),
        child_q=jnp.broadcast_to(jnp.asarray(q), (n, a)),
        policy=jnp.broadcast_to(jnp.asarray(visits / visits.sum(), jnp.float32), (n, a)),
        best_value=jnp.full((n,), 0.95, jnp.float32),
    )
    return states, out


def test_blunder_reference_search_move_measures_the_drop_from_the_searched_move():
    """SAI's engine measures a random move's drop from its first child (the searched move), not from the best
    value among the visited children, which a lightly visited child can inflate."""
    n = 2000
    states, out = _three_moves(n)
    base = selfplay.SelfPlayConfig(random_moves=4, blunder_threshold=0.1)
    draws = {}
    for reference in ("best_child", "search_move"):
        config = dataclasses.replace(base, blunder_reference=reference)
        action, blunder = selfplay._choose_moves(RULES, config, jax.random.PRNGKey(2), states, out)
        action, blunder = np.asarray(action), np.asarray(blunder)
        assert set(np.unique(action)) == {0, 3, 6}
        draws[reference] = action
        if reference == "best_child":  # below 0.95 - 0.1: the searched move itself and move 6
            np.testing.assert_array_equal(blunder, action != 3)
        else:  # below 0.8 - 0.1: none of them
            assert not blunder.any()
    np.testing.assert_array_equal(draws["best_child"], draws["search_move"])  # the reference moves no draw
    # A wider drop: move 6 (0.72) is 0.08 below the searched move's 0.8.
    sai = dataclasses.replace(base, blunder_reference="search_move", blunder_threshold=0.05)
    action, blunder = selfplay._choose_moves(RULES, sai, jax.random.PRNGKey(2), states, out)
    np.testing.assert_array_equal(np.asarray(blunder), np.asarray(action) == 6)
    # Past the random moves nothing is a blunder.
    late = states.replace(move_count=jnp.full((n,), 4, jnp.int32))
    action, blunder = selfplay._choose_moves(RULES, sai, jax.random.PRNGKey(2), late, out)
    assert np.all(np.asarray(action) == 0) and not np.asarray(blunder).any()


def test_a_game_whose_blunders_are_spent_draws_among_the_others_only():
    n = 2000
    states, out = _three_moves(n)
    config = selfplay.SelfPlayConfig(random_moves=4, blunder_threshold=0.05, blunder_reference="search_move")
    left = jnp.asarray(np.tile([-1, 0, 2], n // 3 + 1)[:n], jnp.int32)  # no limit, spent, two left
    action, blunder = selfplay._choose_moves(RULES, config, jax.random.PRNGKey(3), states, out, None, left)
    action, blunder, left = np.asarray(action), np.asarray(blunder), np.asarray(left)
    assert not np.any(action[left == 0] == 6) and not blunder[left == 0].any()
    for allowed in (-1, 2):  # move 6 drawn ∝ its 3 of 10 visits, and a blunder
        share = np.mean(action[left == allowed] == 6)
        assert abs(share - 0.3) < 4 * np.sqrt(0.21 / np.sum(left == allowed))
        np.testing.assert_array_equal(blunder[left == allowed], action[left == allowed] == 6)
    # The same draws without an allowance as with an unlimited one.
    free, _ = selfplay._choose_moves(RULES, config, jax.random.PRNGKey(3), states, out)
    np.testing.assert_array_equal(np.asarray(free)[left == -1], action[left == -1])


def test_blunder_allowance_is_poisson_with_sais_mean():
    key = jax.random.PRNGKey(4)
    sai = selfplay.SelfPlayConfig(blunders_allowed_mean=float(np.log(4.0)))
    draws = np.asarray(selfplay.blunder_allowance(sai, key, (40_000,)))
    assert abs(draws.mean() - np.log(4.0)) < 0.03 and abs(np.mean(draws == 0) - 0.25) < 0.01
    assert np.all(np.asarray(selfplay.blunder_allowance(selfplay.SelfPlayConfig(), key, (5,))) == -1)
    none = dataclasses.replace(sai, blunders_allowed_mean=0.0)
    assert np.all(np.asarray(selfplay.blunder_allowance(none, key, (5,))) == 0)


def test_self_play_spends_each_games_allowance():
    """In played games (a blunder: any draw below the searched move's value), no game plays more blunders
    than the allowance it drew, and each new game draws its own."""
    one = dataclasses.replace(
        CAPPED, batch_size=32, fast_simulations=0, full_search_prob=1.0, random_moves=6, blunder_threshold=0.0,
        blunder_reference="search_move", random_temperature=2.0, blunders_allowed_mean=1.0,
    )  # fmt: skip
    chunk = selfplay.make_chunk_fn(oracle, RULES, SEARCH, one)
    sp = selfplay.init_selfplay(RULES, one, jax.random.PRNGKey(0), ALPHA_EMPTY, BETA_EMPTY)
    allowed = dict(zip(np.asarray(sp.game_id).tolist(), np.asarray(sp.blunders_left).tolist()))
    sp, rec = chunk(None, sp, jax.random.PRNGKey(100), jnp.float32(ALPHA_EMPTY), jnp.float32(BETA_EMPTY))
    blunders = collections.Counter(np.asarray(rec.game_id)[np.asarray(rec.blunder)].tolist())
    assert sum(blunders.values()) > 5 and all(blunders[g] <= allowed[g] for g in blunders if g in allowed)
    spent = [g for g in allowed if allowed[g] > 0 and blunders[g] == allowed[g]]
    assert spent and 0 in allowed.values()  # games that used theirs up, and games allowed none
    left = np.asarray(sp.blunders_left)
    assert np.all(left >= 0) and np.all(left <= 8)  # Poisson(1) draws for the new games


def test_fixed_komi_share_plays_that_share_at_the_board_komi():
    n = 40_000
    key = jax.random.PRNGKey(3)
    base = selfplay.SelfPlayConfig(komi_mode="sample", komi=9.5)
    shared = dataclasses.replace(base, fixed_komi_share=0.3)
    free = np.asarray(selfplay._complete_komi(RULES, base, key, 4.0, 0.2, (n,)))
    mixed = np.asarray(selfplay._complete_komi(RULES, shared, key, 4.0, 0.2, (n,)))
    # Share 0 is the draw of before, bit for bit (the golden games keep).
    np.testing.assert_array_equal(free, np.asarray(selfplay.sample_komi(key, 4.0, 0.2, 1.0, (n,), bound=25.0)))
    moved = mixed != free
    # The others keep their sampled komi; the share moved to 9.5 is 0.3
    # less what was drawn at 9.5 anyway.
    assert np.all(mixed[moved] == 9.5)
    at = np.mean(mixed == 9.5)
    p_free = np.mean(free == 9.5)
    assert abs(at - (0.3 + 0.7 * p_free)) < 4 * np.sqrt(0.25 / n)


def test_komi_curve_fit_recovers_a_known_curve():
    rng = np.random.default_rng(0)
    alpha, beta = 9.0, 1.5
    komi = np.round(rng.normal(8.0, 3.0, 20_000) * 2) / 2
    wins = (rng.random(komi.size) < 1 / (1 + np.exp(-beta * (alpha - komi)))).astype(float)
    a, b, se = selfplay_stats.komi_curve_fit(komi, wins)
    assert abs(a - alpha) < 0.1 and abs(b - beta) < 4 * se and 0 < se < 0.1
    # A flat curve: β near 0 and the ridge keeps α finite or NaN, never an error.
    flat = (rng.random(komi.size) < 0.5).astype(float)
    _, b_flat, se_flat = selfplay_stats.komi_curve_fit(komi, flat)
    assert abs(b_flat) < 4 * se_flat
    # Draws count half: a sample of draws only is fitted as a coin at every komi.
    _, b_draws, _ = selfplay_stats.komi_curve_fit(komi[:100], np.full(100, 0.5))
    assert abs(b_draws) < 1e-6
    # Separable data (Black wins exactly below 9): a large finite β at α = 9.
    sep = (komi < 9).astype(float)
    a_sep, b_sep, _ = selfplay_stats.komi_curve_fit(komi, sep)
    assert np.isfinite(b_sep) and b_sep > 5 and abs(a_sep - 9.0) < 0.3
    # One komi (a fixed-komi run) or too few games: not identified.
    assert all(np.isnan(selfplay_stats.komi_curve_fit(np.full(50, 9.5), wins[:50])))
    assert all(np.isnan(selfplay_stats.komi_curve_fit(komi[:5], wins[:5])))


def test_komi_curve_fit_within_openings_separates_the_openings_spread_from_the_play():
    """Openings with their own fair komi and one sharp β: the pooled fit is flat, the within fit
    finds the β; with one opening the two agree."""
    rng = np.random.default_rng(1)
    alphas, beta = {"a": 5.0, "b": 9.0, "c": 13.0}, 2.0
    groups = rng.choice(list(alphas), 6000)
    komi = np.round(rng.normal(9.0, 4.0, groups.size) * 2) / 2
    p = 1 / (1 + np.exp(-beta * (np.array([alphas[g] for g in groups]) - komi)))
    wins = (rng.random(komi.size) < p).astype(float)
    b, se, games, used = selfplay_stats.komi_curve_fit_within(komi, wins, groups)
    assert (games, used) == (6000, 3) and abs(b - beta) < 4 * se and 0 < se < 0.2
    _, pooled, _ = selfplay_stats.komi_curve_fit(komi, wins)
    assert pooled < 0.5 * beta  # the openings' spread flattens the pooled curve
    one = groups == "b"
    b1, se1, _, _ = selfplay_stats.komi_curve_fit_within(komi[one], wins[one], groups[one])
    _, b1_pooled, _ = selfplay_stats.komi_curve_fit(komi[one], wins[one])
    assert b1 == pytest.approx(b1_pooled, rel=1e-2) and se1 > 0
    # Small openings and one-komi openings leave the fit; too few games is NaN, not an error.
    labels = np.where(np.arange(komi.size) < 5, "tiny", groups)
    fixed = np.where(labels == "c", 9.5, komi)
    _, _, games, used = selfplay_stats.komi_curve_fit_within(fixed, wins, labels)
    assert used == 2 and games == int(np.isin(labels, ["a", "b"]).sum())
    assert np.isnan(selfplay_stats.komi_curve_fit_within(komi[:5], wins[:5], groups[:5])[0])
    with pytest.raises(ValueError, match="differ in length"):
        selfplay_stats.komi_curve_fit_within(komi, wins, groups[:10])


def _game(gid, first, *, winner=1, komi=9.5, is_branch=False, resigned=False, rows=10):
    n = 7
    return selfplay.FinishedGame(
        game_id=gid, is_branch=is_branch, komi=komi, winner=winner, margin=3.0 * winner, resigned=resigned,
        may_resign=True, would_resign=0, length=20, start_move=5 if is_branch else 0,
        actions=(first, 1, 2), start_planes=np.zeros((n, n, 2), np.uint8), start_to_play=1,
        blunder_move=-1, rows=rows,
    )  # fmt: skip


def test_generation_stats_report_the_opening_and_resigned_rows():
    rules = go.GoRules(7)
    d4, c3 = go.from_gtp(rules, "D4"), go.from_gtp(rules, "C3")
    games = [_game(i, d4, rows=10) for i in range(6)]
    games += [_game(6, c3, resigned=True, rows=30), _game(7, c3, rows=10)]
    games += [_game(8, 0, is_branch=True, resigned=True, rows=40)]  # a branch: not an opening
    stats = selfplay_stats.generation_stats(games, 9.0, 1.0)
    assert stats["first_move_shares"] == {"D4": 0.75, "C3": 0.25}
    assert stats["first_move_top"] == "D4" and stats["first_move_top_share"] == 0.75
    assert stats["first_move_centre_share"] == 0.75
    assert stats["first_move_entropy"] == pytest.approx(-(0.75 * np.log2(0.75) + 0.25 * np.log2(0.25)))
    assert stats["resigned_row_share"] == pytest.approx(70 / 140)
    # Too few complete games for a komi curve: NaN, not an error.
    assert np.isnan(stats["data_beta"]) and stats["komi_sd"] == 0.0


def test_generation_stats_fit_the_datas_komi_curve():
    rng = np.random.default_rng(1)
    komi = np.round(rng.normal(9.0, 2.0, 600) * 2) / 2
    black = rng.random(600) < 1 / (1 + np.exp(-2.0 * (9.0 - komi)))
    games = [_game(i, 24, komi=float(k), winner=1 if b else -1) for i, (k, b) in enumerate(zip(komi, black))]
    games.append(_game(999, 24, komi=-40.0, winner=-1, is_branch=True))  # branches' komi are their positions'
    stats = selfplay_stats.generation_stats(games, 9.0, 2.0)
    assert abs(stats["data_alpha"] - 9.0) < 0.5
    assert abs(stats["data_beta"] - 2.0) < 4 * stats["data_beta_se"]
    assert stats["komi_sd"] == pytest.approx(komi.std())
    pooled = stats["komi_results"]
    assert sum(n for n, _ in pooled.values()) == 600 and list(pooled) == sorted(pooled, key=float)
    assert pooled["9"] == [int(np.sum(komi == 9)), float(np.sum(black[komi == 9]))]


def test_the_switches_reach_self_play_through_the_config(tmp_path):
    """configs/tiny.py with playout caps, the full-search-only opening and a
    fixed-komi share of 1: the waiting slots' evaluations are counted, every
    complete game is at the board's komi (so the data's β is not
    identified), and the log line carries the data's curve and the opening."""
    config = config_lib.load_config(str(TINY))
    config.generations = 1
    config.selfplay.fast_simulations = 1
    config.selfplay.full_search_prob = 0.5
    config.selfplay.random_full_search_only = True
    config.selfplay.random_takeback = True
    config.selfplay.fixed_komi_share = 1.0
    log = []
    pipeline.train_and_evaluate(config, str(tmp_path / "run"), progress=False, log=log.append)
    with open(tmp_path / "run" / "metrics.jsonl") as f:
        (m,) = [json.loads(line) for line in f]
    assert m["selfplay_waiting_evaluations"] > 0 and m["selfplay_waiting_evaluations"] % 2 == 0  # 1 simulation + root
    assert m["selfplay_waiting_evaluations"] < m["selfplay_evaluations"]
    assert m["komi_histogram"].get("24.5", 0) >= m["complete_games"]  # branches may land there too
    assert np.isnan(m["data_beta"])
    assert "data α" in log[0] and "opened" in log[0]


def test_upsets_away_from_the_fair_komi_flatten_the_whole_range_but_not_the_local_fit():
    """What the 7×7 arms' data look like: a sharp turn at the fair komi 9
    (β = 3), but 15% upsets at every komi (the komi's favourite loses
    anyway), and komi sampled widely (sd 6). The fit over every game is
    flat; the local fit, near the net's α_∅, keeps the turn."""
    rng = np.random.default_rng(2)
    komi = np.round(rng.normal(9.0, 6.0, 3000) * 2) / 2
    sharp = 1 / (1 + np.exp(-3.0 * (9.0 - komi)))
    p = 0.15 + 0.7 * sharp
    black = rng.random(komi.size) < p
    games = [_game(i, 24, komi=float(k), winner=1 if b else -1) for i, (k, b) in enumerate(zip(komi, black))]
    stats = selfplay_stats.generation_stats(games, 9.0, 0.3)
    assert stats["data_beta"] < 0.6
    assert stats["data_beta_local"] > 1.2 and abs(stats["data_alpha_local"] - 9.0) < 0.5
    assert stats["local_games"] == int(np.sum(np.abs(komi - 9.0) <= selfplay_stats.LOCAL_KOMI_WINDOW))


def test_the_kept_fit_is_over_the_games_whose_empty_board_is_trained_on():
    """Games with a blunder lose their empty-board row; the ``_kept`` fit is over the others. Here the
    blunders are the upsets, so the kept games turn sharply at the fair komi while all of them do not."""
    rng = np.random.default_rng(3)
    komi = np.round(rng.normal(9.0, 3.0, 3000) * 2) / 2
    black = rng.random(komi.size) < 1 / (1 + np.exp(-3.0 * (9.0 - komi)))
    upset = rng.random(komi.size) < 0.3
    black = np.where(upset, ~black, black)
    games = [
        dataclasses.replace(_game(i, 24, komi=float(k), winner=1 if b else -1), blunder_move=3 if u else -1)
        for i, (k, b, u) in enumerate(zip(komi, black, upset))
    ]
    games.append(dataclasses.replace(_game(3000, 24, is_branch=True), blunder_move=2))  # counted in the share only
    stats = selfplay_stats.generation_stats(games, 9.0, 0.5)
    assert stats["kept_games"] == int((~upset).sum())
    assert stats["blunder_game_share"] == pytest.approx((upset.sum() + 1) / len(games))
    assert stats["data_beta"] < 1.0 and abs(stats["data_beta_kept"] - 3.0) < 4 * stats["data_beta_kept_se"]
    assert abs(stats["data_alpha_kept"] - 9.0) < 0.3
