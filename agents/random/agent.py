"""The random agent: a uniformly random legal action, from the seed the referee gives."""

from arena.sdk import run
from arena.strategies import RandomStrategy

if __name__ == "__main__":
    raise SystemExit(run(factory=RandomStrategy, name="random", version="1.0.0", capacity=16))
