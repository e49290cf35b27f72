"""FLOPs per network evaluation, and what they mean on a GPU (docs/performance.md).

    python benchmarks/flops.py [--fraction 0.3,0.4] [--peak 989e12] [--nodes 25e9]

For each board size and network it prints the floating-point operations of
one forward pass (one search node), counted two ways: from the layer shapes
of ``saijax.core.networks.SaiNet`` (a multiply-add is 2 FLOPs; convolutions and
dense layers only), and by XLA's cost analysis of the compiled forward pass
(``jax.jit(...).lower(...).compile().cost_analysis()``, which also counts
batch norm and ReLU). Nothing is run: the variables and inputs are shapes.

From the shape count it derives evaluations per second at a fraction of a
GPU's dense bfloat16 peak (an H100 SXM's 989 TFLOP/s by default) and the
GPU-hours to evaluate ``--nodes`` search nodes (SAI's 9×9 run 1, about 25
billion), assuming the search runs at the network's speed
(`benchmarks/search.py`). Training is not counted: at 12×256 it adds about
a sixth (docs/performance.md).
"""

import argparse

import jax
import jax.numpy as jnp

from saijax.core import networks


def shape_flops(spec: networks.NetworkSpec) -> int:
    """FLOPs of one evaluation from the layer shapes (docs/design.md §3)."""
    n2 = spec.board_size**2
    k = spec.filters
    c_in = networks.input_planes(spec.value_head)
    net = spec.build()
    conv3 = 2 * n2 * 9 * k  # per input channel, per output channel of k
    trunk = conv3 * c_in + conv3 * k * 2 * spec.blocks
    heads = 2 * (2 * n2 * k * 2)  # policy and value 1×1 convolutions to 2 channels
    policy = 2 * (2 * n2) * (n2 + 1)
    if spec.value_head == "sai":
        value = 2 * (2 * n2) * (net.alpha_units + net.beta_units) + 2 * (net.alpha_units + net.beta_units)
    else:
        value = 2 * (2 * n2) * net.value_units + 2 * net.value_units
    return trunk + heads + policy + value


def xla_flops(spec: networks.NetworkSpec, batch: int = 64) -> float:
    """FLOPs of one evaluation by XLA's cost analysis of the jitted forward pass."""
    net = spec.build()
    n = spec.board_size
    x = jax.ShapeDtypeStruct((batch, n, n, networks.input_planes(spec.value_head)), jnp.float32)
    variables = jax.eval_shape(lambda: networks.init_network(net, jax.random.PRNGKey(0)))
    compiled = jax.jit(lambda v, x: net.apply(v, x, train=False)).lower(variables, x).compile()
    cost = compiled.cost_analysis()
    if isinstance(cost, (list, tuple)):
        cost = cost[0]
    return float(cost["flops"]) / batch


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="9,19")
    parser.add_argument("--nets", default="12x256,4x128,6x128,8x160", help="blocks x filters, comma-separated")
    parser.add_argument("--peak", type=float, default=989e12, help="dense bf16 peak, FLOP/s (H100 SXM: 989e12)")
    parser.add_argument("--fraction", default="0.3,0.4", help="fractions of the peak reached")
    parser.add_argument("--nodes", type=float, default=25e9, help="search nodes of the run (SAI 9x9 run 1: ~25e9)")
    args = parser.parse_args()
    fractions = [float(f) for f in args.fraction.split(",")]
    print(f"peak {args.peak / 1e12:,.0f} TFLOP/s; {args.nodes:.3g} nodes")
    header = " | ".join([f"evals/s @{f:.0%}" for f in fractions] + [f"GPU-h @{f:.0%}" for f in fractions])
    print(f"{'board':>5} {'net':>7} | GFLOP/eval (shapes) | GFLOP/eval (XLA) | {header}")
    for size in (int(s) for s in args.sizes.split(",")):
        for net in args.nets.split(","):
            blocks, filters = (int(v) for v in net.split("x"))
            spec = networks.NetworkSpec(size, blocks, filters)
            flops = shape_flops(spec)
            rates = [f * args.peak / flops for f in fractions]
            hours = [args.nodes / r / 3600 for r in rates]
            print(
                f"{size:>3}x{size:<2}{net:>7} | {flops / 1e9:19.3f} | {xla_flops(spec) / 1e9:16.3f} | "
                + " | ".join(f"{r:>13,.0f}" for r in rates)
                + " | "
                + " | ".join(f"{h:>10,.1f}" for h in hours)
            )


if __name__ == "__main__":
    main()
