"""Steady-state self-play of a config against its net's forward pass alone.

    python benchmarks/selfplay.py --config=configs/go7.py [--config.<field>=<value> ...]
        [--rounds 3] [--chunks 4] [--forward_passes 20] [--generation 0] [--json PATH]

It builds what the pipeline builds for self-play at ``--generation``, with
the run's own setup (``saijax.learn.run_setup.setup``: the network of the config's
schedule, initialised as generation 0 is, its evaluator at
``config.precision``, the search and self-play settings, the generation's
keys; ``saijax.learn.run_selfplay``: the chunk function, fresh slots, and a
``GameCollector``), compiles the self-play chunk (timed apart, like the
forward pass's compilation), plays one warm-up chunk, and then alternates
``--rounds`` rounds of

* self-play: ``--chunks`` chunks through the pipeline's own loop
  (``pipeline.play_chunks``: each chunk dispatched before the previous
  one's records are collected on the host, by ``GameCollector.add_chunk``);
  evaluations are counted as the pipeline counts ``selfplay_evaluations``
  (a full search S + 1 per slot and move, a playout-capped one its own
  simulations + 1);
* the forward pass alone: the same evaluator at the same precision, on the
  self-play batch of device-resident positions (the slots' games),
  ``--forward_passes`` passes inside one jitted loop (:class:`ForwardHarness`:
  as inside a search, no pass pays a dispatch), the loop run again and again
  for as long as the round's self-play took; evaluations/s = B / time per pass;
* the search alone (:class:`SearchHarness`), timed the same way, and the
  same search's tree work alone (selection, the Go step and superko check
  of each simulation, terminal scoring, the backward pass), not the
  network: the same searches on the same trees, with the network's outputs
  looked up in a table made beforehand (``SearchHarness(replay=True)``:
  keyed on a hash of all the network reads, and each new table's replay
  checked against the real searches, visit counts and policies element by
  element, before it is timed). Both search the positions the slots were
  at when the round began, so that they cost what self-play's searches
  cost then;
* self-play around the search: the same chunks with a search that costs
  nothing (:func:`free_search`, :class:`OutsideHarness`) from the same
  state, as a share of the round's self-play time: move choice, board
  steps, branches, refills and records.

Every rate of a round (self-play, the forward pass, the search, its tree
work) averages over the same length of time, the round's self-play wall: a
best-of-3 timing of a 0.1-second forward loop against one 10-second
self-play timing would set the ceiling on the machine's fastest moment and
the self-play on its average. (Self-play around the search is not a rate
but a share: the same number of chunks, timed once.) The
ratio self-play / forward is the median over the rounds, so a slow
spell of a shared machine hits both sides of a round alike; the spread is
printed with it, and the CPU-time ratio (this process's threads only), which
on a shared machine is the steadier of the two. The forward pass is the
ceiling: a median ratio above 1 means this benchmark is wrong. A chunk's time is
broken down into the host waiting for the device (what host work did not
hide) and host collection (which runs while the device plays the next
chunk); writing the rows and SGFs, which the pipeline does once a
generation on a thread while training runs, is timed after each round and
reported apart, outside the ratio.

With ``--check_pipeline=N`` a real N-generation run of the config
(:func:`pipeline_check`) goes first, and the rounds then play the net that
played its last generation, whose ``selfplay_evaluations /
selfplay_seconds`` the benchmark's self-play rate is compared with.

The last line is ``selfplay/forward ratio R``. ``benchmarks/gpu.py`` calls
:func:`build`, :func:`compile_chunk`, :func:`measure` and
:class:`ForwardHarness` for its self-play, forward-pass and pgx + mctx sections.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import os
import sys
import tempfile
import time
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from saijax.core import checkpoints, go, networks, search
from saijax.learn import config as config_lib
from saijax.learn import pipeline, replay, run_selfplay, run_setup, selfplay, training


@dataclasses.dataclass
class Bench:
    """What the pipeline builds for one generation's self-play, and its state."""

    config: Any
    generation: int
    rules: go.GoRules
    spec: networks.NetworkSpec
    evaluator: search.Evaluator
    variables: Any
    search_config: search.SearchConfig
    selfplay_config: selfplay.SelfPlayConfig
    chunk: Any  # the jitted chunk function
    collector: selfplay.GameCollector
    sp_state: selfplay.SelfPlayState
    alpha0: float
    beta0: float
    keys: run_setup.GenerationKeys  # the generation's, as the pipeline draws them
    selfplay: run_setup.SelfPlaySettings  # the agent and records of the run's self-play
    chunks_run: int = 0
    rows: list = dataclasses.field(default_factory=list)
    games: list = dataclasses.field(default_factory=list)

    def chunk_args(self):
        """The next chunk's arguments, keyed as the pipeline keys its chunks."""
        key = self.keys.chunk(self.chunks_run)
        return self.variables, self.sp_state, key, jnp.float32(self.alpha0), jnp.float32(self.beta0)

    def describe(self) -> str:
        s, sp = self.search_config, self.selfplay_config
        caps = ""
        if sp.fast_simulations > 0 and sp.full_search_prob < 1:
            fast = min(sp.fast_simulations, s.num_simulations)
            caps = f" (playout caps: {fast} on {1 - sp.full_search_prob:.0%} of the moves)"
        n = self.rules.size
        return (
            f"{n}x{n} {self.spec.blocks}x{self.spec.filters} {self.spec.value_head} net, {self.config.precision}, "
            f"{s.algorithm} {s.num_simulations} simulations{caps}, batch {sp.batch_size}, "
            f"{sp.chunk_moves} moves per chunk"
        )


def chunk_fn(bench: Bench, run_search=None):
    """The chunk function the pipeline builds for the bench's settings
    (``run_selfplay.make_chunk_fn``; with another search: :class:`OutsideHarness`)."""
    settings = dataclasses.replace(bench.selfplay, config=bench.selfplay_config)
    return run_selfplay.make_chunk_fn(
        settings, bench.rules, bench.evaluator, bench.search_config, run_search=run_search
    )


def build(config, generation: int = 0, variables=None) -> Bench:
    """The pipeline's self-play at ``generation``, on a fresh generation-0 net
    (or on ``variables``, a net of that shape: :func:`pipeline_check`'s).

    As ``pipeline.train_and_evaluate`` builds it (``run_setup.setup``): the
    rules (style, move cap), the network of the schedule at ``generation``
    initialised with the run's generation-0 key (random weights, as at
    generation 0), its evaluator at ``config.precision``, the chunk function
    for the generation's simulations, fresh slots sharded over the self-play
    mesh at the net's empty-board α_∅, β_∅, and a collector.
    """
    config_lib.validate(config)
    run = run_setup.setup(config)
    built = run.build(run.settings.network_spec(generation))
    if variables is None:
        variables = run.init_variables(built.net)
    variables = training.replicate(variables, run.mesh)
    alpha0, beta0, _ = run_setup.empty_board_eval(built.evaluator, variables, run.rules)
    keys = run.keys.generation(generation)
    bench = Bench(
        config=config,
        generation=generation,
        rules=run.rules,
        spec=built.spec,
        evaluator=built.evaluator,
        variables=variables,
        search_config=run.settings.search_config(generation),
        selfplay_config=run.settings.selfplay.config,
        chunk=None,
        collector=selfplay.GameCollector(run.rules, opponent_policy=run.settings.selfplay.opponent_policy),
        sp_state=run_selfplay.new_slots(run, keys, alpha0, beta0),
        alpha0=alpha0,
        beta0=beta0,
        keys=keys,
        selfplay=run.settings.selfplay,
    )
    bench.chunk = chunk_fn(bench)
    return bench


def evaluations(bench: Bench, chunks: int, full_moves: int) -> int:
    """Self-play evaluations of ``chunks`` chunks with ``full_moves`` fully
    searched moves, counted as the pipeline counts ``selfplay_evaluations``
    (``pipeline.selfplay_evaluations``)."""
    return pipeline.selfplay_evaluations(bench.selfplay_config, bench.search_config.num_simulations, chunks, full_moves)


def play(bench: Bench, chunks: int) -> pipeline.ChunkLoop:
    """``chunks`` chunks through the pipeline's own loop (``pipeline.play_chunks``:
    the next chunk dispatched before the last one's records are collected),
    keyed as the pipeline keys a generation's chunks."""
    first = bench.chunks_run
    loop = pipeline.play_chunks(
        bench.chunk,
        bench.variables,
        bench.sp_state,
        bench.collector,
        target=2**62,
        generation=bench.generation,
        key_of=lambda i: bench.keys.chunk(first + i),
        alpha_empty=bench.alpha0,
        beta_empty=bench.beta0,
        max_chunks=chunks,
    )
    bench.sp_state = loop.state
    bench.rows.extend(loop.parts)
    bench.games.extend(loop.games)
    bench.chunks_run += loop.chunks
    return loop


def compile_chunk(bench: Bench) -> dict[str, float]:
    """Compiles the chunk (seconds apart: tracing, lowering and XLA), then
    plays and collects one warm-up chunk; returns both times."""
    t = time.perf_counter()
    bench.chunk.lower(*bench.chunk_args()).compile()
    compile_s = time.perf_counter() - t
    t = time.perf_counter()
    play(bench, 1)
    warmup = time.perf_counter() - t
    bench.rows, bench.games = [], []  # the rounds write only their own
    return {"compile_seconds": compile_s, "warmup_chunk_seconds": warmup}


@functools.partial(jax.jit, static_argnums=1)
def _rolled(states, passes: int):
    """``passes`` copies of a batch, the i-th rolled by i along the batch axis."""
    return jax.tree_util.tree_map(lambda x: jnp.stack([jnp.roll(x, i, axis=0) for i in range(passes)]), states)


class ForwardHarness:
    """The forward pass alone: ``passes`` evaluations of a batch inside one
    jitted loop, so that, as inside a search, no pass pays a dispatch and
    the device never waits for the host.

    Each pass evaluates another batch (the positions rolled along the batch
    axis, made beforehand), so no pass can be hoisted out of the loop or
    shared with another; a checksum of every output is returned, so none is
    dead code. ``time()`` returns (wall, CPU) seconds per pass. Compiling is
    timed apart, in the constructor (``compile_seconds``).
    """

    def __init__(self, evaluate, params, states, passes: int = 10):
        self.passes = passes = int(passes)
        self.batch = int(jax.tree_util.tree_leaves(states)[0].shape[0])
        stacked = _rolled(states, passes)

        @jax.jit
        def run(params, stacked):
            def body(total, batch):
                leaves = jax.tree_util.tree_leaves(evaluate(params, batch))
                return total + sum(jnp.sum(leaf.astype(jnp.float32)) for leaf in leaves), None

            return jax.lax.scan(body, jnp.float32(0.0), stacked)[0]

        self._run, self._args = run, (params, stacked)
        t = time.perf_counter()
        jax.block_until_ready(run(*self._args))
        self.compile_seconds = time.perf_counter() - t

    def time(self, seconds: float = 0.0) -> tuple[float, float]:
        """(wall, CPU) seconds per pass, over as many calls of the loop as take
        at least ``seconds`` (one call at 0)."""
        t, c, calls = time.perf_counter(), time.process_time(), 0
        while calls == 0 or time.perf_counter() - t < seconds:
            jax.block_until_ready(self._run(*self._args))
            calls += 1
        return (time.perf_counter() - t) / (calls * self.passes), (time.process_time() - c) / (calls * self.passes)

    def rate(self, repeats: int = 3) -> float:
        """Evaluations/s, the best of ``repeats`` single timings (for sweeps of
        many batches, as ``benchmarks/gpu.py``'s; :func:`measure` times over a duration instead)."""
        return self.batch / min(self.time()[0] for _ in range(repeats))


class SearchHarness:
    """The search alone: the config's search of the self-play batch (the
    slots' positions, device-resident), called as a chunk calls it (per-slot
    keys, root noise on), ``moves`` searches inside one jitted loop, without
    choosing moves, stepping boards, queueing branches or recording. With
    playout caps a full and a cheap search are both timed, and weighted by
    the full-search probability as self-play's moves are. ``rate()`` is
    evaluations/s counted as self-play counts them.

    As in :class:`ForwardHarness`, each of the ``moves`` searches gets another
    batch (the positions rolled along the batch axis, made beforehand): with
    the same positions every time, the root's evaluation, which depends on
    the positions and the network only, could be hoisted out of the loop and
    paid once, a saving self-play never has (an eighth of an 8-simulation
    search).

    With ``replay=True`` it times the search's tree work alone, on the trees
    the network builds: before timing each set of positions it runs the real
    search once (``return_tree``), evaluates every node of every tree with
    the network, and then searches with :func:`replay_evaluator`, which looks
    each position's outputs up in that table instead of computing them. The
    table is keyed on :func:`input_key`, a hash of all the network reads (the
    past boards and illegal-move planes too, not the board alone), so a
    position reached by another history is another entry. Before a table's
    searches are timed, a checked replay (:meth:`outputs`) makes a position
    missing from the table an error and compares the replayed visit counts,
    policies and root α with the real search's, element by element
    (:func:`_check_replay`); the timed searches repeat it. The trees, and so
    the selection, Go steps, superko checks, terminal scoring and backward
    passes, are the network's; only the network's cost is gone (the key of
    each evaluated position and a lookup among the slot's ``moves`` × (S + 1)
    nodes take its place, and count as tree work).
    A network that costs nothing *and knows nothing* (flat priors, α = 0: this benchmark's measure before)
    builds other trees, shallower and with fewer two-pass leaves: it
    measured a trained net's tree work at about half of what it is."""

    def __init__(self, bench: Bench, moves: int = 4, evaluator: search.Evaluator | None = None, replay: bool = False):
        sp, s_cfg = bench.selfplay_config, bench.search_config
        self.batch, self.moves, self.replay = sp.batch_size, int(moves), bool(replay)
        self.parts = [(1.0, s_cfg)]
        if sp.fast_simulations > 0 and sp.full_search_prob < 1:
            fast = min(sp.fast_simulations, s_cfg.num_simulations)
            cheap = dataclasses.replace(
                s_cfg, num_simulations=fast, max_num_considered_actions=min(s_cfg.max_num_considered_actions, fast)
            )
            self.parts = [(sp.full_search_prob, s_cfg), (1.0 - sp.full_search_prob, cheap)]
        agent, rules, batch = bench.selfplay.agent, bench.rules, self.batch
        network = evaluator or bench.evaluator
        self._misses: list[int] = []  # positions missing from the table, as the checked replays report them
        if self.replay:
            _require_host_callbacks()
        evaluator = replay_evaluator(input_key) if self.replay else network
        checked = replay_evaluator(input_key, on_miss=self._misses.append)

        def searches(cfg, evaluate, params, rolled, key, trees: bool):
            def body(_, xs):
                k, states = xs
                out = search.run_search(
                    evaluate,
                    params,
                    jax.random.split(k, batch),
                    states,
                    rules=rules,
                    config=cfg,
                    agent=agent,
                    noise_scale=jnp.ones((batch,), jnp.float32),
                    return_tree=trees,
                )
                result, nodes = out if trees else (out, None)
                # Returned, not summed: nothing is dead code, and a replay can be compared element by element.
                outputs = {
                    "policy": result.policy,
                    "visit_counts": result.visit_counts,
                    "root_alpha": result.root_alpha,
                }
                if trees:
                    return None, (outputs, nodes.embeddings.state)  # [B, S + 1, ...]: every node's position
                return None, outputs

            xs = (jax.random.split(key, self.moves), rolled)
            return jax.lax.scan(body, None, xs)[1]  # [moves, B, ...]

        def make(cfg, evaluate):
            return jax.jit(functools.partial(searches, cfg, evaluate, trees=False))

        def make_table(cfg):
            @jax.jit
            def table(params, rolled, key):
                # The real search's outputs come back with the table, for _set_positions to compare the replay with.
                outputs, nodes = searches(cfg, network, params, rolled, key, trees=True)  # [moves, B, S + 1, ...]

                # One node of one move's trees at a time: a batch of B positions, as the search evaluates them.
                def by_column(x):  # [moves, B, S + 1, ...] -> [moves · (S + 1), B, ...]
                    x = jnp.moveaxis(x, 2, 1)
                    return x.reshape((x.shape[0] * x.shape[1],) + x.shape[2:])

                columns = jax.tree_util.tree_map(by_column, nodes)
                keys, logits, alpha, beta = jax.lax.map(
                    lambda states: (input_key(states), *network(params, states)), columns
                )  # [M, B, ...]
                per_slot = lambda x: jnp.moveaxis(x, 0, 1)  # noqa: E731  [B, M, ...]: a slot's nodes over every move
                entries = {"key": keys, "logits": logits, "alpha": alpha, "beta": beta}
                return jax.tree_util.tree_map(per_slot, entries), outputs

            return table

        # (weight, config, the timed searches, with replay: the table and the checked replay, else None).
        self._runs = [
            (w, cfg, make(cfg, evaluator), (make_table(cfg), make(cfg, checked)) if self.replay else None)
            for w, cfg in self.parts
        ]
        self._variables, self._key = bench.variables, jax.random.PRNGKey(0)
        t = time.perf_counter()
        self._set_positions(bench.sp_state.games)  # with replay, compiles the table and the checked replay
        for (_, _, run, _), params in zip(self._runs, self._params, strict=True):
            jax.block_until_ready(run(params, self._rolled, self._key))
        self.compile_seconds = time.perf_counter() - t

    def _set_positions(self, states: go.GoState) -> None:
        """Rolls ``states`` for the ``moves`` searches. With ``replay``, tabulates the network's outputs on
        every node of the trees the real searches of them build (one table per part), and checks that the
        replayed searches are the real ones: no position missing from the table (an error), and the same
        visit counts, policies and root α, element by element (a ``ValueError`` otherwise)."""
        self._rolled = _rolled(states, self.moves)
        if not self.replay:
            self._params = [self._variables] * len(self._runs)
            return
        tables = [jax.block_until_ready(table(self._variables, self._rolled, self._key))
                  for _, _, _, (table, _) in self._runs]  # fmt: skip
        self._params = [entries for entries, _ in tables]
        for (_, cfg, _, _), (_, real), replayed in zip(self._runs, tables, self.outputs(), strict=True):
            _check_replay(jax.device_get(real), replayed, cfg.num_simulations)

    def outputs(self) -> list[dict[str, np.ndarray]]:
        """Each part's searches of the current positions, run once: ``policy`` and ``visit_counts``
        [moves, B, A] and ``root_alpha`` [moves, B]. With ``replay``, the checked replay (the timed one
        with :func:`replay_evaluator`'s ``on_miss`` report), and a position missing from the table is a
        ``ValueError``."""
        found = []
        for (_, cfg, run, replayed), params in zip(self._runs, self._params, strict=True):
            if replayed is None:
                found.append(jax.device_get(run(params, self._rolled, self._key)))
                continue
            self._misses.clear()
            out = jax.device_get(replayed[1](params, self._rolled, self._key))
            jax.effects_barrier()  # every report is in
            if sum(self._misses):
                raise ValueError(
                    f"replay_evaluator: {sum(self._misses)} evaluations of positions missing from the table "
                    f"({cfg.num_simulations} simulations)"
                )
            found.append(out)
        return found

    def rate(self, seconds: float = 0.0, states: go.GoState | None = None) -> float:
        """Evaluations/s, each search timed over as many calls as take at
        least its weight's share of ``seconds`` (one call at 0), of the
        positions ``states`` (the self-play slots' positions; default: those
        it was built with or last given). A search's cost depends on the position (captures,
        the superko check, two-pass leaves), so the measure passes the slots'
        positions at the start of each round: what self-play searched then.
        With ``replay`` the new positions' tables are made, and the replay
        checked, before the timing."""
        if states is not None:
            self._set_positions(states)
        per_move = evals = 0.0
        for (weight, cfg, run, _), params in zip(self._runs, self._params, strict=True):
            t, calls = time.perf_counter(), 0
            while calls == 0 or time.perf_counter() - t < weight * seconds:
                jax.block_until_ready(run(params, self._rolled, self._key))
                calls += 1
            per_move += weight * (time.perf_counter() - t) / (calls * self.moves)
            evals += weight * self.batch * (cfg.num_simulations + 1)
        return evals / per_move


# Replayed policies may differ from the real ones by rounding only (the table's evaluations are the
# search's, batched alike); the visit counts must be equal.
REPLAY_TOLERANCE = 1e-5


def _check_replay(real: dict[str, Any], replayed: dict[str, Any], simulations: int) -> None:
    """Raises ``ValueError`` unless the replayed searches' outputs are the real ones, element by element."""
    visits = np.asarray(replayed["visit_counts"]) != np.asarray(real["visit_counts"])
    if visits.any():
        raise ValueError(
            f"the replayed searches ({simulations} simulations) are not the network's: visit counts differ in "
            f"{int(visits.sum())} of {visits.size} entries"
        )
    for name in ("policy", "root_alpha"):
        gap = float(np.max(np.abs(np.asarray(replayed[name], np.float64) - np.asarray(real[name], np.float64))))
        if not gap <= REPLAY_TOLERANCE:
            raise ValueError(
                f"the replayed searches ({simulations} simulations) are not the network's: {name} up to "
                f"{gap:.3g} apart (tolerance {REPLAY_TOLERANCE})"
            )


@functools.cache
def _key_weights(length: int) -> np.ndarray:
    """uint32 [length, 2]: fixed random odd multipliers, one column per word of :func:`input_key`."""
    return np.random.default_rng(20261127).integers(0, 2**32, (length, 2), dtype=np.uint64).astype(np.uint32) | 1


def input_key(states: go.GoState) -> jax.Array:
    """uint32 [B, 2]: a 64-bit hash of everything the network's evaluator reads of each state: the
    fields its input planes are made of (``go.features``: the board, the three past boards, the
    illegal-move and last-liberty planes at t..t-3; the player to move, who sets the planes' "own"
    and the baselines' colour plane) and the komi (a baseline's α is its margin less the signed
    komi). Positions with one board but another history get other keys, as the network may answer
    them otherwise; states equal in these fields get one key, as the network cannot tell them apart.

    The fields, as uint32 words (small integers; komi's float bits), are multiplied by fixed random
    odd weights and summed modulo 2³², once per word of the key: a linear hash, one small matrix
    product per evaluation, not the planes themselves (whichever planes a value head takes, these
    fields make them). Two states of one game (one komi) that differ in these fields share a key
    with a chance of about 2⁻⁶⁰: their difference is small integers, ±1 or ±2.
    """
    b = states.board.shape[0]
    words = jnp.concatenate(
        [
            states.board.reshape(b, -1).astype(jnp.int32),
            states.past_boards.reshape(b, -1).astype(jnp.int32),
            states.illegal_planes.reshape(b, -1).astype(jnp.int32),
            states.atari_planes.reshape(b, -1).astype(jnp.int32),
            states.to_play.reshape(b, 1).astype(jnp.int32),
            jax.lax.bitcast_convert_type(states.komi.astype(jnp.float32), jnp.int32).reshape(b, 1),
        ],
        axis=1,
    ).astype(jnp.uint32)  # [B, L]
    weights = jnp.asarray(_key_weights(words.shape[1]))  # [L, 2]
    return jnp.sum(words[:, :, None] * weights[None], axis=1, dtype=jnp.uint32)


def _require_host_callbacks() -> None:
    """The checked replay reports misses through ``jax.debug.callback``, which needs a CPU device
    beside the accelerator: with ``JAX_PLATFORMS=cuda`` alone it fails deep inside the first search."""
    try:
        jax.devices("cpu")
    except RuntimeError as e:
        raise RuntimeError(
            f"the replayed search's check needs a CPU device for its host callback, and JAX has none "
            f"(JAX_PLATFORMS={os.environ.get('JAX_PLATFORMS', '')!r}): add cpu, e.g. JAX_PLATFORMS=cuda,cpu "
            f"(the Makefile's GPU_PLATFORM default)"
        ) from e


def replay_evaluator(key_of, on_miss=None) -> search.Evaluator:
    """An evaluator that looks the network's outputs up instead of computing them (:class:`SearchHarness`
    with ``replay``). Its parameters are a table holding, per slot, M entries: ``key`` [B, M, 2], the
    ``key_of(states)`` of M positions (:func:`input_key`), and the network's outputs on them (``logits``
    [B, M, A], ``alpha``, ``beta`` [B, M]). Each state gets the outputs of an entry of its slot with its
    key. With ``on_miss``, every evaluation reports to the host (``jax.debug.callback``) how many of
    its states have no entry, for the caller to raise on; without it (the timed searches, which repeat
    checked ones) such a state would get entry 0's outputs."""

    def evaluate(table, states):
        match = jnp.all(table["key"] == key_of(states)[:, None, :], axis=-1)  # [B, M]
        if on_miss is not None:
            jax.debug.callback(lambda n: on_miss(int(n)), jnp.sum(~jnp.any(match, axis=1)))
        index = jnp.argmax(match, axis=1)

        def pick(x):
            return jnp.take_along_axis(x, index.reshape((-1, 1) + (1,) * (x.ndim - 2)), axis=1)[:, 0]

        return pick(table["logits"]), pick(table["alpha"]), pick(table["beta"])

    return evaluate


def free_search(evaluator, params, keys, states, *, rules, config, agent, noise_scale) -> search.SearchOutput:
    """A search that costs nothing, with :func:`search.run_search`'s signature:
    a random legal move (a point where there is one), visits and policy
    spread over the legal moves, values 0.5, α = 0. A chunk built with it
    (``selfplay.make_chunk_fn(..., run_search=free_search)``) times what
    self-play does around the search: move choice, board steps, branches,
    refills and records."""
    del evaluator, params, config, agent, noise_scale
    b, a = states.legal.shape
    legal = states.legal
    points = legal.at[:, rules.pass_action].set(False)
    pick = jnp.where(jnp.any(points, axis=1, keepdims=True), points, legal)
    action = jnp.argmax(jnp.where(pick, jax.random.uniform(keys[0], (b, a)), -1.0), axis=1).astype(jnp.int32)
    visits = legal.astype(jnp.int32) * 2
    policy = legal / jnp.maximum(jnp.sum(legal, axis=1, keepdims=True), 1)
    values = jnp.where(legal, 0.5, jnp.nan)
    zero = jnp.zeros((b,), jnp.float32)
    return search.SearchOutput(
        action=action,
        visit_counts=visits,
        policy=policy,
        root_alpha=zero,
        root_beta=zero + 1.0,
        root_winrate=zero + 0.5,
        root_value=zero + 0.5,
        x_lambda=zero,
        x_mu=zero,
        child_visits=visits,
        child_q=values,
        child_prior=policy,
        child_score_lead=values,
        child_beta=values,
        child_pv=jnp.full((b, a, 1), -1, jnp.int32),
        pv=jnp.full((b, 1), -1, jnp.int32),
        best_value=zero + 0.5,
        score_estimate=zero,
    )


class OutsideHarness:
    """Self-play's chunk with :func:`free_search` in place of the search,
    from the slots' current state (the benchmark's state does not advance):
    what a chunk costs around its searches. ``seconds(chunks)`` is the wall
    time of that many chunks, compiled apart in the constructor."""

    def __init__(self, bench: Bench):
        self.bench = bench
        self.chunk = chunk_fn(bench, run_search=free_search)
        jax.block_until_ready(self.chunk(*bench.chunk_args()))

    def seconds(self, chunks: int) -> float:
        params, state, key, alpha, beta = self.bench.chunk_args()
        t = time.perf_counter()
        for i in range(chunks):
            state, records = self.chunk(params, state, jax.random.fold_in(key, i), alpha, beta)
        jax.block_until_ready(records)
        return time.perf_counter() - t


def _write_generation(bench: Bench, directory: str, index: int) -> tuple[float, float, int]:
    """Writes the rows and SGFs collected since the last call as the pipeline
    writes a generation's; returns (replay seconds, SGF seconds, rows)."""
    if not bench.rows:
        return 0.0, 0.0, 0
    t = time.perf_counter()
    rows = replay.concatenate_rows(bench.rows)
    replay.ReplayBuffer(os.path.join(directory, "replay"), bench.rules.size).write_generation(index, rows)
    t_replay = time.perf_counter() - t
    t = time.perf_counter()
    limit = bench.selfplay.sgf_games_per_generation
    run_selfplay.write_sgfs(bench.rules, bench.games, os.path.join(directory, "sgf"), index, limit)
    t_sgf = time.perf_counter() - t
    bench.rows, bench.games = [], []
    return t_replay, t_sgf, rows.num_rows


def measure(bench: Bench, *, rounds: int = 3, chunks: int = 4, forward_passes: int = 20, log=print) -> dict[str, Any]:
    """Alternating rounds of the forward pass and self-play (after
    :func:`compile_chunk`); returns the rates, the ratio and the breakdown."""
    # The slots' games: device-resident positions of the self-play batch.
    forward = ForwardHarness(bench.evaluator, bench.variables, bench.sp_state.games, forward_passes)
    searching = SearchHarness(bench)
    tree_only = SearchHarness(bench, replay=True)
    outside = OutsideHarness(bench)
    batch = bench.selfplay_config.batch_size
    per_round = []
    with tempfile.TemporaryDirectory(prefix="selfplay_bench_") as scratch:
        for r in range(rounds):
            # Self-play first; then the forward pass, the search alone and its tree
            # work alone, each timed over as long as the self-play took, so that
            # every rate of a round averages over the same length of a (possibly
            # shared) machine.
            positions = bench.sp_state.games  # the slots' positions as the round starts
            outside_wall = outside.seconds(chunks)
            c, t = time.process_time(), time.perf_counter()
            loop = play(bench, chunks)
            sp_wall = time.perf_counter() - t
            sp_cpu = time.process_time() - c
            fwd_wall, fwd_cpu = forward.time(sp_wall)
            fwd_best = min(forward.time()[0] for _ in range(3))  # the ceiling as timed before (for comparison)
            search_rate = searching.rate(sp_wall, positions)
            tree_rate = tree_only.rate(sp_wall, positions)
            full = loop.full_moves
            evals = evaluations(bench, chunks, full)
            t_replay, t_sgf, rows = _write_generation(bench, scratch, r)
            fwd_rate, sp_rate = batch / fwd_wall, evals / sp_wall
            row = {
                "forward_evals_per_s": fwd_rate,
                "selfplay_evals_per_s": sp_rate,
                "ratio": sp_rate / fwd_rate,
                "search_evals_per_s": search_rate,
                "ratio_best_of_3": sp_rate / (batch / fwd_best),
                "search_ratio": sp_rate / search_rate,
                "tree_work_share": search_rate / tree_rate,
                "outside_search_share": outside_wall / sp_wall,
                "cpu_ratio": (evals / sp_cpu) / (batch / fwd_cpu) if sp_cpu > 0 and fwd_cpu > 0 else float("nan"),
                "selfplay_seconds": sp_wall,
                "evaluations": evals,
                "full_search_fraction": full / (chunks * bench.selfplay_config.chunk_moves),
                "device_seconds_per_chunk": loop.wait_seconds / chunks,
                "host_seconds_per_chunk": loop.collect_seconds / chunks,
                "replay_seconds": t_replay,
                "sgf_seconds": t_sgf,
                "rows": rows,
            }
            per_round.append(row)
            log(
                f"round {r + 1}/{rounds}: forward {fwd_rate:,.0f} evals/s | self-play {sp_rate:,.0f} evals/s | "
                f"ratio {row['ratio']:.3f} | search alone {search_rate:,.0f} evals/s, self-play/search "
                f"{row['search_ratio']:.3f}"
            )
    ratios = np.array([p["ratio"] for p in per_round])

    def median(name):
        return float(np.median([p[name] for p in per_round]))

    return {
        "description": bench.describe(),
        "rounds": rounds,
        "chunks_per_round": chunks,
        "forward_passes": forward_passes,
        "forward_compile_seconds": forward.compile_seconds,
        "search_compile_seconds": searching.compile_seconds,
        "search_evals_per_s": median("search_evals_per_s"),
        "search_ratio": median("search_ratio"),
        "tree_work_share": median("tree_work_share"),
        "outside_search_share": median("outside_search_share"),
        "forward_evals_per_s": median("forward_evals_per_s"),
        "selfplay_evals_per_s": median("selfplay_evals_per_s"),
        "ratio": float(np.median(ratios)),
        "ratio_min": float(ratios.min()),
        "ratio_max": float(ratios.max()),
        "cpu_ratio": median("cpu_ratio"),
        "ratio_best_of_3": median("ratio_best_of_3"),
        "device_seconds_per_chunk": median("device_seconds_per_chunk"),
        "host_seconds_per_chunk": median("host_seconds_per_chunk"),
        "replay_seconds": median("replay_seconds"),
        "sgf_seconds": median("sgf_seconds"),
        "rows_per_round": median("rows"),
        "full_search_fraction": float(np.mean([p["full_search_fraction"] for p in per_round])),
        "per_round": per_round,
    }


def summary_lines(bench: Bench, compiled: dict[str, float], result: dict[str, Any]) -> list[str]:
    """The report, ending with ``selfplay/forward ratio R``."""
    sp = bench.selfplay_config
    device, host = result["device_seconds_per_chunk"], result["host_seconds_per_chunk"]
    chunk = device + host
    return [
        f"compile: self-play chunk {compiled['compile_seconds']:.1f} s (then a warm-up chunk "
        f"{compiled['warmup_chunk_seconds']:.2f} s), forward pass {result['forward_compile_seconds']:.2f} s; "
        "not in the rates",
        f"self-play {result['selfplay_evals_per_s']:,.0f} evals/s (median of {result['rounds']} rounds of "
        f"{result['chunks_per_round']} chunks; full searches on {result['full_search_fraction']:.0%} of the moves) | "
        f"forward pass {result['forward_evals_per_s']:,.0f} evals/s (batch {sp.batch_size}, "
        f"{bench.config.precision})",
        f"a chunk ({sp.chunk_moves} moves x {sp.batch_size} slots): {chunk * 1e3:,.1f} ms = waiting for the device "
        f"{device * 1e3:,.1f} ms ({device / chunk:.0%}) + host collection {host * 1e3:,.1f} ms ({host / chunk:.0%})",
        f"after each round, outside the ratio: its {result['rows_per_round']:,.0f} replay rows written in "
        f"{result['replay_seconds'] * 1e3:,.1f} ms, SGFs in {result['sgf_seconds'] * 1e3:,.1f} ms (the pipeline "
        "writes them once a generation)",
        f"the search alone (no move choice, board steps or records; compiled in "
        f"{result['search_compile_seconds']:.1f} s): {result['search_evals_per_s']:,.0f} evals/s, "
        f"self-play/search {result['search_ratio']:.3f}, search/forward "
        f"{result['search_evals_per_s'] / result['forward_evals_per_s']:.3f}; its tree work (the same searches "
        f"of the same trees, the network's outputs looked up) {result['tree_work_share']:.1%} of its time; "
        "self-play around the search "
        f"(its chunks with a search that costs nothing) {result['outside_search_share']:.1%} of self-play's time",
        f"ratio over the rounds: median {result['ratio']:.3f}, spread {result['ratio_min']:.3f}-"
        f"{result['ratio_max']:.3f}; CPU-time ratio {result['cpu_ratio']:.3f}; against the best of 3 single "
        f"forward timings instead (this benchmark's ceiling before) {result['ratio_best_of_3']:.3f}",
        f"selfplay/forward ratio {result['ratio']:.3f}",
    ]


def _main(argv):
    import provenance  # benchmarks/provenance.py, beside this script
    from absl import flags, logging
    from ml_collections import config_flags

    del argv
    logging.set_verbosity(logging.WARNING)  # no INFO lines from JAX's backend search
    config = _CONFIG.value
    f = flags.FLAGS
    filename = config_flags.get_config_filename(f["config"])
    # With --check_pipeline the real run goes first, and the rounds play the
    # net that played its last generation.
    check = pipeline_check(config, f.check_pipeline, f.generation) if f.check_pipeline > 0 else None
    bench = build(config, f.generation, variables=None if check is None else check.pop("variables"))
    print(
        f"jax {jax.__version__} on {jax.devices()[0].platform} ({jax.device_count()} device(s)); "
        f"{filename} at generation {f.generation}: {bench.describe()}"
        + ("" if check is None else "; the net that played the real run's last generation"),
        flush=True,
    )
    compiled = compile_chunk(bench)
    result = measure(bench, rounds=f.rounds, chunks=f.chunks, forward_passes=f.forward_passes)
    result.update(compiled)
    lines = summary_lines(bench, compiled, result)
    if check is not None:
        result["pipeline_check"] = check
        lines.insert(-1, check_line(result, check))
    result["config"] = filename
    result["generation"] = f.generation
    result["provenance"] = provenance.describe()  # benchmarks/provenance.py: the device and the versions
    if f.json:
        with open(f.json, "w") as out:
            json.dump(result, out, indent=2)
    print("\n".join(lines), flush=True)


def pipeline_check(config, generations: int, generation: int = 0) -> dict[str, Any]:
    """A real run of the config (``pipeline.train_and_evaluate``, in a scratch
    workdir) for ``generations`` generations of the benchmarked simulations;
    its last generation's ``selfplay_evaluations / selfplay_seconds``, the
    figure the benchmark's self-play rate must agree with, and
    ``variables``: the net that played that generation (the checkpoint
    before it), which the benchmark then plays, so that both time the same
    net's games (a trained net's positions cost the search more than a
    fresh one's)."""
    config = config.copy_and_resolve_references()
    spec = training.network_spec(config, generation)
    with config.unlocked():  # the benchmarked generation's visits and net from the start
        config.generations = int(generations)
        config.schedules.visits = ((0, config_lib.num_simulations(config, generation)),)
        config.schedules.network = ((0, spec.blocks, spec.filters),)
        # No persistent compilation cache: it would live in the scratch
        # workdir, which is gone when the rounds compile afterwards.
        config.compilation_cache = False
    with tempfile.TemporaryDirectory(prefix="selfplay_check_") as work:
        pipeline.train_and_evaluate(config, work, progress=False, log=lambda *_: None)
        with open(os.path.join(work, "metrics.jsonl")) as lines:
            last = [json.loads(line) for line in lines][-1]
        played = int(last["generation"]) - 1  # the checkpoint whose net played the last generation
        variables = None
        if played >= 0:
            variables = checkpoints.load_network(os.path.join(work, "checkpoints", str(played))).variables
    return {
        "variables": variables,
        "generations": int(generations),
        "network": last["network"],
        "selfplay_evals_per_s": last["selfplay_evaluations"] / last["selfplay_seconds"],
        "selfplay_seconds": last["selfplay_seconds"],
        "compile_seconds": last["compile_seconds"],
    }


def check_line(result: dict[str, Any], check: dict[str, Any]) -> str:
    """The benchmark's self-play rate against a real run's."""
    ours, theirs = result["selfplay_evals_per_s"], check["selfplay_evals_per_s"]
    return (
        f"a real run, generation {check['generations'] - 1} of {check['generations']} ({check['network']}, "
        f"{check['compile_seconds']:.1f} s compiling in it): self-play {theirs:,.0f} evals/s, "
        f"the benchmark's {ours / theirs - 1:+.1%} from it"
    )


if __name__ == "__main__":
    from absl import app, flags
    from ml_collections import config_flags

    _CONFIG = config_flags.DEFINE_config_file("config", None, "Run config file (configs/*.py).", lock_config=True)
    flags.DEFINE_integer("rounds", 3, "Alternating forward/self-play rounds (at least 3 for a ratio worth quoting).")
    flags.DEFINE_integer("chunks", 4, "Self-play chunks per round.")
    flags.DEFINE_integer("forward_passes", 20, "Forward passes per round, in one jitted loop.")
    flags.DEFINE_integer("generation", 0, "The generation whose net shape and simulations self-play uses.")
    flags.DEFINE_string("json", None, "Also write the result as JSON to this file.")
    flags.DEFINE_integer(
        "check_pipeline",
        0,
        "First run the config for this many generations, then play its last generation's net and compare the "
        "self-play rates (0: no; a fresh net plays).",
    )
    flags.mark_flags_as_required(["config"])
    sys.exit(app.run(_main))
