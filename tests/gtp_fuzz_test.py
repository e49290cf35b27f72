"""Fuzzing the GTP engine: thousands of random and malformed lines.

Every line that is not empty or a comment after GTP's preprocessing must get
exactly one well-formed response (``=`` or ``?``, the line's id if it had
one, no empty line inside, an empty line at the end); a failed command must
leave the engine's state untouched; and the engine must stay in sync, which
a ``name`` probe checks along the way and at the end. Searches are cheap
(2 visits) and rationed, so the module stays well under a minute once the
search has compiled.
"""

import random
import re
import subprocess
import sys
import threading

import pytest

from saijax import gtp
from saijax.play import players

N = 5
SEED = 20240611
SEARCH_COMMANDS = {
    "genmove",
    "kgs-genmove_cleanup",
    "lz-analyze",
    "kata-analyze",
    "lz-genmove_analyze",
    "kata-genmove_analyze",
}
UNKNOWN_COMMANDS = [
    "frobnicate",
    "NAME",
    "Genmove",
    "genmove_",
    "lz_analyze",
    "play!",
    "=",
    "?",
    "-1",
    "0x1f",
    "日本",
    "\u00e9",
    "analyze",
    "kata-set-param",
]
ARGS = [
    "b",
    "w",
    "B",
    "W",
    "black",
    "white",
    "WHITE",
    "Black",
    "purple",
    "x",
    "C3",
    "c3",
    "A1",
    "E5",
    "e1",
    "B2",
    "D4",
    "pass",
    "PASS",
    "Z9",
    "I3",
    "T19",
    "A0",
    "A99",
    "AA1",
    "3C",
    "0",
    "1",
    "2",
    "3",
    "4",
    "5",
    "7",
    "9",
    "19",
    "25",
    "-1",
    "+5",
    "1_0",
    ".5",
    "5.",
    "1e3",
    "1e400",
    "-1e400",
    "nan",
    "inf",
    "-inf",
    "0.5",
    "7.5",
    "-3.5",
    "6.75",
    "1e9",
    "9" * 60,
    "-" + "9" * 40,
    "name",
    "value",
    "lambda",
    "lambda_",
    "mu",
    "threshold",
    "interval",
    "maxmoves",
    "minmoves",
    "ownership",
    "true",
    "false",
    "True",
    "é",
    "日本",
    "٣",
    "\U0001f642",
    "\u00a0",
    "\ufffd",
    "\\",
    '"',
    "''",
    "=",
    "?",
]
OPTION_NAMES = ["lambda", "lambda_", "mu", "threshold", "frobnicate", "Lambda", "", "lambda mu"]
_CONTROL = "".join(chr(c) for c in list(range(0, 9)) + list(range(11, 32)) + [127])


def responds(line: str) -> bool:
    """Whether GTP preprocessing leaves a command on this line (spec §2.2)."""
    return bool(clean(line).split())


def clean(line: str) -> str:
    line = line.replace("\n", " ")
    line = "".join(ch for ch in line if ch not in _CONTROL)
    return line.split("#", 1)[0].replace("\t", " ")


def expected_id(line: str) -> str:
    tokens = clean(line).split()
    return tokens[0] if re.fullmatch(r"[0-9]+", tokens[0]) else ""


def command_of(line: str) -> str | None:
    """The command name on a line, after its id (None if there is none)."""
    tokens = clean(line).split()
    if tokens and re.fullmatch(r"[0-9]+", tokens[0]):
        tokens = tokens[1:]
    return tokens[0] if tokens else None


def check_response(response: str, line: str) -> None:
    """One well-formed GTP response to ``line``."""
    context = f"line {line!r} -> {response!r}"
    assert response.endswith("\n\n"), context
    assert response.index("\n\n") == len(response) - 2, context  # no empty line inside
    assert not any(ch in _CONTROL for ch in response.replace("\n", "")), context
    first = response.split("\n", 1)[0]
    match = re.fullmatch(r"([=?])([0-9]*)( .*)?", first)
    assert match, context
    assert match.group(2) == expected_id(line), context
    if match.group(1) == "?":
        assert response == first + "\n\n" and match.group(3), context  # a one-line message
    for body_line in response.split("\n")[1:-2]:
        assert body_line.strip(), context


def random_line(rng: random.Random, command_names, allow_search: bool, paths) -> str:
    kind = rng.random()
    if kind < 0.12:  # random bytes, decoded as the engine decodes them
        data = bytes(rng.randrange(256) for _ in range(rng.randrange(0, 40)))
        return data.decode("utf-8", errors="replace")
    if kind < 0.18:  # empty, whitespace, comments
        return rng.choice(["", " ", "\t", " \t \r", "#", "# play b C3", "   # genmove b", "\r", "\x0b\x0c"])
    names = [c for c in command_names if allow_search or c not in SEARCH_COMMANDS]
    name = rng.choice(names) if rng.random() < 0.9 else rng.choice(UNKNOWN_COMMANDS)
    if name == "lz-setoption" and rng.random() < 0.7:
        args = ["name", rng.choice(OPTION_NAMES), "value", rng.choice(ARGS + ["0", "0.3", "1", "0.7"])]
        args = [a for a in args if a]
    elif name in ("loadsgf", "printsgf") and rng.random() < 0.7:
        args = [rng.choice(paths)] + ([rng.choice(ARGS)] if rng.random() < 0.3 else [])
    else:
        args = [rng.choice(ARGS) for _ in range(rng.choice([0, 1, 1, 2, 2, 3, 5]))]
    tokens = [name] + args
    if rng.random() < 0.3:
        tokens.insert(0, str(rng.choice([0, 1, 7, 42, 10**30, rng.randrange(10**6)])))
    seps = [" ", " ", "  ", "\t", " \t"]
    text = tokens[0] + "".join(rng.choice(seps) + t for t in tokens[1:])
    if rng.random() < 0.2:
        text = rng.choice(seps) + text
    if rng.random() < 0.1:
        text += rng.choice([" # comment", "#", "# genmove b"])
    if rng.random() < 0.1:
        text += "\r"
    if rng.random() < 0.05:
        pos = rng.randrange(len(text) + 1)
        text = text[:pos] + rng.choice(_CONTROL) + text[pos:]
    return text


@pytest.fixture(scope="module")
def engine():
    player = players.load_player(None, board_size=N, blocks=1, filters=8, seed=0)
    return gtp.GtpEngine(player, visits=2, komi=0.5, seed=0)


def _snapshot(engine):
    return engine.state, engine.komi, engine.agent, engine.visits, engine.gumbel_scale, engine.resign_threshold


def test_fuzz_in_process(engine, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # printsgf with a random file name writes here
    rng = random.Random(SEED)
    game = tmp_path / "game.sgf"
    paths = ["game.sgf", str(game), str(tmp_path / "missing.sgf"), "/nonexistent/x.sgf", str(tmp_path)]
    commands = [c for c in engine.commands() if c != "quit"]
    searches_left = 40
    answered = 0
    for i in range(2500):
        line = random_line(rng, commands, searches_left > 0, paths)
        if command_of(line) in SEARCH_COMMANDS:
            searches_left -= 1
        before = _snapshot(engine)
        response = engine.handle(line)
        if not responds(line):
            assert response is None, f"{line!r} -> {response!r}"
            continue
        answered += 1
        assert response is not None, line
        check_response(response, line)
        if response.startswith("?"):
            after = _snapshot(engine)
            assert after[0] is before[0] and after[1:] == before[1:], f"{line!r} changed the state"
        if i % 100 == 99:
            assert engine.handle("name") == "= saijax\n\n"
            if rng.random() < 0.5:
                assert engine.handle(f"printsgf {game}") == "=\n\n"
    assert answered > 2000
    assert engine.handle("name") == "= saijax\n\n"
    assert engine.handle("17 protocol_version") == "=17 2\n\n"


@pytest.mark.slow  # about 40-65 s: in `make test-slow` (CI runs both)
def test_fuzz_through_a_pipe(engine, tmp_path):
    """A few hundred random lines, as bytes, through ``python -m saijax.gtp``."""
    rng = random.Random(SEED + 1)
    paths = ["game.sgf", str(tmp_path / "missing.sgf"), "/nonexistent/x.sgf"]
    names = [c for c in engine.commands() if c != "quit"]
    lines: list[bytes] = []
    searches_left = 8
    while len(lines) < 300:
        if rng.random() < 0.1:
            raw = bytes(rng.randrange(256) for _ in range(rng.randrange(0, 40))).replace(b"\n", b"")
        else:
            raw = random_line(rng, names, searches_left > 0, paths).replace("\n", " ").encode("utf-8")
        command = command_of(raw.decode("utf-8", errors="replace"))
        if command == "quit":
            continue
        if command in SEARCH_COMMANDS:
            searches_left -= 1
        lines.append(raw)
    lines.append(b"name")

    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "saijax.gtp",
            f"--board_size={N}",
            "--visits=2",
            "--blocks=1",
            "--filters=8",
            "--komi=0.5",
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        cwd=str(tmp_path),
    )

    def feed():
        try:
            for raw in lines:
                proc.stdin.write(raw + b"\n")
                proc.stdin.flush()
            proc.stdin.close()
        except OSError:
            pass

    writer = threading.Thread(target=feed, daemon=True)
    writer.start()
    timer = threading.Timer(600, proc.kill)  # a hung engine fails the test instead of hanging it
    timer.start()
    try:
        output = proc.stdout.read().decode("utf-8")
        proc.wait()
    finally:
        timer.cancel()
    writer.join(timeout=10)

    expected = [raw.decode("utf-8", errors="replace") for raw in lines]
    expected = [line for line in expected if responds(line)]
    responses = re.findall(r".*?\n\n", output, flags=re.S)
    assert "".join(responses) == output, "trailing output outside any response"
    assert len(responses) == len(expected), f"{len(responses)} responses for {len(expected)} commands"
    for line, response in zip(expected, responses):
        check_response(response, line)
        if response.startswith("=") and "\ninfo " in response:
            assert all(part.startswith(("info move ", "play ")) for part in response.split("\n")[1:-2])
    assert responses[-1] == "= saijax\n\n"
    assert proc.returncode == 0
