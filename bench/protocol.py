"""Referee throughput over real pipes, against the pipe's own limit.

    python bench/protocol.py [--samples 3] [--seconds 2] [--levels 1,4,16,256] [--table-levels 1,16]
                             [--pings 5000]

Measures, in one run, ``--samples`` interleaved rounds of:

- **raw echo**: round trips of one line to a minimal echo child (a few lines of Python
  reading and writing its pipes), driven by Trio's process streams directly, no arena
  code: the real limit of a pipe round trip on this machine, and what one costs this
  process in CPU (Trio's wake-up and the system calls, no game in it);
- **ping**: `AgentProcess.ping` round trips with the echo agent (bench/echo): the
  arena's process layer on the same pipe;
- **decisions**: random vs random (agents/random, capacity 16) through two
  `AgentPool`s, one per seat, with 1, 4, 16 and 256 matches in flight (each a task
  playing matches back to back through `play_match`), counted over a ``--seconds``
  window after a warm-up: decisions per second, the referee's own CPU per decision
  (``time.process_time()`` of this process over the window / decisions), the agents'
  CPU per answer as the referee measured it (at 1 in flight; a round trip can be no
  shorter than the two together), and the ratio to the raw echo rate;
- **four-seat decisions**: the same with four random agents at a `four-pagat` table (four
  pools, one per seat; protocol version 2), at ``--table-levels`` matches in flight.

Prints the median of each figure with its spread (min..max over the samples), and the
agent processes each pool started at each level, which must be ceil(in flight /
capacity); the exit status is 1 if it is not.
"""

from __future__ import annotations

import argparse
import contextlib
import math
import statistics
import subprocess
import sys
import time
from pathlib import Path

import trio

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from arena.game import get_variant  # noqa: E402
from arena.play.referee import play_match  # noqa: E402
from arena.protocol.codec import Hello, TimeControl  # noqa: E402
from arena.runtime.agents import load_manifest, resolve  # noqa: E402
from arena.runtime.pool import AgentPool  # noqa: E402
from arena.runtime.process import open_agent  # noqa: E402
from arena.runtime.sandbox import Policy, Sandbox  # noqa: E402

TC = TimeControl()
VARIANT = "sixty-six"
#: The minimal echo child: no JSON, no arena, one line in, the same line out.
ECHO_CHILD = (
    "import sys\n"
    "r, w = sys.stdin.buffer.readline, sys.stdout.buffer\n"
    "for line in iter(r, b''):\n"
    "    w.write(line); w.flush()\n"
)


TABLE = "four-pagat"


def hello(seed: int, variant: str = VARIANT) -> Hello:
    return Hello.for_game(get_variant(variant).to_dict(), TC.to_dict(), seed)


async def raw_echo_rate(n: int) -> tuple[float, float]:
    """(round trips per second, this process's CPU per round trip in us) of one short line
    to the minimal echo child: the CPU is what Trio and the kernel cost a waiting process
    per wake-up, the floor under the referee's CPU per decision at 1 in flight."""
    proc = await trio.lowlevel.open_process(
        [sys.executable, "-c", ECHO_CHILD], stdin=subprocess.PIPE, stdout=subprocess.PIPE
    )
    line = b'{"type":"ping","id":1}\n'
    try:

        async def trip() -> None:
            await proc.stdin.send_all(line)
            got = b""
            while not got.endswith(b"\n"):
                got += await proc.stdout.receive_some(65536)

        for _ in range(200):  # warm up
            await trip()
        t0, c0 = time.perf_counter(), time.process_time()
        for _ in range(n):
            await trip()
        return n / (time.perf_counter() - t0), 1e6 * (time.process_time() - c0) / n
    finally:
        await proc.stdin.aclose()
        await proc.wait()


async def ping_rate(n: int) -> float:
    """`AgentProcess.ping` round trips per second with the echo agent."""
    async with open_agent(load_manifest(ROOT / "bench" / "echo").launch(), hello(1)) as agent:
        for _ in range(200):
            await agent.ping()
        t0 = time.perf_counter()
        for _ in range(n):
            await agent.ping()
        return n / (time.perf_counter() - t0)


async def decision_rate(
    in_flight: int, seconds: float, game: str = VARIANT
) -> tuple[float, float, float, list[int], int, list[str]]:
    """(decisions/s, referee CPU us per decision, agents' CPU us per decision, processes
    started per pool, capacity, the codes of any forfeits) with ``in_flight``
    random-vs-random matches always in flight through one pool per seat (two; four at a
    four-handed ``game``). The agents' CPU is what
    the referee measured per answer (`MatchRecord.cpu_ms`), over the matches that ended
    in the window; at more than 1 in flight a process's answers overlap and are not
    measured."""
    random = resolve("random")
    variant = get_variant(game)
    decisions = 0
    forfeits: list[str] = []
    agent_cpu: list[float] = []
    measuring = False

    def on_event(kind: str, data: object) -> None:
        nonlocal decisions
        if kind == "action":
            decisions += 1

    with Sandbox(Policy(enabled=False)) as sandbox:
        async with trio.open_nursery() as procs:
            pools = [
                AgentPool(
                    random, hello(seat + 1, game), procs, concurrency=in_flight, sandbox=sandbox,
                    label=f"random-{seat}",
                )  # fmt: skip
                for seat in range(variant.players)
            ]

            async def worker(w: int) -> None:
                i = 0
                while True:
                    async with contextlib.AsyncExitStack() as stack:
                        seats = [await stack.enter_async_context(p.lease()) for p in pools]
                        rec = await play_match(
                            f"bench-{w}-{i}", w * 1_000_003 + i, variant, seats, TC, on_event=on_event
                        )
                    if rec.forfeit is not None:
                        forfeits.append(rec.forfeit.code)
                        await trio.sleep(0.1)
                    elif measuring:
                        agent_cpu.extend(x for seat in rec.cpu_ms for x in seat if x is not None)
                    i += 1

            async with trio.open_nursery() as workers:
                for w in range(in_flight):
                    workers.start_soon(worker, w)
                # Warm up: every process started and every match under way.
                while decisions < 20 * in_flight or any(p.starting for p in pools):
                    await trio.sleep(0.05)
                await trio.sleep(0.3)
                n0, c0, t0 = decisions, time.process_time(), time.perf_counter()
                measuring = True
                await trio.sleep(seconds)
                n1, c1, t1 = decisions, time.process_time(), time.perf_counter()
                workers.cancel_scope.cancel()
            started = [p.started for p in pools]
            capacity = pools[0].capacity
            for p in pools:
                p.close()
    n = n1 - n0
    agent_us = 1000 * statistics.fmean(agent_cpu) if agent_cpu else math.nan
    return n / (t1 - t0), 1e6 * (c1 - c0) / n, agent_us, started, capacity, forfeits


def spread(xs: list[float], fmt: str = ",.0f") -> str:
    return f"{statistics.median(xs):>9{fmt}}  ({min(xs):{fmt}}..{max(xs):{fmt}})"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--samples", type=int, default=3)
    ap.add_argument("--seconds", type=float, default=2.0, help="measuring window per level and sample")
    ap.add_argument("--levels", default="1,4,16,256", help="two-handed matches in flight, comma-separated")
    ap.add_argument("--table-levels", default="1,16", help="four-seat matches in flight ('' for none)")
    ap.add_argument("--pings", type=int, default=5000)
    args = ap.parse_args()
    runs = [(VARIANT, int(x)) for x in args.levels.split(",") if x]
    runs += [(TABLE, int(x)) for x in args.table_levels.split(",") if x]
    raw: list[float] = []
    raw_cpu: list[float] = []
    ping: list[float] = []
    rate: dict[tuple[str, int], list[float]] = {r: [] for r in runs}
    cpu: dict[tuple[str, int], list[float]] = {r: [] for r in runs}
    agent: dict[tuple[str, int], list[float]] = {r: [] for r in runs}
    started: dict[tuple[str, int], set[tuple[int, ...]]] = {r: set() for r in runs}
    forfeits: dict[tuple[str, int], list[str]] = {r: [] for r in runs}
    capacity = 1
    for _ in range(args.samples):  # every figure once per sample, interleaved
        echo_rate, echo_cpu = trio.run(raw_echo_rate, args.pings)
        raw.append(echo_rate)
        raw_cpu.append(echo_cpu)
        ping.append(trio.run(ping_rate, args.pings))
        for r in runs:
            dps, us, agent_us, procs, capacity, lost = trio.run(decision_rate, r[1], args.seconds, r[0])
            agent[r].append(agent_us)
            forfeits[r] += lost
            rate[r].append(dps)
            cpu[r].append(us)
            started[r].add(tuple(procs))
    echo = statistics.median(raw)
    print(f"{args.samples} samples; median (min..max)")
    print(f"raw echo round trips /s     {spread(raw)}   {1e6 / echo:.0f} us each; "
          f"Trio's own CPU {spread(raw_cpu, '.1f')} us per round trip")
    print(f"AgentProcess.ping /s        {spread(ping)}   = {statistics.median(ping) / echo:.2f} of raw echo")
    ok = True
    for r in runs:
        game, n = r
        want = math.ceil(n / capacity)
        seen = sorted(started[r])
        good = all(s == want for procs in seen for s in procs)
        ok &= good
        agent_cpu = statistics.median(agent[r])
        who = "random vs random" if game == VARIANT else f"4 random, {game}"
        print(
            f"{who}, {n:>3} in flight: {spread(rate[r])} decisions/s = "
            f"{statistics.median(rate[r]) / echo:.2f} of raw echo; referee CPU {spread(cpu[r], '.1f')} us/decision; "
            + ("" if n > 1 or math.isnan(agent_cpu) else f"agent CPU {spread(agent[r], '.1f')} us/answer; ")
            + f"processes per agent {'/'.join(str(s) for procs in seen for s in procs)} "
            f"(ceil({n}/{capacity}) = {want}{'' if good else ': TOO MANY'})"
            + (f"; {len(forfeits[r])} forfeits: {', '.join(sorted(set(forfeits[r])))}" if forfeits[r] else "")
        )
        ok &= not forfeits[r]
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
