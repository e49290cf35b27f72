"""A run's self-play (docs/design.md §6, §9): a generation's games, played in
jitted lockstep chunks until enough have finished, and their records.

:class:`SelfPlay` is the phase across a run's generations: its slots,
collector and compiled chunks last while the network's shape does, so games
in flight at a generation's end carry on with the next net. Each generation
it plays :func:`play_chunks` (each chunk dispatched before the last one's
records are collected), gathers every process's rows and games, and writes
the rows to the replay directory and a few SGFs on a thread while training
runs. :func:`make_chunk_fn`, :func:`new_slots` and :func:`write_sgfs` are
the same pieces for ``benchmarks/selfplay.py``; ``saijax.learn.pipeline``
re-exports :func:`play_chunks`, :class:`ChunkLoop` and
:func:`selfplay_evaluations`.
"""

from __future__ import annotations

import dataclasses
import os
import threading
import time
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import NamedSharding, PartitionSpec

from saijax.core import go, search, sgf
from saijax.learn import distributed, replay, run_metrics, run_setup, selfplay, selfplay_stats, training

__all__ = [
    "ChunkLoop",
    "play_chunks",
    "cheap_simulations",
    "selfplay_evaluations",
    "make_chunk_fn",
    "new_slots",
    "shard_selfplay",
    "write_sgfs",
    "SelfPlay",
]


def make_chunk_fn(
    settings: run_setup.SelfPlaySettings,
    rules: go.GoRules,
    evaluator,
    search_config: search.SearchConfig,
    run_search=None,
):
    """The jitted self-play chunk of a run (``selfplay.make_chunk_fn`` with
    its agent and records), searching with ``search_config``; ``run_search``
    replaces the search (``benchmarks/selfplay.py``: one that costs nothing)."""
    return selfplay.make_chunk_fn(
        evaluator,
        rules,
        search_config,
        settings.config,
        agent=settings.agent,
        ownership=settings.ownership,
        **({} if run_search is None else {"run_search": run_search}),
    )


def new_slots(run: run_setup.RunSetup, keys: run_setup.GenerationKeys, alpha_empty, beta_empty):
    """Fresh self-play slots for the first generation a net plays, at its
    empty-board α_∅, β_∅, sharded over the self-play mesh."""
    state = selfplay.init_selfplay(run.rules, run.settings.selfplay.config, keys.slots, alpha_empty, beta_empty)
    return shard_selfplay(state, run.selfplay_mesh)


class ChunkLoop(NamedTuple):
    """What :func:`play_chunks` returns."""

    state: selfplay.SelfPlayState  # after the last chunk the generation used
    parts: list  # [TrainingRows] of the games finished, in order
    games: list  # [selfplay.FinishedGame]
    chunks: int  # chunks played
    full_moves: int  # moves (of chunks) with a full search, counted on slot 0
    idle_cheap_slot_moves: int  # slots that searched cheaply without moving (selfplay.random_full_search_only)
    wait_seconds: float  # the host waiting for the device (dispatch included)
    collect_seconds: float  # the host joining records into rows and games


@jax.jit
def _finished_count(finished, active):
    return jnp.sum(finished & active)


def play_chunks(
    chunk,
    variables,
    sp_state,
    collector,
    *,
    target,
    generation,
    key_of,
    alpha_empty,
    beta_empty,
    on_games=None,
    max_chunks=None,
) -> ChunkLoop:
    """Self-play chunks until ``target`` games have finished (docs/design.md §6).

    Chunk i + 1 is dispatched before chunk i's records are collected, so the
    device plays while the host joins records (JAX's asynchronous dispatch).
    Whether chunk i ends the generation is known from its count of finished
    games alone, a scalar read as soon as chunk i is done, so no chunk is
    dispatched that the generation would not use: each net plays exactly the
    moves it played when every chunk was collected before the next, and no
    evaluation is wasted. ``key_of(i)`` is chunk i's key; ``on_games(n)``
    is told of each chunk's finished games (a progress bar); with
    ``max_chunks`` it also stops after that many chunks (benchmarks/selfplay.py).
    """
    alpha_empty, beta_empty = jnp.float32(alpha_empty), jnp.float32(beta_empty)
    parts, games = [], []
    i = full_moves = idle = 0
    wait = collect = 0.0
    t = time.time()
    state, records = chunk(variables, sp_state, key_of(0), alpha_empty, beta_empty)
    while True:
        n_finished = int(_finished_count(records.finished, records.active))  # waits for chunk i
        done = len(games) + n_finished >= target or (max_chunks is not None and i + 1 >= max_chunks)
        if not done:
            ahead = chunk(variables, state, key_of(i + 1), alpha_empty, beta_empty)
        now = time.time()
        wait += now - t
        rows, finished = collector.add_chunk(records, generation)
        full = np.asarray(records.full_search)
        full_moves += int(np.sum(full[:, 0]))
        idle += int(np.sum(~np.asarray(records.active) & ~full))
        if rows is not None:
            parts.append(rows)
        games.extend(finished)
        if on_games is not None:
            on_games(len(finished))
        i += 1
        t = time.time()
        collect += t - now
        if done:
            return ChunkLoop(state, parts, games, i, full_moves, idle, wait, collect)
        state, records = ahead


def cheap_simulations(sp_cfg: selfplay.SelfPlayConfig, simulations: int) -> int:
    """Simulations of a cheap search under playout caps (0 without caps)."""
    return min(sp_cfg.fast_simulations, simulations) if sp_cfg.full_search_prob < 1 else 0


def selfplay_evaluations(sp_cfg: selfplay.SelfPlayConfig, simulations: int, chunks: int, full_moves: int) -> int:
    """Self-play compute of ``chunks`` chunks: every chunk searches all slots
    of every process for ``chunk_moves`` plies, S simulations plus the root;
    with playout caps a cheap search's moves cost its own simulations (the
    batch flips one coin per move)."""
    fast = cheap_simulations(sp_cfg, simulations)
    moves = chunks * sp_cfg.chunk_moves
    evaluations = full_moves * (simulations + 1) + (moves - full_moves) * (fast + 1)
    return evaluations * sp_cfg.batch_size * jax.process_count()


def shard_selfplay(sp: selfplay.SelfPlayState, mesh) -> selfplay.SelfPlayState:
    """Slots along the mesh's batch axis; the branch queue replicated."""
    batch = NamedSharding(mesh, PartitionSpec(training.BATCH_AXIS))
    rep = NamedSharding(mesh, PartitionSpec())
    per_slot = {"games", "game_id", "is_branch", "may_resign", "would_resign", "branches", "blunders_left"}
    out = {}
    for f in dataclasses.fields(sp):
        value = getattr(sp, f.name)
        sharding = batch if f.name in per_slot else rep
        out[f.name] = jax.tree_util.tree_map(lambda x: jax.device_put(x, sharding), value)
    return selfplay.SelfPlayState(**out)


def write_sgfs(rules: go.GoRules, games, directory: str, generation: int, limit: int) -> list[str]:
    """SGFs of the first ``limit`` of a generation's finished games in ``directory``; returns their paths."""
    os.makedirs(directory, exist_ok=True)
    paths = []
    for game in games[:limit]:
        black, white = selfplay.start_board(rules, game)
        moves = tuple(a for a in game.actions if a >= 0)
        origin = (
            f"branch from move {game.start_move} with fair komi {game.komi:g}"
            if game.is_branch
            else "complete game, komi sampled from the net's empty-board sigmoid"
        )
        record = sgf.GameRecord(
            size=rules.size,
            komi=game.komi,
            moves=moves,
            setup_black=tuple(black) if game.is_branch else (),
            setup_white=tuple(white) if game.is_branch else (),
            first_player=game.start_to_play,
            result=sgf.game_result_string(game.winner, game.margin, game.resigned),
            black_name=f"saijax-gen{generation}",
            white_name=f"saijax-gen{generation}",
            root_comment=f"saijax self-play, generation {generation}, game {game.game_id}: {origin}",
        )
        path = os.path.join(directory, f"gen{generation:06d}_game{game.game_id:07d}.sgf")
        sgf.write_sgf(record, path)
        paths.append(path)
    return paths


def _gather_selfplay(rows, games, queue):
    """Every process's self-play of one generation, joined (a collective).

    Game ids are made unique across processes (process p's game g becomes
    g · P + p), so rows and SGF names never collide.

    Returns:
      (all rows, all games, summed queue counts, rows per process).
    """
    count = jax.process_count()
    joined_rows, joined_games, joined_queue, per_process = [], [], {}, []
    for p, (r, g, q) in enumerate(distributed.allgather((rows, games, queue))):
        joined_rows.append(r.replace(game_id=r.game_id * count + p))
        joined_games.extend(dataclasses.replace(game, game_id=game.game_id * count + p) for game in g)
        for name, value in q.items():
            joined_queue[name] = joined_queue.get(name, 0) + value
        per_process.append(r.num_rows)
    return replay.concatenate_rows(joined_rows), joined_games, joined_queue, per_process


class SelfPlay:
    """Self-play across a run's generations: the slots, the collector of their
    records and the compiled chunks, for one network shape at a time
    (:meth:`reset` when it grows).

    Each generation (:meth:`play`) reuses the generation's replay file if a
    killed run wrote it, or plays until ``selfplay.games_per_generation``
    games have finished.
    """

    def __init__(self, run: run_setup.RunSetup, buffer: replay.ReplayBuffer, sgf_dir: str, *, primary, progress, log):
        self.run, self.buffer, self.sgf_dir = run, buffer, sgf_dir
        self.settings = run.settings.selfplay
        self.primary, self.progress, self.log = primary, progress, log
        self.reset()

    def reset(self):
        """Self-play's slots, collector and compiled functions, for a new network."""
        self.sp_state = None
        self.collector = selfplay.GameCollector(self.run.rules, opponent_policy=self.settings.opponent_policy)
        self.chunk_fns: dict[tuple, Any] = {}
        self.refresh_fn = None  # built once per network, like the chunks

    def compiled(self, simulations: int) -> bool:
        """Whether a chunk of ``simulations`` is compiled for the current network."""
        return (simulations,) in self.chunk_fns

    def play(self, gen: int, keys: run_setup.GenerationKeys, built, variables, alpha0, beta0, times: dict[str, float]):
        """One generation's self-play with ``variables`` (the playing net, at
        its empty-board α_∅, β_∅). Returns (its statistics, the generation's
        new rows, a writer to join before the checkpoint: the rows and SGFs
        are written while training runs; None when the rows were read back)."""
        sp_cfg, buffer, rules = self.settings.config, self.buffer, self.run.rules
        if distributed.agree(gen in buffer.available_generations()):
            self.log(f"generation {gen}: self-play data found, retraining only")
            return {"reused_selfplay": True}, buffer.read_generation(gen), None
        s_cfg = self.run.settings.search_config(gen)
        fn_key = (s_cfg.num_simulations,)
        if fn_key not in self.chunk_fns:
            self.chunk_fns[fn_key] = make_chunk_fn(self.settings, rules, built.evaluator, s_cfg)
        if self.sp_state is None:
            self.sp_state = new_slots(self.run, keys, alpha0, beta0)
        else:
            # Branches queued by the previous net start at this net's fair komi.
            if self.refresh_fn is None:
                self.refresh_fn = selfplay.make_refresh_fn(built.evaluator)
            self.sp_state = self.refresh_fn(variables, self.sp_state)
        dropped_before = int(self.sp_state.queue_dropped)
        target = distributed.process_share(self.settings.games_per_generation)
        bar = run_metrics.progress_bar(target, f"gen {gen} self-play", self.progress)
        loop = play_chunks(
            self.chunk_fns[fn_key],
            variables,
            self.sp_state,
            self.collector,
            target=target,
            generation=gen,
            key_of=keys.chunk,
            alpha_empty=alpha0,
            beta_empty=beta0,
            on_games=None if bar is None else (lambda k: bar.update(min(k, target - bar.n))),
        )
        if bar is not None:
            bar.close()
        self.sp_state = loop.state
        times["collect_seconds"] += loop.collect_seconds
        times["selfplay_wait_seconds"] += loop.wait_seconds
        evaluations = selfplay_evaluations(sp_cfg, s_cfg.num_simulations, loop.chunks, loop.full_moves)
        if not loop.parts:
            raise RuntimeError(f"generation {gen}: self-play produced no training rows")
        rows, games = replay.concatenate_rows(loop.parts), loop.games
        queue = {
            "branches_dropped": int(self.sp_state.queue_dropped) - dropped_before,
            "branch_queue_size": int(self.sp_state.queue_size),
        }
        if jax.process_count() > 1:
            rows, games, queue, per_process = _gather_selfplay(rows, games, queue)
            self.log(f"generation {gen}: self-play rows per process {per_process}, {rows.num_rows} in all")
        stats = selfplay_stats.generation_stats(games, alpha0, beta0)
        stats.update(queue)
        stats["selfplay_evaluations"] = evaluations
        stats["selfplay_full_search_fraction"] = loop.full_moves / (loop.chunks * sp_cfg.chunk_moves)
        # Cheap searches of slots that did not move (waiting in their opening
        # for a full search, selfplay.random_full_search_only): spent, and
        # counted in selfplay_evaluations.
        fast = cheap_simulations(sp_cfg, s_cfg.num_simulations)
        stats["selfplay_waiting_evaluations"] = loop.idle_cheap_slot_moves * (fast + 1) * jax.process_count()
        if jax.process_count() > 1:
            stats["rows_per_process"] = per_process
        return stats, rows, self._write_behind(gen, rows, games)

    def _write_behind(self, gen, rows, games):
        """Writes the generation's rows and SGFs (process 0) on a thread, off
        self-play's critical path; returns a function that waits for them
        and returns the seconds they took."""
        if not self.primary:
            return lambda: 0.0
        result: dict[str, Any] = {}

        def write():
            t = time.time()
            try:
                self.buffer.write_generation(gen, rows)
                write_sgfs(self.run.rules, games, self.sgf_dir, gen, self.settings.sgf_games_per_generation)
            except BaseException as e:  # raised again on join
                result["error"] = e
            result["seconds"] = time.time() - t

        thread = threading.Thread(target=write, name=f"saijax-replay-{gen}", daemon=False)
        thread.start()

        def join():
            thread.join()
            if "error" in result:
                raise result["error"]
            return result["seconds"]

        return join
