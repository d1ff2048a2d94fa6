"""Tournament throughput and memory: many matches between two Python random agents.

    python bench/tournament.py [--matches 1000] [--samples 5] [--concurrency 8] [--in-flight 2000]

Runs, each in a fresh child process so that peak memory is the referee's own:
(1) the echo agent's round-trip rate (`AgentProcess.ping`, as in bench/protocol.py); (2) a head-to-head tournament
of ``--matches`` matches between two copies of the random agent through the full runner
(pools, store, one transaction per match) at ``--concurrency``, against agents that
declare capacity 16, with the sandbox (the default) and without, interleaved (on, off,
on, off, ...) ``--samples`` times each so that a drift of the machine's speed falls on
both alike: prints the median and min..max of each, and the ratio of the medians, for the
sandbox's cost on throughput; (3) the same with ``--in-flight`` matches at once against
agents that declare that capacity, for the referee's peak RSS. Prints matches/s,
decisions/s, peak RSS, decisions/s as a share of the echo rate, and how many processes
each agent's pool started: a pool starts at most ceil(matches in flight / capacity)
processes per agent (docs/tournaments.md, "Concurrency and processes").
"""

from __future__ import annotations

import argparse
import json
import math
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

AGENT = """import sys
from arena.sdk import run
from arena.bots.strategies import RandomStrategy
raise SystemExit(run(factory=RandomStrategy, name="random", version="1.0.0", capacity=int(sys.argv[1])))
"""


def make_agents(folder: Path, capacity: int) -> list[str]:
    names = []
    for name in ("random-a", "random-b"):
        d = folder / name
        d.mkdir()
        (d / "random_agent.py").write_text(AGENT)
        (d / "agent.toml").write_text(
            f'name = "{name}"\nversion = "1"\nlanguage = "python"\n'
            f'command = ["{{python}}", "random_agent.py", "{capacity}"]\n'
        )
        names.append(str(d))
    return names


def tournament(matches: int, concurrency: int, capacity: int, sandboxed: int = 1) -> dict:
    import trio

    from arena.results.store import Store
    from arena.runtime.pool import AgentPool
    from arena.runtime.sandbox import Policy, Sandbox
    from arena.tournament.runner import run_tournament
    from arena.tournament.schedule import load_config

    pools: list[AgentPool] = []  # every pool the runner makes, to count the processes it started
    init = AgentPool.__init__

    def counted_init(self, *a, **k):
        init(self, *a, **k)
        pools.append(self)

    AgentPool.__init__ = counted_init
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        agents = make_agents(tmp, capacity)
        cfg = load_config(
            None,
            {"format": "head-to-head", "agents": agents, "pairs": matches // 2, "seed": 1,
             "concurrency": concurrency, "store": str(tmp / "bench.sqlite")},
        )  # fmt: skip
        specs = cfg.schedule()
        with Store(cfg.store) as store:
            store.bind_config(cfg.identity(), cfg.config_hash)
            run_id = store.start_run("bench", None, [])
            t0 = time.perf_counter()
            with Sandbox(Policy(enabled=bool(sandboxed))) as sandbox:
                played = trio.run(lambda: run_tournament(cfg, specs, store, run_id, sandbox=sandbox))
            dt = time.perf_counter() - t0
            rows = store.matches()
        decisions = sum(r["decisions0"] + r["decisions1"] for r in rows)
        faults = sum(r["fault"] is not None for r in rows)
    return {
        "matches": played,
        "seconds": dt,
        "matches_per_s": played / dt,
        "decisions_per_s": decisions / dt,
        "faults": faults,
        "processes": sorted(p.started for p in pools),
        "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
    }


def echo() -> dict:
    import trio

    sys.path.insert(0, str(ROOT / "bench"))
    from protocol import ping_rate  # `AgentProcess.ping` with the echo agent (was `echo_rate`)

    return {"echo_per_s": trio.run(ping_rate, 20_000)}


def child(*args: str) -> dict:
    out = subprocess.run([sys.executable, __file__, "--child", *args], capture_output=True, text=True, check=True)
    return json.loads(out.stdout)


def spread(values: list[float], fmt: str = ",.0f") -> str:
    return f"{statistics.median(values):{fmt}} ({min(values):{fmt}}..{max(values):{fmt}})"


def processes(r: dict, in_flight: int, capacity: int) -> str:
    return (
        f"processes started per agent {'/'.join(map(str, r['processes']))} "
        f"(at most ceil({in_flight}/{capacity}) = {math.ceil(in_flight / capacity)})"
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--matches", type=int, default=1000, help="matches per sample (default 1000)")
    ap.add_argument("--samples", type=int, default=5, help="samples with and without the sandbox, each (default 5)")
    ap.add_argument("--concurrency", type=int, default=8)
    ap.add_argument("--in-flight", type=int, default=2000)
    ap.add_argument("--child", nargs="*", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child is not None:
        kind, *rest = args.child
        print(json.dumps(echo() if kind == "echo" else tournament(*map(int, rest))))
        return
    e = child("echo")["echo_per_s"]
    print(f"echo agent round trips: {e:,.0f} /s")
    runs: dict[str, list[dict]] = {"sandboxed": [], "no sandbox": []}
    for _ in range(args.samples):  # interleaved: on, off, on, off, ...
        for label, flag in (("sandboxed", "1"), ("no sandbox", "0")):
            runs[label].append(child("run", str(args.matches), str(args.concurrency), "16", flag))
    print(
        f"{args.matches} matches a sample, {args.concurrency} in flight, agents of capacity 16; "
        f"{args.samples} samples each, interleaved; median (min..max):"
    )
    for label, rs in runs.items():
        dps = [r["decisions_per_s"] for r in rs]
        print(
            f"  {label:<10} {spread([r['matches_per_s'] for r in rs], ',.1f')} matches/s, "
            f"{spread(dps)} decisions/s = {100 * statistics.median(dps) / e:.0f}% of the echo rate; "
            f"faults {sum(r['faults'] for r in rs)}; referee peak RSS "
            f"{spread([r['peak_rss_mb'] for r in rs])} MB; {processes(rs[-1], args.concurrency, 16)}"
        )
    on = [r["matches_per_s"] for r in runs["sandboxed"]]
    off = [r["matches_per_s"] for r in runs["no sandbox"]]
    pairs = [a / b for a, b in zip(on, off, strict=True)]
    print(
        f"sandboxed / no sandbox throughput: {statistics.median(on) / statistics.median(off):.2f} (ratio of the "
        f"medians); per interleaved pair {spread(pairs, '.2f')}"
    )
    n = max(args.in_flight * 2, 4000)
    r = child("run", str(n), str(args.in_flight), str(args.in_flight))
    print(
        f"{r['matches']} matches, {args.in_flight} in flight, agents of capacity {args.in_flight}: "
        f"{r['matches_per_s']:.1f} matches/s, faults {r['faults']}; referee peak RSS {r['peak_rss_mb']:.0f} MB; "
        f"{processes(r, args.in_flight, args.in_flight)}"
    )


if __name__ == "__main__":
    main()
