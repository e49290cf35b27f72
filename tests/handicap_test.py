"""handicap.py's calibrated maluses and tests, recovery.py's situations and tests, resumable conditions."""

import math

import numpy as np
import pytest

from experiments.handicap import handicap
from experiments.lib import common, matches
from experiments.recovery import recovery
from saijax.analysis import results


def test_choose_maluses_reads_the_margin_distribution():
    margins = [-10.5, -2.5, 3.5, 7.5, 12.5, 20.5, 30.5, 40.5]  # the strong net's, at malus 0
    rows = handicap.choose_maluses(margins, [0.5, 0.25, 0.1])
    # 4 of 8 margins exceed m for m in 8..12 (P = 0.5, the target): the smallest, 8, is chosen; 1 of 8
    # (0.125, above the 10% target) for m in 31..40: the largest, 40.
    assert [(r["malus"], r["predicted_rate"]) for r in rows] == [(8.0, 0.5), (21.0, 0.25), (40.0, 0.125)]
    # Margins with a gap (whole-board wins): below the plateau's rate, the hardest malus still winnable.
    gap = handicap.choose_maluses([58.5] * 3 + [1.5] * 7, [0.1])[0]
    assert (gap["malus"], gap["predicted_rate"]) == (58.0, 0.3)
    assert all(r["margins"] == 8 and float(r["malus"]).is_integer() for r in rows)
    assert handicap.choose_maluses([-5.5, -1.5], [0.5])[0] == dict(
        target_rate=0.5, malus=0.0, predicted_rate=0.0, margins=2
    )
    with pytest.raises(ValueError, match="no malus-0 games"):
        handicap.choose_maluses([], [0.5])
    with pytest.raises(ValueError, match="target_rates"):
        handicap.choose_maluses([1.5], [1.0])


def _game(black, white, komi, winner="black", margin=3.0):
    return results.GameResult(black=black, white=white, winner=winner, margin=margin, komi=komi, handicap=0)


def test_resume_conditions_keeps_full_cells_and_drops_cut_ones(tmp_path):
    path = str(tmp_path / "games.csv")
    full = matches.malus_conditions("fig3", "W", [0.0], 9.5)[0]  # S Black at 9.5, White at 9.5
    cut = matches.malus_conditions("fig3", "W", [2.0], 9.5)[0]  # S Black at 11.5, White at 7.5
    rows = [_game("S", "W", 9.5), _game("W", "S", 9.5, "white", -4.0)]
    rows += [_game("S", "W", 11.5)]  # the malus-2 cell lost its White half (a killed run)
    rows += [_game("X", "Y", 11.5)]  # another pairing: never touched
    results.append_results(path, rows)
    done, todo = matches._resume_conditions(path, "S", "W", [full, cut], games=2, colours="alternate")
    assert todo == [cut]
    assert [p.condition for p in done] == [full, full] and {p.game.black for p in done} == {"S", "W"}
    left = results.read_results(path)
    assert [(g.black, g.komi) for g in left] == [("S", 9.5), ("W", 9.5), ("X", 11.5)]


def test_decline_tests_and_pooled_rows():
    def row(strong, malus, wins, games=10, margin=5.0):
        return dict(figure="fig3", strong=strong, opponent="W", strong_colour="black", malus=malus, komi=9.5 + malus,
                    games=games, wins=wins, draws=0, losses=games - wins, win_rate=wins / games,
                    mean_margin=margin, mean_win_margin=margin, handicap=0, mu=0.0, **{"lambda": 0.0})  # fmt: skip

    rows = [row("S1", 0.0, 9), row("S1", 4.0, 2), row("S2", 0.0, 7, margin=1.0), row("S2", 4.0, 4)]
    pooled = matches.pooled_rows(rows, handicap.POOLED)
    assert [(r["malus"], r["games"], r["wins"]) for r in pooled] == [(0.0, 20, 16), (4.0, 20, 6)]
    assert pooled[0]["mean_margin"] == 3.0 and pooled[0]["win_rate"] == 0.8
    tests = handicap.decline_tests(rows + pooled, ("strong", "opponent", "strong_colour"), "malus")
    by = {t["strong"]: t for t in tests}
    assert set(by) == {"S1", "S2", handicap.POOLED} and by["S1"]["base_malus"] == 0.0
    assert by[handicap.POOLED]["p_fisher_less"] < 0.01 and by[handicap.POOLED]["p_fisher_less_holm"] == pytest.approx(
        by[handicap.POOLED]["p_fisher_less"]
    )  # a family of one
    # The per-net family: Holm multiplies the smaller of two p by 2.
    small = min(by["S1"]["p_fisher_less"], by["S2"]["p_fisher_less"])
    assert min(by["S1"]["p_fisher_less_holm"], by["S2"]["p_fisher_less_holm"]) == pytest.approx(min(1, 2 * small))
    assert not math.isnan(by["S2"]["p_fisher_two"])


def _fig4(strong, handicap_, komi, rate, games=40):
    return dict(figure="fig4", strong=strong, strong_colour="white", handicap=handicap_, komi=komi, win_rate=rate,
                games=games)  # fmt: skip


def test_recovery_situations_from_a_calibration():
    rows = [_fig4("S1-S3", 1, k, r) for k, r in ((0.5, 0.9), (-9.5, 0.4), (-19.5, 0.08), (-29.5, 0.0))]
    rows += [_fig4("S1-S3", 2, k, r) for k, r in ((0.5, 0.6), (-9.5, 0.2), (-19.5, 0.0))]
    rows += [_fig4("S1", 1, -19.5, 0.5)]  # a single net's row: the pooled rows win
    chosen = recovery.choose_situations(rows, 0.065, (0.03, 0.10))
    assert chosen[0] == dict(
        handicap=1, komi=-19.5, calibration_rate=0.08, calibration_games=40, how="measured", figure="fig4"
    )
    # H2: 6.5% lies between komi -19.5 (0%) and -9.5 (20%), at -16.25: the half point below is -16.5.
    assert chosen[1] == dict(
        handicap=2, komi=-16.5, calibration_rate=0.065, calibration_games=0, how="interpolated", figure="fig4"
    )
    with pytest.raises(ValueError, match=r"H1: .*never reach 6.5%"):
        recovery.choose_situations([_fig4("S1", 1, 0.5, 0.9), _fig4("S1", 1, -9.5, 0.5)], 0.065, (0.03, 0.10))
    with pytest.raises(ValueError, match="no Fig. 3 or Fig. 4 rows"):
        recovery.choose_situations([], 0.065, (0.03, 0.10))


def test_recovery_situations_from_fig3_as_h1_against_one_opponent():
    def fig3(opponent, komi, rate, colour="white", games=90):
        return dict(figure="fig3", strong="S1-S3", opponent=opponent, strong_colour=colour, handicap=0, komi=komi,
                    win_rate=rate, games=games)  # fmt: skip

    rows = [fig3("W1", 9.5, 0.66), fig3("W1", -29.5, 0.067), fig3("W1", -48.5, 0.044)]
    rows += [fig3("W3", -29.5, 0.05), fig3("W3", -48.5, 0.35), fig3("W1", -29.5, 0.5, colour="black")]
    rows += [{**_fig4("S1-S3", 2, k, r), "opponent": "W1"} for k, r in ((8.5, 0.4), (0.5, 0.2), (-9.5, 0.0))]
    rows += [{**_fig4("S1-S3", 1, -29.5, 0.2, games=30), "opponent": "W1"}]  # fewer games than Fig. 3's row
    chosen = recovery.choose_situations(rows, 0.065, (0.03, 0.10), opponent="W1")
    assert chosen[0] == dict(
        handicap=1, komi=-29.5, calibration_rate=0.067, calibration_games=90, how="measured", figure="fig3"
    )
    assert chosen[1]["handicap"] == 2 and chosen[1]["komi"] == -6.5 and chosen[1]["how"] == "interpolated"
    # Against W3 only W3's rows count (the H2 rows are W1's): H1 at -29.5, 5%, inside the band.
    assert [(r["handicap"], r["komi"]) for r in recovery.choose_situations(rows, 0.065, (0.03, 0.10), "W3")] == [
        (1, -29.5)
    ]
    with pytest.raises(ValueError, match="against W2"):
        recovery.choose_situations(rows, 0.065, (0.03, 0.10), opponent="W2")


def test_recovery_lambda_tests_compare_the_same_net_and_situation():
    cond = matches.white_conditions("fig7", "W", 1, [-19.5], base=0.5)[0]
    agents = {"S1": (0.0, 0.0), "S1[l=1,m=0]": (1.0, 0.0), "S2": (0.0, 0.0), "S2[l=1,m=0]": (1.0, 0.0)}
    base = {name: name[:2] for name in agents}
    played = []
    for name, wins in (("S1", 1), ("S1[l=1,m=0]", 8), ("S2", 0), ("S2[l=1,m=0]", 6)):
        for i in range(20):
            won = i < wins
            g = _game("W", name, -19.5, "white" if won else "black", -5.0 - i if won else 7.0 + i)
            played.append(matches.Played(cond, name, g))
    rows = recovery.lambda_tests(played, agents, base)
    by = {r["strong"]: r for r in rows}
    assert set(by) == {"S1", "S2", recovery.POOLED}
    assert (by["S1"]["wins"], by["S1"]["base_wins"], by["S1"]["games"]) == (8, 1, 20)
    assert (by[recovery.POOLED]["wins"], by[recovery.POOLED]["base_wins"], by[recovery.POOLED]["games"]) == (14, 1, 40)
    assert by[recovery.POOLED]["p_fisher_greater"] < 0.001 and by["S1"]["margin_mean"] > by["S1"]["margin_base_mean"]
    assert by["S1"]["p_fisher_greater_holm"] >= by["S1"]["p_fisher_greater"]


def test_score_stability_measures_moves_between_neighbours_and_visits(tmp_path):
    from experiments.score_stability import score_stability as ss

    # Two games; at offsets -1, 0, +1 the root estimate jumps, the 1,000-visit median does not.
    rows = []
    for game, ref in ((0, 10.0), (1, -4.0)):
        for offset, root, median in ((-1, ref + 6, ref + 1), (0, ref - 12, ref + 1), (1, ref + 6, ref + 1.5)):
            rows.append(dict(game=game, offset=offset, estimator=ss.ROOT, estimate=root))
            rows.append(dict(game=game, offset=offset, estimator="median 1000", estimate=median))
    points = [dict(game=0, reference_margin=10.0), dict(game=1, reference_margin=-4.0)]
    summary, tests = ss.summarize(rows, points, [1000])
    by = {r["estimator"]: r for r in summary}
    assert by[ss.ROOT]["neighbour_change"] == 18.0 and by["median 1000"]["neighbour_change"] == 0.25
    assert by[ss.ROOT]["visit_change"] == 13.0 and by["median 1000"]["visit_change"] == 0.0
    assert by[ss.ROOT]["mean_error"] == -12.0 and by["median 1000"]["mean_abs_error"] == 1.0
    assert by[ss.ROOT]["winner_side"] == 0.5 and by["median 1000"]["winner_side"] == 1.0
    # The interval is around the mean absolute error (bounds, not a mean and a half-width).
    assert by[ss.ROOT]["mae_lo"] == by[ss.ROOT]["mae_hi"] == 12.0 and by["median 1000"]["mae_lo"] == 1.0
    assert [t["estimator"] for t in tests] == [ss.ROOT] and tests[0]["against"] == "median 1000"
    assert tests[0]["p_neighbour_less"] >= tests[0]["p_neighbour_greater"]  # the root moves more here
    # --summarize_only rebuilds the same tables from the written estimates.
    common.write_csv(tmp_path / "positions.csv", rows)
    common.write_csv(tmp_path / "resign_points.csv", points)
    assert ss.main(["--outdir", str(tmp_path), "--summarize_only"]) == 0
    rebuilt = {r["estimator"]: r for r in common.read_csv(tmp_path / "summary.csv")}
    assert float(rebuilt[ss.ROOT]["neighbour_change"]) == 18.0 and float(rebuilt["median 1000"]["mae_hi"]) == 1.0
    assert (tmp_path / "score_stability.png").exists()
    assert ss.resign_ply(np.array([0.5, 0.05, 0.04]), np.array([False, False, False]), 0.1, 2) == 2
    assert ss.resign_ply(np.array([0.5, 0.5]), np.array([False, False]), 0.1, 0) is None


def test_kept_maluses_cover_opponents_and_targets(tmp_path):
    path = str(tmp_path / "maluses.csv")
    assert handicap.kept_maluses(path, {"W"}, [0.5]) is None
    rows = [
        dict(opponent=o, target_rate=0.5, malus=m, predicted_rate=0.5, margins=60)
        for o, m in (("W", 7.0), ("itself", 0.0))
    ]
    common.write_csv(path, rows)
    kept = handicap.kept_maluses(path, {"W"}, [0.5])
    assert [(r["opponent"], r["malus"]) for r in kept] == [("W", 7.0)]
    assert handicap.kept_maluses(path, {"W"}, [0.5, 0.25]) is None  # a new target: calibrate again
    assert handicap.kept_maluses(path, {"W2"}, [0.5]) is None
