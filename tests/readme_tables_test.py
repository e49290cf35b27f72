"""experiments/readme_tables.py: the marked tables of experiments/README.md are what their CSVs give."""

import os
import shutil

import pytest

from experiments import readme_tables

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _readme():
    with open(readme_tables.README, encoding="utf-8") as f:
        return f.read()


def test_every_marked_table_is_what_its_csvs_give():
    text = _readme()
    names = [m["name"] for m in readme_tables._BLOCK.finditer(text)]
    assert set(names) == set(readme_tables.TABLES), "every table maker has its place in the README, once"
    assert len(names) == len(set(names))
    assert readme_tables.stale(text) == [], "run: python -m experiments.readme_tables"


@pytest.mark.parametrize(
    "folder, file, old, new, table",
    [
        ("go7_score_targeting2", "cells.csv", "1.0,1.0,0.0,white,90,35,", "1.0,1.0,0.0,white,90,36,", None),
        ("go7_score_targeting2", "cells.csv", "white,90,35,0,55,0.3889,", "white,90,35,0,55,0.3989,", "fig5_white"),
        ("go7_recovery2", "fig7_summary.csv", "-48.19", "-47.19", "fig7_h1"),
    ],
)  # fmt: skip
def test_a_changed_csv_value_fails_the_check(tmp_path, folder, file, old, new, table):
    """One value changed in a copy of the CSVs: its table is stale (a win count that no table prints: none)."""
    results = tmp_path / "results"
    for name in {"go7_score_targeting2", "go7_recovery2", "go7_suboptimal2", "score_targeting", "recovery",
                 "suboptimal_moves"}:  # fmt: skip
        shutil.copytree(os.path.join(readme_tables.RESULTS, name), results / name,
                        ignore=shutil.ignore_patterns("*.png", "sgf"))  # fmt: skip
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
