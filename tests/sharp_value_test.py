"""experiments/sharp_value.py: the arms' curves and summary from their metrics, against the targets."""

import json
import math

import numpy as np
import pytest

from experiments import common, sharp_value
from saijax.learn import selfplay


def _workdir(tmp_path, name, generations, *, beta, data_beta, alpha=9.0, first="D4", start=0):
    workdir = tmp_path / name
    workdir.mkdir()
    with open(workdir / "metrics.jsonl", "w") as f:
        for g in range(start, start + generations):
            m = {
                "generation": g,
                "selfplay_evaluations": 1_000_000,
                "seconds": 60.0,
                "alpha_empty": alpha + 0.1 * (g % 2),
                "beta_empty": beta(g),
                "data_alpha": alpha,
                "data_beta": data_beta(g),
                "data_beta_se": 0.1,
                "komi_sd": 1.0,
                "avg_komi": 9.0,
                "first_move": first,
                "first_move_top": first,
                "first_move_top_share": 0.8,
                "first_move_centre_share": 0.8 if first == "D4" else 0.1,
                "first_move_entropy": 1.0,
                "resigned_row_share": 0.6,
                "score_error": 5.0,
                "score_error_late": 2.0,
                "beta_late": 3.0,
                "black_winrate": 0.5,
                "complete_games": 300,
                "games": 512,
                "simulations": 64,
                "train_value_loss": 0.5,
                "komi_results": {"8.5": [10, 8.0], "9": [4, 2.0], "9.5": [10, 1.5 + (g % 2)]},
            }
            f.write(json.dumps(m) + "\n")
    return str(workdir)


def test_arms_table_and_targets(tmp_path):
    sharp = _workdir(tmp_path, "sharp", 30, beta=lambda g: 0.2 + 0.1 * g, data_beta=lambda g: 0.25 + 0.1 * g)
    flat = _workdir(tmp_path, "flat", 12, beta=lambda g: 0.2, data_beta=lambda g: 0.5, alpha=6.0, first="C3")
    out = tmp_path / "out"
    sharp_value.run(sharp_value.Settings(arms=(f"sharp={sharp}", f"flat={flat}"), outdir=str(out), last=10))
    curves = common.read_csv(out / "curves.csv")
    assert [r["arm"] for r in curves] == ["sharp"] * 30 + ["flat"] * 12
    assert float(curves[29]["evaluations_m"]) == pytest.approx(30.0)
    arms = {r["arm"]: r for r in common.read_csv(out / "arms.csv")}
    s, f = arms["sharp"], arms["flat"]
    # Means over generations 20..29: β 2.2..3.1 (mean 2.65), data β 2.7.
    assert float(s["beta_empty"]) == pytest.approx(2.65)
    assert float(s["data_beta"]) == pytest.approx(2.70)
    assert float(s["beta_empty_peak"]) == pytest.approx(3.1) and int(s["beta_empty_peak_generation"]) == 29
    assert float(s["alpha_empty"]) == pytest.approx(9.05)
    assert s["alpha_ok"] == s["beta_ok"] == s["ratio_ok"] == s["first_move_ok"] == "True"
    assert f["alpha_ok"] == f["beta_ok"] == f["first_move_ok"] == "False"
    assert float(f["data_over_learned_beta"]) == pytest.approx(2.5) and f["ratio_ok"] == "False"
    assert float(f["evaluations_m_per_generation"]) == pytest.approx(1.0)
    # The complete games pooled by komi over the last 10 generations (20..29: 5 odd ones).
    komis = [r for r in common.read_csv(out / "komi_results.csv") if r["arm"] == "sharp"]
    assert [float(r["komi"]) for r in komis] == [8.5, 9.0, 9.5]
    assert [int(r["games"]) for r in komis] == [100, 40, 100] and komis[0]["generations"] == "20-29"
    assert float(komis[2]["black_score"]) == pytest.approx(10 * 1.5 + 5) and float(komis[1]["black_rate"]) == 0.5
    # The net's curve at generation 29 (α 9.1, β 3.1) beside them.
    assert float(komis[0]["net_black_rate"]) == pytest.approx(1 / (1 + math.exp(-3.1 * (9.1 - 8.5))), abs=1e-3)
    # Pooled: a komi curve fitted to those 240 games, and within 1.5 points of 9 (all of them here).
    s = {r["arm"]: r for r in common.read_csv(out / "arms.csv")}["sharp"]
    assert int(s["pooled_games"]) == 240 and s["pooled_generations"] == "20-29"
    komi = np.repeat([8.5, 9.0, 9.5], [100, 40, 100])
    score = np.concatenate([np.r_[np.ones(80), np.zeros(20)], np.r_[np.ones(20), np.zeros(20)],
                            np.r_[np.ones(20), np.zeros(80)]])  # fmt: skip
    alpha, beta, _ = selfplay.komi_curve_fit(komi, score)
    assert float(s["pooled_beta"]) == pytest.approx(beta, rel=1e-3) and float(s["pooled_alpha"]) == pytest.approx(alpha)
    assert float(s["pooled_beta_near_fair"]) == pytest.approx(beta, rel=1e-3)
    png = common.pyplot().imread(out / "sharp_value.png")
    assert png.shape[0] > 200 and png.shape[1] > 600 and np.std(png) > 0.01  # drawn, not blank

    # An arm given again replaces its curve; the others stay. @G cuts a run.
    sharp_value.run(sharp_value.Settings(arms=(f"sharp={sharp}@9",), outdir=str(out)))
    curves = common.read_csv(out / "curves.csv")
    assert sum(r["arm"] == "sharp" for r in curves) == 10 and sum(r["arm"] == "flat" for r in curves) == 12
    # plot_only redraws from the tables alone.
    (out / "sharp_value.png").unlink()
    sharp_value.run(sharp_value.Settings(outdir=str(out), plot_only=True))
    assert (out / "sharp_value.png").exists()


def test_bad_arms_are_named(tmp_path):
    with pytest.raises(FileNotFoundError, match="no workdir"):
        sharp_value.run(sharp_value.Settings(arms=(f"x={tmp_path / 'none'}",), outdir=str(tmp_path)))
    empty = tmp_path / "empty"
    empty.mkdir()
    (empty / "metrics.jsonl").write_text("")
    with pytest.raises(ValueError, match="no metrics.jsonl lines"):
        sharp_value.run(sharp_value.Settings(arms=(f"e={empty}",), outdir=str(tmp_path / "o")))
    with pytest.raises(ValueError, match=r"sharp_value.Settings.last=0: needs an int >= 1"):
        sharp_value.Settings(last=0)


def test_a_missing_diagnostic_is_nan_not_an_error(tmp_path):
    """Runs from before the diagnostics (no data_beta) still tabulate."""
    old = tmp_path / "old"
    old.mkdir()
    lines = [{"generation": g, "alpha_empty": 7.0, "beta_empty": 0.2, "first_move": "D4"} for g in range(3)]
    (old / "metrics.jsonl").write_text("".join(json.dumps(m) + "\n" for m in lines))
    row = sharp_value.arm_rows(sharp_value.learning_curve("old", str(old)), last=10)[0]
    assert math.isnan(row["data_beta"]) and row["beta_ok"] is False and row["first_move_ok"] is True


def test_end_of_round_checks_join_gtp_and_the_games_played_at_each_komi(tmp_path):
    out = tmp_path / "out"
    (out / "gtp_fair_komi").mkdir(parents=True)
    common.write_csv(out / "gtp_fair_komi" / "summary.csv",
                     [{"net": "a", "generation": "", "black_winrate_8.5": 0.6, "black_winrate_9.5": 0.3}])  # fmt: skip
    for komi, rate in (("8.5", 0.75), ("9.5", 0.25)):
        (out / "spread" / f"a_k{komi}").mkdir(parents=True)
        row = {"opening_policy": "improved", "games": 128, "random_moves": 4, "visits": 64, "komi": komi,
               "distinct_openings": 40, f"black_rate_{komi}": rate}  # fmt: skip
        common.write_csv(out / "spread" / f"a_k{komi}" / "summary.csv", [row])
    (out / "spread" / "b_k8.5").mkdir(parents=True)  # only one komi played: no Δ
    one = {"games": 64, "random_moves": 4, "visits": 64, "distinct_openings": 9, "black_rate_8.5": 0.5}
    common.write_csv(out / "spread" / "b_k8.5" / "summary.csv", [one])
    rows = {r["net"]: r for r in sharp_value.end_rows(str(out))}
    a = rows["a"]
    assert (a["gtp_black_8.5"], a["gtp_black_9.5"]) == (0.6, 0.3)
    assert a["delta"] == pytest.approx(0.5) and a["delta_beta"] == pytest.approx(4 * math.atanh(0.5))
    assert "delta" not in rows["b"] and rows["b"]["games_8.5"] == 64
