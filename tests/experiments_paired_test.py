"""experiments/lib/paired.py: the paired tests against scipy and hand counts, and the declared families."""

import math

import pytest
import scipy.stats

from experiments.lib import paired
from saijax.analysis import results


def _sample(values, capped=()):
    return {k: (float(v), k in capped) for k, v in enumerate(values)}


def test_mcnemar_is_the_sign_test_on_discordant_pairs():
    arm = _sample([1, 1, 1, 1, 1, 0, 0, 1, 0, 1])
    base = _sample([0, 0, 0, 1, 0, 0, 1, 1, 0, 0])
    row = paired.mcnemar(arm, base, "greater")
    # Discordant: the arm won and the baseline lost in games 0, 1, 2, 4, 9; the reverse in game 6.
    assert (row["n"], row["up"], row["down"]) == (10, 5, 1)
    assert row["p"] == pytest.approx(scipy.stats.binomtest(5, 6, 0.5, alternative="greater").pvalue)
    assert row["p"] == pytest.approx(7 / 64)  # P(X >= 5), X ~ Bin(6, 1/2)
    assert (row["value"], row["base_value"]) == (0.7, 0.3)


def test_mcnemar_pairs_by_key_and_drops_capped_pairs():
    arm = {("a", 1): (1.0, False), ("a", 2): (1.0, True), ("b", 1): (0.0, False), ("only arm", 9): (1.0, False)}
    base = {("a", 1): (0.0, False), ("a", 2): (0.0, False), ("b", 1): (1.0, False)}
    row = paired.mcnemar(arm, base)
    assert (row["n"], row["up"], row["down"]) == (3, 2, 1)
    assert row["p"] == pytest.approx(1.0)
    assert row["p_nocap"] == pytest.approx(1.0)  # 1 up, 1 down once the capped pair drops
    assert paired.mcnemar({}, {})["p"] == 1.0  # no discordant pair: no evidence


def test_wilcoxon_against_scipy_zero_differences_dropped():
    arm = _sample([5.0, 3.0, 8.0, 1.0, 7.0, 4.0, 9.0])
    base = _sample([1.0, 3.0, 2.0, 2.5, 0.0, 4.5, 1.0])
    diffs = [4.0, 6.0, -1.5, 7.0, -0.5, 8.0]  # the tie (3 vs 3) drops
    row = paired.wilcoxon(arm, base, "greater")
    assert row["p"] == pytest.approx(scipy.stats.wilcoxon(diffs, alternative="greater").pvalue)
    assert (row["n"], row["up"], row["down"]) == (7, 4, 2)
    # Exact by hand: the negative ranks are 1 and 2, W- = 3; P(W- <= 3) over 2^6 sign patterns is 5/64.
    assert row["p"] == pytest.approx(5 / 64)


def test_self_play_sign_test_counts_opening_pairs():
    scores = _sample([2, 0, 0, 1, 0, 1, 0, 2, 0], capped={1})
    row = paired.self_play_sign(scores, "less")
    assert (row["n"], row["up"], row["down"]) == (9, 2, 5)
    assert row["p"] == pytest.approx(scipy.stats.binomtest(2, 7, 0.5, alternative="less").pvalue)
    assert row["p_nocap"] == pytest.approx(scipy.stats.binomtest(2, 6, 0.5, alternative="less").pvalue)
    assert row["base_value"] == 0.5 and row["value"] == pytest.approx(6 / 18)


def test_the_issues_example_one_thousand_visits():
    """80% → 35% as White (Fisher p = 0.0048) is a sign test over 20 opening pairs: 2 won twice, 9 lost twice."""
    row = paired.self_play_sign(_sample([2, 2] + [0] * 9 + [1] * 9), "less")
    assert row["p"] == pytest.approx(67 / 2048) and round(row["p"], 3) == 0.033


def test_unpaired_tests_are_fisher_and_welch():
    a, b = _sample([1, 1, 0, 1, 1, 1]), _sample([0, 0, 1, 0, 1, 0, 0])
    assert paired.fisher(a, b, "greater")["p"] == pytest.approx(
        scipy.stats.fisher_exact([[5, 1], [2, 5]], alternative="greater").pvalue
    )
    x, y = [3.0, 5.0, 4.0, 6.0], [1.0, 2.0, 2.5, 0.5, 1.5]
    assert paired.welch(_sample(x), _sample(y), "greater")["p"] == pytest.approx(
        scipy.stats.ttest_ind(x, y, equal_var=False, alternative="greater").pvalue
    )
    assert paired.shares_openings(a, _sample([0] * 6)) and not paired.shares_openings(a, b)


def test_identical_pairs_and_distinct_games_without_sgfs():
    games = [
        results.GameResult("A", "B", "black", 3.5, moves=40, end="passes", game=0, seed=7),
        results.GameResult("B", "A", "black", 3.5, moves=40, end="passes", game=1, seed=7),
        results.GameResult("A", "B", "white", -1.5, moves=50, end="cap", game=2, seed=7),
        results.GameResult("B", "A", "black", 1.5, moves=50, end="cap", game=3, seed=7),
    ]
    assert paired.identical_pairs(games) == (2, 1)
    assert paired.distinct([g.sgf for g in games]) == ("no SGFs", "no SGFs")


def _rows():
    rows = []
    for strong in ("S1", "all"):
        for colour in ("white", "black", "both"):
            rows.append(dict(strong=strong, colour=colour, measure="wins", p=0.01 if colour == "both" else 0.04,
                             p_nocap=0.02))  # fmt: skip
    return rows


KEYS = ("strong", "colour", "measure")


def test_families_adjust_their_rows_only():
    rows = paired.adjust(_rows(), [paired.Family("pooled", {"strong": "all", "colour": ("white", "black")}, 2)], KEYS)
    inside = [r for r in rows if r["family"] == "pooled"]
    assert len(inside) == 2 and all(r["p_holm"] == pytest.approx(0.08) and r["p_bh"] == 0.04 for r in inside)
    outside = [r for r in rows if not r["family"]]
    assert len(outside) == 4 and all(r["p_holm"] == "" for r in outside)
    assert paired.adjusted(inside[0], "bh") == 0.04
    with pytest.raises(ValueError, match="outside every declared family"):
        paired.adjusted(outside[0])


def test_a_family_of_another_size_is_refused():
    with pytest.raises(ValueError, match="declared with 3 rows, the tables give 2"):
        paired.adjust(_rows(), [paired.Family("f", {"strong": "all", "colour": ("white", "black")}, 3)], KEYS)


@pytest.mark.parametrize(
    "where", [{"strong": "all"}, {"colour": "white"}, {"colour": ("white", "both"), "strong": "all"}]
)
def test_an_aggregate_beside_its_part_is_refused(where):
    """Both colours beside a colour, or the pooled nets beside one net: never one family."""
    size = sum(paired.Family("", where, 0).holds(r) for r in _rows())
    with pytest.raises(ValueError, match="aggregate row beside its part"):
        paired.adjust(_rows(), [paired.Family("f", where, size)], KEYS)


def test_a_row_in_two_families_is_refused_and_nan_p_stays_out():
    families = [paired.Family("a", {"strong": "all", "colour": "both"}, 1), paired.Family("b", {"colour": "both"}, 2)]
    with pytest.raises(ValueError, match="already in family a"):
        paired.adjust(_rows(), families, KEYS)
    rows = [dict(k=1, p=0.01, p_nocap=math.nan), dict(k=2, p=0.02, p_nocap=0.03)]
    paired.adjust(rows, [paired.Family("f", {}, 2)], ("k",))
    assert math.isnan(rows[0]["p_nocap_holm"]) and rows[1]["p_nocap_holm"] == pytest.approx(0.03)
