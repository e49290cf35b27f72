"""experiments/baselines/baselines.py: the pairing graph, equal compute, calibration errors, settings."""

import pytest

from experiments.baselines import baselines
from saijax.core import sgf


def _nets():
    nets = []
    for arm, seed, evals in (
        ("SAI", 0, (10, 20, 30)),
        ("LZS", 0, (25, 50, 75)),
        ("SAI", 1, (12, 22, 32)),
    ):
        for g, e in enumerate(evals):
            run = f"{arm}_s{seed}"
            nets.append(
                {"run": run, "arm": arm, "seed": seed, "generation": g, "name": f"{run}_g{g}", "evaluations": e}
            )
    return nets


def test_pairings_chain_each_run_anchor_it_and_cross_arms_at_equal_compute():
    pairs = baselines.elo_pairings(_nets(), neighbours=1, random_pairings=1)
    assert len(pairs) == len({frozenset(p) for p in pairs}), "no pairing twice"
    as_sets = {frozenset(p) for p in pairs}
    # Chains within each run.
    for run in ("SAI_s0", "LZS_s0", "SAI_s1"):
        assert frozenset((f"{run}_g0", f"{run}_g1")) in as_sets
        assert frozenset((f"{run}_g1", f"{run}_g2")) in as_sets
        assert frozenset(("random", f"{run}_g0")) in as_sets
    # Cross-arm, same seed, nearest compute: SAI_s0_g2 (30) meets LZS_s0_g0 (25).
    assert frozenset(("SAI_s0_g2", "LZS_s0_g0")) in as_sets
    # LZS_s0_g2 (75) meets SAI_s0_g2 (30), the nearest.
    assert frozenset(("LZS_s0_g2", "SAI_s0_g2")) in as_sets
    # No pairing across seeds, none within an arm across runs.
    for a, b in pairs:
        if a != "random":
            assert a.split("_")[1] == b.split("_")[1], (a, b)


def test_equal_compute_takes_the_last_net_within_the_smallest_budget():
    rows = [{"run": "", "evaluations": 0}]
    rows += [{"run": n["run"], "evaluations": n["evaluations"], "name": n["name"]} for n in _nets()]
    picks = baselines.equal_compute(rows)
    # The smallest run total is SAI_s0's 30.
    assert picks["SAI_s0"]["name"] == "SAI_s0_g2"
    assert picks["LZS_s0"]["name"] == "LZS_s0_g0"
    assert picks["SAI_s1"]["name"] == "SAI_s1_g1"


def test_move_errors_read_the_movers_alpha_with_its_signed_komi():
    # Black's move at komi 24.5: alpha 25 (lead before komi) predicts +0.5 for Black.
    # White's reply: alpha -25 predicts -25 + 24.5 = -0.5 for White.
    comments = (
        "random opening move",
        sgf.move_comment(alpha=-20.0, beta=0.1),
        sgf.move_comment(alpha=25.0, beta=0.5),
        sgf.move_comment(alpha=-25.0, beta=0.25),
    )
    record = sgf.GameRecord(size=5, komi=24.5, moves=(0, 1, 2, 3), comments=comments)
    rows = baselines.move_errors(record, margin_black=0.5)
    assert [r["move"] for r in rows] == [1, 2, 3]
    white, black, white2 = rows
    assert white["predicted"] == pytest.approx(-20.0 + 24.5) and white["actual"] == -0.5
    assert white["error"] == pytest.approx(5.0)
    assert black["predicted"] == pytest.approx(0.5) and black["error"] == pytest.approx(0.0)
    assert white2["predicted"] == pytest.approx(-0.5) and white2["error"] == pytest.approx(0.0)
    assert white2["beta"] == 0.25


def test_calibration_table_bins_by_move_number():
    move_rows = [{"arm": "SAI", "move": m, "error": float(m), "beta": 0.1} for m in (0, 4, 5, 31)]
    table = baselines.calibration_table(move_rows)
    assert [(r["moves"], r["positions"], r["mean_abs_error"]) for r in table] == [
        ("0-4", 2, 2.0),
        ("5-9", 1, 5.0),
        ("30+", 1, 31.0),
    ]


@pytest.mark.parametrize(
    "changes, message",
    [
        (dict(stages=("train", "fly")), "baselines.Settings.stages=('train', 'fly'): unknown stage 'fly'"),
        (dict(arms=("SAI", "MuZero")), "baselines.Settings.arms=('SAI', 'MuZero'): unknown arm 'MuZero'"),
        (dict(arms=("SAI@x",)), "'SAI@x': seeds after @ must be integers"),
        (dict(seeds=(0, "x")), "baselines.Settings.seeds=(0, 'x'): needs a tuple (or list) of ints"),
        (dict(every=0), "baselines.Settings.every=0: needs an int >= 1"),
    ],
)
def test_bad_settings_are_named(changes, message):
    with pytest.raises(ValueError) as e:
        baselines.Settings(outdir="/tmp/x", **changes)
    assert message in str(e.value)


def test_missing_run_is_a_clear_error(tmp_path):
    settings = baselines.Settings(root=str(tmp_path), outdir=str(tmp_path / "out"), stages=("curves",), arms=("SAI",))
    with pytest.raises(FileNotFoundError, match="SAI_s0 has no metrics.jsonl"):
        baselines.run(settings)


def test_an_arm_may_have_its_own_seeds(tmp_path):
    settings = baselines.Settings(root=str(tmp_path), outdir="/tmp/x", arms=("SAI", "LZS-nogate@0@2"), seeds=(0, 1))
    assert [r.label for r in baselines.runs(settings)] == ["SAI_s0", "SAI_s1", "LZS-nogate_s0", "LZS-nogate_s2"]
