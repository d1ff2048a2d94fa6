"""The random agent: a uniformly random legal action, from the seed the referee gives."""

from arena.bots.strategies import RandomStrategy
from arena.game import ALL_PRESETS
from arena.sdk import run

if __name__ == "__main__":
    # every game: uniform play needs no rules of its own
    raise SystemExit(run(factory=RandomStrategy, name="random", version="1.0.0", capacity=16, games=list(ALL_PRESETS)))
