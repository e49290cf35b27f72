"""One runner for the papers' claims, driven by a config file.

    python -m experiments.run --config=experiments/<claim>/config.py [--config.<field>=<value> ...]

A claim's config (``experiments/<claim>/config.py``, an ml_collections
ConfigDict like the training configs of ``configs/``) declares:

* ``science``: the module ``experiments/<claim>/<module>.py`` whose games and science the
  claim uses (its ``run(settings)`` plays, its ``claim_tests`` tests);
* ``match`` and ``runs``: the settings every run shares, and per run (a
  set of cells: players, agents, komi or handicap, colours, openings) the
  rest: together, the fields of that module's ``Settings``
  (:class:`experiments.lib.common.Settings`), which the runner builds
  (:func:`settings`) and runs, as big_vision builds a module's evaluator
  from its config: no command line in between;
* ``families``: the test families, each the rows it holds and how many,
  declared before any game is played (:mod:`experiments.lib.paired`);
* ``shipped``: per run, the results folder its shipped games are in;
* ``verdicts``: the ledger's verdicts, each with the test it rested on and
  the rows of ``paired_tests.csv`` it rests on now;
* ``figures``: per run, the PNGs its folder must hold;
* ``outdir``: ``experiments/<claim>/results/``;
* ``zoo``: the zoo its nets come from, ``flat`` (the ``configs/go7.py`` run's go7-S1…W3) or
  ``sharp`` (the sharp recipe's go7-sharp-S1…W3, results in ``<outdir>/sharp/<run>/``), and
  ``zoos``: per zoo, the claim's own renames (its judge) and runs
  (:func:`experiments.lib.claims.for_zoo`).

By default nothing is played: the tests come from the shipped games
(``shipped``), ``<outdir>/paired_tests.csv`` gets every test with its family
and Holm/BH within it (also without the games ended by the move cap), and
``<outdir>/verdicts.csv`` each verdict's old and new p. With
``--config.redraw=True`` the shipped folders' own tables and figures are
rebuilt from their CSVs too (each with its run's own settings, then
``rebuild``: the settings that make the module redraw, e.g.
``dict(plot_only=True)``). ``--config.play=True``
plays every run into ``<outdir>/<run>/`` (resuming what is there) and tests
those games instead; ``--config.only=<run>[,<run>...]`` plays only those
runs (the others' shipped games are tested beside them).
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Mapping, Sequence

from absl import app
from ml_collections import config_flags

from experiments.lib import common, paired
from experiments.lib.claims import claim_config, for_zoo, science, settings
from saijax.learn import config as config_lib

__all__ = ["claim_config", "for_zoo", "play", "run", "science", "selected", "settings", "tests", "verdict_rows"]


def _perform(module, settings: common.Settings) -> None:
    """Runs the science module on ``settings`` (:func:`experiments.lib.common.perform`)."""
    common.perform(module.run, settings)


def selected(config) -> list[str]:
    """The runs ``only`` names (a comma list), checked; every run when it is empty."""
    names = [n.strip() for n in str(config.get("only", "") or "").split(",") if n.strip()]
    unknown = [n for n in names if n not in config.runs]
    if unknown:
        raise ValueError(f"only: no run {', '.join(map(repr, unknown))}; the runs are {', '.join(config.runs)}")
    return names or list(config.runs)


def play(config) -> dict[str, str]:
    """Plays every run of the config (those ``only`` names) into ``<outdir>/<run>/``; returns run -> folder,
    the shipped folder for a run not played."""
    dirs = {name: config.shipped[name] for name in config.runs if name in config.get("shipped", {})}
    for name in selected(config):
        dirs[name] = os.path.join(config.outdir, name)
        _perform(science(config), settings(config, name, outdir=dirs[name]))
    return dirs


def tests(config, dirs: Mapping[str, str]) -> list[dict]:
    """Every paired test of the claim on the games in ``dirs``, with Holm/BH within the declared families.

    A science module without ``claim_tests`` (a claim that is a figure or a table, not a comparison of arms)
    has none, and its config may declare no family."""
    module = science(config)
    if not hasattr(module, "claim_tests"):
        if config.families:
            raise ValueError(f"families: experiments.{config.science} has no claim_tests to put in them")
        return []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # scipy on nearly equal samples; the p stands
        rows = module.claim_tests(dirs, config)
    return paired.adjust(rows, paired.families(config.families), ("run", *module.TEST_KEYS))


def verdict_rows(verdicts: Sequence[Mapping], rows: Sequence[dict]) -> list[dict]:
    """Each verdict's old p beside the new: the rows it rests on, their smallest p on its basis (raw, Holm or
    BH within their family) and raw, how many are below 0.05 then and now, and whether that changes."""
    out = []
    for v in verdicts:
        sel = [r for r in rows if paired.Family("", v["where"], 0).holds(r)]
        if not sel:
            raise ValueError(f"verdict {v['id']}: no test matches {dict(v['where'])}")
        basis = v["basis"]

        def p(r, column="p"):
            return float(r[column]) if basis == "p" else paired.adjusted(r, basis, column)

        new, nocap = [p(r) for r in sel], [p(r, "p_nocap") for r in sel]
        old = v.get("old_significant") or f"{int(v['old_p'] < 0.05)}/1"
        now = f"{sum(x < 0.05 for x in new)}/{len(new)}"
        out.append({
            "id": v["id"],
            "claim": v["claim"],
            "basis": basis,
            "old_test": v["old_test"],
            "old_p": v.get("old_p", ""),
            "old_below_005": old,
            "new_test": "; ".join(dict.fromkeys(r["test"] for r in sel)),
            "family": "; ".join(dict.fromkeys(r["family"] for r in sel)),
            "new_raw_p": min(float(r["p"]) for r in sel),
            "new_p": min(new),
            "new_below_005": now,
            "new_p_without_capped": min(nocap),
            "new_below_005_without_capped": f"{sum(x < 0.05 for x in nocap)}/{len(nocap)}",
            "changes": old != now,
        })  # fmt: skip
    return out


def run(config) -> list[dict]:
    """Plays (``config.play``) or reads the shipped games, writes paired_tests.csv (and verdicts.csv); returns
    the test rows. ``config.zoo`` names the zoo the claim is played on (:func:`experiments.lib.claims.for_zoo`:
    ``flat``, the config as it is; ``sharp``, its nets renamed and its results in ``<outdir>/sharp/``)."""
    config = for_zoo(config)
    if config.play:
        dirs = play(config)
    else:
        dirs = dict(config.shipped)
        if config.redraw:
            redrawn = set()
            for name, folder in dirs.items():  # a folder shipped for several runs once, with the first's settings
                if folder not in redrawn:
                    redrawn.add(folder)
                    _perform(science(config), settings(config, name, **config.rebuild, outdir=folder))
    rows = tests(config, dirs)
    if hasattr(science(config), "claim_tests"):
        common.write_csv(os.path.join(config.outdir, "paired_tests.csv"), rows)
    if not config.play and config.verdicts:
        common.write_csv(os.path.join(config.outdir, "verdicts.csv"), verdict_rows(config.verdicts, rows))
    missing = [os.path.join(dirs[name], f) for name, files in config.figures.items() for f in files
               if not os.path.exists(os.path.join(dirs[name], f))]  # fmt: skip
    if missing:
        raise ValueError(f"figures not drawn: {', '.join(missing)}")
    if hasattr(science(config), "claim_tests"):
        families = sum(bool(r["family"]) for r in rows)
        print(f"{len(rows)} tests, {families} in the declared families; wrote {config.outdir}")
    else:
        where = ", ".join(dict.fromkeys(dirs.values()))
        print(f"no paired tests (experiments.{config.science} writes its own tables); results in {where}")
    return rows


def main(args, config):
    if len(args) > 1:
        raise app.UsageError(f"unexpected arguments: {' '.join(args[1:])}")
    import matplotlib  # noqa: PLC0415

    matplotlib.use("Agg")
    try:
        run(config.value)
    except common.ERRORS as e:
        common.error(__file__, e, exit_on_error=True)


if __name__ == "__main__":  # the flag only here: the configs import this module again as experiments.run
    _config = config_flags.DEFINE_config_file(
        "config", None, "claim config (experiments/*/config.py)", lock_config=True
    )
    app.run(lambda args: main(args, _config), flags_parser=config_lib.parse_flags)
