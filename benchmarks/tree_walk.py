"""The search's two tree walks (``search.walk``) against each other.

    python benchmarks/tree_walk.py [--config configs/go7.py] [--generation 169] [--net zoo:go7-S1]
        [--simulations 8,64] [--rounds 5] [--moves 4]

``"parents"`` finds a simulation's ancestors with loops up the tree (the
superko check, the backward pass), ``"path"`` with the descent's record and
no loop (saijax/core/mcts.py); the games are the same. The benchmark builds the
config's self-play at ``--generation`` (benchmarks/selfplay.py's ``build``,
with ``--net``'s weights, a zoo name or a checkpoint step directory, so that
the trees are a trained net's), plays three chunks so that the slots are in
mid-game, and then times, in alternating rounds, a search of the slots'
positions per move for each walk and simulation count (benchmarks/selfplay.py's
``SearchHarness``: ``--moves`` searches inside one jitted loop, each of
another rolling of the positions): with the network, and with the network's
outputs on the same trees looked up instead of computed (``replay``: the tree
work alone). Each figure is the median over the
rounds. The last line is ``path/parents search time ratio R`` at the
largest simulation count: above 1, "path" is slower on this backend.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import sys

import jax
import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import selfplay as selfplay_bench  # noqa: E402  (benchmarks/selfplay.py)

from saijax.cli import player as player_cli  # noqa: E402
from saijax.learn import config as config_lib  # noqa: E402


def seconds_per_search(bench, replay: bool, walk: str, simulations: int, moves: int):
    """A () -> seconds per search of the slots' positions with ``walk`` and ``simulations`` (every move a full
    search): benchmarks/selfplay.py's :class:`SearchHarness` on the bench with that search (with ``replay``,
    its tree work alone: the network's outputs looked up)."""
    cfg = dataclasses.replace(
        bench.search_config,
        walk=walk,
        num_simulations=simulations,
        max_num_considered_actions=min(simulations, bench.search_config.max_num_considered_actions),
    )
    full = dataclasses.replace(bench.selfplay_config, full_search_prob=1.0)
    harness = selfplay_bench.SearchHarness(dataclasses.replace(bench, search_config=cfg, selfplay_config=full),
                                           moves=moves, replay=replay)  # fmt: skip
    return lambda: harness.batch * (simulations + 1) / harness.rate(0.0)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--config", default="configs/go7.py")
    p.add_argument("--generation", type=int, default=169)
    p.add_argument("--net", default="zoo:go7-S1", help="the weights searched with ('' for a fresh net)")
    p.add_argument("--simulations", default="8,64")
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--moves", type=int, default=4)
    args = p.parse_args(argv)
    config = config_lib.load_config(args.config)
    sims = [int(s) for s in args.simulations.split(",")]
    variables = None
    if args.net:
        variables = player_cli.load_player(args.net, board_size=config.board_size).variables
    bench = selfplay_bench.build(config, generation=args.generation, variables=variables)
    selfplay_bench.compile_chunk(bench)
    selfplay_bench.play(bench, 3)
    nets = {"network": False, "tree work alone": True}
    timers = {(n, s, w): seconds_per_search(bench, replay, w, s, args.moves) for n, replay in nets.items() for s in sims
              for w in ("parents", "path")}  # fmt: skip
    times = {k: [] for k in timers}
    for _ in range(args.rounds):
        for k, fn in timers.items():
            times[k].append(fn())
    print(f"{bench.describe()}; {jax.default_backend()}; net {args.net or 'fresh'}; ms per search, median of "
          f"{args.rounds} rounds")  # fmt: skip
    print("| searched with | simulations | parents | path | path/parents |")
    print("|---|---|---|---|---|")
    for n in nets:
        for s in sims:
            a, b = (1e3 * float(np.median(times[(n, s, w)])) for w in ("parents", "path"))
            print(f"| {n} | {s} | {a:.1f} | {b:.1f} | {b / a:.3f} |")
    a, b = (float(np.median(times[("network", max(sims), w)])) for w in ("parents", "path"))
    print(f"path/parents search time ratio {b / a:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
