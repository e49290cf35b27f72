"""A claim's config and the settings of its runs: what :mod:`experiments.run` and the claims' ``claim_tests``
share.

A claim lives in ``experiments/<claim>/``: its ``config.py`` (:func:`claim_config`), its science module(s),
its README and its ``results/``. The science module's ``Settings`` (:class:`experiments.lib.common.Settings`)
are built from the config's ``match`` and ``runs`` entries by :func:`settings`.
"""

from __future__ import annotations

import dataclasses
import difflib
import importlib
import os
import re
from collections.abc import Mapping

import ml_collections

from experiments.lib import common
from saijax import zoo as zoo_lib

__all__ = ["ZOOS", "claim_config", "for_zoo", "science", "settings"]

#: The zoos a claim can be played on (``--config.zoo``): each maps the flat 7×7 zoo's names (the
#: ``configs/go7.py`` run's go7-S1…W3, whose value is flat) to its own. ``sharp`` is the sharp
#: recipe's run (``configs/go7_sharp.py``, issue 63): S1–S3 and W1–W3 from seed 0, and
#: ``go7-sharp-J``, seed 1's best net, the judge from another run (a claim's config maps its own
#: judge to it, ``zoos.sharp.names``).
ZOOS = {
    "flat": {},
    "sharp": {f"go7-{r}": f"go7-sharp-{r}" for r in ("S1", "S2", "S3", "W1", "W2", "W3")},
}


def claim_config(claim: str, module: str = "", **fields) -> ml_collections.ConfigDict:
    """A claim's config (:mod:`experiments.run`): its science module ``experiments/<claim>/<module>.py``
    (``module`` defaults to the claim's name), results in ``experiments/<claim>/results/``, nothing played
    or redrawn, no runs compared, unless ``fields`` say otherwise."""
    defaults = dict(outdir=f"experiments/{claim}/results", play=False, redraw=False, only="", compare=[],
                    verdicts=[], families={}, figures={}, rebuild={}, zoo="flat",
                    zoos={name: dict(names={}, runs={}) for name in ZOOS if name != "flat"})  # fmt: skip
    return ml_collections.ConfigDict({"science": f"{claim}.{module or claim}", **defaults, **fields})


_LABEL = re.compile(r"[A-Za-z0-9_.-]+")
_CONDITION = re.compile(r"([A-Za-z0-9_.-]+)(\[[^\[\]]*\])")  # a condition's label: go7-S1[l=1,m=0]


def _rename_net(value: str, names: Mapping[str, str], hits: list) -> str:
    """One net's name or spec renamed: ``<name>``, ``zoo:<name>`` or ``<name>[...]`` (a condition)."""
    bare = value[len(zoo_lib.PREFIX) :] if value.startswith(zoo_lib.PREFIX) else value
    condition = _CONDITION.fullmatch(bare)
    key, rest = (condition[1], condition[2]) if condition else (bare, "")
    if key not in names:
        return value
    hits.append(key)
    return value[: len(value) - len(bare)] + names[key] + rest


def _rename(value, names: Mapping[str, str], hits: list):
    """``value`` with every net name of ``names`` replaced: ``zoo:<name>``, ``<name>=<spec>`` (a
    ``[NAME=]SPEC`` net), ``<name>[...]`` (a condition) and a bare ``<name>`` (a verdict's or a
    family's row filter); free text is left alone. ``hits`` collects what was replaced."""
    if isinstance(value, str):
        label, eq, spec = value.partition("=")
        if eq and _LABEL.fullmatch(label) and not _CONDITION.fullmatch(value):
            return f"{_rename_net(label, names, hits)}={_rename_net(spec, names, hits)}"
        return _rename_net(value, names, hits)
    if isinstance(value, Mapping):
        return {k: _rename(v, names, hits) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(_rename(v, names, hits) for v in value)
    return value


def _runs_of(where: Mapping) -> set[str]:
    """The runs a family's or verdict's ``where`` names (``"v1000 vs main"`` names two)."""
    run = where.get("run")
    values = run if isinstance(run, (list, tuple)) else () if run is None else (run,)
    return {part.strip() for v in values for part in str(v).split(" vs ")}


def for_zoo(config) -> ml_collections.ConfigDict:
    """The claim's config on the zoo that ``config.zoo`` names (:data:`ZOOS`); the config itself for ``flat``.

    On another zoo every net of the flat zoo is renamed (:data:`ZOOS`, then the config's
    ``zoos.<zoo>.names``, e.g. its judge) in ``match``, ``runs``, ``families`` and ``verdicts``; the
    runs are those ``zoos.<zoo>.runs`` names (each a flat run's settings, renamed, updated with its
    entries, or a new run of its entries alone) or, if it names none, the flat runs that play a
    renamed net; families, verdicts, comparisons and figures of the other runs are dropped. Results
    go to ``<outdir>/<zoo>/`` and the shipped games are read from ``<outdir>/<zoo>/<run>/``, so the
    flat zoo's own results are never touched.

    Raises:
      ValueError: an unknown zoo (the field and the zoos), no run left on it, a shipped folder that is
        missing (without ``play``), or a net the zoo does not hold (with ``play``).
    """
    zoo = str(config.get("zoo", "flat"))
    if zoo == "flat":
        return config
    known = [n for n in ZOOS if n == "flat" or n in config.get("zoos", {})]
    if zoo not in ZOOS or zoo not in config.get("zoos", {}):
        raise ValueError(f"zoo: {zoo!r} is not a zoo of this claim; use one of {', '.join(known)}")
    spec = config.zoos[zoo].to_dict() if hasattr(config.zoos[zoo], "to_dict") else dict(config.zoos[zoo])
    names = {**ZOOS[zoo], **spec.get("names", {})}
    d = config.to_dict()
    match = _rename(d["match"], names, [])
    runs: dict[str, dict] = {}
    for name, run in d["runs"].items():
        hits: list = []
        renamed = _rename(run, names, hits)
        if name in spec.get("runs", {}) or (not spec.get("runs") and hits):
            runs[name] = {**renamed, **spec.get("runs", {}).get(name, {})}
    for name, run in spec.get("runs", {}).items():
        runs.setdefault(name, dict(run))
    if not runs:
        raise ValueError(f"zoo: no run of experiments.{config.science} plays a net of the {zoo} zoo")
    outdir = os.path.join(d["outdir"], zoo)
    families = {k: _rename(f, names, []) for k, f in d["families"].items() if _runs_of(f["where"]) <= set(runs)}
    verdicts = [_rename(v, names, []) for v in d["verdicts"] if _runs_of(v["where"]) <= set(runs)]
    d.update(
        match=match,
        runs=runs,
        outdir=outdir,
        shipped={name: os.path.join(outdir, name) for name in runs},
        figures={name: files for name, files in d["figures"].items() if name in runs},
        compare=[pair for pair in d["compare"] if set(pair) <= set(runs)],
        families=families,
        verdicts=verdicts,
    )
    out = ml_collections.ConfigDict(d)
    if d["play"]:
        entries = zoo_lib.entries()
        missing = sorted(n for n in _zoo_nets({"match": match, "runs": runs}) if n not in entries)
        if missing:
            raise ValueError(f"zoo={zoo}: the model zoo has no {', '.join(missing)} (saijax/zoo/index.json)")
    else:
        only = [n.strip() for n in str(d.get("only", "") or "").split(",") if n.strip()]
        for name, folder in out.shipped.items():
            if not os.path.isdir(folder) and (not only or name in only):
                raise ValueError(
                    f"zoo={zoo}: run {name!r} has no shipped games in {folder}; play them with --config.play=True"
                )
    return out


def _zoo_nets(value) -> set[str]:
    """The zoo entries (``zoo:<name>``, alone or as a ``NAME=zoo:<name>`` net) that ``value`` names."""
    if isinstance(value, str):
        spec = value.partition("=")[2] if _LABEL.fullmatch(value.partition("=")[0]) else value
        return {spec[len(zoo_lib.PREFIX) :]} if spec.startswith(zoo_lib.PREFIX) else set()
    if isinstance(value, Mapping):
        value = list(value.values())
    if isinstance(value, (list, tuple)):
        return set().union(*(_zoo_nets(v) for v in value)) if value else set()
    return set()


def science(config):
    """The science module that the config names (``experiments.<claim>.<module>``)."""
    return importlib.import_module(f"experiments.{config.science}")


def settings(config, name: str, **changes) -> common.Settings:
    """Run ``name``'s settings: the science module's ``Settings`` from the shared ``match`` entries, then the
    run's own, then ``changes``.

    Raises:
      ValueError: an entry that is not a field of the module's settings (the message names the entry, where
        it is and the module), or a bad value (the field and the value).
    """
    module = science(config)
    fields = [f.name for f in dataclasses.fields(module.Settings)]
    for where, entries in (("match", config.match), (f"runs.{name}", config.runs[name]), ("", changes)):
        for key in entries:
            if key not in fields:
                near = difflib.get_close_matches(key, fields, n=1)
                hint = f" (did you mean {near[0]!r}?)" if near else f"; its fields are {', '.join(fields)}"
                raise ValueError(f"{where or 'settings'}: {key!r} is not a setting of "
                                 f"experiments.{config.science}{hint}")  # fmt: skip
    try:
        return module.Settings(**{**config.match, **config.runs[name], **changes})
    except common.SettingsError as e:
        raise ValueError(f"runs.{name}: {e}") from None
