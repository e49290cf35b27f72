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

import ml_collections

from experiments.lib import common

__all__ = ["claim_config", "science", "settings"]


def claim_config(claim: str, module: str = "", **fields) -> ml_collections.ConfigDict:
    """A claim's config (:mod:`experiments.run`): its science module ``experiments/<claim>/<module>.py``
    (``module`` defaults to the claim's name), results in ``experiments/<claim>/results/``, nothing played
    or redrawn, no runs compared, unless ``fields`` say otherwise."""
    defaults = dict(outdir=f"experiments/{claim}/results", play=False, redraw=False, only="", compare=[],
                    verdicts=[], families={}, figures={}, rebuild={})  # fmt: skip
    return ml_collections.ConfigDict({"science": f"{claim}.{module or claim}", **defaults, **fields})


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
