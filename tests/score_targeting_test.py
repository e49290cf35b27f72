"""experiments/score_targeting/score_targeting.py's tests: two samples against the same net's λ = μ = 0 games,
corrected."""

import math

import pytest

from experiments.score_targeting import score_targeting as st
from saijax.analysis import results
from saijax.core import search


def _games(net, agent, wins, games, win_margin):
    """``games`` games of net (with ``agent``) as White against W: ``wins`` won by about ``win_margin``."""
    name = st.agent_name(net, agent)
    out = []
    for i in range(games):
        won = i < wins
        margin = -(win_margin + i % 5) if won else 6.0 + i % 3  # Black's margin
        out.append(results.GameResult(black="W", white=name, winner="white" if won else "black", margin=margin))
    return out


def test_agent_tests_are_two_sample_and_corrected():
    plain, agent = search.Agent(0.0, 0.0, 0.0), search.Agent(1.0, 0.0, 0.0)
    games = [
        *_games("S1", plain, 18, 20, 5.0),
        *_games("S1", agent, 10, 20, 15.0),
        *_games("S2", plain, 17, 20, 5.0),
        *_games("S2", agent, 16, 20, 6.0),
    ]
    tables = st.analyse(games)
    tests = {(r["strong"], r["strong_colour"]): r for r in tables.tests}
    assert set(tests) == {("S1", "white"), ("S1", "both"), ("S2", "white"), ("S2", "both"), ("all", "white"),
                          ("all", "both")}  # fmt: skip
    s1 = tests["S1", "white"]
    assert (s1["wins"], s1["games"], s1["base_wins"], s1["base_games"]) == (10, 20, 18, 20)
    assert s1["p_fisher_less"] < 0.01 and s1["score_p_welch_greater"] < 0.001 and s1["score_p_mw_greater"] < 0.001
    # Holm over the per-net family (4 rows): never below the raw p.
    assert all(r["p_fisher_less_holm"] >= r["p_fisher_less"] for r in tables.tests)
    pooled = tests["all", "white"]
    assert (pooled["wins"], pooled["games"], pooled["base_wins"]) == (26, 40, 35)
    # Table 1: the pooled rows, Fisher (two samples) beside the known-rate binomial test.
    row = next(r for r in tables.table1 if r["lambda"] == 1.0 and r["strong_colour"] == "white")
    assert (row["base_games"], row["base_wins"]) == (40, 35)
    assert row["p_win_rate"] == pytest.approx(pooled["p_fisher_less"])
    assert row["p_win_rate_binom_known"] < row["p_win_rate"]  # the baseline's own noise ignored
    assert row["p_win_rate_holm"] == pytest.approx(row["p_win_rate"])  # a family of one
    base = next(r for r in tables.table1 if r["lambda"] == 0.0)
    assert math.isnan(base["p_win_rate"]) and math.isnan(base["p_win_rate_holm"])


def test_compare_runs_matches_cells_and_nets():
    plain, agent = search.Agent(0.0, 0.0, 0.0), search.Agent(1.0, 1.0, 0.0)
    # This run: S1 only (say at 1,000 visits); the other: S1 and S2 (at 128 visits), one cell S1 lacks here.
    mine = [*_games("S1", plain, 18, 20, 5.0), *_games("S1", agent, 8, 20, 20.0)]
    other = [*_games("S1", plain, 10, 20, 5.0), *_games("S2", plain, 20, 20, 5.0), *_games("S2", agent, 1, 20, 9.0)]
    rows = st.compare_runs(st.analyse(mine).cells, other, "elsewhere")
    keys = {(r["strong"], r["lambda"], r["strong_colour"]) for r in rows}
    assert keys == {("S1", 0.0, "white"), ("S1", 0.0, "both"), ("all", 0.0, "white"), ("all", 0.0, "both")}
    pooled = next(r for r in rows if r["strong"] == "all" and r["strong_colour"] == "white")
    # S2's games are not pooled into the other run's "all": it pools this run's nets only.
    assert (pooled["wins"], pooled["games"], pooled["other_wins"], pooled["other_games"]) == (18, 20, 10, 20)
    assert pooled["d_win_pts"] == pytest.approx(40.0) and pooled["p_fisher_two"] < 0.05
    assert pooled["other_run"] == "elsewhere" and pooled["score_diff"] == pytest.approx(0.0, abs=1.0)
    assert all(r["p_fisher_two_holm"] >= r["p_fisher_two"] for r in rows)
    with pytest.raises(ValueError, match="no games.csv"):
        st.write_compare("/tmp", "/nonexistent_run_dir", st.analyse(mine).cells)
