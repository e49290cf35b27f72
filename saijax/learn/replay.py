"""Training rows, their files, and the replay window (docs/design.md §6, §7).

A training row is one self-play position: its input planes, the search's
improved policy (the policy target), the signed komi k_s, the outcome z for
the player to move P at that game's komi, and bookkeeping (game id, move
number, branch flag, generation). Rows are stored compactly: SAI planes
0..15 bit-packed into 2 bytes per point (`features.pack_planes`), and the
player to move, from which `sample` rebuilds the baselines' colour plane with
`features.add_colour_plane`, the function search uses too.

`ReplayBuffer` keeps one compressed file per generation,
`<directory>/gen_000012.npz`, written atomically (a temporary file in the
same directory, then `os.replace`), so a run killed while writing never
leaves a half-written generation under the final name. Only valid rows
(`valid`, i.e. not padding and not before a game's last blunder) are kept.

Rows may carry KataGo-style ownership targets (docs/design.md §6): the final
Tromp–Taylor owner of every point from P's view, int8 [R, N*N], and
`ownership_mask`, True only for rows of games played out (two passes or the
move cap) whose self-play recorded ownership (resigned games: zeros, mask
False). Rows of runs without the ownership switch have no targets at all
(the fields are None): their files are written exactly as before (format 1,
which is also how files from before the targets existed read), and sampling
gives them zero targets with mask 0. Files with targets are format 2.

Rows may also carry KataGo-style opponent-reply targets (docs/design.md §6):
`opponent_policy`, float32 [R, N*N+1], the policy target of the game's next
position (the opponent's reply to P's move), all zeros where there is none
(a game's last position, or a next position searched cheaply). Files with it
are format 3, in which the ownership pair is optional (both or neither);
files without it are written as format 1 or 2 exactly as before, and read
with the field None (sampled as all-zero rows, which the loss ignores).

`ReplayBuffer.load_window` moves the last w generations to the default
device; `ReplayBuffer.sample` draws a batch uniformly from them in one jitted
function and applies one random dihedral symmetry per sample, the same to
the planes, the policy (pass stays fixed), the ownership plane and the
opponent policy (with the policy's permutation). To avoid a recompile every
generation, the window's arrays are padded to a size bucket (within 1/8 of
the row count) and indices are drawn below the true row count.
"""

from __future__ import annotations

import functools
import os
import re
import tempfile
import zipfile
from collections.abc import Callable

import flax
import jax
import jax.numpy as jnp
import numpy as np

from saijax.core import features

__all__ = [
    "ReplayBuffer",
    "Sampler",
    "TrainingRows",
    "concatenate_rows",
    "flatten_rows",
    "with_opponent_policy",
    "with_ownership",
]

# 2 added ownership and ownership_mask; rows without them are still written
# as format 1 (and read with the fields None). 3 added opponent_policy, with
# the ownership pair optional; rows without it are still format 1 or 2.
_FORMAT_VERSION = 3
_OWNERSHIP_FIELDS = ("ownership", "ownership_mask")
_OPPONENT_FIELDS = ("opponent_policy",)
_FILE_RE = re.compile(r"^gen_(\d{6})\.npz$")
_TMP_PREFIX = ".tmp_gen_"


@flax.struct.dataclass
class TrainingRows:
    """A batch of R training rows (docs/design.md §6). P is the player to move.

    Fields may carry extra leading axes (e.g. [T, B] from a self-play scan);
    `flatten_rows` reduces them to one row axis.
    """

    planes: jax.Array  # [R, N, N, 2] uint8, SAI planes 0..15 bit-packed
    to_play: jax.Array  # [R] int8, +1 Black, -1 White (colour plane)
    policy: jax.Array  # [R, N*N+1] float32, the search's improved policy
    signed_komi: jax.Array  # [R] float32, k_s: komi as P's bonus
    z: jax.Array  # [R] float32, P's outcome at the game's komi: 0, 0.5, 1
    margin: jax.Array  # [R] float32, final Tromp–Taylor margin for P, komi in
    game_id: jax.Array  # [R] int32
    move_number: jax.Array  # [R] int32, moves played before this position
    is_branch: jax.Array  # [R] bool, the game is a branch
    generation: jax.Array  # [R] int32, generation of the net that played
    valid: jax.Array  # [R] bool, False for padding / before the last blunder
    # Final Tromp–Taylor owner of each point, P's view (+1, -1, 0); None: no targets.
    ownership: jax.Array | None = None  # [R, N*N] int8
    ownership_mask: jax.Array | None = None  # [R] bool, the game was played out and recorded
    # The next position's policy target (the opponent's reply), zeros where
    # none; None: no targets.
    opponent_policy: jax.Array | None = None  # [R, N*N+1] float32

    @property
    def num_rows(self) -> int:
        """Number of rows (the product of the leading axes)."""
        return int(np.prod(np.shape(self.valid)))


_FIELDS = tuple(f.name for f in TrainingRows.__dataclass_fields__.values())
_STORED_FIELDS = tuple(f for f in _FIELDS if f != "valid")
_DTYPES = {
    "planes": np.uint8,
    "to_play": np.int8,
    "policy": np.float32,
    "signed_komi": np.float32,
    "z": np.float32,
    "margin": np.float32,
    "game_id": np.int32,
    "move_number": np.int32,
    "is_branch": np.bool_,
    "generation": np.int32,
    "valid": np.bool_,
    "ownership": np.int8,
    "ownership_mask": np.bool_,
    "opponent_policy": np.float32,
}


# ---------------------------------------------------------------------------
# Row utilities.


def with_ownership(rows: TrainingRows) -> TrainingRows:
    """`rows` with explicit ownership arrays: zeros and mask False when they
    have none (None), as numpy arrays shaped from `planes`."""
    if rows.ownership is not None and rows.ownership_mask is not None:
        return rows
    shape = np.shape(rows.valid)
    n = np.shape(rows.planes)[-2]
    return rows.replace(
        ownership=np.zeros(shape + (n * n,), np.int8) if rows.ownership is None else rows.ownership,
        ownership_mask=np.zeros(shape, np.bool_),
    )


def with_opponent_policy(rows: TrainingRows) -> TrainingRows:
    """`rows` with an explicit opponent policy: all-zero rows (no target)
    when they have none (None), as a numpy array shaped like `policy`."""
    if rows.opponent_policy is not None:
        return rows
    return rows.replace(opponent_policy=np.zeros(np.shape(rows.policy), np.float32))


def flatten_rows(rows: TrainingRows) -> TrainingRows:
    """Merges the leading axes (those of `valid`) into one row axis."""
    lead = np.ndim(rows.valid)
    return jax.tree_util.tree_map(lambda x: jnp.reshape(x, (-1,) + tuple(np.shape(x)[lead:])), rows)


def concatenate_rows(parts: list[TrainingRows]) -> TrainingRows:
    """Concatenates flat row batches along the row axis (as numpy arrays)."""
    if not parts:
        raise ValueError("concatenate_rows needs at least one batch of rows")
    if any(p.ownership is None or p.ownership_mask is None for p in parts) and not all(
        p.ownership is None and p.ownership_mask is None for p in parts
    ):
        parts = [with_ownership(p) for p in parts]
    if any(p.opponent_policy is None for p in parts) and not all(p.opponent_policy is None for p in parts):
        parts = [with_opponent_policy(p) for p in parts]
    return jax.tree_util.tree_map(lambda *xs: np.concatenate([np.asarray(x) for x in xs]), *parts)


def _to_numpy(rows: TrainingRows) -> dict[str, np.ndarray | None]:
    """The rows as flat numpy arrays; the ownership fields stay None when absent."""
    if (rows.ownership is None) != (rows.ownership_mask is None):
        rows = with_ownership(rows)
    rows = flatten_rows(rows)
    return {
        name: None if getattr(rows, name) is None else np.asarray(getattr(rows, name)).astype(_DTYPES[name], copy=False)
        for name in _FIELDS
    }


def _valid_rows(rows: TrainingRows) -> TrainingRows:
    """The valid rows, as numpy arrays of the stored dtypes: what
    ``write_generation`` then ``read_generation`` give back."""
    arrays = _to_numpy(rows)
    keep = arrays["valid"]
    out = {name: None if arrays[name] is None else arrays[name][keep] for name in _STORED_FIELDS}
    return TrainingRows(**out, valid=np.ones(int(keep.sum()), np.bool_))


# ---------------------------------------------------------------------------
# Sampling with symmetry augmentation.


@functools.cache
def _symmetry_permutations(board_size: int) -> np.ndarray:
    """int32 [8, N*N+1]: transformed[i] = original[perm[k, i]] for symmetry k.

    Symmetry k is `go.transform_planes` / `go.transform_policy` with the
    same k: a transpose when k >= 4, then k mod 4 quarter turns; pass stays
    fixed. Built with numpy, so it is safe to call while tracing.
    """
    n = board_size
    index = np.arange(n * n).reshape(n, n)
    perms = []
    for k in range(8):
        grid = index.T if k >= 4 else index
        grid = np.rot90(grid, k % 4, axes=(0, 1))
        perms.append(np.concatenate([grid.reshape(-1), [n * n]]))
    return np.stack(perms).astype(np.int32)


def _apply_symmetry(packed: jax.Array, policy: jax.Array, symmetry: jax.Array, board_size: int, ownership=None):
    """Applies dihedral transform `symmetry[b]` to sample b.

    Args:
        packed: uint8 [B, N, N, 2] packed planes.
        policy: float32 [B, N*N+1].
        symmetry: int32 [B] in 0..7.
        board_size: N.
        ownership: optional [B, N*N] per-point values (row-major), moved
            with the points.

    Returns:
        (packed [B, N, N, 2], policy [B, N*N+1]), transformed; and the
        transformed ownership third when it is given.
    """
    n = board_size
    perm = jnp.asarray(_symmetry_permutations(n))[symmetry]  # [B, N*N+1]
    flat = packed.reshape(packed.shape[0], n * n, packed.shape[-1])
    flat = jnp.take_along_axis(flat, perm[:, : n * n, None], axis=1)
    policy = jnp.take_along_axis(policy, perm, axis=1)
    if ownership is None:
        return flat.reshape(packed.shape), policy
    return flat.reshape(packed.shape), policy, jnp.take_along_axis(ownership, perm[:, : n * n], axis=1)


@functools.partial(jax.jit, static_argnames=("batch_size", "board_size", "value_head"))
def _sample(
    rows: TrainingRows, num_rows: jax.Array, key: jax.Array, *, batch_size: int, board_size: int, value_head: str
):
    index_key, symmetry_key = jax.random.split(key)
    index = jax.random.randint(index_key, (batch_size,), 0, num_rows)
    symmetry = jax.random.randint(symmetry_key, (batch_size,), 0, 8)
    if rows.ownership is None:  # no targets in the window: zeros, mask 0
        packed, policy = _apply_symmetry(rows.planes[index], rows.policy[index], symmetry, board_size)
        ownership = jnp.zeros((batch_size, board_size * board_size), jnp.float32)
        ownership_mask = jnp.zeros((batch_size,), jnp.float32)
    else:
        packed, policy, ownership = _apply_symmetry(
            rows.planes[index], rows.policy[index], symmetry, board_size, rows.ownership[index]
        )
        ownership_mask = rows.ownership_mask[index]
    if rows.opponent_policy is None:  # no targets: all-zero rows, which the loss ignores
        opponent_policy = jnp.zeros((batch_size, board_size * board_size + 1), jnp.float32)
    else:  # the same symmetry as the policy (pass stays fixed)
        perm = jnp.asarray(_symmetry_permutations(board_size))[symmetry]
        opponent_policy = jnp.take_along_axis(rows.opponent_policy[index], perm, axis=1)
    planes = features.add_colour_plane(features.unpack_planes(packed), rows.to_play[index], value_head)
    return {
        "planes": planes,  # [B, N, N, C] float32
        "policy": policy,  # [B, N*N+1] float32
        "signed_komi": rows.signed_komi[index],  # [B]
        "z": rows.z[index],  # [B]
        "margin": rows.margin[index],  # [B]
        "ownership": ownership.astype(jnp.float32),  # [B, N*N], P's view
        "ownership_mask": ownership_mask.astype(jnp.float32),  # [B]
        "opponent_policy": opponent_policy.astype(jnp.float32),  # [B, N*N+1], zeros: no target
    }


def _bucket(count: int) -> int:
    """Row capacity for `count` rows: a multiple of 2^(bits-3), at least
    1024, so the padded size is within 1/8 of `count` and changes rarely."""
    step = max(1024, 1 << max(0, count.bit_length() - 3))
    return max(step, -(-count // step) * step)


# ---------------------------------------------------------------------------
# The buffer.


class ReplayBuffer:
    """Per-generation row files and the on-device training window.

    Attributes:
        directory: where `gen_NNNNNN.npz` files live.
        board_size: N; files of another size are rejected.
        window_generations: generations currently loaded (sorted).
        num_rows: rows currently loaded.
    """

    def __init__(self, directory: str | os.PathLike, board_size: int):
        self.directory = os.fspath(directory)
        self.board_size = int(board_size)
        os.makedirs(self.directory, exist_ok=True)
        self._remove_stale_temporaries()
        self.window_generations: list[int] = []
        self.num_rows = 0
        self._rows: TrainingRows | None = None

    # Files.

    def path(self, generation: int) -> str:
        """The file of one generation's rows."""
        return os.path.join(self.directory, f"gen_{int(generation):06d}.npz")

    def _remove_stale_temporaries(self) -> None:
        # Left by a run killed inside write_generation; never final files.
        for name in os.listdir(self.directory):
            if name.startswith(_TMP_PREFIX):
                try:
                    os.remove(os.path.join(self.directory, name))
                except OSError:
                    pass

    def available_generations(self) -> list[int]:
        """Generations with a row file, sorted."""
        found = []
        for name in os.listdir(self.directory):
            match = _FILE_RE.match(name)
            if match:
                found.append(int(match.group(1)))
        return sorted(found)

    def write_generation(self, generation: int, rows: TrainingRows) -> int:
        """Saves a generation's valid rows, atomically.

        Args:
            generation: the generation number (>= 0).
            rows: the generation's rows (any leading axes, device or host
                arrays). Rows with `valid` False are dropped.

        Returns:
            The number of rows written.
        """
        arrays = _to_numpy(rows)
        n = self.board_size
        if arrays["planes"].shape[1:] != (n, n, features.PACKED_BYTES):
            raise ValueError(
                f"rows.planes must be [R, {n}, {n}, {features.PACKED_BYTES}] for board size {n}, "
                f"got {arrays['planes'].shape}"
            )
        if arrays["policy"].shape[1:] != (n * n + 1,):
            raise ValueError(f"rows.policy must be [R, {n * n + 1}], got {arrays['policy'].shape}")
        targets = arrays["ownership"] is not None
        if targets and arrays["ownership"].shape[1:] != (n * n,):
            raise ValueError(f"rows.ownership must be [R, {n * n}], got {arrays['ownership'].shape}")
        opponent = arrays["opponent_policy"] is not None
        if opponent and arrays["opponent_policy"].shape[1:] != (n * n + 1,):
            raise ValueError(f"rows.opponent_policy must be [R, {n * n + 1}], got {arrays['opponent_policy'].shape}")
        keep = arrays["valid"]
        data = {name: arrays[name][keep] for name in _STORED_FIELDS if arrays[name] is not None}
        data["board_size"] = np.asarray(n, np.int32)
        # Without opponent targets, exactly the format-2 file of before, and
        # without ownership targets either, the format-1 file.
        data["format_version"] = np.asarray(3 if opponent else 2 if targets else 1, np.int32)

        final = self.path(generation)
        fd, tmp = tempfile.mkstemp(prefix=f"{_TMP_PREFIX}{generation:06d}.", suffix=".npz", dir=self.directory)
        try:
            with os.fdopen(fd, "wb") as f:
                np.savez_compressed(f, **data)
                f.flush()
                os.fsync(f.fileno())
            os.replace(tmp, final)
        except BaseException:
            if os.path.exists(tmp):
                os.remove(tmp)
            raise
        _fsync_directory(self.directory)
        return int(keep.sum())

    def read_generation(self, generation: int) -> TrainingRows:
        """Reads one generation's rows as numpy arrays (all valid).

        Raises:
            FileNotFoundError: if the generation has no file.
            ValueError: naming the file, if it is corrupt, unreadable, or for
                another board size.
        """
        path = self.path(generation)
        if not os.path.exists(path):
            raise FileNotFoundError(f"no replay file for generation {generation}: {path}")
        try:
            with np.load(path, allow_pickle=False) as data:
                version = int(data["format_version"]) if "format_version" in data.files else 1
                # Format 1 predates the ownership targets, formats 1 and 2
                # the opponent targets: they read as absent. In format 3 the
                # ownership pair is optional (both or neither).
                names = [
                    f
                    for f in _STORED_FIELDS
                    if (f not in _OWNERSHIP_FIELDS or version == 2 or (version >= 3 and "ownership" in data.files))
                    and (f not in _OPPONENT_FIELDS or version >= 3)
                ]
                arrays = {name: np.asarray(data[name]) for name in names} if version <= _FORMAT_VERSION else {}
                size = int(data["board_size"])
        except (OSError, EOFError, KeyError, ValueError, zipfile.BadZipFile, zipfile.LargeZipFile) as e:
            raise ValueError(
                f"replay file {path} is corrupt or unreadable "
                f"({type(e).__name__}: {e}); move it aside to continue "
                f"without that generation"
            ) from e
        if not 1 <= version <= _FORMAT_VERSION:
            raise ValueError(
                f"replay file {path} has format {version}; this saijax reads formats 1..{_FORMAT_VERSION} "
                "(written by a newer saijax?)"
            )
        if size != self.board_size:
            raise ValueError(
                f"replay file {path} holds {size}x{size} rows, but the buffer is for board size {self.board_size}"
            )
        count = len(arrays["z"])
        n = self.board_size
        expected = {
            "planes": (count, n, n, features.PACKED_BYTES),
            "policy": (count, n * n + 1),
            "ownership": (count, n * n),
            "opponent_policy": (count, n * n + 1),
        }
        for name, array in arrays.items():
            shape = expected.get(name, (count,))
            if array.shape != shape:
                raise ValueError(
                    f"replay file {path} is inconsistent: {name} has shape {array.shape}, expected {shape}"
                )
            arrays[name] = array.astype(_DTYPES[name], copy=False)
        arrays["valid"] = np.ones((count,), np.bool_)
        return TrainingRows(**arrays)

    # The window.

    def load_window(
        self, last_generation: int, window: int, fresh: dict[int, TrainingRows] | None = None
    ) -> TrainingRows:
        """Loads the last `window` generations present up to
        `last_generation` (inclusive) onto the default device.

        ``fresh`` maps generations to rows already in memory (the pipeline's
        newest generation, whose file is written while training runs): they
        count as present and are not read from disk.

        A missing generation number is skipped, and the next older file
        takes its place, so the window always spans `window` files when
        that many exist.

        Args:
            last_generation: newest generation to include.
            window: w >= 1, how many generations.

        Returns:
            The loaded rows, as numpy arrays (the device copy is kept for
            `sample`).

        Raises:
            ValueError: if no generation is present or the window is empty,
                or a file is corrupt (naming it).
        """
        if window < 1:
            raise ValueError(f"window must be >= 1, got {window}")
        fresh = fresh or {}
        present = sorted({g for g in [*self.available_generations(), *fresh] if g <= last_generation})
        chosen = present[-window:]
        if not chosen:
            raise ValueError(f"no replay files up to generation {last_generation} in {self.directory}")
        rows = concatenate_rows([_valid_rows(fresh[g]) if g in fresh else self.read_generation(g) for g in chosen])
        count = rows.num_rows
        if count == 0:
            raise ValueError(f"replay window {chosen} in {self.directory} has no rows")
        capacity = _bucket(count)
        padded = jax.tree_util.tree_map(
            lambda x: np.concatenate([x, np.zeros((capacity - count,) + x.shape[1:], x.dtype)]), rows
        )
        self._rows = jax.device_put(padded)
        self.num_rows = count
        self.window_generations = chosen
        return rows

    def sample(self, key: jax.Array, batch_size: int, *, value_head: str = "sai") -> dict[str, jax.Array]:
        """A training batch drawn uniformly (with replacement) from the window.

        Each sample gets one of the 8 dihedral symmetries, uniformly, applied
        to its planes and its policy alike (the pass entry stays fixed).

        Args:
            key: PRNG key, consumed.
            batch_size: B.
            value_head: the network's value head; the baselines' get the
                colour plane (`features.add_colour_plane`).

        Returns:
            dict with 'planes' float32 [B, N, N, C] (C =
            `networks.input_planes(value_head)`), 'policy'
            [B, N*N+1], 'signed_komi', 'z', 'margin' [B], 'ownership'
            float32 [B, N*N] (P's view, moved by the same symmetry) and
            'ownership_mask' float32 [B] (1: the row has an ownership
            target) and 'opponent_policy' float32 [B, N*N+1] (moved like
            the policy; all zeros: no target): the batch
            `losses.total_loss` reads.
        """
        return self.sampler(batch_size, value_head)(key)

    def sampler(self, batch_size: int, value_head: str = "sai", key_fn: Callable | None = None) -> Sampler:
        """`sample` as a `Sampler` (`key -> batch`) that training can fuse
        into blocks of steps; `key_fn` turns each key first (the pipeline
        passes `distributed.process_key`)."""
        return Sampler(self, batch_size, value_head, key_fn)


class Sampler:
    """`key -> batch` from a buffer's window (`ReplayBuffer.sampler`), with
    its pure sampling function exposed so that training can sample inside
    a fused block of steps (`training.train_on_window(steps_per_call=K)`):
    `pure(*args(), key)` is `sampler(key)`. `args()` reads the window at
    the call, so one sampler serves every window; `spec` (batch size,
    board, value head) names the program. `key_fn` (e.g.
    `distributed.process_key`) turns each key first; a fused block, run
    only by one process, does not call it (it is the identity there)."""

    def __init__(self, buffer: ReplayBuffer, batch_size: int, value_head: str = "sai", key_fn: Callable | None = None):
        self.buffer = buffer
        self.spec = (int(batch_size), int(buffer.board_size), str(value_head))
        self.pure = functools.partial(
            _sample, batch_size=self.spec[0], board_size=self.spec[1], value_head=self.spec[2]
        )
        self.key_fn = key_fn

    def args(self) -> tuple[TrainingRows, jax.Array]:
        if self.buffer._rows is None:
            raise ValueError("ReplayBuffer.sample called before load_window")
        return self.buffer._rows, jnp.asarray(self.buffer.num_rows, jnp.int32)

    def __call__(self, key: jax.Array) -> dict[str, jax.Array]:
        if self.key_fn is not None:
            key = self.key_fn(key)
        return self.pure(*self.args(), key)


def _fsync_directory(directory: str) -> None:
    """Makes a rename durable (POSIX); a no-op where directories can't be
    opened."""
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)
