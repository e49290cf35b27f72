"""§4.4 of [SAI-9x9] (fewer point-losing moves once the game is won), on 7×7: SAI against the
AlphaZero-style net.

    python -m experiments.run --config=experiments/suboptimal_moves/config.py
    python -m experiments.run --config=experiments/suboptimal_moves/config.py --config.play=True  # play again

``experiments/suboptimal_moves/suboptimal_moves.py`` with these settings: go7-S1 at λ = μ = 0
and (1, 0) and go7-az (the winrate head) each play go7-W3, 120 games, the
same match seed, so game i of each condition has the same opening and
colours: every test is paired by game (wins over all games, the rest over
the games both won; :func:`experiments.suboptimal_moves.suboptimal_moves.paired_tests`).
The judge of point-losing moves is ``scorer``. ``main``'s shipped games
were judged by go7-S2, generation 160 of the same run as go7-S1 (169),
which judges go7-az too (``--config.runs.main.scorer=zoo:go7-S2`` plays
them as shipped; for new runs ``main`` names go7-base-S1). Run
``judge_gpu`` plays main's games again (deterministic play: the same
games) and judges them with go7-gpu-G46, generation 46 of the GPU run
(configs/go7_gpu.py), a net of another run than every compared one; its
families are ``s44_judge_*``, and its verdicts rest on that judge. The claim rests on one net per training
method (go7-S1 and go7-az): a second seed of each needs GPU runs.
Families: one per kind of test, over the three pairs of ``main``.

Run ``go5`` is the same claim on 5×5 (go5-sai against the AlphaZero net
go5-az, each against go5-weak, 80 games at komi 24.5, 32 visits); its games
pair the same way, and its tests are in no family. Its shipped games were
judged by go5-sai, one of the compared nets, which the script now refuses:
new runs judge with the independent go5.
"""

from experiments.lib import claims

PAIRS = (("go7-S1[l=1,m=0]", "go7-az"), ("go7-S1", "go7-az"), ("go7-S1[l=1,m=0]", "go7-S1"))


def _verdict(id_, claim, old_test, old_p, measure, condition="go7-S1[l=1,m=0]", baseline="go7-az", run="main"):
    where = dict(run=run, condition=condition, baseline=baseline, measure=measure)
    return dict(id=id_, claim=claim, old_test=old_test, old_p=old_p, basis="holm", where=where)


def get_config():
    c = claims.claim_config("suboptimal_moves")
    c.rebuild = dict(summarize_only=True)  # with each run's own winrate_net
    c.match = dict(games=120, visits=128, gumbel_scale=0.0, opening_moves=2, komi=9.5, seed=0, board_size=7)
    c.runs = dict(
        main=dict(strong="zoo:go7-S1", agents=("0:0", "1:0"), winrate_net="zoo:go7-az", opponent="zoo:go7-W3",
                  scorer="zoo:go7-base-S1", score_visits=128, head_to_head=100),
        judge_gpu=dict(strong="zoo:go7-S1", agents=("0:0", "1:0"), winrate_net="zoo:go7-az", opponent="zoo:go7-W3",
                       scorer="zoo:go7-gpu-G46", score_visits=128, head_to_head=0),
        go5=dict(strong="zoo:go5-sai", agents=("0:0", "1:0"), winrate_net="zoo:go5-az", opponent="zoo:go5-weak",
                 scorer="zoo:go5", score_visits=32, head_to_head=0, board_size=5, komi=24.5, games=80, visits=32),
    )  # fmt: skip
    c.shipped = dict(main="experiments/suboptimal_moves/results/main", go5="experiments/suboptimal_moves/results/go5",
                     judge_gpu="experiments/suboptimal_moves/results/judge_gpu")  # fmt: skip
    c.figures = {name: ["suboptimal_moves.png"] for name in c.shipped}
    # --config.zoo=sharp (issue 64): main's design, the points judged by seed 1's net (another run)
    c.zoos.sharp = dict(names={"go7-base-S1": "go7-sharp-J"}, runs=dict(main={}))
    c.families = {
        f"s44_{prefix}{m}": dict(where=dict(run=run, measure=m), size=3)
        for run, prefix in (("main", ""), ("judge_gpu", "judge_"))
        for m in ("wins", "win_margin", "losing_moves", "won_with_none")
    }
    more = "SAI wins by more than the winrate-head program (§4.4)"
    fewer = "SAI plays fewer point-losing moves once the game is won (§4.4)"
    c.verdicts = [
        _verdict("s44_margin", more, "Welch one-sided, S1 (1, 0) against go7-az, Holm over 3 rows", 1e-6, "win_margin"),
        _verdict("s44_none", fewer, "Fisher one-sided, won games with none, Holm over 3 rows", 1e-6, "won_with_none"),
        _verdict("s44_moves", fewer, "Mann–Whitney one-sided, moves per win, Holm over 3 rows", 1e-6, "losing_moves"),
        _verdict("s44_strength", "the two programs are of similar strength (against W3)",
                 "Fisher two-sided, win rates against W3, Holm over 3 rows", 1.0, "wins"),
        _verdict("s44_lambda_margin", "λ = 1 adds points over λ = 0 (§4.4)",
                 "Welch one-sided, S1 (1, 0) against S1 (0, 0), Holm over 3 rows", 7e-5, "win_margin",
                 baseline="go7-S1"),
        _verdict("s44_lambda_none", "λ = 1 halves the point-losing moves (§4.4)",
                 "Fisher one-sided, won games with none, Holm over 3 rows", 3.4e-5, "won_with_none", baseline="go7-S1"),
    ]  # fmt: skip
    # main's games played again and judged by a net of another run (go7-gpu-G46); the old test: main's, by go7-S2.
    judged_by_s2 = "the same paired test judged by go7-S2 (main), Holm over 3 rows"
    c.verdicts += [
        _verdict("s44_judge_gpu_none", fewer, judged_by_s2, 1e-6, "won_with_none", run="judge_gpu"),
        _verdict("s44_judge_gpu_moves", fewer, judged_by_s2, 1e-6, "losing_moves", run="judge_gpu"),
        _verdict("s44_judge_gpu_lambda_none", "λ = 1 halves the point-losing moves (§4.4)", judged_by_s2, 1.1e-4,
                 "won_with_none", baseline="go7-S1", run="judge_gpu"),
    ]  # fmt: skip
    return c
