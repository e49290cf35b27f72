"""Search throughput against the network's forward pass alone.

    python benchmarks/search.py [--size 9] [--batch 256] [--simulations 32]

For each network size (6×64 and 2×32 by default) it measures, in the same
process: the jitted forward pass on a batch of B positions (evaluations/s =
B / time), and a jitted batched search of S simulations (evaluations/s =
B·(S+1) / time, the root evaluation included). It prints both, their ratio
(the target is ≥ 0.9) and the fraction of search time spent outside the net.
"""

import argparse
import time

import jax
import jax.numpy as jnp

from saijax import go
from saijax import networks
from saijax import search


def _time(fn, *args, repeats=5):
    out = fn(*args)
    jax.block_until_ready(out)
    best = float("inf")
    for _ in range(repeats):
        t = time.perf_counter()
        out = fn(*args)
        jax.block_until_ready(out)
        best = min(best, time.perf_counter() - t)
    return best


def positions(rules, batch, moves, seed=0):
    """A batch of mid-game positions from random legal play."""
    states = jax.vmap(lambda k: go.init(rules, k))(jnp.full((batch,), 7.5))
    vstep = jax.jit(jax.vmap(lambda s, a: go.step(rules, s, a)))
    key = jax.random.PRNGKey(seed)
    for i in range(moves):
        logits = jnp.where(states.legal, 0.0, -jnp.inf).at[:, -1].set(-1e9)
        states = vstep(states, jax.random.categorical(jax.random.fold_in(key, i), logits))
    return states


def measure(rules, batch, sims, blocks, filters, states):
    net = networks.make_network(rules.size, blocks=blocks, filters=filters)
    variables = networks.init_network(net, jax.random.PRNGKey(0))
    evaluator = search.make_network_evaluator(net, rules)
    forward = jax.jit(evaluator)
    t_fwd = _time(forward, variables, states)
    cfg = search.SearchConfig(num_simulations=sims, lambda_=0.5)
    fn = search.make_search_fn(evaluator, rules, cfg)
    t_search = _time(fn, variables, jax.random.PRNGKey(1), states, repeats=3)
    fwd_rate = batch / t_fwd
    search_rate = batch * (sims + 1) / t_search
    outside = 1.0 - (sims + 1) * t_fwd / t_search
    print(
        f"{blocks}x{filters}: forward {fwd_rate:,.0f} evals/s | search {search_rate:,.0f} evals/s | "
        f"ratio {search_rate / fwd_rate:.2f} | time outside the net {max(outside, 0.0):.0%}"
    )


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--size", type=int, default=9)
    parser.add_argument("--batch", type=int, default=256)
    parser.add_argument("--simulations", type=int, default=32)
    parser.add_argument("--nets", default="6x64,2x32")
    args = parser.parse_args()
    rules = go.GoRules(args.size)
    print(f"jax {jax.__version__} on {jax.devices()[0].platform}; {args.size}x{args.size}, batch {args.batch}, "
          f"{args.simulations} simulations")
    states = positions(rules, args.batch, moves=20)
    for spec in args.nets.split(","):
        blocks, filters = (int(x) for x in spec.split("x"))
        measure(rules, args.batch, args.simulations, blocks, filters, states)


if __name__ == "__main__":
    main()
