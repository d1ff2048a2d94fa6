"""The greedy agent: `arena.bots.table_strategies.TableGreedy` over the protocol, in every game.

A two-handed observation (Sixty-Six, Schnapsen, and each deal of three-sitout) goes to
`arena.bots.strategies.GreedyStrategy` unchanged; a table observation to the table greedy.
"""

from arena.bots.table_strategies import TableGreedy
from arena.game import ALL_PRESETS
from arena.sdk import run

if __name__ == "__main__":
    raise SystemExit(run(factory=TableGreedy, name="greedy", version="1.0.0", capacity=16, games=list(ALL_PRESETS)))
