"""Write a Python agent as one function: (observation, legal actions) -> action.

    from arena.sdk import run

    def choose(observation, legal):
        return legal[0]

    if __name__ == "__main__":
        run(choose, name="first", version="1.0")

`run` speaks the protocol on stdin/stdout (see ``protocol/SPEC.md``): it answers
``hello`` with ``ready``, every ``request`` with ``choose``'s action, ``ping`` with
``pong``, and returns on ``quit`` or end of input. For an agent that needs the seed the
referee gives it, pass ``factory=`` instead: a callable taking the seed and returning
the choose function (the built-in strategies are such classes). ``on_message`` sees
every other message (match and deal start and end) for agents that learn.
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
    for raw in inp:
        try:
            msg = decode_referee_line(raw)
        except AgentProtocolError as e:
            print(f"{name}: bad line from the referee: {e}", file=sys.stderr)
            return 2
        if isinstance(msg, Request):
            action = choose(msg.observation, msg.legal)
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
        elif on_message is not None:
            on_message(msg)
    return 0
