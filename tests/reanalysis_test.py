"""experiments/reanalysis/reanalysis.py on tiny hand-made result tables."""

import csv
import math

import pytest

from experiments.reanalysis import reanalysis

HEADER = ["black", "white", "winner", "margin", "komi", "handicap"]


def _write(path, header, rows):
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(header)
        w.writerows(rows)


def _read(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


@pytest.fixture
def results_dir(tmp_path):
    root = tmp_path / "results"
    base, agent = "S[l=0,m=0,t=0]", "S[l=1,m=0,t=0]"
    games = []
    # As White against W: the baseline wins 3 of 4 (by 10, 20, 30), the agent 0 of 4.
    games += [["W", base, "white", -m, 9.5, 0] for m in (10, 20, 30)] + [["W", base, "black", 5, 9.5, 0]]
    games += [["W", agent, "black", 3, 9.5, 0]] * 4
    # As Black: the baseline wins 2 of 4 (by 5, 15), the agent 4 of 4 (by 25 ... 55).
    games += [[base, "W", "black", m, 9.5, 0] for m in (5, 15)] + [[base, "W", "white", -2, 9.5, 0]] * 2
    games += [[agent, "W", "black", m, 9.5, 0] for m in (25, 35, 45, 55)]
    _write(root / "score_targeting/results/earlier/go7_score_targeting" / "games.csv", HEADER, games)
    _write(
        root / "handicap/results/earlier/go7_handicap" / "fig3_summary.csv",
        ["opponent", "strong_colour", "malus", "games", "wins"],
        [["W", "both", 0, 10, 8], ["W", "both", 5, 10, 2]],
    )
    _write(
        root / "elo_curve/results/earlier/go7b" / "h2h_vs_S1.csv",
        HEADER,
        [["go7b-gen70", "S1", "black", 1, 9.5, 0]] * 3 + [["S1", "go7b-gen70", "black", 1, 9.5, 0]],
    )
    return root


def test_reanalysis_writes_two_sample_tests_and_corrections(results_dir, tmp_path, capsys):
    out = tmp_path / "out"
    assert reanalysis.main(["--results_dir", str(results_dir), "--outdir", str(out)]) == 0
    printed = capsys.readouterr().out
    fig5 = {r["colour"]: r for r in _read(out / "fig5_score_targeting.csv")}
    white, black = fig5["white"], fig5["black"]
    assert (white["wins"], white["games"], white["base_wins"]) == ("0", "4", "3")
    # Fisher, [[0, 4], [3, 1]]: P(X = 0) = C(4, 0) C(4, 3) / C(8, 3) = 4 / 56.
    assert float(white["p_fisher_less"]) == pytest.approx(4 / 56, abs=1e-6)
    # The paper's test takes the baseline's 75% as known: 0.25 ** 4.
    assert float(white["p_binom_known"]) == pytest.approx(0.25**4, abs=1e-6)
    assert float(black["p_fisher_less"]) > 0.9
    # Holm over the two cells: min(1, 2 p) for the smaller p.
    assert float(white["p_fisher_less_holm"]) == pytest.approx(min(1, 2 * 4 / 56), abs=1e-6)
    # Winning margins: the agent's 25..55 against the baseline's 5, 15 as Black.
    assert float(black["win_margin_mean"]) == 40 and float(black["win_margin_base_mean"]) == 10
    assert float(black["win_margin_p_welch_greater"]) < 0.05
    assert white["win_margin_p_welch_greater"] == ""  # no wins, no test
    fig3 = _read(out / "fig3_handicap.csv")
    assert fig3[0]["malus"] == "5.0" and float(fig3[0]["p_fisher_less"]) < 0.05
    h2h = _read(out / "head_to_head.csv")[0]
    assert (h2h["wins"], h2h["games"]) == ("3", "4") and float(h2h["p_tost_half_10pts"]) > 0.5
    power = _read(out / "power.csv")
    assert any(r["figure"] == "fig5" and r["detectable_lower_two_sided"] for r in power)
    assert "Fig. 5 strength losses: 1 cells significant by the known-rate binomial test" in printed
    assert "note: fig7_recovery: inputs missing, skipped" in printed


def test_reanalysis_reports_a_missing_results_dir(tmp_path, capsys):
    assert reanalysis.main(["--results_dir", str(tmp_path / "none"), "--outdir", str(tmp_path / "out")]) == 2
    assert "experiments.reanalysis.reanalysis: error:" in capsys.readouterr().err


def test_mark_and_correct():
    assert [reanalysis.mark(p) for p in (0.0005, 0.01, 0.2, math.nan)] == ["**", "*", "", ""]
    rows = reanalysis.correct([{"p": 0.01}, {"p": 0.04}, {"p": math.nan}], "p")
    assert rows[0]["p_holm"] == pytest.approx(0.02) and rows[1]["p_bh"] == pytest.approx(0.04)
    assert math.isnan(rows[2]["p_holm"])
