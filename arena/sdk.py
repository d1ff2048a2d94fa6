"""Write a Python agent as one function: (observation, legal actions) -> action.

    from arena.sdk import run

    def choose(observation, legal):
        return legal[0]

    if __name__ == "__main__":
        run(choose, name="first", version="1.0")

`run` speaks the protocol on stdin/stdout (see ``protocol/SPEC.md``): it answers
``hello`` with ``ready``, every ``request`` with ``choose``'s action, ``ping`` with
``pong``, and returns on ``quit`` or end of input. For a seeded agent pass ``factory=``
instead: a callable taking a seed and returning a choose function (the built-in
strategies are such classes). It is called once per match with that match's seed from
``match_start``, so each match gets a fresh, reproducible player however matches are
interleaved on the process. ``on_message`` sees every other message (match and deal
start and end) for agents that learn. ``capacity`` is how many requests the referee may
send before the first is answered; they are answered in order, one at a time, so a
capacity above 1 saves wake-ups but the queued requests' clocks are running.
Anything written to stderr lands in the referee's log of this agent.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any, BinaryIO

from .protocol import (
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

Choose = Callable[[dict[str, Any], list[str]], str]


def run(
    choose: Choose | None = None,
    *,
    name: str,
    version: str = "0",
    factory: Callable[[int], Choose] | None = None,
    capacity: int = 1,
    on_message: Callable[[Any], None] | None = None,
    stdin: BinaryIO | None = None,
    stdout: BinaryIO | None = None,
) -> int:
    """Serve the protocol until ``quit`` or end of input; returns the exit status."""
    if (choose is None) == (factory is None):
        raise TypeError("give exactly one of choose and factory")
    inp = stdin or sys.stdin.buffer
    out = stdout or sys.stdout.buffer
    per_match: dict[str, Choose] = {}
    for raw in inp:
        try:
            msg = decode_referee_line(raw)
        except AgentProtocolError as e:
            print(f"{name}: bad line from the referee: {e}", file=sys.stderr)
            return 2
        if isinstance(msg, Request):
            action = per_match.get(msg.match_id, choose)(msg.observation, msg.legal)
            out.write(encode(Answer(id=msg.id, action=action)))
            out.flush()
        elif isinstance(msg, Ping):
            out.write(encode(Pong(id=msg.id)))
            out.flush()
        elif isinstance(msg, Hello):
            if msg.protocol != PROTOCOL_VERSION:
                print(
                    f"{name}: the referee speaks protocol version {msg.protocol}; this agent speaks {PROTOCOL_VERSION}",
                    file=sys.stderr,
                )
                return 2
            if factory is not None:
                choose = factory(msg.seed)
            out.write(encode(Ready(protocol=PROTOCOL_VERSION, name=name, version=version, capacity=capacity)))
            out.flush()
        elif isinstance(msg, Quit):
            return 0
        else:
            if factory is not None:
                if isinstance(msg, MatchStart):
                    per_match[msg.match_id] = factory(msg.seed)
                    if len(per_match) > 4096:  # matches forfeited by us get no match_end
                        del per_match[next(iter(per_match))]
                elif isinstance(msg, MatchEnd):
                    per_match.pop(msg.match_id, None)
            if on_message is not None:
                on_message(msg)
    return 0
