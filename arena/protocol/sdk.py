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

A strategy that wants more than the observation and the legal actions (a searcher that
budgets its time, or plays by the variant's flags) passes ``player=`` instead: a callable
taking a `Setup` (the match's seed, and the variant and time control from ``hello``) and
returning a function of the whole `Request` (``observation``, ``legal``,
``time_left_ms``, ``id``, ``match_id``)::

    def player(setup):
        budget = setup.time_control.get("move_ms", 1000)
        return lambda request: request.legal[0]

    run(player=player, name="mine")
"""

from __future__ import annotations

import dataclasses
import sys
from collections.abc import Callable, Sequence
from typing import Any, BinaryIO

from .codec import (
    PROTOCOL_VERSIONS,
    TABLE_VERSION,
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
Player = Callable[[Request], str]


@dataclasses.dataclass(frozen=True)
class Setup:
    """What a `player` is made from: the match's seed (``match_start``; the ``hello`` seed
    for a request outside any started match) and, from ``hello``, the variant (its flags,
    as a dict) and the time control (``move_ms``, ``bank_ms``, ...)."""

    seed: int
    variant: dict[str, Any]
    time_control: dict[str, Any]
    match_id: str | None = None


def run(
    choose: Choose | None = None,
    *,
    name: str,
    version: str = "0",
    factory: Callable[[int], Choose] | None = None,
    player: Callable[[Setup], Player] | None = None,
    capacity: int = 1,
    games: Sequence[str] | None = None,
    on_message: Callable[[Any], None] | None = None,
    stdin: BinaryIO | None = None,
    stdout: BinaryIO | None = None,
) -> int:
    """Serve the protocol until ``quit`` or end of input; returns the exit status. Give
    exactly one of ``choose``, ``factory`` (seed -> choose) and ``player`` (`Setup` ->
    function of the whole request). ``games`` names the games the agent plays (default:
    the two-handed ones; `arena rules` lists them all): an agent that names a three- or
    four-handed game speaks protocol version 2, whose requests have the same shape."""
    if sum(x is not None for x in (choose, factory, player)) != 1:
        raise TypeError("give exactly one of choose, factory and player")
    if choose is not None:
        player = _seeded(lambda seed: choose)
    elif factory is not None:
        player = _seeded(factory)
    assert player is not None
    inp = stdin or sys.stdin.buffer
    out = stdout or sys.stdout.buffer
    hello: Hello | None = None
    per_match: dict[str, Player] = {}

    def player_for(match_id: str) -> Player:
        p = per_match.get(match_id)
        if p is None:  # a request outside a started match: the hello seed
            seed = hello.seed if hello is not None else 0
            p = per_match[match_id] = player(_setup(hello, seed, match_id))
        return p

    for raw in inp:
        try:
            msg = decode_referee_line(raw)
        except AgentProtocolError as e:
            print(f"{name}: bad line from the referee: {e}", file=sys.stderr)
            return 2
        if isinstance(msg, Request):
            action = player_for(msg.match_id)(msg)
            out.write(encode(Answer(id=msg.id, action=action)))
            out.flush()
        elif isinstance(msg, Ping):
            out.write(encode(Pong(id=msg.id)))
            out.flush()
        elif isinstance(msg, Hello):
            offered = msg.protocols or [msg.protocol]
            speak = max((v for v in offered if v in PROTOCOL_VERSIONS), default=None)
            if speak is None:
                print(
                    f"{name}: the referee speaks protocol version {' or '.join(map(str, offered))}; "
                    f"this agent speaks {' or '.join(map(str, PROTOCOL_VERSIONS))}",
                    file=sys.stderr,
                )
                return 2
            hello = msg
            ready = Ready(protocol=speak, name=name, version=version, capacity=capacity,
                          games=list(games) if games is not None and speak >= TABLE_VERSION else None)  # fmt: skip
            out.write(encode(ready))
            out.flush()
        elif isinstance(msg, Quit):
            return 0
        else:
            if isinstance(msg, MatchStart):
                per_match[msg.match_id] = player(_setup(hello, msg.seed, msg.match_id))
                if len(per_match) > 4096:  # matches forfeited by us get no match_end
                    del per_match[next(iter(per_match))]
            elif isinstance(msg, MatchEnd):
                per_match.pop(msg.match_id, None)
            if on_message is not None:
                on_message(msg)
    return 0


def _setup(hello: Hello | None, seed: int, match_id: str | None) -> Setup:
    if hello is None:
        return Setup(seed, {}, {}, match_id)
    return Setup(seed, dict(hello.variant), dict(hello.time_control), match_id)


def _seeded(factory: Callable[[int], Choose]) -> Callable[[Setup], Player]:
    """A choose function per match, from its seed (``factory``, or the one ``choose`` for all)."""

    def make(setup: Setup) -> Player:
        choose = factory(setup.seed)
        return lambda request: choose(request.observation, request.legal)

    return make
