"""Playing styles (saijax.play.styles): line maps, weighted scoring, the online root
prior, the mixed approach's move choice."""

import dataclasses
import types

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from saijax.core import go, search
from saijax.play import players, styles


def test_line_numbers_and_edge_band():
    lines = styles.line_numbers(7).reshape(7, 7)
    assert lines[0].tolist() == [1] * 7
    assert lines[3].tolist() == [1, 2, 3, 4, 3, 2, 1]
    assert np.bincount(lines.ravel()).tolist() == [0, 24, 16, 8, 1]
    assert [styles.edge_lines(n) for n in (5, 7, 9, 13, 19)] == [1, 2, 2, 3, 4]


def test_online_line_weights_follow_the_paper_on_13_and_19():
    w13 = styles.line_weights("centre", 13)
    lines13 = styles.line_numbers(13)
    assert np.all(w13[:-1][lines13 <= 3] == 0.5) and np.all(w13[:-1][lines13 > 3] == 2.0)
    assert w13[-1] == 1.0  # pass
    w19 = styles.line_weights("edge", 19)[:-1]
    lines19 = styles.line_numbers(19)
    for line, want in ((1, 2.0), (2, 2.0), (3, 1.5), (4, 0.75), (5, 0.5), (6, 0.25), (10, 0.25)):
        assert np.all(w19[lines19 == line] == want), line
    with pytest.raises(ValueError, match="style must be one of"):
        styles.line_weights("diagonal", 9)


def test_score_weights_map_on_13x13_is_the_papers():
    w = styles.score_weights(13, 0.2)
    lines = styles.line_numbers(13)
    assert np.allclose(w[lines <= 3], 0.8) and np.allclose(w[lines == 4], 1.0) and np.allclose(w[lines >= 5], 1.2)
    assert np.allclose(styles.score_weights(13, -0.2)[lines <= 3], 1.2)
    with pytest.raises(ValueError, match="centre_bonus"):
        styles.score_weights(13, 1.0)


def test_weighted_rules_score_territory_with_the_map():
    rules = go.GoRules(5)
    styled = styles.style_rules(rules, 0.5)  # 5×5: line 1 counts 0.5, line 2 counts 1, the centre 1.5
    # Black walls off the left two columns; White holds the rest.
    black = [r * 5 + c for r in range(5) for c in (1,)]
    white = [r * 5 + c for r in range(5) for c in (2,)]
    state = go.setup(rules, 0.0, black=black, white=white, to_play=1)
    plain = float(go.area_score(rules, state))
    assert plain == 10 - 15
    weights = styles.score_weights(5, 0.5)
    cols = np.arange(25) % 5
    want = weights[cols <= 1].sum() - weights[cols >= 2].sum()
    assert float(go.area_score(styled, state)) == pytest.approx(want)
    assert float(go.area_score(styled, state)) != plain
    assert styles.style_rules(styled, 0.0).point_weights is None


def test_bad_point_weights_name_the_field():
    with pytest.raises(ValueError, match="point_weights must be 25 finite numbers"):
        go.GoRules(5, point_weights=(1.0,) * 24)
    with pytest.raises(ValueError, match="point_weights"):
        go.GoRules(5, point_weights=(float("nan"),) * 25)


def test_last_moves_reads_the_opponents_stone_and_ignores_passes():
    rules = go.GoRules(5)
    state = go.init(rules, jnp.float32(0.5))
    batch = lambda s: jax.tree_util.tree_map(lambda x: jnp.asarray(x)[None], s)  # noqa: E731
    assert styles.last_moves(batch(state)).tolist() == [-1]
    state = go.play(rules, state, 7)
    assert styles.last_moves(batch(state)).tolist() == [7]
    state = go.play(rules, state, 12)
    assert styles.last_moves(batch(state)).tolist() == [12]
    state = go.play(rules, state, rules.pass_action)
    assert styles.last_moves(batch(state)).tolist() == [-1]


@pytest.mark.parametrize("style", ["centre", "edge"])
def test_online_style_steers_a_flat_prior_to_its_lines(style):
    # A uniform net on an empty 7×7 board: every move looks the same, so the
    # deterministic Gumbel search picks by the style's root prior alone.
    base = players.uniform_player(7)
    config = dataclasses.replace(
        base.config,
        gumbel_scale=0.0,
        num_simulations=8,
        max_num_considered_actions=8,
        root_prior=styles.OnlineStyle(style),
    )
    rules = go.GoRules(7)
    states = jax.tree_util.tree_map(lambda x: jnp.asarray(x)[None], go.init(rules, jnp.float32(9.0)))
    out = search.run_search(base.evaluator, None, jax.random.PRNGKey(0), states, rules=rules, config=config)
    line = styles.line_numbers(7)[int(out.action[0])]
    assert (line >= 3) if style == "centre" else (line <= 2)
    # The reported prior is still the net's own (flat over the legal moves).
    prior = np.asarray(out.child_prior[0])
    assert np.allclose(prior[prior > 0], prior[prior > 0][0])


def test_root_prior_must_have_weights():
    with pytest.raises(ValueError, match="root_prior"):
        search.SearchConfig(root_prior="centre")


def _out(visits, q, prior):
    visits = jnp.asarray([visits], jnp.int32)
    return types.SimpleNamespace(
        child_visits=visits,
        child_q=jnp.where(visits > 0, jnp.asarray([q], jnp.float32), jnp.nan),
        child_prior=jnp.asarray([prior], jnp.float32),
    )


def test_mixed_select_keeps_acceptable_biased_moves_only():
    #                 move:  0     1     2     3
    normal = _out([10, 5, 3, 0], [0.70, 0.67, 0.50, 0.0], [0.5, 0.3, 0.2, 0.0])
    # The biased net likes 3 (unknown to the normal search), 2 (too weak), then 1.
    biased = _out([1, 4, 6, 9], [0.5] * 4, [0.05, 0.3, 0.3, 0.35])
    assert styles.mixed_select(normal, biased).tolist() == [1]
    # With move 1's biased prior below p_th nothing is left: the normal move.
    biased_low = _out([1, 4, 6, 9], [0.5] * 4, [0.05, 0.05, 0.3, 0.35])
    assert styles.mixed_select(normal, biased_low).tolist() == [0]
    # A looser w_diff accepts move 2 as well, the biased search's most visited of those.
    assert styles.mixed_select(normal, biased, w_diff=0.25).tolist() == [2]


def test_line_shares():
    shares = styles.line_shares([0, 8, 24, 49, 16], 7)  # corner, line 2, D4 centre, pass, line 3
    assert shares["moves"] == 4
    assert shares["lines_1_2"] == pytest.approx(0.5) and shares["lines_3_plus"] == pytest.approx(0.5)
    assert np.isnan(styles.line_shares([49], 7)["lines_1_2"])


def test_online_style_reads_a_style_name():
    assert styles.online_style("centre") == styles.OnlineStyle("centre")
    assert styles.online_style(" Center ") == styles.OnlineStyle("centre")
    assert styles.online_style("EDGE") == styles.OnlineStyle("edge")
    assert styles.online_style("off") is None and styles.online_style("none") is None
    with pytest.raises(ValueError, match="unknown style 'diagonal': use off, centre, edge"):
        styles.online_style("diagonal")
