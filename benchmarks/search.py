"""Search throughput against the network's forward pass alone.

    python benchmarks/search.py [--size 9] [--batch 256] [--simulations 32]

For each network size (6×64 and 2×32 by default) it measures, in the same
process: the jitted forward pass on a batch of B positions (evaluations/s =
B / time), and a jitted batched search of S simulations (evaluations/s =
B·(S+1) / time, the root evaluation included). It prints both, their ratio
(the target is ≥ 0.9) and the fraction of search time spent outside the net.

The two are timed in alternating rounds (the forward pass as the best of a
few calls, then one search), and the ratio is the median over the rounds, so
a slow spell of the machine hits both sides of a round alike; the spread
(min–max over rounds) is printed with it. Each is timed twice: by the wall
clock, and by the CPU time of this process (all its threads). On a machine
shared with other work the CPU-time ratio is the steadier of the two, since
time spent waiting for a core is not counted; on an idle machine the wall
ratio is the one that matters.

It also prints the search tree's memory per node on 9×9 and 19×19: the bytes
of the per-node embeddings (what the tree stores of each position), and of
the whole tree (with mctx's per-child arrays), computed from the tree's array
shapes (``jax.eval_shape``, nothing is run).
"""

import argparse
import time

import jax
import jax.numpy as jnp
import numpy as np

from saijax.core import go, networks, search


def _time(fn, *args, repeats=5):
    """(wall seconds, CPU seconds) of a call, each the best of ``repeats``."""
    out = fn(*args)
    jax.block_until_ready(out)
    wall = cpu = float("inf")
    for _ in range(repeats):
        t, c = time.perf_counter(), time.process_time()
        out = fn(*args)
        jax.block_until_ready(out)
        wall, cpu = min(wall, time.perf_counter() - t), min(cpu, time.process_time() - c)
    return wall, cpu


def positions(rules, batch, moves, seed=0):
    """A batch of mid-game positions from random legal play."""
    states = jax.vmap(lambda k: go.init(rules, k))(jnp.full((batch,), 7.5))
    vstep = jax.jit(jax.vmap(lambda s, a: go.step(rules, s, a)))
    key = jax.random.PRNGKey(seed)
    for i in range(moves):
        logits = jnp.where(states.legal, 0.0, -jnp.inf).at[:, -1].set(-1e9)
        states = vstep(states, jax.random.categorical(jax.random.fold_in(key, i), logits))
    return states


def measure(rules, batch, sims, blocks, filters, states, rounds):
    net = networks.make_network(rules.size, blocks=blocks, filters=filters)
    variables = networks.init_network(net, jax.random.PRNGKey(0))
    evaluator = search.make_network_evaluator(net, rules)
    forward = jax.jit(evaluator)
    cfg = search.SearchConfig(num_simulations=sims)
    agent = search.Agent(lambda_=0.5).params()
    fn = search.make_search_fn(evaluator, rules, cfg)
    key = jax.random.PRNGKey(1)
    jax.block_until_ready(fn(variables, key, states, agent))  # compile
    t_fwds, t_searches = [], []
    for _ in range(rounds):
        t_fwds.append(_time(forward, variables, states, repeats=5))
        t_searches.append(_time(fn, variables, key, states, agent, repeats=1))
    t_fwds, t_searches = np.array(t_fwds), np.array(t_searches)  # [rounds, (wall, cpu)]
    ratios = (sims + 1) * t_fwds / t_searches
    ratio, cpu_ratio = np.median(ratios, axis=0)
    fwd_rate = batch / float(np.median(t_fwds[:, 0]))
    search_rate = batch * (sims + 1) / float(np.median(t_searches[:, 0]))
    print(
        f"{blocks}x{filters}: forward {fwd_rate:,.0f} evals/s | search {search_rate:,.0f} evals/s | "
        f"ratio {ratio:.2f} (rounds: {ratios[:, 0].min():.2f}-{ratios[:, 0].max():.2f}) | "
        f"CPU-time ratio {cpu_ratio:.2f} (rounds: {ratios[:, 1].min():.2f}-{ratios[:, 1].max():.2f}) | "
        f"CPU time outside the net {max(1.0 - cpu_ratio, 0.0):.0%}"
    )


def tree_bytes_per_node(size, batch=2, sims=8):
    """(embedding bytes, whole-tree bytes) per node of a search on a size×size board."""
    rules = go.GoRules(size)
    net = networks.make_network(size, blocks=1, filters=8)
    variables = jax.eval_shape(lambda: networks.init_network(net, jax.random.PRNGKey(0)))
    states = jax.eval_shape(lambda: jax.vmap(lambda k: go.init(rules, k))(jnp.full((batch,), 7.5)))
    fn = search.make_search_fn(
        search.make_network_evaluator(net, rules), rules, search.SearchConfig(num_simulations=sims), return_tree=True
    )
    _, tree = jax.eval_shape(fn, variables, jax.random.PRNGKey(0), states)
    nodes = batch * (sims + 1)

    def nbytes(x):
        return sum(a.size * a.dtype.itemsize for a in jax.tree_util.tree_leaves(x))

    whole = nbytes(tree) - nbytes((tree.root_invalid_actions, tree.extra_data))
    return nbytes(tree.embeddings) / nodes, whole / nodes


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--size", type=int, default=9)
    parser.add_argument("--batch", type=int, default=256)
    parser.add_argument("--simulations", type=int, default=32)
    parser.add_argument("--nets", default="6x64,2x32")
    parser.add_argument("--rounds", type=int, default=7, help="alternating forward/search timing rounds")
    args = parser.parse_args()
    rules = go.GoRules(args.size)
    print(
        f"jax {jax.__version__} on {jax.devices()[0].platform}; {args.size}x{args.size}, batch {args.batch}, "
        f"{args.simulations} simulations"
    )
    for size in (9, 19):
        embedding, whole = tree_bytes_per_node(size)
        print(f"tree memory on {size}x{size}: embeddings {embedding:,.0f} B/node, whole tree {whole:,.0f} B/node")
    states = positions(rules, args.batch, moves=20)
    for spec in args.nets.split(","):
        blocks, filters = (int(x) for x in spec.split("x"))
        measure(rules, args.batch, args.simulations, blocks, filters, states, args.rounds)


if __name__ == "__main__":
    main()
