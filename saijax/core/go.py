"""Go rules as pure, unbatched JAX functions (docs/design.md §1, §2).

The rules follow the Tromp–Taylor ruleset as SAI uses it:

* actions are ``row * N + col`` with row 0 the top row (GTP row N) and
  column 0 the A column; pass is ``N * N``;
* suicide is illegal; ko is positional superko over the whole game, the
  start (and handicap) position included;
* the game ends after two consecutive passes, on resignation, or when
  ``max_moves`` moves (passes included) have been played;
* scoring is Tromp–Taylor area, without dead-stone removal.

Every function here works on one game. Batch with ``jax.vmap``; the board
size is static (it lives on the frozen :class:`GoRules`), komi is traced per
game.

The state carries everything the rest of the project needs to be cheap at
every search node: the legal mask for the player to move (computed once per
``step``), the last four positions' stones and the SAI "illegal" and "last
liberty" planes, chain ids for incremental capture, and a 64-bit Zobrist
hash history for positional superko.

The hash history is the game's superko record, and the one large field. A
search tree does not store it per node: it keeps its nodes as
:func:`without_history` states and steps them with ``step(..., seen=...)``,
whose ``seen`` answers from the root's record and the positions on the path
from the root (``saijax.core.search``). Superko stays exact.

Positions are hashed additively: ``hash = Σ_p Z[colour(p), p]`` in uint32
arithmetic (two independent words, so 64 bits in all). Addition, unlike xor,
can be segment-summed over chains, which gives the hash of every candidate
move's resulting position (captures included) in one vectorised pass.

Illegal actions inside ``jit``: :func:`step` returns the state unchanged
(a no-op) when the action is illegal or the game has ended, so a bad action
never corrupts the board. :func:`play` is the checked Python-level wrapper.
"""

from __future__ import annotations

import dataclasses
import functools
import math
import re
from collections.abc import Callable, Sequence

import chex
import jax
import jax.numpy as jnp
import numpy as np
from flax import struct

__all__ = [
    "GoRules",
    "GoState",
    "init",
    "setup",
    "step",
    "without_history",
    "in_history",
    "play",
    "resign",
    "legal_actions",
    "area_score",
    "ownership",
    "outcome",
    "features",
    "NUM_FEATURE_PLANES",
    "symmetries",
    "transform_planes",
    "transform_policy",
    "to_gtp",
    "from_gtp",
    "handicap_points",
    "spread_points",
    "MAX_KOMI",
    "check_komi",
    "to_string",
]

NUM_FEATURE_PLANES = 17
_HISTORY = 4  # positions t, t-1, t-2, t-3 in the feature planes
_GTP_LETTERS = "ABCDEFGHJKLMNOPQRSTUVWXYZ"  # I is skipped
MAX_KOMI = 10_000.0  # |komi| beyond this is not a Go game (docs/design.md §1)


def check_komi(value, name: str = "komi") -> float:
    """The one komi rule (docs/design.md §1); returns the komi as a float.

    A komi is a number, a multiple of ½ (half-integer komi cannot draw,
    integer komi can) with |komi| ≤ :data:`MAX_KOMI`. The config, the arena's
    ``MatchSettings`` and the GTP engine (``komi``, ``loadsgf``, ``--komi``)
    all check komi here.

    Args:
      value: the komi: an int or float (Python or NumPy); a bool, a string or
        any other type is not a number.
      name: the field named in the error, e.g. "selfplay.komi".

    Raises:
      ValueError: naming ``name`` and the bad value.
    """
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise ValueError(f"{name} must be a number, got {value!r}")
    komi = float(value)
    # The range first: round() of an infinite double (2 · 1e308) raises OverflowError.
    if not math.isfinite(komi) or abs(komi) > MAX_KOMI or komi * 2 != round(komi * 2):
        raise ValueError(f"{name} must be a multiple of 0.5 from {-MAX_KOMI:g} to {MAX_KOMI:g}, got {komi!r}")
    return komi


@dataclasses.dataclass(frozen=True)
class GoRules:
    """Static game parameters. Frozen and hashable, so usable as a jit static.

    Attributes:
      size: board size N, 2..19.
      max_moves: move cap (passes included); default 2·N². When the cap is
        reached the game ends and is scored as it stands.
      point_weights: None (standard Go: every point counts 1), or N² finite
        per-point weights that :func:`area_score` (hence :func:`outcome`,
        self-play's outcomes and α targets, and the search's terminal
        leaves) uses in place of 1: the offline playing styles
        (:mod:`saijax.play.styles`) train nets on such weighted scores.
    """

    size: int
    max_moves: int | None = None
    point_weights: tuple[float, ...] | None = None

    def __post_init__(self):
        if not isinstance(self.size, (int, np.integer)) or isinstance(self.size, bool):
            raise ValueError(f"board size must be an int in 2..19, got {self.size!r}")
        if not 2 <= int(self.size) <= 19:
            raise ValueError(f"board size must be in 2..19, got size={self.size}")
        object.__setattr__(self, "size", int(self.size))
        if self.max_moves is None:
            object.__setattr__(self, "max_moves", 2 * self.size * self.size)
        elif int(self.max_moves) < 1:
            raise ValueError(f"max_moves must be >= 1, got max_moves={self.max_moves}")
        else:
            object.__setattr__(self, "max_moves", int(self.max_moves))
        if self.point_weights is not None:
            weights = tuple(float(w) for w in np.asarray(self.point_weights, np.float64).reshape(-1))
            if len(weights) != self.size * self.size or not all(math.isfinite(w) for w in weights):
                raise ValueError(
                    f"point_weights must be {self.size * self.size} finite numbers for a "
                    f"{self.size}x{self.size} board, got {len(weights)} values"
                )
            object.__setattr__(self, "point_weights", weights)

    @property
    def num_points(self) -> int:
        return self.size * self.size

    @property
    def num_actions(self) -> int:
        return self.size * self.size + 1

    @property
    def pass_action(self) -> int:
        return self.size * self.size


@struct.dataclass
class GoState:
    """One game's state. Unbatched; ``jax.vmap`` adds a leading batch axis.

    Shapes use P = N*N points and H = W² history slots, the smallest square
    with H ≥ max_moves + 1 (the superko lookup reads the history as W blocks
    of W).
    """

    board: chex.Array  # [P] int8: +1 black, -1 white, 0 empty
    to_play: chex.Array  # [] int8: +1 black, -1 white
    komi: chex.Array  # [] float32, black's komi (subtracted from black's area)
    move_count: chex.Array  # [] int32, moves played, passes included
    passes: chex.Array  # [] int32, consecutive passes just played
    terminated: chex.Array  # [] bool
    winner: chex.Array  # [] int8: resignation winner (+1/-1), 0 = decided by score
    legal: chex.Array  # [P+1] bool, legal actions for to_play (superko included)
    chain: chex.Array  # [P] int16, chain representative per stone, P if empty
    atari_stones: chex.Array  # [P] bool, stones whose chain has one liberty
    past_boards: chex.Array  # [3, P] int8, boards at t-1, t-2, t-3 (0 before start)
    illegal_planes: chex.Array  # [4, P] bool, SAI plane 3 at t..t-3
    atari_planes: chex.Array  # [4, P] bool, SAI plane 4 at t..t-3
    hash: chex.Array  # [2] uint32, additive Zobrist hash of the board
    # [H, 2] uint32, every position's hash so far, sorted by word 0 (padding: all ones); H = 0 without_history
    hash_history: chex.Array


# ---------------------------------------------------------------------------
# Static tables.


@functools.cache
def _tables(size: int):
    """Neighbour table and Zobrist keys for a board size (numpy, cached)."""
    n = size
    p = n * n
    nb = np.full((p, 4), p, dtype=np.int32)  # P = off board
    for r in range(n):
        for c in range(n):
            i = r * n + c
            if r > 0:
                nb[i, 0] = i - n
            if r < n - 1:
                nb[i, 1] = i + n
            if c > 0:
                nb[i, 2] = i - 1
            if c < n - 1:
                nb[i, 3] = i + 1
    rng = np.random.RandomState(20200302 + n)
    zobrist = rng.randint(1, 2**32, size=(3, p, 2), dtype=np.uint64).astype(np.uint32)
    zobrist[1] = 0  # empty points contribute nothing
    return nb, zobrist


def _neighbours(rules: GoRules):
    return jnp.asarray(_tables(rules.size)[0])


def _zobrist(rules: GoRules):
    return jnp.asarray(_tables(rules.size)[1])


def _board_hash(rules: GoRules, board):
    z = _zobrist(rules)  # [3, P, 2]
    board = board[:, None]
    per_point = jnp.where(board == 1, z[2], jnp.where(board == -1, z[0], jnp.uint32(0)))
    return jnp.sum(per_point, axis=0, dtype=jnp.uint32)


# ---------------------------------------------------------------------------
# Position analysis: liberties, legality, SAI planes.


def in_history(sorted_history, hashes):
    """bool[...]: whether each hash in ``hashes`` [..., 2] is in a superko
    record ``sorted_history`` [H, 2] (a :attr:`GoState.hash_history`).

    The history is kept sorted by its first word and read as blocks of W ≈ √H
    entries: a candidate is compared with every block's first word to find
    its block (vectorised compares, no gathers), then with the W entries of
    that block (one gather of a contiguous slice). Two different positions
    sharing a first word would need a 2^-32 coincidence and then only hide
    the later of them from the check.
    """
    h = sorted_history.shape[0]
    width = math.isqrt(h)
    if width * width != h:
        raise ValueError(f"the superko history must have a square number of slots, not {h}")
    blocks = sorted_history.reshape(width, width, 2)
    firsts = blocks[:, 0, 0]  # [W], sorted
    flat = hashes.reshape(-1, 2)
    block = jnp.maximum(jnp.sum(firsts[None, :] <= flat[:, :1], axis=1) - 1, 0)
    found = blocks[block]  # [K, W, 2]
    hit = jnp.any((found[:, :, 0] == flat[:, None, 0]) & (found[:, :, 1] == flat[:, None, 1]), axis=1)
    return hit.reshape(hashes.shape[:-1])


def _history_slots(rules: GoRules) -> int:
    """H = W², the smallest square with room for every position of a game
    (the start and one per move)."""
    return (math.isqrt(rules.max_moves) + 1) ** 2


def _insert_sorted(sorted_history, new_hash, insert):
    """Inserts ``new_hash`` [2] into the sorted history [H, 2], dropping the last.

    The history has H ≥ max_moves + 1 slots: the start position plus unused
    slots holding the all-ones sentinel, which sorts last. Each move consumes
    one sentinel, so only sentinels are ever dropped. With ``insert`` False
    (a traced bool) the history is returned unchanged.
    """
    h = sorted_history.shape[0]
    pos = jnp.searchsorted(sorted_history[:, 0], new_hash[0], side="left", method="scan_unrolled")
    pos = jnp.where(insert, pos, h)
    i = jnp.arange(h)[:, None]
    shifted = jnp.concatenate([sorted_history[:1], sorted_history[:-1]])
    return jnp.where(i < pos, sorted_history, jnp.where(i == pos, new_hash[None, :], shifted))


def _neighbour_values(rules: GoRules, x, fill):
    """[P, ...] values -> [P, 4, ...] values at the up/down/left/right neighbours.

    Implemented with pad-and-slice on the [N, N] grid rather than a gather:
    under vmap on CPU, gathers are several times slower than shifted copies.
    """
    n = rules.size
    grid = x.reshape((n, n) + x.shape[1:])
    pad = [(1, 1), (1, 1)] + [(0, 0)] * (x.ndim - 1)
    padded = jnp.pad(grid, pad, constant_values=fill)
    shifted = [
        padded[:-2, 1:-1],  # row - 1
        padded[2:, 1:-1],  # row + 1
        padded[1:-1, :-2],  # col - 1
        padded[1:-1, 2:],  # col + 1
    ]
    return jnp.stack(shifted, axis=2).reshape((n * n, 4) + x.shape[1:])


def _analyze(rules: GoRules, board, chain, to_play, ko_point, cur_hash):
    """Liberty analysis of a position for the player to move.

    Returns (basic_legal [P], candidates [P, 2], illegal_plane [P],
    atari_plane [P], atari_stones [P]). ``basic_legal`` is legality without
    superko; ``candidates`` holds the hash of the position each point's move
    would create, for the caller's superko check (:func:`_legal_mask`).
    ``ko_point`` is the simple-ko point (or P) created by the last move; it is
    only used for the SAI illegal plane, since superko covers it for legality.

    One segment-sum over chains gives, per chain, the liberty multiset's count
    L and sum S (packed in one word), sum of squares Q, and the chain's hash. A chain has exactly
    one distinct liberty iff S = L·m and Q = L·m² for the integer m = S / L
    (then Σ (p − m)² = 0), which is exact in 32-bit integers for N ≤ 19.
    """
    n_pts = rules.num_points
    board = board.astype(jnp.int32)
    chain = chain.astype(jnp.int32)
    empty = board == 0
    stone = ~empty
    points = jnp.arange(n_pts, dtype=jnp.uint32)
    nb_colour = _neighbour_values(rules, board, 2)  # [P, 4]; off board = 2
    nb_chain = _neighbour_values(rules, chain, n_pts)  # [P, 4]

    z = _zobrist(rules)
    stone_z = jnp.where((board == 1)[:, None], z[2], jnp.where((board == -1)[:, None], z[0], jnp.uint32(0)))  # [P, 2]
    # Each (empty point e, adjacent stone) pair adds (2^20 + e, e²) to the
    # stone's chain: summed first per stone over its four neighbours (dense),
    # then one segment-sum of a row per stone (with the stone's hash) over
    # chains. Count (≤ 4·361 < 2^11) and sum (≤ 4·361·360 < 2^20) share one word.
    nb_points = _neighbour_values(rules, points, 0)  # [P, 4]
    is_lib = (nb_colour == 0) & stone[:, None]
    lib_word = jnp.sum(jnp.where(is_lib, nb_points + jnp.uint32(1 << 20), 0), axis=1, dtype=jnp.uint32)
    lib_sq = jnp.sum(jnp.where(is_lib, nb_points * nb_points, 0), axis=1, dtype=jnp.uint32)
    rows = jnp.concatenate([lib_word[:, None], lib_sq[:, None], stone_z], axis=1)  # [P, 4]
    per_chain = jax.ops.segment_sum(rows, jnp.where(stone, chain, n_pts), num_segments=n_pts + 1)  # [P+1, 4]
    mine = per_chain[jnp.where(stone, chain, n_pts)]  # [P, 4]
    count, lib_sum, lib_sq = mine[:, 0] >> 20, mine[:, 0] & jnp.uint32((1 << 20) - 1), mine[:, 1]
    mean = lib_sum // jnp.maximum(count, 1)
    atari_stones = stone & (count > 0) & (lib_sum == count * mean) & (lib_sq == count * mean * mean)
    chain_hash = mine[:, 2:]  # [P, 2]
    nb_atari = _neighbour_values(rules, atari_stones, False)  # [P, 4]

    c = to_play.astype(jnp.int32)
    has_liberty = jnp.any(nb_colour == 0, axis=1)
    capture_dir = (nb_colour == -c) & nb_atari  # [P, 4]
    captures = jnp.any(capture_dir, axis=1)
    friendly_safe = jnp.any((nb_colour == c) & ~nb_atari, axis=1)
    not_suicide = has_liberty | captures | friendly_safe
    basic_legal = empty & not_suicide

    # Hash of the position each candidate move would create. Each captured
    # chain counts once even if it touches the move on several sides.
    same = nb_chain[:, :, None] == nb_chain[:, None, :]  # [P, 4, 4]
    earlier = jnp.tril(jnp.ones((4, 4), bool), k=-1)  # e < d
    dup = jnp.any(same & capture_dir[:, None, :] & earlier[None], axis=2)
    include = capture_dir & ~dup
    nb_hash = _neighbour_values(rules, chain_hash, 0)  # [P, 4, 2]
    removed = jnp.sum(jnp.where(include[:, :, None], nb_hash, jnp.uint32(0)), axis=1, dtype=jnp.uint32)
    own_z = jnp.where(c == 1, z[2], z[0])  # [P, 2]
    cand = cur_hash[None, :] + own_z - removed  # uint32 wraps

    illegal_plane = ~basic_legal | (points == ko_point)
    atari_plane = ~illegal_plane & jnp.any(nb_atari, axis=1)
    return basic_legal, cand, illegal_plane, atari_plane, atari_stones


def _legal_mask(basic_legal, repeat):
    """bool[P+1]: the legal actions, given which moves would repeat a position; pass is always legal."""
    return jnp.concatenate([basic_legal & ~repeat, jnp.array([True])])


def _chains_from_scratch(rules: GoRules, board):
    """Chain representatives (smallest point index) by label propagation."""
    n_pts = rules.num_points
    nb = _neighbours(rules)
    board = board.astype(jnp.int32)
    board_p = jnp.concatenate([board, jnp.array([2], jnp.int32)])
    same = (board_p[nb] == board[:, None]) & (board[:, None] != 0)
    init_lab = jnp.where(board != 0, jnp.arange(n_pts), n_pts)

    def body(carry):
        lab, _ = carry
        lab_p = jnp.concatenate([lab, jnp.array([n_pts])])
        new = jnp.minimum(lab, jnp.min(jnp.where(same, lab_p[nb], n_pts), axis=1))
        new = jnp.where(board != 0, new, n_pts)
        return new, jnp.any(new != lab)

    lab, _ = jax.lax.while_loop(lambda c: c[1], body, (init_lab, jnp.array(True)))
    return lab.astype(jnp.int16)


# ---------------------------------------------------------------------------
# Construction.


def handicap_points(rules: GoRules, handicap: int) -> list[int]:
    """GTP v2 fixed-handicap placement as action indices.

    Defined for N >= 7 (at most 4 stones on even sizes and on 7×7, 9 on odd
    sizes from 9). Raises ValueError otherwise.
    """
    n = rules.size
    if handicap == 0:
        return []
    max_h = 0 if n < 7 else (4 if (n % 2 == 0 or n == 7) else 9)
    if handicap < 2 or handicap > max_h:
        raise ValueError(f"handicap={handicap} is not available on {n}x{n} (allowed: 2..{max_h})")
    e = 2 if n <= 11 else 3  # 0-based edge distance: 3rd line up to 11x11, 4th above (as GNU Go)
    lo, hi, mid = e, n - 1 - e, n // 2

    def pt(col, row_from_bottom):
        return (n - 1 - row_from_bottom) * n + col

    corners = [pt(lo, lo), pt(hi, hi), pt(lo, hi), pt(hi, lo)]  # D4 Q16 D16 Q4
    sides_lr = [pt(lo, mid), pt(hi, mid)]  # D10 Q10
    sides_tb = [pt(mid, lo), pt(mid, hi)]  # K4 K16
    centre = [pt(mid, mid)]
    table = {
        2: corners[:2],
        3: corners[:3],
        4: corners,
        5: corners + centre,
        6: corners + sides_lr,
        7: corners + sides_lr + centre,
        8: corners + sides_lr + sides_tb,
        9: corners + sides_lr + sides_tb + centre,
    }
    return table[handicap]


def spread_points(rules: GoRules, count: int) -> list[int]:
    """``count`` spread-out points: free handicap where :func:`handicap_points` has none.

    GTP's ``place_free_handicap`` uses the fixed table where it is defined
    and these points elsewhere (boards below 7×7, or more stones than the
    table has). Greedy: each stone goes where it is farthest (Chebyshev
    distance) from the stones already placed, preferring the third line (the
    centre line on boards below 7×7), then the lowest action index.
    Deterministic.

    Args:
      rules: static rules (only the size is used).
      count: stones to place, 0..N².

    Returns:
      ``count`` distinct action indices, in placement order.
    """
    size = rules.size
    if isinstance(count, bool) or not isinstance(count, (int, np.integer)) or not 0 <= count <= rules.num_points:
        raise ValueError(f"count must be an int in 0..{rules.num_points} on {size}x{size}, got {count!r}")
    line = 2 if size >= 7 else (size - 1) // 2
    chosen: list[tuple[int, int]] = []
    for _ in range(int(count)):
        best, best_key = None, None
        for r in range(size):
            for c in range(size):
                if (r, c) in chosen:
                    continue
                spread = min((max(abs(r - r2), abs(c - c2)) for r2, c2 in chosen), default=size)
                edge = min(r, c, size - 1 - r, size - 1 - c)
                key = (-spread, abs(edge - line), r * size + c)
                if best_key is None or key < best_key:
                    best, best_key = (r, c), key
        chosen.append(best)
    return [r * size + c for r, c in chosen]


def setup(rules: GoRules, komi, black: Sequence[int] = (), white: Sequence[int] = (), to_play: int = 1) -> GoState:
    """A start position with the given stones (e.g. free handicap, SGF AB/AW).

    The position counts as the game's first position for superko; there is no
    earlier history, so the past feature planes are zero. Python-level: the
    stone lists and ``to_play`` are static, ``komi`` may be traced.
    """
    n_pts = rules.num_points
    board = np.zeros(n_pts, np.int8)
    for p in black:
        board[int(p)] = 1
    for p in white:
        if board[int(p)]:
            raise ValueError(f"point {to_gtp(rules, int(p))} given for both colours")
        board[int(p)] = -1
    if to_play not in (1, -1):
        raise ValueError(f"to_play must be +1 (black) or -1 (white), got {to_play}")
    return _make_state(rules, jnp.asarray(board), jnp.asarray(komi, jnp.float32), jnp.int8(to_play))


def init(rules: GoRules, komi, handicap: int = 0) -> GoState:
    """The start of a game: empty board, or GTP fixed handicap with White to move.

    Args:
      rules: static rules.
      komi: black's komi; may be traced (e.g. a different komi per vmapped game).
      handicap: static Python int; 0 or 1 for an even game (the papers' "H1" is
        an even game at komi 0.5, which the caller sets through ``komi``), 2..9
        for fixed handicap stones, after which White moves first.
    """
    handicap = int(handicap)
    if handicap <= 1:
        board = jnp.zeros(rules.num_points, jnp.int8)
        return _make_state(rules, board, jnp.asarray(komi, jnp.float32), jnp.int8(1))
    return setup(rules, komi, black=handicap_points(rules, handicap), to_play=-1)


def _make_state(rules: GoRules, board, komi, to_play) -> GoState:
    n_pts = rules.num_points
    chain = _chains_from_scratch(rules, board)
    h = _board_hash(rules, board)
    sentinel = jnp.full((_history_slots(rules) - 1, 2), np.uint32(0xFFFFFFFF), jnp.uint32)
    history = jnp.concatenate([h[None], sentinel])
    basic_legal, cand, illegal_plane, atari_plane, atari_stones = _analyze(
        rules, board, chain, to_play, jnp.int32(n_pts), h
    )
    legal = _legal_mask(basic_legal, in_history(history, cand))
    zeros_b = jnp.zeros((_HISTORY - 1, n_pts), bool)
    return GoState(
        board=board.astype(jnp.int8),
        to_play=jnp.asarray(to_play, jnp.int8),
        komi=komi,
        move_count=jnp.int32(0),
        passes=jnp.int32(0),
        terminated=jnp.array(False),
        winner=jnp.int8(0),
        legal=legal,
        chain=chain,
        atari_stones=atari_stones,
        past_boards=jnp.zeros((_HISTORY - 1, n_pts), jnp.int8),
        illegal_planes=jnp.concatenate([illegal_plane[None], zeros_b]),
        atari_planes=jnp.concatenate([atari_plane[None], zeros_b]),
        hash=h,
        hash_history=history,
    )


# ---------------------------------------------------------------------------
# Transitions.


def step(rules: GoRules, state: GoState, action, *, seen: Callable | None = None) -> GoState:
    """Plays ``action`` for the player to move. Pure and jittable.

    An illegal action (occupied, suicide, superko, out of range) or any action
    in a finished game leaves the state unchanged.

    Args:
      rules: static rules.
      state: the position.
      action: the move, ``row * N + col`` or pass ``N * N``; may be traced.
      seen: the superko record of a state that does not carry its own
        (:func:`without_history`, as the nodes of a search tree): a function
        from hashes [P, 2] to bool [P], True for the positions of the game up
        to ``state``, ``state`` included. The new position is added to it
        here. None (the default) uses and extends ``state.hash_history``.

    Raises:
      ValueError: (at trace time) ``seen`` is None and ``state`` has no
        superko record.
    """
    if seen is None and state.hash_history.shape[0] == 0:
        raise ValueError("go.step: this state has no superko record (without_history); pass seen=")
    n_pts = rules.num_points
    nb = _neighbours(rules)
    action = jnp.asarray(action, jnp.int32)
    in_range = (action >= 0) & (action <= n_pts)
    safe_action = jnp.clip(action, 0, n_pts)
    valid = in_range & state.legal[safe_action] & ~state.terminated
    is_pass = safe_action == n_pts
    c = state.to_play.astype(jnp.int32)

    board = state.board.astype(jnp.int32)
    chain = state.chain.astype(jnp.int32)
    pt = jnp.minimum(safe_action, n_pts - 1)
    board_p = jnp.concatenate([board, jnp.array([2], jnp.int32)])
    chain_p = jnp.concatenate([chain, jnp.array([n_pts], jnp.int32)])
    atari_p = jnp.concatenate([state.atari_stones, jnp.array([False])])
    nbs = nb[pt]  # [4]
    nb_col = board_p[nbs]
    nb_ch = chain_p[nbs]
    cap_ids = jnp.where((nb_col == -c) & atari_p[nbs], nb_ch, -1)  # [4]
    merge_ids = jnp.where(nb_col == c, nb_ch, -1)

    captured = jnp.any(chain[:, None] == cap_ids[None, :], axis=1) & (board == -c)
    merged = jnp.any(chain[:, None] == merge_ids[None, :], axis=1) & (board == c)
    new_board = jnp.where(captured, 0, board).at[pt].set(c)
    new_chain = jnp.where(captured, n_pts, jnp.where(merged, pt, chain)).at[pt].set(pt)
    # Simple ko: a lone stone captured exactly one stone and has one liberty.
    n_captured = jnp.sum(captured)
    lone = ~jnp.any(merge_ids >= 0)
    new_board_p = jnp.concatenate([new_board, jnp.array([2], jnp.int32)])
    lone_liberties = jnp.sum(new_board_p[nbs] == 0)
    ko_point = jnp.where(
        (n_captured == 1) & lone & (lone_liberties == 1),
        jnp.argmax(captured).astype(jnp.int32),
        n_pts,
    )
    new_board = jnp.where(is_pass, board, new_board)
    new_chain = jnp.where(is_pass, chain, new_chain)
    ko_point = jnp.where(is_pass, n_pts, ko_point)

    new_hash = _board_hash(rules, new_board)
    move_count = state.move_count + 1
    passes = jnp.where(is_pass, state.passes + 1, 0)
    terminated = (passes >= 2) | (move_count >= rules.max_moves)
    to_play = (-c).astype(jnp.int8)
    basic_legal, cand, illegal_plane, atari_plane, atari_stones = _analyze(
        rules, new_board, new_chain, to_play, ko_point, new_hash
    )
    if seen is None:
        history = _insert_sorted(state.hash_history, new_hash, valid)
        repeat = in_history(history, cand)
    else:
        history = state.hash_history
        repeat = seen(cand) | ((cand[:, 0] == new_hash[0]) & (cand[:, 1] == new_hash[1]))
    legal = _legal_mask(basic_legal, repeat) & ~terminated
    new_state = GoState(
        board=new_board.astype(jnp.int8),
        to_play=to_play,
        komi=state.komi,
        move_count=move_count,
        passes=passes,
        terminated=terminated,
        winner=state.winner,
        legal=legal,
        chain=new_chain.astype(jnp.int16),
        atari_stones=atari_stones,
        past_boards=jnp.concatenate([state.board[None], state.past_boards[:-1]]),
        illegal_planes=jnp.concatenate([illegal_plane[None], state.illegal_planes[:-1]]),
        atari_planes=jnp.concatenate([atari_plane[None], state.atari_planes[:-1]]),
        hash=new_hash,
        hash_history=history,
    )
    # An invalid action changes nothing (_insert_sorted already left the history alone).
    return jax.tree_util.tree_map(
        lambda new, old: jnp.where(valid, new, old), new_state, state.replace(hash_history=history)
    )


def without_history(state: GoState) -> GoState:
    """``state`` without its superko record (``hash_history`` [0, 2]).

    What a search tree stores per node: the record is most of a state's bytes
    (1.4 of 2.7 kB on 9×9, 5.8 of 11.6 kB on 19×19) and the same for every
    node but the positions below the root. Step such a state with
    ``step(..., seen=...)``. Works on a batched state too.
    """
    return state.replace(hash_history=jnp.zeros(state.hash_history.shape[:-2] + (0, 2), jnp.uint32))


def resign(state: GoState) -> GoState:
    """The player to move resigns: the game ends and the opponent wins."""
    return state.replace(
        terminated=jnp.array(True),
        winner=(-state.to_play).astype(jnp.int8),
        legal=jnp.zeros_like(state.legal),
    )


def legal_actions(rules: GoRules, state: GoState):
    """bool[N*N+1]: legal actions for the player to move (all False once ended)."""
    del rules
    return state.legal


def play(rules: GoRules, state: GoState, action) -> GoState:
    """Checked, Python-level :func:`step`. Raises ValueError on a bad move.

    ``action`` may be an int or a GTP vertex string ("D4", "pass").
    """
    if isinstance(action, str):
        action = from_gtp(rules, action)
    action = int(action)
    if bool(state.terminated):
        raise ValueError("the game has ended; no more moves can be played")
    if not 0 <= action <= rules.pass_action:
        raise ValueError(f"action {action} is out of range 0..{rules.pass_action}")
    if not bool(state.legal[action]):
        board = np.asarray(state.board)
        why = "occupied" if board[action] != 0 else "suicide or superko"
        colour = "black" if int(state.to_play) == 1 else "white"
        raise ValueError(f"illegal move {to_gtp(rules, action)} for {colour}: {why}")
    return _jit_step(rules)(state, action)


@functools.cache
def _jit_step(rules: GoRules):
    return jax.jit(functools.partial(step, rules))


# ---------------------------------------------------------------------------
# Scoring.


def _row_bits(mask):
    """[..., N, N] bool -> [..., N] uint32: row r's bit c is ``mask[..., r, c]`` (N ≤ 19 < 32)."""
    bit = jnp.left_shift(jnp.uint32(1), jnp.arange(mask.shape[-1], dtype=jnp.uint32))
    return jnp.sum(jnp.where(mask, bit, jnp.uint32(0)), axis=-1, dtype=jnp.uint32)


def ownership(rules: GoRules, state: GoState):
    """int32[P]: Tromp–Taylor owner of each point (+1 black, -1 white, 0 neither).

    An empty point is a colour's if it reaches that colour's stones through
    empty points. Both colours' reach grows one step an iteration until
    neither grows, on bitboards: one uint32 per row (bit c = column c), so a
    step is a few shifts and masks of [2, N] words rather than a gather of
    every point's four neighbours (the search scores terminal leaves in most
    of its simulations).
    """
    n = rules.size
    board = state.board.astype(jnp.int32)
    grid = board.reshape(n, n)
    empty = _row_bits(grid == 0)  # [N]
    zero = jnp.zeros((2, 1), jnp.uint32)

    def body(carry):
        reach, _ = carry  # [2, N]: black's, white's
        vertical = jnp.concatenate([reach[:, 1:], zero], axis=1) | jnp.concatenate([zero, reach[:, :-1]], axis=1)
        grown = reach | (((reach << 1) | (reach >> 1) | vertical) & empty)  # bit N, off the board, is not empty
        return grown, jnp.any(grown != reach)

    start = jnp.stack([_row_bits(grid == 1), _row_bits(grid == -1)])
    reach, _ = jax.lax.while_loop(lambda c: c[1], body, (start, jnp.array(True)))
    bits = ((reach[:, :, None] >> jnp.arange(n, dtype=jnp.uint32)) & 1).astype(bool).reshape(2, n * n)
    rb, rw = bits[0], bits[1]
    return jnp.where(board != 0, board, jnp.where(rb & ~rw, 1, jnp.where(rw & ~rb, -1, 0)))


def area_score(rules: GoRules, state: GoState, weights=None):
    """Black area minus white area (Tromp–Taylor), komi not included.

    Args:
      weights: optional float[P] per-point weights (playing-style experiments
        score territory with weights); None uses ``rules.point_weights``,
        which is None (every point counts 1) in standard Go.

    Returns:
      float32 scalar.
    """
    own = ownership(rules, state).astype(jnp.float32)
    if weights is None:
        weights = rules.point_weights
    if weights is None:
        return jnp.sum(own)
    return jnp.sum(own * jnp.asarray(weights, jnp.float32))


def outcome(rules: GoRules, state: GoState, weights=None):
    """+1 black wins, -1 white wins, 0 draw (komi included; resignation wins)."""
    margin = area_score(rules, state, weights) - state.komi
    by_score = jnp.sign(margin).astype(jnp.int8)
    return jnp.where(state.winner != 0, state.winner, by_score)


# ---------------------------------------------------------------------------
# Network input.


def features(rules: GoRules, state: GoState):
    """float32[N, N, 17]: SAI's input planes (docs/design.md §2).

    Layout: [own t..t-3, opp t..t-3, illegal t..t-3, last-liberty t..t-3, ones].
    "Own" is the player to move now, at every time step.
    """
    n = rules.size
    boards = jnp.concatenate([state.board[None], state.past_boards]).astype(jnp.int32)  # [4, P]
    c = state.to_play.astype(jnp.int32)
    planes = jnp.concatenate(
        [
            boards == c,
            boards == -c,
            state.illegal_planes,
            state.atari_planes,
            jnp.ones((1, n * n), bool),
        ]
    ).astype(jnp.float32)  # [17, P]
    return planes.T.reshape(n, n, NUM_FEATURE_PLANES)


# ---------------------------------------------------------------------------
# Symmetries.


def _dihedral(x, k):
    """Applies dihedral transform k (0..7) to the two leading spatial axes."""
    if k >= 4:
        x = jnp.swapaxes(x, 0, 1)
    return jnp.rot90(x, k % 4, axes=(0, 1))


@functools.cache
def _policy_perm(size: int, k: int):
    idx = np.arange(size * size).reshape(size, size)
    perm = np.asarray(_dihedral(jnp.asarray(idx), k)).reshape(-1)
    # transformed[i] = original[perm[i]]
    return np.concatenate([perm, [size * size]])


def transform_planes(planes, k: int):
    """Dihedral transform k in 0..7 of [N, N, ...] planes (static k)."""
    return _dihedral(planes, int(k))


def transform_policy(rules: GoRules, policy, k: int):
    """The same transform for a [..., N*N+1] policy vector; pass stays fixed."""
    return jnp.take(policy, jnp.asarray(_policy_perm(rules.size, int(k))), axis=-1)


def symmetries(rules: GoRules):
    """The 8 dihedral transforms as (planes_fn, policy_fn, inverse_index) triples.

    ``policy_fn(features_policy)`` maps a policy indexed like the untransformed
    board to the transformed board, consistently with ``planes_fn``.
    """
    inverse = [0, 3, 2, 1, 4, 5, 6, 7]
    out = []
    for k in range(8):
        out.append(
            (
                functools.partial(transform_planes, k=k),
                functools.partial(transform_policy, rules, k=k),
                inverse[k],
            )
        )
    return out


# ---------------------------------------------------------------------------
# GTP vertices and display.


def to_gtp(rules: GoRules, action: int) -> str:
    """Action index to a GTP vertex ("A1" is bottom-left; "pass")."""
    n = rules.size
    action = int(action)
    if action == n * n:
        return "pass"
    if not 0 <= action < n * n:
        raise ValueError(f"action {action} is out of range 0..{n * n}")
    row, col = divmod(action, n)
    return f"{_GTP_LETTERS[col]}{n - row}"


_VERTEX_RE = re.compile(r"^([A-HJ-Za-hj-z])(\d{1,2})$")


def from_gtp(rules: GoRules, vertex: str) -> int:
    """GTP vertex (case-insensitive, I skipped, or "pass") to an action index."""
    n = rules.size
    text = vertex.strip()
    if text.lower() == "pass":
        return n * n
    m = _VERTEX_RE.match(text)
    if not m:
        raise ValueError(f"invalid GTP vertex {vertex!r}")
    col = _GTP_LETTERS.index(m.group(1).upper())
    row_num = int(m.group(2))
    if col >= n or not 1 <= row_num <= n:
        raise ValueError(f"vertex {vertex!r} is off the {n}x{n} board")
    return (n - row_num) * n + col


def to_string(rules: GoRules, state: GoState) -> str:
    """A text diagram of the board with GTP coordinates."""
    n = rules.size
    board = np.asarray(state.board).reshape(n, n)
    letters = " ".join(_GTP_LETTERS[:n])
    lines = [f"   {letters}"]
    for r in range(n):
        row = " ".join({1: "X", -1: "O", 0: "."}[int(v)] for v in board[r])
        lines.append(f"{n - r:2d} {row} {n - r:2d}")
    lines.append(f"   {letters}")
    mover = "Black" if int(state.to_play) == 1 else "White"
    lines.append(f"{mover} to play, move {int(state.move_count)}, komi {float(state.komi):g}")
    return "\n".join(lines)
