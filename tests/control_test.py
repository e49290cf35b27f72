"""Position control (saijax.play.control): each method on hand-built search outputs with known answers,
parameter validation, the naturalness metrics, and one controlled lockstep arena match on 5×5."""

import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from saijax.core import go, search
from saijax.play import arena, control, match, players

NAN = math.nan


def _output(size, visits=None, q=None, prior=None, lead=None, action=None):
    """A one-game SearchOutput on an N×N board from {action: value} dicts (other children unvisited)."""
    actions = size * size + 1

    def row(values, fill, dtype=np.float32):
        x = np.full((1, actions), fill, dtype)
        for a, v in (values or {}).items():
            x[0, a] = v
        return jnp.asarray(x)

    visit_counts = row(visits, 0, np.int32)
    if action is None:
        action = int(jnp.argmax(visit_counts[0]))
    zeros = jnp.zeros(1, jnp.float32)
    return search.SearchOutput(
        action=jnp.asarray([action], jnp.int32),
        visit_counts=visit_counts,
        policy=jnp.zeros((1, actions), jnp.float32),
        root_alpha=zeros,
        root_beta=zeros + 1,
        root_winrate=zeros + 0.5,
        root_value=zeros + 0.5,
        x_lambda=zeros,
        x_mu=zeros,
        child_visits=visit_counts,
        child_q=row(q, NAN),
        child_prior=row(prior, 0.0),
        child_score_lead=row(lead, NAN),
        child_beta=row(None, NAN),
        child_pv=jnp.full((1, actions, 1), -1, jnp.int32),
        pv=jnp.full((1, 1), -1, jnp.int32),
        best_value=zeros + 0.5,
        score_estimate=zeros,
    )


def _states(size, black=(), white=(), to_play=1):
    state = go.setup(go.GoRules(size), 7.5, black=black, white=white, to_play=to_play)
    return jax.tree_util.tree_map(lambda x: x[None], state)


def _select(config, out, states, last=(-1,)):
    last = jnp.asarray([list(last)], jnp.int32)
    action = int(control.select(config, out, states, last, jax.random.PRNGKey(0))[0])
    chosen = np.asarray(control.candidates(config, out, states, last)[0])
    assert chosen[action], "the selected move is not in the candidate set"
    return action, set(np.flatnonzero(chosen).tolist())


# ---------------------------------------------------------------------------
# Method A and the naive method.

# 5×5 (A = 26), 260 simulations: a candidate needs ⌈1.0625 · 260 / 26⌉ = 11 visits.
A_VISITS = {0: 200, 1: 30, 2: 20, 3: 5, 4: 5}
A_Q = {0: 0.9, 1: 0.6, 2: 0.45, 3: 0.5, 4: 0.52}


def test_min_visits_scaling():
    config = control.ControlConfig()
    assert control.min_visits(config, 16000, 13) == 100  # the paper's 100 of 16,000 on 13×13
    assert control.min_visits(config, 260, 5) == 11
    assert control.min_visits(config, 4, 5) == 1  # never below one visit
    assert control.min_visits(config, 1600, 19) == 5


@pytest.mark.parametrize(
    "method,target,expected",
    [("naive", 0.5, 2), ("A", 0.5, 2), ("A", 0.8, 0), ("A", 0.62, 1), ("A", 0.0, 2), ("A", 1.0, 0)],
)
def test_method_a_picks_the_candidate_nearest_the_target(method, target, expected):
    config = control.ControlConfig(method=method, target_winrate=target)
    out = _output(5, A_VISITS, A_Q)
    action, chosen = _select(config, out, _states(5))
    # Moves 3 and 4 (5 visits, win rates 0.5 and 0.52) are under-visited: never candidates.
    assert chosen == {0, 1, 2}
    assert action == expected


def test_method_a_threshold_follows_the_share():
    out = _output(5, A_VISITS, A_Q)
    # 20·26 ≥ share·260 up to share = 2: move 2 stays a candidate; above it, it drops.
    assert _select(control.ControlConfig(min_visit_share=2.0), out, _states(5))[1] == {0, 1, 2}
    assert _select(control.ControlConfig(min_visit_share=2.01), out, _states(5)) == (1, {0, 1})
    # A share of 0 keeps every visited move: move 3 (win rate 0.5) wins.
    assert _select(control.ControlConfig(min_visit_share=0.0), out, _states(5)) == (3, {0, 1, 2, 3, 4})


def test_most_visited_move_is_always_a_candidate():
    # Visits spread evenly over all 26 actions: nobody reaches 1.0625 shares, so the
    # most visited (the first of the ties) is the only candidate, not move 5 at 0.5.
    visits = {a: 10 for a in range(26)}
    q = {a: 0.9 for a in range(26)}
    q[5] = 0.5
    action, chosen = _select(control.ControlConfig(), _output(5, visits, q), _states(5))
    assert chosen == {0} and action == 0


# ---------------------------------------------------------------------------
# Method B: distance weights.


def test_distance_weights_follow_the_seven_segments():
    # 9×9: the opponent's last move at (0, 0), a stone of the player to move at (1, 1).
    states = _states(9, black=[10], white=[0], to_play=1)
    w = np.asarray(control.distance_weights(states, jnp.asarray([[0]]))[0])
    along_row = [w[c] for c in range(1, 9)]  # d = 1 .. 8
    assert along_row == pytest.approx([1.5, 1.5, 1.25, 1.0, 0.75, 0.5, 0.25, 0.1])
    assert w[2 * 9 + 2] == pytest.approx(1.25)  # d = 2.83
    assert w[3 * 9 + 4] == pytest.approx(0.75)  # d = 5 exactly: 4 < d ≤ 5
    assert w[81] == 1.0  # pass keeps its prior
    # No stone of the player to move within distance 3: probabilities unchanged.
    far = _states(9, black=[40], white=[0], to_play=1)
    assert np.all(np.asarray(control.distance_weights(far, jnp.asarray([[0]]))) == 1.0)
    # A pass or no last move is ignored.
    for last in ([[81]], [[-1]]):
        assert np.all(np.asarray(control.distance_weights(states, jnp.asarray(last))) == 1.0)
    # Two last moves: the nearest one that attacks counts.
    both = np.asarray(control.distance_weights(states, jnp.asarray([[0, 80]]))[0])
    assert both[79] == pytest.approx(0.1)  # no stone of ours near the far corner's move
    two = _states(9, black=[10, 70], white=[0, 80], to_play=1)
    both = np.asarray(control.distance_weights(two, jnp.asarray([[0, 80]]))[0])
    assert both[79] == pytest.approx(1.5) and both[1] == pytest.approx(1.5)
    assert both[40] == pytest.approx(0.5)  # d = 5.66 from both


# 9×9, Black to move and winning. The opponent (White) just played the corner (0, 0).
# m1 at the centre (w 0.80); m_far at (8, 8): w 0.66, p 0.30, d = 11.3 (ω 0.1);
# m_near at (0, 1): w 0.68, p 0.15, d = 1 (ω 1.5).
M1, M_FAR, M_NEAR = 40, 80, 1
B_VISITS = {M1: 400, M_FAR: 200, M_NEAR: 200}
B_Q = {M1: 0.80, M_FAR: 0.66, M_NEAR: 0.68}
B_PRIOR = {M1: 0.30, M_FAR: 0.30, M_NEAR: 0.15}


def test_method_b_prefers_moves_near_the_opponents_last_move():
    out = _output(9, B_VISITS, B_Q, B_PRIOR)
    config = control.ControlConfig(method="B", gentleness=2.5)
    # Black has a stone at (1, 1), within 3 of White's move: the weights apply.
    # m_far's p' = 0.03 fails every condition; m_near's p' = 0.225 passes
    # (w1 − w = 0.12 < 0.06 · 2.5 and p' > 0.20).
    attacked = _states(9, black=[10], white=[0])
    assert _select(config, out, attacked, last=(0,)) == (M_NEAR, {M1, M_NEAR})
    # No Black stone near the corner: plain priors, m_far (0.14 < 0.15, p 0.30 > 0.20)
    # is accepted and m_near (p 0.15) is not; the lowest win rate in M+ is played.
    quiet = _states(9, black=[50], white=[0])
    assert _select(config, out, quiet, last=(0,)) == (M_FAR, {M1, M_FAR})
    assert _select(config, out, attacked, last=(-1,)) == (M_FAR, {M1, M_FAR})


def test_methods_b_and_c_play_the_best_move_unless_winning():
    q = {a: v - 0.3 for a, v in B_Q.items()}  # w1 = 0.50 ≤ 0.55
    out = _output(9, B_VISITS, q, B_PRIOR)
    for method in ("B", "C"):
        config = control.ControlConfig(method=method)
        assert _select(config, out, _states(9, black=[10], white=[0]), last=(0,)) == (M1, {M1})


def test_method_c_avoids_a_big_sacrifice_of_naturalness():
    # §4.3's Fig. 2 example: D3 (w 0.697, p 0.400) and L11 (w 0.690, p 0.139), on
    # 9×9 (L11 stands on another far point there; C reads no distances).
    d3, l11 = 6 * 9 + 3, 2 * 9 + 7
    out = _output(9, {d3: 3000, l11: 2000}, {d3: 0.697, l11: 0.690}, {d3: 0.400, l11: 0.139})
    states, none = _states(9), (-1,)
    # Ikeda and Viennot's procedure (B without weights) plays the lowest win rate, L11.
    assert _select(control.ControlConfig(method="B"), out, states, none) == (l11, {d3, l11})
    # C with α = 0.1: w' = 0.657 for D3, 0.676 for L11, so D3.
    assert _select(control.ControlConfig(method="C", naturalness_weight=0.1), out, states, none)[0] == d3
    # A small α barely moves w: L11 again (0.6930 vs 0.6886).
    assert _select(control.ControlConfig(method="C", naturalness_weight=0.01), out, states, none)[0] == l11


# ---------------------------------------------------------------------------
# The endgame algorithm.

# §7.3, Table 6: E8, G8, J8, F8 with their scoreLead and prior (on 9×9 here).
E8, G8, J8, F8 = 1 * 9 + 4, 1 * 9 + 6, 1 * 9 + 7, 1 * 9 + 5
T6_LEAD = {E8: -1.234, G8: 0.527, J8: 0.605, F8: 1.862}
T6_PRIOR = {E8: 0.4755, G8: 0.1410, J8: 0.1307, F8: 0.1094}


def _endgame_out(prior, lead):
    return _output(9, {a: 10 for a in lead}, {a: 0.5 for a in lead}, prior, lead)


def test_endgame_table6():
    config = control.ControlConfig(method="endgame", gamma=2.0)
    action, chosen = _select(config, _endgame_out(T6_PRIOR, T6_LEAD), _states(9))
    assert action == E8 and chosen == {E8, G8, J8, F8}


def test_endgame_drops_low_prior_and_too_costly_moves():
    # With γ = 5, E8 scores 0.4755 / 5^2.766 ≈ 0.0056. Two in-band moves would beat it:
    # X (p 0.009, lead −7) has a prior below 0.01; Y (p 0.05, lead −5) loses more than
    # 5 points against F8's 1.862.
    x, y = 0, 1
    prior = {**T6_PRIOR, x: 0.009, y: 0.05}
    lead = {**T6_LEAD, x: -7.0, y: -5.0}
    config = control.ControlConfig(method="endgame", gamma=5.0)
    out = _endgame_out(prior, lead)
    assert _select(config, out, _states(9)) == (E8, {E8, G8, J8, F8})
    assert _select(config.replace(max_loss=7.0), out, _states(9))[0] == y
    assert _select(config.replace(max_loss=9.0, min_prior=0.005), out, _states(9))[0] == y
    assert _select(config.replace(max_loss=9.0, min_prior=0.005, gamma=1.0), out, _states(9))[0] == E8
    # Only the most probable moves are listed: keeping 3 drops F8 (and X, Y).
    assert _select(config.replace(top_moves=3), out, _states(9)) == (E8, {E8, G8, J8})


def test_endgame_plays_an_obvious_move_and_needs_a_score_lead():
    lead = {0: 3.0, 1: -5.0}
    out = _endgame_out({0: 0.95, 1: 0.04}, lead)
    config = control.ControlConfig(method="endgame")
    assert _select(config, out, _states(9)) == (0, {0})
    # An unvisited move has no score lead: dropped, whatever its prior.
    out = _output(9, {1: 10}, {1: 0.5}, {0: 0.6, 1: 0.3}, {1: -8.0})
    assert _select(config, out, _states(9)) == (1, {1})


def test_finished_games_and_empty_candidate_sets_keep_the_search_move():
    out = _output(5, {25: 4}, {25: 0.3}, {25: 0.5, 0: 0.5}, action=25)
    # Endgame: nothing visited has a lead, so the search's own move.
    assert _select(control.ControlConfig(method="endgame"), out, _states(5)) == (25, {25})
    finished = _states(5)
    finished = finished.replace(terminated=jnp.asarray([True]))
    out = _output(5, A_VISITS, A_Q, action=25)
    assert _select(control.ControlConfig(), out, finished) == (25, {25})


def test_ties_are_broken_per_key_and_select_is_jitted_once():
    out = _output(5, {0: 10, 1: 10}, {0: 0.25, 1: 0.75})
    config = control.ControlConfig()
    fn = control.select_fn(config)
    last = jnp.full((1, 1), -1, jnp.int32)
    fn(out, _states(5), last, jax.random.PRNGKey(0))
    compiled = fn._cache_size()  # other tests may have compiled this config for other shapes
    picks = {int(fn(out, _states(5), last, jax.random.PRNGKey(s))[0]) for s in range(16)}
    assert picks == {0, 1}
    assert fn._cache_size() == compiled


def test_last_opponent_moves():
    history = np.array([[12, 13, 6, -1], [3, 4, 5, 6]])
    np.testing.assert_array_equal(control.last_opponent_moves(history, 0, 2), [[-1, -1], [-1, -1]])
    np.testing.assert_array_equal(control.last_opponent_moves(history, 3, 2), [[6, 12], [5, 3]])
    np.testing.assert_array_equal(control.last_opponent_moves(history, 2), [[13], [4]])


# ---------------------------------------------------------------------------
# Validation.


@pytest.mark.parametrize(
    "changes,field",
    [
        ({"method": "D"}, "method"),
        ({"min_visit_share": -1}, "min_visit_share"),
        ({"target_winrate": 1.5}, "target_winrate"),
        ({"method": "naive", "target_winrate": 0.6}, "target_winrate"),
        ({"c_puct": 0}, "c_puct"),
        ({"winning_threshold": -0.1}, "winning_threshold"),
        ({"gentleness": 0}, "gentleness"),
        ({"naturalness_weight": 0}, "naturalness_weight"),
        ({"naturalness_weight": math.nan}, "naturalness_weight"),
        ({"opponent_moves": 0}, "opponent_moves"),
        ({"top_moves": 2.5}, "top_moves"),
        ({"obvious_prior": 0}, "obvious_prior"),
        ({"min_prior": 1.0}, "min_prior"),
        ({"max_loss": -1}, "max_loss"),
        ({"lead_band": (-4, -10)}, "lead_band"),
        ({"lead_band": (1,)}, "lead_band"),
        ({"gamma": 0.5}, "gamma"),
        ({"gamma": True}, "gamma"),
    ],
)
def test_validation_names_the_field(changes, field):
    with pytest.raises(ValueError, match=f"ControlConfig.{field}"):
        control.ControlConfig(**changes)


def test_config_is_hashable_and_search_settings():
    a = control.ControlConfig(method="C", gentleness=2, lead_band=[-10, -4])
    b = control.ControlConfig(method="C", gentleness=2.0)
    assert a == b and hash(a) == hash(b) and a != control.ControlConfig(method="C")
    base = search.SearchConfig(num_simulations=8)
    assert a.search_config(base) == search.SearchConfig(num_simulations=8, algorithm="puct", c_puct=10.0)
    assert control.ControlConfig(method="endgame").search_config(base) == base
    with pytest.raises(ValueError, match="value_mode"):
        a.search_config(search.SearchConfig(value_mode="score"))


# ---------------------------------------------------------------------------
# Naturalness metrics.


def test_naturalness_on_a_hand_made_game():
    # 5×5, White controlled (odd plies): C3 D3 B4 D2 pass A5 E5.
    moves = [12, 13, 6, 18, 25, 0, 4]
    white = np.arange(len(moves)) % 2 == 1
    priors = [NAN, 0.5, NAN, 0.01, NAN, 0.2, NAN]
    result = control.naturalness(moves, white, priors, board_size=5)
    # Ply 1: D3 next to C3 (1); ply 3: (3, 3) from (1, 1) (2.83); ply 5 answers a pass.
    assert result.moves == 3 and result.unnatural == 1 and result.distance_moves == 2
    assert result.mean_distance == pytest.approx((1 + math.sqrt(8)) / 2)
    black = control.naturalness(moves, ~white, board_size=5, plies=(1, 7))
    # Plies 2 and 6 (ply 4 is a pass): (1, 1) from (2, 3), (0, 4) from (0, 0).
    assert black.unnatural is None and black.moves == 3 and black.distance_moves == 2
    assert black.mean_distance == pytest.approx((math.sqrt(5) + 4) / 2)
    assert math.isnan(control.naturalness([25], [True], board_size=5).mean_distance)
    with pytest.raises(ValueError, match="controlled"):
        control.naturalness(moves, white[:3], board_size=5)


def _uniform(params, states):
    del params
    zeros = jnp.zeros(states.board.shape[0], jnp.float32)
    return jnp.zeros(states.legal.shape, jnp.float32), zeros, zeros + 1


def test_move_priors_replay_a_game():
    rules = go.GoRules(5)
    moves = [12, 13, 6]
    states = [go.init(rules, 7.5)]
    for a in moves[:-1]:
        states.append(go.play(rules, states[-1], a))
    priors = control.move_priors(_uniform, None, states, moves)
    # A flat prior over the legal moves: 26, then 25, then 24 (pass included).
    np.testing.assert_allclose(priors, [1 / 26, 1 / 25, 1 / 24], rtol=1e-6)
    assert control.naturalness(moves, [True] * 3, priors, board_size=5).unnatural == 3


# ---------------------------------------------------------------------------
# A real lockstep match.

MATCH_CONFIG = search.SearchConfig(algorithm="puct", c_puct=10.0, num_simulations=4, pv_length=0)


@pytest.fixture(scope="module")
def match_players():
    base = players.random_player(5, blocks=1, filters=8, config=MATCH_CONFIG, name="plain")
    return base, base.replace(name="controlled")


@pytest.mark.parametrize("method", ["C", "endgame"])
def test_arena_plays_controlled_moves_from_the_candidate_sets(match_players, method, monkeypatch):
    plain, controlled = match_players
    config = control.ControlConfig(method=method)
    controlled = controlled.replace(control=config, config=config.search_config(MATCH_CONFIG))
    calls = []
    jitted = control.select_fn

    def recording(cfg):
        fn = jitted(cfg)

        def select(out, states, last, key):
            action = fn(out, states, last, key)
            calls.append((cfg, out, states, last, action))
            return action

        return select

    monkeypatch.setattr(control, "select_fn", recording)
    settings = match.MatchSettings(games=4, komi=7.5, seed=5, max_moves=12)
    games = arena.play_match(controlled, plain, settings)
    assert len(games) == 4 and all(1 <= g.moves <= 12 for g in games)
    # The controlled side moves on every other ply of both colour groups, until its games end.
    assert len(calls) >= 4
    for cfg, out, states, last, action in calls:
        assert cfg == config
        chosen = np.asarray(control.candidates(cfg, out, states, last))
        active = ~np.asarray(states.terminated)
        action = np.asarray(action)
        assert np.all(chosen[np.arange(len(action)), action][active])
        # Every running game has the opponent's last move, except before the first move.
        first = np.asarray(states.move_count) == 0
        assert np.all(((np.asarray(last)[:, 0] >= 0) | first)[active])


# ---------------------------------------------------------------------------
# Settings from text (GTP lz-setoption, --control_option).


def test_settings_from_text():
    assert control.parse_method("c") == "C" and control.parse_method("Endgame") == "endgame"
    assert control.parse_method("off") is None and control.parse_method("none") is None
    with pytest.raises(ValueError, match="method"):
        control.parse_method("D")
    config = control.set_option(control.ControlConfig(), "Gentleness", "1")
    assert config == control.ControlConfig(gentleness=1.0)
    assert control.set_option(config, "lead_band", "-8,-2").lead_band == (-8.0, -2.0)
    assert control.set_option(config, "top_moves", "10").top_moves == 10
    assert control.set_option(config, "method", "b").method == "B"
    for field, text in [
        ("gentleness", "x"),
        ("gentleness", "nan"),
        ("gentleness", "0"),
        ("top_moves", "2.5"),
        ("lead_band", "-2"),
        ("method", "off"),
    ]:
        with pytest.raises(ValueError, match=f"ControlConfig.{field}"):
            control.set_option(config, field, text)
    with pytest.raises(ValueError, match="unknown position-control option 'frobnicate'"):
        control.set_option(config, "frobnicate", "1")
    assert {"method", "gentleness", "gamma", "lead_band", "min_visit_share"} <= set(control.FIELDS)
    assert control.from_options("C", ["gentleness=1", "naturalness_weight=0.5"]) == control.ControlConfig(
        method="C", gentleness=1.0, naturalness_weight=0.5
    )
    assert control.from_options("off", ["gamma=2"]) is None
    for method, options, word in [
        ("off", ["gamma=1.5x"], "gamma"),
        ("C", ["gentleness"], "field=value"),
        ("C", ["method=B"], "method"),
        ("naive", ["target_winrate=0.6"], "target_winrate"),
    ]:
        with pytest.raises(ValueError, match=word):
            control.from_options(method, options)
