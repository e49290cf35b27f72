"""Figs. 5, 6 and Table 1 of [SAI-9x9] (the λ/μ agents), and the 1,000-visit check, on 7×7.

    python -m experiments.run --config=experiments/score_targeting/config.py
    python -m experiments.run --config=experiments/score_targeting/config.py --config.play=True  # play again

Every run is ``experiments/score_targeting/score_targeting.py`` with these settings. New
runs share their openings between a net's agents against one opponent
(``openings="shared"``), so every agent pairs with λ = μ = 0; the shipped
games (``shipped``, the second round's folders) hashed each cell's seed, so
against a weak net they are compared unpaired, and against itself by the
sign test over opening pairs (:mod:`experiments.lib.paired`). The 1,000-visit
cells share their seeds with the same cells at 128 visits (the same cell
key), so those two runs pair.

The families were declared with this runner, after the shipped games and
before any new one; each holds the pooled rows (S1–S3, ``all``) of one
kind of test: wins over both colours (the unit is the opening pair; the
per-colour rows are its parts and in no family), winning margins per
colour.
"""

from experiments.lib import claims

S = ("zoo:go7-S1", "zoo:go7-S2", "zoo:go7-S3")
FIG5 = ("1:0", "1:0.5", "1:1", "0.5:0")  # (λ, μ) at threshold 0
THRESHOLDS = (0.5, 0.7)  # Table 1 and Fig. 6: the variable agents against itself and W3


def _family(size, **where):
    return dict(where=dict(strong="all", **where), size=size)


def _verdict(id_, claim, old_test, old_p, basis, **where):
    return dict(id=id_, claim=claim, old_test=old_test, old_p=old_p, basis=basis, where=dict(strong="all", **where))


def _loss(id_, claim, old_test, old_p, basis, run="main", **cell):
    return _verdict(id_, claim, old_test, old_p, basis, run=run, colour="both", measure="wins", **cell)


def get_config():
    c = claims.claim_config("score_targeting")
    c.rebuild = dict(plot_only=True)
    c.match = dict(games=60, visits=128, gumbel_scale=0.0, opening_moves=2, komi=9.5, seed=0, board_size=7)
    c.runs = dict(
        main=dict(strong=S, weak=("zoo:go7-W1", "zoo:go7-W3"), figures=("5", "6"), fig5_agents=FIG5,
                  variable_agents=("0.5:0", "1:0", "1:0.5"), thresholds=THRESHOLDS, openings="shared", resume=True),
        v1000=dict(strong=S[:1], weak=("zoo:go7-W1",), figures=("5",), fig5_agents=("1:1",), visits=1000, games=40,
                   openings="shared", resume=True),
    )  # fmt: skip
    c.compare = [["v1000", "main"]]  # the same cells at 1,000 and 128 visits, paired by seed and game
    c.shipped = dict(main="experiments/score_targeting/results/main", v1000="experiments/score_targeting/results/v1000")
    c.figures = dict(main=["fig5_score_targeting.png", "fig6_variable_agent.png"], v1000=["fig5_score_targeting.png"])
    c.families = dict(
        fig5_wins=_family(12, run="main", threshold=0.0, colour="both", measure="wins"),
        fig5_win_margin=_family(24, run="main", threshold=0.0, measure="win_margin"),
        table1_wins=_family(12, run="main", threshold=tuple(THRESHOLDS), colour="both", measure="wins"),
        table1_win_margin=_family(24, run="main", threshold=tuple(THRESHOLDS), measure="win_margin"),
        v1000_wins=_family(2, run="v1000", colour="both", measure="wins"),
        v1000_win_margin=_family(4, run="v1000", measure="win_margin"),
        v1000_vs_128_wins=_family(4, run="v1000 vs main", measure="wins"),
        v1000_vs_128_margin=_family(4, run="v1000 vs main", measure="margin"),
    )
    fig5_loss = "the win rate falls with λ, especially for high μ and as Black (Fig. 5)"
    fig5_score = "as White the winning score rises (Fig. 5)"
    w3 = "against W3 no loss of strength (Fig. 5)"
    t1 = "Table 1 / Fig. 6: the variable agents' loss of strength"
    c.verdicts = [
        _loss("fig5_itself_11_white", fig5_loss, "Fisher one-sided, itself White (1, 1), BH over 72 rows", 0.043, "bh",
              opponent="itself", mu=1.0, threshold=0.0, **{"lambda": 1.0}),
        _loss("fig5_itself_11_black", fig5_loss, "Fisher one-sided, itself Black (1, 1), BH over 72 rows", 0.11, "bh",
              opponent="itself", mu=1.0, threshold=0.0, **{"lambda": 1.0}),
        _loss("fig5_w1_11_black", fig5_loss, "Fisher one-sided, W1 Black (1, 1), BH over 72 rows", 0.022, "bh",
              opponent="go7-W1", mu=1.0, threshold=0.0, **{"lambda": 1.0}),
        _loss("fig5_w1_105_black", fig5_loss, "Fisher one-sided, W1 Black (1, 0.5), BH over 72 rows", 0.049, "bh",
              opponent="go7-W1", mu=0.5, threshold=0.0, **{"lambda": 1.0}),
        _verdict("fig5_itself_105_score", fig5_score, "Welch one-sided, itself White (1, 0.5), Holm over 72 rows",
                 5e-5, "holm", run="main", opponent="itself", mu=0.5, threshold=0.0, colour="white",
                 measure="win_margin", **{"lambda": 1.0}),
        _verdict("fig5_w1_11_score", fig5_score, "Welch one-sided, W1 White (1, 1), Holm over 72 rows", 0.035, "holm",
                 run="main", opponent="go7-W1", mu=1.0, threshold=0.0, colour="white", measure="win_margin",
                 **{"lambda": 1.0}),
        _loss("fig5_w3_11_black", w3, "Fisher one-sided, W3 Black (1, 1), BH over 72 rows", 0.043, "bh",
              opponent="go7-W3", mu=1.0, threshold=0.0, **{"lambda": 1.0}),
        dict(id="fig5_w3_score", claim="against W3 a substantial score gain (Fig. 5)", basis="holm",
             old_test="Welch one-sided, Holm over 72 rows: below 0.05 in 7 of 8 cells", old_significant="7/8",
             where=dict(run="main", strong="all", opponent="go7-W3", threshold=0.0, measure="win_margin")),
        dict(id="table1_loss", claim=t1, basis="holm", old_test="Fisher one-sided per colour, p >= 0.079 in 24 rows",
             old_significant="0/12", where=dict(run="main", strong="all", threshold=tuple(THRESHOLDS), colour="both",
                                               measure="wins")),  # fmt: skip
        dict(id="table1_score", claim="Table 1: the score gain is always significant", basis="holm",
             old_test="Welch one-sided, Holm over table1.csv's 40 rows: 19 of 24", old_significant="19/24",
             where=dict(run="main", strong="all", threshold=tuple(THRESHOLDS), measure="win_margin")),
        _loss("v1000_itself_white", "the loss at λ = μ = 1 holds at 1,000 visits",
              "Fisher one-sided, itself White, Holm over 6 rows", 0.029, "holm", run="v1000", opponent="itself"),
        _loss("v1000_w1", "the loss at λ = μ = 1 holds at 1,000 visits", "Fisher one-sided, W1 both colours, BH over "
              "6 rows", 0.037, "bh", run="v1000", opponent="go7-W1"),
        dict(id="v1000_vs_128", claim="no cell differs between 1,000 and 128 visits", basis="holm",
             old_test="Fisher and Welch two-sided, Holm over 12 rows: none below 0.05", old_significant="0/8",
             where=dict(run="v1000 vs main", strong="all")),
    ]  # fmt: skip
    return c
