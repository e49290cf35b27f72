"""How each game was played: the games table's visits, Gumbel scale, precision and opening, and the SGF archive.

One tiny match (5×5, a 1×8 net, 3 visits, 4 games with two random
opening moves) is played through :func:`experiments.lib.matches.play_conditions`,
the harness of the handicap and recovery experiments, and again as a second
arm with another agent and the same seed (no new compile: agents are traced).
"""

import dataclasses
import os
import shutil
import tarfile

import pytest

from experiments.lib import common, matches, paired
from saijax.analysis import results
from saijax.core import go, networks, search, sgf
from saijax.play import match, players

R5 = go.GoRules(5)


@pytest.fixture(scope="module")
def arms(tmp_path_factory):
    """Two arms sharing the seed: (outdir, played) for λ = 0 and λ = 0.5 against the same opponent."""
    config = search.SearchConfig(num_simulations=3, gumbel_scale=0.0)  # shared: one compiled search
    a = players.random_player(5, blocks=1, filters=8, name="A", config=config)
    b = a.replace(name="B")
    conditions = matches.malus_conditions("fig3", "B", [0.0], 0.5)
    out = []
    for strong in (a, a.with_agent(lambda_=0.5).replace(name="L")):
        outdir = tmp_path_factory.mktemp(strong.name)
        played = matches.play_conditions(
            strong,
            b,
            conditions,
            games=4,
            colours="alternate",
            seed=5,
            opening_moves=2,
            score_visits=None,
            results_path=os.path.join(outdir, "games.csv"),
            sgf_dir=os.path.join(outdir, "sgf"),
        )
        out.append((outdir, played))
    return out


def test_every_row_says_how_its_game_was_played(arms):
    outdir, played = arms[0]
    rows = results.read_results(os.path.join(outdir, "games.csv"))
    assert sorted(r.game for r in rows) == [0, 1, 2, 3]
    for r in rows:
        assert (r.visits, r.gumbel_scale, r.precision) == ("3", "0", "float32")
        record = sgf.read_sgf(r.sgf, check=False)
        assert r.opening == " ".join(go.to_gtp(R5, m) for m in record.moves[:2]) and len(r.opening.split()) == 2
        assert r.opening_id == match.opening_id(R5, 0, r.opening) and len(r.opening_id) == 12
    by_game = {r.game: r for r in rows}
    # The two games of a colour pair share their opening; the pairs differ (5×5 has 25·24 openings).
    assert by_game[0].opening_id == by_game[1].opening_id and by_game[2].opening_id == by_game[3].opening_id
    assert by_game[0].opening != by_game[2].opening
    assert {p.game for p in played} == set(rows)


def test_the_opening_id_pairs_two_arms_played_with_one_seed(arms):
    (_, first), (_, second) = arms
    assert [p.game.opening_id for p in first] == [p.game.opening_id for p in second]
    assert {p.game.black for p in second} == {"L", "B"}


def test_player_settings_of_mixed_players_and_an_engine():
    net = networks.make_network(5, blocks=1, filters=8)
    a = players.Player.from_network("a", net, None, config=search.SearchConfig(num_simulations=8, gumbel_scale=1.0))
    half = a.with_precision("bfloat16").replace(name="h")
    assert (a.precision, half.precision) == ("float32", "bfloat16")
    assert match.player_settings(a, half) == {"visits": "8", "gumbel_scale": "1", "precision": "float32/bfloat16"}
    puct = a.replace(config=search.SearchConfig(num_simulations=4, algorithm="puct"))
    assert match.player_settings(None, puct) == {"visits": "-/4", "gumbel_scale": "-", "precision": "-/float32"}
    uniform = players.uniform_player(5)
    assert match.player_settings(uniform, uniform)["precision"] == "-"
    assert match.opening_id(R5, 0, "") == "" and match.opening_id(R5, 0, "C3") != match.opening_id(R5, 2, "C3")


# ---------------------------------------------------------------------------
# Older tables.

OLD_HEADER = ",".join(results.COLUMNS[: results.COLUMNS.index("resign_own_estimate") + 1])
OLD_ROWS = [
    "go7-S1,go7-S1-copy,white,-18.5,False,32,17.5,0,passes,,,,experiments/results/x/sgf/a/g.sgf,296,0,,,",
    "gnugo,net,black,3.5,False,40,7.5,0,passes,,B+3.5,C3 D4,,1,0,,,",
]


def test_an_older_table_reads_and_appending_migrates_it_keeping_every_row(tmp_path):
    path = tmp_path / "games.csv"
    path.write_text("\r\n".join([OLD_HEADER, *OLD_ROWS]) + "\r\n", encoding="utf-8", newline="")
    old = results.read_results(path)
    assert [r.game for r in old] == [296, 1] and old[1].engine_dead == "C3 D4"
    assert all((r.visits, r.gumbel_scale, r.precision, r.opening, r.opening_id) == ("",) * 5 for r in old)
    new = results.GameResult("a", "b", "black", margin=1.5, visits="2", opening="C3", opening_id="x")
    results.append_results(path, [new])
    lines = path.read_text(encoding="utf-8").splitlines()
    pad = "," * (len(results.COLUMNS) - OLD_HEADER.count(",") - 1)
    assert lines[:3] == [",".join(results.COLUMNS), OLD_ROWS[0] + pad, OLD_ROWS[1] + pad]
    assert results.read_results(path) == [*old, new]
    assert os.listdir(tmp_path) == ["games.csv"]
    # The first header, before the resignation columns, too.
    first = tmp_path / "first.csv"
    first.write_text(",".join(results.COLUMNS[:15]) + "\na,b,draw,0,False,3,7.5,0,passes,,,,,0,0\n")
    results.append_results(first, [new])
    assert [r.winner for r in results.read_results(first)] == ["draw", "black"]


def test_appending_to_a_table_of_another_header_names_the_file(tmp_path):
    path = tmp_path / "mine.csv"
    text = "black,white,winner,visits\na,b,draw,3\n"
    path.write_text(text)
    with pytest.raises(ValueError, match=r"mine\.csv: existing CSV header"):
        results.append_results(path, [results.GameResult("a", "b", "black")])
    ragged = tmp_path / "ragged.csv"
    ragged.write_text(OLD_HEADER + "\n" + OLD_ROWS[0] + ",extra\n")
    with pytest.raises(ValueError, match=r"ragged\.csv:2: 19 cells, the header has 18"):
        results.append_results(ragged, [results.GameResult("a", "b", "black")])
    assert path.read_text() == text and ragged.read_text().count("extra") == 1
    assert sorted(os.listdir(tmp_path)) == ["mine.csv", "ragged.csv"]


# ---------------------------------------------------------------------------
# The SGF archive.


def test_the_sgf_archive_round_trips_and_counts_distinct_games(arms, tmp_path):
    outdir, played = arms[0]
    run = tmp_path / "run"
    shutil.copytree(outdir, run)
    games = [p.game for p in played]
    moved = [g.sgf.replace(str(outdir), str(run)) for g in games]
    exact = matches.distinct_sgf_games(moved)
    assert exact == matches.distinct_games([sgf.read_sgf(p, check=False).moves for p in moved], 5)[0]
    archive = common.pack_sgfs(run)
    assert archive == os.path.join(run, common.SGF_ARCHIVE)
    with tarfile.open(archive) as tar:
        assert sorted(tar.getnames()) == [f"A-B/game_s5_{i:04d}.sgf" for i in range(4)]
        assert {(m.mtime, m.uid, m.uname) for m in tar.getmembers()} == {(0, 0, "")}
    packed = open(archive, "rb").read()
    texts = [open(p, "rb").read() for p in moved]
    shutil.rmtree(run / "sgf")  # a fresh checkout: the archive alone
    assert [common.sgf_bytes(p) for p in moved] == texts
    assert matches.distinct_sgf_games(moved) == exact
    assert paired.distinct(moved) == (exact, matches.distinct_sgf_games(moved, symmetric=True))
    assert matches.distinct_sgf_games([*moved, str(run / "sgf" / "A-B" / "missing.sgf")]) == matches.NO_SGFS
    # A resumed run adds SGFs: the archive keeps the earlier ones, and is the same bytes for the same games.
    os.makedirs(run / "sgf" / "A-B")
    with open(moved[0], "wb") as f:
        f.write(texts[0])
    common.pack_sgfs(run)
    assert open(archive, "rb").read() == packed
    assert common.pack_sgfs(tmp_path / "nothing") is None


def test_without_sgfs_the_tables_say_so(arms, tmp_path):
    _, played = arms[0]
    gone = [matches.Played(p.condition, p.strong, dataclasses.replace(p.game, sgf="")) for p in played]
    rows = matches.summary_rows(gone)
    assert {r["distinct_games"] for r in rows} == {matches.NO_SGFS}
    assert {r["distinct_games"] for r in matches.pooled_rows(rows, "S1-S3")} == {matches.NO_SGFS}
    assert paired.distinct([""]) == (matches.NO_SGFS, matches.NO_SGFS)
    common.write_csv(tmp_path / "summary.csv", rows, matches.SUMMARY_COLUMNS)
    assert {r["distinct_games"] for r in matches.read_summary(tmp_path / "summary.csv")} == {matches.NO_SGFS}
    counted = matches.summary_rows(played)
    assert all(isinstance(r["distinct_games"], int) for r in counted)


def test_a_script_run_packs_its_sgfs_and_a_bad_archive_is_named(tmp_path):
    def body():
        os.makedirs(tmp_path / "sgf" / "x")
        (tmp_path / "sgf" / "x" / "g.sgf").write_text("(;FF[4]SZ[5];B[cc])")

    assert common.run_main("experiments/some_script.py", body, outdir=str(tmp_path)) == 0
    assert common.sgf_bytes(tmp_path / "sgf" / "x" / "g.sgf") == b"(;FF[4]SZ[5];B[cc])"
    shutil.rmtree(tmp_path / "sgf")
    assert common.sgf_bytes(tmp_path / "sgf" / "x" / "g.sgf") == b"(;FF[4]SZ[5];B[cc])"
    assert common.sgf_bytes(tmp_path / "sgf" / "y.sgf") is None and common.sgf_bytes(tmp_path / "z.sgf") is None
    (tmp_path / common.SGF_ARCHIVE).write_bytes(b"not an archive")
    with pytest.raises(ValueError, match=r"sgf\.tar\.xz: not a readable SGF archive"):
        common.sgf_bytes(tmp_path / "sgf" / "x" / "g.sgf")
