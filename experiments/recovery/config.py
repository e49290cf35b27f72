"""Fig. 7 of [SAI-9x9] (recovering from a severe handicap with λ > 0), on 7×7.

    python -m experiments.run --config=experiments/recovery/config.py
    python -m experiments.run --config=experiments/recovery/config.py --config.play=True  # play again

``experiments/recovery/recovery.py`` with these settings: S1–S3 as White against W1
in H1 at komi −29.5 and H2 at −9.5 (the situations the second round's
calibration chose, ``recovery/main/situations.csv``: maluses 30 and 23 from
the base komis 0.5 and 13.5), λ = 0, 0.5 and 1. The λ values of a net
share their seeds, so game i of each is the same opening: every test is
paired (:func:`experiments.recovery.recovery.paired_tests`). Families: the pooled
rows (S1–S3) of each kind of test against λ = 0, and λ = 1 against 0.5.
"""

from experiments.lib import claims


def _family(size, **where):
    return dict(where=dict(run="main", strong="S1-S3", **where), size=size)


def _verdict(id_, old_test, old_p, basis, handicap, lam, base=0.0, measure="wins"):
    where = dict(run="main", strong="S1-S3", handicap=handicap, baseline_lambda=base, measure=measure)
    claim = {0.0: "λ > 0 raises the win rate (Fig. 7)", 0.5: "λ = 1 does no better than 0.5 (Fig. 7)"}[base]
    if measure == "margin":
        claim = "λ > 0 keeps the game closer (§4.3)"
    return dict(id=id_, claim=claim, old_test=old_test, old_p=old_p, basis=basis, where={**where, "lambda": lam})


def get_config():
    c = claims.claim_config("recovery")
    c.rebuild = dict(plot_only=True)
    c.match = dict(games=60, visits=128, gumbel_scale=0.0, opening_moves=2, seed=0, board_size=7)
    c.runs = dict(
        main=dict(strong=("zoo:go7-S1", "zoo:go7-S2", "zoo:go7-S3"), opponent="zoo:go7-W1", lambdas=(0.0, 0.5, 1.0),
                  mu=0.0, h1_komi=0.5, h1_maluses=(30.0,), h2_komi=13.5, h2_maluses=(23.0,)),
    )  # fmt: skip
    c.shipped = dict(main="experiments/recovery/results/main")
    c.figures = dict(main=["fig7_recovery.png"])
    c.families = dict(
        fig7_wins=_family(4, baseline_lambda=0.0, measure="wins"),
        fig7_margin=_family(4, baseline_lambda=0.0, measure="margin"),
        fig7_lambda1_wins=_family(2, baseline_lambda=0.5, measure="wins"),
    )
    fisher = "Fisher one-sided (higher), Holm over 4 pooled rows"
    c.verdicts = [
        _verdict("fig7_h1_05", fisher + ", H1 λ = 0.5", 0.028, "holm", 1, 0.5),
        _verdict("fig7_h1_1", fisher + ", H1 λ = 1", 0.0085, "holm", 1, 1.0),
        _verdict("fig7_h2_05", fisher + ", H2 λ = 0.5", 1.0, "holm", 2, 0.5),
        _verdict("fig7_h2_1", fisher + ", H2 λ = 1", 1.0, "holm", 2, 1.0),
        _verdict("fig7_h1_1_vs_05", "Fisher two-sided, H1 λ = 1 against 0.5, uncorrected", 0.73, "holm", 1, 1.0, 0.5),
        _verdict("fig7_h2_1_vs_05", "Fisher two-sided, H2 λ = 1 against 0.5, uncorrected", 0.54, "holm", 2, 1.0, 0.5),
        dict(
            id="fig7_margins",
            claim="λ > 0 keeps the game closer (§4.3)",
            basis="p",
            old_significant="4/4",
            old_test="Welch and Mann–Whitney one-sided, p < 1e-10 in 4 of 4",
            where=dict(run="main", strong="S1-S3", baseline_lambda=0.0, measure="margin"),
        ),
    ]
    return c
