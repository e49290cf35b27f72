"""Checking and reading run configurations (`configs/*.py`).

A run is described by one `ml_collections.ConfigDict`, whose fields are
documented in `configs/default.py`. This module

* validates a config before anything is compiled (`validate`), raising one
  `ValueError` whose message names the bad field and its value; a run of
  several processes checks every field before it connects and the batches
  against all processes' devices after (`validate_sharding`);
* reads the generation-keyed schedules (`schedule_value`; the visits schedule
  in one place, `visits_schedule`, which `num_simulations` reads;
  `network_shape`, `window_size`);
* resolves the fields where 0 means "the paper's default for this board size"
  (`effective_max_moves`, `dirichlet_alpha`; `network.beta_scale` is resolved
  by `networks.NetworkSpec`);
* builds a module's static settings from its section (`from_section`);
* loads a config file the way `--config=configs/x.py` does (`load_config`).

The choices for `network.value_head`, `search.algorithm` and
`search.value_mode` are those of the modules that implement them
(`networks.VALUE_HEADS`, `search.ALGORITHMS`, `search.VALUE_MODES`).

Schedules are lists of entries whose first element is a generation:
`[[generation, value], ...]` (visits, window) or
`[[generation, blocks, filters], ...]` (network). They must be sorted by
strictly increasing generation and start at generation 0; the entry in force
at generation g is the last one whose generation is <= g. An empty visits or
network schedule means "constant": `search.num_simulations` and
`network.blocks` / `network.filters` apply throughout. The window schedule
must not be empty.
"""

from __future__ import annotations

import dataclasses
import importlib.util
import os
import sys
from collections.abc import Sequence
from typing import Any

import jax
import ml_collections
from absl import flags as absl_flags

from saijax.core import checks, go, networks, search, widen

__all__ = [
    "KOMI_MODES",
    "LR_SCHEDULES",
    "OPTIMIZERS",
    "parse_flags",
    "dirichlet_alpha",
    "effective_max_moves",
    "records_ownership",
    "records_opponent_policy",
    "from_section",
    "load_config",
    "network_shape",
    "num_simulations",
    "schedule_value",
    "validate",
    "validate_sharding",
    "visits_schedule",
    "steps_per_call",
    "window_size",
]

KOMI_MODES = ("sample", "fixed")
OPTIMIZERS = ("sgd", "adam")
GROWTHS = ("retrain", "widen")
OPENING_POLICIES = ("visits", "improved")
BLUNDER_REFERENCES = ("best_child", "search_move")
LR_SCHEDULES = ("constant", "cosine", "piecewise")

_MIN_BOARD_SIZE = 2
_MAX_BOARD_SIZE = 19


# ---------------------------------------------------------------------------
# Field access and elementary checks. Each raises ValueError naming `name`.


def _get(config: Any, name: str) -> Any:
    node = config
    for part in name.split("."):
        try:
            node = node[part]
        except (KeyError, AttributeError, TypeError):
            raise ValueError(f"config is missing the field {name}") from None
    return node


def _int(config, name: str, minimum: int | None = None, maximum: int | None = None) -> int:
    value = _get(config, name)
    if not checks.is_int(value):
        raise ValueError(f"{name} must be an int, got {value!r}")
    if minimum is not None and value < minimum:
        raise ValueError(f"{name} must be >= {minimum}, got {value!r}")
    if maximum is not None and value > maximum:
        raise ValueError(f"{name} must be <= {maximum}, got {value!r}")
    return value


def _float(
    config, name: str, minimum: float | None = None, maximum: float | None = None, *, strict_min: bool = False
) -> float:
    value = _get(config, name)
    if not checks.is_number(value):
        raise ValueError(f"{name} must be a finite number, got {value!r}")
    if minimum is not None:
        if strict_min and not value > minimum:
            raise ValueError(f"{name} must be > {minimum}, got {value!r}")
        if not strict_min and value < minimum:
            raise ValueError(f"{name} must be >= {minimum}, got {value!r}")
    if maximum is not None and value > maximum:
        raise ValueError(f"{name} must be <= {maximum}, got {value!r}")
    return float(value)


def _bool(config, name: str) -> bool:
    value = _get(config, name)
    if not isinstance(value, bool):
        raise ValueError(f"{name} must be True or False, got {value!r}")
    return value


def _has(config: Any, name: str) -> bool:
    try:
        _get(config, name)
    except ValueError:
        return False
    return True


def _optional_bool(config, name: str) -> bool:
    """A bool field added after older configs were written: missing means False."""
    return _bool(config, name) if _has(config, name) else False


def _optional_float(config, name: str) -> float:
    """A weight >= 0 added after older configs were written: missing means 0."""
    return _float(config, name, 0.0) if _has(config, name) else 0.0


def _choice(config, name: str, choices: Sequence[str]) -> str:
    value = _get(config, name)
    if value not in choices:
        raise ValueError(f"{name} must be one of {tuple(choices)}, got {value!r}")
    return value


def _divisible(config, name: str, device_count: int) -> None:
    value = _get(config, name)
    if value % device_count:
        raise ValueError(
            f"{name} ({value}) must be divisible by the device count "
            f"({device_count}), since the batch is sharded across devices"
        )


def validate_sharding(config: ml_collections.ConfigDict, device_count: int | None = None) -> None:
    """Checks that a validated config's batches shard over ``device_count``
    devices (None: `jax.device_count()`, every process's once connected).

    Raises:
        ValueError: naming the batch size and the device count.
    """
    _check_sharding(config, jax.device_count() if device_count is None else device_count)


def _check_sharding(config, device_count: int) -> None:
    _divisible(config, "selfplay.batch_size", device_count)
    _divisible(config, "training.batch_size", device_count)


def _schedule(config, name: str, width: int, *, allow_empty: bool, value_minimum: int = 1) -> list[list[int]]:
    """Checks a `[[generation, v1, ...], ...]` schedule of `width` ints."""
    value = _get(config, name)
    if not isinstance(value, (list, tuple)):
        raise ValueError(f"{name} must be a list of entries, got {value!r}")
    if not value and not allow_empty:
        raise ValueError(f"{name} must not be empty")
    previous = None
    for i, entry in enumerate(value):
        if not isinstance(entry, (list, tuple)) or len(entry) != width or not all(checks.is_int(v) for v in entry):
            raise ValueError(f"{name}[{i}] must be a list of {width} ints [generation, ...], got {entry!r}")
        generation = entry[0]
        if i == 0 and generation != 0:
            raise ValueError(f"{name} must start at generation 0, got {entry!r} first")
        if previous is not None and generation <= previous:
            raise ValueError(
                f"{name} must be sorted by strictly increasing generation, "
                f"got generation {generation} after {previous} in {value!r}"
            )
        for v in entry[1:]:
            if v < value_minimum:
                raise ValueError(f"{name}[{i}] values must be >= {value_minimum}, got {entry!r}")
        previous = generation
    return [list(entry) for entry in value]


# ---------------------------------------------------------------------------
# Validation.


def validate(config: ml_collections.ConfigDict, *, device_count: int | None = None) -> None:
    """Checks a run config, raising on the first bad field.

    Args:
        config: the run config (see `configs/default.py` for the fields).
        device_count: devices the batches are sharded over; None means
            `jax.device_count()`. A run of several processes passes 1 before
            it connects (every field but the batches' divisibility, which
            needs all processes' devices) and calls `validate_sharding` after.

    Raises:
        ValueError: one message naming the bad field and its value.
    """
    if device_count is None:
        device_count = jax.device_count()

    _int(config, "board_size", _MIN_BOARD_SIZE, _MAX_BOARD_SIZE)
    _int(config, "seed", 0)
    _int(config, "generations", 1)
    _int(config, "keep_checkpoint_every", 0)
    _bool(config, "multihost")
    _int(config, "max_moves", 0)
    _optional_float(config, "time_limit_minutes")
    _optional_bool(config, "compilation_cache")
    if _has(config, "compilation_cache_dir") and not isinstance(_get(config, "compilation_cache_dir"), str):
        raise ValueError(f"compilation_cache_dir must be a path string, got {_get(config, 'compilation_cache_dir')!r}")

    # Network.
    _int(config, "network.blocks", 0)
    _int(config, "network.filters", 1)
    head = _choice(config, "network.value_head", networks.VALUE_HEADS)
    _float(config, "network.beta_scale", 0.0)
    ownership_head = _optional_bool(config, "network.ownership_head")
    _optional_bool(config, "network.global_pooling")
    opponent_policy_head = _optional_bool(config, "network.opponent_policy_head")
    _choice(config, "precision", networks.PRECISIONS)

    # Search. The types are checked here, the rules by building
    # search.SearchConfig and search.Agent, which hold them (their messages
    # name the field, or checks.build does: "search.lambda_=1.5: ...");
    # a minimum given here is one SearchConfig does not check.
    _get(config, "search.algorithm")
    _int(config, "search.num_simulations")
    _int(config, "search.max_num_considered_actions", 1)
    _float(config, "search.gumbel_scale", 0.0)
    _float(config, "search.c_puct", 0.0, strict_min=True)
    _float(config, "search.dirichlet_alpha", 0.0)
    _float(config, "search.dirichlet_fraction", 0.0, 1.0)
    _float(config, "search.beta_terminal")
    _float(config, "search.fpu_reduction", 0.0)
    if _has(config, "search.noisy_root_fpu_reduction"):
        _float(config, "search.noisy_root_fpu_reduction", 0.0)
    if _has(config, "search.pass_answer_prior"):
        _float(config, "search.pass_answer_prior")
    mode = _get(config, "search.value_mode")
    checks.build(search.SearchConfig, _section_values(search.SearchConfig, config.search), lambda f: f"search.{f}")
    checks.build(
        search.Agent,
        {name: _get(config, f"search.{name}") for name in ("lambda_", "mu", "threshold")},
        lambda f: f"search.{f}",
    )
    if head == "score" and mode != "score":
        raise ValueError(
            f"search.value_mode must be 'score' with network.value_head "
            f"'score' (a score head has no sigmoid), got {mode!r}"
        )
    if head == "winrate" and mode != "sigmoid":
        raise ValueError(
            f"search.value_mode must be 'sigmoid' with network.value_head "
            f"'winrate' (a winrate head has no score), got {mode!r}"
        )

    # Self-play.
    _int(config, "selfplay.batch_size", 1)
    _int(config, "selfplay.games_per_generation", 1)
    _int(config, "selfplay.chunk_moves", 1)
    komi_mode = _choice(config, "selfplay.komi_mode", KOMI_MODES)
    go.check_komi(_get(config, "selfplay.komi"), "selfplay.komi")
    _float(config, "selfplay.komi_temperature", 0.0, strict_min=True)
    if komi_mode == "sample" and head != "sai":
        raise ValueError(
            f"selfplay.komi_mode 'sample' needs network.value_head 'sai' "
            f"(komi is drawn from the net's sigmoid), got {head!r}"
        )
    branch_prob = _float(config, "selfplay.branch_prob", 0.0, 1.0)
    if branch_prob > 0 and head != "sai":
        raise ValueError(
            f"selfplay.branch_prob ({branch_prob}) must be 0 unless "
            f"network.value_head is 'sai' (a branch's fair komi is -α), "
            f"got value_head {head!r}"
        )
    _int(config, "selfplay.branch_queue_capacity", 1)
    _int(config, "selfplay.games_per_branch", 1)
    _int(config, "selfplay.max_branches_per_game", 0)
    _int(config, "selfplay.random_moves", 0)
    # Later switches: a config written before them (e.g. a run's config.json)
    # lacks them and keeps the behaviour of that time.
    if _has(config, "selfplay.noise_moves"):
        _int(config, "selfplay.noise_moves", -1)
    if _has(config, "selfplay.opening_policy"):
        _choice(config, "selfplay.opening_policy", OPENING_POLICIES)
    if _has(config, "selfplay.fast_simulations"):
        _int(config, "selfplay.fast_simulations", 0)
    if _has(config, "selfplay.full_search_prob"):
        _float(config, "selfplay.full_search_prob", 0.0, 1.0, strict_min=True)
    _float(config, "selfplay.random_temperature", 0.0, strict_min=True)
    if _has(config, "selfplay.random_min_visits"):
        _int(config, "selfplay.random_min_visits", 0)
    if _has(config, "selfplay.random_losing_threshold"):
        _float(config, "selfplay.random_losing_threshold", 0.0, 1.0)
    if _has(config, "selfplay.random_takeback"):
        _bool(config, "selfplay.random_takeback")
    if _has(config, "selfplay.random_full_search_only"):
        _bool(config, "selfplay.random_full_search_only")
    if _has(config, "selfplay.fixed_komi_share"):
        share = _float(config, "selfplay.fixed_komi_share", 0.0, 1.0)
        if share > 0 and komi_mode != "sample":
            raise ValueError(
                f"selfplay.fixed_komi_share ({share}) must be 0 unless selfplay.komi_mode is 'sample' "
                f"(in 'fixed' mode every game is at selfplay.komi), got komi_mode {komi_mode!r}"
            )
    _float(config, "selfplay.blunder_threshold", 0.0)
    if _has(config, "selfplay.blunder_reference"):
        _choice(config, "selfplay.blunder_reference", BLUNDER_REFERENCES)
    if _has(config, "selfplay.blunders_allowed_mean"):
        _float(config, "selfplay.blunders_allowed_mean")
    _float(config, "selfplay.resign_threshold", maximum=1.0)
    _float(config, "selfplay.no_resign_fraction", 0.0, 1.0)
    _bool(config, "selfplay.lzs_pass_rule")
    _int(config, "selfplay.sgf_games_per_generation", 0)

    # Schedules.
    _schedule(config, "schedules.visits", 2, allow_empty=True)
    network = _schedule(config, "schedules.network", 3, allow_empty=True, value_minimum=0)
    for i, entry in enumerate(network):
        if entry[2] < 1:  # blocks may be 0, filters may not
            raise ValueError(f"schedules.network[{i}] filters must be >= 1, got {entry!r}")
    _schedule(config, "schedules.window", 2, allow_empty=False)

    # Training.
    _int(config, "training.steps_per_generation", 1)
    _int(config, "training.batch_size", 1)
    _choice(config, "training.optimizer", OPTIMIZERS)
    if "growth" in config.training:  # older configs: retrain
        growth = _choice(config, "training.growth", GROWTHS)
        if growth == "widen":
            _check_widening_schedule(config)
    _float(config, "training.learning_rate", 0.0, strict_min=True)
    lr_schedule = _choice(config, "training.lr_schedule", LR_SCHEDULES)
    _check_lr_schedule(config, lr_schedule)
    _float(config, "training.momentum", 0.0, 1.0)
    if _get(config, "training.momentum") >= 1.0:
        raise ValueError(f"training.momentum must be < 1, got {_get(config, 'training.momentum')!r}")
    _bool(config, "training.nesterov")
    _float(config, "training.l2", 0.0)
    _float(config, "training.grad_clip", 0.0)
    _float(config, "training.value_weight", 0.0)
    _float(config, "training.score_weight", 0.0)
    ownership_weight = _optional_float(config, "training.ownership_weight")
    if ownership_weight > 0 and not ownership_head:
        raise ValueError(
            f"training.ownership_weight ({ownership_weight}) must be 0 unless network.ownership_head "
            f"is True (the loss trains that head), got network.ownership_head {ownership_head!r}"
        )
    opponent_policy_weight = _optional_float(config, "training.opponent_policy_weight")
    if opponent_policy_weight > 0 and not opponent_policy_head:
        raise ValueError(
            f"training.opponent_policy_weight ({opponent_policy_weight}) must be 0 unless "
            f"network.opponent_policy_head is True (the loss trains that head), got "
            f"network.opponent_policy_head {opponent_policy_head!r}"
        )
    score_aux_weight = _optional_float(config, "training.score_aux_weight")
    if score_aux_weight > 0 and head != "sai":
        raise ValueError(
            f"training.score_aux_weight ({score_aux_weight}) must be 0 unless network.value_head is "
            f"'sai' (it trains α + k as the final margin), got value_head {head!r}"
        )

    ema_decay = _optional_float(config, "training.ema_decay")
    if not ema_decay < 1.0:
        raise ValueError(f"training.ema_decay must be in [0, 1) (0: no weight averaging), got {ema_decay!r}")
    _optional_float(config, "training.samples_per_new_row")
    if _has(config, "training.steps_per_call"):
        _int(config, "training.steps_per_call", 0)

    # Gating.
    _bool(config, "gating.enabled")
    _int(config, "gating.candidates", 1)
    _int(config, "gating.games", 1)
    _float(config, "gating.threshold", 0.0, 1.0)
    _int(config, "gating.opening_moves", 0)

    # Offline styles and the starting net.
    bonus = _float(config, "style.centre_bonus")
    if not -1.0 < bonus < 1.0:
        raise ValueError(f"style.centre_bonus must be in (-1, 1) (edge points count 1 - b), got {bonus!r}")
    init = _get(config, "init_checkpoint")
    if not isinstance(init, str):
        raise ValueError(f"init_checkpoint must be a path or 'zoo:<name>' (empty: random), got {init!r}")

    # The batches, sharded across the devices.
    _check_sharding(config, device_count)


def _check_widening_schedule(config) -> None:
    """With training.growth 'widen', each step of schedules.network must grow a
    net that can start as the one before (`widen.check_widening`)."""
    shapes = [(int(b), int(f)) for _, b, f in config.schedules.network]
    pooling = bool(config.network.get("global_pooling", False))
    for (b0, f0), (b1, f1) in zip(shapes, shapes[1:]):
        try:
            widen.check_widening(
                networks.NetworkSpec(board_size=9, blocks=b0, filters=f0, global_pooling=pooling),
                networks.NetworkSpec(board_size=9, blocks=b1, filters=f1, global_pooling=pooling),
            )
        except ValueError as e:
            schedule = tuple(config.schedules.network)
            raise ValueError(f"training.growth 'widen' and schedules.network {schedule}: {e}") from None


def _check_lr_schedule(config, lr_schedule: str) -> None:
    boundaries = _get(config, "training.lr_boundaries")
    values = _get(config, "training.lr_values")
    for name, seq in (("training.lr_boundaries", boundaries), ("training.lr_values", values)):
        if not isinstance(seq, (list, tuple)):
            raise ValueError(f"{name} must be a list, got {seq!r}")
    if lr_schedule == "constant":
        return
    if not all(checks.is_int(b) and b >= 1 for b in boundaries):
        raise ValueError(f"training.lr_boundaries must be generations (ints >= 1), got {boundaries!r}")
    if any(b2 <= b1 for b1, b2 in zip(boundaries, boundaries[1:])):
        raise ValueError(f"training.lr_boundaries must be strictly increasing, got {boundaries!r}")
    if not all(checks.is_number(v) and v >= 0 for v in values):
        raise ValueError(f"training.lr_values must be finite numbers >= 0, got {values!r}")
    if lr_schedule == "piecewise":
        if not boundaries or len(values) != len(boundaries):
            raise ValueError(
                f"training.lr_values must have one value per boundary in "
                f"training.lr_boundaries for lr_schedule 'piecewise', got "
                f"lr_values={values!r}, lr_boundaries={boundaries!r}"
            )
    elif len(boundaries) != 1 or len(values) != 1:
        raise ValueError(
            f"lr_schedule 'cosine' needs training.lr_boundaries=[G] (the "
            f"generation where the decay ends) and training.lr_values="
            f"[final_lr], got lr_boundaries={boundaries!r}, "
            f"lr_values={values!r}"
        )


# ---------------------------------------------------------------------------
# Schedules and derived values.


def schedule_value(schedule: Sequence[Sequence[int]], generation: int) -> Any:
    """The schedule entry in force at `generation`.

    Args:
        schedule: `[[generation, v], ...]` or `[[generation, v1, v2], ...]`,
            sorted by generation, starting at 0.
        generation: the generation, >= 0.

    Returns:
        `v` for two-element entries, the tuple `(v1, v2, ...)` otherwise, from
        the last entry whose generation is <= `generation`.

    Raises:
        ValueError: for an empty schedule or a generation before its start.
    """
    chosen = None
    for entry in schedule:
        if entry[0] <= generation:
            chosen = entry
        else:
            break
    if chosen is None:
        raise ValueError(f"schedule {list(schedule)!r} has no entry for generation {generation}")
    if len(chosen) == 2:
        return chosen[1]
    return tuple(chosen[1:])


def visits_schedule(config) -> tuple[tuple[int, int], ...]:
    """The search's visits by generation, as `((generation, simulations), ...)`:
    `schedules.visits`, or `((0, search.num_simulations),)` when that schedule
    is empty. The one reader of those two fields for a run's searches
    (`num_simulations`, `saijax.learn.run_setup.Schedules`)."""
    if config.schedules.visits:
        return tuple((int(generation), int(simulations)) for generation, simulations in config.schedules.visits)
    return ((0, int(config.search.num_simulations)),)


def num_simulations(config, generation: int) -> int:
    """Search simulations at `generation` (`visits_schedule`)."""
    return schedule_value(visits_schedule(config), generation)


def network_shape(config, generation: int) -> tuple[int, int]:
    """(blocks, filters) at `generation` (schedules.network, or the constant
    network.blocks / network.filters when that schedule is empty)."""
    if config.schedules.network:
        blocks, filters = schedule_value(config.schedules.network, generation)
        return int(blocks), int(filters)
    return int(config.network.blocks), int(config.network.filters)


AUTO_STEPS_PER_CALL = 32  # training.steps_per_call = 0 off the CPU


def steps_per_call(config) -> int:
    """Training steps per program (`training.steps_per_call`): the field, or
    with 0 (and for configs without it) `AUTO_STEPS_PER_CALL` on a GPU or
    TPU and 1 on the CPU, where XLA runs a scanned step several times
    slower than the step alone (benchmarks/training.py)."""
    value = int(config.training.get("steps_per_call", 0) or 0)
    if value > 0:
        return value
    return 1 if jax.default_backend() == "cpu" else AUTO_STEPS_PER_CALL


def window_size(config, generation: int) -> int:
    """Training window w (in generations) at `generation`."""
    return int(schedule_value(config.schedules.window, generation))


def effective_max_moves(config) -> int:
    """The move cap: `max_moves`, or 2·N² when it is 0 (docs/design.md §1)."""
    if config.max_moves:
        return int(config.max_moves)
    return 2 * config.board_size * config.board_size


def records_ownership(config) -> bool:
    """Whether self-play records final-ownership targets (docs/design.md §6):
    when the net has the ownership head or the auxiliary score loss is on
    (both train only on games played out, which the targets mark). Missing
    fields (older configs) count as off."""
    return _optional_bool(config, "network.ownership_head") or (
        _optional_float(config, "training.score_aux_weight") > 0
    )


def records_opponent_policy(config) -> bool:
    """Whether self-play rows carry opponent-reply policy targets
    (docs/design.md §6): when the net has the opponent policy head. A
    missing field (older configs) counts as off."""
    return _optional_bool(config, "network.opponent_policy_head")


def dirichlet_alpha(config) -> float:
    """Root Dirichlet α: `search.dirichlet_alpha`, or 0.03·361/N² when it is 0
    (SAI's engine; 0.134 on 9×9)."""
    if config.search.dirichlet_alpha:
        return float(config.search.dirichlet_alpha)
    return 0.03 * 361 / (config.board_size * config.board_size)


def from_section(cls, section) -> Any:
    """Builds the static dataclass ``cls`` from a config section (a
    ConfigDict or mapping), keeping only the fields ``cls`` defines.

    For example ``from_section(search.SearchConfig, config.search)``; this
    keeps the modules that define such classes free of config code.
    """
    return cls(**_section_values(cls, section))


def _section_values(cls, section) -> dict[str, Any]:
    """The items of a config section (a ConfigDict or mapping) that are fields of the dataclass ``cls``."""
    names = {f.name for f in dataclasses.fields(cls)}
    items = dict(section.items()) if hasattr(section, "items") else dict(section)
    return {k: v for k, v in items.items() if k in names}


def load_config(path: str | os.PathLike) -> ml_collections.ConfigDict:
    """Imports a `configs/*.py` file and returns its `get_config()`.

    This is what `--config=path` does in the entry points; notebooks and tests
    use it directly.
    """
    path = os.fspath(path)
    name = "_saijax_config_" + os.path.splitext(os.path.basename(path))[0]
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise ValueError(f"cannot load a config from {path}")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.get_config()


def parse_flags(argv):
    """absl's flag parsing for a command with a ``--config`` file (``app.run(main, flags_parser=parse_flags)``),
    but a bad ``--config.<field>`` override is one line on stderr (``error: unknown config field: Did you mean
    ...``) and exit status 2, not a traceback."""
    try:
        return absl_flags.FLAGS(argv)
    except (absl_flags.Error, AttributeError, KeyError, TypeError, ValueError) as e:
        chain, cause = [], e
        while cause is not None and len(chain) < 10:
            is_key = isinstance(cause, KeyError) and cause.args
            chain.append(str(cause.args[0]) if is_key else str(cause))
            cause = cause.__cause__ or cause.__context__
        hints = [m for m in chain if "Did you mean" in m]
        field = chain[0].strip("'\" ")
        overrides = [a.split("=")[0] for a in argv[1:] if a.startswith("--config.") and field in a.split("=")[0]]
        if hints:
            hint = " ".join(hints[0].replace("\\n", " ").split())
            message = "unknown config field: " + hint[hint.find("Did you mean") :].rstrip("'\"")
        elif overrides and field.isidentifier():  # no near name to suggest
            message = f"unknown config field {field!r} in {overrides[0]}"
        else:
            message = " ".join(chain[0].split()) or repr(e)
        sys.stderr.write(f"error: {message}\n")
        sys.exit(2)
