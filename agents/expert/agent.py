"""The expert agent: `arena.search.ExpertStrategy` over the protocol.

`arena.sdk.run` hands a choose function only the observation and the legal actions; the
expert also wants each request's ``time_left_ms`` and the variant and time control from
``hello``, so this is the SDK's loop with those passed through. One strategy per match,
seeded by ``match_start``'s seed, so a match plays the same on any process.
"""

from __future__ import annotations

import gc
import sys
import traceback
from typing import Any, BinaryIO

from arena.game import Variant, get_variant
from arena.protocol import (
    PROTOCOL_VERSION,
    AgentProtocolError,
    Answer,
    Hello,
    MatchEnd,
    MatchStart,
    Ping,
    Pong,
    Quit,
    Ready,
    Request,
    decode_referee_line,
    encode,
)
from arena.search import ExpertStrategy
from arena.strategies import GreedyStrategy

NAME = "expert"
VERSION = "1.0.0"


def _variant(data: dict[str, Any]) -> Variant | None:
    try:
        return Variant.from_dict(data)
    except Exception:  # a flag this engine does not know: fall back to the named preset
        try:
            return get_variant(data.get("name"))
        except Exception:
            return None


def main(stdin: BinaryIO | None = None, stdout: BinaryIO | None = None) -> int:
    inp = stdin or sys.stdin.buffer
    out = stdout or sys.stdout.buffer
    variant: Variant | None = None
    move_ms: int | None = None
    seed = 0
    per_match: dict[str, ExpertStrategy] = {}

    def strategy(match_id: str) -> ExpertStrategy:
        s = per_match.get(match_id)
        if s is None:  # no match_start seen (a lone request): the hello seed
            s = per_match[match_id] = ExpertStrategy(seed, variant=variant, move_ms=move_ms)
        return s

    for raw in inp:
        try:
            msg = decode_referee_line(raw)
        except AgentProtocolError as e:
            print(f"{NAME}: bad line from the referee: {e}", file=sys.stderr)
            return 2
        if isinstance(msg, Request):
            try:
                action = strategy(msg.match_id).choose(msg.observation, msg.legal, msg.time_left_ms)
            except Exception:
                print(f"{NAME}: error on request {msg.id}:\n{traceback.format_exc()}", file=sys.stderr)
                try:
                    action = GreedyStrategy(0)(msg.observation, msg.legal)
                except Exception:
                    action = msg.legal[0]
            if action not in msg.legal:
                print(f"{NAME}: chose {action!r}, not legal; playing {msg.legal[0]}", file=sys.stderr)
                action = msg.legal[0]
            out.write(encode(Answer(id=msg.id, action=action)))
            out.flush()
        elif isinstance(msg, Ping):
            out.write(encode(Pong(id=msg.id)))
            out.flush()
        elif isinstance(msg, Hello):
            if msg.protocol != PROTOCOL_VERSION:
                print(
                    f"{NAME}: the referee speaks protocol version {msg.protocol}; this agent speaks {PROTOCOL_VERSION}",
                    file=sys.stderr,
                )
                return 2
            variant = _variant(msg.variant)
            tc = msg.time_control
            move_ms = tc.get("move_ms") if isinstance(tc.get("move_ms"), int) and tc.get("move_ms") > 0 else None
            seed = msg.seed
            gc.collect()
            gc.freeze()  # what is loaded now is never garbage: keep the collector's passes short
            out.write(encode(Ready(protocol=PROTOCOL_VERSION, name=NAME, version=VERSION, capacity=1)))
            out.flush()
        elif isinstance(msg, Quit):
            return 0
        elif isinstance(msg, MatchStart):
            per_match[msg.match_id] = ExpertStrategy(msg.seed, variant=variant, move_ms=move_ms)
            if len(per_match) > 4096:  # matches forfeited by us get no match_end
                del per_match[next(iter(per_match))]
        elif isinstance(msg, MatchEnd):
            per_match.pop(msg.match_id, None)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
