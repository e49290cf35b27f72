"""experiments/position_control/position_control.py: TOST, power, the dominance check, endgame starts, and a tiny
run against a net.

The statistics are checked against direct ``scipy.stats`` computations on
hand cases. The runs play 5×5 games of a ``uniform`` strong player (no
network) against a tiny random net (1 block × 8 filters, 2 visits), so the
module compiles one opponent search and the uniform player's searches once.
"""

import math
import os

import numpy as np
import pytest
import scipy.stats

from experiments.lib import common
from experiments.position_control import position_control as pc
from saijax.analysis import results, stats
from saijax.core import go, sgf
from saijax.play import gtp_match, match, players

TINY = ["--board_size=5", "--visits=2", "--opponent_blocks=1", "--opponent_filters=8", "--black_komi=0.5",
        "--white_komi=0.5"]  # fmt: skip


def _tost(wins, games, margin):
    lower = scipy.stats.binomtest(wins, games, 0.5 - margin, alternative="greater").pvalue
    upper = scipy.stats.binomtest(wins, games, 0.5 + margin, alternative="less").pvalue
    return max(lower, upper)


def _rows(label, wins, games, *, start=""):
    method = label.split(":")[0].removesuffix(pc.STARTS)
    return [
        dict(
            condition=label,
            method=method,
            param="",
            opponent="W",
            visits=2,
            algorithm="gumbel m=16",
            noise="none",
            opening_moves=4,
            start=start,
            first_ply=4 if start != "" else 0,
            game=i,
            net_result=1.0 if i < wins else 0.0,
            net_margin=3.5 if i < wins else -2.5,
            unnatural=1,
            mean_distance=2.0,
            opponent_mean_distance=2.5,
        )  # fmt: skip
        for i in range(games)
    ]


@pytest.mark.parametrize("wins, games, margin", [(107, 214, 0.10), (20, 40, 0.10), (30, 40, 0.10), (0, 16, 0.10),
                                                 (9, 16, 0.15), (52, 100, 0.05)])  # fmt: skip
def test_tost_p_is_the_larger_one_sided_exact_test(wins, games, margin):
    assert stats.equivalence_to_half(wins, games, margin) == pytest.approx(_tost(wins, games, margin), rel=1e-12)
    (row,) = pc.summarize(_rows("C:2.5", wins, games), ["C:2.5"], margin=margin)
    assert row["p_tost"] == pytest.approx(_tost(wins, games, margin), rel=1e-3)


def test_tost_power_and_games_needed():
    # 10 games, ±0.3: only 5 wins shows equivalence (P(X >= 5 | 0.2) = 0.033, P(X >= 4 | 0.2) = 0.121).
    assert stats.equivalence_power(10, 0.3) == pytest.approx(252 / 1024, rel=1e-12)
    # The exact power, by enumerating the counts the TOST itself accepts.
    for n in (212, 214):
        shown = [k for k in range(n + 1) if stats.equivalence_to_half(k, n, 0.10) <= 0.05]
        direct = scipy.stats.binom.pmf(shown, n, 0.5).sum()
        assert stats.equivalence_power(n, 0.10) == pytest.approx(direct, rel=1e-9)
    assert stats.equivalence_power(212, 0.10) < 0.8 <= stats.equivalence_power(214, 0.10)
    assert stats.equivalence_games_needed(0.10) == 214
    assert stats.equivalence_games_needed(0.10, multiple=2) == 214
    # Normal approximation: (z_0.95 + z_0.90)^2 * 0.25 / 0.01 = (1.6449 + 1.2816)^2 * 25 = 214.1.
    assert stats.equivalence_games_needed(0.10, method="normal") == 215
    assert stats.equivalence_games_needed(0.10, method="normal", multiple=2) == 216
    # A simulation agrees with the exact power at 214 games.
    rng = np.random.default_rng(0)
    accepted = np.array([stats.equivalence_to_half(k, 214, 0.10) <= 0.05 for k in range(215)])
    simulated = accepted[rng.binomial(214, 0.5, size=40_000)].mean()
    assert simulated == pytest.approx(stats.equivalence_power(214, 0.10), abs=0.01)
    with pytest.raises(ValueError, match="not inside"):
        stats.equivalence_games_needed(0.10, rate=0.65)
    lines = pc.power_lines(16, 8, 0.10)
    assert "needs 214 games" in lines[0] and "normal approximation: 216" in lines[0]
    assert "16 games per condition have power 0.00" in lines[0] and "Fisher" in lines[1]
    assert "no count (59 games are the fewest)" in lines[2]


def test_dominance_flag_and_warning():
    # 0.95^59 = 0.0485 < 0.05 <= 0.95^58 = 0.0510.
    assert pc.dominance(59, 59)["dominant"] == "yes" and pc.dominance(58, 58)["dominant"] == "unclear"
    assert pc.dominance(59, 59)["p_above_95"] == pytest.approx(0.95**59)
    assert pc.dominance_wins_needed(58) is None and pc.dominance_wins_needed(59) == 59
    weak = pc.dominance(11, 16)
    assert weak["dominant"] == "no"
    assert weak["p_below_95"] == pytest.approx(scipy.stats.binomtest(11, 16, 0.95, alternative="less").pvalue)
    summary = pc.summarize(_rows("none", 11, 16) + _rows("C:2.5", 8, 16), ["none", "C:2.5"])
    assert summary[0]["dominant"] == "no" and summary[1]["dominant"] == ""
    warning = pc.dominance_warning(summary)
    assert warning.startswith("WARNING") and "11/16" in warning and "fewer than 95%" in warning
    unclear = pc.dominance_warning(pc.summarize(_rows("none", 16, 16), ["none"]))
    assert "not shown to be above 95%" in unclear and "no record of 16 games can show it" in unclear
    assert pc.dominance_warning(pc.summarize(_rows("none", 60, 60), ["none"])) == ""


def test_summary_tests_against_each_baseline_with_corrections(tmp_path):
    rows = _rows("none", 15, 16) + _rows("B:2.5", 4, 16) + _rows("C:2.5", 8, 16)
    rows += _rows("none@starts", 12, 16, start=0) + _rows("endgame:5@starts", 7, 16, start=0)
    order = ["none", "B:2.5", "C:2.5", "none@starts", "endgame:5@starts"]
    by = {r["condition"]: r for r in pc.summarize(rows, order)}
    assert by["endgame:5@starts"]["p_fewer_wins"] == pytest.approx(stats.fisher_win_test(7, 16, 12, 16, "less"), 1e-3)
    assert by["C:2.5"]["p_fewer_wins"] == pytest.approx(stats.fisher_win_test(8, 16, 15, 16, "less"), 1e-3)
    assert by["endgame:5@starts"]["start"] == "1 endgame starts at ply 4" and by["C:2.5"]["start"] == "empty board"
    for base in ("none", "none@starts"):
        assert by[base]["p_fewer_wins"] == "" and by[base]["p_tost_holm"] == "" and by[base]["p_tost"] != ""
    controlled = [by[k] for k in ("B:2.5", "C:2.5", "endgame:5@starts")]
    for col in ("p_tost", "p_fewer_wins", "p_closer_to_half"):
        raw = [r[col] for r in controlled]
        assert [r[f"{col}_holm"] for r in controlled] == pytest.approx(stats.holm_correction(raw), rel=1e-3)
        assert [r[f"{col}_bh"] for r in controlled] == pytest.approx(stats.benjamini_hochberg(raw), rel=1e-3)
    # --summarize_only reads condition files written before the opponent could be a net (gnugo_ columns).
    old = [{**{k: v for k, v in r.items() if k != "opponent_mean_distance"}, "gnugo_mean_distance": 2.5, "sgf": ""}
           for r in _rows("none", 3, 4)]  # fmt: skip
    common.write_csv(tmp_path / "conditions" / "none.csv", old)
    assert pc.main(["--summarize_only", "--methods=none", "--outdir", str(tmp_path)]) == 0
    (row,) = common.read_csv(tmp_path / "summary.csv")
    assert set(pc.SUMMARY_COLUMNS) == set(row) and row["opponent_distance"] == "2.5" and row["dominant"] == "unclear"


def test_choose_starts_keeps_distinct_positions_inside_the_band():
    def cand(lead, moves):
        return dict(score_lead=lead, moves=moves, ply=2, game=len(moves))

    candidates = [cand(2.9, (1, 2)), cand(-3.0, (3, 4)), cand(math.nan, (5,)), cand(-0.5, (1, 2)),
                  cand(-2.5, (6, 7)), cand(10.0, (8, 9)), cand(0.0, (9, 10))]  # fmt: skip
    chosen = pc.choose_starts(candidates, band=3.0, count=5)
    # |−3.0| is not below the band, NaN (a game that ended) and 10 are out, (1, 2) comes twice.
    assert [(c["start"], c["moves"]) for c in chosen] == [(0, (1, 2)), (1, (6, 7)), (2, (9, 10))]
    assert len(pc.choose_starts(candidates, band=3.0, count=2)) == 2
    assert pc.choose_starts(candidates, band=0.1, count=5)[0]["moves"] == (9, 10)


def test_conditions_from_the_starts():
    conditions = pc.with_endgame_starts(pc.parse_conditions("none,C:2.5,endgame:2"))
    assert [(c.label, c.starts) for c in conditions] == [
        ("none", False), ("C:2.5", False), ("none@starts", True), ("endgame:2@starts", True)]  # fmt: skip
    assert pc.baseline_label("endgame:2@starts") == "none@starts" and pc.baseline_label("C:2.5") == "none"
    with pytest.raises(ValueError, match="endgame"):
        pc.with_endgame_starts(pc.parse_conditions("none,C:2.5"))
    # Table 7's comparison: Leela+ (C:2.5) from the same starts, listed with @starts.
    conditions = pc.with_endgame_starts(pc.parse_conditions("none,C:2.5,C:2.5@starts,endgame:5,none@starts"))
    assert [(c.label, c.starts) for c in conditions] == [
        ("none", False), ("C:2.5", False), ("none@starts", True), ("C:2.5@starts", True),
        ("endgame:5@starts", True)]  # fmt: skip
    assert conditions[3].config.gentleness == 2.5 and pc.baseline_label("C:2.5@starts") == "none@starts"
    with pytest.raises(ValueError, match="@starts needs --endgame_starts"):
        pc.run(pc.Settings(outdir="x", methods=("none", "C:2.5@starts")))
    assert pc.gnugo_level("gnugo", 7) == 7 and pc.gnugo_level("gnugo:3", 7) == 3
    assert pc.gnugo_level("W=zoo:go7-W3", 7) is None
    with pytest.raises(ValueError, match="gnugo"):
        pc.gnugo_level("gtp:gnugo --mode gtp", 7)
    settings = pc.Settings(outdir="x")
    assert (settings.opponent, pc.opening_moves(settings), settings.equivalence_margin, settings.endgame_ply) == (
        "gnugo", 0, 0.1, 24)  # fmt: skip
    assert pc.opening_moves(pc.Settings(outdir="x", opponent="zoo:go7-W3")) == 4


def test_match_settings_check_start_moves():
    settings = match.MatchSettings(games=2, start_moves=[np.array([1, 2]), (3, 4)])
    assert settings.start_moves == ((1, 2), (3, 4)) and settings.start_length() == 2
    assert match.MatchSettings(games=1).start_length() == 0
    with pytest.raises(ValueError, match="same length"):
        match.MatchSettings(games=2, start_moves=((1, 2), (3,)))
    with pytest.raises(ValueError, match="2 starts for 3 games"):
        match.MatchSettings(games=3, start_moves=((1,), (2,)))
    with pytest.raises(ValueError, match="not an action"):
        match.MatchSettings(games=1, start_moves=((-1,),))


@pytest.mark.parametrize("rival", ["self", "opponent"])
def test_tiny_run_against_a_net_with_endgame_starts(tmp_path, capsys, rival):
    argv = [*TINY, "--net=uniform", "--opponent=W=random", "--games=2", "--methods=none,endgame:5,C:2.5@starts",
            "--endgame_starts=1", "--endgame_ply=4", "--endgame_band=100", f"--endgame_rival={rival}",
            "--outdir", str(tmp_path)]  # fmt: skip
    assert pc.main(argv) == 0
    out = capsys.readouterr().out
    assert f"games of uniform vs {'uniform-copy' if rival == 'self' else 'W'} " in out
    assert "needs 214 games" in out and "WARNING" in out  # 2 games cannot show dominance
    assert {"summary.csv", "games.csv", "endgame_starts.csv", "position_control.png"} <= set(os.listdir(tmp_path))
    summary = common.read_csv(tmp_path / "summary.csv")
    assert [r["condition"] for r in summary] == ["none", "none@starts", "endgame:5@starts", "C:2.5@starts"]
    assert list(summary[0]) == list(pc.SUMMARY_COLUMNS)
    by = {r["condition"]: r for r in summary}
    assert by["none"]["dominant"] == "unclear" and by["none"]["opening_moves"] == "4"
    assert by["none"]["opponent"].startswith("W: 2 visits gumbel") and by["none"]["noise"] == "gumbel_scale=1"
    assert by["endgame:5@starts"]["p_tost_holm"] != "" and by["none@starts"]["p_tost_holm"] == ""
    assert by["endgame:5@starts"]["p_fewer_wins"] != "" and by["endgame:5@starts"]["opening_moves"] == "0"
    assert by["endgame:5@starts"]["p_fewer_wins_than_leela_plus"] != ""
    assert by["endgame:5@starts"]["p_fewer_unnatural_than_leela_plus_holm"] != ""
    assert by["C:2.5@starts"]["p_fewer_wins_than_leela_plus"] == "" and by["C:2.5@starts"]["games"] == "2"
    share = float(by["none"]["unnatural_share"])
    played = [g for g in common.read_csv(tmp_path / "games.csv") if g["condition"] == "none"]
    expected = sum(int(g["unnatural"]) for g in played) / sum(int(g["net_moves"]) for g in played)
    assert share == pytest.approx(expected, abs=1e-4)
    assert by["endgame:5@starts"]["start"] == "1 endgame starts at ply 4" and by["endgame:5@starts"]["games"] == "2"
    (start,) = common.read_csv(tmp_path / "endgame_starts.csv")
    assert start["ply"] == "4" and start["to_play"] == "black" and len(start["moves"].split()) == 4
    # The uniform net's α is 0: Black to move leads by −komi.
    assert float(start["score_lead"]) == pytest.approx(-0.5)
    rules = go.GoRules(5)
    moves = tuple(go.from_gtp(rules, v) for v in start["moves"].split())
    games = [g for g in common.read_csv(tmp_path / "games.csv") if g["condition"] == "endgame:5@starts"]
    assert [g["net_colour"] for g in games] == ["black", "white"]
    for g in games:
        record = sgf.read_sgf(g["sgf"])
        assert record.moves[:4] == moves and record.comments[0] == "start position move"
        assert g["first_ply"] == "4" and int(g["net_moves"]) == sum(c == (1 if g["net_colour"] == "black" else -1)
                                                                      for c in record.colours[4:])  # fmt: skip
    # A rerun reuses the starts and the played conditions.
    assert pc.main(argv) == 0
    assert "endgame starts: 1 of" in capsys.readouterr().out


def test_start_moves_against_gnugo(gnugo_path, tmp_path):
    del gnugo_path
    player = players.uniform_player(5, "u")
    settings = match.MatchSettings(games=2, komi=0.5, max_moves=8, start_moves=((12, 6), (12, 6)), sgf_dir=tmp_path)
    games = gtp_match.play_gtp_match(player, gtp_match.gnugo_arena_argv(level=1), settings)
    for g in games:
        record = sgf.read_sgf(g.sgf)
        assert record.moves[:2] == (12, 6) and record.comments[:2] == ("start position move",) * 2
    assert [g.black for g in games] == ["u", "gnugo-l1"] and all(isinstance(g, results.GameResult) for g in games)


def test_naturalness_and_distance_are_tested_against_naive():
    naive = _rows("naive", 5, 20)
    for i, g in enumerate(naive):
        g.update(unnatural=4 + i % 3, mean_distance=3.0 + 0.1 * (i % 4), net_moves=20)
    gentle = _rows("C:2.5", 10, 20)
    for i, g in enumerate(gentle):
        g.update(unnatural=i % 2, mean_distance=2.0 + 0.1 * (i % 4), net_moves=20)
    plain = _rows("none", 19, 20)
    for i, g in enumerate(plain):
        g.update(unnatural=i % 3, mean_distance=2.5 + 0.1 * (i % 5), net_moves=20)
    summary = {r["condition"]: r for r in pc.summarize([*plain, *naive, *gentle], ["none", "naive", "C:2.5"])}
    c = summary["C:2.5"]
    assert c["p_nearer_last_move"] < 1e-6 and c["p_fewer_unnatural_than_naive"] < 1e-6
    assert c["unnatural_share"] == pytest.approx(10 / 400)
    assert summary["naive"]["p_nearer_last_move"] == ""
    assert summary["naive"]["unnatural_share"] == pytest.approx(99 / 400)
    # Holm over the controlled conditions (naive has no test against itself): a family of one.
    assert c["p_nearer_last_move_holm"] == pytest.approx(c["p_nearer_last_move"], rel=1e-3)
