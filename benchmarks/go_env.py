"""Go environment throughput: saijax vs pgx, random legal play on 9×9.

    python benchmarks/go_env.py [--batch 1024] [--steps 64] [--size 9]

Both envs run the same loop in the same process: a jitted ``lax.scan`` of
``steps`` moves over a vmapped batch, each move sampled uniformly from the
legal mask, finished games reset in place from a precomputed fresh batch. Prints steps/s for each and the
ratio saijax / pgx.
"""

import argparse
import time

import jax
import jax.numpy as jnp

from saijax.core import go


def _sample(key, legal):
    return jax.random.categorical(key, jnp.where(legal, 0.0, -jnp.inf), axis=-1)


def _random_play(vstep, legal_of, fresh, steps):
    """A jitted scan of ``steps`` uniformly random legal moves; finished games
    restart from ``fresh``. Identical for both environments."""

    def body(state, key):
        state = vstep(state, _sample(key, legal_of(state)))
        done = state.terminated
        state = jax.tree_util.tree_map(
            lambda f, s: jnp.where(done.reshape((-1,) + (1,) * (s.ndim - 1)), f, s), fresh, state
        )
        return state, None

    @jax.jit
    def run(state, key):
        return jax.lax.scan(body, state, jax.random.split(key, steps))[0]

    return run


def saijax_runner(size, batch, steps):
    rules = go.GoRules(size)
    fresh = jax.vmap(lambda k: go.init(rules, k))(jnp.full((batch,), 7.5))
    vstep = jax.vmap(lambda s, a: go.step(rules, s, a))
    return _random_play(vstep, lambda s: s.legal, fresh, steps), fresh, lambda s: s.board


def pgx_runner(size, batch, steps):
    import pgx

    env = pgx.make(f"go_{size}x{size}")
    fresh = jax.jit(jax.vmap(env.init))(jax.random.split(jax.random.PRNGKey(0), batch))
    run = _random_play(jax.vmap(env.step), lambda s: s.legal_action_mask, fresh, steps)
    return run, fresh, lambda s: s.legal_action_mask


def measure(runner, batch, steps, repeats):
    run, state, leaf = runner
    key = jax.random.PRNGKey(1)
    state = run(state, key)  # compile
    jax.block_until_ready(leaf(state))
    best = float("inf")
    for i in range(repeats):
        t = time.perf_counter()
        state = run(state, jax.random.fold_in(key, i))
        jax.block_until_ready(leaf(state))
        best = min(best, time.perf_counter() - t)
    return batch * steps / best


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--size", type=int, default=9)
    parser.add_argument("--batch", type=int, default=1024)
    parser.add_argument("--steps", type=int, default=64)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    print(f"jax {jax.__version__} on {jax.devices()[0].platform}, {args.size}x{args.size}, batch {args.batch}")
    ours = measure(saijax_runner(args.size, args.batch, args.steps), args.batch, args.steps, args.repeats)
    print(f"saijax: {ours:,.0f} steps/s")
    try:
        ref = measure(pgx_runner(args.size, args.batch, args.steps), args.batch, args.steps, args.repeats)
    except ImportError:
        print("pgx is not installed (pip install pgx); no reference")
        return
    print(f"pgx:    {ref:,.0f} steps/s")
    print(f"ratio saijax/pgx: {ours / ref:.2f}x")


if __name__ == "__main__":
    main()
