"""Reading one query of KataGo's analysis protocol: its fields checked, its positions replayed.

The analysis engine (:mod:`saijax.gtp.kata_engine`) gets one JSON object a
line; :func:`parse_query` turns an analysis query into a :class:`Query`
(the positions of the turns to analyse and the query's settings) or raises
:class:`QueryError` naming the bad field. Fields it accepts but cannot use
exactly come back as warnings, each naming its field, as KataGo's do.

Rules. saijax plays one rule set (docs/design.md §1): area scoring,
positional superko, no suicide, no button, and komi as given (no
handicap bonus). A query's ``rules`` (a KataGo name such as
``"tromp-taylor"`` or ``"japanese"``, or a rules object with ``koRule``,
``scoringRule``, ``taxRule``, ``multiStoneSuicideLegal``, ``hasButton``,
``whiteHandicapBonus``, ``friendlyPassOk``) is compared with that rule set
field by field; each field that differs is a warning naming it and what was
played instead, and the query is analysed under saijax's rules.
``{"scoringRule":"AREA","koRule":"POSITIONAL","multiStoneSuicideLegal":false,"whiteHandicapBonus":"0"}``
(or the name ``chinese-ogs`` without handicap stones) matches exactly.

Moves by the same colour twice running are allowed, as in KataGo: the
position gets the GTP engine's treatment (a pass by the other side, or a
restart as a setup position when that pass would end the game;
:func:`saijax.gtp.analysis.to_move`).
"""

from __future__ import annotations

import dataclasses
import functools
import math
import re
from collections.abc import Sequence
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from saijax.core import go
from saijax.gtp.analysis import Position, to_move

__all__ = [
    "QueryError",
    "Settings",
    "Turn",
    "Query",
    "SAIJAX_RULES",
    "REPORT_AS",
    "MAX_QUERY_VISITS",
    "parse_query",
    "parse_rules",
    "parse_override",
]

# KataGo's names for rule sets, as rules objects (KataGo's docs/GTP_Extensions.md, kata-set-rules).
_NAMED_RULES: dict[str, dict[str, Any]] = {
    "tromp-taylor": dict(koRule="POSITIONAL", scoringRule="AREA", taxRule="NONE", suicide=True, button=False, whb="0"),
    "chinese": dict(koRule="SIMPLE", scoringRule="AREA", taxRule="NONE", suicide=False, button=False, whb="N"),
    "chinese-ogs": dict(koRule="POSITIONAL", scoringRule="AREA", taxRule="NONE", suicide=False, button=False, whb="N"),
    "chinese-kgs": dict(koRule="POSITIONAL", scoringRule="AREA", taxRule="NONE", suicide=False, button=False, whb="N"),
    "japanese": dict(koRule="SIMPLE", scoringRule="TERRITORY", taxRule="SEKI", suicide=False, button=False, whb="0"),
    "korean": dict(koRule="SIMPLE", scoringRule="TERRITORY", taxRule="SEKI", suicide=False, button=False, whb="0"),
    "stone-scoring": dict(koRule="SIMPLE", scoringRule="AREA", taxRule="ALL", suicide=False, button=False, whb="0"),
    "aga": dict(koRule="SITUATIONAL", scoringRule="AREA", taxRule="NONE", suicide=False, button=False, whb="N-1"),
    "bga": dict(koRule="SITUATIONAL", scoringRule="AREA", taxRule="NONE", suicide=False, button=False, whb="N-1"),
    "aga-button": dict(koRule="SITUATIONAL", scoringRule="AREA", taxRule="NONE", suicide=False, button=True, whb="N-1"),
    "new-zealand": dict(koRule="SITUATIONAL", scoringRule="AREA", taxRule="NONE", suicide=True, button=False, whb="0"),
}
_RULE_ALIASES = {"trompTaylor": "tromp-taylor", "tt": "tromp-taylor", "nz": "new-zealand", "jp": "japanese"}
_RULE_ALIASES.update({"cn": "chinese", "ko": "korean"})

# saijax's one rule set, in the rules object's terms.
SAIJAX_RULES: dict[str, Any] = {
    "scoringRule": "AREA",
    "koRule": "POSITIONAL",
    "taxRule": "NONE",
    "multiStoneSuicideLegal": False,
    "hasButton": False,
    "whiteHandicapBonus": "0",
}
_RULE_WORDS = {
    "scoringRule": "area scoring",
    "koRule": "positional superko",
    "taxRule": "no tax",
    "multiStoneSuicideLegal": "no suicide",
    "hasButton": "no button",
    "whiteHandicapBonus": "komi as given, no handicap bonus",
}
_RULE_KEYS = {
    "koRule": ("koRule", "ko"),
    "scoringRule": ("scoringRule", "scoring"),
    "taxRule": ("taxRule", "tax"),
    "multiStoneSuicideLegal": ("multiStoneSuicideLegal", "suicide"),
    "hasButton": ("hasButton", "button"),
    "whiteHandicapBonus": ("whiteHandicapBonus", "whb"),
}
_RULE_VALUES = {
    "koRule": ("SIMPLE", "POSITIONAL", "SITUATIONAL", "SPIGHT"),
    "scoringRule": ("AREA", "TERRITORY"),
    "taxRule": ("NONE", "SEKI", "ALL"),
    "whiteHandicapBonus": ("0", "N", "N-1"),
}
_RULE_PREFIX = {"koRule": "KO_", "scoringRule": "SCORING_", "taxRule": "TAX_"}

REPORT_AS = ("BLACK", "WHITE", "SIDETOMOVE")
MAX_QUERY_VISITS = 10**9
_QUERY_FIELDS = {
    "id",
    "action",
    "moves",
    "initialStones",
    "initialPlayer",
    "rules",
    "komi",
    "boardXSize",
    "boardYSize",
    "analyzeTurns",
    "maxVisits",
    "includeOwnership",
    "includeMovesOwnership",
    "includePolicy",
    "includePVVisits",
    "avoidMoves",
    "allowMoves",
    "overrideSettings",
    "priority",
    "priorities",
    "reportDuringSearchEvery",
    "whiteHandicapBonus",
}
# KataGo query fields with no saijax meaning: accepted, with a warning that they are ignored.
_IGNORED_FIELDS = {
    "rootPolicyTemperature": "saijax's search has no root policy temperature",
    "rootFpuReductionMax": "saijax's Gumbel search has no FPU; PUCT's is the engine's fpu_reduction",
    "includeOwnershipStdev": "saijax's ownership is the net's at the root, with no spread over the search",
    "includeMovesOwnershipStdev": "saijax's ownership is the net's, with no spread over the search",
    "includeNoResultValue": "saijax's games have no no-result outcome",
}
_VERTEX_XY = re.compile(r"^\(\s*(\d+)\s*,\s*(\d+)\s*\)$")


class QueryError(ValueError):
    """A query that cannot be analysed: ``field`` names the bad field (None: the line itself)."""

    def __init__(self, message: str, field: str | None = None):
        super().__init__(message)
        self.field = field


@dataclasses.dataclass(frozen=True)
class Settings:
    """How one query's positions are searched and reported.

    Attributes:
      max_visits: visits per position; searched in rounds of ``round_visits``
        simulations, as many as reach it (the last round may pass it).
      round_visits: simulations of one round (the GTP engine's ``visits``).
      report_as: whose view winrates, scores, α and ownership take:
        "BLACK", "WHITE" or "SIDETOMOVE".
      max_time: seconds of search per position (None: no limit).
      report_every: seconds between partial replies (None: none).
      ownership, moves_ownership, policy, pv_visits: the include* fields.
      options: the GTP engine's options this query sets (``lambda``,
        ``mu``, ``threshold``, ``gumbel_scale``, ``algorithm``, ``style``),
        by the names ``lz-setoption`` and the command line give them.
    """

    max_visits: int
    round_visits: int
    report_as: str = "BLACK"
    max_time: float | None = None
    report_every: float | None = None
    ownership: bool = False
    moves_ownership: bool = False
    policy: bool = False
    pv_visits: bool = False
    options: tuple[tuple[str, Any], ...] = ()


@dataclasses.dataclass(frozen=True)
class Turn:
    """One position of a query to analyse."""

    number: int  # the turn: 0 the initial position, t the position after moves[t-1]
    position: Position
    priority: int
    allowed: np.ndarray | None  # [N*N+1] bool: the root moves the search may consider (None: all legal)


@dataclasses.dataclass(frozen=True)
class Query:
    """An analysis query, read: its turns, settings and the warnings it gave."""

    id: str
    turns: tuple[Turn, ...]
    settings: Settings
    komi: float
    warnings: tuple[tuple[str, str], ...]  # (field, message)


def _is_int(x) -> bool:
    return isinstance(x, int) and not isinstance(x, bool)


def _number(value, field: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise QueryError(f"{field} must be a number, got {value!r}", field)
    value = float(value)
    if not math.isfinite(value):
        raise QueryError(f"{field} must be finite, got {value!r}", field)
    return value


def _bool(obj: dict, field: str) -> bool:
    value = obj.get(field, False)
    if not isinstance(value, bool):
        raise QueryError(f"{field} must be true or false, got {value!r}", field)
    return value


def _colour(value, field: str) -> int:
    text = value.strip().lower() if isinstance(value, str) else None
    if text in ("b", "black"):
        return 1
    if text in ("w", "white"):
        return -1
    raise QueryError(f'{field}: player must be "B" or "W", got {value!r}', field)


def _vertex(rules: go.GoRules, value, field: str) -> int:
    if not isinstance(value, str):
        raise QueryError(f'{field}: a location must be a string like "C3" or "pass", got {value!r}', field)
    match = _VERTEX_XY.match(value.strip())
    if match:
        x, y = int(match.group(1)), int(match.group(2))
        if not (x < rules.size and y < rules.size):
            raise QueryError(f"{field}: location {value!r} is off the {rules.size}x{rules.size} board", field)
        return y * rules.size + x  # KataGo's (x, y): y counts rows from the top, as saijax's actions do
    try:
        return go.from_gtp(rules, value)
    except ValueError:
        raise QueryError(
            f"{field}: {value!r} is not a location on the {rules.size}x{rules.size} board", field
        ) from None


def _moves(rules: go.GoRules, value, field: str) -> list[tuple[int, int]]:
    if value is None:
        return []
    if not isinstance(value, list):
        raise QueryError(f"{field} must be a list of [player, location] pairs, got {value!r}", field)
    moves = []
    for i, item in enumerate(value):
        if not (isinstance(item, list) and len(item) == 2):
            raise QueryError(f"{field}[{i}] must be a [player, location] pair, got {item!r}", field)
        try:
            moves.append((_colour(item[0], f"{field}[{i}]"), _vertex(rules, item[1], f"{field}[{i}]")))
        except QueryError as e:
            raise QueryError(str(e), field) from None
    return moves


def _rule_value(key: str, value) -> Any:
    if key in ("multiStoneSuicideLegal", "hasButton"):
        if not isinstance(value, bool):
            raise QueryError(f"rules: {key} must be true or false, got {value!r}", "rules")
        return value
    text = str(value).strip().upper() if isinstance(value, (str, int)) and not isinstance(value, bool) else None
    if text is not None and key in _RULE_PREFIX and text.startswith(_RULE_PREFIX[key]):
        text = text[len(_RULE_PREFIX[key]) :]
    if text is not None and key == "whiteHandicapBonus":
        text = text.replace(" ", "")
    if text not in _RULE_VALUES[key]:
        raise QueryError(f"rules: {key} must be one of {', '.join(_RULE_VALUES[key])}, got {value!r}", "rules")
    return text


def parse_rules(value) -> dict[str, Any]:
    """A rules name or object as a full rules object in :data:`SAIJAX_RULES`' keys.

    Raises:
      QueryError: an unknown name, an unknown key or a bad value (field ``rules``).
    """
    if isinstance(value, str):
        name = value.strip()
        name = _RULE_ALIASES.get(name, name).lower().replace("_", "-").replace(" ", "-")
        name = _RULE_ALIASES.get(name, name)
        if name not in _NAMED_RULES:
            known = ", ".join(_NAMED_RULES)
            raise QueryError(f"rules: unknown rule set {value!r} (known: {known}, or a rules object)", "rules")
        named = _NAMED_RULES[name]
        return {
            "koRule": named["koRule"],
            "scoringRule": named["scoringRule"],
            "taxRule": named["taxRule"],
            "multiStoneSuicideLegal": named["suicide"],
            "hasButton": named["button"],
            "whiteHandicapBonus": named["whb"],
        }
    if not isinstance(value, dict):
        raise QueryError(f"rules must be a rule set name or a rules object, got {value!r}", "rules")
    spelled = {alias: key for key, aliases in _RULE_KEYS.items() for alias in aliases}
    rules = dict(SAIJAX_RULES)
    for k, v in value.items():
        if k == "friendlyPassOk":
            if not isinstance(v, bool):
                raise QueryError(f"rules: friendlyPassOk must be true or false, got {v!r}", "rules")
            continue  # a cleanup convention of territory scoring: no effect on area-scored play
        if k not in spelled:
            raise QueryError(f"rules: unknown key {k!r} (known: {', '.join(_RULE_KEYS)}, friendlyPassOk)", "rules")
        rules[spelled[k]] = _rule_value(spelled[k], v)
    return rules


def _rule_warnings(rules: dict[str, Any], handicap: bool) -> list[tuple[str, str]]:
    warnings = []
    for key, ours in SAIJAX_RULES.items():
        if rules[key] == ours or (key == "whiteHandicapBonus" and not handicap):
            continue
        theirs = str(rules[key]).lower() if isinstance(rules[key], bool) else rules[key]
        warnings.append(
            (
                "rules",
                f"rules: {key} {theirs} cannot be played by saijax; analysed with {key} "
                f"{str(ours).lower() if isinstance(ours, bool) else ours} ({_RULE_WORDS[key]}) instead",
            )
        )
    return warnings


def parse_override(settings: dict, *, base: Settings) -> tuple[Settings, list[tuple[str, str]]]:
    """``overrideSettings`` applied to ``base``; returns the settings and the warnings.

    KataGo's ``reportAnalysisWinratesAs``, ``maxTime`` and ``maxVisits``
    apply; ``wideRootNoise`` and KataGo's other search parameters have no
    saijax meaning and are ignored with a warning; saijax's own are the GTP
    engine's option names (``lambda``, ``mu``, ``threshold``, ``visits``,
    ``gumbel_scale``, ``algorithm``, ``style``), checked when the query's
    search is set up.
    """
    if not isinstance(settings, dict):
        raise QueryError(f"overrideSettings must be an object, got {settings!r}", "overrideSettings")
    warnings = []
    changes: dict[str, Any] = {}
    options = dict(base.options)
    for key, value in settings.items():
        name = f"overrideSettings.{key}"
        if key == "reportAnalysisWinratesAs":
            text = value.strip().upper() if isinstance(value, str) else None
            if text not in REPORT_AS:
                raise QueryError(f"{name} must be one of {', '.join(REPORT_AS)}, got {value!r}", "overrideSettings")
            changes["report_as"] = text
        elif key == "maxTime":
            seconds = _number(value, name)
            if seconds <= 0:
                raise QueryError(f"{name} must be > 0 seconds, got {value!r}", "overrideSettings")
            changes["max_time"] = seconds
        elif key in ("maxVisits", "visits"):
            if not _is_int(value) or not 1 <= value <= MAX_QUERY_VISITS:
                raise QueryError(
                    f"{name} must be an integer in 1..{MAX_QUERY_VISITS}, got {value!r}", "overrideSettings"
                )
            changes["max_visits" if key == "maxVisits" else "round_visits"] = int(value)
        elif key in ("lambda", "mu", "threshold", "gumbel_scale"):
            options[key] = _number(value, name)
        elif key in ("algorithm", "style"):
            if not isinstance(value, str):
                raise QueryError(f"{name} must be a string, got {value!r}", "overrideSettings")
            options[key] = value
        else:
            warnings.append(("overrideSettings", f"{name} has no saijax meaning; ignored"))
    changes["options"] = tuple(sorted(options.items()))
    return dataclasses.replace(base, **changes), warnings


@functools.cache
def _init_fn(rules: go.GoRules):
    return jax.jit(functools.partial(go.init, rules))


def _start(rules: go.GoRules, komi: float, black: Sequence[int], white: Sequence[int], to_play: int) -> Position:
    if not black and not white and to_play == 1:
        # The GTP engine's empty board (clear_board), so a game replayed here is its game.
        return Position(_init_fn(rules)(jnp.float32(komi)))
    state = go.setup(rules, komi, black=tuple(black), white=tuple(white), to_play=to_play)
    return Position(state, tuple(sorted(black)), tuple(sorted(white)), first_player=to_play)


def _root_mask(rules: go.GoRules, obj: dict, field: str, colour: int) -> tuple[np.ndarray | None, list]:
    """The root moves ``avoidMoves`` / ``allowMoves`` leave for ``colour`` to move (None: no restriction)."""
    value = obj.get(field)
    if value is None:
        return None, []
    if not isinstance(value, list) or (field == "allowMoves" and len(value) > 1):
        shape = "a list of one" if field == "allowMoves" else "a list of"
        raise QueryError(f"{field} must be {shape} {{player, moves, untilDepth}} objects, got {value!r}", field)
    try:
        return _restrict(rules, value, field, colour)
    except QueryError as e:
        raise QueryError(str(e), field) from None


def _restrict(rules: go.GoRules, value: list, field: str, colour: int) -> tuple[np.ndarray | None, list]:
    mask = None
    warnings = []
    for i, item in enumerate(value):
        if not isinstance(item, dict) or not {"player", "moves", "untilDepth"} <= set(item):
            raise QueryError(f"{field}[{i}] must be an object with player, moves and untilDepth, got {item!r}", field)
        player = _colour(item["player"], f"{field}[{i}].player")
        depth = item["untilDepth"]
        if not _is_int(depth) or depth < 1:
            raise QueryError(f"{field}[{i}].untilDepth must be a positive integer, got {depth!r}", field)
        if not isinstance(item["moves"], list):
            raise QueryError(f"{field}[{i}].moves must be a list of locations, got {item['moves']!r}", field)
        points = [_vertex(rules, m, f"{field}[{i}].moves") for m in item["moves"]]
        if depth > 1:
            warnings.append((field, f"{field}[{i}].untilDepth {depth}: saijax restricts the root's moves only"))
        if player != colour:
            continue  # the root's moves are the player to move's
        listed = np.zeros(rules.num_actions, bool)
        listed[points] = True
        keep = listed if field == "allowMoves" else ~listed
        mask = keep if mask is None else mask & keep
    return mask, warnings


_CACHE_LIMIT = 4096


def _cached_prefix(cache: dict | None, start_key: tuple, moves: list) -> list[Position]:
    """The positions of the longest replayed prefix of ``moves`` in ``cache`` ([] if none)."""
    if not cache:
        return []
    for i in range(len(moves), 0, -1):
        positions = cache.get((start_key, tuple(moves[:i])))
        if positions is not None:
            return list(positions)
    return []


def _max_visits(value, field: str) -> int:
    if not _is_int(value) or not 1 <= value <= MAX_QUERY_VISITS:
        raise QueryError(f"{field} must be an integer in 1..{MAX_QUERY_VISITS}, got {value!r}", field)
    return int(value)


def parse_query(obj: dict, *, rules: go.GoRules, defaults: Settings, cache: dict | None = None) -> Query:
    """Reads an analysis query (a JSON object with an ``id`` and no ``action``).

    Args:
      obj: the query.
      rules: the net's board (its size is the only one accepted).
      defaults: the engine's settings (its ``--visits``, report view, ...).
      cache: positions of earlier queries' replays, by start position and
        moves, reused and filled here (a client such as KaTrain sends the
        whole game again with each new move); None: no reuse.

    Returns:
      The query's turns (positions replayed, legality checked), its settings
      and its warnings.

    Raises:
      QueryError: a field that cannot be used; the message names it (an
        illegal move names the turn and the move).
    """
    query_id = obj["id"]
    warnings: list[tuple[str, str]] = []
    for key in obj:
        if key in _IGNORED_FIELDS:
            warnings.append((key, f"{key}: {_IGNORED_FIELDS[key]}; ignored"))
        elif key not in _QUERY_FIELDS:
            warnings.append((key, f"Unexpected or unused field {key!r}"))
    n = rules.size
    for field in ("boardXSize", "boardYSize"):
        size = obj.get(field, n)
        if not _is_int(size) or size != n:
            raise QueryError(f"{field} must be the net's board size {n}, got {size!r}", field)
    komi = _number(obj.get("komi", 7.5), "komi")
    try:
        komi = go.check_komi(komi)
    except ValueError as e:
        raise QueryError(str(e), "komi") from None
    moves = _moves(rules, obj.get("moves", []), "moves")
    stones = _moves(rules, obj.get("initialStones", []), "initialStones")
    black = [p for c, p in stones if c == 1]
    white = [p for c, p in stones if c == -1]
    if rules.pass_action in black + white:
        raise QueryError("initialStones cannot hold a pass", "initialStones")
    if len(set(black + white)) != len(black) + len(white):
        raise QueryError("initialStones place two stones on one point", "initialStones")
    if "initialPlayer" in obj:
        first = _colour(obj["initialPlayer"], "initialPlayer")
    else:
        first = moves[0][0] if moves else 1
    if "rules" in obj:
        warnings += _rule_warnings(parse_rules(obj["rules"]), handicap=bool(black))
    if "whiteHandicapBonus" in obj:
        bonus = _rule_value("whiteHandicapBonus", obj["whiteHandicapBonus"])
        if bonus != "0" and black:
            warnings.append(("whiteHandicapBonus", f"whiteHandicapBonus {bonus} is not applied: komi is used as given"))

    turns_wanted = obj.get("analyzeTurns", [len(moves)])
    if not isinstance(turns_wanted, list) or not turns_wanted:
        raise QueryError(f"analyzeTurns must be a non-empty list of turn numbers, got {turns_wanted!r}", "analyzeTurns")
    for t in turns_wanted:
        if not _is_int(t) or not 0 <= t <= len(moves):
            raise QueryError(f"analyzeTurns: turn {t!r} is not in 0..{len(moves)} (the moves given)", "analyzeTurns")
    priority = obj.get("priority", 0)
    if not _is_int(priority):
        raise QueryError(f"priority must be an integer, got {priority!r}", "priority")
    priorities = obj.get("priorities", [priority] * len(turns_wanted))
    if not isinstance(priorities, list) or len(priorities) != len(turns_wanted) or not all(map(_is_int, priorities)):
        raise QueryError("priorities must be a list of integers as long as analyzeTurns", "priorities")

    settings = defaults
    if "maxVisits" in obj:
        settings = dataclasses.replace(settings, max_visits=_max_visits(obj["maxVisits"], "maxVisits"))
    if "reportDuringSearchEvery" in obj:
        every = _number(obj["reportDuringSearchEvery"], "reportDuringSearchEvery")
        if every <= 0:
            raise QueryError(f"reportDuringSearchEvery must be > 0 seconds, got {every!r}", "reportDuringSearchEvery")
        settings = dataclasses.replace(settings, report_every=every)
    settings = dataclasses.replace(
        settings,
        ownership=_bool(obj, "includeOwnership"),
        moves_ownership=_bool(obj, "includeMovesOwnership"),
        policy=_bool(obj, "includePolicy"),
        pv_visits=_bool(obj, "includePVVisits"),
    )
    if "overrideSettings" in obj:
        settings, more = parse_override(obj["overrideSettings"], base=settings)
        warnings += more

    # Replay: positions[t] is the position before moves[t].
    start_key = (komi, tuple(sorted(black)), tuple(sorted(white)), first)
    positions = _cached_prefix(cache, start_key, moves)
    if not positions:
        positions = [_start(rules, komi, black, white, first)]
    position = positions[-1]
    for i, (colour, action) in enumerate(moves[len(positions) - 1 :], start=len(positions) - 1):
        position = to_move(rules, position, colour, komi)
        state = position.state
        label = f"{'B' if colour == 1 else 'W'} {go.to_gtp(rules, action)}"
        if bool(state.terminated):
            raise QueryError(
                f"Illegal move at turn {i}: {label}: the game had ended (two passes or the move cap)", "moves"
            )
        if not bool(state.legal[action]):
            board = np.asarray(state.board)
            why = "the point is occupied" if action < rules.num_points and board[action] else "suicide or superko"
            raise QueryError(f"Illegal move at turn {i}: {label}: {why}", "moves")
        position = dataclasses.replace(position, state=go.play(rules, state, action), moves=position.moves + (action,))
        positions.append(position)
        if cache is not None:
            if len(cache) >= _CACHE_LIMIT:
                cache.clear()
            cache[(start_key, tuple(moves[: i + 1]))] = positions[: i + 2]

    turns = []
    seen = set()
    for t, p in zip(turns_wanted, priorities):
        if t in seen:
            continue
        seen.add(t)
        position = positions[t]
        if t < len(moves):
            position = to_move(rules, position, moves[t][0], komi)  # the player of the next move is to move
        colour = int(position.state.to_play)
        allowed = None
        for field in ("avoidMoves", "allowMoves"):
            mask, more = _root_mask(rules, obj, field, colour)
            if len(turns) == 0:
                warnings += more
            if mask is not None:
                allowed = mask if allowed is None else allowed & mask
        if allowed is not None and not bool(position.state.terminated):
            if not np.any(allowed & np.asarray(position.state.legal)):
                raise QueryError(f"avoidMoves/allowMoves leave no legal move at turn {t}", "avoidMoves")
        turns.append(Turn(number=int(t), position=position, priority=int(p), allowed=allowed))
    return Query(id=query_id, turns=tuple(turns), settings=settings, komi=komi, warnings=tuple(warnings))
