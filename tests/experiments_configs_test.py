"""Every claim config (experiments/<claim>/config.py): its shipped folders and figures, its runs' settings, and
the runner
on the shipped games (nothing played). The tiny plays are in experiments_scripts_test.py and
experiments_run_test.py."""

import os
import pathlib
import re
import shlex

import pytest
from absl import flags
from ml_collections import config_flags

from experiments import run
from saijax.learn import config as config_lib

REPO = pathlib.Path(__file__).resolve().parents[1]
CLAIMS = sorted(p.parent.name for p in (REPO / "experiments").glob("*/config.py"))


def _readme_config_commands() -> list[list[str]]:
    """The arguments of every ``python -m experiments.run --config=...`` command of the experiments' READMEs and
    journals and the README."""
    readmes = (*sorted((REPO / "experiments").glob("**/*.md")), REPO / "README.md")
    text = "\n".join(p.read_text(encoding="utf-8") for p in readmes).replace("\\\n", " ")
    found = re.findall(r"python -m experiments\.run (--config=[^`\n]*)", text)
    found = [c for c in found if "<claim>" not in c]  # the READMEs' pattern, not a command
    return [shlex.split(command.split("  #")[0], comments=True) for command in found]


def configured(claim: str, outdir, **changes):
    """The claim's config with ``outdir`` and the fields of ``changes`` replaced."""
    config = config_lib.load_config(str(REPO / "experiments" / claim / "config.py"))
    with config.unlocked():
        config.outdir = str(outdir)
        for key, value in changes.items():
            config[key] = value
    return config


@pytest.mark.parametrize("claim", CLAIMS)
def test_the_config_names_its_claim_its_runs_and_its_shipped_figures(claim):
    config = configured(claim, "x")
    assert config.science and set(config.shipped) <= set(config.runs) and set(config.figures) <= set(config.shipped)
    for name, folder in config.shipped.items():
        assert (REPO / folder).is_dir(), f"{claim}: run {name}'s shipped folder {folder} is missing"
        for figure in config.figures.get(name, []):
            assert (REPO / folder / figure).exists(), f"{claim}: {folder}/{figure} is missing"
    module = run.science(config)
    for name in config.runs:  # every run's entries are fields of its science module's settings
        settings = run.settings(config, name, outdir="x", **config.rebuild)
        assert isinstance(settings, module.Settings) and settings.outdir == "x"


@pytest.mark.parametrize("claim", CLAIMS)
def test_the_config_runs_on_its_shipped_games(claim, tmp_path, monkeypatch):
    monkeypatch.chdir(REPO)  # the shipped folders are relative to the repository
    config = configured(claim, tmp_path / "out")
    rows = run.run(config)
    tested = hasattr(run.science(config), "claim_tests")
    assert (tmp_path / "out" / "paired_tests.csv").exists() == tested and bool(rows) == tested
    assert (tmp_path / "out" / "verdicts.csv").exists() == bool(config.verdicts)
    assert os.listdir(tmp_path) == (["out"] if tested else [])


@pytest.mark.parametrize("args", _readme_config_commands(), ids=lambda args: args[0].split("/")[-1])
def test_readme_config_commands_parse(args, monkeypatch):
    """Each README command's config exists and its ``--config.<field>=...`` overrides are fields of the right type."""
    monkeypatch.chdir(REPO)
    values, argv = flags.FlagValues(), ["experiments.run", *args]
    config_flags.DEFINE_config_file("config", None, "claim config", flag_values=values, sys_argv=argv)
    values(argv)
    assert values.config.science
