"""Hand-made positions with known answers for saijax.core.go."""

import chex
import jax
import jax.numpy as jnp
import numpy as np
import pytest

from saijax.core import go

R5 = go.GoRules(5)
R9 = go.GoRules(9)


def position(rules, diagram, komi=0.0, to_play=1):
    """A start position from rows of 'X' (black), 'O' (white) and '.'."""
    rows = [r.replace(" ", "") for r in diagram.strip().splitlines()]
    assert len(rows) == rules.size and all(len(r) == rules.size for r in rows)
    black = [i for i, ch in enumerate("".join(rows)) if ch == "X"]
    white = [i for i, ch in enumerate("".join(rows)) if ch == "O"]
    return go.setup(rules, komi, black=black, white=white, to_play=to_play)


def pt(rules, r, c):
    return r * rules.size + c


def board(rules, state):
    return np.asarray(state.board).reshape(rules.size, rules.size)


def test_rules_validation():
    for bad in (1, 20, 0, -3):
        with pytest.raises(ValueError, match=f"size={bad}"):
            go.GoRules(bad)
    with pytest.raises(ValueError, match="2..19"):
        go.GoRules("9")
    assert hash(go.GoRules(9)) == hash(go.GoRules(9, 162))
    assert go.GoRules(9).max_moves == 162


def test_capture_one_stone():
    s = position(
        R5,
        """
        . X . . .
        X O . . .
        . X . . .
        . . . . .
        . . . . .""",
    )
    s = go.play(R5, s, pt(R5, 1, 2))
    assert board(R5, s)[1, 1] == 0
    assert board(R5, s)[1, 2] == 1


def test_capture_many_stones():
    s = position(
        R5,
        """
        . O O O X
        . X X X .
        . . . . .
        . . . . .
        . . . . .""",
    )
    s = go.play(R5, s, pt(R5, 0, 0))
    assert (board(R5, s)[0, 1:4] == 0).all()
    assert float(go.area_score(R5, s)) == 25.0


def test_snapback():
    s = position(
        R5,
        """
        . . O . .
        X X O . .
        O O O . .
        . . . . .
        . . . . .""",
        to_play=-1,
    )
    s = go.play(R5, s, pt(R5, 0, 0))  # white throws in
    s = go.play(R5, s, pt(R5, 0, 1))  # black captures the one stone
    assert board(R5, s)[0, 0] == 0
    s = go.play(R5, s, pt(R5, 0, 0))  # white recaptures three stones
    b = board(R5, s)
    assert b[0, 0] == -1 and b[0, 1] == 0 and b[1, 0] == 0 and b[1, 1] == 0


def test_suicide_single_and_multi():
    s = position(
        R5,
        """
        . X . . .
        X . . . .
        . . . . .
        . . . . .
        . . . . .""",
        to_play=-1,
    )
    legal = np.asarray(go.legal_actions(R5, s))
    assert not legal[pt(R5, 0, 0)]
    with pytest.raises(ValueError, match="illegal move A5"):
        go.play(R5, s, "A5")
    s = position(
        R5,
        """
        O . X . .
        X X . . .
        . . . . .
        . . . . .
        . . . . .""",
        to_play=-1,
    )
    assert not bool(go.legal_actions(R5, s)[pt(R5, 0, 1)])  # two-stone suicide
    # Illegal inside jit is a no-op.
    s2 = go.step(R5, s, pt(R5, 0, 1))
    chex.assert_trees_all_equal(s2, s)


def test_connecting_into_the_last_liberty():
    s = position(
        R5,
        """
        . O X . .
        O X . . .
        X . . . .
        . . . . .
        . . . . .""",
        to_play=-1,
    )
    # Both white stones' only liberty is A5: joining them there is suicide.
    assert not bool(go.legal_actions(R5, s)[pt(R5, 0, 0)])
    s = position(
        R5,
        """
        . O . . .
        O X . . .
        X . . . .
        . . . . .
        . . . . .""",
        to_play=-1,
    )
    # B5 keeps C5, so A5 touches no empty point yet is legal.
    assert bool(go.legal_actions(R5, s)[pt(R5, 0, 0)])


KO = """
    . X O . .
    X O . O .
    . X O . .
    . . . . .
    . . . . ."""


def test_simple_ko_and_recapture_ban():
    s = position(R5, KO)
    s = go.play(R5, s, pt(R5, 1, 2))  # black takes the ko
    assert board(R5, s)[1, 1] == 0
    ko = pt(R5, 1, 1)
    assert not bool(go.legal_actions(R5, s)[ko])
    assert bool(s.illegal_planes[0, ko])  # the SAI plane marks simple ko
    with pytest.raises(ValueError, match="illegal"):
        go.play(R5, s, ko)
    s = go.play(R5, s, pt(R5, 4, 4))  # ko threat
    s = go.play(R5, s, pt(R5, 4, 3))  # answer
    assert bool(go.legal_actions(R5, s)[ko])
    s = go.play(R5, s, ko)  # white retakes
    assert board(R5, s)[1, 2] == 0


def test_start_position_counts_for_superko():
    # From a set-up position (no move history), White's immediate retake would
    # recreate the start position itself.
    s = position(R5, KO)
    s = go.play(R5, s, pt(R5, 1, 2))
    assert not bool(go.legal_actions(R5, s)[pt(R5, 1, 1)])
    assert int(s.move_count) == 1


def test_triple_ko_superko():
    """Three kos: the sixth capture would recreate the start position."""
    # K1 (rows 0-2, cols 0-3): a white stone in the ko, black captures at (1,2).
    # K2 (rows 0-2, cols 4-7): a black stone in at (1,6), white captures at (1,5).
    # K3 (rows 4-6, cols 0-3): like K1, black captures at (5,2).
    s = position(
        R9,
        """
        . X O . . X O . .
        X O . O X . X O .
        . X O . . X O . .
        . . . . . . . . .
        . X O . . . . . .
        X O . O . . . . .
        . X O . . . . . .
        . . . . . . . . .
        . . . . . . . . .""",
    )
    start_hash = np.asarray(s.hash)
    moves = [(1, 2), (1, 5), (5, 2), (1, 1), (1, 6)]
    # 1 B takes K1; 2 W takes K2; 3 B takes K3; 4 W retakes K1; 5 B retakes K2.
    for r, c in moves:
        s = go.play(R9, s, pt(R9, r, c))
    final = pt(R9, 5, 1)  # W retaking K3 would recreate the start position
    assert not bool(go.legal_actions(R9, s)[final])
    # It is not a simple ko: the last capture was elsewhere.
    assert not bool(s.illegal_planes[0, final])
    # And it really is the start position that it would repeat.
    raw = go.step(R9, s.replace(legal=s.legal.at[final].set(True)), final)
    np.testing.assert_array_equal(np.asarray(raw.hash), start_hash)


def test_empty_board_scores_zero_and_komi_decides():
    s = go.init(R9, 7.5)
    assert float(go.area_score(R9, s)) == 0.0
    assert int(go.outcome(R9, s)) == -1
    s0 = go.init(R9, 0.0)
    assert int(go.outcome(R9, s0)) == 0
    s1 = go.init(R9, -0.5)
    assert int(go.outcome(R9, s1)) == 1


def test_seki_and_dame_count_for_nobody():
    s = position(
        R5,
        """
        . X . O .
        . X . O .
        . X . O .
        . X . O .
        . X . O .""",
    )
    assert float(go.area_score(R5, s)) == 0.0
    own = np.asarray(go.ownership(R5, s)).reshape(5, 5)
    assert (own[:, 0] == 1).all() and (own[:, 2] == 0).all() and (own[:, 4] == -1).all()
    # A real seki: two eyeless groups sharing two liberties, neither can approach.
    s = position(
        R5,
        """
        X . O X .
        X X O X X
        O O O X .
        . O X X X
        O O X . X""",
    )
    own = np.asarray(go.ownership(R5, s)).reshape(5, 5)
    assert own[0, 1] == 0  # shared liberty of the seki
    assert float(go.area_score(R5, s)) == float(np.sum(own))
    weights = np.zeros(25, np.float32)
    weights[0] = 2.0
    assert float(go.area_score(R5, s, weights)) == 2.0


def _ownership_oracle(size, board):
    """Tromp–Taylor owners by breadth-first search over each empty region (plain Python)."""
    grid = board.reshape(size, size)
    out = grid.astype(np.int32).copy()
    seen = np.zeros_like(grid, bool)
    for r0 in range(size):
        for c0 in range(size):
            if grid[r0, c0] != 0 or seen[r0, c0]:
                continue
            region, borders, todo = [], set(), [(r0, c0)]
            seen[r0, c0] = True
            while todo:
                r, c = todo.pop()
                region.append((r, c))
                for rr, cc in ((r - 1, c), (r + 1, c), (r, c - 1), (r, c + 1)):
                    if 0 <= rr < size and 0 <= cc < size:
                        if grid[rr, cc] != 0:
                            borders.add(int(grid[rr, cc]))
                        elif not seen[rr, cc]:
                            seen[rr, cc] = True
                            todo.append((rr, cc))
            owner = borders.pop() if len(borders) == 1 else 0
            for r, c in region:
                out[r, c] = owner
    return out.reshape(-1)


@pytest.mark.parametrize("size", [2, 3, 7, 9, 19])
def test_ownership_matches_a_region_search_on_random_boards(size):
    """go.ownership (bitboard rows) against a breadth-first search of each empty region, on random boards
    from nearly empty to nearly full, a batch at once (vmap), including regions along every edge."""
    rules = go.GoRules(size)
    rng = np.random.default_rng(size)
    fills = np.repeat([0.02, 0.1, 0.3, 0.5, 0.7, 0.9], 8)
    boards = np.stack([rng.choice([0, 1, -1], size=size * size, p=[1 - f, f / 2, f / 2]) for f in fills])
    boards[0] = 0  # the empty board: nobody's
    boards[1, :] = 0
    boards[1, size * size // 2] = -1  # one stone owns the board
    start = go.init(rules, 7.5)
    states = jax.tree_util.tree_map(lambda x: jnp.broadcast_to(x, (len(boards),) + x.shape), start)
    states = states.replace(board=jnp.asarray(boards, jnp.int8))
    got = np.asarray(jax.jit(jax.vmap(lambda s: go.ownership(rules, s)))(states))
    for board_, own in zip(boards, got, strict=True):
        np.testing.assert_array_equal(own, _ownership_oracle(size, board_), err_msg=str(board_.reshape(size, size)))
    assert (got[0] == 0).all() and (got[1] == -1).all()


def test_handicap_white_to_move():
    s = go.init(R9, 0.5, handicap=2)
    assert int(s.to_play) == -1
    stones = sorted(go.to_gtp(R9, i) for i in np.flatnonzero(np.asarray(s.board) == 1))
    assert stones == ["C3", "G7"]
    s4 = go.init(go.GoRules(19), 0.5, handicap=4)
    stones = sorted(go.to_gtp(go.GoRules(19), i) for i in np.flatnonzero(np.asarray(s4.board) == 1))
    assert stones == ["D16", "D4", "Q16", "Q4"]
    with pytest.raises(ValueError, match="handicap=5"):
        go.init(go.GoRules(7), 0.5, handicap=5)


def test_spread_points_are_distinct_spread_and_deterministic():
    for size in (2, 3, 5, 6, 9):
        rules = go.GoRules(size)
        for count in (0, 2, 3, size * size - 1, size * size):
            points = go.spread_points(rules, count)
            assert len(set(points)) == count and all(0 <= p < size * size for p in points)
            assert go.spread_points(rules, count) == points
    # 5×5 (no fixed handicap): the centre first, then as far as possible from the stones placed.
    assert [go.to_gtp(R5, p) for p in go.spread_points(R5, 5)] == ["C3", "A5", "C5", "E5", "A3"]
    # 9×9: the third line first, then the stones stay at least 6 lines apart.
    rows_cols = [divmod(p, 9) for p in go.spread_points(R9, 4)]
    assert go.to_gtp(R9, go.spread_points(R9, 1)[0]) == "C7"
    assert min(max(abs(a - c), abs(b - d)) for i, (a, b) in enumerate(rows_cols) for c, d in rows_cols[:i]) == 6
    for bad in (-1, 26, 2.0, True):
        with pytest.raises(ValueError, match="count"):
            go.spread_points(R5, bad)


def test_check_komi_is_the_one_komi_rule():
    for komi in (0, 7.5, -3, 0.5, -0.5, 10_000, np.float32(6.5), np.int64(7)):
        assert go.check_komi(komi) == float(komi) and isinstance(go.check_komi(komi), float)
    for bad, text in [
        (6.3, "6.3"),
        (7.25, "7.25"),
        (float("nan"), "nan"),
        (float("inf"), "inf"),
        (10_000.5, "10000.5"),
        (-20_000, "-20000"),
        (1e308, "1e+308"),  # twice it is infinite: a ValueError, not round()'s OverflowError
    ]:
        with pytest.raises(ValueError, match="selfplay.komi must be a multiple of 0.5") as info:
            go.check_komi(bad, "selfplay.komi")
        assert text in str(info.value)
    for bad in ("7.5", None, True, [7.5]):
        with pytest.raises(ValueError, match="komi must be a number"):
            go.check_komi(bad)


def test_two_passes_end_the_game_and_move_cap():
    s = go.init(R5, 0.5)
    s = go.play(R5, s, "pass")
    assert not bool(s.terminated)
    s = go.play(R5, s, "C3")
    s = go.play(R5, s, "pass")
    s = go.play(R5, s, "pass")
    assert bool(s.terminated)
    assert not np.asarray(go.legal_actions(R5, s)).any()
    with pytest.raises(ValueError, match="ended"):
        go.play(R5, s, "B2")
    assert int(go.outcome(R5, s)) == -1  # White's lone C3 owns the board
    assert float(go.area_score(R5, s)) == -25.0
    chex.assert_trees_all_equal(go.step(R5, s, 0), s)  # no-op once finished

    capped = go.GoRules(5, max_moves=3)
    s = go.init(capped, 0.5)
    for v in ["A1", "E5", "C3"]:
        s = go.play(capped, s, v)
    assert bool(s.terminated) and int(s.move_count) == 3


def test_resign():
    s = go.init(R5, 7.5)
    s = go.play(R5, s, "C3")
    s = go.resign(s)  # white resigns
    assert bool(s.terminated) and int(go.outcome(R5, s)) == 1


def test_gtp_vertices():
    assert go.to_gtp(R9, 0) == "A9"
    assert go.to_gtp(R9, 80) == "J1"
    assert go.to_gtp(R9, 81) == "pass"
    assert go.from_gtp(R9, "j1") == 80
    assert go.from_gtp(R9, "PASS") == 81
    assert go.from_gtp(R9, "e5") == 40
    for bad in ["I5", "K1", "A10", "A0", "", "5A", "pass5"]:
        with pytest.raises(ValueError):
            go.from_gtp(R9, bad)
    for a in range(82):
        assert go.from_gtp(R9, go.to_gtp(R9, a)) == a


def test_features_hand_checked():
    s = position(
        R5,
        """
        X O . . .
        . . . . .
        . . . . .
        . . . . .
        . . . . .""",
    )
    f0 = np.asarray(go.features(R5, s))
    assert f0.shape == (5, 5, 17)
    assert f0[0, 0, 0] == 1 and f0[0, 1, 4] == 1  # black to move: own = X
    assert f0[..., 1:4].sum() == 0 and f0[..., 5:8].sum() == 0  # before start
    assert f0[0, 0, 8] == 1 and f0[0, 1, 8] == 1 and f0[..., 8].sum() == 2
    assert f0[..., 9:12].sum() == 0 and f0[..., 13:16].sum() == 0
    # X at A5 has one liberty (A4), O at B5 has two: A4 is a last-liberty point.
    assert f0[1, 0, 12] == 1 and f0[..., 12].sum() == 1
    assert (f0[..., 16] == 1).all()

    s = go.play(R5, s, "C3")
    f1 = np.asarray(go.features(R5, s))
    # White to move: own = white stones now and at t-1.
    assert f1[0, 1, 0] == 1 and f1[0, 1, 1] == 1
    assert f1[0, 0, 4] == 1 and f1[2, 2, 4] == 1 and f1[2, 2, 5] == 0
    assert f1[2, 2, 8] == 1 and f1[2, 2, 9] == 0  # occupied now, empty before
    assert f1[1, 0, 12] == 1 and f1[1, 0, 13] == 1  # A4 stays a last liberty
    # White at A4 captures A5, so it is legal and stays in the plane.
    assert f1[..., 10:12].sum() == 0


def test_symmetries_map_planes_and_policy_consistently():
    s = position(
        R5,
        """
        X . . . .
        . . O . .
        . . . . .
        . . . X .
        . . . . .""",
    )
    planes = go.features(R5, s)
    stones = np.asarray(s.board).astype(np.float32)
    policy = jnp.concatenate([jnp.asarray(stones), jnp.array([7.0])])
    for pf, polf, inv in go.symmetries(R5):
        tp = np.asarray(pf(planes))
        tpol = np.asarray(polf(policy))
        own = tp[..., 0].reshape(-1) - tp[..., 4].reshape(-1)
        np.testing.assert_array_equal(own, tpol[:-1])
        assert tpol[-1] == 7.0
        back = go.symmetries(R5)[inv][1](jnp.asarray(tpol))
        np.testing.assert_array_equal(np.asarray(back), np.asarray(policy))


def test_jit_no_retrace_and_vmap_with_komi_per_game():
    @jax.jit
    @chex.assert_max_traces(n=1)
    def vstep(states, actions):
        return jax.vmap(lambda s, a: go.step(R5, s, a))(states, actions)

    @jax.jit
    @chex.assert_max_traces(n=1)
    def vlegal(states):
        return jax.vmap(lambda s: go.legal_actions(R5, s))(states)

    komi = jnp.array([-3.5, 0.0, 0.5, 7.5])
    states = jax.vmap(lambda k: go.init(R5, k))(komi)
    for a in ([12, 0, 24, 25], [13, 1, 23, 25], [25, 25, 25, 7]):
        states = vstep(states, jnp.array(a))
        vlegal(states)
    # Game 3 passed twice, so its third action was a no-op.
    np.testing.assert_array_equal(np.asarray(states.terminated), [False, False, False, True])
    np.testing.assert_array_equal(np.asarray(states.move_count), [3, 3, 3, 2])
    np.testing.assert_array_equal(np.asarray(states.komi), np.asarray(komi))
    outcomes = jax.vmap(lambda s: go.outcome(R5, s))(states)
    single = go.outcome(R5, jax.tree_util.tree_map(lambda x: x[1], states))
    assert int(outcomes[1]) == int(single)
