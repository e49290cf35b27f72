"""experiments/sharp_value/sharp_value.py: the arms' curves and summary from their metrics, against the targets."""

import functools
import json
import math
import shutil

import jax
import numpy as np
import pytest
from conftest import training_config

from experiments.lib import common
from experiments.sharp_value import sharp_value
from saijax.core import checkpoints, features, go, networks, sigmoid
from saijax.learn import replay, selfplay_stats, training


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
    alpha, beta, _ = selfplay_stats.komi_curve_fit(komi, score)
    assert float(s["pooled_beta"]) == pytest.approx(beta, rel=1e-3) and float(s["pooled_alpha"]) == pytest.approx(alpha)
    assert float(s["pooled_beta_near_fair"]) == pytest.approx(beta, rel=1e-3)
    png = common.pyplot().imread(out / "sharp_value.png")
    assert png.shape[0] > 200 and png.shape[1] > 600 and np.std(png) > 0.01  # drawn, not blank

    # An arm given again replaces its curve; the others stay. @G cuts a run.
    sharp_value.run(sharp_value.Settings(arms=(f"sharp={sharp}@9",), outdir=str(out)))
    curves = common.read_csv(out / "curves.csv")
    assert sum(r["arm"] == "sharp" for r in curves) == 10 and sum(r["arm"] == "flat" for r in curves) == 12
    # An arm read before whose workdir is gone keeps its rows; a new arm's missing workdir is an error.
    sharp_value.run(sharp_value.Settings(arms=(f"sharp={tmp_path / 'gone'}", f"flat={flat}"), outdir=str(out)))
    curves = common.read_csv(out / "curves.csv")
    assert sum(r["arm"] == "sharp" for r in curves) == 10 and sum(r["arm"] == "flat" for r in curves) == 12
    assert "sharp" in {r["arm"] for r in common.read_csv(out / "arms.csv")}
    with pytest.raises(FileNotFoundError, match="no workdir"):
        sharp_value.run(sharp_value.Settings(arms=(f"new={tmp_path / 'gone'}",), outdir=str(out)))
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


def test_lever_tests_compare_each_arm_with_its_parents_plateau():
    """Welch's test of the data's β per generation, the arm's own generations against the parent's
    declared ones, Holm and BH over the family; scipy gives the same p."""
    scipy_stats = pytest.importorskip("scipy.stats")
    rng = np.random.default_rng(1)
    parent = [{"arm": "p", "generation": g, "data_beta": 0.4 + 0.1 * rng.standard_normal()} for g in range(20)]
    # Copied history (generations 0-9 equal the parent's), then the lever: sharp, flat, and a short arm.
    sharp = parent[:10] + [{"arm": "s", "generation": g, "data_beta": 1.0 + 0.1 * rng.standard_normal()}
                           for g in range(10, 20)]  # fmt: skip
    sharp = [dict(r, arm="s") for r in sharp]
    flat = [{"arm": "f", "generation": g, "data_beta": 0.4 + 0.1 * rng.standard_normal()} for g in range(10, 20)]
    short = [{"arm": "one", "generation": 10, "data_beta": 0.9}]
    specs = ("s@10=p@0-9", "f@10=p@0-9", "one@10=p@0-9", "missing@3=p@0-9")
    rows = sharp_value.lever_tests(parent + sharp + flat + short, specs)
    assert [r["arm"] for r in rows] == ["s", "f", "one"]  # an arm not in the curves is skipped
    s_row, f_row, one_row = rows
    x = [r["data_beta"] for r in sharp[10:]]
    y = [r["data_beta"] for r in parent[:10]]
    assert s_row["p"] == pytest.approx(scipy_stats.ttest_ind(x, y, equal_var=False).pvalue)
    assert (s_row["arm_n"], s_row["parent_n"], s_row["arm_generations"]) == (10, 10, "10-19")
    assert s_row["difference"] == pytest.approx(np.mean(x) - np.mean(y))
    assert s_row["verdict"] == "higher" and f_row["verdict"] == "inconclusive"
    assert s_row["holm_p"] == pytest.approx(min(1.0, 2 * s_row["p"]))  # the smaller of 2 finite p-values
    assert math.isnan(one_row["p"]) and one_row["verdict"] == "inconclusive"  # one generation: no test
    assert 0 < f_row["detectable"] < 0.3
    # A family of its own is adjusted apart: alone, its Holm p is its p.
    (own,) = [r for r in sharp_value.lever_tests(parent + sharp + flat, ("s@10=p@0-9", "r5:f@10=p@0-9"))
              if r["family"] == "r5"]  # fmt: skip
    assert own["arm"] == "f" and own["family_size"] == 1 and own["holm_p"] == pytest.approx(f_row["p"])
    assert sharp_value.parse_lever_test("r5:s@10=p@0-9") == ("r5", "s", 10, None, "p", 0, 9)
    # A declared test pinned to its generations: the arm's later ones do not enter it.
    assert sharp_value.parse_lever_test("r5:s@10-14=p@0-9") == ("r5", "s", 10, 14, "p", 0, 9)
    (pinned,) = sharp_value.lever_tests(parent + sharp, ("s@10-14=p@0-9",))
    assert (pinned["arm_n"], pinned["arm_generations"]) == (5, "10-14")
    assert pinned["arm_mean"] == pytest.approx(np.mean([r["data_beta"] for r in sharp[10:15]]))
    for bad in ("s=p@0-9", "s@10-=p@0-9", "s@x=p@0-9"):
        with pytest.raises(ValueError, match=r"ARM@FROM\[-TO\]=PARENT@FIRST-LAST"):
            sharp_value.parse_lever_test(bad)
    for backwards in ("s@10=p@9-0", "s@14-10=p@0-9"):
        with pytest.raises(ValueError, match="runs backwards"):
            sharp_value.Settings(lever_tests=(backwards,))
    # A test of another quantity (#QUANTITY): the same arms, that quantity's values.
    kept = [dict(r, data_beta_kept=2 * r["data_beta"]) for r in parent + sharp]
    (by_kept,) = sharp_value.lever_tests(kept, ("r10:s@10=p@0-9#data_beta_kept",))
    assert sharp_value.parse_lever_test("r10:s@10=p@0-9#data_beta_kept") == ("r10", "s", 10, None, "p", 0, 9)
    assert by_kept["quantity"] == "data_beta_kept" and by_kept["difference"] == pytest.approx(2 * s_row["difference"])
    assert by_kept["p"] == pytest.approx(s_row["p"])  # a scale moves no t
    with pytest.raises(ValueError, match="lever_tests.*#beta is not a curve's quantity"):
        sharp_value.Settings(lever_tests=("s@10=p@0-9#beta",))


def test_legs_measure_the_stopping_rule():
    """Each leg moves β_∅ from the net it resumed from to its last generation's; three consecutive
    legs under 0.1 stop the run; a leg not yet played is left out, one being played is incomplete."""
    betas = {9: 0.30, 19: 0.50, 29: 0.55, 39: 0.48, 49: 0.52}  # legs' ends; 0.30 -> 0.50 moves 0.20
    curve = [{"arm": "r", "generation": g, "beta_empty": betas.get(g, 0.4), "data_beta": 0.45,
              "alpha_empty": 9.0, "evaluations_m": 1.5 * (g + 1)} for g in range(55)]  # fmt: skip
    rows = sharp_value.leg_rows(curve, ("r@10-19,20-29,30-39,40-49,50-59,60-69",))
    assert [r["generations"] for r in rows] == ["10-19", "20-29", "30-39", "40-49", "50-54"]
    assert [round(r["move"], 2) for r in rows] == [0.20, 0.05, -0.07, 0.04, -0.12]
    assert [r["small_run"] for r in rows] == [0, 1, 2, 3, 3]  # the last leg is still being played
    assert [r["stop"] for r in rows] == [False, False, False, True, True]
    assert rows[-1]["complete"] is False and rows[0]["complete"] is True
    assert rows[0]["evaluations_m"] == pytest.approx(15.0)
    assert rows[0]["mean"] == pytest.approx((0.4 * 9 + 0.5) / 10)
    # A leg still being played that has moved little so far does not count toward the stop.
    calm = [dict(r, beta_empty=0.52) if r["generation"] >= 50 else r for r in curve]
    (*_, fourth, playing) = sharp_value.leg_rows(calm, ("r@10-19,20-29,30-39,40-49,50-59",))
    assert playing["small"] and not playing["complete"]
    assert (playing["small_run"], playing["stop"]) == (fourth["small_run"], fourth["stop"]) == (3, True)
    (*_, third, playing) = sharp_value.leg_rows(calm, ("r@10-19,20-29,30-49,50-59",))
    assert third["small_run"] == 2 and playing["small"] and playing["small_run"] == 2 and not playing["stop"]
    assert sharp_value.leg_rows(curve, ("other@10-19",)) == []
    for bad in ("r", "r@10-19,21-29", "r@19-10", "r@a-b", "@1-2"):
        with pytest.raises(ValueError, match="legs"):
            sharp_value.parse_legs(bad)
    with pytest.raises(ValueError, match=r"Settings.legs"):
        sharp_value.Settings(legs=("r@10-19,25-30",))


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
    (out / "gnugo" / "a").mkdir(parents=True)
    common.write_csv(out / "gnugo" / "a" / "summary.csv", [
        {"net": "a", "colour": "black", "komi": 8.5, "level": 10, "visits": 256, "games": 40, "wins": 39},
        {"net": "a", "colour": "white", "komi": 9.5, "level": 10, "visits": 256, "games": 40, "wins": 36}])  # fmt: skip
    rows = {r["net"]: r for r in sharp_value.end_rows(str(out))}
    a = rows["a"]
    gnugo = (a["gnugo_black_wins"], a["gnugo_black_games"], a["gnugo_white_wins"], a["gnugo_white_komi"])
    assert gnugo == (39, 40, 36, 9.5)
    assert "gnugo_black_wins" not in rows["b"]
    assert (a["gtp_black_8.5"], a["gtp_black_9.5"]) == (0.6, 0.3)
    assert a["delta"] == pytest.approx(0.5) and a["delta_beta"] == pytest.approx(4 * math.atanh(0.5))
    assert "delta" not in rows["b"] and rows["b"]["games_8.5"] == 64


def _opening_rows(rules, lines, generation):
    """Replay rows of complete games (and one branch), each a row at every move: (moves, komi, Black's
    score) per game; what the replay file keeps of a game."""
    step = jax.jit(functools.partial(go.step, rules))
    states, meta = [], []
    for gid, (moves, komi, black_score) in enumerate(lines):
        for is_branch in (False, True) if gid == 0 else (False,):
            state = go.init(rules, komi)
            for ply in range(len(moves) + 1):
                states.append(state)
                meta.append((gid + 100 * is_branch, ply, komi, black_score, is_branch))
                if ply < len(moves):
                    state = step(state, moves[ply])
    stacked = jax.tree_util.tree_map(lambda *x: np.stack(x), *states)
    to_play = np.asarray(stacked.to_play).astype(np.int8)
    komi = np.array([m[2] for m in meta], np.float32)
    black = np.array([m[3] for m in meta], np.float32)
    count, a = len(meta), rules.size * rules.size + 1
    return replay.TrainingRows(
        planes=np.asarray(features.pack_planes(features.sai_planes(rules, stacked))),
        to_play=to_play,
        policy=np.full((count, a), 1.0 / a, np.float32),
        signed_komi=np.where(to_play == 1, -komi, komi).astype(np.float32),
        z=np.where(to_play == 1, black, 1.0 - black).astype(np.float32),
        margin=np.zeros(count, np.float32),
        game_id=np.array([m[0] for m in meta], np.int32),
        move_number=np.array([m[1] for m in meta], np.int32),
        is_branch=np.array([m[4] for m in meta]),
        generation=np.full(count, generation, np.int32),
        valid=np.ones(count, bool),
    )


def test_komi_pairs_count_how_the_result_turns_with_the_komi(tmp_path):
    """Pairs of games one net played from one position: at one komi the same game; at two, the
    result turns the right way (proper), the wrong way (inverted) or not at all; games two nets
    shared, other openings and branches stay out; opening_results says which net played."""
    rules = go.GoRules(7)
    d4, d3, c3, c4, e5, e4, c5 = (go.from_gtp(rules, v) for v in ("D4", "D3", "C3", "C4", "E5", "E4", "C5"))
    games = [
        ((d4, d3, c3, e5), 8.5, 0.0),
        ((d4, d3, c3, e5), 8.5, 0.0),  # the same game at the same komi
        ((d4, d3, c4, e5), 9.0, 1.0),  # half a point more for White, and Black wins: inverted twice
        ((d4, d3, c3, e4), 12.5, 0.0),  # against the two above: same, same; against the third: proper
        ((d4, d3, c3, e5), 10.0, 1.0),  # two nets played it: left out
        ((d4, c5, c3, e5), 8.5, 1.0),  # another opening
    ]
    rows = _opening_rows(rules, games, 5)
    mixed = (np.asarray(rows.game_id) == 4) & (np.asarray(rows.move_number) == 2)
    rows = rows.replace(generation=np.where(mixed, 4, np.asarray(rows.generation)).astype(np.int32))
    work = tmp_path / "arm"
    (work / "replay").mkdir(parents=True)
    replay.ReplayBuffer(work / "replay", 7).write_generation(5, rows)
    (work / "metrics.jsonl").write_text(json.dumps({"generation": 5}) + "\n")
    bands = {r["komi_gap"]: r for r in sharp_value.komi_pairs("arm", str(work), last=1, plies=2)}
    assert list(bands) == ["0", "0-1", ">3"]
    assert (bands["0"]["pairs"], bands["0"]["same"], bands["0"]["identical"]) == (1, 1, 1)
    assert bands["0"]["proper"] is None and math.isnan(bands["0"]["inverted_share"])
    assert (bands["0-1"]["pairs"], bands["0-1"]["inverted"], bands["0-1"]["proper"]) == (2, 2, 0)
    assert bands["0-1"]["inverted_share"] == 1.0 and bands["0-1"]["divergence_median"] == 3  # C3 / C4, move 2
    assert (bands[">3"]["pairs"], bands[">3"]["same"], bands[">3"]["proper"], bands[">3"]["inverted"]) == (3, 2, 1, 0)
    assert bands[">3"]["inverted_share"] == 0.0 and bands[">3"]["divergence_median"] == 4
    nets = {
        (r["komi"], r["net"])
        for r in sharp_value.opening_results("arm", str(work), 1, 2)
        if r["opening"] == "B:D4 W:D3"
    }
    assert nets == {(8.5, 5), (9.0, 5), (12.5, 5), (10.0, "")}
    assert sharp_value.komi_pairs("arm", str(tmp_path), last=1, plies=2) == []  # no replay files


def test_games_grouped_by_their_opening_and_the_beta_within_them(tmp_path):
    """opening_results reads each complete game's position after the opening from the replay files
    (transpositions meet, branches stay out); within_beta fits one α per opening."""
    rules = go.GoRules(7)
    d4, d3, c3, e5 = (go.from_gtp(rules, v) for v in ("D4", "D3", "C3", "E5"))
    work = tmp_path / "arm"
    (work / "replay").mkdir(parents=True)
    lines = {
        0: [((d4, d3), 8.5, 1.0), ((d4, d3), 9.5, 0.0), ((d4, e5), 9.5, 1.0)],
        1: [((d4, d3), 8.5, 1.0), ((d4, e5), 12.5, 0.5), ((d4, c3), 7.5, 1.0)],
        2: [((d4, d3), 9.5, 1.0)],  # outside the last 2 generations
    }
    buffer = replay.ReplayBuffer(work / "replay", 7)
    with open(work / "metrics.jsonl", "w") as f:
        for g in (0, 1, 2, 3):  # generation 3 has metrics but no replay file: skipped
            f.write(json.dumps({"generation": g, "alpha_empty": 9.0, "beta_empty": 0.3}) + "\n")
    for g, games in lines.items():
        buffer.write_generation(g, _opening_rows(rules, [games[i] for i in range(len(games))], g))
    rows = sharp_value.opening_results("arm", str(work), last=3, plies=2, board_size=7)
    assert {r["generations"] for r in rows} == {"1-2"}
    cells = {(r["opening"], r["komi"], r["generation"]): (r["games"], r["black_score"]) for r in rows}
    assert cells == {
        ("B:D4 W:D3", 8.5, 1): (1, 1.0), ("B:D4 W:D3", 9.5, 2): (1, 1.0), ("B:D4 W:E5", 12.5, 1): (1, 0.5),
        ("B:D4 W:C3", 7.5, 1): (1, 1.0),
    }  # fmt: skip
    rows = sharp_value.opening_results("arm", str(work), last=4, plies=2, board_size=7)
    assert sum(r["games"] for r in rows) == 7  # the branch of game 0 is not counted
    # A transposition meets its twin: the same four stones in another order are one opening.
    both = [((d4, d3, c3, e5), 8.5, 1.0), ((c3, e5, d4, d3), 9.5, 0.0)]
    buffer.write_generation(4, _opening_rows(rules, both, 4))
    with open(work / "metrics.jsonl", "a") as f:
        f.write(json.dumps({"generation": 4}) + "\n")
    (row,) = [r for r in sharp_value.opening_results("arm", str(work), 1, 4, board_size=7) if r["komi"] == 8.5]
    assert row["opening"] == "B:D4,C3 W:E5,D3"  # each colour's stones in board order, from the top row
    assert len(sharp_value.opening_results("arm", str(work), 1, 4, board_size=7)) == 2
    # The same opening at the same komi in three generations (generation 4's first two moves too):
    # a cell each.
    rows = sharp_value.opening_results("arm", str(work), last=5, plies=2, board_size=7)
    assert sorted(r["generation"] for r in rows if (r["opening"], r["komi"]) == ("B:D4 W:D3", 8.5)) == [0, 1, 4]
    # The within fit over pooled (opening, komi) rows equals the fit over the games one by one.
    rng = np.random.default_rng(0)
    games = [(o, k, float(rng.random() < 1 / (1 + np.exp(-(a - k)))))
             for o, a in (("x", 7.0), ("y", 11.0)) for k in rng.choice(np.arange(4.5, 15.0, 1.0), 300)]  # fmt: skip
    pooled = {}
    for o, k, y in games:
        cell = pooled.setdefault((o, k), [0, 0.0])
        cell[0] += 1
        cell[1] += y
    table = [{"plies": 4, "opening": o, "komi": k, "games": n, "black_score": y} for (o, k), (n, y) in pooled.items()]
    fit = sharp_value.within_fit(table)
    beta, se, n, used = selfplay_stats.komi_curve_fit_within(*map(np.array, zip(*[(k, y, o) for o, k, y in games])))
    assert fit["within_beta"] == pytest.approx(beta) and fit["within_beta_se"] == pytest.approx(se)
    assert (fit["within_games"], fit["within_openings"], fit["within_plies"]) == (600, 2, 4)
    assert math.isnan(sharp_value.within_fit([])["within_beta"])
    assert math.isnan(fit["within_net_beta"])  # rows without a net (an older table)
    # Within (opening, net): each generation's net moves its openings' fair komi by 6 points, so
    # pooled over generations the curve is flatter than within them; the fit with one α per cell
    # recovers the common β (2), the one with an α per opening does not.
    games = [(o, g, k, float(rng.random() < 1 / (1 + np.exp(-2.0 * (a + 6.0 * (g % 2) - k)))))
             for o, a in (("x", 7.0), ("y", 9.0)) for g in range(4)
             for k in rng.choice(np.arange(4.5, 15.0, 0.5), 100)]  # fmt: skip
    cells = {}
    for o, g, k, y in games:
        cell = cells.setdefault((o, g, k), [0, 0.0])
        cell[0] += 1
        cell[1] += y
    table = [{"plies": 4, "opening": o, "generation": str(g), "net": str(g), "komi": k, "games": n,
              "black_score": y} for (o, g, k), (n, y) in cells.items()]  # fmt: skip
    fit = sharp_value.within_fit(table)
    assert (fit["within_net_games"], fit["within_net_groups"]) == (800, 8)
    assert fit["within_net_beta"] == pytest.approx(2.0, abs=0.4)
    assert fit["within_beta"] < 0.8


def _played_out_arm(tmp_path, rows, black_margin, played):
    """``rows`` with Black's final margin per row and the played-out games' ownership mask, written as an arm's
    replay file for generation 3; returns the arm's workdir."""
    black = np.asarray(rows.to_play) == 1
    rows = rows.replace(
        margin=np.where(black, black_margin, -black_margin).astype(np.float32),
        ownership=np.zeros((rows.num_rows, 49), np.int8),
        ownership_mask=played,
    )
    work = tmp_path / "arm"
    (work / "replay").mkdir(parents=True)
    replay.ReplayBuffer(work / "replay", 7).write_generation(3, rows)
    return work


def test_board_results_say_whether_games_end_at_perfect_play_or_near_the_komi(tmp_path):
    """board_rows, komi by komi, over the played-out complete games' empty-board rows: Black's area lead
    (its margin plus the komi) at perfect play's B+9 or moved toward the komi; branches, games not
    played out and games whose empty-board row was dropped stay out."""
    rules = go.GoRules(7)
    d4, d3, c3, e5 = (go.from_gtp(rules, v) for v in ("D4", "D3", "C3", "E5"))
    line = (d4, d3, c3, e5)
    # Black's board result: B+9 at komi 9.5 (White wins); B+11 and B+9 at 11 (a draw and a White win);
    # B+7 at 6.5 (Black wins, by less than perfect play's); one at 7 not played out.
    games = [(line, 9.5, 0.0), (line, 11.0, 0.5), (line, 11.0, 0.0), (line, 6.5, 1.0), (line, 7.0, 1.0)]
    board = {0: 9.0, 1: 11.0, 2: 9.0, 3: 7.0, 4: 9.0, 100: 30.0}
    rows = _opening_rows(rules, games, 3)
    game, black = np.asarray(rows.game_id), np.asarray(rows.to_play) == 1
    komi = np.where(black, -np.asarray(rows.signed_komi), np.asarray(rows.signed_komi))
    work = _played_out_arm(tmp_path, rows, np.array([board[int(g)] for g in game]) - komi, game != 4)
    (work / "metrics.jsonl").write_text(json.dumps({"generation": 3}) + "\n")
    rows_by_komi = {r["komi"]: r for r in sharp_value.board_rows("arm", str(work), last=10)}
    assert sorted(rows_by_komi) == [6.5, 9.5, 11.0] and {r["generation"] for r in rows_by_komi.values()} == {3}
    k95, k11, k65 = rows_by_komi[9.5], rows_by_komi[11.0], rows_by_komi[6.5]
    assert (k95["games"], k95["black_points"], k95["perfect"], k95["toward_komi"]) == (1, 0.0, 1, 0)
    k11_cells = (k11["games"], k11["black_points"], k11["perfect"], k11["toward_komi"], k11["board_median"])
    assert k11_cells == (2, 0.5, 1, 1, 10.0)
    assert (k65["games"], k65["black_points"], k65["perfect"], k65["toward_komi"]) == (1, 1.0, 0, 1)
    # B+7 is one point of area short of perfect play's B+9; a result equal to the (integer) komi is a draw.
    assert [(r["one_short"], r["draws"]) for r in (k95, k11, k65)] == [(0, 0), (0, 1), (1, 0)]
    near, mid, far = sharp_value.board_bands(list(rows_by_komi.values()))
    assert (near["band"], near["games"], near["perfect_share"], near["toward_komi_share"]) == ("0-1", 1, 1.0, 0.0)
    assert (mid["band"], mid["games"], mid["perfect_share"], mid["toward_komi_share"]) == ("1.5-3", 3, 1 / 3, 2 / 3)
    assert far["games"] == 0 and math.isnan(far["perfect_share"])
    assert sharp_value.board_bands(list(rows_by_komi.values()), first=4)[1]["games"] == 0
    assert sharp_value.board_rows("arm", str(tmp_path), last=10) == []


def test_margins_describe_what_the_score_target_is_trained_toward(tmp_path):
    """margin_rows over the played-out rows only: mean against median |margin|, the winner's margin,
    the games given away (over half the board) and those within 3 points; run() puts the net's late β
    beside them; no replay files, no row (and run() keeps the rows an arm had)."""
    rules = go.GoRules(7)
    d4, d3, c3, e5 = (go.from_gtp(rules, v) for v in ("D4", "D3", "C3", "E5"))
    rows = _opening_rows(rules, [((d4, d3, c3, e5), 9.0, 1.0), ((d4, d3, c3, e5), 9.0, 0.0)], 3)
    game = np.asarray(rows.game_id)
    # Black's final margins: game 0 won by 1, its branch (id 100) by 40 (White gave it away), game 1 lost
    # by 2 and not played out (resigned: no final margin to train toward).
    work = _played_out_arm(tmp_path, rows, np.select([game == 0, game == 100], [1.0, 40.0], -2.0), game != 1)
    with open(work / "metrics.jsonl", "w") as f:
        for g in (2, 3):
            f.write(json.dumps({"generation": g, "selfplay_evaluations": 10, "seconds": 1.0, "alpha_empty": 9.0,
                                "beta_empty": 0.5, "beta_late": 0.25 * g, "score_error_late": 4.0}) + "\n")  # fmt: skip
    (row,) = sharp_value.margin_rows("arm", str(work), last=10)
    assert (row["generations"], row["rows"], row["games"]) == ("3-3", 10, 2)  # 5 rows each: moves 0-4
    assert row["margin_mean_abs"] == pytest.approx(20.5) and row["margin_median_abs"] == pytest.approx(20.5)
    assert row["collapsed_share"] == 0.5 and row["within_3_share"] == 0.5
    # The winner's rows: Black's 3 in game 0 (+1) and 3 in its branch (+40); White lost both.
    assert row["winner_margin_mean"] == pytest.approx((3 * 1 + 3 * 40) / 6)
    assert row["winner_margin_median"] == pytest.approx(20.5)
    assert sharp_value.margin_rows("arm", str(tmp_path), last=10) == []
    out = tmp_path / "out"
    sharp_value.run(sharp_value.Settings(arms=(f"arm={work}",), outdir=str(out), last=2))
    (written,) = common.read_csv(out / "margins.csv")
    assert float(written["beta_late"]) == pytest.approx(0.625) and float(written["score_error_late"]) == 4.0
    # Read again once its replay files are gone (they do not outlive a session): the rows it had stay.
    openings = common.read_csv(out / "opening_results.csv")
    assert openings
    shutil.rmtree(work / "replay")
    sharp_value.run(sharp_value.Settings(arms=(f"arm={work}",), outdir=str(out), last=2))
    assert common.read_csv(out / "margins.csv") == [written]
    assert common.read_csv(out / "opening_results.csv") == openings


def _decided_games(rules):
    """Five complete games of 6 moves (7 rows each) and Black's winrate at each row: Black wins at 7 (the
    favourite, above 0.7 from ply 1: decided in the opening), White wins at 7.5 (an upset, above 0.7 for
    White from ply 5 on), Black wins at 9 (even; never back above 0.7: decided at the game's end), a
    draw at 10 and a White win at 11 with one row the nets did not read (both left out)."""
    line = tuple(go.from_gtp(rules, v) for v in ("D4", "D3", "C3", "E5", "C4", "E4"))
    games = [(line, 7.0, 1.0), (line, 7.5, 0.0), (line, 9.0, 1.0), (line, 10.0, 0.5), (line, 11.0, 0.0)]
    black = {
        0: [0.6, 0.8, 0.75, 0.9, 0.95, 0.99, 1.0],
        1: [0.6, 0.6, 0.6, 0.8, 0.5, 0.2, 0.1],
        2: [0.5, 0.8, 0.5, 0.5, 0.5, 0.5, 0.6],
        3: [0.5] * 7,
        4: [0.5, np.nan, 0.5, 0.4, 0.3, 0.2, 0.1],
        100: [0.5] * 7,  # game 0's branch
    }
    return games, black


def test_games_are_decided_where_the_winners_winrate_last_rises_above_the_mark(tmp_path):
    """game_decisions: per complete game (not a branch, not a draw, every row read), its band, finish and
    result, and the first ply of the winner's last run above 0.7."""
    rules = go.GoRules(7)
    games, black = _decided_games(rules)
    rows = _opening_rows(rules, games, 3)
    game, ply = np.asarray(rows.game_id), np.asarray(rows.move_number)
    rows = rows.replace(ownership=np.zeros((rows.num_rows, 49), np.int8), ownership_mask=game == 0)
    winrate = np.array([black[int(g)][int(p)] for g, p in zip(game, ply)])
    got = {d["game"]: d for d in sharp_value.game_decisions(rows, winrate, plies=4)}
    assert sorted(got) == [0, 1, 2]
    assert [(got[g]["band"], got[g]["finish"], got[g]["result"]) for g in (0, 1, 2)] == [
        ("1.5-3", "played", "favourite"), ("1.5-3", "resigned", "upset"), ("0-1", "resigned", "even")]  # fmt: skip
    assert [got[g]["decided"] for g in (0, 1, 2)] == [1, 5, 7]
    assert [got[g]["winner_start"] for g in (0, 1, 2)] == pytest.approx([0.6, 0.4, 0.5])
    assert [got[g]["winner_after_opening"] for g in (0, 1, 2)] == pytest.approx([0.95, 0.5, 0.5])
    assert sharp_value.game_decisions(rows.replace(ownership_mask=None), winrate, plies=4) == []


def test_decided_rows_read_each_game_with_the_net_that_played_it(tmp_path):
    """decided_rows evaluates each row with checkpoint generation − 1 at the row's komi (here a tiny 7×7 net's
    winrates: the counts and their bands are what game_decisions gives for them), pools by band, finish and
    result (decided_bands), and gives no rows once the net's checkpoint is gone."""
    rules = go.GoRules(7)
    games, _ = _decided_games(rules)
    rows = _opening_rows(rules, games, 3)
    game = np.asarray(rows.game_id)
    rows = rows.replace(ownership=np.zeros((rows.num_rows, 49), np.int8), ownership_mask=game == 0)
    work = tmp_path / "arm"
    (work / "replay").mkdir(parents=True)
    replay.ReplayBuffer(work / "replay", 7).write_generation(3, rows)
    (work / "metrics.jsonl").write_text(json.dumps({"generation": 3}) + "\n")
    spec = networks.NetworkSpec(board_size=7, blocks=1, filters=8)
    net = networks.make_network(7, blocks=1, filters=8)
    state = training.create_train_state(net, training.make_optimizer(training_config()), jax.random.key(0))
    with checkpoints.Checkpointer(work) as ckpt:
        ckpt.save(2, state=state, rng_key=jax.random.key(2), network=spec, replay_dir=str(work / "replay"))
    got = sharp_value.decided_rows("arm", str(work), last=10, plies=4)
    # The same games through game_decisions with the net's winrate of each row, computed here directly.
    loaded = checkpoints.load_network(work / "checkpoints" / "2")
    planes = features.unpack_planes(np.asarray(rows.planes))
    out, _ = networks.apply_network(loaded.spec.build(), loaded.variables, planes)
    mover = np.asarray(sigmoid.winrate(out.alpha, out.beta, np.asarray(rows.signed_komi)), np.float64)
    black = np.where(np.asarray(rows.to_play) == 1, mover, 1.0 - mover)
    expected = sharp_value.game_decisions(rows, black, plies=4)
    assert sum(r["games"] for r in got) == len(expected) == 4  # all but the draw
    for r in got:
        mine = [d for d in expected if (d["band"], d["finish"], d["result"]) == (r["band"], r["finish"], r["result"])]
        assert r["games"] == len(mine) and r["generation"] == 3
        assert r["decided_in_opening"] + r["decided_to_15"] + r["decided_16_25"] + r["decided_26_on"] == r["games"]
        assert r["decided_in_opening"] == sum(d["decided"] <= 4 for d in mine)
        assert r["winner_start_sum"] == pytest.approx(sum(d["winner_start"] for d in mine), abs=1e-5)
    pooled = sharp_value.decided_bands(got)
    assert sum(p["games"] for p in pooled) == 4 and all(p["generations"] == "3" for p in pooled)
    shutil.rmtree(work / "checkpoints" / "2")
    assert sharp_value.decided_rows("arm", str(work), last=10, plies=4) == []
