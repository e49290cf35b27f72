"""The model zoo: every shipped entry loads and matches its record; export, errors, and the CLIs' zoo: names."""

import json
import os

import jax
import numpy as np
import optax
import pytest

from saijax import gtp, zoo
from saijax.cli import arena as arena_cli
from saijax.cli import player as player_cli
from saijax.core import checkpoints, go, networks
from saijax.learn import training
from saijax.play import players


def _fresh_empty_board(player):
    rules = go.GoRules(player.board_size)
    state = jax.tree_util.tree_map(lambda x: x[None], go.init(rules, 0.0))
    _, alpha, beta = player.evaluator(player.variables, state)
    return float(alpha[0]), float(beta[0])


@pytest.mark.parametrize("name", sorted(zoo.entries()))
def test_every_shipped_entry_loads_and_matches_its_record(name):
    record = zoo.entry(name)
    player = zoo.load(name)
    assert player.name == name and player.board_size == record.spec.board_size
    assert player.net.spec == record.spec
    alpha, beta = _fresh_empty_board(player)
    assert alpha == pytest.approx(record.alpha_empty, abs=1e-3)
    assert beta == pytest.approx(record.beta_empty, rel=1e-3)
    assert record.command and record.run
    if record.elo is not None:
        assert record.elo_ci[0] <= record.elo <= record.elo_ci[1]


def test_the_shipped_zoo_is_small():
    total = sum(os.path.getsize(os.path.join(zoo.ZOO_DIR, f)) for f in os.listdir(zoo.ZOO_DIR))
    assert total <= 12_000_000  # the project's zoo budget: 15 nets of 0.2-1.8 MB (go7-gpu-G46, 4x64, the largest)


@pytest.fixture(scope="module")
def tiny_checkpoint(tmp_path_factory):
    workdir = str(tmp_path_factory.mktemp("run"))
    spec = networks.NetworkSpec(board_size=5, blocks=1, filters=8)
    state = training.create_train_state(spec.build(), optax.sgd(0.1), jax.random.PRNGKey(3))
    with checkpoints.Checkpointer(workdir) as ckpt:
        ckpt.save(7, state=state, rng_key=jax.random.PRNGKey(0), network=spec, replay_dir=workdir)
    return workdir, state


def test_export_round_trips_a_checkpoint(tiny_checkpoint, tmp_path):
    workdir, state = tiny_checkpoint
    directory = str(tmp_path / "zoo")
    record = zoo.export(
        os.path.join(workdir, "checkpoints", "7"),
        "tiny-A",
        directory=directory,
        elo=120.0,
        elo_ci=(80.0, 160.0),
        run="tiny",
        command="python -m saijax.train --config=configs/tiny.py --workdir=/tmp/tiny",
        seed=3,
    )
    assert record.generation == 7 and record.elo_ci == (80.0, 160.0)
    back = zoo.entry("zoo:tiny-A", directory)
    assert back == record
    player = zoo.load("tiny-A", directory=directory)
    for a, b in zip(jax.tree_util.tree_leaves(player.variables), jax.tree_util.tree_leaves(state.variables)):
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b))
    assert _fresh_empty_board(player)[0] == pytest.approx(record.alpha_empty, abs=1e-5)
    # A second export updates the index without losing the first entry.
    zoo.export(workdir, "tiny-B", directory=directory, run="tiny", command="c")
    assert sorted(zoo.entries(directory)) == ["tiny-A", "tiny-B"]


def test_float16_export_halves_the_file_and_loads_as_float32(tiny_checkpoint, tmp_path):
    workdir, state = tiny_checkpoint
    directory = str(tmp_path / "zoo")
    full = zoo.export(workdir, "full", directory=directory, run="tiny", command="c")
    half = zoo.export(workdir, "half", directory=directory, run="tiny", command="c", dtype="float16")
    assert (full.dtype, half.dtype) == ("float32", "float16")
    assert zoo.entry("half", directory) == half
    size = {n: os.path.getsize(os.path.join(directory, f"{n}.msgpack")) for n in ("full", "half")}
    assert size["half"] < 0.6 * size["full"]
    player = zoo.load("half", directory=directory)
    for a, b in zip(jax.tree_util.tree_leaves(player.variables), jax.tree_util.tree_leaves(state.variables)):
        assert a.dtype == np.float32
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-3, atol=1e-4)
    # The record's α_∅, β_∅ are those of the rounded weights the file holds.
    alpha, beta = _fresh_empty_board(player)
    assert alpha == pytest.approx(half.alpha_empty, abs=1e-5) and beta == pytest.approx(half.beta_empty, rel=1e-5)
    assert alpha == pytest.approx(full.alpha_empty, abs=1e-2)
    with pytest.raises(ValueError, match="storage dtype 'int8'"):
        zoo.export(workdir, "bad", directory=directory, dtype="int8")


def test_zoo_errors_name_the_entry_and_the_file(tiny_checkpoint, tmp_path):
    workdir, _ = tiny_checkpoint
    directory = str(tmp_path / "zoo")
    zoo.export(workdir, "tiny", directory=directory, run="tiny", command="c")
    with pytest.raises(KeyError, match="no zoo entry 'nope'; available: tiny"):
        zoo.load("nope", directory=directory)
    path = os.path.join(directory, "tiny.msgpack")
    with open(path, "r+b") as f:
        f.seek(100)
        f.write(b"\x00\x01\x02")
    with pytest.raises(ValueError, match="tiny.msgpack does not match its recorded SHA-256"):
        zoo.load("tiny", directory=directory)
    os.remove(path)
    with pytest.raises(ValueError, match="tiny.msgpack is missing"):
        zoo.load("tiny", directory=directory)
    index = os.path.join(directory, "index.json")
    with open(index, "w") as f:
        json.dump({"entries": [{"name": "x"}]}, f)
    with pytest.raises(ValueError, match="bad zoo entry 'x'"):
        zoo.entries(directory)
    with pytest.raises(ValueError, match="use letters, digits"):
        zoo.export(workdir, "bad name", directory=directory)


def test_gtp_and_arena_take_zoo_names(capsys):
    name = sorted(zoo.entries())[0]
    record = zoo.entry(name)
    player = player_cli.load_player(f"zoo:{name}", board_size=None)
    assert player.name == name
    engine = gtp.GtpEngine(player, visits=2, komi=0.5)
    assert engine.handle("name") == "= saijax\n\n"
    assert engine.handle(f"boardsize {record.spec.board_size}") == "=\n\n"
    assert engine.handle("genmove b").startswith("= ")
    with pytest.raises(FileNotFoundError, match="no zoo entry"):
        player_cli.load_player("zoo:missing", board_size=None)
    with pytest.raises(ValueError, match="cli.player.load_player"):
        players.load_player("zoo:missing")
    size = record.spec.board_size
    code = arena_cli.main(
        [
            f"--player=zoo:{name}",
            "--opponent=uniform",
            "--games=2",
            f"--board_size={size}",
            "--visits=2",
            "--max_moves=6",
            "--quiet",
        ]
    )
    assert code == 0
    assert f"{name} vs uniform: 2 games" in capsys.readouterr().out
