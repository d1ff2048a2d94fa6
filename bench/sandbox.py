"""What the sandbox costs: starting an agent process, and a match's decisions.

    python bench/sandbox.py [--starts 30] [--matches 40]

(1) Starts, handshakes and stops the bundled ``greedy`` agent ``--starts`` times, in the
sandbox and as a plain process, and prints the mean time of each (the sandbox adds the
folder copy, the launcher and its namespaces). (2) Plays ``--matches`` matches of greedy
against random, one at a time, each way, and prints the mean decision latency: once a
process runs, the sandbox should cost nothing per decision. Ratios are from one run.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import trio

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from arena.agents import resolve  # noqa: E402
from arena.duel import duel  # noqa: E402
from arena.game import get_variant  # noqa: E402
from arena.process import open_agent  # noqa: E402
from arena.protocol import PROTOCOL_VERSION, Hello, TimeControl  # noqa: E402
from arena.sandbox import Policy, Sandbox, probe  # noqa: E402


async def starts(sandbox: Sandbox, n: int) -> list[float]:
    m = resolve("greedy")
    hello = Hello(protocol=PROTOCOL_VERSION, variant={}, time_control={}, seed=1)
    out = []
    for _ in range(n):
        t0 = time.perf_counter()
        with sandbox.launch(m) as launch:
            async with open_agent(launch, hello) as agent:
                await agent.ping()
        out.append(time.perf_counter() - t0)
    return out


async def matches(sandbox: Sandbox, n: int) -> list[float]:
    pair = [resolve("greedy"), resolve("random")]
    tc = TimeControl(move_ms=1000, bank_ms=0, first_move_ms=5000, grace_ms=200)
    lat = []
    for k in range(n):
        rec = await duel(pair, k, get_variant("sixty-six"), tc, sandbox=sandbox)
        lat += rec.latency_ms[0] + rec.latency_ms[1]
    return lat


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--starts", type=int, default=30)
    ap.add_argument("--matches", type=int, default=40)
    args = ap.parse_args()
    caps = probe()
    print(f"sandbox here: network {caps.network or 'off'}, own uid {'on' if caps.own_uid else 'off'}")
    res = {}
    for label, enabled in (("sandboxed", True), ("plain", False)):
        with Sandbox(Policy(enabled=enabled), warn=lambda s: None) as sb:
            s = trio.run(starts, sb, args.starts)
            d = trio.run(matches, sb, args.matches)
        res[label] = (statistics.fmean(s) * 1000, statistics.fmean(d), statistics.median(d))
        print(f"{label:>9}: start+handshake+stop {res[label][0]:.1f} ms; decision latency mean "
              f"{res[label][1]:.3f} ms, median {res[label][2]:.3f} ms ({len(d)} decisions)")  # fmt: skip
    a, b = res["sandboxed"], res["plain"]
    print(f"sandboxed / plain: start {a[0] / b[0]:.2f}x, decision mean {a[1] / b[1]:.2f}x, median {a[2] / b[2]:.2f}x")


if __name__ == "__main__":
    main()
