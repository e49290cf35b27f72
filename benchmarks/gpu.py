"""The GPU lane's one benchmark command: sections written as they finish.

    python benchmarks/gpu.py --out DIR --budget_s S [--small] [size flags]
    make bench-gpu      # the same, on the GPU, with the Python that is there

Sections, in this order (docs/performance.md, "The GPU lane"):

1. ``versions``: Python, jax, jaxlib, flax, optax, mctx, pgx, the devices
   (and nvidia-smi's GPU, driver and memory line where there is one).
2. ``forward``: saijax's net alone on 9×9, {4×128, 12×256} × {1,024, 4,096}
   × {float32, bfloat16}: evaluations/s from benchmarks/selfplay.py's
   :class:`ForwardHarness` (passes inside one jitted loop), compile apart.
3. ``selfplay``: benchmarks/selfplay.py's steady-state measurement of
   configs/default.py with the net, batch, bfloat16 and the search at 32
   simulations overridden (PUCT at 4×128 @ 4,096 and 12×256 @ 1,024; Gumbel
   at 6×128 @ 1,024, the anchor's shape), each row once per tree walk
   (``--walks``, default ``path``): self-play evaluations/s, the forward pass at the same batch
   and precision, their ratio, the tree work's share, a chunk's device/host
   split, and compile seconds apart.
4. ``env``: benchmarks/go_env.py's random play, saijax against pgx's
   go_9x9, at batch 4,096.
5. ``anchor``: an AlphaZero-style self-play loop made only of pgx and mctx,
   the shape of pgx's AlphaZero example (pgx's go_9x9 env,
   ``mctx.gumbel_muzero_policy`` with the completed-by-mix-value Q
   transform, a 6×128 pre-activation ResNet written here in flax, 32
   simulations, batch 1,024, finished games reset in place): its
   evaluations/s (B · (S + 1) a move) and its own self-play/forward ratio
   from the same forward harness, beside section 3's saijax rows at the same
   shape (their evaluations/s over the anchor's).
6. ``training``: benchmarks/training.py for configs/go7_gpu.py and
   configs/default.py: training steps/s step by step, in blocks of 32
   (``training.steps_per_call``) and the steps' compute alone, and their
   ratios.

Each section is written to ``DIR/<n>_<name>.json`` and ``.md`` after every
row it measures, and ``DIR/summary.md`` joins the Markdown, so a run cut
short still leaves what it measured. Before each row the time it needs is
estimated from what this run has measured so far (compile seconds, forward
rates; priors only before anything is measured); a row or section that does
not fit the time left of ``--budget_s`` (or of its section's share,
``--caps``), or that fails, is marked skipped with the reason, and the run
goes on. ``--small`` (or the size flags) makes
every section small enough for a CPU in seconds; the tests run it so.
"""

from __future__ import annotations

import argparse
import dataclasses
import functools
import json
import os
import sys
import tempfile
import time
import traceback
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import go_env  # noqa: E402  (benchmarks/go_env.py)
import provenance  # noqa: E402  (benchmarks/provenance.py)
import selfplay as selfplay_bench  # noqa: E402  (benchmarks/selfplay.py)
import training as training_bench  # noqa: E402  (benchmarks/training.py)

from saijax.core import go, search  # noqa: E402
from saijax.learn import config as config_lib  # noqa: E402

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT_CONFIG = os.path.join(REPO, "configs", "default.py")

# Priors, used only until this run has measured the like (seconds on a GPU).
PRIOR_COMPILE_S = 10.0  # a forward pass (or a random-play scan)
CHUNK_COMPILE_FACTOR = 20.0  # a self-play chunk compiles about this many times longer than a forward pass
PRIOR_SELFPLAY_RATIO = 0.3  # self-play / forward before any is measured (issue 31: 0.32-0.72)
PRIOR_ENV_S = 40.0


def _nets(text: str) -> list[tuple[int, int]]:
    return [tuple(int(x) for x in spec.split("x")) for spec in text.split(",") if spec]


def _ints(text: str) -> list[int]:
    return [int(x) for x in text.split(",") if x]


def _selfplay_specs(text: str) -> list[tuple[int, int, int, str]]:
    """'4x128@4096,6x128@1024:gumbel' -> [(4, 128, 4096, "puct"), (6, 128, 1024, "gumbel")]:
    the net, the batch and the search algorithm (PUCT unless a ``:algorithm`` suffix names one)."""
    out = []
    for spec in text.split(","):
        if spec:
            spec, _, algorithm = spec.partition(":")
            net, batch = spec.split("@")
            blocks, filters = (int(x) for x in net.split("x"))
            out.append((blocks, filters, int(batch), algorithm or "puct"))
    return out


def _flops(blocks: int, filters: int) -> float:
    """Relative cost of an evaluation (the trunk's 3×3 convolutions)."""
    return blocks * filters * filters


def _line(e: BaseException) -> str:
    return " ".join(f"{type(e).__name__}: {e}".split())[:300]


# ---------------------------------------------------------------------------
# Output: one JSON and one Markdown file per section, rewritten as rows land.


class Lane:
    """The output folder, the budget, and what this run has measured."""

    def __init__(self, out: str, budget_s: float, caps: dict[str, float] | None = None):
        self.out = out
        self.start = time.perf_counter()
        self.budget_s = float(budget_s)
        self.caps = dict(caps or {})  # section -> its own seconds, within the budget
        self.sections: list[Section] = []
        # What estimates are made from: compile seconds and evaluations/s.
        self.forward_compile: list[float] = []
        # (blocks, filters, precision) -> the best evaluations/s over the batches.
        self.forward_rate: dict[tuple[int, int, str], float] = {}
        self.chunk_compile: list[float] = []
        self.selfplay_ratio: list[float] = []
        self.provenance = provenance.describe()  # in every section's JSON
        os.makedirs(out, exist_ok=True)

    def left(self) -> float:
        return self.budget_s - (time.perf_counter() - self.start)

    def section(self, name: str, title: str, columns: list[tuple[str, str]]) -> Section:
        section = Section(self, len(self.sections) + 1, name, title, columns)
        self.sections.append(section)
        section.write()
        return section

    def write_summary(self):
        parts = [
            "# benchmarks/gpu.py",
            "",
            f"Budget {self.budget_s:.0f} s, {time.perf_counter() - self.start:.0f} s used.",
            "",
        ]
        parts += [s.markdown() for s in self.sections]
        _write(os.path.join(self.out, "summary.md"), "\n".join(parts))

    # Estimates (seconds) from what was measured.

    def compile_estimate(self) -> float:
        return max(self.forward_compile) if self.forward_compile else PRIOR_COMPILE_S

    def rate_estimate(self, blocks: int, filters: int, precision: str) -> float | None:
        """Forward evaluations/s of a net: measured, or scaled from another
        measured net by the cost of an evaluation; None before any."""
        if (blocks, filters, precision) in self.forward_rate:
            return self.forward_rate[(blocks, filters, precision)]
        same = [k for k in self.forward_rate if k[2] == precision] or list(self.forward_rate)
        if not same:
            return None
        b, f, p = max(same, key=lambda k: _flops(k[0], k[1]))
        return self.forward_rate[(b, f, p)] * _flops(b, f) / _flops(blocks, filters)

    def forward_estimate(self, blocks, filters, batch, precision, passes, repeats) -> float:
        rate = self.rate_estimate(blocks, filters, precision)
        run = 0.0 if rate is None else (repeats + 1) * passes * batch / rate
        return self.compile_estimate() + run

    def chunk_compile_estimate(self) -> float:
        if self.chunk_compile:
            return max(self.chunk_compile)
        return CHUNK_COMPILE_FACTOR * self.compile_estimate()

    def selfplay_estimate(self, blocks, filters, batch, precision, sims, moves, chunks, timings) -> float:
        """Compile, a warm-up chunk, and the timed chunks, each round's self-play time ``timings`` times
        over: the self-play and each rate timed over as long (the forward pass; for saijax also the
        search and its tree work)."""
        rate = self.rate_estimate(blocks, filters, precision)
        ratio = float(np.median(self.selfplay_ratio)) if self.selfplay_ratio else PRIOR_SELFPLAY_RATIO
        run = 0.0
        if rate is not None:
            run = (1 + timings * chunks) * moves * batch * (sims + 1) / (rate * ratio)
        return self.chunk_compile_estimate() + self.compile_estimate() + run


def _write(path: str, text: str):
    """Writes a file whole (a run killed mid-write leaves the old one)."""
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        f.write(text)
    os.replace(tmp, path)


class Section:
    """One section: its rows, status and files."""

    def __init__(self, lane: Lane, index: int, name: str, title: str, columns: list[tuple[str, str]]):
        self.lane, self.index, self.name, self.title = lane, index, name, title
        self.columns = columns  # (key, header)
        self.rows: list[dict[str, Any]] = []
        self.status, self.reason, self.notes = "running", None, []
        self.t0 = time.perf_counter()
        self.seconds = 0.0

    @property
    def stem(self) -> str:
        return os.path.join(self.lane.out, f"{self.index}_{self.name}")

    def fits(self, estimate: float) -> str | None:
        """None if ``estimate`` seconds fit the time left (of the run's budget, and of this
        section's cap if ``--caps`` gives it one and a row of it was measured: the first row's
        estimate rests on priors), else the reason."""
        left, of = self.lane.left(), ""
        cap = self.lane.caps.get(self.name)
        if cap is not None and any("skipped" not in row for row in self.rows):
            cap_left = cap - (time.perf_counter() - self.t0)
            if cap_left < left:
                left, of = cap_left, f" of the section's {cap:.0f} s"
        if estimate <= left:
            return None
        return f"budget: needs about {estimate:.0f} s, {max(left, 0):.0f} s left{of}"

    def add(self, row: dict[str, Any]):
        self.rows.append(row)
        self.write()

    def skip_row(self, keys: dict[str, Any], reason: str):
        self.add({**keys, "skipped": reason})

    def finish(self, status: str | None = None, reason: str | None = None):
        if status is None:
            measured = [r for r in self.rows if "skipped" not in r]
            status = "done" if len(measured) == len(self.rows) else ("partial" if measured else "skipped")
            if status == "skipped" and reason is None:
                reason = f"every row skipped ({self.rows[0]['skipped']})" if self.rows else "nothing to measure"
        self.status, self.reason = status, reason
        self.write()
        print(self.markdown(), flush=True)

    def to_json(self) -> dict[str, Any]:
        return {
            "index": self.index,
            "section": self.name,
            "title": self.title,
            "status": self.status,
            "reason": self.reason,
            "seconds": time.perf_counter() - self.t0 if self.status == "running" else self.seconds,
            "budget_left_s": self.lane.left(),
            "columns": [k for k, _ in self.columns],
            "rows": self.rows,
            "notes": self.notes,
            "provenance": self.lane.provenance,
        }

    def markdown(self) -> str:
        lines = [f"## {self.index}. {self.title}", ""]
        if self.status == "skipped":
            lines += [f"*Skipped: {self.reason}*", ""]
        elif self.status != "done":
            lines += [f"*{self.status.capitalize()}{': ' + self.reason if self.reason else ''}*", ""]
        if self.rows:
            lines.append("| " + " | ".join(h for _, h in self.columns) + " |")
            lines.append("|" + "---|" * len(self.columns))
            for row in self.rows:
                cells = [_cell(row.get(k)) for k, _ in self.columns]
                if "skipped" in row:  # the reason in the first column the row has no value for
                    first = next((i for i, (k, _) in enumerate(self.columns) if k not in row), len(cells) - 1)
                    cells[first] = f"skipped: {row['skipped']}"
                lines.append("| " + " | ".join(cells) + " |")
            lines.append("")
        lines += [f"- {note}" for note in self.notes]
        if self.notes:
            lines.append("")
        return "\n".join(lines)

    def write(self):
        if self.status != "running":
            self.seconds = self.seconds or time.perf_counter() - self.t0
        _write(self.stem + ".json", json.dumps(self.to_json(), indent=2, default=_jsonable))
        _write(self.stem + ".md", self.markdown())
        self.lane.write_summary()


def _jsonable(x):
    if isinstance(x, (np.floating, np.integer)):
        return x.item()
    return str(x)


def _cell(value) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return str(value)
    if isinstance(value, (int, np.integer)):
        return f"{value:,}"
    if isinstance(value, (float, np.floating)):
        if value != value:  # nan
            return "n/a"
        if abs(value) >= 1000:
            return f"{value:,.0f}"
        if abs(value) >= 10:
            return f"{value:.1f}"
        return f"{value:.3g}" if abs(value) < 1 else f"{value:.2f}"
    return str(value).replace("|", "/")


# ---------------------------------------------------------------------------
# 1. Versions and device.


def versions(lane: Lane, args):
    section = lane.section("versions", "Versions and device", [("name", "what"), ("value", "value")])
    found = {**lane.provenance["versions"], **lane.provenance["device"]}
    if lane.provenance["saijax_commit"]:
        found["saijax commit"] = lane.provenance["saijax_commit"]
    found["budget_s"] = lane.budget_s
    if lane.caps:
        found["section caps, s"] = ", ".join(f"{k} {v:.0f}" for k, v in lane.caps.items())
    found["sizes"] = "small (--small)" if args.small else "full"
    for name, value in found.items():
        section.rows.append({"name": name, "value": value})
    section.finish("done")


# ---------------------------------------------------------------------------
# 2. The forward pass alone.


@functools.cache
def _positions(batch: int, moves: int):
    """A batch of 9×9 positions after ``moves`` random legal moves (saijax's
    go_env random play), or empty boards with ``moves`` 0: the forward pass
    costs the same on any position, and random play costs a compile."""
    if moves == 0:
        rules = go.GoRules(9)
        return jax.jit(jax.vmap(lambda k: go.init(rules, k)))(jnp.linspace(-7.5, 7.5, batch))
    run, fresh, _ = go_env.saijax_runner(9, batch, moves)
    states = run(fresh, jax.random.PRNGKey(7))
    jax.block_until_ready(states.board)
    return states


def _random_variables(init, seed: int = 0):
    """Variables of ``init()``'s shapes, drawn with numpy: the forward pass
    costs the same whatever the weights, and initialising a net through JAX
    costs a compile per shape. Batch-norm variances are 1."""
    rng = np.random.default_rng(seed)

    def draw(path, leaf):
        if getattr(path[-1], "key", None) == "var":
            return jnp.ones(leaf.shape, leaf.dtype)
        return jnp.asarray(0.05 * rng.standard_normal(leaf.shape), leaf.dtype)

    return jax.tree_util.tree_map_with_path(draw, jax.eval_shape(init))


def _saijax_forward(blocks, filters, precision, batch, passes, moves):
    from saijax.core import networks

    rules = go.GoRules(9)
    net = networks.make_network(9, blocks=blocks, filters=filters)
    variables = _random_variables(lambda: networks.init_network(net, jax.random.PRNGKey(0)))
    evaluator = search.make_network_evaluator(net, rules, precision=precision)
    return selfplay_bench.ForwardHarness(evaluator, variables, _positions(batch, moves), passes)


def forward(lane: Lane, args):
    section = lane.section(
        "forward",
        "Forward pass alone, 9×9 (evaluations/s)",
        [
            ("net", "net"),
            ("batch", "batch"),
            ("precision", "precision"),
            ("evals_per_s", "evaluations/s"),
            ("ms_per_pass", "ms a pass"),
            ("compile_s", "compile s"),
        ],
    )
    section.notes.append(
        f"{args.forward_passes} passes inside one jitted loop, the best of {args.repeats} timings; random weights."
    )
    for blocks, filters in _nets(args.forward_nets):
        for batch in _ints(args.forward_batches):
            for precision in ("float32", "bfloat16"):
                keys = {"net": f"{blocks}x{filters}", "batch": batch, "precision": precision}
                estimate = lane.forward_estimate(blocks, filters, batch, precision, args.forward_passes, args.repeats)
                reason = section.fits(estimate)
                if reason:
                    section.skip_row(keys, reason)
                    continue
                try:
                    harness = _saijax_forward(blocks, filters, precision, batch, args.forward_passes, args.moves)
                    rate = harness.rate(args.repeats)
                except Exception as e:  # noqa: BLE001 - a failed row is reported, the run goes on
                    traceback.print_exc()
                    section.skip_row(keys, "failed: " + _line(e))
                    continue
                lane.forward_compile.append(harness.compile_seconds)
                key = (blocks, filters, precision)
                lane.forward_rate[key] = max(lane.forward_rate.get(key, 0.0), rate)
                section.add(
                    {
                        **keys,
                        "evals_per_s": rate,
                        "ms_per_pass": 1e3 * batch / rate,
                        "compile_s": harness.compile_seconds,
                    }
                )
    section.finish()


# ---------------------------------------------------------------------------
# 3. Steady-state self-play (benchmarks/selfplay.py).


def selfplay_config(args, blocks, filters, batch, walk="auto", algorithm="puct"):
    """configs/default.py with the net, batch, precision and search (its ``algorithm`` and tree
    ``walk``) overridden."""
    config = config_lib.load_config(DEFAULT_CONFIG)
    config.search.walk = walk
    config.network.blocks, config.network.filters = blocks, filters
    config.schedules.network = ()
    config.schedules.visits = ()
    config.search.algorithm = algorithm
    config.search.num_simulations = args.simulations
    config.precision = args.precision
    config.selfplay.batch_size = batch
    if args.chunk_moves:
        config.selfplay.chunk_moves = args.chunk_moves
    return config


def selfplay(lane: Lane, args):
    section = lane.section(
        "selfplay",
        f"Steady-state self-play, 9×9, {args.precision}, {args.simulations} simulations (benchmarks/selfplay.py)",
        [
            ("net", "net"),
            ("batch", "batch"),
            ("algorithm", "search"),
            ("walk", "tree walk"),
            ("selfplay_evals_per_s", "self-play evaluations/s"),
            ("forward_evals_per_s", "forward pass alone"),
            ("ratio", "ratio"),
            ("ratio_spread", "ratio spread"),
            ("search_ratio", "search alone/forward"),
            ("tree_work_share", "tree work, share of the search"),
            ("device_ms_per_chunk", "chunk: device ms"),
            ("host_ms_per_chunk", "chunk: host ms"),
            ("compile_s", "compile s"),
        ],
    )
    section.notes.append(
        f"configs/default.py; {args.rounds} alternating rounds of {args.chunks} chunk(s) and "
        f"{args.forward_passes} forward passes; the ratio is the median over the rounds; compile apart."
    )
    section.notes.append(
        "tree walk (search.walk): how a simulation finds its leaf's ancestors, for superko and the backward pass: "
        "'parents' loops up the tree, 'path' uses the descent's record without a loop "
        "(saijax/core/mcts.py); same games."
    )
    specs = [(b, f, n, a, w) for b, f, n, a in _selfplay_specs(args.selfplay) for w in args.walks.split(",")]
    row_seconds = []  # wall time of each measured row, compile included
    for blocks, filters, batch, algorithm, walk in specs:
        keys = {"net": f"{blocks}x{filters}", "batch": batch, "algorithm": algorithm, "walk": walk}
        config = selfplay_config(args, blocks, filters, batch, walk, algorithm)
        moves = config.selfplay.chunk_moves
        estimate = lane.selfplay_estimate(
            blocks,
            filters,
            batch,
            args.precision,
            args.simulations,
            moves,
            args.rounds * args.chunks,
            4,  # self-play, the forward pass, the search alone, its tree work (benchmarks/selfplay.measure)
        )
        # A row also compiles the search alone and its replay: no shorter than the rows so far.
        estimate = max([estimate, *row_seconds])
        reason = section.fits(estimate)
        if reason:
            section.skip_row(keys, reason)
            continue
        t = time.perf_counter()
        try:
            bench = selfplay_bench.build(config)
            compiled = selfplay_bench.compile_chunk(bench)
            lane.chunk_compile.append(compiled["compile_seconds"])
            result = selfplay_bench.measure(
                bench, rounds=args.rounds, chunks=args.chunks, forward_passes=args.forward_passes, log=lambda *a: None
            )
        except Exception as e:  # noqa: BLE001
            traceback.print_exc()
            section.skip_row(keys, "failed: " + _line(e))
            continue
        row_seconds.append(time.perf_counter() - t)
        lane.selfplay_ratio.append(result["ratio"])
        section.notes.append(f"{keys['net']} @ {batch}, {algorithm}: {bench.describe()}")
        section.add(
            {
                **keys,
                "selfplay_evals_per_s": result["selfplay_evals_per_s"],
                "forward_evals_per_s": result["forward_evals_per_s"],
                "ratio": result["ratio"],
                "ratio_spread": f"{result['ratio_min']:.2f}-{result['ratio_max']:.2f}",
                "search_ratio": result["search_evals_per_s"] / result["forward_evals_per_s"],
                "tree_work_share": result["tree_work_share"],
                "device_ms_per_chunk": 1e3 * result["device_seconds_per_chunk"],
                "host_ms_per_chunk": 1e3 * result["host_seconds_per_chunk"],
                "compile_s": compiled["compile_seconds"],
                "detail": {k: v for k, v in result.items() if k != "per_round"},
                "per_round": result["per_round"],
            }
        )
    section.finish()


def _saijax_at(lane: Lane, net: str, batch: int, algorithm: str) -> list[dict[str, Any]]:
    """Section 3's measured rows of this net, batch and search algorithm."""
    return [
        row
        for section in lane.sections
        if section.name == "selfplay"
        for row in section.rows
        if "skipped" not in row and (row["net"], row["batch"], row["algorithm"]) == (net, batch, algorithm)
    ]


# ---------------------------------------------------------------------------
# 4. The env against pgx.


def env(lane: Lane, args):
    section = lane.section(
        "env",
        f"Go env, random play on 9×9 at batch {args.env_batch} (benchmarks/go_env.py)",
        [("env", "env"), ("steps_per_s", "steps/s"), ("seconds", "seconds, compile included")],
    )
    # saijax's random-play scan compiles like a forward pass; pgx's about as long.
    estimate = 2 * lane.compile_estimate() if lane.forward_compile else PRIOR_ENV_S
    runners = [("saijax", go_env.saijax_runner), ("pgx go_9x9", go_env.pgx_runner)]
    for name, runner in runners:
        reason = section.fits(estimate / 2)
        if reason:
            section.skip_row({"env": name}, reason)
            continue
        t = time.perf_counter()
        try:
            rate = go_env.measure(
                runner(9, args.env_batch, args.env_steps), args.env_batch, args.env_steps, args.repeats
            )
        except Exception as e:  # noqa: BLE001 - e.g. pgx not installed
            traceback.print_exc()
            section.skip_row({"env": name}, "failed: " + _line(e))
            continue
        section.add({"env": name, "steps_per_s": rate, "seconds": time.perf_counter() - t})
    rates = [r["steps_per_s"] for r in section.rows if "steps_per_s" in r]
    if len(rates) == 2:
        section.notes.append(f"saijax / pgx: {rates[0] / rates[1]:.2f}x")
    section.finish()


# ---------------------------------------------------------------------------
# 5. The pgx + mctx anchor.


def _az_net(actions: int, blocks: int, filters: int, dtype):
    """A small AlphaZero net in flax, the shape of pgx's AlphaZero example:
    a 3×3 stem, pre-activation residual blocks (BN, ReLU, conv, twice),
    BN + ReLU, a policy head (1×1 conv to 2 channels, BN, ReLU, dense) and
    a value head (1×1 conv to 1 channel, BN, ReLU, dense to ``filters``,
    ReLU, dense to 1, tanh). Evaluation mode (running statistics)."""
    import flax.linen as nn

    def bn():
        return nn.BatchNorm(use_running_average=True, momentum=0.9, dtype=dtype)

    class Block(nn.Module):
        @nn.compact
        def __call__(self, x):
            y = nn.Conv(filters, (3, 3), dtype=dtype)(nn.relu(bn()(x)))
            y = nn.Conv(filters, (3, 3), dtype=dtype)(nn.relu(bn()(y)))
            return x + y

    class AZNet(nn.Module):
        @nn.compact
        def __call__(self, x):
            x = nn.Conv(filters, (3, 3), dtype=dtype)(x.astype(jnp.float32))
            for _ in range(blocks):
                x = Block()(x)
            x = nn.relu(bn()(x))
            b = x.shape[0]
            p = nn.relu(bn()(nn.Conv(2, (1, 1), dtype=dtype)(x)))
            logits = nn.Dense(actions)(p.reshape(b, -1))
            v = nn.relu(bn()(nn.Conv(1, (1, 1), dtype=dtype)(x)))
            v = nn.relu(nn.Dense(filters, dtype=dtype)(v.reshape(b, -1)))
            v = jnp.tanh(nn.Dense(1)(v))
            return logits.astype(jnp.float32), v.reshape(-1).astype(jnp.float32)

    return AZNet()


@dataclasses.dataclass
class Anchor:
    """pgx + mctx self-play, chunked like saijax's (``moves`` moves a jitted call)."""

    env: Any
    evaluate: Any  # (variables, pgx state) -> (logits, value)
    variables: Any
    chunk: Any  # jitted (variables, state, key) -> (state, records)
    state: Any
    batch: int
    simulations: int
    moves: int


def make_anchor(batch: int, blocks: int, filters: int, simulations: int, moves: int, precision: str) -> Anchor:
    import mctx
    import pgx
    from pgx.experimental import auto_reset

    env = pgx.make("go_9x9")
    dtype = None if precision == "float32" else jnp.bfloat16
    net = _az_net(env.num_actions, blocks, filters, dtype)
    fresh = jax.jit(jax.vmap(env.init))(jax.random.split(jax.random.PRNGKey(0), batch))
    variables = _random_variables(lambda: net.init(jax.random.PRNGKey(1), fresh.observation[:1]))

    def evaluate(variables, state):
        return net.apply(variables, state.observation)

    def recurrent_fn(variables, key, action, state):
        del key
        player = state.current_player
        state = jax.vmap(env.step)(state, action)
        logits, value = evaluate(variables, state)
        logits = logits - jnp.max(logits, axis=-1, keepdims=True)
        logits = jnp.where(state.legal_action_mask, logits, jnp.finfo(logits.dtype).min)
        reward = state.rewards[jnp.arange(state.rewards.shape[0]), player]
        value = jnp.where(state.terminated, 0.0, value)
        discount = jnp.where(state.terminated, 0.0, -jnp.ones_like(value))
        return mctx.RecurrentFnOutput(reward=reward, discount=discount, prior_logits=logits, value=value), state

    def one_move(variables, state, key):
        k_search, k_reset = jax.random.split(key)
        logits, value = evaluate(variables, state)
        root = mctx.RootFnOutput(prior_logits=logits, value=value, embedding=state)
        out = mctx.gumbel_muzero_policy(
            params=variables,
            rng_key=k_search,
            root=root,
            recurrent_fn=recurrent_fn,
            num_simulations=simulations,
            invalid_actions=~state.legal_action_mask,
            qtransform=mctx.qtransform_completed_by_mix_value,
            gumbel_scale=1.0,
        )
        actor = state.current_player
        observation = state.observation
        state = jax.vmap(auto_reset(env.step, env.init))(state, out.action, jax.random.split(k_reset, batch))
        record = {
            "observation": observation,
            "action_weights": out.action_weights,
            "reward": state.rewards[jnp.arange(batch), actor],
            "terminated": state.terminated,
        }
        return state, record

    @jax.jit
    def chunk(variables, state, key):
        return jax.lax.scan(lambda s, k: one_move(variables, s, k), state, jax.random.split(key, moves))

    return Anchor(env, evaluate, variables, chunk, fresh, batch, simulations, moves)


def anchor(lane: Lane, args):
    blocks, filters = _nets(args.anchor_net)[0]
    batch, sims, moves = args.anchor_batch, args.anchor_simulations, args.anchor_moves
    section = lane.section(
        "anchor",
        f"pgx + mctx AlphaZero-style self-play: go_9x9, Gumbel MuZero, {blocks}x{filters} ResNet, "
        f"{sims} simulations, batch {batch}, {args.anchor_precision}",
        [
            ("what", "measured"),
            ("evals_per_s", "evaluations/s"),
            ("ratio", "self-play / forward"),
            ("ratio_spread", "ratio spread"),
            ("compile_s", "compile s"),
            ("saijax_over_anchor", "saijax / anchor"),
        ],
    )
    estimate = lane.selfplay_estimate(
        blocks,
        filters,
        batch,
        args.anchor_precision,
        sims,
        moves,
        args.rounds * args.chunks,
        2,  # self-play and the forward pass
    )
    reason = section.fits(estimate)
    if reason:
        section.finish("skipped", reason)
        return
    try:
        az = make_anchor(batch, blocks, filters, sims, moves, args.anchor_precision)
        key = jax.random.PRNGKey(2)
        t = time.perf_counter()
        az.chunk.lower(az.variables, az.state, key).compile()
        compile_s = time.perf_counter() - t
        state, records = az.chunk(az.variables, az.state, key)  # warm-up
        jax.device_get(records)
        harness = selfplay_bench.ForwardHarness(az.evaluate, az.variables, state, args.forward_passes)
        rows, i = [], 0
        for _ in range(args.rounds):
            t = time.perf_counter()
            for _ in range(args.chunks):
                i += 1
                state, records = az.chunk(az.variables, state, jax.random.fold_in(key, i))
                jax.device_get(records)  # pgx's example takes its samples to the host
            sp = time.perf_counter() - t
            # As benchmarks/selfplay.measure times saijax's ceiling: over as long as the round's self-play.
            fwd = harness.time(sp)[0]
            evals = args.chunks * moves * batch * (sims + 1)
            rows.append((evals / sp, batch / fwd))
    except Exception as e:  # noqa: BLE001 - e.g. pgx or mctx not installed
        traceback.print_exc()
        section.finish("skipped", "failed: " + _line(e))
        return
    ratios = np.array([s / f for s, f in rows])
    sp_rate = float(np.median([s for s, _ in rows]))
    fwd_rate = float(np.median([f for _, f in rows]))
    spread = f"{ratios.min():.2f}-{ratios.max():.2f}"
    section.add(
        {
            "what": "self-play",
            "evals_per_s": sp_rate,
            "ratio": float(np.median(ratios)),
            "ratio_spread": spread,
            "compile_s": compile_s,
        }
    )
    section.add({"what": "forward pass alone", "evals_per_s": fwd_rate, "compile_s": harness.compile_seconds})
    for row in _saijax_at(lane, f"{blocks}x{filters}", batch, "gumbel"):
        section.add(
            {
                "what": f"saijax at this shape (section 3: Gumbel, walk {row['walk']}, {args.precision})",
                "evals_per_s": row["selfplay_evals_per_s"],
                "ratio": row["ratio"],
                "ratio_spread": row["ratio_spread"],
                "compile_s": row["compile_s"],
                "saijax_over_anchor": row["selfplay_evals_per_s"] / sp_rate,
            }
        )
    section.notes.append(
        f"{args.rounds} alternating rounds of {args.chunks} chunk(s) of {moves} moves (records to the host after "
        f"each) and loops of {args.forward_passes} forward passes (the same harness as section 2) timed over as long "
        "as the round's self-play, as saijax's rows in section 3; evaluations B x (S + 1) a move."
    )
    section.finish()


# ---------------------------------------------------------------------------


# ---------------------------------------------------------------------------
# 6. Training: step by step, in blocks, and the compute alone.


def training_config(args, name: str):
    """configs/<name>.py (with --small: a 1×8 net at batch 16)."""
    config = config_lib.load_config(os.path.join(REPO, "configs", f"{name}.py"))
    if args.small:
        config.network.blocks, config.network.filters = 1, 8
        config.schedules.network = ()
        config.training.batch_size = 16
    return config


def train(lane: Lane, args):
    section = lane.section(
        "training",
        f"Training steps, step by step and in blocks of {args.training_block}, against their compute alone "
        "(benchmarks/training.py)",
        [
            ("config", "config"),
            ("net", "net"),
            ("batch", "batch"),
            ("step_by_step", "step by step, steps/s"),
            ("blocks", "blocks, steps/s"),
            ("compute", "compute alone, steps/s"),
            ("step_by_step_over_compute", "step by step / compute"),
            ("blocks_over_compute", "blocks / compute"),
            ("compile_s", "compile s"),
        ],
    )
    section.notes.append(
        f"{args.training_rounds} alternating rounds of {args.training_steps} steps each way on a window of "
        f"{args.training_rows:,} random rows; medians over the rounds; compile apart."
    )
    for name in args.training_configs.split(","):
        config = training_config(args, name)
        spec = config_lib.network_shape(config, 0)
        keys = {"config": name, "net": f"{spec[0]}x{spec[1]}", "batch": int(config.training.batch_size)}
        # Three programs to compile (a train step's compile is about 3 forward passes'), then the rounds.
        reason = section.fits(9 * lane.compile_estimate() + 10)
        if reason:
            section.skip_row(keys, reason)
            continue
        try:
            with tempfile.TemporaryDirectory(prefix="gpu_training_") as work:
                bench = training_bench.build(config, args.training_rows, work)
                result = training_bench.measure(
                    bench, steps=args.training_steps, rounds=args.training_rounds, block=args.training_block
                )
        except Exception as e:  # noqa: BLE001
            traceback.print_exc()
            section.skip_row(keys, "failed: " + _line(e))
            continue
        section.add(
            {
                **keys,
                **result["steps_per_second"],
                "step_by_step_over_compute": result["step_by_step_over_compute"],
                "blocks_over_compute": result["blocks_over_compute"],
                "compile_s": sum(result["compile_seconds"].values()),
                "detail": result,
            }
        )
    section.finish()


SECTIONS = {
    "versions": versions,
    "forward": forward,
    "selfplay": selfplay,
    "env": env,
    "anchor": anchor,
    "training": train,
}

# Sizes: (the GPU run's, --small's). --small runs every section on a CPU in seconds.
SIZES = dict(
    forward_nets=("4x128,12x256", "1x8,2x16"),
    forward_batches=("1024,4096", "8,16"),
    forward_passes=(10, 8),
    moves=(20, 0),  # random moves before the forward pass's positions (0: empty boards)
    # 6x128@1024:gumbel is the anchor's shape (section 5), for saijax beside it.
    selfplay=("4x128@4096,6x128@1024:gumbel,12x256@1024", "1x8@8,1x8@8:gumbel"),
    simulations=(32, 4),
    chunk_moves=(0, 4),  # 0: the config's (16)
    rounds=(3, 1),
    chunks=(1, 1),
    env_batch=(4096, 16),
    env_steps=(64, 8),
    anchor_net=("6x128", "1x8"),
    anchor_batch=(1024, 8),
    anchor_simulations=(32, 4),
    anchor_moves=(16, 2),
    repeats=(3, 3),
    training_configs=("go7_gpu,default", "go7_gpu"),
    training_steps=(128, 4),
    training_block=(32, 2),
    training_rounds=(3, 1),
    training_rows=(65536, 1024),
)


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", required=True, help="folder for the section files (created)")
    parser.add_argument("--budget_s", type=float, required=True, help="seconds for the whole run, compile included")
    parser.add_argument("--small", action="store_true", help="every size small: a CPU run in seconds (the tests)")
    parser.add_argument("--sections", default=",".join(SECTIONS), help="comma-separated, in the fixed order")
    parser.add_argument("--precision", default="bfloat16", help="self-play's network precision")
    parser.add_argument("--anchor_precision", default="float32", help="the anchor net's (pgx's example: float32)")
    parser.add_argument(
        "--walks",
        default="path",
        help="self-play's search.walk values, a row each (default: the GPU's walk; 'path,parents' measures "
        "both, as benchmarks/results/2026-11-28-h200 did: path +10.7%%)",
    )
    parser.add_argument(
        "--caps",
        default="",
        help="seconds a section may take at most, within --budget_s, so that later sections keep time: "
        "e.g. 'selfplay=240,training=60' (default: none)",
    )
    for name, (full, small) in SIZES.items():
        parser.add_argument(
            f"--{name}", type=type(full), default=None, help=f"default {full!r} ({small!r} with --small)"
        )
    args = parser.parse_args(argv)
    for name, sizes in SIZES.items():
        if getattr(args, name) is None:
            setattr(args, name, sizes[args.small])
    bad = [w for w in args.walks.split(",") if w not in search.WALKS]
    if bad:
        parser.error(f"--walks: unknown {bad}; known: {', '.join(search.WALKS)}")
    unknown = set(args.sections.split(",")) - set(SECTIONS)
    if unknown:
        parser.error(f"unknown sections {sorted(unknown)}; known: {', '.join(SECTIONS)}")
    args.caps = _caps(parser, args.caps)
    return args


def _caps(parser, text: str) -> dict[str, float]:
    """'selfplay=240,training=60' -> {"selfplay": 240.0, "training": 60.0}; a bad entry is a usage error."""
    caps = {}
    for item in filter(None, text.split(",")):
        name, sep, seconds = item.partition("=")
        if not sep or name not in SECTIONS:
            parser.error(f"--caps: {item!r} is not SECTION=SECONDS with a section of {', '.join(SECTIONS)}")
        try:
            caps[name] = float(seconds)
        except ValueError:
            parser.error(f"--caps: {item!r}: {seconds!r} is not a number of seconds")
    return caps


def main(argv=None):
    args = parse_args(argv)
    lane = Lane(args.out, args.budget_s, args.caps)
    wanted = args.sections.split(",")
    for name, fn in SECTIONS.items():
        if name not in wanted:
            continue
        try:
            fn(lane, args)
        except Exception as e:  # noqa: BLE001 - the next section still runs
            traceback.print_exc()
            section = lane.sections[-1] if lane.sections and lane.sections[-1].name == name else None
            if section is None:
                section = lane.section(name, name, [("what", "what")])
            section.finish("skipped", "failed: " + _line(e))
    lane.write_summary()
    print(f"wrote {len(lane.sections)} sections to {args.out} in {time.perf_counter() - lane.start:.0f} s", flush=True)


if __name__ == "__main__":
    main()
