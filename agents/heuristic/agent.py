"""The heuristic agent: `arena.bots.heuristic.HeuristicStrategy` over the protocol."""

from arena.bots.heuristic import HeuristicStrategy
from arena.sdk import run

if __name__ == "__main__":
    raise SystemExit(run(factory=HeuristicStrategy, name="heuristic", version="1.0.0", capacity=16))
