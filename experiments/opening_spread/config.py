"""What sets β_∅ ([SAI-7x7]: β_∅ > 2): how much a net's own deterministic self-play's win rate changes with komi.

    python -m experiments.run --config=experiments/opening_spread/config.py
    python -m experiments.run --config=experiments/opening_spread/config.py --config.redraw=True  # from games.csv
    python -m experiments.run --config=experiments/opening_spread/config.py --config.play=True  # play again

``experiments/opening_spread/opening_spread.py`` with these settings, one run per net and
opening: self-play from the empty board, the first ``random_moves`` moves
sampled (with root noise) by the opening policies ``opening_policies``,
every later move the search's best, played out. The runs:

* ``caps_*``, ``rest_*``: two arms of the 7×7 ablation at generation 36
  (its nets in ``ablation/main/nets``), 8, 4 or 2 random moves, 32 or 128
  visits;
* ``S1_*``: the go7 run's final net go7-S1, 8 random moves at 64 visits
  and 2 at 256;
* ``G46_r8_v64``: generation 46 of ``configs/go7_gpu.py`` (4×64, the end
  of its first leg on an H200), as ``S1_r8_v64``;
* ``go5_*``: the 5×5 zoo net go5 at komi 24.5 (5×5's fair komi is 25).

Each run's ``summary.csv`` gives Δ, Black's win rate half a point below the
fair komi less that half a point above (8.5 and 9.5; go5's 24.5 and 25.5),
scored from the same games, and ``delta_beta`` = 4·atanh Δ, the β of a
logistic with that Δ, which is what the nets' learned β_∅ follows; beside
it, the margins' sd and ``implied_beta`` = π / (√3 · sd), which is not
(the sd is dominated by ±49 collapses that do not change who wins; issue
43). Where a run plays both opening policies the script compares them
(Welch on the mean margins, Levene on the spreads, ``tests.csv``); the
claim is descriptive, a Δ and a spread per net, so there is no
``claim_tests``.
"""

from experiments.lib import claims

ABLATION = dict(zoo_dir="experiments/ablation/results/main/nets", visits=32)
S1 = dict(net="zoo:go7-S1", opening_policies=("visits",))
G46 = dict(net="experiments/legs/go7_gpu_run/leg/checkpoints/46", opening_policies=("visits",))
GO5 = dict(net="zoo:go5", board_size=5, komi=24.5, games=64, visits=64, opening_policies=("visits",))


def get_config():
    c = claims.claim_config("opening_spread")
    c.rebuild = dict(plot_only=True)
    c.match = dict(games=128, random_moves=8, opening_policies=("visits", "improved"), komi=9.5, batch=64, seed=0,
                   board_size=7)  # fmt: skip
    c.runs = dict(
        caps_r8_v32=dict(ABLATION, net="caps"),
        caps_r4_v32=dict(ABLATION, net="caps", games=64, random_moves=4, opening_policies=("improved",)),
        caps_r4_v128=dict(ABLATION, net="caps", games=64, random_moves=4, opening_policies=("improved",), visits=128),
        caps_r2_v32=dict(ABLATION, net="caps", games=64, random_moves=2, opening_policies=("improved",)),
        rest_r8_v32=dict(ABLATION, net="rest"),
        S1_r8_v64=dict(S1, visits=64),
        S1_r2_v256=dict(S1, games=64, random_moves=2, visits=256),
        G46_r8_v64=dict(G46, visits=64),
        go5_r4_v64=dict(GO5, random_moves=4),
        go5_r2_v64=dict(GO5, random_moves=2),
    )
    c.shipped = {name: f"experiments/opening_spread/results/{name}" for name in c.runs}
    c.figures = {name: ["opening_spread.png"] for name in c.runs}
    return c
