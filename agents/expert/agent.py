"""The expert agent: `arena.bots.expert.ExpertStrategy` over the protocol, by `arena.sdk.run`.

The expert wants more than the observation and the legal actions: each request's
``time_left_ms``, and the variant and time control from ``hello``, for it searches
anytime (``budget="time"``: a fixed number of worlds, then more while 40% of
min(move_ms, time_left_ms) lasts), its worlds weighted by how likely the opponent's lead
on the table is in each (``infer=True``, since 2.1.0), under a model of leading by value
(``lead_model="value"``, since 2.2.0: `arena.bots.inference`). The SDK's ``player`` form gives it
the whole request and the match's setup. One strategy per match, seeded by
``match_start``'s seed, so a match plays the same on any process. A bug in the search
never costs the match: the greedy choice (or the first legal action) is played instead,
and the traceback goes to stderr, which is the referee's log of this agent.
"""

from __future__ import annotations

import gc
import sys
import traceback
from typing import Any

from arena.bots.expert import ExpertStrategy
from arena.bots.strategies import GreedyStrategy
from arena.game import Variant, get_variant
from arena.sdk import Request, Setup, run

NAME = "expert"
VERSION = "2.2.0"


def _variant(data: dict[str, Any]) -> Variant | None:
    try:
        return Variant.from_dict(data)
    except Exception:  # a flag this engine does not know: fall back to the named preset
        try:
            return get_variant(data.get("name"))
        except Exception:
            return None


def player(setup: Setup):
    """The expert for one match, answering whole requests, never with an illegal action."""
    move_ms = setup.time_control.get("move_ms")
    strategy = ExpertStrategy(
        setup.seed,
        variant=_variant(setup.variant),
        move_ms=move_ms if isinstance(move_ms, int) and move_ms > 0 else None,
        budget="time",
        infer=True,
        lead_model="value",
    )

    def act(request: Request) -> str:
        try:
            action = strategy.choose(request.observation, request.legal, request.time_left_ms)
        except Exception:
            print(f"{NAME}: error on request {request.id}:\n{traceback.format_exc()}", file=sys.stderr)
            try:
                action = GreedyStrategy(0)(request.observation, request.legal)
            except Exception:
                action = request.legal[0]
        if action not in request.legal:
            print(f"{NAME}: chose {action!r}, not legal; playing {request.legal[0]}", file=sys.stderr)
            action = request.legal[0]
        return action

    return act


def main() -> int:
    gc.collect()
    gc.freeze()  # what is loaded now is never garbage: keep the collector's passes short
    return run(player=player, name=NAME, version=VERSION)


if __name__ == "__main__":
    raise SystemExit(main())
