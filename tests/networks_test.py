"""Tests for saijax.core.networks: shapes, β, symmetry, BN and a supervised fit."""

import json

import chex
import jax
import jax.numpy as jnp
import numpy as np
import optax
import pytest

from saijax.core import networks

_KEY = jax.random.key(0)

# Most tests call init and apply eagerly: they run each net once or twice,
# and on CPU compiling a whole init or forward pass costs more than
# dispatching already-cached primitives.


def _net(board_size, value_head="sai", blocks=1, filters=8, **kw):
    return networks.make_network(board_size, blocks=blocks, filters=filters, value_head=value_head, **kw)


def _random_planes(seed, batch, n, c):
    """Binary planes with the constant ones plane last (as in docs/design.md §2).

    numpy, not jax.random: eager jax.random compiles for every new shape.
    """
    x = np.random.default_rng(seed).random((batch, n, n, c)) < 0.3
    x[..., -1] = True
    return x.astype(np.float32)


# --------------------------------------------------------------------------
# Configuration and shapes.


@pytest.mark.parametrize("value_head", networks.VALUE_HEADS)
@pytest.mark.parametrize("n", [5, 9, 19])
def test_output_shapes(n, value_head):
    net = _net(n, value_head)
    c = networks.input_planes(value_head)
    variables = networks.init_network(net, _KEY)
    x = _random_planes(1, 3, n, c)
    out, stats = networks.apply_network(net, variables, x)
    assert stats is None
    chex.assert_shape(out.policy_logits, (3, n * n + 1))
    chex.assert_shape([out.alpha, out.beta, out.value], (3,))
    chex.assert_type([out.policy_logits, out.alpha, out.beta, out.value], jnp.float32)
    chex.assert_tree_all_finite(out)
    assert bool(jnp.all(out.beta > 0))
    if value_head == "sai":
        np.testing.assert_array_equal(out.value, 0.0)
    elif value_head == "winrate":
        assert bool(jnp.all(jnp.abs(out.value) <= 1.0))
        np.testing.assert_array_equal(out.alpha, 0.0)
        np.testing.assert_array_equal(out.beta, 1.0)
    else:
        np.testing.assert_allclose(out.alpha, out.value * n * n, rtol=1e-6)
        np.testing.assert_array_equal(out.beta, 1.0)


def test_input_planes():
    assert networks.input_planes("sai") == 17
    assert networks.input_planes("winrate") == 18
    assert networks.input_planes("score") == 18
    with pytest.raises(ValueError, match="'bogus'"):
        networks.input_planes("bogus")


@pytest.mark.parametrize(
    "kwargs, field",
    [
        (dict(board_size=9, blocks=1, filters=8, value_head="bogus"), "'bogus'"),
        (dict(board_size=9, blocks=-1, filters=8), "blocks"),
        (dict(board_size=9, blocks=1, filters=0), "filters"),
        (dict(board_size=1, blocks=1, filters=8), "board_size"),
        (dict(board_size=20, blocks=1, filters=8), "board_size"),
        (dict(board_size=9, blocks=1, filters=8, beta_scale=0.0), "beta_scale"),
    ],
)
def test_make_network_validates(kwargs, field):
    board_size = kwargs.pop("board_size")
    with pytest.raises(ValueError, match=field):
        networks.make_network(board_size, **kwargs)


def test_wrong_board_size_input_raises():
    net = _net(5)
    variables = networks.init_network(net, _KEY)
    with pytest.raises(ValueError, match=r"\[B, 5, 5, C\]"):
        networks.apply_network(net, variables, jnp.zeros((1, 6, 6, 17)))


def test_bfloat16_compute_keeps_float32_outputs():
    net = networks.SaiNet(board_size=5, blocks=1, filters=8, dtype=jnp.bfloat16)
    variables = networks.init_network(net, _KEY)
    chex.assert_trees_all_equal_dtypes(
        variables["params"], jax.tree_util.tree_map(lambda a: a.astype(jnp.float32), variables["params"])
    )
    out, _ = networks.apply_network(net, variables, _random_planes(0, 2, 5, 17))
    chex.assert_type([out.policy_logits, out.alpha, out.beta], jnp.float32)
    chex.assert_tree_all_finite(out)


def test_default_beta_scale():
    assert _net(9).effective_beta_scale == pytest.approx(10 / 81)
    assert _net(9, beta_scale=0.5).effective_beta_scale == 0.5


# --------------------------------------------------------------------------
# NetworkSpec.


def test_spec_resolves_beta_scale_and_builds_the_same_net():
    spec = networks.NetworkSpec(board_size=9, blocks=1, filters=8)
    assert spec.beta_scale == 10 / 81
    assert spec == networks.NetworkSpec(9, 1, 8, "sai", 10 / 81)
    net = spec.build()
    assert net == _net(9) and net.effective_beta_scale == 10 / 81
    assert net.spec == spec
    # A SaiNet built directly (beta_scale None) has the same spec.
    assert networks.SaiNet(board_size=9, blocks=1, filters=8).spec == spec
    scaled = networks.NetworkSpec(5, 2, 16, "score", 1)
    assert scaled.beta_scale == 1.0 and isinstance(scaled.beta_scale, float)
    assert scaled.build().spec == scaled


def test_spec_dict_round_trip():
    for spec in [networks.NetworkSpec(5, 1, 8), networks.NetworkSpec(19, 6, 64, "winrate", 0.5)]:
        d = json.loads(json.dumps(spec.to_dict()))
        assert d == {
            "board_size": spec.board_size,
            "blocks": spec.blocks,
            "filters": spec.filters,
            "value_head": spec.value_head,
            "beta_scale": spec.beta_scale,
        }
        assert networks.NetworkSpec.from_dict(d) == spec
        # Extra keys (a checkpoint's other metadata) are ignored.
        assert networks.NetworkSpec.from_dict({**d, "generation": 3}) == spec
    # None is the default scale.
    d = dict(board_size=5, blocks=1, filters=8, value_head="sai", beta_scale=None)
    assert networks.NetworkSpec.from_dict(d).beta_scale == 10 / 25


@pytest.mark.parametrize(
    "change, field",
    [
        (dict(blocks="1"), "blocks"),
        (dict(filters=0), "filters"),
        (dict(board_size=20), "board_size"),
        (dict(value_head="bogus"), "'bogus'"),
        (dict(beta_scale=-1.0), "beta_scale"),
        (dict(beta_scale=float("nan")), "beta_scale"),
    ],
)
def test_spec_validation_names_the_field(change, field):
    d = dict(board_size=5, blocks=1, filters=8, value_head="sai", beta_scale=0.5)
    with pytest.raises(ValueError, match=field):
        networks.NetworkSpec(**{**d, **change})
    with pytest.raises(ValueError, match=field):
        networks.NetworkSpec.from_dict({**d, **change})


def test_spec_from_dict_names_missing_keys():
    d = dict(board_size=5, blocks=1, filters=8, value_head="sai", beta_scale=0.5)
    with pytest.raises(ValueError, match="missing beta_scale"):
        networks.NetworkSpec.from_dict({k: v for k, v in d.items() if k != "beta_scale"})
    with pytest.raises(ValueError, match="missing blocks, filters"):
        networks.NetworkSpec.from_dict({"board_size": 5, "value_head": "sai", "beta_scale": 0.5})
    with pytest.raises(ValueError, match="network spec must be a dict"):
        networks.NetworkSpec.from_dict([5, 1, 8])


# --------------------------------------------------------------------------
# β stays finite and positive.


@pytest.fixture(scope="module")
def sai5():
    net = _net(5, blocks=2, filters=8)
    return net, networks.init_network(net, _KEY)


@pytest.mark.parametrize("scale", [1e3, 1e6, -1e6])
@pytest.mark.parametrize("train", [False, True])
def test_beta_finite_on_huge_input(sai5, scale, train):
    net, variables = sai5
    x = _random_planes(2, 4, 5, 17) * scale
    out, _ = networks.apply_network(net, variables, x, train=train)
    chex.assert_tree_all_finite(out)
    assert bool(jnp.all(out.beta > 0))


@pytest.mark.parametrize("bias", [1e4, -1e4])
def test_beta_clipped_when_head_saturates(sai5, bias):
    net, variables = sai5
    params = dict(variables["params"])
    params["beta_out"] = dict(params["beta_out"], bias=jnp.full((1,), bias, jnp.float32))
    out, _ = networks.apply_network(net, {**variables, "params": params}, _random_planes(3, 4, 5, 17))
    expected = np.exp(np.sign(bias) * 20.0) * net.effective_beta_scale
    np.testing.assert_allclose(out.beta, expected, rtol=1e-5)
    assert bool(jnp.all(out.beta > 0))


# --------------------------------------------------------------------------
# Dihedral symmetry. Local maps, independent of saijax.core.go: transform t in
# 0..7 rotates the board t % 4 quarter turns, then mirrors if t >= 4. Planes
# are [..., N, N, C] boards; a policy vector's entry row * N + col follows its
# point and the pass entry N * N stays put.


def _dihedral(a, t, axes):
    a = np.rot90(np.asarray(a), t % 4, axes=axes)
    return np.flip(a, axes[1]) if t >= 4 else a


def _transform_planes(x, t):  # [B, N, N, C]
    return _dihedral(x, t, (1, 2))


def _transform_policy(p, t, n):  # [B, N*N+1]
    p = np.asarray(p)
    board = _dihedral(p[:, : n * n].reshape(-1, n, n), t, (1, 2))
    return np.concatenate([board.reshape(-1, n * n), p[:, n * n :]], axis=1)


def test_dihedral_maps_are_a_group_action():
    n = 4
    p = np.arange(2 * (n * n + 1), dtype=np.float32).reshape(2, -1)
    images = {tuple(_transform_policy(p, t, n)[0]) for t in range(8)}
    assert len(images) == 8  # eight distinct maps
    # Action row*N+col goes where the point (row, col) of a plane goes.
    x = np.zeros((1, n, n, 1))
    x[0, 0, 1, 0] = 1.0  # row 0, col 1: B on the top edge
    onehot = np.zeros((1, n * n + 1))
    onehot[0, 1] = 1.0
    for t in range(8):
        moved = _transform_planes(x, t)[0, :, :, 0].reshape(-1)
        np.testing.assert_array_equal(moved, _transform_policy(onehot, t, n)[0, : n * n])
        assert _transform_policy(onehot, t, n)[0, n * n] == 0


def _group_mean(a, axes_list):
    """Mean of a over the dihedral group, acting on every axis pair at once."""
    total = 0.0
    for t in range(8):
        b = a
        for axes in axes_list:
            b = _dihedral(b, t, axes)
        total = total + b
    return total / 8


def _symmetrise(params, n):
    """Projects params onto the D4-equivariant subspace.

    Conv kernels become D4-invariant in space (each channel is then a scalar
    field on the board, and 'SAME' padding is symmetric). The first dense
    layer of each value sub-head becomes invariant on its (row, col) inputs,
    and the policy dense layer equivariant: W[g p, c, g a] = W[p, c, a], with
    pass fixed.
    """
    flat = {
        "/".join(k.key for k in path): np.asarray(leaf) for path, leaf in jax.tree_util.tree_leaves_with_path(params)
    }
    out = {}
    for name, w in flat.items():
        if name.endswith("kernel") and w.ndim == 4:  # conv [kh, kw, in, out]
            w = _group_mean(w, [(0, 1)])
        elif name == "policy_dense/kernel":
            w = w.reshape(n, n, 2, n * n + 1)
            board = _group_mean(w[..., : n * n].reshape(n, n, 2, n, n), [(0, 1), (3, 4)])
            pass_ = _group_mean(w[..., n * n], [(0, 1)])
            w = np.concatenate([board.reshape(n, n, 2, n * n), pass_[..., None]], axis=-1)
            w = w.reshape(2 * n * n, n * n + 1)
        elif name == "policy_dense/bias":
            board = _group_mean(w[: n * n].reshape(n, n), [(0, 1)])
            w = np.concatenate([board.reshape(-1), w[n * n :]])
        elif name.endswith("_hidden/kernel"):  # value sub-heads' first layer
            units = w.shape[-1]
            w = _group_mean(w.reshape(n, n, 2, units), [(0, 1)])
            w = w.reshape(2 * n * n, units)
        out[name] = w
    return jax.tree_util.tree_map_with_path(lambda path, _: out["/".join(k.key for k in path)], params)


def _perturb(tree, seed, scale):
    rng = np.random.default_rng(seed)
    return jax.tree_util.tree_map(lambda leaf: leaf + scale * rng.standard_normal(leaf.shape, np.float32), tree)


@pytest.mark.parametrize("value_head", ["sai", "score"])
@pytest.mark.parametrize("n", [5, 6])
def test_symmetric_weights_give_equivariant_net(n, value_head):
    # Equivariance holds up to float32 rounding, so the net must compute in
    # float32. A GPU's default for float32 convolutions and matrix products
    # is TF32 (a 10-bit mantissa): a rounding difference of 1e-7 between two
    # transformed inputs can then move a value to the next TF32 step, which
    # broke the symmetry by 6e-4 on an H200. "highest" asks for float32.
    with jax.default_matmul_precision("highest"):
        _check_equivariance(n, value_head)


def _check_equivariance(n, value_head):
    net = _net(n, value_head, blocks=2, filters=8)
    variables = networks.init_network(net, _KEY)
    # Random biases, BN scales and running statistics, so none of them is
    # trivially symmetric.
    params = _perturb(variables["params"], 4, 0.3)
    stats = _perturb(variables["batch_stats"], 5, 0.3)
    stats = jax.tree_util.tree_map_with_path(lambda path, s: np.abs(s) + 0.5 if path[-1].key == "var" else s, stats)
    x = _random_planes(6, 3, n, networks.input_planes(value_head))
    # All 8 transforms in one batch: [8 * B, N, N, C].
    xs = np.concatenate([_transform_planes(x, t) for t in range(8)])

    def max_violation(p, train):
        """Largest deviation from equivariance, relative to output size."""
        out, _ = networks.apply_network(net, {"params": p, "batch_stats": stats}, xs, train=train)
        # Batch-statistics mode normalises over the whole batch, which is
        # closed under the group, so it is equivariant too.
        out = jax.tree_util.tree_map(lambda a: np.asarray(a).reshape(8, -1, *a.shape[1:]), out)
        base = jax.tree_util.tree_map(lambda a: a[0], out)
        worst = 0.0
        for t in range(8):
            expected = base.replace(policy_logits=_transform_policy(base.policy_logits, t, n))
            for got, want in zip(jax.tree_util.tree_leaves(out), jax.tree_util.tree_leaves(expected)):
                err = np.abs(got[t] - want) / (1.0 + np.abs(want))
                worst = max(worst, float(np.max(err)))
        return worst

    sym = _symmetrise(params, n)
    violations = {train: max_violation(sym, train) for train in (False, True)}
    unsymmetrised = max_violation(params, False)
    print(f"\nN={n} {value_head}: violation {violations} symmetrised, {unsymmetrised:.3g} not")
    assert max(violations.values()) < 1e-4
    # Without symmetrisation the check must fail, or it tests nothing.
    assert unsymmetrised > 1e-2
    # And the input must matter: transformed positions get other policies.
    out, _ = networks.apply_network(net, {"params": sym, "batch_stats": stats}, xs)
    logits = np.asarray(out.policy_logits).reshape(8, -1, n * n + 1)
    assert np.max(np.abs(logits[1:] - logits[:1])) > 1e-2


# --------------------------------------------------------------------------
# jit, batch norm, parameter count.


@pytest.fixture(scope="module")
def jitted_forward(sai5):
    net, _ = sai5

    @jax.jit
    @chex.assert_max_traces(n=1)
    def forward(variables, x):
        return networks.apply_network(net, variables, x)[0]

    return forward


def test_jitted_forward_does_not_retrace(sai5, jitted_forward):
    _, variables = sai5
    first = jitted_forward(variables, _random_planes(7, 4, 5, 17))
    second = jitted_forward(variables, _random_planes(8, 4, 5, 17))
    assert not np.allclose(first.policy_logits, second.policy_logits)


def test_batch_norm_train_and_eval_modes(sai5):
    net, variables = sai5
    x = _random_planes(9, 8, 5, 17) * 3.0 + 1.0
    eval_out, none = networks.apply_network(net, variables, x, train=False)
    train_out, new_stats = networks.apply_network(net, variables, x, train=True)
    assert none is None
    assert not np.allclose(eval_out.policy_logits, train_out.policy_logits)
    old = variables["batch_stats"]
    chex.assert_trees_all_equal_shapes(old, new_stats)
    mean_old = old["input_bn"]["mean"]
    mean_new = new_stats["input_bn"]["mean"]
    assert not np.allclose(mean_old, mean_new)
    # The updated running statistics change what eval mode computes.
    updated = {**variables, "batch_stats": new_stats}
    later, _ = networks.apply_network(net, updated, x, train=False)
    assert not np.allclose(later.policy_logits, eval_out.policy_logits)


def _expected_param_count(n, c, blocks, filters, value_head):
    bn = lambda ch: 2 * ch  # scale and bias; running stats are not params
    dense = lambda i, o: i * o + o
    trunk = 9 * c * filters + bn(filters)
    trunk += blocks * 2 * (9 * filters * filters + bn(filters))
    policy = filters * 2 + bn(2) + dense(2 * n * n, n * n + 1)
    value = filters * 2 + bn(2)
    if value_head == "sai":
        value += dense(2 * n * n, 384) + dense(384, 1)
        value += dense(2 * n * n, 256) + dense(256, 1)
    else:
        value += dense(2 * n * n, 256) + dense(256, 1)
    return trunk + policy + value


@pytest.mark.parametrize("value_head", networks.VALUE_HEADS)
def test_param_count(value_head):
    n, blocks, filters = 5, 2, 8
    net = _net(n, value_head, blocks=blocks, filters=filters)
    params = networks.init_network(net, _KEY)["params"]
    c = networks.input_planes(value_head)
    assert networks.param_count(params) == _expected_param_count(n, c, blocks, filters, value_head)


def test_param_count_9x9_6x64():
    net = networks.make_network(9, blocks=6, filters=64)
    count = networks.param_count(networks.init_network(net, _KEY)["params"])
    print(f"\n6x64 9x9 sai net: {count} parameters")
    assert count == _expected_param_count(9, 17, 6, 64, "sai")


# --------------------------------------------------------------------------
# A tiny supervised fit: α must learn a planted margin from komi-labelled
# outcomes alone, and β must sharpen.

_N = 5
_MARGINS = np.arange(-4, 5)


def _synthetic_batch(key, batch):
    """Random 5×5 positions with a planted margin m for the player to move.

    m = #own stones − #opp stones (the stones are on planes 0..3 and 4..7;
    planes 8..11 mark them occupied; plane 16 is ones). Each example gets a
    signed komi k = −m + u, u uniform over {−4, −3.5, ..., 4}, and outcome
    z = 1 if m + k > 0, ½ if it is 0, else 0: the only signal about α is
    where the label flips, at k = −m.
    """
    k_m, k_opp, k_u, k_perm = jax.random.split(key, 4)
    m = jax.random.randint(k_m, (batch,), -4, 5)
    n_opp = jnp.maximum(0, -m) + jax.random.randint(k_opp, (batch,), 0, 7)
    n_own = n_opp + m
    u = jax.random.randint(k_u, (batch,), -8, 9) * 0.5
    signed_komi = -m + u
    z = jnp.where(u > 0, 1.0, jnp.where(u < 0, 0.0, 0.5))
    rank = jnp.argsort(jax.random.uniform(k_perm, (batch, _N * _N)), axis=1)
    rank = jnp.argsort(rank, axis=1)  # a random permutation of the points
    own = (rank < n_own[:, None]).astype(jnp.float32)
    opp = ((rank >= n_own[:, None]) & (rank < (n_own + n_opp)[:, None])).astype(jnp.float32)
    own = own.reshape(batch, _N, _N, 1)
    opp = opp.reshape(batch, _N, _N, 1)
    x = jnp.concatenate(
        [
            jnp.repeat(own, 4, -1),
            jnp.repeat(opp, 4, -1),
            jnp.repeat(own + opp, 4, -1),
            jnp.zeros((batch, _N, _N, 4)),
            jnp.ones((batch, _N, _N, 1)),
        ],
        axis=-1,
    )
    return x, m, signed_komi.astype(jnp.float32), z


def test_supervised_alpha_learns_planted_margin():
    net = _net(_N, blocks=1, filters=16)
    variables = networks.init_network(net, jax.random.key(10))
    optimizer = optax.adam(3e-3)
    opt_state = optimizer.init(variables["params"])

    def loss_fn(params, batch_stats, x, signed_komi, z):
        out, new_stats = networks.apply_network(net, {"params": params, "batch_stats": batch_stats}, x, train=True)
        tau = jax.nn.sigmoid(out.beta * (out.alpha + signed_komi))
        return jnp.mean((tau - z) ** 2), new_stats

    @jax.jit
    def train_step(variables, opt_state, key):
        x, _, signed_komi, z = _synthetic_batch(key, 128)
        (loss, new_stats), grads = jax.value_and_grad(loss_fn, has_aux=True)(
            variables["params"], variables["batch_stats"], x, signed_komi, z
        )
        updates, opt_state = optimizer.update(grads, opt_state)
        params = optax.apply_updates(variables["params"], updates)
        return {"params": params, "batch_stats": new_stats}, opt_state, loss

    x_test, m_test, _, _ = _synthetic_batch(jax.random.key(11), 2000)
    evaluate = jax.jit(lambda v: networks.apply_network(net, v, x_test)[0])
    beta_before = float(jnp.mean(evaluate(variables).beta))

    train_key = jax.random.key(12)
    for step in range(400):
        variables, opt_state, loss = train_step(variables, opt_state, jax.random.fold_in(train_key, step))
    assert np.isfinite(float(loss))

    out = evaluate(variables)
    alpha, beta, m_test = map(np.asarray, (out.alpha, out.beta, m_test))
    mae = float(np.mean(np.abs(alpha - m_test)))
    print(f"\nfinal loss {float(loss):.4f}; mean beta {beta_before:.3f} -> {beta.mean():.3f}; alpha MAE {mae:.3f}")
    print("planted m | mean alpha | mean beta")
    for m in _MARGINS:
        sel = m_test == m
        print(f"{m:9d} | {alpha[sel].mean():10.3f} | {beta[sel].mean():9.3f}")
        assert abs(alpha[sel].mean() - m) < 1.0, (m, alpha[sel].mean())
    assert mae < 1.0
    assert beta.mean() > 2 * beta_before
