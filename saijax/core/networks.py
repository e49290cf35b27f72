"""The SAI residual network and its baseline value heads (docs/design.md §3).

One trunk, one policy head and a choice of value head:

* ``"sai"``: SAI's double value head. α is the expected board lead of the
  player to move P, before komi, in points; β > 0 is the steepness of P's
  win-probability sigmoid ``τ(x) = σ(β (α + x))`` (docs/design.md §4). Input:
  the 17 SAI planes of docs/design.md §2.
* ``"winrate"``: the AlphaZero / Leela Zero baseline, a tanh output trained on
  ±1 at one fixed komi.
* ``"score"``: the Leela Zero Score baseline, a linear output trained on the
  final Tromp–Taylor margin divided by N².

The baselines take 18 planes: the 17 SAI planes followed by a colour plane.
``saijax.core.features`` builds the planes; this module only knows how many each
head takes (``input_planes``), since its first convolution's width depends
on that, and otherwise reads the channel count from its input.

Layout. Every convolution uses zero ("SAME") padding and no bias, since a
batch norm follows each one:

* trunk: 3×3 conv with ``filters`` channels, BN, ReLU, then ``blocks``
  residual blocks of conv-BN-ReLU-conv-BN, skip connection, ReLU;
* policy head: 1×1 conv with 2 filters, BN, ReLU, dense ``N*N+1`` logits
  (action ``row * N + col``, pass ``N * N``);
* value head: 1×1 conv with 2 filters, BN, ReLU, then

  - ``"sai"``: α sub-head dense ``alpha_units`` (384), ReLU, dense 1; β
    sub-head dense ``beta_units`` (256), ReLU, dense 1, and
    ``β = exp(clip(out, -20, 20)) · beta_scale``;
  - ``"winrate"`` / ``"score"``: dense ``value_units`` (256), ReLU, dense 1,
    then tanh (winrate) or nothing (score). The baselines keep SAI's
    2-filter value convolution (AlphaZero used 1), so the heads differ only
    after it.

* ownership head (optional, ``ownership_head=True``; KataGo's auxiliary
  target [Wu 2019]): 1×1 convolution with 8 filters, BN, ReLU, a 1×1
  convolution with bias to one channel, tanh: per point, P's predicted final
  Tromp–Taylor ownership (+1 P's, −1 the opponent's, 0 neither). Trained only
  through ``training.ownership_weight``; search does not read it.
* opponent policy head (optional, ``opponent_policy_head=True``; KataGo's
  opponent-reply target [Wu 2019 §4.2]): a second policy head of the same
  layout (``opponent_policy_conv``/``_bn``/``_dense``), N*N+1 logits for the
  opponent's reply to P's move. Trained only through
  ``training.opponent_policy_weight``; search does not read it.
* global pooling (optional, ``global_pooling=True``; KataGo's global pooling
  [Wu 2019 §4.1]). ``G = mean ⧺ max`` over the board of a set of channels
  (per channel; KataGo's third feature, the mean scaled by (N − 14)/10, is a
  constant multiple of the mean on a fixed board, so it adds nothing):

  - in the residual blocks i with ``i % 3 == 2`` (KataGo's b6/b10 layout:
    the 3rd, 6th, ... block; a net with 1 or 2 blocks pools in its last),
    a second 3×3 convolution of the block's input with ``max(1, F // 4)``
    channels, BN, ReLU, is pooled, and a dense layer (no bias) of G is added
    to the first convolution's F channels as a per-channel bias, before bn1;
  - the heads pool the trunk's output (2F features): the policy heads add a
    dense layer of them as a bias to their 2 convolution channels (before
    BN) and a dense layer of them to the pass logit; the value heads' hidden
    dense layers read them concatenated to the flattened value map.
    α, β, value and the logits keep their meaning.

Batch norm uses momentum 0.9 (running statistics with a time constant of
about 10 steps) rather than flax's default 0.99: zero-style training moves
the weights a lot within a generation, and a fast average keeps the
inference statistics in step with the current weights.

Batch-norm state lives in the ``"batch_stats"`` collection. ``apply_network``
wraps flax's mutable-collection pattern: in train mode it returns the updated
statistics, in eval mode ``None``.
"""

from __future__ import annotations

import dataclasses
import functools
import math
from typing import Any

import flax
import flax.linen as nn
import jax
import jax.numpy as jnp

from saijax.core import checks

__all__ = [
    "NetworkOutputs",
    "NetworkSpec",
    "PRECISIONS",
    "SaiNet",
    "VALUE_HEADS",
    "compute_dtype",
    "apply_network",
    "init_network",
    "input_planes",
    "make_network",
    "param_count",
    "pooling_blocks",
]

VALUE_HEADS = ("sai", "winrate", "score")
# Compute precisions for evaluating a net (``SaiNet.dtype``). Training is float32.
PRECISIONS = ("float32", "bfloat16")

# The β sub-head's pre-exponential output is clipped to this range. exp(±20)
# spans about [2e-9, 5e8]: times beta_scale (10/N², at least ~0.028) that is
# far wider than any useful steepness, yet exp never overflows float32 and β
# never reaches 0, so callers may divide by β.
_BETA_LOG_CLIP = 20.0

_BN_MOMENTUM = 0.9
_BN_EPSILON = 1e-5

_MIN_BOARD_SIZE = 2
_MAX_BOARD_SIZE = 19


@flax.struct.dataclass
class NetworkOutputs:
    """What one forward pass returns for a batch of B positions.

    All fields are float32, whatever the network's compute dtype. P is the
    player to move in each position.

    * ``"sai"`` head: ``alpha`` and ``beta`` are the two sub-heads (α in
      points, before komi; β > 0). ``value`` is all zeros: SAI's value
      depends on komi, ``σ(β (α + k))``, so callers ignore this field.
    * ``"winrate"`` head: ``value`` is the tanh output, P's expected outcome
      in [−1, 1] at the komi the net was trained on; ``alpha`` = 0,
      ``beta`` = 1.
    * ``"score"`` head: ``value`` is the linear output, P's predicted final
      margin (komi included) divided by N²; ``alpha = value · N²`` (that
      margin in points, so a score lead can be reported); ``beta`` = 1.

    ``ownership`` is None unless the net has the ownership head; then it is
    [B, N*N] in [−1, 1] (point ``row * N + col``): P's predicted final
    Tromp–Taylor ownership of each point (+1 P's, −1 the opponent's).

    ``opponent_policy_logits`` is None unless the net has the opponent policy
    head; then it is [B, N*N+1]: logits of the opponent's reply after P's
    move, indexed like ``policy_logits``.
    """

    policy_logits: jax.Array  # [B, N*N+1]
    alpha: jax.Array  # [B]
    beta: jax.Array  # [B]
    value: jax.Array  # [B]
    ownership: jax.Array | None = None  # [B, N*N], only with the ownership head
    # [B, N*N+1], the opponent's reply to P's move; only with the opponent policy head.
    opponent_policy_logits: jax.Array | None = None


def input_planes(value_head: str) -> int:
    """Number of input planes a value head expects.

    Args:
      value_head: "sai", "winrate" or "score".

    Returns:
      17 for "sai" (docs/design.md §2, no colour plane); 18 for the baselines (the
      17 SAI planes followed by a colour plane). ``features.network_inputs``
      builds them.

    Raises:
      ValueError: if ``value_head`` is not one of the three kinds.
    """
    if value_head not in VALUE_HEADS:
        raise ValueError(f"value_head must be one of {VALUE_HEADS}, got {value_head!r}")
    return 17 if value_head == "sai" else 18


def compute_dtype(precision: str) -> Any:
    """The ``SaiNet.dtype`` for a precision name: None (float32) or ``jnp.bfloat16``.

    Raises:
      ValueError: ``precision`` is not one of :data:`PRECISIONS`.
    """
    if precision not in PRECISIONS:
        raise ValueError(f"precision must be one of {PRECISIONS}, got {precision!r}")
    return None if precision == "float32" else jnp.bfloat16


def _validate(board_size: Any, blocks: Any, filters: Any, value_head: Any, beta_scale: Any) -> None:
    """Raises ValueError, naming the field, for an unusable configuration."""
    if value_head not in VALUE_HEADS:
        raise ValueError(f"value_head must be one of {VALUE_HEADS}, got {value_head!r}")
    if not checks.is_int(board_size) or not _MIN_BOARD_SIZE <= board_size <= _MAX_BOARD_SIZE:
        raise ValueError(f"board_size must be an int in {_MIN_BOARD_SIZE}..{_MAX_BOARD_SIZE}, got {board_size!r}")
    if not checks.is_int(blocks) or blocks < 0:
        raise ValueError(f"blocks must be an int >= 0, got {blocks!r}")
    if not checks.is_int(filters) or filters < 1:
        raise ValueError(f"filters must be an int >= 1, got {filters!r}")
    if beta_scale is not None and not (
        isinstance(beta_scale, (int, float)) and math.isfinite(beta_scale) and beta_scale > 0
    ):
        raise ValueError(f"beta_scale must be None or a finite number > 0, got {beta_scale!r}")


def _batch_norm(name: str, train: bool, dtype: Any) -> nn.BatchNorm:
    return nn.BatchNorm(
        use_running_average=not train, momentum=_BN_MOMENTUM, epsilon=_BN_EPSILON, dtype=dtype, name=name
    )


def _conv_bn_relu(
    x: jax.Array, filters: int, kernel: tuple[int, int], *, conv_name: str, bn_name: str, train: bool, dtype: Any
) -> jax.Array:
    x = nn.Conv(filters, kernel, padding="SAME", use_bias=False, dtype=dtype, name=conv_name)(x)
    x = _batch_norm(bn_name, train, dtype)(x)
    return nn.relu(x)


# The pooled terms of the blocks and policy heads start at zero, so a fresh net
# with global pooling plays like one without it until training moves them.
# With random kernels the pooled pass term gave the pass move a logit offset
# shared by every position: a 7×7 run from scratch then passed after its
# opening and fell into short pass-ended games.
_ZEROS = nn.initializers.zeros


def _global_pool(x: jax.Array) -> jax.Array:
    """[B, N, N, C] → [B, 2C]: per-channel mean, then max, over the board."""
    return jnp.concatenate([jnp.mean(x, axis=(1, 2)), jnp.max(x, axis=(1, 2))], axis=-1)


def pooling_blocks(blocks: int) -> tuple[int, ...]:
    """The residual blocks that carry global pooling (``global_pooling=True``).

    Every third block, i % 3 == 2, as KataGo's b6/b10 nets; a net with 1 or
    2 blocks pools in its last one, and one with no block only in the heads.
    """
    chosen = tuple(i for i in range(blocks) if i % 3 == 2)
    return chosen or ((blocks - 1,) if blocks > 0 else ())


def _policy_head(h, pooled, prefix: str, *, board_size: int, train: bool, dtype: Any) -> jax.Array:
    """1×1 conv (2 filters), BN, ReLU, dense N*N+1 logits. With ``pooled``
    (the trunk's [B, 2F] global features): a dense per-channel bias of them
    before BN, and a dense term of them added to the pass logit."""
    n, batch = board_size, h.shape[0]
    p = nn.Conv(2, (1, 1), padding="SAME", use_bias=False, dtype=dtype, name=f"{prefix}_conv")(h)
    if pooled is not None:
        p = (
            p
            + nn.Dense(2, use_bias=False, kernel_init=_ZEROS, dtype=dtype, name=f"{prefix}_gpool")(pooled)[
                :, None, None, :
            ]
        )
    p = nn.relu(_batch_norm(f"{prefix}_bn", train, dtype)(p))
    # Flattened (row, col, channel)-major, the same board order as the
    # logit index row * N + col.
    logits = nn.Dense(n * n + 1, dtype=jnp.float32, name=f"{prefix}_dense")(p.reshape((batch, n * n * 2)))
    if pooled is not None:
        pass_term = nn.Dense(1, use_bias=False, kernel_init=_ZEROS, dtype=jnp.float32, name=f"{prefix}_pass_gpool")(
            pooled
        )
        logits = logits.at[:, n * n].add(pass_term[:, 0])
    return logits


class _ResidualBlock(nn.Module):
    """conv-BN-ReLU-conv-BN, skip connection, ReLU.

    With ``global_pooling``, KataGo's pooled bias: a second 3×3 convolution
    of the input with ``max(1, filters // 4)`` channels, BN, ReLU, pooled to
    mean and max per channel, and a dense layer of those added to the first
    convolution's output as a per-channel bias, before bn1.
    """

    filters: int
    dtype: Any = None
    global_pooling: bool = False

    @nn.compact
    def __call__(self, x: jax.Array, *, train: bool) -> jax.Array:
        if self.global_pooling:
            y = nn.Conv(self.filters, (3, 3), padding="SAME", use_bias=False, dtype=self.dtype, name="conv1")(x)
            g = _conv_bn_relu(
                x,
                max(1, self.filters // 4),
                (3, 3),
                conv_name="gpool_conv",
                bn_name="gpool_bn",
                train=train,
                dtype=self.dtype,
            )
            bias = nn.Dense(self.filters, use_bias=False, kernel_init=_ZEROS, dtype=self.dtype, name="gpool_dense")(
                _global_pool(g)
            )
            y = nn.relu(_batch_norm("bn1", train, self.dtype)(y + bias[:, None, None, :]))
        else:
            y = _conv_bn_relu(x, self.filters, (3, 3), conv_name="conv1", bn_name="bn1", train=train, dtype=self.dtype)
        y = nn.Conv(self.filters, (3, 3), padding="SAME", use_bias=False, dtype=self.dtype, name="conv2")(y)
        y = _batch_norm("bn2", train, self.dtype)(y)
        return nn.relu(x + y)


class SaiNet(nn.Module):
    """SAI's residual network (docs/design.md §3) with a selectable value head.

    Attributes:
      board_size: N, the static board size (2..19).
      blocks: number of residual blocks (0 allowed: trunk conv only).
      filters: channels of every trunk convolution.
      value_head: "sai" (α/β double head), "winrate" (tanh) or "score"
        (linear margin / N²).
      beta_scale: β = exp(out) · beta_scale; None means 10 / N², SAI's engine
        default.
      alpha_units: hidden width of the α sub-head.
      beta_units: hidden width of the β sub-head.
      value_units: hidden width of the "winrate" / "score" heads.
      ownership_head: add the ownership head (``NetworkOutputs.ownership``).
      global_pooling: KataGo's global pooling in some residual blocks
        (``pooling_blocks``) and in the heads.
      opponent_policy_head: add the opponent policy head
        (``NetworkOutputs.opponent_policy_logits``).
      dtype: compute dtype of the trunk and hidden layers (None: float32).
        Parameters stay float32, and the output layers compute in float32 so
        that α, β and the logits keep their precision under bfloat16.
    """

    board_size: int
    blocks: int
    filters: int
    value_head: str = "sai"
    beta_scale: float | None = None
    alpha_units: int = 384
    beta_units: int = 256
    value_units: int = 256
    ownership_head: bool = False
    global_pooling: bool = False
    opponent_policy_head: bool = False
    dtype: Any = None

    @property
    def effective_beta_scale(self) -> float:
        """The factor multiplying exp(out) in β (10 / N² when unset)."""
        if self.beta_scale is None:
            return _default_beta_scale(self.board_size)
        return float(self.beta_scale)

    @property
    def spec(self) -> NetworkSpec:
        """The net's architecture: what a checkpoint records to rebuild it.

        Only the configurable fields: the hidden widths and ``dtype`` are
        left out (checkpoints always use the defaults).
        """
        return NetworkSpec(
            board_size=self.board_size,
            blocks=self.blocks,
            filters=self.filters,
            value_head=self.value_head,
            beta_scale=self.beta_scale,
            ownership_head=self.ownership_head,
            global_pooling=self.global_pooling,
            opponent_policy_head=self.opponent_policy_head,
        )

    @nn.compact
    def __call__(self, x: jax.Array, *, train: bool) -> NetworkOutputs:
        """Runs the network on a batch of input planes.

        Args:
          x: float [B, N, N, C] planes: C = 17 for "sai", 18 (SAI planes plus
            a colour plane) for the baselines. C is read from x.
          train: True normalises with batch statistics and updates the
            running averages (apply with ``mutable=["batch_stats"]``); False
            normalises with the running averages.

        Returns:
          NetworkOutputs for the batch.

        Raises:
          ValueError: on a bad configuration or if x is not [B, N, N, C].
        """
        _validate(self.board_size, self.blocks, self.filters, self.value_head, self.beta_scale)
        n = self.board_size
        if x.ndim != 4 or tuple(x.shape[1:3]) != (n, n):
            raise ValueError(f"x must have shape [B, {n}, {n}, C], got {tuple(x.shape)}")
        batch = x.shape[0]
        x = x.astype(self.dtype or jnp.float32)

        h = _conv_bn_relu(
            x, self.filters, (3, 3), conv_name="input_conv", bn_name="input_bn", train=train, dtype=self.dtype
        )
        pooling = pooling_blocks(self.blocks) if self.global_pooling else ()
        for i in range(self.blocks):
            h = _ResidualBlock(self.filters, dtype=self.dtype, global_pooling=i in pooling, name=f"block_{i}")(
                h, train=train
            )
        # The trunk's global features for the heads (KataGo §4.1), [B, 2F].
        pooled = _global_pool(h) if self.global_pooling else None

        head = functools.partial(_policy_head, board_size=n, train=train, dtype=self.dtype)
        policy_logits = head(h, pooled, "policy")
        opponent_logits = head(h, pooled, "opponent_policy") if self.opponent_policy_head else None

        ownership = None
        if self.ownership_head:
            o = _conv_bn_relu(
                h, 8, (1, 1), conv_name="ownership_conv", bn_name="ownership_bn", train=train, dtype=self.dtype
            )
            o = nn.Conv(1, (1, 1), padding="SAME", use_bias=True, dtype=jnp.float32, name="ownership_out")(o)
            ownership = jnp.tanh(o.reshape((batch, n * n)))

        v = _conv_bn_relu(h, 2, (1, 1), conv_name="value_conv", bn_name="value_bn", train=train, dtype=self.dtype)
        v = v.reshape((batch, n * n * 2))
        if pooled is not None:
            v = jnp.concatenate([v, pooled.astype(v.dtype)], axis=-1)
        zeros = jnp.zeros((batch,), jnp.float32)
        ones = jnp.ones((batch,), jnp.float32)

        if self.value_head == "sai":
            a = nn.relu(nn.Dense(self.alpha_units, dtype=self.dtype, name="alpha_hidden")(v))
            alpha = nn.Dense(1, dtype=jnp.float32, name="alpha_out")(a)[:, 0]
            b = nn.relu(nn.Dense(self.beta_units, dtype=self.dtype, name="beta_hidden")(v))
            log_beta = nn.Dense(1, dtype=jnp.float32, name="beta_out")(b)[:, 0]
            # Outside the clip range the gradient is zero; a net asking for β
            # beyond exp(±20)·scale gains nothing from the extra steepness.
            log_beta = jnp.clip(log_beta, -_BETA_LOG_CLIP, _BETA_LOG_CLIP)
            beta = jnp.exp(log_beta) * self.effective_beta_scale
            return NetworkOutputs(
                policy_logits=policy_logits,
                alpha=alpha,
                beta=beta,
                value=zeros,
                ownership=ownership,
                opponent_policy_logits=opponent_logits,
            )

        u = nn.relu(nn.Dense(self.value_units, dtype=self.dtype, name="value_hidden")(v))
        out = nn.Dense(1, dtype=jnp.float32, name="value_out")(u)[:, 0]
        if self.value_head == "winrate":
            return NetworkOutputs(
                policy_logits=policy_logits,
                alpha=zeros,
                beta=ones,
                value=jnp.tanh(out),
                ownership=ownership,
                opponent_policy_logits=opponent_logits,
            )
        return NetworkOutputs(
            policy_logits=policy_logits,
            alpha=out * (n * n),
            beta=ones,
            value=out,
            ownership=ownership,
            opponent_policy_logits=opponent_logits,
        )


def _default_beta_scale(board_size: int) -> float:
    """SAI's engine default for β's scale: 10 / N²."""
    return 10.0 / board_size**2


_SPEC_FIELDS = ("board_size", "blocks", "filters", "value_head", "beta_scale")
# Optional spec fields, with the value a dict without them means. They are
# written only when they differ from it, so a spec without the ownership head,
# global pooling and the opponent policy head has exactly the dict (and
# checkpoint metadata) it had before those fields existed.
_OPTIONAL_SPEC_FIELDS = {"ownership_head": False, "global_pooling": False, "opponent_policy_head": False}


@dataclasses.dataclass(frozen=True)
class NetworkSpec:
    """Everything that fixes a network's function: one description that both
    builds the net and is stored with its checkpoints.

    Attributes:
      board_size: N, 2..19.
      blocks: residual blocks, >= 0.
      filters: trunk channels, >= 1.
      value_head: "sai", "winrate" or "score".
      beta_scale: β = exp(out) · beta_scale. None at construction means
        SAI's default 10 / N², and is resolved at once: the field always
        holds the effective float, so two specs of the same net compare
        equal and a stored spec does not depend on the default's formula.
        (``dataclasses.replace`` keeps the resolved value, even with a new
        ``board_size``.)
      ownership_head: the net has the ownership head (False in every
        checkpoint written before the field existed).
      global_pooling: the net has KataGo's global pooling (False in older
        checkpoints).
      opponent_policy_head: the net has the opponent policy head (False in
        older checkpoints).

    Raises:
      ValueError: naming the field, for an unusable configuration.
    """

    board_size: int
    blocks: int
    filters: int
    value_head: str = "sai"
    beta_scale: float | None = None
    ownership_head: bool = False
    global_pooling: bool = False
    opponent_policy_head: bool = False

    def __post_init__(self):
        _validate(self.board_size, self.blocks, self.filters, self.value_head, self.beta_scale)
        for name in _OPTIONAL_SPEC_FIELDS:
            if not isinstance(getattr(self, name), bool):
                raise ValueError(f"{name} must be True or False, got {getattr(self, name)!r}")
        if self.beta_scale is None:
            object.__setattr__(self, "beta_scale", _default_beta_scale(self.board_size))
        else:
            object.__setattr__(self, "beta_scale", float(self.beta_scale))

    def build(self) -> SaiNet:
        """The flax module (stateless; see ``init_network`` for its variables)."""
        return SaiNet(
            board_size=self.board_size,
            blocks=self.blocks,
            filters=self.filters,
            value_head=self.value_head,
            beta_scale=self.beta_scale,
            ownership_head=self.ownership_head,
            global_pooling=self.global_pooling,
            opponent_policy_head=self.opponent_policy_head,
        )

    def to_dict(self) -> dict[str, Any]:
        """The fields as a JSON-able dict (``beta_scale`` resolved).

        ``ownership_head``, ``global_pooling`` and ``opponent_policy_head``
        are included only when True, so a net without them has the same
        five-key dict as before those fields existed.
        """
        d = {name: getattr(self, name) for name in _SPEC_FIELDS}
        for name, default in _OPTIONAL_SPEC_FIELDS.items():
            if getattr(self, name) != default:
                d[name] = getattr(self, name)
        return d

    @classmethod
    def from_dict(cls, d: Any) -> NetworkSpec:
        """The spec ``to_dict`` wrote.

        Args:
          d: a mapping with the keys board_size, blocks, filters, value_head
            and beta_scale (None: the default 10 / N²), and optionally
            ownership_head, global_pooling and opponent_policy_head
            (missing: False, as in older checkpoints). Other
            keys are ignored, so a checkpoint's metadata can be passed whole.

        Raises:
          ValueError: naming the missing or bad key.
        """
        if not hasattr(d, "keys"):
            raise ValueError(f"a network spec must be a dict with keys {_SPEC_FIELDS}, got {d!r}")
        missing = [name for name in _SPEC_FIELDS if name not in d]
        if missing:
            raise ValueError(f"network spec is missing {', '.join(missing)}: got keys {sorted(d)}")
        optional = {name: d.get(name, default) for name, default in _OPTIONAL_SPEC_FIELDS.items()}
        return cls(**{name: d[name] for name in _SPEC_FIELDS}, **optional)


def make_network(
    board_size: int,
    *,
    blocks: int,
    filters: int,
    value_head: str = "sai",
    beta_scale: float | None = None,
    ownership_head: bool = False,
    global_pooling: bool = False,
    opponent_policy_head: bool = False,
) -> SaiNet:
    """Builds a SaiNet after checking its configuration.

    Shorthand for ``NetworkSpec(board_size, blocks, filters, value_head,
    beta_scale, ownership_head, global_pooling, opponent_policy_head).build()``.

    Args:
      board_size: N, 2..19.
      blocks: residual blocks, >= 0.
      filters: trunk channels, >= 1.
      value_head: "sai", "winrate" or "score".
      beta_scale: None (10 / N²) or a finite number > 0.
      ownership_head: add the ownership head.
      global_pooling: KataGo's global pooling in blocks and heads.
      opponent_policy_head: add the opponent policy head.

    Returns:
      The flax module (stateless; see ``init_network`` for its variables).

    Raises:
      ValueError: naming the offending field, or the bad value_head.
    """
    return NetworkSpec(
        board_size, blocks, filters, value_head, beta_scale, ownership_head, global_pooling, opponent_policy_head
    ).build()


def init_network(net: SaiNet, key: jax.Array, batch_size: int = 1) -> dict[str, Any]:
    """Initialises a network's variables.

    Args:
      net: the module.
      key: PRNG key, consumed.
      batch_size: batch of the all-zero example input [batch_size, N, N, C],
        with C = ``input_planes(net.value_head)``. It does not change the
        variables' shapes.

    Returns:
      ``{"params": ..., "batch_stats": ...}``, with batch-norm running means
      0 and variances 1.
    """
    n = net.board_size
    example = jnp.zeros((batch_size, n, n, input_planes(net.value_head)), jnp.float32)
    variables = net.init(key, example, train=False)
    return {"params": variables["params"], "batch_stats": variables["batch_stats"]}


def param_count(params: Any) -> int:
    """Total number of scalars in a parameter pytree."""
    return int(sum(leaf.size for leaf in jax.tree_util.tree_leaves(params)))


def apply_network(
    net: SaiNet, variables: dict[str, Any], x: jax.Array, *, train: bool = False
) -> tuple[NetworkOutputs, Any | None]:
    """Runs a network, handling the batch-norm collection.

    Args:
      net: the module.
      variables: ``{"params": ..., "batch_stats": ...}``.
      x: float [B, N, N, C] input planes.
      train: normalise with batch statistics and update the running averages.

    Returns:
      ``(outputs, new_batch_stats)`` in train mode; ``(outputs, None)`` in
      eval mode, which reads the running averages without changing them.
    """
    if train:
        outputs, updates = net.apply(variables, x, train=True, mutable=["batch_stats"])
        return outputs, updates["batch_stats"]
    return net.apply(variables, x, train=False), None
