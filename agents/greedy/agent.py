"""The greedy agent: `arena.strategies.GreedyStrategy` over the protocol."""

from arena.sdk import run
from arena.strategies import GreedyStrategy

if __name__ == "__main__":
    raise SystemExit(run(factory=GreedyStrategy, name="greedy", version="1.0.0", capacity=16))
