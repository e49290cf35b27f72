"""KataGo's analysis protocol over saijax's search: many positions searched in lockstep.

``python -m saijax.analysis_engine`` (its command line:
:mod:`saijax.cli.analysis_engine`) reads one JSON query a line on stdin and
writes one JSON reply a line on stdout, in any order, each with its ``id``
(KataGo's ``docs/Analysis_Engine.md``; docs/design.md §8 says how it is
built). KaTrain, batch-analysis scripts and analysis servers drive it.

The search. Every position is analysed the way the GTP engine's
``kata-analyze`` analyses it (:mod:`saijax.gtp.analysis`): in rounds of
``visits`` simulations (the GTP engine's search, the same
:meth:`saijax.gtp.engine.GtpEngine.search_config`), each with a fresh key,
pooled per root move by :class:`saijax.gtp.analysis.RoundPool`; a query's
``maxVisits`` is reached in whole rounds (``ceil(maxVisits / visits)`` of
them; a ``maxVisits`` under ``visits`` is one round of ``maxVisits``). Round r
of every position uses the r-th key of the GTP engine's key chain for the same
seed, and the search derives each position's key from it and the position
(:func:`saijax.core.search.position_keys`), so a position gives exactly the
numbers ``kata-analyze`` gives it, whatever else is in its batch.

Batching. All pending positions, of all queries and turns, wait in one list;
each step takes the highest-priority one (ties: the earlier query, then the
earlier turn), and with it up to ``batch`` positions with the same search
settings, and runs one round on all of them in one batched search (padded to
a power of two, so shapes are static and each size compiles once). A
position leaves the list after its rounds, its ``maxTime`` or a
``terminate``; its final reply (``isDuringSearch`` false) goes out then, and
partial replies every ``reportDuringSearchEvery`` seconds before it.

Replies. ``moveInfos`` hold, per visited root move: ``move``, ``visits``,
``winrate``, ``scoreLead`` (and its alias ``scoreMean``), ``scoreStdev``,
``prior``, ``lcb``, ``utility``, ``order``, ``pv``, and where asked
``pvVisits`` and ``ownership``; with the numbers of ``kata-analyze``
(:mod:`saijax.gtp.analysis`: winrate the λ/μ agent value, scoreLead α + k of
the child, scoreStdev π/(√3 β) of the child's sigmoid, utility 2·winrate − 1).
``rootInfo`` holds ``winrate``, ``scoreLead``, ``utility`` and ``lcb`` (those
of the top move, ``order`` 0: a Gumbel search spreads visits over weak
candidates on purpose, so a visit-weighted mean would undervalue the
position), ``scoreStdev`` (the root's sigmoid's), ``visits`` (all the moves'),
``currentPlayer``, ``rawWinrate`` and ``rawLead`` (the net at the root),
and SAI's own: ``saiAlpha`` and ``saiBeta`` (the root's sigmoid: the win
probability at komi k is σ(β(α + k_s)), k_s the komi for the side whose view
is reported: −komi for Black, +komi for White), ``saiFairKomi`` (the komi at
which the net sees an even game, α in Black's view) and ``saiWinrateByKomi``
(``[komi, winrate]`` pairs over the komi range where the win rate goes from 1%
to 99%, in half points). Every value is from the view of
``reportAnalysisWinratesAs`` (``--report_as``, default BLACK as in KataGo's
example config and as KaTrain asks), ownership included. ``ownership``
(includeOwnership) is the net's at the root, N² values row-major from the
top-left point; a move's ``ownership`` (includeMovesOwnership, in the final
reply) the net's after that move; ``policy`` (includePolicy) the net's N² + 1 priors, −1 where
illegal. Not reported, having no SAI meaning: ``scoreSelfplay``,
``utilityLcb``, ``thisHash``, ``symHash``, the ownership stdevs.

Bad input. Every line that cannot be run gets one reply, ``{"error": ...}``
with the ``field`` and ``id`` where there are any, and the engine goes on;
warnings (an unknown field, rules saijax cannot play) go out as
``{"warning": ..., "field": ..., "id": ...}`` and the query still runs. At end of
input the engine finishes what is pending and returns.
"""

from __future__ import annotations

import copy
import dataclasses
import functools
import json
import math
import queue
import sys
import threading
import time
from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

import saijax
from saijax.core import go, search
from saijax.gtp import kata_query, server
from saijax.gtp.analysis import RoundPool, score_stdev, search_round
from saijax.gtp.engine import MAX_VISITS, GtpEngine, check_gumbel_scale
from saijax.gtp.kata_query import QueryError, Settings
from saijax.play import players, styles

__all__ = ["AnalysisEngine", "serve", "winrate_by_komi"]

_ACTIONS = ("query_version", "clear_cache", "terminate", "terminate_all")


@dataclasses.dataclass
class _Job:
    """One position of a query, waiting for or in its rounds."""

    query_id: Any
    turn: kata_query.Turn
    settings: Settings
    config: search.SearchConfig
    agent: search.Agent
    seq: int  # arrival order of the query
    rounds_wanted: int
    state: go.GoState  # the position as searched (root moves restricted where asked)
    pool: RoundPool = dataclasses.field(default_factory=RoundPool)
    started: float | None = None
    last_report: float | None = None
    done: bool = False
    policy: np.ndarray | None = None  # [N*N+1] the net's priors at the root, from the first round

    def sort_key(self):
        return (-self.turn.priority, self.seq, self.turn.number)


def winrate_by_komi(alpha: float, beta: float, *, black_view: bool, max_komi: float) -> list[list[float]]:
    """``[komi, winrate]`` pairs of the sigmoid σ(β(α + k)) in half-point komi steps.

    Args:
      alpha, beta: the root's sigmoid, α in the reported side's view.
      black_view: whether the reported side is Black (its k is −komi) or White (+komi).
      max_komi: the largest |komi| to list (the board's area).

    Returns:
      The pairs over the komi where the win rate is between 1% and 99%
      (|α + k| ≤ ln(99)/β), widened to at least ±2 points around the fair
      komi and clipped to ±``max_komi``, at most 81 of them.
    """
    if not (math.isfinite(alpha) and math.isfinite(beta) and beta > 0):
        return []
    sign = -1.0 if black_view else 1.0  # k = sign · komi
    fair = -alpha * sign
    half_width = min(max(math.log(99.0) / beta, 2.0), max_komi)
    lo = max(-max_komi, math.floor((fair - half_width) * 2) / 2)
    hi = min(max_komi, math.ceil((fair + half_width) * 2) / 2)
    step = max(0.5, math.ceil((hi - lo) / 80 * 2) / 2)
    pairs = []
    komi = lo
    while komi <= hi + 1e-9:
        z = beta * (alpha + sign * komi)
        pairs.append([komi, 1.0 / (1.0 + math.exp(-z)) if z > -700 else 0.0])
        komi += step
    return pairs


class AnalysisEngine:
    """KataGo's analysis protocol over a :class:`saijax.gtp.engine.GtpEngine`'s player and search.

    Feed it lines with :meth:`handle_line`, run batches with :meth:`step`
    (or :meth:`run_pending` until nothing is left); replies go to ``emit``
    as dicts (:func:`serve` writes them as JSON lines).
    """

    def __init__(
        self,
        engine: GtpEngine,
        *,
        emit: Callable[[dict], None],
        batch: int = 16,
        min_batch: int = 1,
        max_visits: int | None = None,
        report_as: str = "BLACK",
        seed: int = 0,
    ):
        """Builds the engine.

        Args:
          engine: the GTP engine whose player, visits (the round size), agent,
            noise scale and position control the analysis uses; its own game
            is not touched.
          emit: called with each reply.
          batch: the most positions searched in one step.
          min_batch: the fewest: a step's batch is padded to the next power
            of two from ``min_batch`` (at most ``batch``), so each size
            compiles once; ``min_batch = batch`` compiles one size only.
          max_visits: a query's visits when it sets no ``maxVisits``
            (default one round, ``engine.visits``).
          report_as: the default ``reportAnalysisWinratesAs``.
          seed: the key chain's seed (the GTP engine's ``--seed``: the same
            seed gives the same rounds as its ``kata-analyze``).
        """
        if not isinstance(batch, int) or batch < 1:
            raise ValueError(f"batch must be an int >= 1, got {batch!r}")
        if not isinstance(min_batch, int) or not 1 <= min_batch <= batch:
            raise ValueError(f"min_batch must be an int in 1..batch ({batch}), got {min_batch!r}")
        if report_as not in kata_query.REPORT_AS:
            raise ValueError(f"report_as must be one of {kata_query.REPORT_AS}, got {report_as!r}")
        self.base = engine
        self.rules = engine.rules
        self.batch = batch
        self.min_batch = min_batch
        self.emit = emit
        self.defaults = Settings(
            max_visits=int(max_visits or engine.visits), round_visits=engine.visits, report_as=report_as
        )
        self._chain = jax.random.PRNGKey(seed)
        self._round_keys: list[np.ndarray] = []
        self._fns: dict[search.SearchConfig, Callable] = {}
        self._jobs: list[_Job] = []
        self._replays: dict = {}  # replayed positions by start and moves (kata_query.parse_query)
        self._seq = 0
        self.positions_searched = 0  # position-rounds run, for the benchmark and the progress bar

    # -- input ----------------------------------------------------------------

    @property
    def pending(self) -> int:
        """Positions not yet finished."""
        return sum(not j.done for j in self._jobs)

    def handle_line(self, line: str) -> None:
        """Reads one input line: a query is queued, an action answered, bad input answered with an error."""
        text = line.strip()
        if not text:
            return
        try:
            obj = json.loads(text)
        except (json.JSONDecodeError, RecursionError) as e:
            self.emit({"error": f"could not parse JSON: {e}"})
            return
        if not isinstance(obj, dict):
            self.emit({"error": f"a query must be a JSON object, got {type(obj).__name__}"})
            return
        if "id" not in obj:
            self.emit({"error": 'the query has no "id" field', "field": "id"})
            return
        query_id = obj["id"]
        if not isinstance(query_id, str):
            self.emit({"error": f"id must be a string, got {query_id!r}", "field": "id", "id": query_id})
            return
        try:
            if "action" in obj:
                self._action(obj)
            else:
                self.submit(obj)
        except QueryError as e:
            reply = {"error": str(e), "id": query_id}
            if e.field:
                reply["field"] = e.field
            self.emit(reply)
        except Exception as e:  # pylint: disable=broad-except
            # A bug must not kill the engine or lose the other queries.
            self.emit({"error": f"internal error: {type(e).__name__}: {e}", "id": query_id})

    def submit(self, obj: dict) -> list[_Job]:
        """Queues an analysis query (a dict with an ``id``); returns its positions' jobs.

        Raises:
          QueryError: a field that cannot be used (nothing is queued).
        """
        query = kata_query.parse_query(obj, rules=self.rules, defaults=self.defaults, cache=self._replays)
        settings = query.settings
        config, agent = self._search_setup(settings)
        rounds = max(1, math.ceil(settings.max_visits / config.num_simulations))
        for field, message in query.warnings:
            self.emit({"warning": message, "field": field, "id": query.id})
        if (settings.ownership or settings.moves_ownership) and not self._has_ownership:
            field = "includeOwnership" if settings.ownership else "includeMovesOwnership"
            self.emit(
                {
                    "warning": f"{field}: this net has no ownership head; ownership is left out",
                    "field": field,
                    "id": query.id,
                }
            )
        self._seq += 1
        jobs = []
        for turn in query.turns:
            state = turn.position.state
            if turn.allowed is not None:
                state = state.replace(legal=jnp.asarray(np.asarray(state.legal) & turn.allowed))
            jobs.append(_Job(query.id, turn, settings, config, agent, self._seq, rounds, state))
        self._jobs.extend(jobs)
        return jobs

    @property
    def _has_ownership(self) -> bool:
        net = self.base.player.net
        return net is not None and bool(getattr(net, "ownership_head", False))

    def _search_setup(self, settings: Settings) -> tuple[search.SearchConfig, search.Agent]:
        """The search config and agent of a query's settings, through a copy of the GTP engine."""
        engine = copy.copy(self.base)
        options = dict(settings.options)
        player = engine.player
        try:
            agent = {k: options[k] for k in ("lambda", "mu", "threshold") if k in options}
            if agent:
                player = player.with_agent(
                    lambda_=agent.get("lambda"), mu=agent.get("mu"), threshold=agent.get("threshold")
                )
            if "gumbel_scale" in options:
                engine.gumbel_scale = check_gumbel_scale(options["gumbel_scale"])
            if "algorithm" in options:
                player = player.replace(config=dataclasses.replace(player.config, algorithm=options["algorithm"]))
            if "style" in options:
                root_prior = styles.online_style(options["style"])
                player = player.replace(config=dataclasses.replace(player.config, root_prior=root_prior))
            engine.player = player
            visits = min(settings.round_visits, settings.max_visits)
            if not 1 <= visits <= MAX_VISITS:
                raise ValueError(f"visits must be in 1..{MAX_VISITS}, got {visits}")
            config = engine.search_config(visits, analysis=True)
        except ValueError as e:
            raise QueryError(f"overrideSettings: {e}", "overrideSettings") from None
        return config, player.agent

    def _action(self, obj: dict) -> None:
        action = obj["action"]
        if action not in _ACTIONS:
            raise QueryError(f"unknown action {action!r} (known: {', '.join(_ACTIONS)})", "action")
        if action == "query_version":
            self.emit({**obj, "version": saijax.__version__, "git_hash": "<omitted>"})
            return
        if action == "clear_cache":
            self._replays.clear()  # saijax caches no evaluations; its one cache is the replayed positions
            self.emit(dict(obj))
            return
        turns = obj.get("turnNumbers")
        if turns is not None and (not isinstance(turns, list) or not all(kata_query._is_int(t) for t in turns)):
            raise QueryError(f"turnNumbers must be a list of integers, got {turns!r}", "turnNumbers")
        if action == "terminate":
            if "terminateId" not in obj:
                raise QueryError('terminate needs a "terminateId" field', "terminateId")
            target = obj["terminateId"]
            chosen = [j for j in self._jobs if not j.done and j.query_id == target]
        else:
            chosen = [j for j in self._jobs if not j.done]
        if turns is not None:
            chosen = [j for j in chosen if j.turn.number in turns]
        self.emit(dict(obj))
        for job in chosen:
            self._finish(job)
        self._jobs = [j for j in self._jobs if not j.done]

    # -- search ---------------------------------------------------------------

    def _round_key(self, r: int) -> np.ndarray:
        """The key of round ``r`` (0-based): the GTP engine's (r+1)-th search key for the same seed."""
        while len(self._round_keys) <= r:
            self._chain, key = jax.random.split(self._chain)
            self._round_keys.append(np.asarray(key))
        return self._round_keys[r]

    def _search_fn(self, config: search.SearchConfig) -> Callable:
        if config not in self._fns:
            self._fns[config] = _jitted_search(self.base.player.evaluator, self.rules, config)
        return self._fns[config]

    def step(self) -> bool:
        """Runs one round on a batch of pending positions; False when none is pending.

        A failure inside the round (a bug, or a library error) ends that
        batch's positions with an error reply each; the engine goes on.
        """
        active = sorted((j for j in self._jobs if not j.done), key=_Job.sort_key)
        if not active:
            return False
        config = active[0].config
        group = [j for j in active if j.config == config][: self.batch]
        try:
            self._round(config, group)
        except Exception as e:  # pylint: disable=broad-except
            for job in group:
                if not job.done:
                    job.done = True
                    message = f"internal error at turn {job.turn.number}: {type(e).__name__}: {e}"
                    self.emit({"error": message, "id": job.query_id})
        self._jobs = [j for j in self._jobs if not j.done]
        return True

    def _round(self, config: search.SearchConfig, group: list[_Job]) -> None:
        """One round of ``config``'s search on ``group``, and the replies it completes."""
        size = min(max(1 << (len(group) - 1).bit_length(), self.min_batch), self.batch)
        slots = group + [group[0]] * (size - len(group))
        states = jax.tree_util.tree_map(lambda *xs: np.stack([np.asarray(x) for x in xs]), *[j.state for j in slots])
        keys = np.stack([self._round_key(j.pool.rounds) for j in slots])
        agent = search.AgentParams(
            lambda_=jnp.asarray([j.agent.lambda_ for j in slots], jnp.float32),
            mu=jnp.asarray([j.agent.mu for j in slots], jnp.float32),
            threshold=jnp.asarray([j.agent.threshold for j in slots], jnp.float32),
        )
        start = time.monotonic()
        out = jax.device_get(self._search_fn(config)(self.base.player.variables, jnp.asarray(keys), states, agent))
        now = time.monotonic()
        for i, job in enumerate(group):
            if job.started is None:
                job.started = start
            job.pool.add(search_round(out, i))
            if job.policy is None:
                job.policy = np.asarray(out.child_prior[i])
            self.positions_searched += 1
            over_time = job.settings.max_time is not None and now - job.started >= job.settings.max_time
            if job.pool.rounds >= job.rounds_wanted or over_time:
                self._finish(job)
            elif job.settings.report_every is not None:
                if now - (job.last_report or job.started) >= job.settings.report_every:
                    job.last_report = now
                    self.emit(self._reply(job, during=True))

    def run_pending(self) -> None:
        """Runs steps until no position is pending."""
        while self.step():
            pass

    def _finish(self, job: _Job) -> None:
        job.done = True
        if job.pool.rounds == 0:
            self.emit({"id": job.query_id, "turnNumber": job.turn.number, "isDuringSearch": False, "noResults": True})
        else:
            self.emit(self._reply(job, during=False))

    # -- replies --------------------------------------------------------------

    def _reply(self, job: _Job, *, during: bool) -> dict:
        """The reply of a job with at least one round."""
        rules, settings = self.rules, job.settings
        state = job.turn.position.state
        to_play = int(state.to_play)
        flip = (settings.report_as == "BLACK" and to_play == -1) or (settings.report_as == "WHITE" and to_play == 1)
        sign = -1.0 if flip else 1.0

        def view_winrate(w: float) -> float:
            return 1.0 - w if flip else w

        def lcb(w: float, visits: int) -> float:
            return min(1.0, max(0.0, w - math.sqrt(max(w * (1.0 - w), 0.0) / max(visits, 1))))

        move_infos = []
        ranked = job.pool.ranked()
        for order, (move, st) in enumerate(ranked):
            w = view_winrate(st.winrate)
            score = sign * st.score_lead
            info = {
                "move": go.to_gtp(rules, move),
                "visits": st.visits,
                "winrate": w,
                "scoreLead": score,
                "scoreMean": score,
                "scoreStdev": st.score_stdev,
                "prior": st.prior,
                "lcb": lcb(w, st.visits),
                "utility": 2.0 * w - 1.0,
                "order": order,
                "pv": [go.to_gtp(rules, a) for a in st.pv],
            }
            if settings.pv_visits:
                info["pvVisits"] = list(st.pv_visits)
            move_infos.append(info)
        if not during and settings.moves_ownership and self._has_ownership:
            for info, (move, _) in zip(move_infos, ranked):
                if not bool(state.legal[move]) or bool(state.terminated):
                    continue
                child = go.play(rules, state, move)
                owned = players.root_ownership(self.base.player, rules, child) or []
                # the child's view is its player's, the opponent of the root's player
                info["ownership"] = [v if flip else -v for v in owned]
        visits = job.pool.visits
        # The root's value is its top move's: the visits of a Gumbel search spread over bad
        # candidates on purpose (sequential halving), so their mean would undervalue the position.
        top = ranked[0][1]
        w_root = view_winrate(top.winrate)
        lead_root = sign * top.score_lead
        last = job.pool.last
        alpha = sign * last.alpha
        k_root = float(state.komi) * (1.0 if to_play == -1 else -1.0)  # the player to move's komi
        root = {
            "winrate": w_root,
            "scoreLead": lead_root,
            "scoreStdev": score_stdev(last.beta),
            "utility": 2.0 * w_root - 1.0,
            "lcb": lcb(w_root, top.visits),
            "visits": visits,
            "currentPlayer": "B" if to_play == 1 else "W",
            "rawWinrate": view_winrate(last.winrate),
            "rawLead": sign * (last.alpha + k_root),
            "saiAlpha": alpha,
            "saiBeta": last.beta,
            "saiFairKomi": last.alpha * (1.0 if to_play == 1 else -1.0),
            "saiWinrateByKomi": winrate_by_komi(
                alpha,
                last.beta,
                black_view=(to_play == 1) != flip,
                max_komi=float(rules.num_points),
            ),
        }
        reply = {
            "id": job.query_id,
            "turnNumber": job.turn.number,
            "isDuringSearch": during,
            "moveInfos": move_infos,
            "rootInfo": root,
        }
        if settings.ownership and self._has_ownership:
            owned = players.root_ownership(self.base.player, rules, state) or []
            reply["ownership"] = [sign * v for v in owned]
        if settings.policy:
            legal = np.asarray(state.legal)
            reply["policy"] = [float(p) if ok else -1.0 for p, ok in zip(job.policy, legal)]
        return _finite(reply)


@functools.cache
def _jitted_search(evaluator, rules: go.GoRules, config: search.SearchConfig) -> Callable:
    """The batched search of the rounds, shared by every engine over the same net (compiled once per batch size)."""

    def run(params, round_keys, states, agent):
        keys = search.position_keys(round_keys, states)
        return search.run_search(evaluator, params, keys, states, rules=rules, config=config, agent=agent)

    return jax.jit(run)


def _finite(obj):
    """``obj`` with non-finite floats as None (JSON has no NaN)."""
    if isinstance(obj, float):
        return obj if math.isfinite(obj) else None
    if isinstance(obj, dict):
        return {k: _finite(v) for k, v in obj.items()}
    if isinstance(obj, list):
        return [_finite(v) for v in obj]
    return obj


def serve(engine_factory: Callable[[Callable[[dict], None]], AnalysisEngine], stdin, stdout) -> int:
    """Runs the protocol over binary streams until end of input; returns 0.

    A reader thread queues input lines; between batches every queued line is
    read (a ``terminate`` takes effect before the next round), and with
    nothing pending the loop waits for input. At end of input the pending
    positions are finished first.

    Args:
      engine_factory: builds the engine given the function that writes a reply.
      stdin, stdout: binary streams.
    """
    lock = threading.Lock()

    def write(reply: dict) -> None:
        line = json.dumps(reply, separators=(",", ":"), allow_nan=False) + "\n"
        with lock:
            stdout.write(line.encode("utf-8"))
            stdout.flush()

    engine = engine_factory(write)
    inbox = server.read_lines(stdin, "analysis-stdin")
    eof = False
    while True:
        while not eof:
            try:
                raw = inbox.get_nowait() if engine.pending else inbox.get()
            except queue.Empty:
                break
            if raw is None:
                eof = True
                break
            engine.handle_line(raw.decode("utf-8", errors="replace"))
        if engine.step():
            continue
        if eof:
            break
    print(
        f"saijax.analysis_engine: end of input; {engine.positions_searched} position-rounds searched", file=sys.stderr
    )
    return 0
