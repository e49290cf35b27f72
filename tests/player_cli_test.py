"""The player front door: the spec grammar, the flags' defaults, prefixed fallback and validation."""

import argparse
import dataclasses
import functools
import os

import jax
import numpy as np
import optax
import pytest

from saijax.cli import gtp as gtp_cli
from saijax.cli import player as player_cli
from saijax.core import checkpoints, go, networks, search
from saijax.gtp import server
from saijax.learn import training
from saijax.play import control, match, players, styles

N = 5
SMALL = player_cli.PlayerOptions(visits=8, blocks=1, filters=8)


def _parser():
    p = argparse.ArgumentParser()
    player_cli.add_player_flags(p)
    player_cli.add_player_flags(p, prefix="opponent_", title="opponent")
    return p


def _save_checkpoint(workdir, generation=3):
    net = networks.make_network(N, blocks=1, filters=8)
    variables = jax.jit(functools.partial(networks.init_network, net))(jax.random.PRNGKey(1))
    state = training.TrainState(
        step=np.int32(5),
        params=variables["params"],
        batch_stats=variables["batch_stats"],
        opt_state=optax.adam(1e-3).init(variables["params"]),
    )
    with checkpoints.Checkpointer(workdir) as ckpt:
        ckpt.save(
            generation,
            state=state,
            rng_key=jax.random.key(0),
            network=net.spec,
            replay_dir=os.path.join(workdir, "replay"),
        )


def test_defaults_are_decided_once():
    d = player_cli.PlayerOptions()
    assert (d.visits, d.algorithm, d.gumbel_scale) == (128, "gumbel", 0.0)
    assert (d.lambda_, d.mu, d.threshold) == (0.0, 0.0, 0.0)
    assert (d.control, d.control_options, d.style) == ("off", (), "off")
    assert (d.blocks, d.filters, d.value_head) == (2, 16, "sai")
    assert player_cli.options_from_args(_parser().parse_args([])) == d
    assert player_cli.options_from_args(_parser().parse_args([]), "opponent_") == d


def test_the_flags_are_the_fields():
    """One flag per PlayerOptions field, with the field's default, help and type; prefixed: "as the player"."""
    parser = argparse.ArgumentParser()
    group = player_cli.add_player_flags(parser)
    prefixed = player_cli.add_player_flags(parser, prefix="opponent_", title="opponent")
    fields = dataclasses.fields(player_cli.PlayerOptions)
    mine = {a.dest: a for a in group._group_actions}
    theirs = {a.dest: a for a in prefixed._group_actions}
    assert len(mine) == len(theirs) == len(fields)
    assert mine["control_option"].option_strings == ["--control_option"]
    assert theirs["opponent_visits"].option_strings == ["--opponent_visits"]
    for field in fields:
        flag = "control_option" if field.name == "control_options" else field.name
        action, twin = mine[flag], theirs["opponent_" + flag]
        assert action.default == (None if field.name == "control_options" else field.default)
        assert action.help and "{" not in action.help, (flag, action.help)
        assert twin.default is None and (twin.type, twin.choices) == (action.type, action.choices)
        own = field.name in ("control", "control_options", "style")
        assert twin.help == ("default: off" if own else f"default: the same as --{flag}"), twin.help
    assert mine["visits"].type is int and mine["lambda_"].type is float
    assert mine["algorithm"].choices == search.ALGORITHMS
    assert mine["visits"].help.startswith("simulations per move (default 128: ")
    assert "(default 0: deterministic" in mine["gumbel_scale"].help and "1 as in self-play" in mine["gumbel_scale"].help
    assert "(default 2, with 16 filters" in mine["blocks"].help


def test_a_deterministic_player_repeats_its_move():
    """gumbel_scale 0 (the default): two searches of one position with different keys play the same move."""
    player = player_cli.load_player("random", board_size=N, options=SMALL)
    assert player.config.gumbel_scale == 0.0 and player.config.num_simulations == 8
    rules = go.GoRules(N)
    state = jax.tree_util.tree_map(lambda x: x[None], go.init(rules, 7.5))
    search_fn = match.search_fn(player.evaluator, rules, player.config)
    agent = player.agent.params()
    keys = [jax.random.split(jax.random.PRNGKey(k), 1) for k in range(3)]
    moves = {int(search_fn(player.variables, key, state, agent).action[0]) for key in keys}
    assert len(moves) == 1


def test_the_grammar(tmp_path):
    random = player_cli.load_player("random", board_size=N, options=SMALL)
    assert random.name == "random" and (random.net.blocks, random.net.filters) == (1, 8)
    other_seed = player_cli.load_player("random", board_size=N, options=SMALL, seed=1)
    leaves = zip(jax.tree_util.tree_leaves(random.variables), jax.tree_util.tree_leaves(other_seed.variables))
    assert any(not np.array_equal(x, y) for x, y in leaves)
    uniform = player_cli.load_player("uniform", board_size=N)
    assert uniform.name == "uniform" and uniform.net is None

    zoo_net = player_cli.load_player("zoo:go5", board_size=None, options=SMALL)
    assert zoo_net.name == "go5" and zoo_net.board_size == 5 and zoo_net.config.num_simulations == 8
    with pytest.raises(ValueError, match="zoo:go5 is for 5x5"):
        player_cli.load_player("zoo:go5", board_size=7)
    with pytest.raises(FileNotFoundError, match="no zoo entry 'nope'"):
        player_cli.load_player("zoo:nope", board_size=None)

    _save_checkpoint(str(tmp_path))
    for path in (tmp_path, tmp_path / "checkpoints", tmp_path / "checkpoints" / "3"):
        assert player_cli.load_player(str(path), board_size=N, options=SMALL).name == "gen3"
    with pytest.raises(FileNotFoundError, match="missing"):
        player_cli.load_player(str(tmp_path / "missing"), board_size=N)

    for bad, words in [
        ("", "empty player spec"),
        ("gnugo:5", "engine_argv"),
        ("gtp:gnugo --mode gtp", "engine_argv"),
    ]:
        with pytest.raises(ValueError, match=words):
            player_cli.load_player(bad, board_size=N)
    with pytest.raises(ValueError, match="needs a board size"):
        player_cli.load_player("random", board_size=None)
    with pytest.raises(ValueError, match="no position control"):
        player_cli.load_player("uniform", board_size=N, options=player_cli.PlayerOptions(control="C"))


def test_engine_specs():
    assert player_cli.is_engine("gnugo:10") and player_cli.is_engine("gtp:katago gtp")
    assert not any(player_cli.is_engine(s) for s in ("random", "uniform", "zoo:go5", "runs/go7"))
    assert player_cli.engine_argv("gtp:my-engine --opt 'a b'") == ["my-engine", "--opt", "a b"]
    for bad in ("gnugo:x", "gnugo:11", "gnugo:", "gtp:", "gtp:  ", "gtp:'unclosed", "random"):
        with pytest.raises(ValueError) as e:
            player_cli.engine_argv(bad)
        assert bad in str(e.value)
    try:
        argv = player_cli.engine_argv("gnugo:3")
    except FileNotFoundError:
        return  # GNU Go is not installed here
    assert argv[argv.index("--level") + 1] == "3" and "--never-resign" in argv and "--capture-all-dead" in argv
    assert "--never-resign" not in player_cli.engine_argv("gnugo:3", never_resign=False)


def test_options_shape_the_player():
    options = player_cli.PlayerOptions(
        visits=8, blocks=1, filters=8, lambda_=0.5, algorithm="puct", gumbel_scale=1.0, style="center"
    )
    player = player_cli.load_player("random", board_size=N, options=options)
    assert player.agent == search.Agent(0.5, 0.0, 0.0)
    assert player.config.algorithm == "puct" and player.config.gumbel_scale == 1.0
    assert player.config.root_prior == styles.OnlineStyle("centre")
    assert player.name == "random[l=0.5,m=0][centre]"
    controlled = player_cli.load_player(
        "random",
        board_size=N,
        options=player_cli.PlayerOptions(visits=8, blocks=1, filters=8, control="C", control_options=("gentleness=1",)),
    )
    assert controlled.control == control.ControlConfig(method="C", gentleness=1.0) and controlled.name == "random[C]"
    assert controlled.config.algorithm == "puct" and controlled.config.c_puct == 10.0  # Method A's search
    named = player_cli.load_player("random", board_size=N, options=options, name="mine")
    assert named.name == "mine"
    assert isinstance(named, players.Player)


def test_prefixed_flags_fall_back_to_the_player():
    args = _parser().parse_args(
        ["--visits=16", "--lambda_=0.5", "--control=C", "--style=edge", "--blocks=1", "--opponent_mu=0.25"]
    )
    mine = player_cli.options_from_args(args)
    assert (mine.visits, mine.lambda_, mine.control, mine.style, mine.blocks) == (16, 0.5, "C", "edge", 1)
    theirs = player_cli.options_from_args(args, "opponent_", fallback=mine)
    assert (theirs.visits, theirs.lambda_, theirs.mu, theirs.blocks) == (16, 0.5, 0.25, 1)
    # Position control and style are each side's own: off unless asked for.
    assert (theirs.control, theirs.control_options, theirs.style) == ("off", (), "off")
    # Without a fallback, the unprefixed player's flags are the fallback.
    assert player_cli.options_from_args(args, "opponent_") == theirs
    args = _parser().parse_args(["--opponent_visits=4", "--opponent_control=B", "--opponent_control_option=gamma=2"])
    theirs = player_cli.options_from_args(args, "opponent_")
    assert theirs.visits == 4 and theirs.control_config() == control.ControlConfig(method="B", gamma=2.0)


@pytest.mark.parametrize(
    "argv, words",
    [
        (["--visits=0"], "--visits=0"),
        (["--opponent_visits=-3"], "--opponent_visits=-3"),
        (["--lambda_=1.5"], "--lambda_=1.5"),
        (["--mu=0.5"], "--mu=0.5"),
        (["--opponent_threshold=2"], "--opponent_threshold=2"),
        (["--gumbel_scale=-1"], "--gumbel_scale=-1"),
        (["--gumbel_scale=nan"], "--gumbel_scale=nan"),
        (["--style=diagonal"], "--style='diagonal'"),
        (["--control=E"], "--control='E'"),
        (["--control=C", "--control_option=gentleness=x"], "gentleness"),
        (["--opponent_control=C", "--opponent_control_option=bogus=1"], "--opponent_control_option"),
        (["--blocks=0"], "--blocks=0"),
        (["--opponent_filters=0"], "--opponent_filters=0"),
        (["--value_head=policy"], "--value_head='policy'"),
    ],
)
def test_bad_values_name_the_flag(argv, words):
    args = _parser().parse_args(argv)
    with pytest.raises(ValueError) as e:
        mine = player_cli.options_from_args(args)
        player_cli.options_from_args(args, "opponent_", fallback=mine)
    assert words in str(e.value)


def test_options_validate_themselves():
    with pytest.raises(ValueError, match="PlayerOptions.visits"):
        player_cli.PlayerOptions(visits=0)
    with pytest.raises(ValueError, match="PlayerOptions.control_options"):
        player_cli.PlayerOptions(control="A", control_options=("nonsense",))


def test_the_gtp_command_line_takes_player_specs_and_flags(monkeypatch, capsys):
    seen = {}
    monkeypatch.setattr(server, "serve", lambda engine, stdin, stdout: seen.__setitem__("engine", engine))
    assert gtp_cli.main(["--checkpoint", "zoo:go5", "--visits", "8"]) == 0
    engine = seen["engine"]
    assert engine.player.board_size == 5 and engine.visits == 8
    assert engine.agent == search.Agent() and engine.gumbel_scale == 0.0 and engine.control is None
    assert gtp_cli.main(["--player=zoo:go5", "--lambda_=0.5", "--control=C", "--style=edge"]) == 0
    engine = seen["engine"]
    assert engine.agent == search.Agent(0.5) and engine.control.method == "C"
    assert engine.player.config.root_prior == styles.OnlineStyle("edge")
    capsys.readouterr()
    assert gtp_cli.main(["--player=zoo:go5", "--board_size=7"]) == 2
    assert "zoo:go5 is for 5x5" in capsys.readouterr().err
