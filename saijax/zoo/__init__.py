"""The model zoo: small trained networks shipped with saijax (docs/design.md §8).

Each entry is one network's inference variables (``params`` and
``batch_stats``, flax msgpack, a few hundred kB; stored as float32 or, to
halve the size, float16, and always loaded as float32) and a record in
``index.json``: its board size, network spec, generation, Elo with its 95%
interval, empty-board α_∅ and β_∅ (the net's fair-komi estimate and its
confidence), the run it comes from, and the exact command and seed that
trained that run. Experiments and notebooks start from these nets, so they
run in minutes without a training run.

>>> from saijax import zoo
>>> strong = zoo.load("go7-S1")          # a ready players.Player
>>> records = zoo.entries()              # name -> record

The GTP engine and the arena take the same names: ``--checkpoint=zoo:go7-S1``
and ``--player=zoo:go7-S1`` (resolved by :func:`saijax.cli.player.load_player`;
this module builds on :mod:`saijax.play.players`, never the other way round).

Entries are added with :func:`export` (``python -m saijax.zoo add ...``) from
a run's checkpoint; the file's SHA-256 is recorded and checked on load.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import json
import os
import re
from typing import Any

import jax
import numpy as np
from flax import serialization

from saijax.core import checkpoints, go, networks, search
from saijax.play import players

__all__ = ["ZOO_DIR", "ZooEntry", "entries", "entry", "load", "export", "copy_entry", "archive", "archived_generations"]

ZOO_DIR = os.path.dirname(os.path.abspath(__file__))
_INDEX = "index.json"
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")
PREFIX = "zoo:"


@dataclasses.dataclass(frozen=True)
class ZooEntry:
    """One zoo network's record (a row of ``index.json``).

    Attributes:
      name: e.g. "go7-S1".
      spec: the network.
      generation: the generation of the run it comes from.
      file: the variables' file name, in the zoo directory.
      sha256: that file's SHA-256.
      alpha_empty, beta_empty: the net's empty-board α_∅ (fair-komi
        estimate) and β_∅, measured when the entry was exported.
      elo, elo_ci: Elo and its 95% interval on the run's Elo curve (None if
        not rated).
      run: the run the net comes from (e.g. "go7").
      command: the exact command that trains that run.
      seed: the run's seed.
      notes: free text (how the entry was chosen).
      dtype: how the file stores the weights ("float32" or "float16");
        loading casts them back to the network's float32. α_∅ and β_∅ are
        measured on the stored (rounded) weights.
    """

    name: str
    spec: networks.NetworkSpec
    generation: int
    file: str
    sha256: str
    alpha_empty: float
    beta_empty: float
    elo: float | None = None
    elo_ci: tuple[float, float] | None = None
    run: str = ""
    command: str = ""
    seed: int = 0
    notes: str = ""
    dtype: str = "float32"

    def to_dict(self) -> dict[str, Any]:
        d = dataclasses.asdict(self)
        d["spec"] = self.spec.to_dict()
        d["elo_ci"] = list(self.elo_ci) if self.elo_ci is not None else None
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any], where: str) -> ZooEntry:
        try:
            spec = networks.NetworkSpec.from_dict(d["spec"])
            ci = d.get("elo_ci")
            return cls(
                name=str(d["name"]),
                spec=spec,
                generation=int(d["generation"]),
                file=str(d["file"]),
                sha256=str(d["sha256"]),
                alpha_empty=float(d["alpha_empty"]),
                beta_empty=float(d["beta_empty"]),
                elo=None if d.get("elo") is None else float(d["elo"]),
                elo_ci=None if ci is None else (float(ci[0]), float(ci[1])),
                run=str(d.get("run", "")),
                command=str(d.get("command", "")),
                seed=int(d.get("seed", 0)),
                notes=str(d.get("notes", "")),
                dtype=_check_dtype(str(d.get("dtype", "float32")), where),
            )
        except (KeyError, TypeError, ValueError, IndexError) as e:
            raise ValueError(f"{where}: bad zoo entry {d.get('name', '?')!r}: {type(e).__name__}: {e}") from None


STORAGE_DTYPES = ("float32", "float16")


def _check_dtype(dtype: str, where: str) -> str:
    if dtype not in STORAGE_DTYPES:
        raise ValueError(f"{where}: zoo storage dtype {dtype!r} is not one of {', '.join(STORAGE_DTYPES)}")
    return dtype


def _index_path(directory: str) -> str:
    return os.path.join(directory, _INDEX)


def _read_index(directory: str) -> dict[str, ZooEntry]:
    path = _index_path(directory)
    if not os.path.exists(path):
        return {}
    try:
        with open(path, encoding="utf-8") as f:
            raw = json.load(f)
    except (OSError, json.JSONDecodeError) as e:
        raise ValueError(f"{path}: unreadable zoo index: {e}") from None
    if not isinstance(raw, dict) or not isinstance(raw.get("entries"), list):
        raise ValueError(f"{path}: a zoo index is an object with a list 'entries'")
    out = {}
    for d in raw["entries"]:
        e = ZooEntry.from_dict(d, path)
        out[e.name] = e
    return out


def entries(directory: str | None = None) -> dict[str, ZooEntry]:
    """The zoo's entries by name (default: the zoo shipped with saijax)."""
    return _read_index(directory or ZOO_DIR)


def entry(name: str, directory: str | None = None) -> ZooEntry:
    """One entry's record.

    Raises:
      KeyError: no such entry (the message lists the available names).
    """
    name = name[len(PREFIX) :] if name.startswith(PREFIX) else name
    known = entries(directory)
    if name not in known:
        raise KeyError(f"no zoo entry {name!r}; available: {', '.join(sorted(known)) or 'none'}")
    return known[name]


def _sha256(path: str) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


@functools.cache
def _template(spec: networks.NetworkSpec):
    return jax.eval_shape(functools.partial(networks.init_network, spec.build()), jax.random.PRNGKey(0))


def load_variables(name: str, directory: str | None = None) -> tuple[ZooEntry, dict[str, Any]]:
    """(record, ``{'params', 'batch_stats'}``) of a zoo entry, checked against its SHA-256.

    Raises:
      KeyError: no such entry.
      ValueError: the file is missing, altered or does not fit the spec
        (the message names the file).
    """
    e = entry(name, directory)
    path = os.path.join(directory or ZOO_DIR, e.file)
    if not os.path.exists(path):
        raise ValueError(f"zoo entry {e.name!r}: its file {path} is missing")
    if _sha256(path) != e.sha256:
        raise ValueError(f"zoo entry {e.name!r}: {path} does not match its recorded SHA-256 (altered or truncated)")
    with open(path, "rb") as f:
        data = f.read()
    template = _template(e.spec)
    try:
        variables = serialization.from_bytes(template, data)
    except Exception as e2:  # pylint: disable=broad-except
        raise ValueError(f"zoo entry {e.name!r}: {path} does not fit its network spec: {e2}") from None
    for want, got in zip(jax.tree_util.tree_leaves(template), jax.tree_util.tree_leaves(variables)):
        if tuple(want.shape) != tuple(got.shape):
            raise ValueError(f"zoo entry {e.name!r}: {path} holds an array of shape {got.shape}, not {want.shape}")
    return e, jax.tree_util.tree_map(lambda want, got: jax.numpy.asarray(got, dtype=want.dtype), template, variables)


def load(
    name: str,
    *,
    config: search.SearchConfig | None = None,
    agent: search.Agent | None = None,
    directory: str | None = None,
) -> players.Player:
    """A zoo network as a ready :class:`saijax.play.players.Player` named after the entry."""
    e, variables = load_variables(name, directory)
    return players.Player.from_network(
        e.name,
        e.spec.build(),
        variables,
        config=config,
        agent=agent,
        description=f"zoo entry {e.name}: generation {e.generation} of run {e.run or '?'}",
        generation=e.generation,
    )


def export(
    checkpoint: str | os.PathLike,
    name: str,
    *,
    directory: str | None = None,
    elo: float | None = None,
    elo_ci: tuple[float, float] | None = None,
    run: str = "",
    command: str = "",
    seed: int = 0,
    notes: str = "",
    dtype: str = "float32",
) -> ZooEntry:
    """Adds (or replaces) a zoo entry from a run's checkpoint.

    Args:
      checkpoint: a step directory ``<workdir>/checkpoints/<generation>``, or
        a workdir (its newest generation).
      name: the entry's name (letters, digits, ``_.-``).
      directory: the zoo directory (default the shipped one).
      elo, elo_ci, run, command, seed, notes: recorded as given.
      dtype: the file's storage dtype, "float32" (exact) or "float16"
        (half the size; weights rounded to 11 significant bits).

    Returns:
      The new record; α_∅ and β_∅ are measured here, on the stored weights.
    """
    if not _NAME.fullmatch(name):
        raise ValueError(f"zoo entry name {name!r}: use letters, digits and _.- only")
    _check_dtype(dtype, f"zoo entry {name!r}")
    directory = directory or ZOO_DIR
    loaded = checkpoints.load_network(checkpoint)
    variables = jax.tree_util.tree_map(lambda x: np.asarray(x).astype(dtype), jax.device_get(loaded.variables))
    if not all(np.isfinite(x).all() for x in jax.tree_util.tree_leaves(variables)):
        raise ValueError(f"zoo entry {name!r}: {checkpoint} has weights that are not finite as {dtype}")
    data = serialization.to_bytes(variables)
    file = f"{name}.msgpack"
    path = os.path.join(directory, file)
    os.makedirs(directory, exist_ok=True)
    with open(path + ".tmp", "wb") as f:
        f.write(data)
    os.replace(path + ".tmp", path)
    stored = jax.tree_util.tree_map(lambda x: jax.numpy.asarray(x, dtype=jax.numpy.float32), variables)
    player = players.Player.from_network(name, loaded.spec.build(), stored)
    alpha, beta = empty_board_sigmoid(player)
    record = ZooEntry(
        name=name,
        spec=loaded.spec,
        generation=int(loaded.generation),
        file=file,
        sha256=_sha256(path),
        alpha_empty=alpha,
        beta_empty=beta,
        elo=elo,
        elo_ci=elo_ci,
        run=run,
        command=command,
        seed=int(seed),
        notes=notes,
        dtype=dtype,
    )
    _write_record(directory, record)
    return record


def _write_record(directory: str, record: ZooEntry) -> None:
    """Adds (or replaces) ``record`` in ``directory``'s index, atomically."""
    known = _read_index(directory)
    known[record.name] = record
    index = {"entries": [known[k].to_dict() for k in sorted(known)]}
    with open(_index_path(directory) + ".tmp", "w", encoding="utf-8") as f:
        json.dump(index, f, indent=1)
        f.write("\n")
    os.replace(_index_path(directory) + ".tmp", _index_path(directory))


def copy_entry(name: str, source: str, new_name: str, *, directory: str | None = None, **record: Any) -> ZooEntry:
    """Copies entry ``name`` of the zoo directory ``source`` into ``directory`` as ``new_name``.

    The weights' bytes are copied unchanged (so α_∅, β_∅ and the dtype carry
    over); ``record`` replaces fields of the copied record (``elo``,
    ``elo_ci``, ``run``, ``command``, ``seed``, ``notes``). Used to promote a
    run's archived generation (:func:`archive`) into the shipped zoo.
    """
    if not _NAME.fullmatch(new_name):
        raise ValueError(f"zoo entry name {new_name!r}: use letters, digits and _.- only")
    allowed = {"elo", "elo_ci", "run", "command", "seed", "notes"}
    if set(record) - allowed:
        raise ValueError(f"copy_entry: cannot set {', '.join(sorted(set(record) - allowed))}; only {sorted(allowed)}")
    e, _ = load_variables(name, source)  # checks the source's SHA-256 and shapes
    directory = directory or ZOO_DIR
    os.makedirs(directory, exist_ok=True)
    file = f"{new_name}.msgpack"
    path = os.path.join(directory, file)
    with open(os.path.join(source, e.file), "rb") as f:
        data = f.read()
    with open(path + ".tmp", "wb") as f:
        f.write(data)
    os.replace(path + ".tmp", path)
    copied = dataclasses.replace(e, name=new_name, file=file, sha256=_sha256(path), **record)
    _write_record(directory, copied)
    return copied


ARCHIVE_NAME = re.compile(r"^gen(\d+)$")


def archive_name(generation: int) -> str:
    """The name of a run's generation in its archive: ``gen<generation>`` (as the arena names a checkpoint)."""
    return f"gen{int(generation)}"


def archived_generations(directory: str) -> dict[int, ZooEntry]:
    """generation -> record of the entries of an archive directory (:func:`archive`) named ``gen<g>``.

    Raises:
      ValueError: an entry's name and its recorded generation disagree.
    """
    out = {}
    for name, e in entries(directory).items():
        m = ARCHIVE_NAME.fullmatch(name)
        if not m:
            continue
        if int(m[1]) != e.generation:
            raise ValueError(f"{_index_path(directory)}: entry {name!r} records generation {e.generation}")
        out[e.generation] = e
    return dict(sorted(out.items()))


def archive(
    workdir: str | os.PathLike,
    directory: str,
    *,
    every: int = 1,
    generations: tuple[int, ...] = (),
    dtype: str = "float16",
    run: str = "",
    command: str = "",
    seed: int = 0,
) -> list[ZooEntry]:
    """Archives a run's kept checkpoints as zoo entries ``gen<g>`` of ``directory`` (a zoo directory).

    A run's kept checkpoints live in its workdir, which does not outlast a
    session; the archive (inference weights only, float16 by default: a 3×32
    7×7 net is about 180 kB) is small enough to commit, so an Elo curve and
    the zoo's selection (``experiments/elo_curve/``) can span the legs of a
    run. Takes every kept generation that is a multiple of ``every`` or in
    ``generations``, and skips those already archived (their bytes never
    change, so games already played against them stay valid).

    Returns:
      The records added, oldest first.

    Raises:
      ValueError: a generation of ``generations`` is not kept in the workdir.
    """
    if every < 1:
        raise ValueError(f"archive: every must be at least 1, not {every}")
    checkpoints_dir = os.path.join(os.fspath(workdir), "checkpoints")
    try:
        kept = checkpoints.kept_generations(workdir)
    except FileNotFoundError as e:
        raise ValueError(f"archive: {e}") from None
    missing = sorted(set(generations) - set(kept))
    if missing:
        raise ValueError(f"archive: generations {missing} are not kept in {checkpoints_dir} (kept: {kept})")
    done = archived_generations(directory) if os.path.isdir(directory) else {}
    added = []
    for g in kept:
        if g in done or not (g % every == 0 or g in generations):
            continue
        added.append(
            export(
                os.path.join(checkpoints_dir, str(g)),
                archive_name(g),
                directory=directory,
                run=run,
                command=command,
                seed=seed,
                notes=f"generation {g} of {run or workdir}, archived from its kept checkpoint",
                dtype=dtype,
            )
        )
    return added


def empty_board_sigmoid(player: players.Player) -> tuple[float, float]:
    """(α_∅, β_∅): the player's network evaluation of the empty board (komi 0, Black to move)."""
    rules = go.GoRules(player.board_size)
    state = jax.tree_util.tree_map(lambda x: x[None], go.init(rules, 0.0))
    _, alpha, beta = jax.jit(player.evaluator)(player.variables, state)
    return float(alpha[0]), float(beta[0])
