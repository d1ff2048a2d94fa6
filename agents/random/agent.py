"""The random agent: a uniformly random legal action, from the seed the referee gives."""

from arena.bots.strategies import RandomStrategy
from arena.sdk import run

if __name__ == "__main__":
    raise SystemExit(run(factory=RandomStrategy, name="random", version="1.0.0", capacity=16))
