"""The greedy agent: `arena.bots.strategies.GreedyStrategy` over the protocol."""

from arena.bots.strategies import GreedyStrategy
from arena.sdk import run

if __name__ == "__main__":
    raise SystemExit(run(factory=GreedyStrategy, name="greedy", version="1.0.0", capacity=16))
