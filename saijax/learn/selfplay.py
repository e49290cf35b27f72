"""Lockstep self-play on device, with komi sampling and branching (docs/design.md §6).

B game slots advance together. One jitted *chunk* is a ``lax.scan`` over T
moves; each move runs one batched search, picks moves, steps every board,
queues branches, and refills finished slots on device. Nothing returns to the
host inside a chunk. Between chunks the host (:class:`GameCollector`) joins
the per-move records with the results of the games that finished, which
gives training rows with their outcomes; the generation's statistics of
the finished games are :mod:`saijax.learn.selfplay_stats`'s.

Design choices (where docs/design.md leaves room):

* Komi lives in ½ℤ. Complete games draw it from the logistic distribution
  with mean α_∅ and scale T/β_∅ (the current net's empty-board sigmoid read
  as a CDF); a branch's komi makes its position fair for the player to move
  (signed komi −α_s), both rounded to the nearest multiple of ½.
* Refills follow the sequence of refill indices: index i is a branch when
  ``i % (games_per_branch + 1) == games_per_branch`` and the queue is not
  empty, otherwise a complete game. Several slots refilled in the same move
  take consecutive indices.
* The branch queue is a fixed-capacity ring buffer of whole ``GoState``s
  (history and superko record included). When it is full, a new branch
  replaces the oldest one, so branches start from recent positions. A game
  queues at most ``max_branches_per_game`` branches (SAI's server: 3; 0 = no
  cap). A branch's komi is made fair by the net of the move that queued it
  and made fair again by the current net when a generation starts
  (:func:`make_refresh_fn`), so a branch always starts at its position's
  fair komi under the net that plays it.
* Blunders: during the first R moves (counted from the empty board, also in
  branches) moves are sampled ∝ visits^(1/T); a sampled move whose value is
  more than ``blunder_threshold`` below the reference is a blunder: the best
  visited child's value (``blunder_reference='best_child'``), or SAI's, the
  value of the move the search plays, its most visited (``'search_move'``).
  The rows of a game's positions up to and including its last blunder are
  not trained on (their outcome is the blunder's). With
  ``blunders_allowed_mean`` ≥ 0 (SAI's engine: ln 4, so that a quarter of
  its games allow none), each game may play a Poisson-drawn number of
  blunders; once they are spent, its random moves are drawn among the
  moves that are not blunders only.
* Resignation: after N²/4 moves, a player whose best child's agent value is
  below ``resign_threshold`` resigns, unless the game is one of the
  ``no_resign_fraction`` that may not; in those, the first player that would
  have resigned is remembered, and if it goes on to win, that is a false
  resignation. At resignation the game's margin is the search's score
  estimate.
* LZS pass rule (``lzs_pass_rule``): a pass chosen by the search is replaced
  by the best-valued visited move whenever some move's expected score beats
  the current Tromp–Taylor score.
* Ownership targets (``make_chunk_fn(..., ownership=True)``, KataGo's
  auxiliary target): every move records the Tromp–Taylor ownership of the
  position it leads to; when a game ends by two passes or the move cap, each
  of its rows gets that final ownership from its player to move's view. A
  resigned game's rows get zeros with ``ownership_mask`` False.
* Opponent-reply targets (``GameCollector(..., opponent_policy=True)``,
  KataGo's auxiliary policy target): each row gets the policy target of
  its game's next position, the one after the move actually played (the
  opponent's reply); a game's last position (two passes, resignation or the
  move cap) gets an all-zero row, as does a position whose next one was
  searched cheaply (its policy row is all zeros). Built from the records
  alone: the chunk records nothing extra.
"""

from __future__ import annotations

import dataclasses
import functools

import chex
import jax
import jax.numpy as jnp
import numpy as np
from flax import struct

from saijax.core import features as features_lib
from saijax.core import go, search, sigmoid
from saijax.learn import replay

__all__ = [
    "SelfPlayConfig",
    "SelfPlayState",
    "StepRecord",
    "init_selfplay",
    "make_chunk_fn",
    "round_half",
    "sample_komi",
    "fair_komi",
    "GameCollector",
    "FinishedGame",
]


@dataclasses.dataclass(frozen=True)
class SelfPlayConfig:
    """Static self-play settings (see ``configs/default.py`` for meanings)."""

    batch_size: int = 8
    chunk_moves: int = 8
    komi_mode: str = "sample"
    komi: float = 7.0
    komi_temperature: float = 1.0
    branch_prob: float = 0.02
    branch_queue_capacity: int = 64
    games_per_branch: int = 2
    max_branches_per_game: int = 3
    random_moves: int = 0
    random_temperature: float = 1.0
    opening_policy: str = "visits"
    random_min_visits: int = 0
    random_losing_threshold: float = 0.0
    random_takeback: bool = False
    random_full_search_only: bool = False
    fixed_komi_share: float = 0.0
    noise_moves: int = -1
    fast_simulations: int = 0
    full_search_prob: float = 1.0
    blunder_threshold: float = 0.15
    blunder_reference: str = "best_child"
    blunders_allowed_mean: float = -1.0
    resign_threshold: float = 0.05
    no_resign_fraction: float = 0.1
    lzs_pass_rule: bool = False


@struct.dataclass
class SelfPlayState:
    """The device-resident carry of self-play (B slots, C queue entries)."""

    games: go.GoState  # [B, ...] the game in each slot
    game_id: chex.Array  # [B] int32
    is_branch: chex.Array  # [B] bool
    may_resign: chex.Array  # [B] bool
    would_resign: chex.Array  # [B] int8: colour that would have resigned first (no-resign games)
    branches: chex.Array  # [B] int32: branches queued from the game in the slot
    queue: go.GoState  # [C, ...] queued branch positions (komi already fair)
    queue_head: chex.Array  # [] int32, index of the oldest entry
    queue_size: chex.Array  # [] int32
    refills: chex.Array  # [] int32, refills so far (drives the 2:1 ratio)
    next_game_id: chex.Array  # [] int32
    queue_dropped: chex.Array  # [] int32, queued branches replaced before they were played
    blunders_left: chex.Array  # [B] int32: blunders the slot's game may still play (-1: no limit)


@struct.dataclass
class StepRecord:
    """What one lockstep move emits, per slot ([T, B] after a chunk)."""

    planes: chex.Array  # [B, N, N, 2] uint8, packed SAI planes of the position
    to_play: chex.Array  # [B] int8
    signed_komi: chex.Array  # [B] float32
    policy: chex.Array  # [B, A] float32, the search's improved policy
    game_id: chex.Array  # [B] int32
    move_number: chex.Array  # [B] int32, moves before this position
    is_branch: chex.Array  # [B] bool
    active: chex.Array  # [B] bool, a real position was searched
    action: chex.Array  # [B] int32, the move played (-1 resign)
    blunder: chex.Array  # [B] bool
    root_alpha: chex.Array  # [B] float32
    branched: chex.Array  # [B] bool, this position was queued as a branch
    finished: chex.Array  # [B] bool, the game ended with this move
    winner: chex.Array  # [B] int8, black's view (+1, -1, 0); valid when finished
    margin: chex.Array  # [B] float32, black minus white with komi; valid when finished
    resigned: chex.Array  # [B] bool
    may_resign: chex.Array  # [B] bool
    would_resign: chex.Array  # [B] int8
    komi: chex.Array  # [B] float32, the game's komi
    length: chex.Array  # [B] int32, moves in the game when finished
    # [B, N*N] int8, Tromp–Taylor owner of each point after the move, black's
    # view (+1, -1, 0); valid when finished. None unless make_chunk_fn(ownership=True).
    final_ownership: chex.Array | None = None
    # [B] bool: the move's search was a full one (with playout caps, the
    # cheap searches give no policy target: their policy row is all zeros).
    full_search: chex.Array | None = None
    # [B] float32, β of the root evaluation (None in hand-made records).
    root_beta: chex.Array | None = None


def round_half(x):
    """Nearest multiple of ½."""
    return _no_negative_zero(jnp.round(x * 2.0) / 2.0)


def _no_negative_zero(x):
    # Not ``x + 0.0``: XLA's simplifier drops that addition inside jit, and a
    # komi of -0.0 then showed up as its own key in komi_histogram.
    return jnp.where(x == 0, jnp.zeros_like(x), x)


def sample_komi(key, alpha_empty, beta_empty, temperature, shape, bound=None):
    """Komi in ½ℤ from the logistic CDF σ(β(α − k)) of the empty board.

    Black's win probability at komi k is σ(β_∅(α_∅ − k)), so 1 − that is a
    CDF in k: a logistic distribution with mean α_∅ and scale 1/β_∅, widened
    by ``temperature``.

    ``bound`` (the board's N² in self-play) truncates the distribution to
    [−bound, bound] by inverse-CDF sampling between the two tails' CDF
    values. A Tromp–Taylor margin lies in [−N², N²], so a komi beyond it
    decides the game before the first move: its games teach nothing about
    play, and their side favoured by komi may pass from move 1 (docs/design.md
    §6). SAI's nets were sharp (β_∅ ≫ 1/N²) from early on, so the tails never
    mattered there; a young net's β_∅ ≈ 0.01 would put most komi beyond ±81
    on 9×9.
    """
    scale = temperature / beta_empty
    lo, hi = 1e-6, 1.0 - 1e-6
    if bound is not None:
        # P(y < x) for the logistic y, at the bounds (± ¼ so that rounding
        # keeps the ends' half-steps their share).
        lo = jnp.maximum(lo, jax.nn.sigmoid((-bound - 0.25 - alpha_empty) / scale))
        hi = jnp.minimum(hi, jax.nn.sigmoid((bound + 0.25 - alpha_empty) / scale))
    u = lo + (hi - lo) * jax.random.uniform(key, shape)
    k = round_half(alpha_empty + scale * (jnp.log(u) - jnp.log1p(-u)))
    if bound is not None:
        k = jnp.clip(k, -bound, bound)
    return k


def fair_komi(alpha, to_play, bound=None):
    """Black's komi that makes a position fair for its player to move.

    The player's signed komi becomes −α rounded to ½ℤ (clipped to
    [−bound, bound] when given: a komi beyond the board's N² decides the
    game); black's komi is ``−signed_komi · to_play``.
    """
    k = round_half(-alpha)
    if bound is not None:
        k = jnp.clip(k, -bound, bound)
    return _no_negative_zero(-k * to_play.astype(jnp.float32))


def _tree_where(mask, new, old):
    def pick(n, o):
        m = mask.reshape(mask.shape + (1,) * (n.ndim - mask.ndim))
        return jnp.where(m, n, o)

    return jax.tree_util.tree_map(pick, new, old)


def init_selfplay(rules: go.GoRules, config: SelfPlayConfig, key, alpha_empty, beta_empty) -> SelfPlayState:
    """Fresh slots, all complete games with sampled (or fixed) komi."""
    b, c = config.batch_size, config.branch_queue_capacity
    k_komi, k_resign = jax.random.split(key)
    k_blunders = jax.random.fold_in(key, 2)
    komi = _complete_komi(rules, config, k_komi, alpha_empty, beta_empty, (b,))
    empty = go.init(rules, 0.0)
    games = jax.tree_util.tree_map(lambda x: jnp.broadcast_to(x, (b,) + x.shape), empty).replace(komi=komi)
    queue = jax.tree_util.tree_map(lambda x: jnp.broadcast_to(x, (c,) + x.shape), empty)
    return SelfPlayState(
        games=games,
        game_id=jnp.arange(b, dtype=jnp.int32),
        is_branch=jnp.zeros(b, bool),
        may_resign=jax.random.uniform(k_resign, (b,)) >= config.no_resign_fraction,
        would_resign=jnp.zeros(b, jnp.int8),
        branches=jnp.zeros(b, jnp.int32),
        queue=queue,
        queue_head=jnp.int32(0),
        queue_size=jnp.int32(0),
        refills=jnp.int32(0),
        next_game_id=jnp.int32(b),
        queue_dropped=jnp.int32(0),
        blunders_left=blunder_allowance(config, k_blunders, (b,)),
    )


def blunder_allowance(config: SelfPlayConfig, key, shape) -> jax.Array:
    """The blunders each new game may play: Poisson(``blunders_allowed_mean``) (SAI's engine), or -1 (no limit)
    when the mean is negative."""
    if config.blunders_allowed_mean < 0:
        return jnp.full(shape, -1, jnp.int32)
    return jax.random.poisson(key, config.blunders_allowed_mean, shape).astype(jnp.int32)


def _complete_komi(rules, config, key, alpha_empty, beta_empty, shape):
    """Komi of new complete games: ``config.komi`` in 'fixed' mode; else drawn
    from the net's sigmoid (:func:`sample_komi`), except for a
    ``fixed_komi_share`` of games at ``config.komi`` (SAI's server: 30% at
    the board's komi, so the data keeps games where the decision is)."""
    if config.komi_mode == "fixed":
        return jnp.full(shape, config.komi, jnp.float32)
    komi = sample_komi(key, alpha_empty, beta_empty, config.komi_temperature, shape, bound=float(rules.num_points))
    if config.fixed_komi_share > 0:
        fixed = jax.random.uniform(jax.random.fold_in(key, 1), shape) < config.fixed_komi_share
        komi = jnp.where(fixed, jnp.float32(config.komi), komi)
    return komi


def _choose_moves(
    rules, config: SelfPlayConfig, key, states, out: search.SearchOutput, may_resign=None, blunders_left=None
):
    """Opening sampling, blunder detection and the LZS pass rule.

    Only moves with more than ``random_min_visits`` visits whose value (on
    the [0, 1] scale) is above ``max(random_losing_threshold,
    resign_threshold)`` may be sampled (the threshold only when it is > 0),
    SAI's rule (Leela Zero's
    ``--randomvisits``, default 1: "no matter how badly they are evaluated,
    we still have a fair chance of playing them"; SAI's 5% losing
    threshold); when no move qualifies, the best move is played. 0 and 0
    (the ``SelfPlayConfig`` defaults, and the Gumbel configs) sample every
    visited move.

    An opening move is drawn ∝ w^(1/T) with w the root's visit counts
    (``opening_policy='visits'``, SAI) or the search's improved policy, its
    policy target (``'improved'``). For PUCT the two are the same
    distribution; for Gumbel at a few simulations they are not: sequential
    halving spreads its visits almost evenly over the considered actions (at
    32 simulations and 16 actions the best move holds about 5 of 32), so
    ∝ visits is close to a uniform draw among them, while the improved policy
    softmax(logits + σ(q̂)) weighs them by their values.

    ``random_takeback`` (SAI's engine, ``UCTSearch::get_best_move``): a
    sampled move whose value would make its player resign (the resign rule
    of :func:`search.should_resign` on the move's value, in a game that may
    resign, ``may_resign`` [B]) is taken back and the best move played, and
    it is no blunder. Like SAI's, it cannot fire before the N²/4 moves after
    which resignation is allowed, so it matters only where the random moves
    run past them (9×9's 25 random moves, not 7×7's 8).

    A blunder is a move more than ``blunder_threshold`` below the reference
    value: the best visited child's (``blunder_reference='best_child'``) or
    the searched move's (``'search_move'``: SAI's ``randomize_first_proportionally``
    measures the drop from its first child, the most visited). Where a
    game's ``blunders_left`` [B] is 0 (its allowance spent; -1 is no limit),
    blunders are not eligible for the random draw (SAI's
    ``is_blunder_allowed``).
    """
    q = jnp.where(jnp.isnan(out.child_q), -jnp.inf, out.child_q)
    if config.blunder_reference == "search_move":
        reference = jnp.take_along_axis(q, out.action[:, None], axis=1)[:, 0]
    else:
        reference = out.best_value
    is_blunder = q < (reference - config.blunder_threshold)[:, None]
    if config.opening_policy == "improved":
        weights = out.policy
    else:
        weights = out.visit_counts.astype(jnp.float32)
    # SAI's (and Leela Zero's) candidates for a random move: more than
    # random_min_visits visits, and a value above the losing threshold (and
    # the resign threshold); none of them: the best move.
    eligible = (weights > 0) & (out.visit_counts > config.random_min_visits)
    if config.random_losing_threshold > 0:
        eligible &= q > max(config.random_losing_threshold, config.resign_threshold)
    if blunders_left is not None:
        eligible &= ~is_blunder | (blunders_left != 0)[:, None]
    logits = jnp.where(eligible, jnp.log(jnp.maximum(weights, 1e-30)) / config.random_temperature, -jnp.inf)
    sampled = jax.random.categorical(key, logits).astype(jnp.int32)
    sampled = jnp.where(jnp.any(eligible, axis=-1), sampled, out.action)
    opening = states.move_count < config.random_moves
    if config.random_takeback:
        sampled_q = jnp.take_along_axis(q, sampled[:, None], axis=1)[:, 0]
        resigns = search.should_resign(
            sampled_q,
            states.move_count,
            threshold=config.resign_threshold,
            resign_after=search.default_resign_after(rules),
        )
        if may_resign is not None:
            resigns &= may_resign
        sampled = jnp.where(resigns, out.action, sampled)
    action = jnp.where(opening, sampled, out.action)
    blunder = opening & jnp.take_along_axis(is_blunder, action[:, None], axis=1)[:, 0]
    if config.lzs_pass_rule:
        tt = jax.vmap(lambda s: go.area_score(rules, s))(states) - states.komi
        tt = tt * states.to_play.astype(jnp.float32) / rules.num_points
        non_pass = q.at[:, rules.pass_action].set(-jnp.inf)
        better = jnp.max(non_pass, axis=-1) > tt
        action = jnp.where((action == rules.pass_action) & better, jnp.argmax(non_pass, axis=-1), action)
    return action.astype(jnp.int32), blunder


def make_chunk_fn(
    evaluator,
    rules: go.GoRules,
    search_config: search.SearchConfig,
    config: SelfPlayConfig,
    agent: search.Agent | None = None,
    *,
    ownership: bool = False,
    run_search=search.run_search,
):
    """A jitted ``chunk(params, sp_state, key, alpha_empty, beta_empty)``.

    ``agent`` is the λ/μ agent every self-play search uses (default λ = μ = 0).
    ``ownership`` records each move's resulting Tromp–Taylor ownership
    (``StepRecord.final_ownership``), from which :class:`GameCollector`
    builds the ownership targets of played-out games. ``run_search`` is the
    search (``benchmarks/selfplay.py`` passes one that costs nothing, to time
    what self-play does around the search).

    Returns ``(sp_state, records)`` with records a :class:`StepRecord` of
    shape [T, B]. ``key`` is consumed; per-move keys are folded in from it.
    """
    agent = agent or search.Agent()
    b, cap = config.batch_size, config.branch_queue_capacity
    vstep = jax.vmap(lambda s, a: go.step(rules, s, a))
    vfeatures = jax.vmap(lambda s: go.features(rules, s))
    vresign = jax.vmap(go.resign)
    vmargin = jax.vmap(lambda s: go.area_score(rules, s) - s.komi)
    voutcome = jax.vmap(lambda s: go.outcome(rules, s))
    vownership = jax.vmap(lambda s: go.ownership(rules, s).astype(jnp.int8))
    resign_after = search.default_resign_after(rules)
    empty = go.init(rules, 0.0)
    period = config.games_per_branch + 1
    fast_config = None
    if config.fast_simulations > 0 and config.full_search_prob < 1.0:
        fast = min(config.fast_simulations, search_config.num_simulations)
        fast_config = dataclasses.replace(
            search_config,
            num_simulations=fast,
            max_num_considered_actions=min(search_config.max_num_considered_actions, fast),
        )

    def one_move(params, alpha_empty, beta_empty, sp: SelfPlayState, key):
        k_search, k_choose, k_branch, k_komi, k_resign = jax.random.split(key, 5)
        states = sp.games
        active = ~states.terminated
        # Root noise (Gumbel or Dirichlet) on the first noise_moves moves of a
        # game only (counted from the empty board); after them each search is
        # deterministic and self-play plays its best move.
        noisy = (config.noise_moves < 0) | (states.move_count < config.noise_moves)
        search_keys = jax.random.split(k_search, b)

        def searched(cfg, noise):
            return run_search(
                evaluator, params, search_keys, states, rules=rules, config=cfg, agent=agent, noise_scale=noise
            )

        if fast_config is None:
            full = jnp.bool_(True)
            out = searched(search_config, noisy.astype(jnp.float32))
        else:
            # Playout cap randomisation (KataGo): the whole batch searches
            # fully with probability full_search_prob, else cheaply and
            # without noise; only full searches give policy targets.
            full = jax.random.uniform(jax.random.fold_in(k_search, 1)) < config.full_search_prob
            out = jax.lax.cond(
                full,
                lambda: searched(search_config, noisy.astype(jnp.float32)),
                lambda: searched(fast_config, jnp.zeros((b,), jnp.float32)),
            )
        action, blunder = _choose_moves(rules, config, k_choose, states, out, sp.may_resign, sp.blunders_left)
        if fast_config is not None:
            out = out.replace(policy=jnp.where(full, out.policy, 0.0))
        if fast_config is not None and config.random_full_search_only:
            # Random opening moves come from full searches only (SAI drew
            # them from its full PUCT search): on a cheap search a slot still
            # in its opening does not move, and waits for the next full one.
            # Its search is spent (counted in selfplay_evaluations).
            waiting = active & ~full & (states.move_count < config.random_moves)
            active = active & ~waiting
        else:
            waiting = None

        # Resignation.
        wants = active & search.should_resign(
            out.best_value, states.move_count, threshold=config.resign_threshold, resign_after=resign_after
        )
        resign_now = wants & sp.may_resign
        first_wish = wants & ~sp.may_resign & (sp.would_resign == 0)
        would_resign = jnp.where(first_wish, states.to_play, sp.would_resign)

        features = vfeatures(states)
        k_s = sigmoid.signed_komi(states.komi, states.to_play.astype(jnp.float32))
        new_states = vstep(states, action)
        new_states = _tree_where(resign_now, vresign(states), new_states)
        if waiting is not None:
            new_states = _tree_where(waiting, states, new_states)
        finished = active & new_states.terminated
        margin = jnp.where(resign_now, out.score_estimate * states.to_play.astype(jnp.float32), vmargin(new_states))
        record = StepRecord(
            planes=features_lib.pack_planes(features),
            to_play=states.to_play,
            signed_komi=k_s,
            policy=out.policy,
            game_id=sp.game_id,
            move_number=states.move_count,
            is_branch=sp.is_branch,
            active=active,
            action=jnp.where(resign_now, -1, action),
            blunder=blunder & active,
            root_alpha=out.root_alpha,
            root_beta=out.root_beta,
            branched=jnp.zeros(b, bool),
            finished=finished,
            winner=voutcome(new_states),
            margin=margin,
            resigned=resign_now,
            may_resign=sp.may_resign,
            would_resign=would_resign,
            komi=states.komi,
            length=new_states.move_count,
            final_ownership=vownership(new_states) if ownership else None,
            full_search=jnp.broadcast_to(full, (b,)),
        )

        # Queue branches from this move's positions (before the move). A full
        # queue drops its oldest entries; a game queues at most
        # max_branches_per_game branches.
        under_cap = (config.max_branches_per_game <= 0) | (sp.branches < config.max_branches_per_game)
        push = active & under_cap & (jax.random.uniform(k_branch, (b,)) < config.branch_prob)
        n_push = jnp.sum(push)
        rank = jnp.cumsum(push) - 1
        kept = push & (rank >= n_push - cap)  # more pushes than slots: the latest win
        slot = jnp.where(kept, (sp.queue_head + sp.queue_size + rank) % cap, cap)
        branch_states = states.replace(komi=fair_komi(out.root_alpha, states.to_play, float(rules.num_points)))
        queue = jax.tree_util.tree_map(lambda q, s: q.at[slot].set(s, mode="drop"), sp.queue, branch_states)
        overflow = jnp.maximum(sp.queue_size + n_push - cap, 0)
        queue_head = (sp.queue_head + overflow) % cap
        queue_size = jnp.minimum(sp.queue_size + n_push, cap)
        record = record.replace(branched=kept)

        # Refill finished slots: complete games and branches at 2:1.
        refill = finished
        r_rank = jnp.cumsum(refill) - 1
        index = sp.refills + r_rank
        want_branch = refill & (index % period == period - 1)
        b_rank = jnp.cumsum(want_branch) - 1
        take_branch = want_branch & (b_rank < queue_size)
        q_index = (queue_head + b_rank) % cap
        popped = jax.tree_util.tree_map(lambda q: q[q_index], queue)
        komi = _complete_komi(rules, config, k_komi, alpha_empty, beta_empty, (b,))
        spent = jnp.where(active & blunder & (sp.blunders_left > 0), 1, 0)
        allowance = blunder_allowance(config, jax.random.fold_in(k_komi, 2), (b,))
        fresh = jax.tree_util.tree_map(lambda x: jnp.broadcast_to(x, (b,) + x.shape), empty).replace(komi=komi)
        new_game = _tree_where(take_branch, popped, fresh)
        n_taken = jnp.sum(take_branch)
        games = _tree_where(refill, new_game, new_states)
        ids = sp.next_game_id + r_rank
        sp = SelfPlayState(
            games=games,
            game_id=jnp.where(refill, ids, sp.game_id),
            is_branch=jnp.where(refill, take_branch, sp.is_branch),
            may_resign=jnp.where(
                refill, jax.random.uniform(k_resign, (b,)) >= config.no_resign_fraction, sp.may_resign
            ),
            would_resign=jnp.where(refill, jnp.int8(0), would_resign).astype(jnp.int8),
            branches=jnp.where(refill, 0, sp.branches + kept.astype(jnp.int32)),
            queue=queue,
            queue_head=(queue_head + n_taken) % cap,
            queue_size=queue_size - n_taken,
            refills=sp.refills + jnp.sum(refill),
            next_game_id=sp.next_game_id + jnp.sum(refill),
            queue_dropped=sp.queue_dropped + overflow,
            blunders_left=jnp.where(refill, allowance, sp.blunders_left - spent),
        )
        return sp, record

    @jax.jit
    def chunk(params, sp, key, alpha_empty, beta_empty):
        keys = jax.random.split(key, config.chunk_moves)
        return jax.lax.scan(functools.partial(one_move, params, alpha_empty, beta_empty), sp, keys)

    return chunk


def make_refresh_fn(evaluator):
    """A jitted ``refresh(params, sp_state) -> sp_state``: the queued branches' komi made fair by ``params``.

    Each queued position gets the komi that makes it fair for its player to
    move under the net ``params`` (signed komi −α_s, rounded to ½ℤ). The
    pipeline calls it when a generation starts, so branches queued by an
    older net start at the current net's fair komi.
    """

    @jax.jit
    def refresh(params, sp: SelfPlayState) -> SelfPlayState:
        _, alpha, _ = evaluator(params, sp.queue)
        return sp.replace(
            queue=sp.queue.replace(komi=fair_komi(alpha, sp.queue.to_play, float(sp.queue.board.shape[-1])))
        )

    return refresh


# ---------------------------------------------------------------------------
# Host-side bookkeeping between chunks.


@dataclasses.dataclass(frozen=True)
class FinishedGame:
    """One finished self-play game, as the host sees it."""

    game_id: int
    is_branch: bool
    komi: float
    winner: int  # black's view
    margin: float  # black minus white, komi included
    resigned: bool
    may_resign: bool
    would_resign: int
    length: int  # total moves (branch games count from the empty board)
    start_move: int  # move number of the first recorded position
    actions: tuple[int, ...]  # moves played from the first recorded position
    start_planes: np.ndarray  # [N, N, 2] packed planes of the first position
    start_to_play: int
    blunder_move: int  # move number of the last blunder, -1 if none
    rows: int  # training rows kept
    score_errors: tuple[float, ...] = ()  # |α + k − final margin| per position, games counted to the end
    score_betas: tuple[float, ...] = ()  # the root β of the same positions (nan if not recorded)


# The per-record fields a collector keeps until its game ends.
_RECORD_FIELDS = (
    "planes",
    "to_play",
    "signed_komi",
    "policy",
    "game_id",
    "move_number",
    "is_branch",
    "action",
    "blunder",
    "root_alpha",
    "root_beta",
)


class GameCollector:
    """Joins per-move records into finished games and training rows.

    Records of unfinished games are held until the game ends, possibly in a
    later generation; rows are tagged with the generation whose net played
    the move. With ``opponent_policy`` the rows carry opponent-reply targets
    (``TrainingRows.opponent_policy``: the next position's policy, zeros at
    a game's last position).

    Vectorised (issue 34): a chunk's active records are kept as one segment
    of numpy arrays, and a chunk's finished games are gathered from the
    segments, ordered and turned into rows with array operations; only the
    :class:`FinishedGame` summaries are built one game at a time. Rows come
    out in the order of the old record-by-record loop (games in the order
    their last moves appear in the chunk, (move, slot) order; each game's
    positions in move order), byte for byte (tests/selfplay_loop_test.py).
    """

    def __init__(self, rules: go.GoRules, *, opponent_policy: bool = False):
        self.rules = rules
        self.opponent_policy = bool(opponent_policy)
        # [(fields: dict of [R, ...] arrays, alive: [R] bool)], oldest first.
        self._segments: list[tuple[dict[str, np.ndarray], np.ndarray]] = []
        self._open: set[int] = set()

    def add_chunk(self, records: StepRecord, generation: int):
        """Consumes a [T, B] chunk; returns (rows as TrainingRows or None, [FinishedGame])."""
        rec = jax.device_get(records)
        t_idx, i_idx = np.nonzero(np.asarray(rec.active))  # (move, slot) order
        if t_idx.size == 0:
            return None, []
        seg = {}
        for name in _RECORD_FIELDS:
            value = getattr(rec, name)
            seg[name] = np.full(t_idx.size, np.nan, np.float32) if value is None else np.asarray(value)[t_idx, i_idx]
        seg["generation"] = np.full(t_idx.size, generation, np.int32)
        self._segments.append((seg, np.ones(t_idx.size, bool)))
        self._open.update(np.unique(seg["game_id"]).tolist())

        fin_t, fin_i = np.nonzero(np.asarray(rec.finished) & np.asarray(rec.active))
        if fin_t.size == 0:
            return None, []
        # Row-major (move, slot) order: the order the old loop finished games in.
        order = np.lexsort((fin_i, fin_t))
        fin_t, fin_i = fin_t[order], fin_i[order]
        fin_gid = np.asarray(rec.game_id)[fin_t, fin_i]
        self._open.difference_update(fin_gid.tolist())
        return self._finish(rec, fin_t, fin_i, fin_gid)

    def _gather(self, fin_gid):
        """The finished games' records from every segment, oldest first; consumes them."""
        parts, kept = [], []
        for seg, alive in self._segments:
            take = alive & np.isin(seg["game_id"], fin_gid)
            if take.any():
                parts.append({k: v[take] for k, v in seg.items()})
                alive &= ~take
            if alive.any():
                kept.append((seg, alive))
        self._segments = kept
        return {k: np.concatenate([p[k] for p in parts]) for k in parts[0]}

    def _finish(self, rec, fin_t, fin_i, fin_gid):
        a = self._gather(fin_gid)
        # Each record's game, as its rank among the finished games; records
        # sorted by that rank, stably, keep their move order within a game.
        by_gid = np.argsort(fin_gid, kind="stable")
        rank = by_gid[np.searchsorted(fin_gid[by_gid], a["game_id"])]
        perm = np.argsort(rank, kind="stable")
        a = {k: v[perm] for k, v in a.items()}
        g = rank[perm]
        n_games = fin_gid.size
        starts = np.searchsorted(g, np.arange(n_games))
        ends = np.append(starts[1:], g.size)

        winner = np.asarray(rec.winner)[fin_t, fin_i].astype(np.int64)
        margin = np.asarray(rec.margin)[fin_t, fin_i].astype(np.float64)
        resigned = np.asarray(rec.resigned)[fin_t, fin_i].astype(bool)
        p = a["to_play"].astype(np.int64)
        mn = a["move_number"]

        # Rows after each game's last blunder only (docs/design.md §6).
        last_blunder = np.full(n_games, -1, np.int64)
        np.maximum.at(last_blunder, g[a["blunder"]], mn[a["blunder"]])
        keep = mn > last_blunder[g]

        cols = {
            "planes": a["planes"].astype(np.uint8),
            "to_play": a["to_play"].astype(np.int8),
            "policy": a["policy"].astype(np.float32),
            "signed_komi": a["signed_komi"].astype(np.float32),
            "z": ((winner[g] * p + 1) / 2.0).astype(np.float32),
            "margin": (margin[g] * p).astype(np.float32),
            "game_id": a["game_id"].astype(np.int32),
            "move_number": mn.astype(np.int32),
            "is_branch": a["is_branch"].astype(np.bool_),
            "generation": a["generation"].astype(np.int32),
        }
        if rec.final_ownership is not None:
            # Ownership targets: the final Tromp–Taylor owner of each point,
            # for games played out (two passes or the move cap). A resigned
            # game's final ownership is unknown: zeros and mask False.
            own = np.asarray(rec.final_ownership)[fin_t, fin_i].astype(np.int8)
            own[resigned] = 0
            cols["ownership"] = (own[g] * a["to_play"].astype(np.int8)[:, None]).astype(np.int8)
            cols["ownership_mask"] = ~resigned[g]
        if self.opponent_policy:
            # The next recorded position of the same game, one move later, is
            # the one after this move; none after a game's last move.
            follows = (g[1:] == g[:-1]) & (mn[1:] == mn[:-1] + 1)
            opp = np.zeros_like(cols["policy"])
            opp[:-1][follows] = cols["policy"][1:][follows]
            cols["opponent_policy"] = opp
        rows = replay.TrainingRows(valid=np.ones(int(keep.sum()), np.bool_), **{k: v[keep] for k, v in cols.items()})

        # The score estimate α + k_s of every position against the final
        # Tromp–Taylor margin from its player's view (counted games only: a
        # resigned game's margin is itself an estimate).
        errors = np.abs(a["root_alpha"].astype(np.float64) + a["signed_komi"].astype(np.float64) - margin[g] * p)
        kept_per_game = np.add.reduceat(keep.astype(np.int64), starts) if g.size else np.zeros(0, np.int64)
        finished = []
        for k in range(n_games):
            lo, hi = starts[k], ends[k]
            t, i = fin_t[k], fin_i[k]
            counted = not resigned[k]
            finished.append(
                FinishedGame(
                    game_id=int(fin_gid[k]),
                    is_branch=bool(rec.is_branch[t, i]),
                    komi=float(rec.komi[t, i]),
                    winner=int(winner[k]),
                    margin=float(margin[k]),
                    resigned=bool(resigned[k]),
                    may_resign=bool(rec.may_resign[t, i]),
                    would_resign=int(rec.would_resign[t, i]),
                    length=int(rec.length[t, i]),
                    start_move=int(mn[lo]),
                    actions=tuple(a["action"][lo:hi].tolist()),
                    start_planes=a["planes"][lo],
                    start_to_play=int(a["to_play"][lo]),
                    blunder_move=int(last_blunder[k]),
                    rows=int(kept_per_game[k]),
                    score_errors=tuple(errors[lo:hi].tolist()) if counted else (),
                    score_betas=tuple(a["root_beta"][lo:hi].astype(np.float64).tolist()) if counted else (),
                )
            )
        return (rows if rows.num_rows else None), finished

    @property
    def pending_games(self) -> int:
        return len(self._open)


def start_board(rules: go.GoRules, game: FinishedGame):
    """Black and white stones (action lists) of a game's first recorded position."""
    bits = np.unpackbits(game.start_planes, axis=-1, count=16)
    own, opp = bits[..., 0].reshape(-1), bits[..., 4].reshape(-1)
    mover = np.flatnonzero(own).tolist()
    other = np.flatnonzero(opp).tolist()
    return (mover, other) if game.start_to_play == 1 else (other, mover)
