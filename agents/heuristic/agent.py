"""The heuristic agent: `arena.bots.table_strategies.TableHeuristic` over the protocol, in every game.

A two-handed observation (Sixty-Six, Schnapsen, and each deal of three-sitout) goes to
`arena.bots.heuristic.HeuristicStrategy` unchanged; a table observation to the table heuristic.
"""

from arena.bots.table_strategies import TableHeuristic
from arena.game import ALL_PRESETS
from arena.sdk import run

if __name__ == "__main__":
    raise SystemExit(
        run(factory=TableHeuristic, name="heuristic", version="1.0.0", capacity=16, games=list(ALL_PRESETS))
    )
