"""The expert agent: `ExpertStrategy`, and `TableExpert` at a table, over the protocol (`arena.sdk.run`).

The expert wants more than the observation and the legal actions: each request's
``time_left_ms``, and the variant and time control from ``hello``, for it searches
anytime (``budget="time"``: a fixed number of worlds, then more while 40% of
min(move_ms, time_left_ms) lasts), its worlds weighted by how likely the opponent's lead
on the table is in each (``infer=True``, since 2.1.0), under a model of leading by value
(``lead_model="value"``, since 2.2.0: `arena.bots.inference`). In the three- and
four-handed forms (since 2.3.0) it is `arena.bots.table_expert.TableExpert`: the same
kind of search over the card play and (since 2.4.0) the bids. In three-sitout (since
2.5.0) each deal is a two-handed Sixty-Six hand between two of the three, which the
two-handed search plays as it plays any deal. Since 2.6.0 its two-handed search runs
its playouts and exact solves in C where the package's kernels are built (`pip install`
with a C compiler; otherwise in Python, the same moves, slower), so it searches more
worlds in the same time; since 2.7.0 its playouts look two levels ahead where the kernel
is built (each card of either seat chosen by playing out its candidates:
`arena.bots.fast_playout`) once the move's budget affords it: since 2.8.0,
``DEEP_PLAYOUTS`` such playouts (Schnapsen from an 82 ms move, Sixty-Six from 187 ms;
2.7.0: 520 ms in both); since 2.9.0, short of that, two levels pruned to the policy's
card and the best other (Sixty-Six from 82 ms); since 2.10.0, in Sixty-Six, three
levels pruned so once it affords those (from 258 ms). The SDK's ``player`` form gives
it the whole request and the match's setup. One strategy per match, seeded by ``match_start``'s
seed, so a match plays the same on any process. A bug in the search never costs the
match: the greedy choice (the heuristic's at a table; or the first legal action) is
played instead, and the traceback goes to stderr, which is the referee's log of this
agent.
"""

from __future__ import annotations

import gc
import sys
import traceback
from typing import Any

from arena.bots.expert import ExpertStrategy
from arena.bots.strategies import GreedyStrategy
from arena.bots.table_expert import TableExpert
from arena.bots.table_strategies import TableHeuristic
from arena.game import Variant, get_variant
from arena.sdk import Request, Setup, run

NAME = "expert"
VERSION = "2.10.0"
#: The two-handed search's playouts look ahead with the best lookahead whose playouts the
#: move's budget affords this many of (`ExpertStrategy.deep_playouts`, since 2.8.0).
DEEP_PLAYOUTS = 450.0
#: The games it plays (its manifest's ``variants``): all of them.
GAMES = ["sixty-six", "schnapsen", "three-pagat", "three-cutthroat", "three-sitout", "four-pagat", "kreuzmariage",
         "four-bidding"]


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
    move_ms = move_ms if isinstance(move_ms, int) and move_ms > 0 else None
    variant = _variant(setup.variant)
    if variant is not None and variant.is_table:
        strategy = TableExpert(setup.seed, variant=variant, move_ms=move_ms, budget="time")
        fallback = TableHeuristic(0)
    else:  # the two-handed games, and three-sitout's two-handed deals
        strategy = ExpertStrategy(
            setup.seed, variant=variant, move_ms=move_ms, budget="time", infer=True, lead_model="value"
        )
        strategy.deep_playouts = DEEP_PLAYOUTS
        fallback = GreedyStrategy(0)

    def act(request: Request) -> str:
        try:
            action = strategy.choose(request.observation, request.legal, request.time_left_ms)
        except Exception:
            print(f"{NAME}: error on request {request.id}:\n{traceback.format_exc()}", file=sys.stderr)
            try:
                action = fallback(request.observation, request.legal)
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
    return run(player=player, name=NAME, version=VERSION, games=GAMES)


if __name__ == "__main__":
    raise SystemExit(main())
