"""Search tests with an oracle evaluator and a tiny network."""

import chex
import jax
import jax.numpy as jnp
import numpy as np
import pytest

from saijax.core import features, go, networks, search, sigmoid
from saijax.play import players

R5 = go.GoRules(5)
R7 = go.GoRules(7)
ORACLE_BETA = 2.0


def oracle_evaluator(rules):
    """Uniform prior; α = Tromp–Taylor area margin for the player to move."""

    def evaluate(params, states):
        del params
        score = jax.vmap(lambda s: go.area_score(rules, s))(states)
        alpha = score * states.to_play.astype(jnp.float32)
        logits = jnp.zeros(states.legal.shape, jnp.float32)
        return logits, alpha, jnp.full_like(alpha, ORACLE_BETA)

    return evaluate


def position(rules, diagram, komi=0.0, to_play=1):
    rows = [r.replace(" ", "") for r in diagram.strip().splitlines()]
    flat = "".join(rows)
    black = [i for i, ch in enumerate(flat) if ch == "X"]
    white = [i for i, ch in enumerate(flat) if ch == "O"]
    return go.setup(rules, komi, black=black, white=white, to_play=to_play)


def batch(*states):
    return jax.tree_util.tree_map(lambda *xs: jnp.stack(xs), *states)


_FNS = {}


def search_fn(rules, **overrides):
    cfg = search.SearchConfig(**overrides)
    key = (rules, cfg)
    if key not in _FNS:
        _FNS[key] = search.make_search_fn(oracle_evaluator(rules), rules, cfg)
    return _FNS[key]


def agent(lam=0.0, mu=0.0, threshold=0.0):
    return search.AgentParams(jnp.float32(lam), jnp.float32(mu), jnp.float32(threshold))


WIDE = dict(algorithm="gumbel", num_simulations=64, max_num_considered_actions=50, gumbel_scale=0.0)
DEEP = dict(algorithm="puct", num_simulations=400, c_puct=1.5, dirichlet_fraction=0.0, temperature=0.0)


def pt(rules, r, c):
    return r * rules.size + c


def test_captures_large_group_in_atari():
    s = position(
        R7,
        """
        . . . . . . .
        . . . . . . .
        . X X X X X .
        X O O O O O .
        . X X X X X .
        . . . . . . .
        . . . . . . .""",
        komi=7.5,
    )
    for cfg in (WIDE, DEEP):
        out = search_fn(R7, **cfg)(None, jax.random.PRNGKey(0), batch(s))
        assert int(out.action[0]) == pt(R7, 3, 6), cfg["algorithm"]


ESCAPE = """
    . . . . .
    . O O . .
    O X X O .
    . O . X X
    . . . X ."""


def test_escapes_own_group_from_atari():
    # Black is behind on the board whatever it does, so the uniform-prior
    # oracle needs a deeper search than for captures to tell the lines apart.
    s = position(R5, ESCAPE, komi=0.5)
    out = search_fn(R5, **dict(DEEP, num_simulations=1600))(None, jax.random.PRNGKey(0), batch(s))
    assert int(out.action[0]) == pt(R5, 3, 2)
    q = np.asarray(out.child_q[0])
    assert q[pt(R5, 3, 2)] == np.nanmax(q)


FINISHED = """
    . X O O .
    X X O O O
    . X O O .
    X X O O O
    X X O O O"""


def test_pass_wins_a_finished_game():
    # Black 10, White 15, komi -5.5: Black wins by 0.5 if the game ends now.
    # Filling an own eye lets White capture everything.
    s = position(R5, FINISHED, komi=-5.5, to_play=-1)
    s = go.play(R5, s, "pass")
    out = search_fn(R5, **DEEP)(None, jax.random.PRNGKey(0), batch(s))
    assert int(out.action[0]) == R5.pass_action
    assert float(out.child_q[0, R5.pass_action]) > 0.9


def test_never_suicide_or_superko():
    ko = position(
        R5,
        """
        . X O . .
        X O . O .
        . X O . .
        . . . . .
        . . . . .""",
    )
    s = go.play(R5, ko, pt(R5, 1, 2))  # Black takes; White's retake is banned
    banned = pt(R5, 1, 1)
    suicide = position(
        R5,
        """
        . X . . .
        X . . . .
        . . . . .
        . . . . .
        . . . . .""",
        to_play=-1,
    )
    states = batch(*([s] * 4 + [suicide] * 4))
    for cfg in (WIDE, DEEP):
        fn = search_fn(R5, **cfg)
        for seed in range(3):
            out = fn(None, jax.random.PRNGKey(seed), states)
            actions = np.asarray(out.action)
            legal = np.asarray(states.legal)
            assert legal[np.arange(8), actions].all()
            assert (actions[:4] != banned).all() and (actions[4:] != 0).all()
            assert (np.asarray(out.visit_counts)[:4, banned] == 0).all()
            assert (np.asarray(out.policy)[~legal] < 1e-6).all()


def _replay_tree(rules, root_state, tree, game=0):
    """Every expanded node's full state (superko record included), by replaying
    its path from the root with go.step. A node's parent has a smaller index."""
    parents = np.asarray(tree.parents[game])
    actions = np.asarray(tree.action_from_parent[game])
    visits = np.asarray(tree.node_visits[game])
    step = jax.jit(lambda s, a: go.step(rules, s, a))
    states = {0: root_state}
    for i in range(1, len(parents)):
        if visits[i] > 0:
            states[i] = step(states[int(parents[i])], int(actions[i]))
    return states


def _assert_tree_matches_replay(rules, root_state, tree):
    """The tree's nodes (stored without their superko record) have exactly the
    legal moves of the game replayed to them."""
    nodes = tree.embeddings.state
    for i, full in _replay_tree(rules, root_state, tree).items():
        np.testing.assert_array_equal(np.asarray(nodes.board[0, i]), np.asarray(full.board), err_msg=f"node {i}")
        np.testing.assert_array_equal(np.asarray(nodes.legal[0, i]), np.asarray(full.legal), err_msg=f"node {i}")
    assert nodes.hash_history.shape[-2] == 0  # the record is not stored per node


def scripted_evaluator(rules, line, bonus=30.0):
    """The oracle's α and β, with the prior all but certain of ``line[move_count]``
    (uniform after the line): a search that walks down one chosen line."""
    base = oracle_evaluator(rules)
    wanted = jnp.asarray(list(line) + [-1], jnp.int32)

    def evaluate(params, states):
        _, alpha, beta = base(params, states)
        want = wanted[jnp.minimum(states.move_count, len(line))]
        logits = jnp.where(jnp.arange(rules.num_actions)[None, :] == want[:, None], bonus, 0.0)
        return logits, alpha, beta

    return evaluate


@pytest.mark.parametrize("walk", ["parents", "path"])
def test_superko_deep_in_the_tree(walk):
    # White to move. Three moves away from the ko, then Black takes it: White's
    # immediate retake would recreate the position after the third move, a
    # position that exists only inside the tree (not in the root's record).
    root = position(
        R5,
        """
        . X O . .
        X O . O .
        . X O . .
        . . . . .
        . . . . .""",
        to_play=-1,
    )
    take, retake = pt(R5, 1, 2), pt(R5, 1, 1)
    line = [pt(R5, 4, 4), pt(R5, 4, 1), pt(R5, 3, 4), take, retake]
    cfg = search.SearchConfig(num_simulations=8, max_num_considered_actions=1, gumbel_scale=0.0, walk=walk)
    fn = search.make_search_fn(scripted_evaluator(R5, line), R5, cfg, return_tree=True)
    out, tree = fn(None, jax.random.PRNGKey(0), batch(root))
    node = 0
    for move in line[:4]:
        node = int(tree.children_index[0, node, move])
        assert node > 0, "the search did not follow the scripted line"
    after_take = jax.tree_util.tree_map(lambda x: x[0, node], tree.embeddings.state)
    assert int(after_take.board[retake]) == 0 and int(after_take.to_play) == -1
    assert not bool(after_take.legal[retake])  # forbidden by superko...
    fresh = go.setup(
        R5,
        0.0,
        black=np.flatnonzero(np.asarray(after_take.board) == 1),
        white=np.flatnonzero(np.asarray(after_take.board) == -1),
        to_play=-1,
    )
    assert bool(fresh.legal[retake])  # ...and by nothing else
    assert int(tree.children_index[0, node, retake]) == -1  # never tried
    _assert_tree_matches_replay(R5, root, tree)


def test_tree_legality_matches_the_game():
    """Every node of a wide search around a ko has the game's legal moves."""
    ko = position(
        R5,
        """
        . X O . .
        X O . O .
        . X O . .
        . . . . .
        . . . . .""",
    )
    trees = []
    for walk in ("parents", "path"):
        cfg = search.SearchConfig(**dict(DEEP, num_simulations=96), walk=walk)
        fn = search.make_search_fn(oracle_evaluator(R5), R5, cfg, return_tree=True)
        trees.append(fn(None, jax.random.PRNGKey(1), batch(ko, go.play(R5, ko, pt(R5, 1, 2))))[1])
    _assert_tree_matches_replay(R5, ko, trees[0])
    # The path's single compare and batched backward pass give the loops' tree, bit for bit.
    for a, b in zip(jax.tree_util.tree_leaves(trees[0]), jax.tree_util.tree_leaves(trees[1]), strict=True):
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b))


TWO_CAPTURES = """
    X X X . X
    X O O O X
    X X X X X
    X . X O .
    X X X X X"""


def test_lambda_prefers_the_larger_margin():
    # Both captures win easily; D5 takes three stones, E2 takes one.
    s = position(R5, TWO_CAPTURES, komi=0.5)
    three, one = pt(R5, 0, 3), pt(R5, 3, 4)
    fn = search_fn(R5, **WIDE)
    plain = fn(None, jax.random.PRNGKey(0), batch(s), agent(0.0, 0.0))
    q = np.asarray(plain.child_q[0])
    assert q[three] > 0.99 and q[one] > 0.99  # both "winning" at λ = μ = 0
    greedy = fn(None, jax.random.PRNGKey(0), batch(s), agent(1.0, 0.0))
    assert int(greedy.action[0]) == three
    q1 = np.asarray(greedy.child_q[0])
    assert q1[three] > q1[one]


def test_variable_agent_below_threshold_acts_as_plain():
    s = position(R5, ESCAPE, komi=1.5)
    fn = search_fn(R5, **WIDE)
    base = fn(None, jax.random.PRNGKey(3), batch(s), agent(0.0, 0.0))
    assert float(base.root_winrate[0]) < 0.7
    var = fn(None, jax.random.PRNGKey(3), batch(s), agent(0.8, 0.3, 0.7))
    k = float(sigmoid.signed_komi(1.5, 1.0))
    assert float(var.x_lambda[0]) == pytest.approx(k) and float(var.x_mu[0]) == pytest.approx(k)
    np.testing.assert_allclose(np.asarray(var.child_q), np.asarray(base.child_q), rtol=1e-6)
    assert int(var.action[0]) == int(base.action[0])
    above = fn(None, jax.random.PRNGKey(3), batch(s), agent(0.8, 0.3, 0.0))
    assert float(above.x_lambda[0]) != pytest.approx(k)


def test_perspective_of_a_leaf():
    s = position(R5, ESCAPE, komi=2.5)
    st = batch(s)
    ev = oracle_evaluator(R5)
    _, alpha, beta = ev(None, st)
    cfg = search.SearchConfig()
    for player in (1, -1):
        k = sigmoid.signed_komi(st.komi, jnp.float32(player))
        player_ = jnp.array([player], jnp.int8)
        root = search._RootInfo(x_lambda=k, x_mu=k, player=player_, komi=st.komi, history=st.hash_history)
        v = search._node_value(cfg, R5, alpha, beta, st, root)
        # Value from the leaf's player's view is the same whoever is the root,
        # so the two colours' views are negatives of each other.
        view = v if player == 1 else -v
        if player == 1:
            black_view = view
        else:
            np.testing.assert_allclose(np.asarray(view), -np.asarray(black_view), atol=1e-6)
    out = search_fn(R5, **WIDE)(None, jax.random.PRNGKey(0), st)
    expected = sigmoid.winrate(alpha, beta, sigmoid.signed_komi(st.komi, jnp.float32(1)))
    np.testing.assert_allclose(np.asarray(out.root_winrate), np.asarray(expected), rtol=1e-6)


def test_batch_equals_single_searches():
    a = position(R5, ESCAPE, komi=0.5)
    b = position(R5, TWO_CAPTURES, komi=-3.0)
    c = go.play(R5, go.init(R5, 7.5), "C3")  # white to move
    for cfg in (dict(WIDE, gumbel_scale=1.0), dict(DEEP, num_simulations=48)):
        fn = search_fn(R5, **cfg)
        keys = jax.random.split(jax.random.PRNGKey(5), 3)
        together = fn(None, keys, batch(a, b, c))
        for i, s in enumerate((a, b, c)):
            alone = fn(None, keys[i : i + 1], batch(s))
            assert int(alone.action[0]) == int(together.action[i])
            np.testing.assert_array_equal(np.asarray(alone.visit_counts[0]), np.asarray(together.visit_counts[i]))
            np.testing.assert_allclose(float(alone.score_estimate[0]), float(together.score_estimate[i]))


@pytest.fixture(scope="module")
def tiny_net():
    net = networks.make_network(5, blocks=1, filters=8)
    variables = networks.init_network(net, jax.random.PRNGKey(0))
    return net, variables


def test_network_search_shapes_and_no_retrace(tiny_net):
    net, variables = tiny_net
    cfg = search.SearchConfig(num_simulations=16, pv_length=16)
    ev = search.make_network_evaluator(net, R5)

    @jax.jit
    @chex.assert_max_traces(n=1)
    def fn(params, key, states, agent_params):
        return search.run_search(ev, params, key, states, rules=R5, config=cfg, agent=agent_params)

    komi = jnp.linspace(-4.0, 8.0, 64)
    states = jax.vmap(lambda k: go.init(R5, k))(komi)
    for i in range(2):
        out = fn(variables, jax.random.PRNGKey(i), states, agent(0.5 * i, 0.0))
    b, a = 64, R5.num_actions
    chex.assert_shape([out.visit_counts, out.policy, out.child_q, out.child_prior, out.child_score_lead], (b, a))
    chex.assert_shape([out.action, out.root_alpha, out.root_beta, out.root_winrate, out.score_estimate], (b,))
    chex.assert_shape(out.pv, (b, cfg.pv_length))
    assert (np.asarray(out.visit_counts).sum(axis=1) == 16).all()
    np.testing.assert_allclose(np.asarray(out.policy).sum(axis=1), 1.0, rtol=1e-5)
    assert np.isfinite(np.asarray(out.score_estimate)).all()
    assert (np.asarray(out.root_beta) > 0).all()


def test_player_search_summary_and_agent(tiny_net):
    """The one player type: a searched move, its root moves and PVs, a validated agent."""
    net, variables = tiny_net
    player = players.Player.from_network(
        "p", net, variables, config=search.SearchConfig(num_simulations=8, pv_length=16)
    )
    s = go.init(R5, 0.5)
    fn = search.make_search_fn(player.evaluator, R5, player.config)
    states = jax.tree_util.tree_map(lambda x: x[None], s)
    out = fn(player.variables, jax.random.PRNGKey(0), states, player.agent.params())
    action = int(out.action[0])
    assert bool(s.legal[action])
    assert 0.0 <= float(out.root_winrate[0]) <= 1.0
    stats = search.root_moves(out)
    assert stats and sum(m.visits for m in stats) == 8
    assert stats[0].pv[0] == stats[0].action
    assert [m.visits for m in stats] == sorted((m.visits for m in stats), reverse=True)
    # The root's principal variation starts with a most visited child.
    by_action = {m.action: m for m in stats}
    assert by_action[int(out.pv[0, 0])].visits == stats[0].visits
    assert tuple(int(a) for a in out.child_pv[0, stats[0].action] if a >= 0) == stats[0].pv
    assert float(out.best_value[0]) == pytest.approx(max(m.value for m in stats))
    player = player.with_agent(lambda_=0.5, mu=0.25, threshold=0.5)
    assert player.agent == search.Agent(0.5, 0.25, 0.5)
    with pytest.raises(ValueError, match="lambda"):
        player.with_agent(lambda_=0.1, mu=0.5)
    with pytest.raises(ValueError, match="lambda"):
        search.Agent(lambda_=0.1, mu=0.2)
    with pytest.raises(ValueError, match="threshold"):
        search.Agent(threshold=1.5)


def test_should_resign_rule():
    best = jnp.array([0.01, 0.01, 0.5, jnp.nan])
    moves = jnp.array([30, 3, 30, 30])
    got = search.should_resign(best, moves, threshold=0.05, resign_after=6)
    assert np.asarray(got).tolist() == [True, False, False, False]
    assert not np.asarray(search.should_resign(best, moves, threshold=-1.0, resign_after=0)).any()
    assert bool(search.should_resign(0.01, 10, threshold=0.05, resign_after=10))
    assert search.default_resign_after(go.GoRules(9)) == 20


def test_baseline_heads_plug_in():
    # The search's root value is compared with an eager forward pass at 1e-5:
    # two programs, which on a GPU need float32 ("highest"), not its default
    # TF32 for float32 convolutions, to agree that closely.
    with jax.default_matmul_precision("highest"):
        _check_baseline_heads()


def _check_baseline_heads():
    for head in ("winrate", "score"):
        net = networks.make_network(5, blocks=1, filters=8, value_head=head)
        variables = networks.init_network(net, jax.random.PRNGKey(0))
        mode = "score" if head == "score" else "sigmoid"
        cfg = search.SearchConfig(num_simulations=8, value_mode=mode)
        fn = search.make_search_fn(search.make_network_evaluator(net, R5), R5, cfg)
        states = jax.vmap(lambda k: go.init(R5, k))(jnp.array([0.5, 7.5]))
        out = fn(variables, jax.random.PRNGKey(0), states)
        assert np.isfinite(np.asarray(out.root_value)).all()
        if head == "winrate":
            x = features.network_inputs(R5, states, head)
            raw = net.apply(variables, x, train=False)
            np.testing.assert_allclose(np.asarray(out.root_winrate), (np.asarray(raw.value) + 1) / 2, atol=1e-5)


def test_bfloat16_evaluation_plays_the_float32_moves():
    """bfloat16 network evaluation (SaiNet.dtype) chooses the float32 moves on
    fixed positions, with outputs within bfloat16's tolerance and in float32."""
    from saijax import zoo  # a trained net: its moves are decided, not near-ties

    player = zoo.load("go7-S1")
    half = player.with_precision("bfloat16")
    openings = [[], ["D4"], ["D4", "C5"], ["D4", "C5", "E3"], ["D4", "C5", "E3", "C3"], ["C3", "E5", "E3", "C5", "D4"]]
    positions = []
    for moves in openings:
        s = go.init(R7, 9.5)
        for move in moves:
            s = go.play(R7, s, move)
        positions.append(s)
    states = batch(*positions)
    # The reference is float32 ("highest"), not a GPU's default TF32 for
    # float32 convolutions; bfloat16 computes in bfloat16 either way.
    with jax.default_matmul_precision("highest"):
        full_out = jax.jit(player.evaluator)(player.variables, states)
    half_out = jax.jit(half.evaluator)(player.variables, states)
    assert all(x.dtype == jnp.float32 for x in half_out)
    (logits, alpha, beta), (logits_h, alpha_h, beta_h) = full_out, half_out
    np.testing.assert_allclose(np.asarray(alpha_h), np.asarray(alpha), atol=0.25)  # points
    np.testing.assert_allclose(np.asarray(beta_h), np.asarray(beta), rtol=0.02)
    prior = jax.nn.softmax(jnp.where(states.legal, logits, -jnp.inf))
    prior_h = jax.nn.softmax(jnp.where(states.legal, logits_h, -jnp.inf))
    np.testing.assert_allclose(np.asarray(prior_h), np.asarray(prior), atol=0.01)

    cfg = search.SearchConfig(num_simulations=16, gumbel_scale=0.0)
    with jax.default_matmul_precision("highest"):
        full = search.make_search_fn(player.evaluator, R7, cfg)(player.variables, jax.random.PRNGKey(0), states)
    half = search.make_search_fn(half.evaluator, R7, cfg)(player.variables, jax.random.PRNGKey(0), states)
    np.testing.assert_array_equal(np.asarray(half.action), np.asarray(full.action))
    np.testing.assert_allclose(np.asarray(half.root_winrate), np.asarray(full.root_winrate), atol=0.01)
    with pytest.raises(ValueError, match="precision"):
        player.with_precision("float16")
