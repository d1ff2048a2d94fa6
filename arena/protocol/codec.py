"""The wire protocol, version 1.1: message types, encoding, decoding and validation. No I/O.

This module is the only code that knows the wire shapes (``protocol/SPEC.md`` is their
documentation; ``protocol/schema/`` their JSON Schemas). A message is one JSON object on
one UTF-8 line ending in ``\\n``. The referee uses `encode` and `decode_agent_line`;
a Python agent (`arena.sdk`) uses `encode` and `decode_referee_line`. `LineSplitter`
cuts a byte stream into lines and enforces the maximum line length.

Errors are typed by whose fault they are, as in h11: `AgentProtocolError` means the peer
sent something wrong (its ``code`` is the fault recorded against it); `ValueError` from
the constructors means our own misuse.
"""

from __future__ import annotations

import dataclasses
import json
import math
from typing import Any

from ..game.variant import ALL_PRESETS

try:
    import orjson
except ImportError:  # a sandboxed agent may see only the arena package and the standard library
    orjson = None

PROTOCOL_VERSION = 1
#: Minor revisions only add fields (an agent ignores what it does not know), so agents of
#: any minor revision of version 1 keep working; ``hello`` says which one the referee speaks.
#: 1: the observation's ``hand_sizes`` and ``out_of_play``, the manifest's ``variants``.
#: 2: ``hello.protocols``, the versions the referee offers (version negotiation).
PROTOCOL_MINOR = 2
#: Version 2 seats three or four agents at a table (the three- and four-handed games).
#: Everything a version-1 agent sees in a two-handed game is unchanged; a version-2 agent
#: gets the same messages with the fields of version 2 added (who sits where, the complete
#: rules, the match's result), in every game.
TABLE_VERSION = 2
#: The versions this referee speaks.
PROTOCOL_VERSIONS = (1, 2)
#: What a version-1 agent plays (its ``ready`` has no ``games``): the two-handed games.
TWO_HANDED_GAMES = ("sixty-six", "schnapsen")
#: Longest line an agent may send, in bytes, newline excluded. Answers are tiny; the
#: bound keeps a runaway agent from filling the referee's memory.
MAX_AGENT_LINE = 64 * 1024
#: Longest line the referee sends (an observation late in a deal is about 3 KB).
MAX_REFEREE_LINE = 1024 * 1024

#: Fault codes recorded against an agent (see SPEC.md, "Faults").
FAULTS = (
    "crash",  # the process exited or closed its stdout
    "handshake",  # no valid ready in time: bad line, wrong version, early exit
    "timeout",  # no answer within the time left plus the grace
    "malformed",  # a line that is not a valid message
    "oversized",  # a line longer than MAX_AGENT_LINE
    "unknown-id",  # an answer to a request that is not outstanding
    "illegal-action",  # an action that is not in the request's legal list
)


class AgentProtocolError(Exception):
    """The agent broke the protocol. ``code`` is one of `FAULTS`."""

    def __init__(self, code: str, message: str):
        super().__init__(message)
        self.code = code


# -- messages: referee -> agent -------------------------------------------------------------
_FROZEN = dict(frozen=True, slots=True, kw_only=True)


@dataclasses.dataclass(**_FROZEN)
class TimeControl:
    """Kaggle-style clock: ``move_ms`` per decision, an overage ``bank_ms`` for the match,
    ``first_move_ms`` instead of ``move_ms`` for a seat's first decision of a match, and a
    ``grace_ms`` the referee adds for pipe and scheduling delays (not sent as time left).
    ``clock`` is ``"wall"`` or ``"cpu"`` (the agent's CPU time is charged instead)."""

    move_ms: int = 1000
    bank_ms: int = 10_000
    first_move_ms: int = 5000
    grace_ms: int = 200
    clock: str = "wall"

    def __post_init__(self) -> None:
        for f in ("move_ms", "bank_ms", "first_move_ms", "grace_ms"):
            v = getattr(self, f)
            if type(v) is not int or v < 0:
                raise ValueError(f"time control {f!r} must be a non-negative integer of ms, got {v!r}")
        if self.clock not in ("wall", "cpu"):
            raise ValueError(f"time control 'clock' must be 'wall' or 'cpu', got {self.clock!r}")

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


@dataclasses.dataclass(**_FROZEN)
class Hello:
    protocol: int
    protocol_minor: int = PROTOCOL_MINOR  # absent from a revision-0 referee's hello: read as 0
    variant: dict[str, Any]
    time_control: dict[str, Any]
    seed: int
    #: The versions the referee offers for this game (1.2 on; absent: ``[protocol]``).
    protocols: list[int] | None = None
    type: str = "hello"

    @classmethod
    def for_game(cls, variant: dict[str, Any], time_control: dict[str, Any], seed: int) -> Hello:
        """The ``hello`` of a process that will play ``variant`` (its `to_dict`): version 1,
        with 2 on offer, for a two-handed game (so a version-1 agent plays it unchanged);
        version 2 alone for a game of more seats."""
        if variant.get("players", 2) == 2 and variant.get("form", "two_handed") == "two_handed":
            return cls(protocol=1, variant=variant, time_control=time_control, seed=seed, protocols=[1, 2])
        return cls(protocol=2, protocol_minor=0, variant=variant, time_control=time_control, seed=seed,
                   protocols=[TABLE_VERSION])  # fmt: skip


@dataclasses.dataclass(**_FROZEN)
class MatchStart:
    match_id: str
    seat: int
    opponent: str  # version 1: the other seat's name (version 2: the left-hand neighbour's)
    seed: int  # this seat's seed for this match: derived, reveals nothing of the deals
    # Version 2 only (None: not sent):
    players: list[dict[str, Any]] | None = None  # every seat: {"seat", "name", "team"}
    partners: list[int] | None = None
    opponents: list[int] | None = None
    variant: dict[str, Any] | None = None  # the complete rules of the match
    type: str = "match_start"


@dataclasses.dataclass(**_FROZEN)
class DealStart:
    match_id: str
    deal: int
    dealer: int
    score: list[int]
    #: Version 2 only: the match seats that play this deal, in the deal's seat order
    #: (everyone but the dealer in three-handed dealer-sits-out; else every seat).
    seats: list[int] | None = None
    type: str = "deal_start"


@dataclasses.dataclass(**_FROZEN)
class Request:
    id: int
    match_id: str
    seat: int
    observation: dict[str, Any]
    legal: list[str]
    time_left_ms: int
    type: str = "request"


@dataclasses.dataclass(**_FROZEN)
class DealEnd:
    match_id: str
    deal: int
    result: dict[str, Any]
    score: list[int]
    type: str = "deal_end"


@dataclasses.dataclass(**_FROZEN)
class MatchEnd:
    match_id: str
    winner: int | None
    score: list[int]
    reason: str
    #: Version 2 only: {"kind": "winner" | "team" | "order", "winner", "places"}.
    result: dict[str, Any] | None = None
    type: str = "match_end"


@dataclasses.dataclass(**_FROZEN)
class Ping:
    id: int
    type: str = "ping"


@dataclasses.dataclass(**_FROZEN)
class Quit:
    type: str = "quit"


# -- messages: agent -> referee -------------------------------------------------------------
@dataclasses.dataclass(**_FROZEN)
class Ready:
    protocol: int
    name: str
    version: str
    capacity: int = 1
    #: Version 2: the games the agent plays, by preset name (None: the two-handed games).
    games: list[str] | None = None
    type: str = "ready"

    def plays(self, variant: dict[str, Any]) -> bool:
        """Whether this agent said it plays ``variant`` (a `Variant.to_dict`): a game it
        named, or a variant of one (the same form and number of players)."""
        games = self.games if self.games is not None else TWO_HANDED_GAMES
        if self.protocol < TABLE_VERSION and variant.get("players", 2) != 2:
            return False
        return _game_key(variant) in {_PRESET_KEYS.get(g) for g in games}


def _game_key(variant: dict[str, Any]) -> tuple[str, int]:
    return variant.get("form", "two_handed"), variant.get("players", 2)


#: The game (form, players) of each preset name an agent may put in ``ready.games``.
_PRESET_KEYS = {name: _game_key(v.to_dict()) for name, v in ALL_PRESETS.items()}


@dataclasses.dataclass(**_FROZEN)
class Answer:
    id: int
    action: str
    type: str = "action"


@dataclasses.dataclass(**_FROZEN)
class Pong:
    id: int
    type: str = "pong"


RefereeMessage = Hello | MatchStart | DealStart | Request | DealEnd | MatchEnd | Ping | Quit
AgentMessage = Ready | Answer | Pong


def _type_of(cls: type) -> str:
    return next(f.default for f in dataclasses.fields(cls) if f.name == "type")


_REFEREE_TYPES = {_type_of(c): c for c in (Hello, MatchStart, DealStart, Request, DealEnd, MatchEnd, Ping, Quit)}
_AGENT_TYPES = {"ready": Ready, "action": Answer, "pong": Pong}
#: Each message class's fields but ``type``, in order (``type`` goes first on the wire),
#: and with their defaults: looked up once, not per line.
_FIELDS = {
    cls: tuple((f.name, f.default) for f in dataclasses.fields(cls) if f.name != "type")
    for cls in (*_REFEREE_TYPES.values(), *_AGENT_TYPES.values())
}

# The wire is encoded and decoded by orjson (compact, UTF-8, several times as fast as the
# standard library's json), or by the standard library where orjson cannot be imported.
# Where the two differ, the standard library's behaviour is kept: it encodes what orjson
# cannot (integers beyond 64 bits, keys that are not strings), and a float that is not
# finite is refused (orjson would write ``null``). Decoding, orjson reads an integer
# beyond 64 bits as a float (no field of the protocol holds one: ids and seeds fit).
_dumps = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode
_NEWLINE = orjson.OPT_APPEND_NEWLINE if orjson else 0


def _finite(x: Any) -> bool:
    """Whether no float in ``x`` is NaN or infinite (only asked when ``x`` holds a float)."""
    if type(x) is float:
        return math.isfinite(x)
    if type(x) is dict:
        return all(_finite(v) for v in x.values())
    if type(x) is list or type(x) is tuple:
        return all(_finite(v) for v in x)
    return True


def _line(d: dict[str, Any], floats: bool = True) -> bytes:
    if orjson is None:
        return (_dumps(d) + "\n").encode()
    try:
        data = orjson.dumps(d, option=_NEWLINE)
    except TypeError:  # orjson.JSONEncodeError: what orjson does not encode
        return (_dumps(d) + "\n").encode()
    if floats and b"null" in data and not _finite(d):  # a non-finite float became null (or a null was sent)
        raise ValueError("Out of range float values are not JSON compliant")
    return data


def encode(msg: RefereeMessage | AgentMessage) -> bytes:
    """One message as one line of UTF-8 JSON, newline included."""
    if type(msg) is Request:  # the hot path: no dataclasses.asdict deep copy
        d = {
            "type": "request",
            "id": msg.id,
            "match_id": msg.match_id,
            "seat": msg.seat,
            "observation": msg.observation,
            "legal": msg.legal,
            "time_left_ms": msg.time_left_ms,
        }
        return _line(d, floats=False)  # an observation holds no float (ints, strings, lists, null)
    else:
        d = {"type": msg.type}
        for name, _ in _FIELDS[type(msg)]:
            value = getattr(msg, name)
            if value is None and name in _OPTIONAL:
                continue  # a field of a later version, not sent to this agent
            d[name] = value
    return _line(d)


#: Fields sent only when set: those a version-1 agent never sees, and ``hello.protocols``.
_OPTIONAL = frozenset({"protocols", "players", "partners", "opponents", "variant", "seats", "result", "games"})


def _is_int(x: Any) -> bool:
    return type(x) is int


def _no_constant(name: str) -> Any:
    """``NaN``, ``Infinity`` and ``-Infinity`` are not JSON (RFC 8259): Python's decoder
    accepts them unless told otherwise."""
    raise ValueError(f"{name} is not a JSON value")


def _load(line: bytes | str) -> dict[str, Any]:
    if orjson is None:
        return _load_slow(line)
    try:
        obj = orjson.loads(line)
    except (orjson.JSONDecodeError, TypeError):
        obj = _refuse(line)  # raises, in the standard library's words where it has some
    if type(obj) is not dict:
        raise AgentProtocolError("malformed", f"line is not a JSON object: {_clip(_text(line))}")
    return obj


def _text(line: bytes | str) -> str:
    if isinstance(line, bytes | bytearray | memoryview):
        return bytes(line).decode("utf-8", "replace").rstrip("\r\n")
    return line.rstrip("\r\n")


def _refuse(line: bytes | str) -> dict[str, Any]:
    """The error for a line orjson refused, with the standard library's message where it
    has one (a line orjson refuses is refused even where the standard library would have
    taken it: a number beyond a double's range, an unpaired surrogate escape)."""
    _load_slow(line)
    try:
        orjson.loads(line)
    except (orjson.JSONDecodeError, TypeError) as e:
        raise AgentProtocolError("malformed", f"line is not JSON ({e}): {_clip(_text(line))}") from None
    raise AssertionError("unreachable")


def _load_slow(line: bytes | str) -> dict[str, Any]:
    """The standard library's parse (the codec's before orjson): for error messages."""
    if isinstance(line, bytes | bytearray | memoryview):
        line = bytes(line)
        try:
            line = line.decode("utf-8")
        except UnicodeDecodeError as e:
            raise AgentProtocolError("malformed", f"line is not valid UTF-8 ({e.reason} at byte {e.start})") from None
    line = line.rstrip("\r\n")
    try:
        obj = json.loads(line, parse_constant=_no_constant)
    except (ValueError, RecursionError) as e:
        raise AgentProtocolError("malformed", f"line is not JSON ({e}): {_clip(line)}") from None
    if not isinstance(obj, dict):
        raise AgentProtocolError("malformed", f"line is not a JSON object: {_clip(line)}")
    return obj


def _clip(text: str, n: int = 80) -> str:
    return repr(text if len(text) <= n else text[:n] + "...")


def decode_agent_line(line: bytes | str) -> AgentMessage:
    """Parse and validate one line from an agent; `AgentProtocolError` ("malformed") if
    it is not exactly a ``ready``, ``action`` or ``pong`` message. Unknown fields are
    ignored (forward compatibility)."""
    obj = _load(line)
    kind = obj.get("type")
    if kind == "action":
        rid, action = obj.get("id"), obj.get("action")
        if not _is_int(rid) or not isinstance(action, str):
            raise AgentProtocolError(
                "malformed", f"action message needs an integer 'id' and a string 'action', got {_clip(str(obj))}"
            )
        return Answer(id=rid, action=action)
    if kind == "pong":
        if not _is_int(obj.get("id")):
            raise AgentProtocolError("malformed", "pong message needs an integer 'id'")
        return Pong(id=obj["id"])
    if kind == "ready":
        protocol, name, version = obj.get("protocol"), obj.get("name"), obj.get("version")
        capacity = obj.get("capacity", 1)
        if not _is_int(protocol):
            raise AgentProtocolError("malformed", "ready message needs an integer 'protocol'")
        if not isinstance(name, str) or not 1 <= len(name) <= 64:
            raise AgentProtocolError("malformed", "ready message needs a 'name' string of 1..64 characters")
        if not isinstance(version, str) or len(version) > 64:
            raise AgentProtocolError("malformed", "ready message needs a 'version' string of at most 64 characters")
        if not _is_int(capacity) or not 1 <= capacity <= 4096:
            raise AgentProtocolError("malformed", f"ready 'capacity' must be an integer 1..4096, got {capacity!r}")
        games = obj.get("games")
        if games is not None and not (
            type(games) is list and len(games) <= 64 and all(isinstance(g, str) and 0 < len(g) <= 64 for g in games)
        ):
            raise AgentProtocolError("malformed", f"ready 'games' must be a list of game names: {_clip(str(games))}")
        return Ready(protocol=protocol, name=name, version=version, capacity=capacity, games=games)
    raise AgentProtocolError(
        "malformed", f"unknown message type {kind!r} (expected ready, action or pong): {_clip(str(obj))}"
    )


def decode_referee_line(line: bytes | str) -> RefereeMessage:
    """Parse one line from the referee (the agent side; used by `arena.sdk`).

    Raises `AgentProtocolError` (here it means the *referee's* line was bad) for a line
    that is not a known message with its fields. A field added by a minor revision may be
    absent (an older referee): ``hello.protocol_minor`` then reads as 0.
    """
    obj = _load(line)
    cls = _REFEREE_TYPES.get(obj.get("type"))
    if cls is None:
        raise AgentProtocolError("malformed", f"unknown message type {obj.get('type')!r}")
    fields = _FIELDS[cls]
    missing = [name for name, default in fields if name not in obj and default is dataclasses.MISSING]
    if missing:
        raise AgentProtocolError("malformed", f"{_type_of(cls)} message lacks {', '.join(missing)}")
    return cls(**{name: obj[name] if name in obj else _ADDED.get(name, default) for name, default in fields})


#: The value a field added by a minor revision has when it is absent.
_ADDED = {"protocol_minor": 0}  # and every field of `_OPTIONAL`: None


class LineSplitter:
    """Cut a byte stream into lines (h11 style: feed bytes, take complete lines).

    `feed` returns the complete lines (without the newline; a trailing ``\\r`` is
    stripped). A line longer than ``max_line`` raises `AgentProtocolError` ("oversized")
    as soon as it is known to be too long, without buffering the rest of it.
    """

    def __init__(self, max_line: int = MAX_AGENT_LINE):
        self.max_line = max_line
        self._buf = bytearray()

    def feed(self, data: bytes) -> list[bytes]:
        buf = self._buf
        if not buf and data.endswith(b"\n") and data.count(b"\n") == 1:
            # the common case, one whole line in one read: no copy into the buffer
            if len(data) > self.max_line + 1:
                raise AgentProtocolError("oversized", f"line of {len(data) - 1} bytes, longer than {self.max_line}")
            return [data[:-2] if data.endswith(b"\r\n") else data[:-1]]
        buf += data
        if b"\n" not in data:
            if len(buf) > self.max_line:
                raise AgentProtocolError("oversized", f"line longer than {self.max_line} bytes")
            return []
        lines = buf.split(b"\n")
        self._buf = bytearray(lines.pop())
        out = []
        for line in lines:
            if len(line) > self.max_line:
                raise AgentProtocolError("oversized", f"line of {len(line)} bytes, longer than {self.max_line}")
            out.append(bytes(line[:-1]) if line.endswith(b"\r") else bytes(line))
        if len(self._buf) > self.max_line:
            raise AgentProtocolError("oversized", f"line longer than {self.max_line} bytes")
        return out

    @property
    def pending(self) -> int:
        """Bytes of an unfinished line held back (a line cut by EOF)."""
        return len(self._buf)
