"""experiments/lib/readme_tables.py: the marked tables of the experiments' READMEs are what their CSVs give,
and every numeric table is either generated or marked hand-written with a reason."""

import os
import shutil

import pytest

from experiments.lib import readme_tables

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _readme():
    """Every document of the experiments (their READMEs and journals), one after the other."""
    texts = []
    for path in readme_tables.documents():
        with open(path, encoding="utf-8") as f:
            texts.append(f.read())
    return "\n".join(texts)


def test_every_marked_table_is_what_its_csvs_give():
    text = _readme()
    names = [m["name"] for m in readme_tables._BLOCK.finditer(text)]
    assert set(names) == set(readme_tables.TABLES), "every table maker has its place in the documents, once"
    assert len(names) == len(set(names))
    assert readme_tables.stale(text) == [], "run: python -m experiments.lib.readme_tables"


def test_every_numeric_table_is_generated_or_marked_hand_written():
    assert readme_tables.unmarked(_readme()) == [], (
        "generate it (readme_tables.py) or mark it <!-- hand-written: why -->"
    )


_NUMERIC = "| net | games |\n|---|---|\n| go7-S1 | 60.0% [50, 70] |\n"


@pytest.mark.parametrize(
    "text, flagged",
    [
        ("Intro.\n\n" + _NUMERIC, ["line 3: | net | (neither generated nor marked hand-written)"]),
        ("| claim | verdict |\n|---|---|\n| the strong net wins 48% | reproduced |\n| go7-W1 | no |\n", []),
        ("<!-- hand-written: the paper's own figures -->\n" + _NUMERIC, []),
        ("<!-- hand-written:  -->\n" + _NUMERIC, ["line 2: | net | (hand-written without a reason)"]),
        ("<!-- hand-written -->\n" + _NUMERIC, ["line 2: | net | (hand-written without a reason)"]),
        ("<!-- hand-written: why -->\n\n" + _NUMERIC, ["line 3: | net | (neither generated nor marked hand-written)"]),
        ("<!-- table: fig7_h1 -->\n" + _NUMERIC + "<!-- /table -->\n", []),
        ("```\n" + _NUMERIC + "```\n", []),
        ("| a | b |\n| 1 | 2 |\n", []),  # no rule line: not a table
    ],
)  # fmt: skip
def test_unmarked_numeric_tables_are_found(text, flagged):
    assert readme_tables.unmarked(text) == flagged


@pytest.mark.parametrize(
    "cell, expected",
    [("12", True), ("60.0% [50, 70]", True), ("−3.1 ± 0.4", True), ("< 10⁻⁶", True), ("35/90 vs 40/90", True),
     ("go7-W1", False), ("generation 169", False), ("", False), ("won 48% against Ray", False)],
)  # fmt: skip
def test_numeric_cells(cell, expected):
    assert readme_tables.numeric(cell) is expected


def test_check_fails_on_an_unmarked_numeric_table(tmp_path, capsys):
    readme = tmp_path / "README.md"
    readme.write_text("# Results\n\n" + _NUMERIC, encoding="utf-8")
    assert readme_tables.main(["--check", "--readme", str(readme)]) == 1
    assert "line 3: | net |" in capsys.readouterr().err
    readme.write_text("# Results\n\n<!-- hand-written: a parameter list -->\n" + _NUMERIC, encoding="utf-8")
    assert readme_tables.main(["--check", "--readme", str(readme)]) == 0


@pytest.mark.parametrize(
    "folder, file, old, new, table",
    [
        ("score_targeting/results/main", "cells.csv", "1.0,1.0,0.0,white,90,35,", "1.0,1.0,0.0,white,90,36,", None),
        ("score_targeting/results/main", "cells.csv", "white,90,35,0,55,0.3889,", "white,90,35,0,55,0.3989,",
         "fig5_white"),
        ("recovery/results/main", "fig7_summary.csv", "-48.19", "-47.19", "fig7_h1"),
        ("handicap/results/main", "fig3_summary.csv", "6.0,white,3.5,90,33,0,57,0.3667,",
         "6.0,white,3.5,90,33,0,57,0.3767,",
         "fig3_itself"),
        ("ablation/results/main", "pairings.csv", "base,caps,200,80.0,", "base,caps,200,81.0,", "ablation_pairings"),
        ("legs/go7_run", "learning_curve.csv", "0,0.19456,0.9779574950536092,0.05416594073176384,",
         "0,0.19456,0.9779574950536092,0.95416594073176384,", "go7_run_curve"),
    ],
)  # fmt: skip
def test_a_changed_csv_value_fails_the_check(tmp_path, folder, file, old, new, table):
    """One value changed in a copy of the CSVs: its table is stale (a win count that no table prints: none)."""
    results = tmp_path / "results"
    shutil.copytree(readme_tables.RESULTS, results,
                    ignore=lambda d, names: [n for n in names if "." in n and not n.endswith(".csv")] +
                    [n for n in names if n in ("sgf", "nets", "checkpoints")])  # fmt: skip
    path = results / folder / file
    text = path.read_text(encoding="utf-8")
    assert text.count(old) == 1
    path.write_text(text.replace(old, new), encoding="utf-8")
    expected = [] if table is None else [table]
    assert readme_tables.stale(_readme(), str(results)) == expected
    readme = tmp_path / "README.md"
    readme.write_text(_readme(), encoding="utf-8")
    assert readme_tables.main(["--check", "--readme", str(readme), "--results", str(results)]) == int(bool(table))
    assert readme_tables.main(["--readme", str(readme), "--results", str(results)]) == 0  # rewritten from the CSVs
    assert readme_tables.main(["--check", "--readme", str(readme), "--results", str(results)]) == 0


def test_a_block_in_a_list_item_is_written_indented():
    text = "* item\n\n  <!-- table: fig7_h1 -->\n  | stale |\n  <!-- /table -->\n"
    out = readme_tables.render(text)
    assert all(line.startswith("  ") for line in out.split("\n")[2:-1]) and "| stale |" not in out
    assert readme_tables.stale(out) == []
