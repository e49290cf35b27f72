"""experiments/opening_spread/opening_spread.py's summary: Δ between the fair komi's neighbours and 4·atanh Δ,
from margins alone
(no games played)."""

import dataclasses
import math

import pytest

from experiments.opening_spread import opening_spread


def _settings(**changes):
    return opening_spread.Settings(plot_only=True, outdir="/nonexistent", **changes)


def test_delta_beta_inverts_a_logistic_over_one_point_of_komi():
    for beta in (0.2, 1.0, 2.0, 3.34):
        delta = 1 / (1 + math.exp(-beta / 2)) - 1 / (1 + math.exp(beta / 2))
        assert opening_spread.delta_beta(delta) == pytest.approx(beta)
    assert opening_spread.delta_beta(0.0) == 0.0
    assert opening_spread.delta_beta(-0.1) == pytest.approx(-4 * math.atanh(0.1))
    assert opening_spread.delta_beta(1.0) == math.inf and opening_spread.delta_beta(-1.0) == -math.inf
    assert math.isnan(opening_spread.delta_beta(math.nan))


def test_delta_komis_default_to_the_boards_fair_komi():
    assert opening_spread.delta_komis(_settings()) == (8.5, 9.5)
    assert opening_spread.delta_komis(_settings(board_size=5, komi=24.5)) == (24.5, 25.5)
    assert opening_spread.delta_komis(_settings(board_size=9, komi=7.5)) == (6.5, 7.5)
    assert opening_spread.delta_komis(_settings(delta_komis=(3.5, 4.5))) == (3.5, 4.5)
    with pytest.raises(ValueError, match="delta_komis"):
        opening_spread.delta_komis(_settings(delta_komis=(3.5,)))


def test_summary_delta_is_the_share_of_games_ending_at_the_fair_margin():
    margins = [9.0, 9.0, 9.0, 10.0, -49.0, 49.0, 8.0, 9.0]  # 4 of 8 end at exactly Black by 9
    row = opening_spread.summarise("visits", margins, [("D4",)] * len(margins), _settings())
    assert row["black_rate_8.5"] - row["black_rate_9.5"] == pytest.approx(0.5)
    assert (row["delta_komi_lo"], row["delta_komi_hi"], row["delta"]) == (8.5, 9.5, 0.5)
    assert row["delta_beta"] == pytest.approx(4 * math.atanh(0.5))
    assert row["implied_beta"] == pytest.approx(math.pi / (math.sqrt(3) * row["sd_board_margin"]))


class _Built(Exception):
    """Stops play_games once its self-play chunk is built."""


def test_the_games_search_with_the_players_agent(monkeypatch):
    seen = {}

    def make_chunk_fn(evaluator, rules, search_config, config, agent=None, **kwargs):
        seen.update(agent=agent, visits=search_config.num_simulations, random_moves=config.random_moves,
                    noise_moves=config.noise_moves, dirichlet_fraction=search_config.dirichlet_fraction)  # fmt: skip
        raise _Built

    monkeypatch.setattr(opening_spread.selfplay, "make_chunk_fn", make_chunk_fn)
    settings = opening_spread.Settings(net="random", board_size=5, games=2, visits=3, random_moves=2, lambda_=0.5,
                                       threshold=0.25, outdir="/nonexistent")  # fmt: skip
    player = opening_spread.load_net(settings.net, "", settings.player_options(), 5)
    with pytest.raises(_Built):
        opening_spread.play_games(player, "improved", settings)
    assert (seen["agent"].lambda_, seen["agent"].mu, seen["agent"].threshold) == (0.5, 0.0, 0.25)
    assert (seen["visits"], seen["random_moves"]) == (3, 2)
    # by default root noise on the random moves only, and none for PUCT (a played net searches without it)
    assert (seen["noise_moves"], seen["dirichlet_fraction"]) == (2, 0.0)
    noisy = dataclasses.replace(settings, noise_every_root=True, dirichlet_fraction=0.25)
    with pytest.raises(_Built):
        opening_spread.play_games(player, "improved", noisy)
    assert (seen["noise_moves"], seen["dirichlet_fraction"]) == (-1, 0.25)  # the recipe's self-play


def test_a_dirichlet_fraction_outside_zero_one_is_refused_with_its_field_named():
    with pytest.raises(ValueError, match="dirichlet_fraction"):
        opening_spread.Settings(net="random", dirichlet_fraction=1.5, outdir="/nonexistent").check()


def test_position_control_is_refused_with_its_field_named():
    with pytest.raises(ValueError, match="control"):
        opening_spread.Settings(net="random", control="C", outdir="/nonexistent").check()
