"""Referee throughput over real pipes, against the round trip of a trivial echo agent.

    python bench/protocol.py [--matches N] [--pings N]

Measures, in one run: (1) the round-trip rate of ping/pong with the echo agent
(bench/echo), the floor any decision pays; (2) decisions per second in whole matches
between two Python random agents (agents/random) over pipes, on the same two processes,
with the full referee path (observation, encoding, the agent's decoding and choice,
checking, applying): first one match at a time (every decision waits for the last), then
four matches in flight (each agent still answers one request at a time, but both agents
and the referee work at once). Prints each rate and its ratio to the echo rate.
"""

from __future__ import annotations

import argparse
import sys
import time
from contextlib import AsyncExitStack
from pathlib import Path

import trio

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from arena.game import get_variant  # noqa: E402
from arena.play.referee import play_match  # noqa: E402
from arena.protocol.codec import PROTOCOL_VERSION, Hello, TimeControl  # noqa: E402
from arena.runtime.agents import load_manifest, resolve  # noqa: E402
from arena.runtime.process import open_agent  # noqa: E402

TC = TimeControl()


def hello(seed: int, variant: str = "sixty-six") -> Hello:
    return Hello(
        protocol=PROTOCOL_VERSION, variant=get_variant(variant).to_dict(), time_control=TC.to_dict(), seed=seed
    )


async def echo_rate(pings: int) -> float:
    async with open_agent(load_manifest(ROOT / "bench" / "echo").launch(), hello(1)) as agent:
        for _ in range(200):  # warm up
            await agent.ping()
        t0 = time.perf_counter()
        for _ in range(pings):
            await agent.ping()
        return pings / (time.perf_counter() - t0)


async def match_rate(matches: int, variant: str, in_flight: int = 1) -> tuple[float, float, int]:
    """Play ``matches`` matches on the same two agent processes, ``in_flight`` at a time
    (each process answers one request at a time; with several matches in flight both
    agents and the referee can work at once)."""
    random = resolve("random")
    decisions = 0
    async with AsyncExitStack() as stack:
        agents = [await stack.enter_async_context(open_agent(random.launch(), hello(s, variant))) for s in (1, 2)]
        limiter = trio.CapacityLimiter(in_flight)

        async def one(i: int) -> None:
            nonlocal decisions
            async with limiter:
                rec = await play_match(f"bench-{i}", i, get_variant(variant), agents, TC)
            assert rec.forfeit is None, rec.forfeit
            decisions += sum(len(d.actions) for d in rec.deals)

        t0 = time.perf_counter()
        async with trio.open_nursery() as nursery:
            for i in range(matches):
                nursery.start_soon(one, i)
        dt = time.perf_counter() - t0
    return decisions / dt, matches / dt, decisions


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--matches", type=int, default=300)
    ap.add_argument("--pings", type=int, default=20_000)
    args = ap.parse_args()
    echo = trio.run(echo_rate, args.pings)
    print(f"echo agent round trips:      {echo:>9,.0f} /s  ({1e6 / echo:.0f} us each)")
    for in_flight in (1, 4):
        for variant in ("sixty-six", "schnapsen"):
            dps, mps, n = trio.run(match_rate, args.matches, variant, in_flight)
            print(
                f"random vs random, {variant:<10} {in_flight} match{'es' * (in_flight > 1)} in flight: "
                f"{dps:>7,.0f} decisions/s ({mps:,.1f} matches/s, {n} decisions) "
                f"= {100 * dps / echo:.0f}% of the echo rate"
            )


if __name__ == "__main__":
    main()
